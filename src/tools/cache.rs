//! Answers computed once per data revision and shared, already serialised, by
//! every caller until the data changes.
//!
//! A tool that reads a revision counter (bumped inside every writing
//! transaction, by any process) *before* reading its data can cache its answer
//! under that revision: content cached under revision r is never older than r,
//! so a hit is always current. `COS_ANSWER_CACHE=off` turns caching off, to
//! measure or rule it out.

use serde::Serialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use utoipa::openapi::{RefOr, schema::Schema};
use utoipa::{PartialSchema, ToSchema};

use super::ToolError;

/// Entries kept at most; older revisions are dropped first.
const MAX_ENTRIES: usize = 256;

/// (tool name, the tool's key for its input and configuration)
type EntryKey = (&'static str, String);
/// (revision the answer was computed at, the answer)
type Entry = (i64, Arc<RawValue>);

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

    /// The answer of `tool` for `key` at `revision`, computing and keeping it on a miss.
    pub fn get_or_compute<T: Serialize>(
        &self,
        tool: &'static str,
        key: String,
        revision: i64,
        compute: impl FnOnce() -> Result<T, ToolError>,
    ) -> Result<Shared<T>, ToolError> {
        if self.enabled
            && let Some((cached_revision, json)) = self.lock().get(&(tool, key.clone()))
            && *cached_revision == revision
        {
            return Ok(Shared::from_raw(json.clone()));
        }
        let answer = compute()?;
        let json: Arc<RawValue> = serde_json::value::to_raw_value(&answer)
            .map_err(|e| ToolError::internal("serialising the tool's answer", e))?
            .into();
        if self.enabled {
            let mut entries = self.lock();
            if entries.len() >= MAX_ENTRIES {
                entries.retain(|_, (cached, _)| *cached >= revision);
                if entries.len() >= MAX_ENTRIES {
                    entries.clear();
                }
            }
            entries.insert((tool, key), (revision, json.clone()));
        }
        Ok(Shared::from_raw(json))
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
    json: Arc<RawValue>,
    shape: PhantomData<fn() -> T>,
}

impl<T> Shared<T> {
    fn from_raw(json: Arc<RawValue>) -> Shared<T> {
        Shared {
            json,
            shape: PhantomData,
        }
    }

    pub fn json(&self) -> &str {
        self.json.get()
    }
}

impl<T> Serialize for Shared<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
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
            Ok(serde_json::json!({"value": value}))
        };
        let first = cache
            .get_or_compute("t", "k".into(), 1, || compute(1))
            .unwrap();
        let again = cache
            .get_or_compute("t", "k".into(), 1, || compute(99))
            .unwrap();
        assert_eq!(first.json(), again.json());
        assert_eq!(computed.get(), 1);
        let newer = cache
            .get_or_compute("t", "k".into(), 2, || compute(2))
            .unwrap();
        assert_eq!(newer.json(), r#"{"value":2}"#);
        let other_key = cache
            .get_or_compute("t", "other".into(), 2, || compute(3))
            .unwrap();
        assert_eq!(other_key.json(), r#"{"value":3}"#);
        assert_eq!(computed.get(), 3);
        assert_eq!(serde_json::to_string(&newer).unwrap(), r#"{"value":2}"#);
    }

    #[test]
    fn off_means_always_computed() {
        let cache = AnswerCache::new(false);
        let computed = Cell::new(0);
        for _ in 0..3 {
            cache
                .get_or_compute("t", "k".into(), 1, || {
                    computed.set(computed.get() + 1);
                    Ok(1)
                })
                .unwrap();
        }
        assert_eq!(computed.get(), 3);
    }
}
