//! Envelope rules, checked on the JSON an agent would actually receive.

use super::measure::{Size, weight};
use super::*;
use serde_json::json;
use std::collections::HashSet;

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("payload must be an object"),
    }
}

fn wire_weight(envelope: &Value) -> usize {
    Size::of_bytes(&serde_json::to_vec(envelope).unwrap()).weight()
}

fn results(n: usize, text: &str) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"id": i, "name": format!("{text}-{i}")}))
        .collect()
}

#[test]
fn small_payload_is_untouched() {
    let data = object(json!({"results": results(3, "a"), "count": 3}));
    let envelope = ok(data.clone(), Some("tasks"), Budget::Agent);
    let meta = &envelope["data"]["meta"];
    assert_eq!(meta["truncated"], json!(false));
    assert_eq!(envelope["data"]["results"], data["results"]);
    assert_eq!(
        meta.as_object()
            .unwrap()
            .keys()
            .filter(|k| k.starts_with("truncated_"))
            .count(),
        0
    );
}

#[test]
fn long_list_is_cut_to_the_budget_with_markers_and_true_count() {
    let data =
        object(json!({"results": results(5_000, "item"), "count": 5_000, "total_count": 5_000}));
    let envelope = ok(data, Some("search"), Budget::Agent);
    let weight = wire_weight(&envelope);
    assert!(weight <= AGENT_BUDGET_CHARS, "weight {weight}");
    assert!(
        weight > AGENT_BUDGET_CHARS - 200,
        "cut far more than needed: {weight}"
    );
    let meta = &envelope["data"]["meta"];
    let kept = envelope["data"]["results"].as_array().unwrap().len();
    assert_eq!(meta["truncated"], json!(true));
    assert_eq!(meta["truncated_results_from"], json!(5_000));
    assert_eq!(meta["truncated_results_to"], json!(kept));
    assert_eq!(
        envelope["data"]["count"],
        json!(kept),
        "count follows the list down"
    );
    assert_eq!(
        envelope["data"]["total_count"],
        json!(5_000),
        "total_count stays the real total"
    );
    assert_eq!(
        envelope["data"]["results"][0]["id"],
        json!(0),
        "the head is kept"
    );
}

#[test]
fn non_latin_payload_is_trimmed_to_the_real_budget() {
    let data = object(json!({"results": results(2_000, "東京都の検索結果")}));
    let envelope = ok(data, None, Budget::Agent);
    let text = serde_json::to_string(&envelope).unwrap();
    let size = Size::of_bytes(text.as_bytes());
    assert!(size.weight() <= AGENT_BUDGET_CHARS);
    assert!(
        size.chars() * 10 < AGENT_BUDGET_CHARS * 7,
        "raw characters would have let far too much through"
    );
    assert!(size.tokens() <= AGENT_BUDGET_CHARS / 4 + 2);
    assert_eq!(envelope["data"]["meta"]["truncated"], json!(true));
}

#[test]
fn none_budget_never_trims() {
    let data = object(json!({"results": results(20_000, "x"), "count": 20_000}));
    let envelope = ok(data, None, Budget::None);
    assert_eq!(
        envelope["data"]["results"].as_array().unwrap().len(),
        20_000
    );
    let meta = envelope["data"]["meta"].as_object().unwrap();
    assert_eq!(meta["truncated"], json!(false));
    assert!(!meta.contains_key("envelope_unshrinkable"));
    assert!(wire_weight(&envelope) > AGENT_BUDGET_CHARS);
}

#[test]
fn any_list_is_cut_whatever_its_key() {
    // numbers under a key outside the registry are cut like any list
    let blob: Vec<u64> = (0..20_000).collect();
    let data = object(json!({"blob": blob}));
    let envelope = ok(data, None, Budget::Agent);
    let meta = &envelope["data"]["meta"];
    assert!(meta.get("envelope_unshrinkable").is_none());
    let kept = envelope["data"]["blob"].as_array().unwrap().len();
    assert!(kept > 1_000 && kept < 20_000, "{kept}");
    assert_eq!(meta["truncated_blob_from"], json!(20_000));
    assert_eq!(meta["truncated_blob_to"], json!(kept));
    assert!(wire_weight(&envelope) <= AGENT_BUDGET_CHARS);
}

#[test]
fn only_small_scalars_left_is_unshrinkable_and_untouched() {
    let data: Map<String, Value> = (0..10_000)
        .map(|i| (format!("key_{i}"), json!(i)))
        .collect();
    let envelope = ok(data, None, Budget::Agent);
    let meta = &envelope["data"]["meta"];
    assert_eq!(meta["envelope_unshrinkable"], json!(true));
    assert_eq!(
        meta["truncated"],
        json!(false),
        "nothing was cut, so nothing claims to be"
    );
    assert_eq!(envelope["data"]["key_9999"], json!(9_999));
}

