//! The items (symbols, sections, tasks) a query found, kept in memory by
//! row id between queries, so a query reads only row ids and BM25 from the
//! word index instead of joining every match to its row. Keyed by the
//! database and the index's revision, which moves with every commit of the
//! index (a catch-up's batches included): a row id names one item within a
//! revision, never across two. Bounded in bytes, dropped whole when the
//! revision moves. Beside them, once read, the distinct names of every
//! item, which a query that found nothing is compared with ("did you
//! mean"): one read of them per revision instead of one per such query.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use super::kept::{self, Bounded, Keyed};
use super::records::{self, Item};
use crate::store::StoreError;

/// Bytes of items kept at most (Django's 57,574 items weigh about 16 MiB).
const MAX_BYTES: usize = 48 << 20;
/// Bytes of names kept at most (Django's 33,353 distinct names weigh about
/// 3.5 MiB); past it they are read again for each query that needs them.
const MAX_NAME_BYTES: usize = 32 << 20;

struct Kept {
    items: Bounded<i64, Arc<Item>>,
    names: Option<Arc<Names>>,
}

/// What is kept for `database` at `revision`, started afresh when what was
/// kept belongs to another.
fn current<'k>(kept: &'k mut Option<Keyed<Kept>>, database: &Path, revision: i64) -> &'k mut Kept {
    kept::current(kept, database, revision, || Kept {
        items: Bounded::new(MAX_BYTES),
        names: None,
    })
}

/// The distinct names of the items, each beside its lower-cased form, in
/// order of length in characters.
pub struct Names {
    by_length: Vec<(usize, String, String)>,
    bytes: usize,
}

impl Names {
    fn of(names: Vec<String>) -> Names {
        let mut by_length: Vec<(usize, String, String)> = names
            .into_iter()
            .map(|name| (name.chars().count(), name.to_lowercase(), name))
            .collect();
        by_length.sort_unstable();
        let bytes = by_length
            .iter()
            .map(|(_, lower, name)| 64 + lower.len() + name.len())
            .sum();
        Names { by_length, bytes }
    }

    /// The names of `shortest` to `longest` characters: (lower-cased, as written).
    pub fn of_length(&self, shortest: usize, longest: usize) -> impl Iterator<Item = (&str, &str)> {
        let from = self.by_length.partition_point(|(n, _, _)| *n < shortest);
        let to = self.by_length.partition_point(|(n, _, _)| *n <= longest);
        self.by_length[from..to.max(from)]
            .iter()
            .map(|(_, lower, name)| (lower.as_str(), name.as_str()))
    }
}

/// The distinct names of the items in the index at `revision` of the
/// database at `database`.
pub fn names(c: &Connection, database: &Path, revision: i64) -> Result<Arc<Names>, StoreError> {
    let known = kept::for_them(lock().as_mut(), database, revision).and_then(|k| k.names.clone());
    if let Some(names) = known {
        return Ok(names);
    }
    let names = Arc::new(Names::of(records::distinct_names(c)?));
    if names.bytes <= MAX_NAME_BYTES {
        current(&mut lock(), database, revision).names = Some(names.clone());
    }
    Ok(names)
}

static KEPT: Mutex<Option<Keyed<Kept>>> = Mutex::new(None);

fn lock() -> std::sync::MutexGuard<'static, Option<Keyed<Kept>>> {
    KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The items of row ids `ids` in the index at `revision` of the database at
/// `database`, one for each id asked (None: no such row).
pub fn items(
    c: &Connection,
    database: &Path,
    revision: i64,
    ids: &[i64],
) -> Result<Vec<Option<Arc<Item>>>, StoreError> {
    let mut found: Vec<(i64, Option<Arc<Item>>)> = {
        let mut kept = lock();
        let known = kept::for_them(kept.as_mut(), database, revision);
        let known = known.as_deref();
        ids.iter()
            .map(|id| (*id, known.and_then(|k| k.items.get(id))))
            .collect()
    };
    let mut read = Vec::new();
    for (id, item) in found.iter_mut().filter(|(_, item)| item.is_none()) {
        if let Some(row) = records::item(c, *id)? {
            let row = Arc::new(row);
            read.push((*id, row.clone()));
            *item = Some(row);
        }
    }
    if !read.is_empty() {
        let mut kept = lock();
        let kept = current(&mut kept, database, revision);
        for (id, item) in read {
            let size = weight(&item);
            kept.items.insert(id, item, size);
        }
    }
    Ok(found.into_iter().map(|(_, item)| item).collect())
}

/// About what an item takes in memory: its text and the map's entry.
fn weight(item: &Item) -> usize {
    let optional = |text: &Option<String>| text.as_ref().map_or(0, String::len);
    128 + item.corpus.len()
        + item.kind.len()
        + item.name.len()
        + item.name_parts.len()
        + item.target.len()
        + item.body.len()
        + optional(&item.path)
        + optional(&item.lang)
        + optional(&item.status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_is_read_once_per_revision_and_again_at_the_next() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(crate::search::schema::MIGRATIONS[0].sql)
            .unwrap();
        let item = |name: &str| Item {
            corpus: "tasks".into(),
            kind: "task".into(),
            name: name.into(),
            name_parts: name.into(),
            target: name.into(),
            path: None,
            line: None,
            lang: None,
            status: Some("ready".into()),
            body: String::new(),
        };
        let id = records::add_item(&c, "unit", &item("first")).unwrap();
        let here = Path::new("/nowhere/items-test.db");
        let names = |revision: i64| -> Vec<Option<String>> {
            items(&c, here, revision, &[id, id + 100])
                .unwrap()
                .into_iter()
                .map(|item| item.map(|item| item.name.clone()))
                .collect()
        };
        let first = vec![Some("first".to_string()), None];
        assert_eq!(names(1), first, "an id with no row is None");
        c.execute(
            "UPDATE search_items SET name = 'second' WHERE id = ?1",
            [id],
        )
        .unwrap();
        assert_eq!(names(1), first, "kept within the revision");
        assert_eq!(
            names(2),
            [Some("second".to_string()), None],
            "read again at the next"
        );
    }

    #[test]
    fn names_are_found_by_their_length_in_characters() {
        let names = Names::of(
            ["Größe", "abc", "ab", "ABCD", "abcdef"]
                .map(str::to_string)
                .to_vec(),
        );
        let between = |shortest, longest| -> Vec<(&str, &str)> {
            names.of_length(shortest, longest).collect()
        };
        assert_eq!(between(3, 4), [("abc", "abc"), ("abcd", "ABCD")]);
        assert_eq!(between(5, 5), [("größe", "Größe")], "characters, not bytes");
        assert!(between(7, 9).is_empty());
        assert!(between(5, 2).is_empty());
    }
}
