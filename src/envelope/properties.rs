//! The ladder's promises over generated JSON of every shape: depths to 50,
//! keys in and out of the registry, lists of scalars, objects and lists,
//! dict-of-lists with scalar siblings, strings of every length, CJK and emoji.
//!
//! For each payload and budget: the envelope fits, or the ladder says it cannot
//! (and then it truly could not); every cut list is marked with its true
//! lengths and every marked list was cut; a `count` that equalled a cut list's
//! length follows it; no other scalar changes and no string under 200
//! characters is touched. proptest keeps failing seeds in
//! `proptest-regressions/`, which run again before new cases.

use super::measure::weight;
use super::*;
use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::json;

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(SEED_LIST_KEYS).prop_map(str::to_string),
        3 => "[a-z_]{1,10}",
        1 => Just("count".to_string()),
        1 => Just("edges_by_type".to_string()),
        1 => "[a-z/~]{1,4}",
        1 => "[日本語😀é]{1,3}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z ]{0,20}",
        2 => "[a-z\"\\\\\n\t]{150,260}",
        2 => "[a-z日本語😀 ]{190,320}",
        1 => (200usize..3_000).prop_map(|n| "x".repeat(n)),
        1 => (50usize..800).prop_map(|n| "漢".repeat(n)),
        1 => ".{0,40}",
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

fn tree() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(8, 400, 12, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
            proptest::collection::vec((key(), inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// A long list of small records or scalars: what tools answer with.
fn long_list() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0usize..1_500).prop_map(|n| json!((0..n).collect::<Vec<_>>())),
        (0usize..400).prop_map(|n| {
            Value::Array(
                (0..n)
                    .map(|i| json!({"uid": format!("code:function:a.py::f{i}"), "line": i}))
                    .collect(),
            )
        }),
        (0usize..80, 0usize..40).prop_map(|(lists, each)| {
            Value::Array((0..lists).map(|_| json!(vec![7; each])).collect())
        }),
        (0usize..1_000).prop_map(|n| json!(vec!["short"; n])),
    ]
}

/// A chain of objects and lists `depth` deep with a long list at the bottom.
fn deep() -> impl Strategy<Value = Value> {
    (
        1usize..50,
        long_list(),
        proptest::collection::vec(key(), 50),
    )
        .prop_map(|(depth, bottom, keys)| {
            let mut value = bottom;
            for (level, key) in keys.iter().enumerate().take(depth) {
                value = if level % 3 == 2 {
                    json!([value, "beside", level])
                } else {
                    json!({ key.clone(): value, "note": "keep me" })
                };
            }
            value
        })
}

fn payload() -> impl Strategy<Value = Map<String, Value>> {
    let member = prop_oneof![
        3 => tree(),
        3 => long_list(),
        2 => deep(),
        2 => proptest::collection::vec((key(), long_list()), 1..4).prop_map(|buckets| {
            let mut dict: Map<String, Value> = buckets.into_iter().collect();
            dict.insert("note".into(), json!("keep me"));
            Value::Object(dict)
        }),
    ];
    proptest::collection::vec((key(), member), 0..6).prop_map(|members| {
        let mut data: Map<String, Value> = members.into_iter().collect();
        data.shift_remove("meta");
        if let Some(Value::Array(items)) = data.get("results") {
            let count = items.len();
            data.insert("count".into(), json!(count));
        }
        data
    })
}

fn budget() -> impl Strategy<Value = Budget> {
    prop_oneof![
        Just(Budget::Agent),
        (400usize..24_000).prop_map(Budget::Chars),
    ]
}

/// The marker the envelope must have written for a cut list at `pointer`.
fn marker<'m>(meta: &'m Map<String, Value>, path: &[Step]) -> Option<(u64, u64)> {
    let record = |value: &'m Value| Some((value["from"].as_u64()?, value["to"].as_u64()?));
    match path {
        [Step::Key(key)] => Some((
            meta.get(&format!("truncated_{key}_from"))?.as_u64()?,
            meta.get(&format!("truncated_{key}_to"))?.as_u64()?,
        )),
        [Step::Key(dict), Step::Key(bucket)] if dict == "edges_by_type" => {
            record(meta.get("truncated_edges_by_type")?.get(bucket)?)
        }
        _ => record(meta.get("truncated_lists")?.get(pointer(path))?),
    }
}

#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn pointer(path: &[Step]) -> String {
    At(path).to_string()
}