#[test]
fn competing_lists_shrink_together() {
    let data = object(json!({
        "call_sites": results(3_000, "call"),
        "import_sites": results(3_000, "import"),
        "doc_references": results(5, "doc"),
    }));
    let envelope = ok(data, None, Budget::Agent);
    let body = &envelope["data"];
    let calls = body["call_sites"].as_array().unwrap().len();
    let imports = body["import_sites"].as_array().unwrap().len();
    assert!(
        calls > 10 && imports > 10,
        "neither list emptied: {calls} / {imports}"
    );
    assert!(calls.abs_diff(imports) <= 1);
    assert_eq!(
        body["doc_references"].as_array().unwrap().len(),
        5,
        "a short list is left whole"
    );
    assert!(body["meta"].get("truncated_doc_references_from").is_none());
    assert_eq!(body["meta"]["truncated_call_sites_to"], json!(calls));
    assert!(wire_weight(&envelope) <= AGENT_BUDGET_CHARS);
}

#[test]
fn nested_member_lists_are_cut_before_items() {
    let communities: Vec<Value> = (0..40)
        .map(|i| json!({"id": i, "members": results(200, "member")}))
        .collect();
    let data = object(json!({"results": communities}));
    let envelope = ok(data, None, Budget::Agent);
    let body = &envelope["data"];
    assert!(wire_weight(&envelope) <= AGENT_BUDGET_CHARS);
    let items = body["results"].as_array().unwrap();
    assert_eq!(
        items.len(),
        40,
        "every community survives when trimming members suffices"
    );
    let first = &items[0];
    let kept = first["members"].as_array().unwrap().len();
    assert!((3..200).contains(&kept));
    assert_eq!(
        body["meta"]["truncated_lists"]["/results/0/members"],
        json!({"from": 200, "to": kept})
    );
    assert_eq!(
        body["meta"]["truncated_lists"].as_object().unwrap().len(),
        40
    );
    assert!(body["meta"].get("truncated_results_from").is_none());
}

#[test]
fn dict_of_list_buckets_are_trimmed_with_a_marker_per_bucket() {
    let data = object(json!({
        "tiers": {"will_break": results(2_000, "w"), "should_review": results(2_000, "s"), "context": []},
        "root": "code:function:a.py::f",
    }));
    let envelope = ok(data, None, Budget::Agent);
    let body = &envelope["data"];
    assert!(wire_weight(&envelope) <= AGENT_BUDGET_CHARS);
    let kept = body["tiers"]["will_break"].as_array().unwrap().len();
    assert!(kept > 1);
    assert_eq!(
        body["meta"]["truncated_lists"]["/tiers/will_break"],
        json!({"from": 2_000, "to": kept})
    );
    assert!(
        body["meta"]["truncated_lists"]
            .get("/tiers/context")
            .is_none()
    );
}

#[test]
fn edges_by_type_buckets_are_trimmed_after_lists() {
    let data = object(json!({
        "results": results(10, "r"),
        "edges_by_type": {"calls": results(3_000, "c"), "imports": results(100, "i")},
    }));
    let envelope = ok(data, None, Budget::Agent);
    let body = &envelope["data"];
    assert!(wire_weight(&envelope) <= AGENT_BUDGET_CHARS);
    assert!(
        !body["results"].as_array().unwrap().is_empty(),
        "a list keeps its head while edges_by_type can be cut"
    );
    let calls = body["edges_by_type"]["calls"].as_array().unwrap().len();
    assert_eq!(
        body["meta"]["truncated_edges_by_type"]["calls"]["to"],
        json!(calls)
    );
}

#[test]
fn long_strings_are_shortened_last_and_short_ones_never() {
    let data = object(json!({
        "status": "high",
        "summary": "s".repeat(50_000),
        "notes": [{"body": "n".repeat(10_000)}],
    }));
    let envelope = ok(data, None, Budget::Agent);
    let body = &envelope["data"];
    assert!(wire_weight(&envelope) <= AGENT_BUDGET_CHARS);
    assert_eq!(body["status"], json!("high"));
    let summary = body["summary"].as_str().unwrap();
    assert!(summary.ends_with(TRUNCATION_SUFFIX));
    assert!(summary.chars().count() >= 100);
    let fields = body["meta"]["truncated_string_fields"].as_array().unwrap();
    assert!(fields.contains(&json!("/summary")));
    assert_eq!(body["meta"]["truncated"], json!(true));
}

#[test]
fn no_list_is_ever_shortened_silently() {
    let data = object(json!({
        "results": results(900, "a"), "hits": results(900, "b"), "samples": results(900, "c"),
        "cards": [{"id": 1, "history": results(500, "h")}],
    }));
    let original = data.clone();
    let envelope = ok(data, None, Budget::Chars(8_000));
    let body = envelope["data"].as_object().unwrap();
    let meta = body["meta"].as_object().unwrap();
    for (key, value) in &original {
        let before = value.as_array().unwrap().len();
        let after = body[key].as_array().unwrap().len();
        if after < before {
            assert_eq!(
                meta[&format!("truncated_{key}_from")],
                json!(before),
                "{key}"
            );
            assert_eq!(meta[&format!("truncated_{key}_to")], json!(after), "{key}");
        }
    }
    if let Some(card) = body["cards"].as_array().unwrap().first() {
        let kept = card["history"].as_array().unwrap().len();
        if kept < 500 {
            assert_eq!(
                meta["truncated_lists"]["/cards/0/history"]["to"],
                json!(kept)
            );
        }
    }
    assert!(wire_weight(&envelope) <= 8_000);
}

