//! Every statement the search index runs: units and their fingerprints,
//! items and their words, file texts and their trigrams, the sources'
//! revisions, and the reads a query makes.

use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use super::features::Standing;

use crate::store::StoreError;

fn sql<T>(
    connection: &Connection,
    run: impl FnOnce() -> rusqlite::Result<T>,
) -> Result<T, StoreError> {
    run().map_err(|error| StoreError::on(connection, error))
}

/// A symbol, section or task as indexed. The word index keeps one for every
/// item in memory, so its text is boxed (no spare capacity), and the text
/// many items repeat (corpus, kind, path, language, status) is shared when
/// items are read in bulk ([`Interner`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub corpus: Arc<str>,
    pub kind: Arc<str>,
    pub name: Box<str>,
    /// The name's identifier parts (`words::all_parts`), space-separated.
    pub name_parts: Box<str>,
    /// What opens it: a graph uid, `mount/path#anchor`, a task id.
    pub target: Box<str>,
    pub path: Option<Arc<str>>,
    pub line: Option<u32>,
    pub lang: Option<Arc<str>>,
    pub status: Option<Arc<str>>,
    /// Text snippets come from: a section's or task's text, a symbol's qualified name.
    pub body: Box<str>,
    /// Whether it is a test's (its area says so): it ranks after the others.
    pub test: bool,
    /// What ranking asks of it whatever the query, worked out at its first
    /// ranking: an item is kept across queries, and ranked by most of them.
    /// Boxed: most items are never ranked, and hold a pointer only.
    pub standing: OnceLock<Box<Standing>>,
}

/// One copy of each text repeated across the items read in one pass: the
/// symbols of a file share its path, and all items a handful of kinds.
#[derive(Default)]
pub struct Interner(foldhash::HashSet<Arc<str>>);

impl Interner {
    pub fn shared(&mut self, text: &str) -> Arc<str> {
        if let Some(known) = self.0.get(text) {
            return known.clone();
        }
        let new: Arc<str> = text.into();
        self.0.insert(new.clone());
        new
    }
}

/// A task named `name`, for tests of what keeps items.
#[cfg(test)]
pub fn task_for_tests(name: &str) -> Item {
    Item {
        corpus: "tasks".into(),
        kind: "task".into(),
        name: name.into(),
        name_parts: name.into(),
        target: name.into(),
        path: None,
        line: None,
        lang: None,
        status: Some("ready".into()),
        body: "".into(),
        test: false,
        standing: Default::default(),
    }
}

/// What `search_sources` holds, read in one statement: the revision of
/// every source the index caught up with, the `writes:` counts, and when
/// the index last took in a change. A query reads it once.
pub struct Sources {
    rows: Vec<(String, i64, Option<String>)>,
}

impl Sources {
    pub fn read(c: &Connection) -> Result<Sources, StoreError> {
        sql(c, || {
            let mut statement =
                c.prepare_cached("SELECT source, revision, updated_at FROM search_sources")?;
            let rows =
                statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
            Ok(Sources {
                rows: rows.collect::<rusqlite::Result<_>>()?,
            })
        })
    }

    /// The revision of `source` the index last caught up with.
    pub fn revision_of(&self, source: &str) -> Option<i64> {
        self.rows
            .iter()
            .find(|(name, _, _)| name == source)
            .map(|(_, revision, _)| *revision)
    }

    /// How many commits rewrote `source`'s units (see `count_write`).
    pub fn writes(&self, source: &str) -> i64 {
        self.revision_of(&writes_row(source)).unwrap_or(0)
    }

    /// The index's revision: the sum over every row, so it moves with
    /// every change a catch-up commits (see `count_write`).
    pub fn indexed_revision(&self) -> i64 {
        self.rows
            .iter()
            .fold(0i64, |sum, (_, revision, _)| sum.wrapping_add(*revision))
    }

    /// When the index last took in a change, if ever.
    pub fn updated_at(&self) -> Option<String> {
        self.rows.iter().filter_map(|(_, _, at)| at.clone()).max()
    }
}

pub fn set_source_revision(
    c: &Connection,
    source: &str,
    revision: i64,
    at: &str,
) -> Result<(), StoreError> {
    sql(c, || {
        c.prepare_cached(
            "INSERT INTO search_sources(source, revision, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(source) DO UPDATE SET revision = excluded.revision, updated_at = excluded.updated_at",
        )?
        .execute(params![source, revision, at])
        .map(|_| ())
    })
}

/// The row of `search_sources` counting the commits that rewrote `source`'s
/// units (no source area has such a name).
fn writes_row(source: &str) -> String {
    format!("writes:{source}")
}

