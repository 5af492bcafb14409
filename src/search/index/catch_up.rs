//! Keeping the index level with what it indexes. Each source (an area's
//! declared `Searchable`: the graph's files and symbols, the board's tasks,
//! the documents' sections, the agents' evidence) has a revision; a query
//! first catches up with every source it reads whose revision moved,
//! re-indexing only the units whose fingerprint changed. The sources never
//! call search: it follows them, one catch-up loop for all of them.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use super::records::{self, Item};
use crate::search::query::tokens::{all_parts, index_words};
use crate::store::StoreError;
use crate::tools::searchable::{SearchItem, SearchUnit, Searchable, UnitVersion};
use crate::tools::{ToolContext, ToolError};
use rusqlite::Connection;

/// Units written per transaction, so a cold index never holds the writer long.
const BATCH: usize = 400;

/// One unit's new content: its items (with their words) and, for a file,
/// its text; no fingerprint when it was gone by the time it was read.
struct Unit {
    name: String,
    fingerprint: Option<String>,
    items: Vec<(Item, [String; 3])>,
    file: Option<FileUnit>,
}

/// A file's path, language, and its text with its trigram tokens when kept.
struct FileUnit {
    path: String,
    lang: String,
    test: bool,
    text: Option<(String, String)>,
}

/// What a catch-up took in: the units (files, tasks, documents, sessions)
/// re-indexed or removed, by source, for each source that had moved.
pub type CaughtUp = Vec<(&'static str, usize)>;

/// Held by the one caller of the process catching a database's index up
/// (each database has its own: a process may serve several).
fn working_on(database: &std::path::Path) -> std::sync::Arc<Mutex<()>> {
    static WORKING: Mutex<Vec<(std::path::PathBuf, std::sync::Arc<Mutex<()>>)>> =
        Mutex::new(Vec::new());
    let mut working = WORKING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, lock)) = working.iter().find(|(path, _)| path == database) {
        return lock.clone();
    }
    let lock = std::sync::Arc::new(Mutex::new(()));
    working.push((database.to_path_buf(), lock.clone()));
    lock
}

/// How long a query waits for a catch-up another caller is running before
/// it reads what the index holds: an edit's catch-up takes milliseconds,
/// a first build over a large repository (the Linux kernel's) a minute.
const QUERY_WAITS: std::time::Duration = std::time::Duration::from_secs(3);

/// How long a query's own catch-up writes batches before it leaves the rest
/// to the next caller (the hub's follower, or the next query): with the
/// wait above and the query itself, well inside a query's 30 s.
const QUERY_CATCHES_UP: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether a catch-up took in all that had moved, or stopped at its
/// deadline with the rest for the next caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reached {
    Level,
    Partway,
}

