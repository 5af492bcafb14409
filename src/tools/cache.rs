//! Answers computed once per data revision and shared, already serialised, by
//! every caller until the data changes.
//!
//! A tool that reads a revision counter (bumped inside every writing
//! transaction, by any process) *before* reading its data can cache its answer
//! under that revision: content cached under revision r is never older than r,
//! so a hit is always current. Each area's answers live in a namespace of
//! their own, compared only with that area's revision: a board write never
//! evicts a graph answer. `COS_ANSWER_CACHE=off` turns caching off, to
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

/// Entries kept at most; the oldest are dropped first.
const MAX_ENTRIES: usize = 256;
/// Bytes of answers (and their finished bodies, about as large) kept at most:
/// an export answer can be half a megabyte.
const MAX_BYTES: usize = 64 << 20;

/// (area namespace, tool name, the tool's key for its input and configuration)
type EntryKey = (&'static str, &'static str, String);

/// An answer and when it was made.
struct Entry {
    /// The area's revision the answer was computed at.
    revision: i64,
    /// Insertion order, so the oldest answer goes first when room runs out.
    sequence: u64,
    kept: Arc<Kept>,
}

#[derive(Default)]
struct Entries {
    map: HashMap<EntryKey, Entry>,
    next_sequence: u64,
    bytes: usize,
}

impl Entries {
    /// Makes room for `incoming` bytes of `namespace` at `revision`: the
    /// area's answers from older revisions can never be served again and go
    /// first, then the oldest answers of any area.
    fn make_room(&mut self, namespace: &str, revision: i64, incoming: usize) {
        let before = self.map.len();
        self.map
            .retain(|(area, _, _), entry| *area != namespace || entry.revision >= revision);
        if self.map.len() != before {
            self.bytes = self.map.values().map(|entry| entry.kept.weight()).sum();
        }
        while !self.map.is_empty()
            && (self.map.len() >= MAX_ENTRIES || self.bytes + incoming > MAX_BYTES)
        {
            let oldest = self
                .map
                .iter()
                .min_by_key(|(_, entry)| entry.sequence)
                .map(|(key, _)| key.clone());
            if let Some(entry) = oldest.and_then(|key| self.map.remove(&key)) {
                self.bytes -= entry.kept.weight();
            }
        }
    }