/// A path written as a JSON pointer only when shown: `compare` names the
/// path of every node it visits in its messages, which are shown only when
/// a check fails.
struct At<'p>(&'p [Step]);

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for step in self.0 {
            match step {
                Step::Key(key) => write!(f, "/{}", key.replace('~', "~0").replace('/', "~1"))?,
                Step::Index(index) => write!(f, "/{index}")?,
            }
        }
        Ok(())
    }
}

/// Walks the original and the trimmed payload side by side, checking every promise;
/// returns how many marks it checked.
fn compare(
    before: &Value,
    after: &Value,
    path: &mut Vec<Step>,
    meta: &Map<String, Value>,
    count_may_follow: Option<&[(u64, u64)]>,
) -> Result<usize, TestCaseError> {
    let at = At(path);
    match (before, after) {
        (Value::Array(old), Value::Array(new)) => {
            prop_assert!(new.len() <= old.len(), "{at}: a list grew");
            let mut marks = 0;
            match marker(meta, path) {
                Some((from, to)) => {
                    prop_assert_eq!(from, old.len() as u64, "{}: marker from", at);
                    prop_assert_eq!(to, new.len() as u64, "{}: marker to", at);
                    prop_assert!(to < from, "{}: a marker on a list that was not cut", at);
                    marks += 1;
                }
                None => prop_assert_eq!(new.len(), old.len(), "{}: cut without a marker", at),
            }
            for (index, (old, new)) in old.iter().zip(new).enumerate() {
                path.push(Step::Index(index));
                marks += compare(old, new, path, meta, None)?;
                path.pop();
            }
            Ok(marks)
        }
        (Value::Object(old), Value::Object(new)) => {
            prop_assert_eq!(
                old.keys().collect::<Vec<_>>(),
                new.keys().collect::<Vec<_>>(),
                "{}: members changed",
                at
            );
            let cut_here: Vec<(u64, u64)> = old
                .iter()
                .filter_map(|(key, value)| {
                    let (Value::Array(a), Some(Value::Array(b))) = (value, new.get(key)) else {
                        return None;
                    };
                    (b.len() < a.len()).then_some((a.len() as u64, b.len() as u64))
                })
                .collect();
            let mut marks = 0;
            for (key, old_value) in old {
                path.push(Step::Key(key.clone()));
                let follows = (key == "count").then_some(cut_here.as_slice());
                marks += compare(old_value, &new[key], path, meta, follows)?;
                path.pop();
            }
            Ok(marks)
        }
        (Value::String(old), Value::String(new)) if old != new => {
            let chars = old.chars().count();
            prop_assert!(
                chars >= STRING_TRIM_FLOOR_CHARS,
                "{at}: a short string changed"
            );
            let kept = new.strip_suffix(TRUNCATION_SUFFIX);
            prop_assert!(
                kept.is_some_and(|kept| old.starts_with(kept)),
                "{at}: not a marked prefix"
            );
            let fields = meta
                .get("truncated_string_fields")
                .and_then(Value::as_array);
            prop_assert!(
                fields.is_some_and(|f| f.contains(&json!(at.to_string()))),
                "{at}: unmarked string cut"
            );
            Ok(1)
        }
        (old, new) if old != new => {
            let followed = count_may_follow.is_some_and(|cuts| {
                cuts.iter()
                    .filter(|(from, _)| Some(*from) == old.as_u64())
                    .count()
                    == 1
                    && cuts
                        .iter()
                        .any(|(from, to)| Some(*from) == old.as_u64() && Some(*to) == new.as_u64())
            });
            prop_assert!(followed, "{at}: scalar {old} became {new}");
            Ok(0)
        }
        _ => Ok(0),
    }
}

/// The least the payload can weigh: every list emptied, every long string at
/// its shortest, with room for one marker per list. Below the budget the
/// ladder must never give up.
fn floor_weight(value: &Value, path_weight: usize) -> usize {
    match value {
        Value::Array(items) if !items.is_empty() => {
            2 + path_weight + 80 + 2 * items.len().ilog10() as usize
        }
        Value::Object(fields) => {
            2 + fields.len().saturating_sub(1)
                + fields
                    .iter()
                    .map(|(k, v)| {
                        weight(k.as_str())
                            + 1
                            + floor_weight(v, path_weight + 1 + weight(k.as_str()))
                    })
                    .sum::<usize>()
        }
        Value::String(text) if text.chars().count() >= STRING_TRIM_FLOOR_CHARS => {
            let short: String = text.chars().take(100).collect::<String>() + TRUNCATION_SUFFIX;
            weight(short.as_str()) + path_weight + 3
        }
        other => weight(other),
    }
}