/// Catches the index up with every source of `sources`. One caller of the
/// process at a time does the work on a database; the others wait and find
/// it done.
pub fn catch_up(
    context: &ToolContext,
    sources: &[&'static Searchable],
) -> Result<CaughtUp, ToolError> {
    // most queries find every source level: they look without waiting for
    // a catch-up another query may be running
    if level_with_every_source(context, sources)? {
        return Ok(Vec::new());
    }
    let working = working_on(context.hub.store.path());
    let _working = working
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    catch_up_holding(context, sources, None).map(|(caught_up, _)| caught_up)
}

/// A query's catch-up: as [`catch_up`], but None when another caller has
/// been catching up for longer than [`QUERY_WAITS`], or when its own
/// catch-up ran past [`QUERY_CATCHES_UP`]: the query reads what has been
/// taken in so far (committed a batch at a time) and says so.
pub fn catch_up_for_query(
    context: &ToolContext,
    sources: &[&'static Searchable],
) -> Result<Option<CaughtUp>, ToolError> {
    if level_with_every_source(context, sources)? {
        return Ok(Some(Vec::new()));
    }
    let deadline = std::time::Instant::now() + QUERY_WAITS;
    let working = working_on(context.hub.store.path());
    let _working = loop {
        match working.try_lock() {
            Ok(working) => break working,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => break poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            Err(std::sync::TryLockError::WouldBlock) => return Ok(None),
        }
    };
    let deadline = std::time::Instant::now() + QUERY_CATCHES_UP;
    let (caught_up, reached) = catch_up_holding(context, sources, Some(deadline))?;
    Ok((reached == Reached::Level).then_some(caught_up))
}

/// The catch-up itself, by the caller holding the database's [`working_on`] lock.
fn catch_up_holding(
    context: &ToolContext,
    sources: &[&'static Searchable],
    deadline: Option<std::time::Instant>,
) -> Result<(CaughtUp, Reached), ToolError> {
    let recorded = context.hub.store.view(records::Sources::read)?;
    let mut caught_up = CaughtUp::new();
    let mut reached = Reached::Level;
    for source in sources {
        let started = std::time::Instant::now();
        if let Some((units, source_reached)) =
            catch_up_source(context, source, &recorded, deadline)?
        {
            tracing::info!(
                source = source.source,
                units,
                ms = started.elapsed().as_millis() as u64,
                level = source_reached == Reached::Level,
                "the search index caught up"
            );
            caught_up.push((source.source, units));
            if source_reached == Reached::Partway {
                reached = Reached::Partway;
                break;
            }
        }
    }
    if reached == Reached::Partway {
        // the next caller goes on where this one stopped; meanwhile FTS5
        // merges as writes come, as it would after a failed catch-up
        context.hub.store.write(records::merge_as_writes_come)?;
    } else if !caught_up.is_empty() {
        // none when no source was behind: nothing was written
        let units: usize = caught_up.iter().map(|(_, units)| units).sum();
        if units > BATCH {
            // each batch left a segment of its own, and a term's lookup reads
            // every segment: one merged index answers a query ~25 % sooner
            merge_segments(&context.hub.store)?;
        }
        // a cold index writes much of the database: let the log restart small
        context.hub.store.checkpoint()?;
    }
    Ok((caught_up, reached))
}

/// Pages of the trigram index merged in one transaction: merging the whole
/// index of a large repository at once (Django's, after a cold index) held
/// the write lock for seconds, as long as a writer waits for it.
const MERGE_PAGES_AT_ONCE: i64 = 500;
/// Transactions of merging at most, whatever happens meanwhile.
const MOST_MERGES: usize = 100_000;

/// Merges the trigram index into one segment, a few pages a transaction,
/// then lets FTS5 merge segments as writes come in again.
fn merge_segments(store: &crate::store::Store) -> Result<(), StoreError> {
    for _ in 0..MOST_MERGES {
        if !store.write(|c| records::merge_some_segments(c, MERGE_PAGES_AT_ONCE))? {
            break;
        }
    }
    store.write(records::merge_as_writes_come)
}

/// The revision of each source the index caught up with, read once for a
/// catch-up (only a catch-up moves them, one at a time).
type Recorded = records::Sources;

/// Whether the index has caught up with every source of `sources`: every
/// revision read in one visit to the pool.
fn level_with_every_source(
    context: &ToolContext,
    sources: &[&'static Searchable],
) -> Result<bool, ToolError> {
    first_scan(context, sources)?;
    let level = context
        .hub
        .store
        .view(|c| level_in(context.hub, c, sources, &records::Sources::read(c)?))?;
    Ok(level)
}

/// What a query does before it looks at the index: each source prepares
/// (the documents' mounts are scanned, once per process, for changes made
/// while no hub ran).
pub fn first_scan(context: &ToolContext, sources: &[&'static Searchable]) -> Result<(), ToolError> {
    for source in sources {
        if let Some(prepare) = source.prepare {
            prepare(context)?;
        }
    }
    Ok(())
}

/// Whether `recorded`, read on `c`, is level with every source of
/// `sources` as `c` sees them: a query asks in the transaction it reads in.
pub fn level_in(
    hub: &crate::tools::HubState,
    c: &Connection,
    sources: &[&'static Searchable],
    recorded: &Recorded,
) -> Result<bool, StoreError> {
    for source in sources {
        let Some(revision) = reachable((source.revision)(hub, c))? else {
            continue;
        };
        if behind(recorded, source.source, revision) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A source's revision; None when the database it lives in (a team
/// database) cannot be reached: the index then answers with what it took
/// in from it last, so searching the rest never waits on it.
fn reachable(revision: Result<i64, StoreError>) -> Result<Option<i64>, StoreError> {
    match revision {
        Ok(revision) => Ok(Some(revision)),
        Err(error) if error.is_unreachable() => {
            tracing::debug!(%error, "search answers with what it last took in from an unreachable source");
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

/// Whether the index is behind `source` at `revision`.
fn behind(recorded: &Recorded, source: &str, revision: i64) -> bool {
    recorded.revision_of(source) != Some(revision)
}

/// How many commits rewrote the units of the sources that carry files:
/// what the kept file texts are bound to (a task or a document written
/// keeps them).
pub fn files_writes(sources: &[&'static Searchable], recorded: &Recorded) -> i64 {
    sources
        .iter()
        .filter(|source| source.files)
        .map(|source| recorded.writes(source.source))
        .fold(0i64, i64::wrapping_add)
}

/// A source's unit as the index names it.
fn unit_name(source: &Searchable, key: &str) -> String {
    format!("{}:{key}", source.source)
}

/// Catches the index up with one source: says how many units it rewrote,
/// or None when it was not behind.
fn catch_up_source(
    context: &ToolContext,
    source: &'static Searchable,
    recorded: &Recorded,
    deadline: Option<std::time::Instant>,
) -> Result<Option<(usize, Reached)>, ToolError> {
    let store = &context.hub.store;
    // read before the units: a change after it moves the revision on, and
    // the next query catches up with it
    let revision =
        store.view(|c| Ok::<_, ToolError>(reachable((source.revision)(context.hub, c))?))?;
    let Some(revision) = revision.filter(|revision| behind(recorded, source.source, *revision))
    else {
        return Ok(None);
    };
    let prefix = unit_name(source, "");
    let known = store.view(|c| records::units(c, &prefix))?;
    let mut changed = Vec::new();
    let mut present = HashSet::new();
    for unit in (source.units)(context)? {
        let name = unit_name(source, &unit.key);
        if known.get(&name) != Some(&unit.fingerprint) {
            changed.push(unit);
        }
        present.insert(name);
    }
    let removed = gone(&known, &present, |name| {
        source.files.then(|| name.strip_prefix(&prefix)).flatten()
    });
    if changed.is_empty() {
        apply(context, source.source, revision, &removed, Vec::new(), true)?;
        return Ok(Some((removed.len(), Reached::Level)));
    }
    let batches = changed.len().div_ceil(BATCH);
    if batches > 1 {
        // merged when the catch-up ends (see `catch_up`)
        store.write(records::defer_merging)?;
    }
    let written = write_in_batches(context, source, revision, &changed, &removed, deadline);
    if let Err(error) = &written
        && batches > 1
    {
        // FTS5 merges as writes come in again (after a crash here, the next
        // large catch-up sets it back; until then FTS5's own ceiling of 16
        // segments a level holds)
        if let Err(merging) = merge_segments(store) {
            tracing::warn!(%merging, %error, "the search index could not merge its segments after a failed catch-up");
        }
    }
    let (written, reached) = written?;
    Ok(Some((written, reached)))
}

/// Loads `changed` a batch at a time and writes each batch, removing
/// `removed` with the first; the source's revision is recorded with the last.
/// Past `deadline` it stops after a batch: the revision is not recorded, so
/// the next caller finds the units still to write by their fingerprints.
/// Answers the units written and how far it got.
fn write_in_batches(
    context: &ToolContext,
    source: &'static Searchable,
    revision: i64,
    changed: &[UnitVersion],
    removed: &[(String, Option<String>)],
    deadline: Option<std::time::Instant>,
) -> Result<(usize, Reached), ToolError> {
    let batches = changed.len().div_ceil(BATCH);
    std::thread::scope(|scope| {
        // the next batch is read, split into words and trigrams (on every
        // core) while this thread writes the one before: writing is one
        // transaction at a time, and took half of a cold index's time
        let (send, prepared) = std::sync::mpsc::sync_channel(1);
        scope.spawn(move || {
            for batch in changed.chunks(BATCH) {
                let units = load_units(context, source, batch);
                let failed = units.is_err();
                // the writer stopped (it failed): nothing more is wanted
                if send.send(units).is_err() || failed {
                    break;
                }
            }
        });
        let mut written = removed.len();
        for (at, units) in prepared.into_iter().enumerate() {
            let removing = if at == 0 { removed } else { &[] };
            let last = at + 1 == batches;
            let units = units?;
            written += units.len();
            apply(context, source.source, revision, removing, units, last)?;
            // leaving the loop drops the receiver: the loader stops
            if !last && deadline.is_some_and(|deadline| std::time::Instant::now() >= deadline) {
                return Ok((written, Reached::Partway));
            }
        }
        Ok::<_, ToolError>((written, Reached::Level))
    })
}

/// Units of `known` no longer present, with the file each stands for.
fn gone(
    known: &HashMap<String, String>,
    present: &HashSet<String>,
    file_of: impl Fn(&str) -> Option<&str>,
) -> Vec<(String, Option<String>)> {
    let mut removed: Vec<(String, Option<String>)> = known
        .keys()
        .filter(|unit| !present.contains(*unit))
        .map(|unit| (unit.clone(), file_of(unit).map(str::to_string)))
        .collect();
    removed.sort();
    removed
}

/// `batch` as its source loads it (in one read where it can), made into
/// index rows on every core.
fn load_units(
    context: &ToolContext,
    source: &Searchable,
    batch: &[UnitVersion],
) -> Result<Vec<Unit>, ToolError> {
    use rayon::prelude::*;
    match source.load_batch {
        Some(load_batch) => {
            let loaded = load_batch(context, batch)?;
            Ok(batch
                .par_iter()
                .zip(loaded)
                .map(|(unit, loaded)| unit_of(source, unit, loaded))
                .collect())
        }
        None => batch
            .par_iter()
            .map(|unit| Ok(unit_of(source, unit, (source.load)(context, unit)?)))
            .collect(),
    }
}

/// A unit as its source loaded it, made into index rows: words and name
/// parts for every item, trigram tokens for a kept file text.
fn unit_of(source: &Searchable, unit: &UnitVersion, loaded: Option<SearchUnit>) -> Unit {
    let name = unit_name(source, &unit.key);
    let Some(SearchUnit { items, file }) = loaded else {
        // gone meanwhile: its rows go, and it is read again if it comes back
        let file = source.files.then(|| unit.key.clone());
        return Unit {
            name,
            fingerprint: None,
            items: Vec::new(),
            file: file.map(|path| FileUnit {
                path,
                lang: String::new(),
                test: false,
                text: None,
            }),
        };
    };
    let items = items
        .into_iter()
        .map(|item| {
            let definitions = source
                .corpora
                .iter()
                .any(|corpus| corpus.name == item.corpus && corpus.definitions);
            item_of(item, definitions)
        })
        .collect();
    Unit {
        name,
        fingerprint: Some(unit.fingerprint.clone()),
        items,
        file: file.map(|file| FileUnit {
            path: file.path,
            lang: file.lang,
            test: file.test,
            text: file.text.map(|text| {
                let grams = crate::search::query::trigrams::tokens(&text);
                (text, grams)
            }),
        }),
    }
}

/// An area's item as the index keeps it, with its words. A definition's
/// body is its line, kept at most a few snippets wide.
fn item_of(item: SearchItem, definitions: bool) -> (Item, [String; 3]) {
    let words = [
        index_words(&item.words_from[0]),
        index_words(&item.words_from[1]),
        index_words(&item.words_from[2]),
    ];
    let body = if definitions {
        clipped(&item.body)
    } else {
        item.body
    };
    let item = Item {
        corpus: item.corpus.into(),
        kind: item.kind.into(),
        name_parts: all_parts(&item.name).join(" ").into(),
        name: item.name.into(),
        target: item.target.into(),
        path: item.path.map(Into::into),
        line: item.line,
        lang: item.lang.map(Into::into),
        status: item.status.map(Into::into),
        body: body.into(),
        test: item.test,
        standing: Default::default(),
    };
    (item, words)
}

/// A line as a snippet may show it: at most a few snippets wide.
fn clipped(line: &str) -> String {
    let end = line
        .char_indices()
        .nth(4 * crate::search::model::SNIPPET_CHARS)
        .map_or(line.len(), |(at, _)| at);
    line[..end].trim_end().to_string()
}

/// Writes one batch: removals, then each unit replaced whole; the source's
/// revision is recorded with the last batch.
fn apply(
    context: &ToolContext,
    source: &str,
    revision: i64,
    removed: &[(String, Option<String>)],
    units: Vec<Unit>,
    last: bool,
) -> Result<(), ToolError> {
    let at = crate::tools::now();
    context.hub.store.write(|c| {
        // Rows first, trigram rows last and in rowid order: FTS5 writes its
        // pending terms out at every statement savepoint and at every rowid
        // that goes backwards, and a run of its own inserts needs neither.
        for (unit, file) in removed {
            records::remove_unit(c, unit, file.as_deref())?;
        }
        let mut grams = Vec::new();
        for unit in &units {
            let file = unit.file.as_ref().map(|file| file.path.as_str());
            records::remove_unit(c, &unit.name, file)?;
            let Some(fingerprint) = &unit.fingerprint else {
                continue;
            };
            for (item, item_words) in &unit.items {
                records::add_item(c, &unit.name, item, item_words)?;
            }
            if let Some(FileUnit {
                path,
                lang,
                test,
                text: Some((text, file_grams)),
            }) = &unit.file
            {
                grams.push((records::add_file(c, path, lang, *test, text)?, file_grams));
            }
            records::set_unit(c, &unit.name, fingerprint)?;
        }
        for (id, file_grams) in grams {
            records::add_grams(c, id, file_grams)?;
        }
        if last {
            records::set_source_revision(c, source, revision, &at)?;
        }
        records::count_write(c, source, &at)?;
        Ok::<(), ToolError>(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the fifth schema added, taken away to stand for an older one.
    const UNDO_VECTORS: &str = "DROP TRIGGER IF EXISTS search_vectors_follow_items;
        DROP TRIGGER IF EXISTS search_vectors_added; DROP TRIGGER IF EXISTS search_vectors_removed;
        DROP TABLE IF EXISTS search_embedding; DROP TABLE IF EXISTS search_piece_vectors;
        DROP TABLE IF EXISTS search_vectors;";
    use crate::tools::{Hub, HubConfig, Source, Unwatched};
    use serde_json::json;

    /// The one number `query` answers.
    fn number(hub: &Hub, query: &str) -> i64 {
        hub.state()
            .store
            .view(|c| {
                c.query_row(query, [], |row| row.get(0))
                    .map_err(|error| crate::store::StoreError::on(c, error))
            })
            .unwrap()
    }

    /// The code-text lines of `query`'s answer, as `path: snippet`.
    fn code_lines(hub: &Hub, query: &str) -> Vec<String> {
        let answer = hub
            .call_named_here(
                "cos_search",
                json!({"q": query, "area": "code"}),
                Source::Cli,
                &Unwatched,
            )
            .unwrap();
        answer.data["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| format!("{}: {}", hit["path"], hit["snippet"]))
            .collect()
    }

    fn hit_places(hub: &Hub, query: &str) -> Vec<String> {
        let answer = hub
            .call_named_here("cos_search", json!({"q": query}), Source::Cli, &Unwatched)
            .unwrap();
        answer.data["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| format!("{} {}:{}", hit["area"], hit["path"], hit["line"]))
            .collect()
    }

    /// Where `needle_here` is found in a repository holding only `a.py`.
    fn needle_places() -> [String; 2] {
        [
            r#""symbols" "a.py":1"#.to_string(),
            r#""code" "a.py":1"#.to_string(),
        ]
    }

    /// A repository holding `a.py` and its hub's config, indexed and searched
    /// once by a hub that is closed again.
    fn indexed_repository() -> (tempfile::TempDir, HubConfig, Hub) {
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(
            repo.path().join("a.py"),
            "def needle_here():\n    return 1\n",
        )
        .unwrap();
        let config = HubConfig::for_repo(repo.path(), None);
        let hub = Hub::open(config.clone(), crate::hub::default_registry()).unwrap();
        hub.call_named_here("cos_graph_index", json!({}), Source::Cli, &Unwatched)
            .unwrap();
        assert_eq!(hit_places(&hub, "needle_here"), needle_places());
        (repo, config, hub)
    }

    #[test]
    fn a_database_of_the_first_search_schema_is_indexed_again_and_searched() {
        let expected = needle_places();
        let (_repo, config, hub) = indexed_repository();
        {
            let hub = hub;
            // items and texts in the tables of the first version of the
            // schema (empty here), the units and sources as they were
            let tables = [
                "search_items",
                "search_words",
                "search_files",
                "search_trigrams",
            ];
            let created: Vec<&str> = crate::search::index::schema::MIGRATIONS[0]
                .sql
                .split_inclusive(';')
                .filter(|statement| tables.iter().any(|table| statement.contains(table)))
                .collect();
            let first = format!(
                "{UNDO_VECTORS} DROP TABLE search_items; DROP TABLE search_files; DROP TABLE search_trigrams; {}
                 UPDATE schema_versions SET version = 1 WHERE area = 'search';",
                created.concat()
            );
            hub.state()
                .store
                .write(|c| {
                    c.execute_batch(&first)
                        .map_err(|error| crate::store::StoreError::on(c, error))
                })
                .unwrap();
        }
        let hub = Hub::open(config, crate::hub::default_registry()).unwrap();
        assert_eq!(
            number(
                &hub,
                "SELECT count(*) FROM sqlite_master WHERE name = 'search_words'"
            ),
            0
        );
        assert_eq!(hit_places(&hub, "needle_here"), expected);
    }

    #[test]
    fn sections_indexed_before_the_third_schema_are_built_anew() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("docs")).unwrap();
        std::fs::write(
            repo.path().join("docs/retries.md"),
            "---\ntitle: Retry budget\n---\n# Retry budget\nHow many.\n",
        )
        .unwrap();
        let config = HubConfig::for_repo(repo.path(), None);
        let unnamed = "SELECT count(*) FROM search_items WHERE corpus = 'docs' AND name = ''";
        {
            let hub = Hub::open(config.clone(), crate::hub::default_registry()).unwrap();
            hit_places(&hub, "retry");
            assert_eq!(number(&hub, unnamed), 1);
            // the front matter named by the title, as the second schema's
            // index built it
            hub.state()
                .store
                .write(|c| {
                    c.execute_batch(&format!(
                        "{UNDO_VECTORS} UPDATE search_items SET name = 'Retry budget', name_parts = 'retry budget'
                             WHERE corpus = 'docs' AND name = '';
                         ALTER TABLE search_items DROP COLUMN test;
                         ALTER TABLE search_files DROP COLUMN test;
                         UPDATE schema_versions SET version = 2 WHERE area = 'search';",
                    ))
                    .map_err(|error| crate::store::StoreError::on(c, error))
                })
                .unwrap();
            assert_eq!(number(&hub, unnamed), 0);
        }
        let hub = Hub::open(config, crate::hub::default_registry()).unwrap();
        hit_places(&hub, "retry");
        assert_eq!(number(&hub, unnamed), 1);
    }

    #[test]
    fn units_named_before_the_fourth_schema_are_found_once_after_it() {
        let expected = needle_places();
        let (_repo, config, hub) = indexed_repository();
        {
            let hub = hub;
            // the index as the third schema kept it: units named by kind,
            // no test columns
            hub.state()
                .store
                .write(|c| {
                    c.execute_batch(&format!(
                        "{UNDO_VECTORS} UPDATE search_units SET unit = 'file:' || substr(unit, 7) WHERE unit LIKE 'graph:%';
                         UPDATE search_items SET unit = 'file:' || substr(unit, 7) WHERE unit LIKE 'graph:%';
                         ALTER TABLE search_items DROP COLUMN test;
                         ALTER TABLE search_files DROP COLUMN test;
                         UPDATE schema_versions SET version = 3 WHERE area = 'search';",
                    ))
                    .map_err(|error| crate::store::StoreError::on(c, error))
                })
                .unwrap();
        }
        let hub = Hub::open(config, crate::hub::default_registry()).unwrap();
        assert_eq!(hit_places(&hub, "needle_here"), expected, "each hit once");
        assert_eq!(
            number(
                &hub,
                "SELECT count(*) FROM search_items WHERE unit LIKE 'file:%'"
            ),
            0
        );
    }

    /// The context a tool called from the shell gets, for calling the
    /// catch-up's own functions.
    fn cli_context(hub: &Hub) -> ToolContext<'_> {
        ToolContext::new(
            hub.state(),
            Source::Cli,
            hub.registry(),
            &Unwatched,
            crate::envelope::Budget::None,
        )
    }

    #[test]
    fn a_catch_up_past_its_deadline_stops_after_a_batch_and_the_next_goes_on() {
        let repo = tempfile::tempdir().unwrap();
        let files = BATCH * 2 + 10;
        for n in 0..files {
            std::fs::write(
                repo.path().join(format!("m{n:04}.py")),
                format!("needle_{n} = {n}\n"),
            )
            .unwrap();
        }
        let hub = crate::hub::on_repo_for_tests(repo.path());
        hub.call_named_here("cos_graph_index", json!({}), Source::Cli, &Unwatched)
            .unwrap();
        let context = cli_context(&hub);
        let graph = [crate::graph::AREA.search.unwrap()];
        let files_kept = || hub.state().store.view(records::sizes).unwrap().1;
        // a deadline already past: one batch is written, and no more
        let (_, reached) =
            catch_up_holding(&context, &graph, Some(std::time::Instant::now())).unwrap();
        assert_eq!(reached, Reached::Partway);
        assert_eq!(files_kept(), BATCH as i64);
        // the next caller goes on where it stopped, and finds the index level after
        let (caught_up, reached) = catch_up_holding(&context, &graph, None).unwrap();
        assert_eq!(reached, Reached::Level);
        assert_eq!(caught_up, vec![("graph", files - BATCH)]);
        assert_eq!(files_kept(), files as i64);
        assert!(level_with_every_source(&context, &graph).unwrap());
    }

    #[test]
    fn a_query_reads_what_the_index_holds_while_another_caller_is_long_building_it() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join("a.py"), "needle_first = 1\n").unwrap();
        let hub = crate::hub::on_repo_for_tests(repo.path());
        let index = || {
            hub.call_named_here("cos_graph_index", json!({}), Source::Cli, &Unwatched)
                .unwrap()
        };
        index();
        assert_eq!(code_lines(&hub, "needle").len(), 1);
        std::fs::write(repo.path().join("b.py"), "needle_second = 2\n").unwrap();
        index();
        // another caller's catch-up (a first build over a large repository)
        let working = working_on(hub.state().store.path());
        let held = working.lock().unwrap();
        let started = std::time::Instant::now();
        let answer = hub
            .call_named_here(
                "cos_search",
                json!({"q": "needle"}),
                Source::Cli,
                &Unwatched,
            )
            .unwrap();
        assert!(
            started.elapsed() >= QUERY_WAITS,
            "it did not wait for the catch-up at all"
        );
        let paths: Vec<&str> = answer.data["hits"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|hit| hit["path"].as_str())
            .collect();
        assert!(
            !paths.is_empty() && paths.iter().all(|p| *p == "a.py"),
            "{}",
            answer.data
        );
        assert_eq!(answer.meta["pending"], true);
        assert!(
            answer.data["notes"]
                .to_string()
                .contains("an index run is under way"),
            "{}",
            answer.data
        );
        drop(held);
        assert_eq!(code_lines(&hub, "needle").len(), 2);
    }

    #[test]
    fn a_query_between_the_batches_of_a_catch_up_reads_the_files_as_they_are_then() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join("a.py"), "needle_before = 1\n").unwrap();
        let hub = crate::hub::on_repo_for_tests(repo.path());
        hub.call_named_here("cos_graph_index", json!({}), Source::Cli, &Unwatched)
            .unwrap();
        // read once: the file's text and trigrams are kept in memory
        assert_eq!(code_lines(&hub, "needle_before").len(), 1);

        // a batch of a catch-up that is not its last rewrites the file
        // without recording the graph's revision, as a catch-up of many
        // batches does between them
        std::fs::write(repo.path().join("a.py"), "needle_after = 2\n").unwrap();
        let context = cli_context(&hub);
        let revision = crate::graph::revision(&hub.state().store).unwrap();
        let graph = crate::graph::AREA.search.unwrap();
        let version = UnitVersion {
            key: "a.py".into(),
            fingerprint: "rewritten".into(),
            detail: "python".into(),
        };
        let units = load_units(&context, graph, &[version]).unwrap();
        apply(&context, graph.source, revision, &[], units, false).unwrap();

        assert_eq!(
            code_lines(&hub, "needle_after"),
            vec![r#""a.py": "needle_after = 2""#.to_string()]
        );
        assert!(code_lines(&hub, "needle_before").is_empty());
    }

    #[test]
    fn a_catch_up_of_many_batches_leaves_the_trigram_index_in_one_segment() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join("pkg")).unwrap();
        for n in 0..(2 * BATCH + 10) {
            std::fs::write(
                repo.path().join(format!("pkg/module_{n}.py")),
                format!("def handler_{n}(request):\n    return request.value_{n}\n"),
            )
            .unwrap();
        }
        let hub = crate::hub::on_repo_for_tests(repo.path());
        let call = |tool: &str, input: serde_json::Value| {
            hub.call_named_here(tool, input, Source::Cli, &Unwatched)
                .unwrap()
        };
        call("cos_graph_index", json!({}));
        let answer = call("cos_search", json!({"q": "handler_417"}));
        let answer = answer.data.to_string();
        assert!(answer.contains("pkg/module_417.py"), "{answer}");
        let segments = number(
            &hub,
            "SELECT count(DISTINCT segid) FROM search_trigrams_idx",
        );
        assert_eq!(segments, 1);
        let automerge = number(
            &hub,
            "SELECT v FROM search_trigrams_config WHERE k = 'automerge'",
        );
        assert_eq!(automerge, 4, "FTS5 merges as writes come in again");
    }
}
