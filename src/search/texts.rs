//! The texts of indexed files, kept in memory between the queries of a
//! process: a code-text scan then reads memory instead of SQLite pages.
//! Bounded (64 MiB); dropped whole when the index moves to a new revision or
//! another database, so a kept text is always the indexed one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use super::records;
use crate::store::StoreError;

/// Bytes of text kept at most.
const MAX_BYTES: usize = 64 << 20;

struct Kept {
    database: PathBuf,
    revision: i64,
    bytes: usize,
    texts: HashMap<i64, Arc<str>>,
}

static KEPT: Mutex<Option<Kept>> = Mutex::new(None);

/// File `id`'s text in the index at `revision` of the database at `database`.
pub fn text(
    c: &Connection,
    database: &Path,
    revision: i64,
    id: i64,
) -> Result<Option<Arc<str>>, StoreError> {
    if let Some(text) = kept(database, revision, id) {
        return Ok(Some(text));
    }
    let Some(text) = records::with_text(c, id, |text| Arc::<str>::from(text))? else {
        return Ok(None);
    };
    keep(database, revision, id, &text);
    Ok(Some(text))
}

fn lock() -> std::sync::MutexGuard<'static, Option<Kept>> {
    KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn kept(database: &Path, revision: i64, id: i64) -> Option<Arc<str>> {
    let kept = lock();
    let kept = kept.as_ref()?;
    (kept.revision == revision && kept.database == database)
        .then(|| kept.texts.get(&id).cloned())
        .flatten()
}

fn keep(database: &Path, revision: i64, id: i64, text: &Arc<str>) {
    if text.len() > MAX_BYTES / 8 {
        return;
    }
    let mut kept = lock();
    let current = kept
        .as_ref()
        .is_some_and(|k| k.revision == revision && k.database == database);
    if !current
        || kept
            .as_ref()
            .is_some_and(|k| k.bytes + text.len() > MAX_BYTES)
    {
        *kept = Some(Kept {
            database: database.to_path_buf(),
            revision,
            bytes: 0,
            texts: HashMap::new(),
        });
    }
    if let Some(kept) = kept.as_mut()
        && kept.texts.insert(id, text.clone()).is_none()
    {
        kept.bytes += text.len();
    }
}