fn graph(nodes: usize, edges_per_node: usize) -> Map<String, Value> {
    let node_list: Vec<Value> = (0..nodes)
        .map(|i| json!({"uid": format!("code:function:src/m{}.py::f{i}", i % 50), "kind": "function", "label": format!("f{i}")}))
        .collect();
    let mut edge_list = Vec::new();
    for i in 0..nodes {
        for j in 1..=edges_per_node {
            // hubs: low indices receive many edges
            let target = (i * j) % (1 + i / 3).max(1);
            edge_list.push(json!({"source": format!("code:function:src/m{}.py::f{i}", i % 50),
                                  "target": format!("code:function:src/m{}.py::f{target}", target % 50),
                                  "kind": "calls"}));
        }
    }
    edge_list.push(json!({"source": "code:function:src/m0.py::f0", "target": "code:external:gone", "kind": "calls"}));
    object(json!({"nodes": node_list, "edges": edge_list, "root": "folder:src"}))
}

#[test]
fn subgraph_trim_keeps_every_edge_between_kept_nodes() {
    let data = graph(3_000, 3);
    let envelope = ok(data, Some("graph"), Budget::Chars(120_000));
    let body = &envelope["data"];
    assert!(wire_weight(&envelope) <= 120_000);
    let kept: HashSet<&str> = body["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["uid"].as_str().unwrap())
        .collect();
    assert!(kept.len() > 100);
    for edge in body["edges"].as_array().unwrap() {
        assert!(kept.contains(edge["source"].as_str().unwrap()), "{edge}");
        assert!(kept.contains(edge["target"].as_str().unwrap()), "{edge}");
    }
    let meta = &body["meta"];
    assert_eq!(meta["truncated_subgraph"], json!(true));
    assert_eq!(meta["truncated_nodes_from"], json!(3_000));
    assert_eq!(meta["truncated_nodes_to"], json!(kept.len()));
    assert_eq!(
        meta["truncated_edges_to"],
        json!(body["edges"].as_array().unwrap().len())
    );
    assert!(
        kept.contains("code:function:src/m0.py::f0"),
        "the best-connected node is kept"
    );
}

#[test]
fn graph_shaped_bodies_get_the_graph_tier_under_the_agent_budget() {
    let data = graph(1_000, 2);
    assert!(weight(&data) > AGENT_BUDGET_CHARS);
    let envelope = ok(data, Some("graph"), Budget::Agent);
    assert_eq!(envelope["data"]["nodes"].as_array().unwrap().len(), 1_000);
    assert_eq!(envelope["data"]["meta"]["truncated"], json!(false));
}

#[test]
fn error_details_are_trimmed_like_any_payload() {
    let current = json!({"id": "TASK-1", "description": "d".repeat(280_000), "labels": ["a", "b"]});
    let error = ErrorBody::new(Category::Conflict, Code::STALE_VERSION, "changed")
        .with_details(json!({"field": "version", "current": current}));
    let envelope = fail_within(&error, Budget::Agent);
    assert!(
        wire_weight(&envelope) <= AGENT_BUDGET_CHARS,
        "{}",
        wire_weight(&envelope)
    );
    let body = &envelope["error"];
    assert_eq!(body["code"], json!("STALE_VERSION"));
    assert_eq!(body["details"]["field"], json!("version"));
    assert_eq!(body["details"]["current"]["labels"], json!(["a", "b"]));
    assert!(
        body["details"]["current"]["description"]
            .as_str()
            .unwrap()
            .ends_with(TRUNCATION_SUFFIX)
    );
    assert_eq!(body["meta"]["truncated"], json!(true));
    assert_eq!(
        body["meta"]["truncated_string_fields"],
        json!(["/details/current/description"])
    );
    // with the budget off nothing is cut and no meta is added
    let whole = fail_within(&error, Budget::None);
    assert!(whole["error"].get("meta").is_none());
}

#[test]
fn a_tools_hinted_lists_are_cut_before_others_of_the_same_depth() {
    let data = object(json!({"notes": results(900, "n"), "cards": results(2_000, "c")}));
    let hinted = finish_with(
        data.clone(),
        Map::new(),
        None,
        Budget::Agent,
        Hints {
            keys: &["cards"],
            ..Hints::default()
        },
        |_, _| {},
    )
    .into_envelope();
    assert_eq!(
        hinted["data"]["notes"].as_array().unwrap().len(),
        900,
        "the other list stays whole"
    );
    assert!(hinted["data"]["cards"].as_array().unwrap().len() < 2_000);
    // without the hint both are others: one common cap cuts them together
    let plain = ok(data, None, Budget::Agent);
    assert!(plain["data"]["notes"].as_array().unwrap().len() < 900);
}