fn check(data: Map<String, Value>, budget: Budget) -> Result<(), TestCaseError> {
    let original = Value::Object(data.clone());
    let envelope = ok(data, Some("test"), budget);
    let limit = budget
        .limit_for(subgraph::is_graph_shaped(
            original.as_object().unwrap_or(&Map::new()),
        ))
        .unwrap_or(usize::MAX);
    let mut trimmed = envelope["data"].clone();
    let meta = trimmed
        .as_object_mut()
        .and_then(|d| d.shift_remove("meta"))
        .and_then(|m| m.as_object().cloned())
        .unwrap_or_default();
    let unshrinkable = meta.get("envelope_unshrinkable") == Some(&json!(true));
    let size = weight(&envelope);
    if unshrinkable {
        let least = floor_weight(&original, 0) + 400;
        prop_assert!(
            least > limit,
            "gave up at {size} over {limit} though {least} was possible"
        );
    } else {
        prop_assert!(size <= limit, "envelope weighs {size}, budget {limit}");
    }
    let marks = compare(&original, &trimmed, &mut Vec::new(), &meta, None)?;
    let truncated = meta["truncated"] == json!(true);
    prop_assert_eq!(
        truncated,
        marks > 0,
        "truncated says {} with {} cuts",
        truncated,
        marks
    );
    let tokens = meta["tokens_estimated"].as_u64().unwrap_or(0) as usize;
    let wire = measure::Size::of_bytes(&serde_json::to_vec(&envelope).unwrap_or_default());
    prop_assert_eq!(tokens, wire.tokens());
    Ok(())
}

// 2,000 cases in all, as two tests of 1,000 each: the test harness runs
// them on two threads, so the property costs half the wall time.
proptest! {
    #![proptest_config(Config { cases: 1_000, ..Config::default() })]

    #[test]
    fn every_shape_fits_or_is_refused_and_every_cut_is_marked(data in payload(), budget in budget()) {
        check(data, budget)?;
    }

    #[test]
    fn every_shape_fits_or_is_refused_and_every_cut_is_marked_more(data in payload(), budget in budget()) {
        check(data, budget)?;
    }
}

#[test]
fn shapes_the_issue_names() {
    let small = |i: usize| json!({"id": i, "k": "v"});
    let cases = [
        json!({"edges_by_type": {"calls": (0..3_000).map(small).collect::<Vec<_>>(),
               "imports": (0..3_000).map(small).collect::<Vec<_>>(), "note": "keep me"}}),
        Value::Object(
            (0..100)
                .map(|i| {
                    (
                        format!("list_{i}"),
                        json!((0..200).map(small).collect::<Vec<_>>()),
                    )
                })
                .collect(),
        ),
        json!({"strings": vec!["a short string"; 10_000]}),
        json!({"lists": (0..1_000).map(|_| json!((0..50).collect::<Vec<_>>())).collect::<Vec<_>>()}),
        json!({"results": (0..10).map(small).collect::<Vec<_>>(),
               "nested": {"deeper": {"items": (0..10_000).map(small).collect::<Vec<_>>()}}}),
    ];
    for case in cases {
        let Value::Object(data) = case else { continue };
        let envelope = ok(data.clone(), None, Budget::Agent);
        assert!(
            weight(&envelope) <= AGENT_BUDGET_CHARS,
            "{}",
            weight(&envelope)
        );
        assert_eq!(envelope["data"]["meta"]["truncated"], json!(true));
        if let Some(results) = data.get("results") {
            assert_eq!(
                &envelope["data"]["results"], results,
                "the small list stays whole"
            );
        }
        if data.contains_key("edges_by_type") {
            assert_eq!(envelope["data"]["edges_by_type"]["note"], json!("keep me"));
            assert!(
                envelope["data"]["meta"]["truncated_edges_by_type"]["calls"]["to"].as_u64()
                    > Some(10)
            );
        }
    }
    let deep = (0..40).fold(
        json!((0..3_000).map(small).collect::<Vec<_>>()),
        |inner, level| json!({format!("level_{level}"): inner}),
    );
    let Value::Object(data) = deep else { return };
    let envelope = ok(data, None, Budget::Agent);
    assert!(weight(&envelope) <= AGENT_BUDGET_CHARS);
}