    fn insert(&mut self, key: EntryKey, revision: i64, kept: Arc<Kept>) {
        // a slower caller that read an older revision does not replace a newer answer
        if self
            .map
            .get(&key)
            .is_some_and(|entry| entry.revision > revision)
        {
            return;
        }
        self.bytes += kept.weight();
        self.next_sequence += 1;
        let entry = Entry {
            revision,
            sequence: self.next_sequence,
            kept,
        };
        if let Some(replaced) = self.map.insert(key, entry) {
            self.bytes -= replaced.kept.weight();
        }
    }
}

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
    entries: Mutex<Entries>,
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
            entries: Mutex::new(Entries::default()),
        }
    }

    /// The answer of `tool` for `key` at the `namespace` area's `revision`
    /// with its diagnostics, computing and keeping it on a miss. Pages are not
    /// kept (their cursors are made per call): a caller adds them to what this
    /// returns.
    pub fn get_or_compute<T: Serialize>(
        &self,
        namespace: &'static str,
        tool: &'static str,
        key: String,
        revision: i64,
        compute: impl FnOnce() -> Result<super::Answer<T>, ToolError>,
    ) -> Result<super::Answer<Shared<T>>, ToolError> {
        let entry_key = (namespace, tool, key);
        if self.enabled
            && let Some(entry) = self.lock().map.get(&entry_key)
            && entry.revision == revision
        {
            return Ok(Shared::from_answer(entry.kept.clone()).into_answer());
        }
        let computed = compute()?;
        let json = serde_json::value::to_raw_value(&computed.data)
            .map_err(|e| ToolError::internal("serialising the tool's answer", e))?;
        let answer = Arc::new(Kept {
            json,
            meta: computed.meta,
            rendered: OnceLock::new(),
        });
        if self.enabled && answer.weight() <= MAX_BYTES {
            let mut entries = self.lock();
            entries.make_room(namespace, revision, answer.weight());
            entries.insert(entry_key, revision, answer.clone());
        }
        Ok(Shared::from_answer(answer).into_answer())
    }

    /// How many answers of the `namespace` area are kept (for diagnostics and tests).
    pub fn entries_in(&self, namespace: &str) -> usize {
        self.lock()
            .map
            .keys()
            .filter(|(area, _, _)| *area == namespace)
            .count()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
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
            .get_or_compute("area", "t", "k".into(), 1, || compute(1))
            .unwrap()
            .data;
        let again = cache
            .get_or_compute("area", "t", "k".into(), 1, || compute(99))
            .unwrap()
            .data;
        assert_eq!(first.json(), again.json());
        assert_eq!(computed.get(), 1);
        let newer = cache
            .get_or_compute("area", "t", "k".into(), 2, || compute(2))
            .unwrap()
            .data;
        assert_eq!(newer.json(), r#"{"value":2}"#);
        let other_key = cache
            .get_or_compute("area", "t", "other".into(), 2, || compute(3))
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
                .get_or_compute("area", "t", "k".into(), 1, || {
                    Ok(serde_json::json!({"v": 1}).into())
                })
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
            .get_or_compute("area", "t", "k".into(), 2, || {
                Ok(serde_json::json!({"v": 2}).into())
            })
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
                .get_or_compute("area", "t", key.to_string(), 1, || Ok(big.clone().into()))
                .unwrap();
        }
        let kept: usize = cache
            .lock()
            .map
            .values()
            .map(|entry| entry.kept.weight())
            .sum();
        assert!(kept <= MAX_BYTES, "{kept} bytes kept");
        assert_eq!(kept, cache.lock().bytes, "the running total is the sum");
        assert!(cache.lock().map.len() < 10);
        // the newest answers are the ones kept
        let hit = cache
            .get_or_compute("area", "t", "9".into(), 1, || Ok("recomputed".into()))
            .unwrap();
        assert_ne!(hit.data.json(), r#""recomputed""#);
    }

    #[test]
    fn diagnostics_are_kept_beside_the_answer() {
        let cache = AnswerCache::new(true);
        let mut meta = Map::new();
        meta.insert("resolved_from".into(), Value::from("direct"));
        let first = cache
            .get_or_compute("area", "t", "k".into(), 1, || {
                Ok(super::super::Answer::new(1).with_meta(meta.clone()))
            })
            .unwrap();
        let hit = cache
            .get_or_compute("area", "t", "k".into(), 1, || Ok(2.into()))
            .unwrap();
        assert_eq!(hit.data.json(), "1");
        assert_eq!(first.meta, meta);
        assert_eq!(
            hit.meta, meta,
            "a hit carries the diagnostics computed with it"
        );
    }

    #[test]
    fn a_newer_revision_in_one_area_keeps_every_other_areas_answers() {
        let cache = AnswerCache::new(true);
        let computed = Cell::new(0);
        let count = || {
            computed.set(computed.get() + 1);
            Ok(computed.get().into())
        };
        cache
            .get_or_compute("graph", "g", "k".into(), 7, count)
            .unwrap();
        // the board moves on many revisions while the graph stays at 7
        for revision in 1..=(2 * MAX_ENTRIES as i64) {
            cache
                .get_or_compute("board", "b", "k".into(), revision, count)
                .unwrap();
        }
        let before = computed.get();
        cache
            .get_or_compute("graph", "g", "k".into(), 7, count)
            .unwrap();
        assert_eq!(computed.get(), before, "the graph answer was still kept");
        assert_eq!(
            cache.lock().map.len(),
            2,
            "old board revisions were dropped"
        );
        // the same revision number in two areas are two different answers
        let board = cache
            .get_or_compute("board", "same", "k".into(), 3, || Ok("board".into()))
            .unwrap();
        let graph = cache
            .get_or_compute("graph", "same", "k".into(), 3, || Ok("graph".into()))
            .unwrap();
        assert_eq!(board.data.json(), r#""board""#);
        assert_eq!(graph.data.json(), r#""graph""#);
        // an answer computed at an older revision does not replace a newer one
        let older = cache
            .get_or_compute("board", "same", "k".into(), 2, || Ok("older".into()))
            .unwrap();
        assert_eq!(
            older.data.json(),
            r#""older""#,
            "the caller gets what it computed"
        );
        let newer = cache
            .get_or_compute("board", "same", "k".into(), 3, || Ok("again".into()))
            .unwrap();
        assert_eq!(
            newer.data.json(),
            r#""board""#,
            "the revision-3 answer was kept"
        );
    }

    #[test]
    fn off_means_always_computed() {
        let cache = AnswerCache::new(false);
        let computed = Cell::new(0);
        for _ in 0..3 {
            cache
                .get_or_compute("area", "t", "k".into(), 1, || {
                    computed.set(computed.get() + 1);
                    Ok(1.into())
                })
                .unwrap();
        }
        assert_eq!(computed.get(), 3);
    }
}