/// Counts one commit of `source`'s units. The index's revision (the sum over
/// `search_sources`) then moves with every batch a catch-up commits, not only
/// with its last, so a row id names one item within a revision; and the count
/// of one source names one state of its units, even between the batches of a
/// catch-up (when the source's own revision is not yet recorded).
pub fn count_write(c: &Connection, source: &str, at: &str) -> Result<(), StoreError> {
    sql(c, || {
        c.prepare_cached(
            "INSERT INTO search_sources(source, revision, updated_at) VALUES (?1, 1, ?2)
             ON CONFLICT(source) DO UPDATE SET revision = revision + 1, updated_at = excluded.updated_at",
        )?
        .execute(params![writes_row(source), at])
        .map(|_| ())
    })
}

/// The fingerprints of the units whose names start with `prefix`.
pub fn units(c: &Connection, prefix: &str) -> Result<HashMap<String, String>, StoreError> {
    sql(c, || {
        let mut statement = c.prepare_cached(
            "SELECT unit, fingerprint FROM search_units WHERE substr(unit, 1, length(?1)) = ?1",
        )?;
        let rows = statement.query_map([prefix], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect()
    })
}

/// Forgets a unit: its items, its file text and trigrams.
pub fn remove_unit(c: &Connection, unit: &str, file: Option<&str>) -> Result<(), StoreError> {
    sql(c, || {
        c.prepare_cached("DELETE FROM search_items WHERE unit = ?1")?
            .execute([unit])?;
        if let Some(path) = file {
            c.prepare_cached(
                "DELETE FROM search_trigrams WHERE rowid IN (SELECT id FROM search_files WHERE path = ?1)",
            )?
            .execute([path])?;
            c.prepare_cached("DELETE FROM search_files WHERE path = ?1")?
                .execute([path])?;
        }
        c.prepare_cached("DELETE FROM search_units WHERE unit = ?1")?
            .execute([unit])?;
        Ok(())
    })
}

pub fn set_unit(c: &Connection, unit: &str, fingerprint: &str) -> Result<(), StoreError> {
    sql(c, || {
        c.prepare_cached("INSERT OR REPLACE INTO search_units(unit, fingerprint) VALUES (?1, ?2)")?
            .execute([unit, fingerprint])
            .map(|_| ())
    })
}

/// Adds an item of `unit` with its words (name, path, body: each
/// `words::index_words`, so without line breaks).
pub fn add_item(
    c: &Connection,
    unit: &str,
    item: &Item,
    words: &[String; 3],
) -> Result<(), StoreError> {
    sql(c, || {
        c.prepare_cached(
            "INSERT INTO search_items(unit, corpus, kind, name, name_parts, target, path, line, lang, status, body, words, test)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )?
        .execute(params![
            unit,
            item.corpus,
            item.kind,
            item.name,
            item.name_parts,
            item.target,
            item.path,
            item.line,
            item.lang,
            item.status,
            item.body,
            words.join("\n"),
            item.test
        ])
        .map(|_| ())
    })
}

/// Keeps a file's text; answers its row id, for its trigrams.
pub fn add_file(
    c: &Connection,
    path: &str,
    lang: &str,
    test: bool,
    content: &str,
) -> Result<i64, StoreError> {
    sql(c, || {
        c.prepare_cached(
            "INSERT INTO search_files(path, lang, test, content) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![path, lang, test, content])?;
        Ok(c.last_insert_rowid())
    })
}

/// A file's trigram tokens (`grams::tokens`), under its row id.
pub fn add_grams(c: &Connection, id: i64, grams: &str) -> Result<(), StoreError> {
    sql(c, || {
        c.prepare_cached("INSERT INTO search_trigrams(rowid, grams) VALUES (?1, ?2)")?
            .execute(params![id, grams])
            .map(|_| ())
    })
}

/// A row of `ITEM_WITH_WORDS` as an item.
fn item_of(row: &rusqlite::Row, interner: &mut Interner) -> rusqlite::Result<Item> {
    let text = |at: usize| -> rusqlite::Result<&str> { Ok(row.get_ref(at)?.as_str()?) };
    let maybe =
        |at: usize| -> rusqlite::Result<Option<&str>> { Ok(row.get_ref(at)?.as_str_or_null()?) };
    Ok(Item {
        corpus: interner.shared(text(0)?),
        kind: interner.shared(text(1)?),
        name: text(2)?.into(),
        name_parts: text(3)?.into(),
        target: text(4)?.into(),
        path: maybe(5)?.map(|path| interner.shared(path)),
        line: row.get(6)?,
        lang: maybe(7)?.map(|lang| interner.shared(lang)),
        status: maybe(8)?.map(|status| interner.shared(status)),
        body: text(11)?.into(),
        test: row.get(12)?,
        standing: Default::default(),
    })
}

/// The row ids of every item, ascending.
pub fn item_ids(c: &Connection) -> Result<Vec<i64>, StoreError> {
    ids(c, "SELECT id FROM search_items ORDER BY id")
}

/// The row ids `statement` selects.
fn ids(c: &Connection, statement: &str) -> Result<Vec<i64>, StoreError> {
    sql(c, || {
        let mut statement = c.prepare_cached(statement)?;
        let rows = statement.query_map([], |row| row.get(0))?;
        rows.collect()
    })
}

const ITEM_WITH_WORDS: &str = "SELECT corpus, kind, name, name_parts, target, path, line, lang, status, words, id, body, test FROM search_items";

/// The item of row `id` and its words, one field a line.
pub fn item_with_words(c: &Connection, id: i64) -> Result<Option<(Item, String)>, StoreError> {
    sql(c, || {
        c.prepare_cached(&format!("{ITEM_WITH_WORDS} WHERE id = ?1"))?
            .query_row([id], |row| {
                Ok((item_of(row, &mut Interner::default())?, row.get(9)?))
            })
            .optional()
    })
}

/// Every item with its row id and words, in one pass.
pub fn each_item_with_words(
    c: &Connection,
    mut visit: impl FnMut(i64, Item, &str),
) -> Result<(), StoreError> {
    sql(c, || {
        let mut statement = c.prepare_cached(ITEM_WITH_WORDS)?;
        let mut rows = statement.query([])?;
        let mut interner = Interner::default();
        while let Some(row) = rows.next()? {
            visit(
                row.get(10)?,
                item_of(row, &mut interner)?,
                row.get_ref(9)?.as_str()?,
            );
        }
        Ok(())
    })
}

/// A file the index keeps the text of: its row id, path and language.
#[derive(Debug, Clone)]
pub struct KeptFile {
    pub id: i64,
    /// Shared by the lines of code text found in it.
    pub path: std::sync::Arc<str>,
    /// Shared by the lines of code text found in it.
    pub lang: std::sync::Arc<str>,
    /// Whether it is a test's (its area says so): asked of every line
    /// found in it.
    pub test: bool,
}

/// Every indexed file, by path.
pub fn all_files(c: &Connection) -> Result<Vec<KeptFile>, StoreError> {
    sql(c, || {
        let mut statement =
            c.prepare_cached("SELECT id, path, lang, test FROM search_files ORDER BY path")?;
        let rows = statement.query_map([], |row| {
            let path: String = row.get(1)?;
            Ok(KeptFile {
                id: row.get(0)?,
                test: row.get(3)?,
                path: path.into(),
                lang: row.get::<_, String>(2)?.into(),
            })
        })?;
        rows.collect()
    })
}

/// The row ids of every kept file text, ascending.
pub fn file_ids(c: &Connection) -> Result<Vec<i64>, StoreError> {
    ids(c, "SELECT id FROM search_files ORDER BY id")
}

/// The row ids of the files holding trigram `token` (one of `grams`' tokens,
/// a bare FTS5 word), in no set order.
pub fn files_with_token(c: &Connection, token: &str) -> Result<Vec<i64>, StoreError> {
    sql(c, || {
        let mut statement =
            c.prepare_cached("SELECT rowid FROM search_trigrams WHERE search_trigrams MATCH ?1")?;
        let rows = statement.query_map([token], |row| row.get(0))?;
        rows.collect()
    })
}

/// Runs `read` on a kept file's text, borrowed from SQLite's row.
pub fn with_text<T>(
    c: &Connection,
    id: i64,
    read: impl FnOnce(&str) -> T,
) -> Result<Option<T>, StoreError> {
    sql(c, || {
        c.prepare_cached("SELECT content FROM search_files WHERE id = ?1")?
            .query_row([id], |row| Ok(read(row.get_ref(0)?.as_str()?)))
            .optional()
    })
}

/// The distinct symbol, heading and task names, each with a corpus it is
/// in (a name in two corpora comes twice), in order of name: for "did you
/// mean" when a query finds nothing.
pub fn distinct_names(c: &Connection) -> Result<Vec<(String, String)>, StoreError> {
    sql(c, || {
        let mut statement =
            c.prepare_cached("SELECT DISTINCT name, corpus FROM search_items ORDER BY name")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect()
    })
}

/// Counts of what the index holds: items per corpus and files.
pub fn sizes(c: &Connection) -> Result<(i64, i64), StoreError> {
    sql(c, || {
        let items = c.query_row("SELECT count(*) FROM search_items", [], |r| r.get(0))?;
        let files = c.query_row("SELECT count(*) FROM search_files", [], |r| r.get(0))?;
        Ok((items, files))
    })
}

/// Every path the index knows (files and the items' paths), for telling
/// whether a path filter could match anything.
pub fn all_paths(c: &Connection) -> Result<Vec<String>, StoreError> {
    sql(c, || {
        let mut statement = c.prepare_cached(
            "SELECT path FROM search_files UNION SELECT path FROM search_items WHERE path IS NOT NULL",
        )?;
        let rows = statement.query_map([], |row| row.get(0))?;
        rows.collect()
    })
}

/// Merges up to `pages` pages of the trigram index's segments toward one
/// (FTS5's `merge` with a negative count, which `optimize` is done at once):
/// true when it merged some, false once the index is one segment. A caller
/// runs it in a transaction of its own, again and again, so other writers
/// get their turn between two: merging a large index at once held the write
/// lock for seconds.
pub fn merge_some_segments(c: &Connection, pages: i64) -> Result<bool, StoreError> {
    sql(c, || {
        let before = c.total_changes();
        c.execute(
            "INSERT INTO search_trigrams(search_trigrams, rank) VALUES ('merge', ?1)",
            [-pages.max(1)],
        )?;
        // FTS5 writes at least its structure record when it merged anything
        Ok(c.total_changes() - before >= 2)
    })
}

/// Lets FTS5 merge segments as writes come in, as it does by default.
pub fn merge_as_writes_come(c: &Connection) -> Result<(), StoreError> {
    sql(c, || {
        c.execute(
            "INSERT INTO search_trigrams(search_trigrams, rank) VALUES ('automerge', 4)",
            [],
        )
        .map(|_| ())
    })
}

/// Stops FTS5 merging segments as batches come in: a catch-up of many
/// batches merges them once at its end ([`merge_some_segments`]) instead of again
/// and again on the way.
pub fn defer_merging(c: &Connection) -> Result<(), StoreError> {
    sql(c, || {
        c.execute(
            "INSERT INTO search_trigrams(search_trigrams, rank) VALUES ('automerge', 0)",
            [],
        )
        .map(|_| ())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_merge_a_few_pages_at_a_time_into_one_and_every_row_is_still_found() {
        let c = crate::search::index::schema::index_for_tests();
        defer_merging(&c).unwrap();
        // each autocommit insert leaves a segment of its own (FTS5 merges
        // a level of 16 by itself, whatever automerge says)
        for id in 1..=200_i64 {
            let grams: Vec<String> = (0..400)
                .map(|n| format!("g{}", (id * 7 + n) % 997))
                .collect();
            add_grams(&c, id, &format!("common {}", grams.join(" "))).unwrap();
        }
        let segments = |c: &Connection| -> i64 {
            c.query_row(
                "SELECT count(DISTINCT segid) FROM search_trigrams_idx",
                [],
                |r| r.get(0),
            )
            .unwrap()
        };
        assert!(segments(&c) > 10, "{} segments", segments(&c));
        let mut rounds = 0;
        while merge_some_segments(&c, 4).unwrap() {
            rounds += 1;
            assert!(rounds < 10_000, "the merge never ends");
        }
        assert!(rounds > 1, "merged at once ({rounds} rounds)");
        assert_eq!(segments(&c), 1);
        assert!(
            !merge_some_segments(&c, 4).unwrap(),
            "one segment, yet more to merge"
        );
        merge_as_writes_come(&c).unwrap();
        let found: i64 = c
            .query_row(
                "SELECT count(*) FROM search_trigrams WHERE search_trigrams MATCH 'common'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(found, 200);
    }

    #[test]
    fn items_read_in_one_pass_share_the_text_they_repeat() {
        let c = crate::search::index::schema::index_for_tests();
        for name in ["first", "second"] {
            let item = Item {
                path: Some("src/shared.rs".into()),
                lang: Some("rust".into()),
                ..task_for_tests(name)
            };
            add_item(
                &c,
                name,
                &item,
                &[name.into(), String::new(), String::new()],
            )
            .unwrap();
        }
        let mut read = Vec::new();
        each_item_with_words(&c, |_, item, _| read.push(item)).unwrap();
        let [first, second] = &read[..] else {
            panic!("two items, not {}", read.len());
        };
        assert_eq!((&*first.name, &*second.name), ("first", "second"));
        let same = |a: &Option<Arc<str>>, b: &Option<Arc<str>>| {
            Arc::ptr_eq(a.as_ref().unwrap(), b.as_ref().unwrap())
        };
        assert!(same(&first.path, &second.path), "one copy of the path");
        assert!(same(&first.lang, &second.lang));
        assert!(same(&first.status, &second.status));
        assert!(Arc::ptr_eq(&first.kind, &second.kind));
        assert_eq!(first.path.as_deref(), Some("src/shared.rs"));
    }
}
