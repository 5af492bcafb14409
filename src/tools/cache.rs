//! Answers computed once per data revision and shared, already serialised, by
//! every caller until the data changes.
//!
//! A tool that reads a revision counter (bumped inside every writing
//! transaction, by any process) *before* reading its data can cache its answer
//! under that revision: content cached under revision r is never older than r,
//! so a hit is always current. `COS_ANSWER_CACHE=off` turns caching off, to
//! measure or rule it out.
//!
//! A cached answer also keeps the finished body a consumer made from it (the
//! REST envelope), so a hit is sent without copying or scanning the answer again.

use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock};
use utoipa::openapi::{RefOr, schema::Schema};
use utoipa::{PartialSchema, ToSchema};

use super::ToolError;

/// Entries kept at most; older revisions are dropped first.
const MAX_ENTRIES: usize = 256;
/// Bytes of answers (and their finished bodies, about as large) kept at most:
/// an export answer can be half a megabyte.
const MAX_BYTES: usize = 64 << 20;

/// (tool name, the tool's key for its input and configuration)
type EntryKey = (&'static str, String);
/// (revision the answer was computed at, the answer)
type Entry = (i64, Arc<Kept>);

/// An answer's JSON, its diagnostics, and the finished body made from them by
/// the first caller that needed one.
#[derive(Debug)]
struct Kept {
    json: Box<RawValue>,
    meta: Map<String, Value>,
    rendered: OnceLock<Rendering>,
}

#[derive(Debug)]
struct Rendering {
    made_for: &'static str,
    body: Bytes,
}

impl Kept {
    /// What keeping the answer costs, counting a finished body as large as the answer.
    fn weight(&self) -> usize {
        2 * self.json.get().len()
    }
}

pub struct AnswerCache {
    enabled: bool,
    entries: Mutex<HashMap<EntryKey, Entry>>,
}

impl Default for AnswerCache {
    fn default() -> AnswerCache {
        AnswerCache::new(std::env::var("COS_ANSWER_CACHE").map_or(true, |value| value != "off"))
    }
}

impl AnswerCache {
    pub fn new(enabled: bool) -> AnswerCache {
        AnswerCache {
            enabled,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The answer of `tool` for `key` at `revision` with its diagnostics,
    /// computing and keeping it on a miss. Pages are not kept (their cursors
    /// are made per call): a caller adds them to what this returns.
    pub fn get_or_compute<T: Serialize>(
        &self,
        tool: &'static str,
        key: String,
        revision: i64,
        compute: impl FnOnce() -> Result<super::Answer<T>, ToolError>,
    ) -> Result<super::Answer<Shared<T>>, ToolError> {
        if self.enabled
            && let Some((cached_revision, kept)) = self.lock().get(&(tool, key.clone()))
            && *cached_revision == revision
        {
            return Ok(Shared::from_answer(kept.clone()).into_answer());
        }
        let computed = compute()?;
        let json = serde_json::value::to_raw_value(&computed.data)
            .map_err(|e| ToolError::internal("serialising the tool's answer", e))?;
        let answer = Arc::new(Kept {
            json,
            meta: computed.meta,
            rendered: OnceLock::new(),
        });
        if self.enabled {
            let mut entries = self.lock();
            let weight = |entries: &HashMap<EntryKey, Entry>| {
                entries
                    .values()
                    .map(|(_, kept)| kept.weight())
                    .sum::<usize>()
            };
            if entries.len() >= MAX_ENTRIES || weight(&entries) + answer.weight() > MAX_BYTES {
                entries.retain(|_, (cached, _)| *cached >= revision);
                if entries.len() >= MAX_ENTRIES || weight(&entries) + answer.weight() > MAX_BYTES {
                    entries.clear();
                }
            }
            entries.insert((tool, key), (revision, answer.clone()));
        }
        Ok(Shared::from_answer(answer).into_answer())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<EntryKey, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// An answer of type `T` held as serialised JSON: serialising it copies bytes,
/// and its schema is `T`'s.
#[derive(Debug, Clone)]
pub struct Shared<T> {
    answer: Arc<Kept>,
    shape: PhantomData<fn() -> T>,
}

impl<T> Shared<T> {
    fn from_answer(answer: Arc<Kept>) -> Shared<T> {
        Shared {
            answer,
            shape: PhantomData,
        }
    }

    /// The shared answer with the diagnostics kept beside it.
    fn into_answer(self) -> super::Answer<Shared<T>> {
        let meta = self.answer.meta.clone();
        super::Answer::new(self).with_meta(meta)
    }

    pub fn json(&self) -> &str {
        self.answer.json.get()
    }

    /// The body `render` makes from the answer's JSON, made once per cached
    /// answer and shared after. `made_for` names the rendering: one answer
    /// keeps one, and a caller wanting another gets it made afresh.
    pub fn rendered(&self, made_for: &'static str, render: impl Fn(&str) -> Vec<u8>) -> Bytes {
        let kept = self.answer.rendered.get_or_init(|| Rendering {
            made_for,
            body: Bytes::from(render(self.json())),
        });
        if kept.made_for == made_for {
            kept.body.clone()
        } else {
            Bytes::from(render(self.json()))
        }
    }
}

impl<T> Serialize for Shared<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.answer.json.serialize(serializer)
    }
}

impl<T: ToSchema> PartialSchema for Shared<T> {
    fn schema() -> RefOr<Schema> {
        T::schema()
    }
}

impl<T: ToSchema> ToSchema for Shared<T> {
    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        T::schemas(schemas);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn hits_only_at_the_same_revision() {
        let cache = AnswerCache::new(true);
        let computed = Cell::new(0);
        let compute = |value: u32| {
            computed.set(computed.get() + 1);
            Ok(serde_json::json!({"value": value}).into())
        };
        let first = cache
            .get_or_compute("t", "k".into(), 1, || compute(1))
            .unwrap()
            .data;
        let again = cache
            .get_or_compute("t", "k".into(), 1, || compute(99))
            .unwrap()
            .data;
        assert_eq!(first.json(), again.json());
        assert_eq!(computed.get(), 1);
        let newer = cache
            .get_or_compute("t", "k".into(), 2, || compute(2))
            .unwrap()
            .data;
        assert_eq!(newer.json(), r#"{"value":2}"#);
        let other_key = cache
            .get_or_compute("t", "other".into(), 2, || compute(3))
            .unwrap()
            .data;
        assert_eq!(other_key.json(), r#"{"value":3}"#);
        assert_eq!(computed.get(), 3);
        assert_eq!(serde_json::to_string(&newer).unwrap(), r#"{"value":2}"#);
    }

    #[test]
    fn a_cached_answer_is_rendered_once_per_use() {
        let cache = AnswerCache::new(true);
        let renders = Cell::new(0);
        let render = |json: &str| {
            renders.set(renders.get() + 1);
            format!("[{json}]").into_bytes()
        };
        let answer = || {
            cache
                .get_or_compute(
                    "t",
                    "k".into(),
                    1,
                    || Ok(serde_json::json!({"v": 1}).into()),
                )
                .unwrap()
                .data
        };
        assert_eq!(&answer().rendered("rest", render)[..], br#"[{"v":1}]"#);
        assert_eq!(&answer().rendered("rest", render)[..], br#"[{"v":1}]"#);
        assert_eq!(renders.get(), 1, "the second hit sends the kept body");
        // another rendering of the same answer is made afresh, not mixed up
        assert_eq!(&answer().rendered("other", |_| b"x".to_vec())[..], b"x");
        // a new revision is a new answer with its own body
        let newer = cache
            .get_or_compute(
                "t",
                "k".into(),
                2,
                || Ok(serde_json::json!({"v": 2}).into()),
            )
            .unwrap()
            .data;
        assert_eq!(&newer.rendered("rest", render)[..], br#"[{"v":2}]"#);
        assert_eq!(renders.get(), 2);
    }

    #[test]
    fn the_cache_keeps_a_bounded_number_of_bytes() {
        let cache = AnswerCache::new(true);
        let big = "x".repeat(MAX_BYTES / 8);
        for key in 0..10 {
            cache
                .get_or_compute("t", key.to_string(), 1, || Ok(big.clone().into()))
                .unwrap();
        }
        let kept: usize = cache
            .lock()
            .values()
            .map(|(_, answer)| answer.weight())
            .sum();
        assert!(kept <= MAX_BYTES, "{kept} bytes kept");
        assert!(cache.lock().len() < 10);
    }

    #[test]
    fn diagnostics_are_kept_beside_the_answer() {
        let cache = AnswerCache::new(true);
        let mut meta = Map::new();
        meta.insert("resolved_from".into(), Value::from("direct"));
        let first = cache
            .get_or_compute("t", "k".into(), 1, || {
                Ok(super::super::Answer::new(1).with_meta(meta.clone()))
            })
            .unwrap();
        let hit = cache
            .get_or_compute("t", "k".into(), 1, || Ok(2.into()))
            .unwrap();
        assert_eq!(hit.data.json(), "1");
        assert_eq!(first.meta, meta);
        assert_eq!(
            hit.meta, meta,
            "a hit carries the diagnostics computed with it"
        );
    }

    #[test]
    fn off_means_always_computed() {
        let cache = AnswerCache::new(false);
        let computed = Cell::new(0);
        for _ in 0..3 {
            cache
                .get_or_compute("t", "k".into(), 1, || {
                    computed.set(computed.get() + 1);
                    Ok(1.into())
                })
                .unwrap();
        }
        assert_eq!(computed.get(), 3);
    }
}
