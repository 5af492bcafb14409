//! Indexing: walk the repository the way git sees it, parse what changed on all
//! cores, write each file's nodes, edges and references in one transaction,
//! then resolve references across files.

use rayon::prelude::*;
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use utoipa::ToSchema;

use super::crates::Libraries;
use super::extract::{self, Extraction, Language};
use super::left_out::{self, MAX_FILE_BYTES};
use super::resolve::{self, Reach, Reference};
use crate::store::{Store, StoreError, Writer};

/// The version of the rules that turn files into the graph. An update re-extracts
/// only changed files and re-resolves only what they touch, so a graph built by a
/// cos whose extraction or resolution rules differ keeps their old results until
/// rebuilt: bump this with every such change, and the first run of the new build
/// indexes from scratch.
pub const GRAPH_RULES: &str = "2026-12-04.2";

/// What an index run did.
#[derive(Debug, Default, Clone, Serialize, Deserialize, ToSchema)]
pub struct IndexSummary {
    /// Source files the graph covers after the run.
    pub files: u64,
    /// Files parsed because they were new or changed.
    pub parsed: u64,
    pub unchanged: u64,
    pub removed: u64,
    /// Left out as binary, minified JavaScript, larger than 1 MiB or unreadable.
    pub skipped: u64,
    /// Which files were left out and why, in path order: the first 20.
    pub left_out: Vec<LeftOut>,
    /// Files with syntax errors tree-sitter recovered from.
    pub files_with_parse_errors: u64,
    pub nodes_by_kind: BTreeMap<String, u64>,
    pub edges_by_kind: BTreeMap<String, u64>,
    pub milliseconds: u64,
}

/// A file the graph leaves out although git tracks it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
pub struct LeftOut {
    pub path: String,
    /// binary, minified, larger than 1 MiB, or unreadable.
    pub why: String,
}

/// Files named in a summary's `left_out` at most; `skipped` counts them all.
const LEFT_OUT_NAMED: usize = 20;

struct Parsed {
    path: String,
    language: Language,
    hash: String,
    bytes: u64,
    modified_ns: Option<i64>,
    extraction: Extraction,
}

/// What the graph holds about a file since it was last indexed.
struct Known {
    hash: String,
    bytes: u64,
    modified_ns: Option<i64>,
}

enum Seen {
    Unchanged(String),
    /// Same content with a new modification time (to record, not to re-extract).
    Touched(String, Option<i64>),
    Changed(Box<Parsed>),
    Skipped(LeftOut),
}

/// The turn of index runs on the database at `database` in this process.
fn turn_for(database: &Path) -> Arc<Mutex<()>> {
    static TURNS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    TURNS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .entry(database.to_path_buf())
        .or_default()
        .clone()
}

/// Holds the turn of index runs on the database at `database` among
/// processes (a `cos serve` and an agent's `cos mcp` on one repository both
/// follow saves) until dropped: an advisory lock on a file beside it. None
/// when that file cannot be had (a read-only state folder): the run then
/// goes on, as it would have alone.
fn lock_across_processes(database: &Path) -> Option<std::fs::File> {
    let path = database.with_extension("graph-index.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .inspect_err(|error| tracing::warn!(%error, path = %path.display(), "index runs of other processes cannot be waited for"))
        .ok()?;
    file.lock()
        .inspect_err(|error| tracing::warn!(%error, path = %path.display(), "index runs of other processes cannot be waited for"))
        .ok()?;
    Some(file)
}

/// Indexes `root` into `store`; `on_file` is called once per candidate file (for progress).
///
/// Runs on one database take turns, in a process (the watcher's and a
/// caller's, say) and across processes: what a run finds changed is read
/// once it has its turn, so the second finds the first one's work done
/// instead of writing it again (two first indexes at once failed on the
/// files the other had written).
pub fn index(
    store: &Store,
    root: &Path,
    on_candidates: &dyn Fn(u64),
    on_file: &(dyn Fn() + Sync),
) -> Result<IndexSummary, StoreError> {
    let turn = turn_for(store.path());
    let _turn = turn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let _across_processes = lock_across_processes(store.path());
    let started = Instant::now();
    let (candidates, manifests) = walk(root);
    on_candidates(candidates.len() as u64);
    let libraries = Libraries::read(root, &manifests);
    let rules_now = format!("{GRAPH_RULES}; libraries {}", libraries.fingerprint());
    let (known, rules): (HashMap<String, Known>, Option<String>) = store.read(|c| {
        let rules = meta(c, "rules")?;
        let mut statement = c.prepare("SELECT path, hash, bytes, modified_ns FROM graph_files")?;
        let rows = statement.query_map([], |row| {
            Ok((
                row.get(0)?,
                Known {
                    hash: row.get(1)?,
                    bytes: row.get::<_, i64>(2)? as u64,
                    modified_ns: row.get(3)?,
                },
            ))
        })?;
        Ok((rows.collect::<rusqlite::Result<_>>()?, rules))
    })?;
    let same_rules = rules.as_deref() == Some(rules_now.as_str());
    if !known.is_empty() && !same_rules {
        tracing::info!(
            built_by = rules.as_deref().unwrap_or("an earlier cos"),
            now = rules_now,
            "the graph was built under other rules: indexing from scratch"
        );
    }
    let mut summary = if known.is_empty() || !same_rules {
        let commits = match rules {
            Some(_) => Commits::Once,
            None => Commits::InParts,
        };
        cold_index(
            store,
            root,
            &candidates,
            &libraries,
            &rules_now,
            commits,
            on_file,
        )?
    } else {
        update_index(store, root, &candidates, &libraries, &known, on_file)?
    };
    let mut stages = Stages::start();
    let left_out_kept = store.read(|c| {
        summary.files = c.query_row("SELECT count(*) FROM graph_files", [], |r| {
            r.get::<_, i64>(0)
        })? as u64;
        summary.files_with_parse_errors = c.query_row(
            "SELECT count(*) FROM graph_files WHERE parse_errors > 0",
            [],
            |r| r.get::<_, i64>(0),
        )? as u64;
        summary.nodes_by_kind = kinds_counted(c, "SELECT kind FROM graph_nodes")?;
        summary.edges_by_kind = kinds_counted(c, "SELECT kind FROM graph_edges")?;
        left_out_now(c)
    })?;
    stages.lap("summary counts");
    summary.left_out.sort();
    summary.left_out.truncate(LEFT_OUT_NAMED);
    let left_out_now = LeftOutNow {
        count: summary.skipped,
        first: summary.left_out.clone(),
    };
    // searches that find nothing say what was left out; a run that changed
    // nothing writes nothing
    if left_out_now != left_out_kept {
        keep_left_out(store, &left_out_now)?;
    }
    summary.milliseconds = started.elapsed().as_millis() as u64;
    Ok(summary)
}

/// What the last run left out, as `graph_meta`'s `left_out` keeps it.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOutNow {
    /// Files left out in all.
    pub count: u64,
    /// The first of them in path order.
    pub first: Vec<LeftOut>,
}

/// Keeps what the run left out in `graph_meta`.
fn keep_left_out(store: &Store, left_out: &LeftOutNow) -> Result<(), StoreError> {
    let value = serde_json::to_string(left_out).unwrap_or_default();
    store.write(|tx| set_meta(tx, "left_out", &value).map_err(|error| StoreError::on(tx, error)))
}

/// What the last index run left out (nothing before the first run).
pub fn left_out_now(c: &Connection) -> rusqlite::Result<LeftOutNow> {
    meta_json(c, "left_out")
}

/// The value `graph_meta` keeps under `key`, if any.
fn meta(c: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    c.query_row(
        "SELECT value FROM graph_meta WHERE key = ?1",
        [key],
        |row| row.get(0),
    )
    .optional()
}

/// The JSON `graph_meta` keeps under `key`; the default when there is none
/// (or it does not read as a `T`).
fn meta_json<T: serde::de::DeserializeOwned + Default>(
    c: &Connection,
    key: &str,
) -> rusqlite::Result<T> {
    Ok(meta(c, key)?
        .and_then(|value| serde_json::from_str(&value).ok())
        .unwrap_or_default())
}

/// Keeps `value` under `key` in `graph_meta`.
fn set_meta(tx: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO graph_meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )
    .map(|_| ())
}

/// What the files of a run came to: counts, and the paths still in the repository.
#[derive(Default)]
struct Tally {
    summary: IndexSummary,
    present: BTreeSet<String>,
    touched: Vec<(String, Option<i64>)>,
}

impl Tally {
    /// Counts one file; a parsed one is handed back to be written.
    fn add(&mut self, outcome: Seen) -> Option<Parsed> {
        match outcome {
            Seen::Unchanged(path) => {
                self.summary.unchanged += 1;
                self.present.insert(path);
                None
            }
            Seen::Touched(path, modified_ns) => {
                self.summary.unchanged += 1;
                self.present.insert(path.clone());
                self.touched.push((path, modified_ns));
                None
            }
            Seen::Changed(parsed) => {
                self.summary.parsed += 1;
                self.present.insert(parsed.path.clone());
                Some(*parsed)
            }
            Seen::Skipped(left_out) => {
                self.summary.skipped += 1;
                self.summary.left_out.push(left_out);
                None
            }
        }
    }
}

/// How a cold index holds the database's one write lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Commits {
    /// One transaction: readers keep the complete graph of the old rules
    /// until the new one is whole.
    Once,
    /// A transaction for each batch of files and each closing stage, so
    /// that other writers (a patched document, a moved task) get their turn
    /// between them instead of waiting out the whole run (seconds on a large
    /// repository, past their wait for the lock). Only for a graph never
    /// completed (no rules recorded): there is no whole graph to hide
    /// meanwhile, and the rules, recorded last, tell a run after a crash to
    /// start over.
    InParts,
}

/// Files written in one transaction at most, when committing in parts.
const FILES_PER_PART: usize = 64;

/// A first index, or one under new rules: files are written while the
/// others are still being parsed (a bounded channel keeps memory flat), then
/// everything is resolved once.
fn cold_index(
    store: &Store,
    root: &Path,
    candidates: &[(String, Language)],
    libraries: &Libraries,
    rules: &str,
    commits: Commits,
    on_file: &(dyn Fn() + Sync),
) -> Result<IndexSummary, StoreError> {
    let nothing_known = HashMap::new();
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Seen>(64);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            candidates
                .par_iter()
                .for_each_with(sender, |sender, (path, language)| {
                    let outcome = read_and_parse(root, path, *language, libraries, &nothing_known);
                    on_file();
                    // fails only once the writer gave up; its error is what the caller sees
                    let _ = sender.send(outcome);
                });
        });
        // the receiver is moved into the writing side, so a failed write
        // hangs up and the parsers stop waiting
        match commits {
            Commits::Once => cold_index_at_once(store, receiver, rules),
            Commits::InParts => cold_index_in_parts(store, receiver, rules),
        }
    })
}

fn cold_index_at_once(
    store: &Store,
    receiver: std::sync::mpsc::Receiver<Seen>,
    rules: &str,
) -> Result<IndexSummary, StoreError> {
    store.write(move |tx| -> Result<IndexSummary, StoreError> {
        let receiver = receiver;
        let mut tally = Tally::default();
        let mut run = || -> rusqlite::Result<()> {
            let mut stages = Stages::start();
            let deferred = start_over(tx)?;
            let mut references = Vec::new();
            for outcome in receiver.iter() {
                if let Some(parsed) = tally.add(outcome) {
                    write_file(tx, &parsed, Some(&mut references))?;
                }
            }
            stages.lap("parse and write files");
            link_and_resolve(tx, &tally, references, &mut stages)?;
            build_deferred_indexes(tx, &deferred)?;
            stages.lap("build indexes");
            index_new_nodes(tx)?;
            stages.lap("full-text index");
            complete(tx, rules)
        };
        run().map_err(|error| StoreError::on(tx, error))?;
        Ok(tally.summary)
    })
}

fn cold_index_in_parts(
    store: &Store,
    receiver: std::sync::mpsc::Receiver<Seen>,
    rules: &str,
) -> Result<IndexSummary, StoreError> {
    // one connection throughout: the tracking of new nodes lives on it
    let writer = store.writer()?;
    let written = write_in_parts(&writer, receiver, rules);
    // the connection goes back to the pool: no trigger of this run stays on it
    let stopped = writer.write(|tx| stop_tracking_new_nodes(tx).map_err(|e| StoreError::on(tx, e)));
    if let Err(error) = stopped {
        tracing::warn!(%error, "a pooled connection keeps tracking new graph nodes");
    }
    written
}

fn write_in_parts(
    writer: &Writer,
    receiver: std::sync::mpsc::Receiver<Seen>,
    rules: &str,
) -> Result<IndexSummary, StoreError> {
    let mut stages = Stages::start();
    let deferred = in_part(writer, start_over)?;
    let mut tally = Tally::default();
    let mut references = Vec::new();
    // waits for the parsers outside any transaction, then writes what is ready
    while let Ok(first) = receiver.recv() {
        let batch: Vec<Seen> = std::iter::once(first)
            .chain(receiver.try_iter().take(FILES_PER_PART - 1))
            .collect();
        in_part(writer, |tx| {
            for outcome in batch {
                if let Some(parsed) = tally.add(outcome) {
                    write_file(tx, &parsed, Some(&mut references))?;
                }
            }
            Ok(())
        })?;
    }
    stages.lap("parse and write files");
    in_part(writer, |tx| {
        link_and_resolve(tx, &tally, references, &mut stages)
    })?;
    in_part(writer, |tx| build_deferred_indexes(tx, &deferred))?;
    stages.lap("build indexes");
    in_part(writer, |tx| complete(tx, rules))?;
    Ok(tally.summary)
}

/// Runs `part` in a transaction of its own on `writer`, the nodes it
/// inserted taken into the full-text index in the same transaction (a run
/// after a crash deletes them, and the delete trigger expects them there),
/// then lets a writer waiting for the lock in.
fn in_part<T>(
    writer: &Writer,
    part: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> Result<T, StoreError> {
    writer.write_in_turn(|tx| {
        part(tx)
            .and_then(|value| take_new_nodes_into_fts(tx).map(|()| value))
            .map_err(|error| StoreError::on(tx, error))
    })
}

/// Clears the graph and its rules (a run that stops before `complete` leaves
/// none, so the next one starts over), and drops the bulk tables' secondary
/// indexes for `build_deferred_indexes`: their statements, which it answers.
fn start_over(tx: &Connection) -> rusqlite::Result<Vec<Deferred>> {
    // a run that stopped midway dropped them: deleting needs them back
    let dropped_before = deferred_indexes(tx)?;
    build_deferred_indexes(tx, &dropped_before)?;
    // no files means no nodes but folders and externals, or else a graph
    // built under other rules: clear it all while the indexes that make
    // deleting cheap are still there
    tx.execute("DELETE FROM graph_nodes", [])?;
    tx.execute("DELETE FROM graph_files", [])?;
    tx.execute("DELETE FROM graph_meta WHERE key = 'rules'", [])?;
    track_new_nodes(tx)?;
    defer_indexes(tx)
}

/// Folders, files hung under them, and every reference resolved.
fn link_and_resolve(
    tx: &Connection,
    tally: &Tally,
    references: Vec<Reference>,
    stages: &mut Stages,
) -> rusqlite::Result<()> {
    FolderChanges::between(tx, &tally.present)?.apply(tx)?;
    link_files(tx, tally.present.iter().map(String::as_str))?;
    stages.lap("folders");
    // the graph was empty: no resolver edges or external nodes to clear
    resolve::resolve(tx, references, Reach::Everything)?;
    stages.lap("resolve");
    Ok(())
}

/// Records the rules the graph was built under: the graph is whole.
fn complete(tx: &Connection, rules: &str) -> rusqlite::Result<()> {
    set_meta(tx, "rules", rules)?;
    bump_revision(tx)
}

/// A later index: parse what changed, then rewrite it in one transaction and
/// re-resolve only the references the new, edited and removed files can affect.
fn update_index(
    store: &Store,
    root: &Path,
    candidates: &[(String, Language)],
    libraries: &Libraries,
    known: &HashMap<String, Known>,
    on_file: &(dyn Fn() + Sync),
) -> Result<IndexSummary, StoreError> {
    let seen: Vec<Seen> = candidates
        .par_iter()
        .map(|(path, language)| {
            let outcome = read_and_parse(root, path, *language, libraries, known);
            on_file();
            outcome
        })
        .collect();
    let mut tally = Tally::default();
    let changed: Vec<Parsed> = seen
        .into_iter()
        .filter_map(|outcome| tally.add(outcome))
        .collect();
    let removed: Vec<String> = known
        .keys()
        .filter(|path| !tally.present.contains(*path))
        .cloned()
        .collect();
    tally.summary.removed = removed.len() as u64;
    store.write(|tx| -> Result<(), StoreError> {
        let run = || -> rusqlite::Result<()> {
            let mut touch =
                tx.prepare_cached("UPDATE graph_files SET modified_ns = ?2 WHERE path = ?1")?;
            for (path, modified_ns) in &tally.touched {
                touch.execute(params![path, modified_ns])?;
            }
            track_new_nodes(tx)?;
            let touched: Vec<&str> = changed
                .iter()
                .map(|parsed| parsed.path.as_str())
                .chain(removed.iter().map(String::as_str))
                .collect();
            if !touched.is_empty() {
                note_affected(tx, &touched)?;
                let moved: Vec<&str> = changed
                    .iter()
                    .map(|parsed| parsed.path.as_str())
                    .filter(|path| !known.contains_key(*path))
                    .chain(removed.iter().map(String::as_str))
                    .collect();
                let folders = FolderChanges::between(tx, &tally.present)?;
                note_moved_modules(tx, &moved, &folders)?;
                for path in &removed {
                    tx.execute("DELETE FROM graph_nodes WHERE file = ?1", [path])?;
                    tx.execute("DELETE FROM graph_files WHERE path = ?1", [path])?;
                }
                for parsed in &changed {
                    rewrite_file(tx, parsed)?;
                }
                folders.apply(tx)?;
                note_new_names(tx)?;
                link_files(tx, changed.iter().map(|parsed| parsed.path.as_str()))?;
                resolve_affected(tx)?;
            }
            index_new_nodes(tx)?;
            if !changed.is_empty() || !removed.is_empty() {
                bump_revision(tx)?;
            }
            Ok(())
        };
        run().map_err(|error| StoreError::on(tx, error))
    })?;
    Ok(tally.summary)
}

/// The tables a cold index fills in bulk.
const BULK_TABLES: &str = "('graph_nodes', 'graph_edges', 'graph_references')";

/// Drops the secondary indexes of `BULK_TABLES` and returns the statements
/// that build them again: building an index once from sorted rows is several
/// times cheaper than inserting every row into it at random. Only for a graph
/// with no nodes: a delete without its index would scan the table. The
/// statements are kept in `graph_meta` until built again, so that a run
/// that stopped in between (committing in parts) is finished by the next.
fn defer_indexes(tx: &Connection) -> rusqlite::Result<Vec<Deferred>> {
    let indexes: Vec<Deferred> = {
        let mut statement = tx.prepare(&format!(
            "SELECT name, sql FROM sqlite_master
             WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN {BULK_TABLES}"
        ))?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    set_meta(
        tx,
        "deferred_indexes",
        &serde_json::json!(indexes).to_string(),
    )?;
    for (name, _) in &indexes {
        tx.execute_batch(&format!("DROP INDEX \"{name}\""))?;
    }
    Ok(indexes)
}

/// An index dropped for a bulk write: its name and the statement that makes it.
type Deferred = (String, String);

/// The indexes a run dropped and has not built again (none unless a run
/// committing in parts stopped midway).
fn deferred_indexes(tx: &Connection) -> rusqlite::Result<Vec<Deferred>> {
    meta_json(tx, "deferred_indexes")
}

/// Builds the indexes `defer_indexes` dropped, each unless it is there
/// (say a migration made it again after a run stopped midway).
fn build_deferred_indexes(tx: &Connection, indexes: &[Deferred]) -> rusqlite::Result<()> {
    let mut exists =
        tx.prepare_cached("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?1")?;
    for (name, sql) in indexes {
        if exists.query_row([name], |row| row.get::<_, i64>(0))? == 0 {
            tx.execute_batch(sql)?;
        }
    }
    tx.execute("DELETE FROM graph_meta WHERE key = 'deferred_indexes'", [])?;
    Ok(())
}

/// Nodes inserted by this run, for `index_new_nodes`. The permanent delete
/// trigger keeps graph_nodes_fts right when nodes go; a run never deletes a node
/// it inserted (each file is rewritten once, folders that went are deleted
/// before new ones are added, and an external node made by a run has the edge
/// it was made for), so every deleted node was already in the index.
fn track_new_nodes(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS new_nodes(id INTEGER PRIMARY KEY);
         DELETE FROM temp.new_nodes;
         CREATE TEMP TRIGGER IF NOT EXISTS track_new_graph_nodes AFTER INSERT ON main.graph_nodes BEGIN
             INSERT OR IGNORE INTO temp.new_nodes(id) VALUES (new.id);
         END;",
    )
}

/// Marks the graph changed: answers cached under the old revision are not
/// served again, and the time of the change is the graph's `updated_at` (never
/// earlier than the last one, whatever the clock does).
pub fn bump_revision(tx: &Connection) -> rusqlite::Result<()> {
    let now = crate::tools::now();
    tx.execute(
        "UPDATE graph_revision SET revision = revision + 1,
             updated_at = max(coalesce(updated_at, ''), ?1)",
        [now],
    )?;
    Ok(())
}

/// When the graph last changed, `None` before its first index.
pub fn updated_at(connection: &Connection) -> rusqlite::Result<Option<String>> {
    connection.query_row("SELECT updated_at FROM graph_revision", [], |row| {
        row.get(0)
    })
}

/// The graph's revision; read it before the data an answer is cached under.
pub fn revision(connection: &Connection) -> rusqlite::Result<i64> {
    connection
        .prepare_cached("SELECT revision FROM graph_revision")?
        .query_row([], |row| row.get(0))
}

/// Adds the run's new nodes to the full-text index in one statement.
fn index_new_nodes(tx: &Connection) -> rusqlite::Result<()> {
    take_new_nodes_into_fts(tx)?;
    stop_tracking_new_nodes(tx)
}

/// Adds the nodes inserted since the last call to the full-text index.
fn take_new_nodes_into_fts(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute_batch(
        "INSERT INTO graph_nodes_fts(rowid, label, uid)
             SELECT n.id, n.label, n.uid FROM temp.new_nodes f JOIN graph_nodes n ON n.id = f.id;
         DELETE FROM temp.new_nodes;",
    )
}

fn stop_tracking_new_nodes(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute_batch("DROP TRIGGER IF EXISTS temp.track_new_graph_nodes;")
}

/// Logs how long each stage of a run took (`RUST_LOG=cos_hub::graph=debug`).
struct Stages(Instant);

impl Stages {
    fn start() -> Stages {
        Stages(Instant::now())
    }

    fn lap(&mut self, stage: &str) {
        let now = Instant::now();
        tracing::debug!(
            stage,
            ms = (now - self.0).as_secs_f64() * 1000.0,
            "index stage"
        );
        self.0 = now;
    }
}

/// How many rows `sql` yields per kind. Counted here rather than with GROUP BY,
/// which sorts every row in a temporary b-tree: over Django's 132,000 edges the
/// sort took 25 ms of a 100 ms one-file re-index.
fn kinds_counted(connection: &Connection, sql: &str) -> rusqlite::Result<BTreeMap<String, u64>> {
    let mut statement = connection.prepare(sql)?;
    let mut rows = statement.query([])?;
    // a dozen kinds at most: a short list beats hashing every row's text
    let mut tally: Vec<(String, u64)> = Vec::new();
    while let Some(row) = rows.next()? {
        let kind = row.get_ref(0)?.as_str()?;
        match tally.iter_mut().find(|(known, _)| known == kind) {
            Some((_, count)) => *count += 1,
            None => tally.push((kind.to_string(), 1)),
        }
    }
    Ok(tally.into_iter().collect())
}

/// Every source file git would see (ignores .gitignore'd and hidden paths), repository-relative.
/// The files the graph reads, and the Rust manifests (`Cargo.toml`) beside
/// them, as git sees the tree.
fn walk(root: &Path) -> (Vec<(String, Language)>, Vec<String>) {
    let mut files = Vec::new();
    let mut manifests = Vec::new();
    let entries = ignore::WalkBuilder::new(root)
        .hidden(true)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()));
    for entry in entries {
        let Some(relative) = entry
            .path()
            .strip_prefix(root)
            .ok()
            .and_then(Path::to_str)
            .map(|path| path.replace('\\', "/"))
        else {
            continue;
        };
        if let Some(language) = Language::of(&relative) {
            files.push((relative, language));
        } else if relative == "Cargo.toml" || relative.ends_with("/Cargo.toml") {
            manifests.push(relative);
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    (files, manifests)
}

fn leave_out(path: &str, why: &str) -> Seen {
    tracing::debug!(path, why, "left out of the graph");
    Seen::Skipped(LeftOut {
        path: path.to_string(),
        why: why.to_string(),
    })
}

fn read_and_parse(
    root: &Path,
    path: &str,
    language: Language,
    libraries: &Libraries,
    known: &HashMap<String, Known>,
) -> Seen {
    let full = root.join(path);
    let modified_ns = match std::fs::metadata(&full) {
        Ok(meta) if meta.len() <= MAX_FILE_BYTES => {
            let modified_ns = meta
                .modified()
                .ok()
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|since| since.as_nanos() as i64);
            let before = known.get(path);
            if before.is_some_and(|before| {
                before.bytes == meta.len()
                    && before.modified_ns.is_some()
                    && before.modified_ns == modified_ns
            }) {
                // same size and modification time as when it was indexed: not read again
                return Seen::Unchanged(path.to_string());
            }
            modified_ns
        }
        Ok(_) => return leave_out(path, "larger than 1 MiB"),
        Err(_) => return leave_out(path, "unreadable"),
    };
    let Ok(bytes) = std::fs::read(&full) else {
        return leave_out(path, "unreadable");
    };
    if let Some(why) = left_out::reason(path, language, &bytes) {
        return leave_out(path, why);
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    if known.get(path).is_some_and(|before| before.hash == hash) {
        return Seen::Touched(path.to_string(), modified_ns);
    }
    let text = String::from_utf8_lossy(&bytes);
    let extraction = extract::extract_in(path, language, &text, libraries.for_file(path));
    Seen::Changed(Box::new(Parsed {
        path: path.to_string(),
        language,
        hash,
        bytes: bytes.len() as u64,
        modified_ns,
        extraction,
    }))
}

/// Replaces what the graph held about a file with its new extraction.
fn rewrite_file(tx: &Connection, parsed: &Parsed) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM graph_nodes WHERE file = ?1", [&parsed.path])?;
    write_file(tx, parsed, None)
}

/// Writes a file's nodes, edges, references and bindings (it has none yet),
/// and adds its references to `to_resolve` when given.
fn write_file(
    tx: &Connection,
    parsed: &Parsed,
    to_resolve: Option<&mut Vec<Reference>>,
) -> rusqlite::Result<()> {
    let ids = write_nodes(tx, parsed)?;
    write_edges(tx, parsed, &ids)?;
    write_references(tx, parsed, &ids, to_resolve)?;
    write_bindings(tx, parsed, &ids)?;
    write_file_row(tx, parsed)
}

/// Inserts the file's nodes; the row id of each one inserted, by uid (a uid
/// another file already declared keeps its first owner).
fn write_nodes<'p>(tx: &Connection, parsed: &'p Parsed) -> rusqlite::Result<HashMap<&'p str, i64>> {
    let mut ids = HashMap::new();
    let mut insert = tx.prepare_cached(
        "INSERT INTO graph_nodes(uid, kind, label, file, line_start, line_end) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT(uid) DO NOTHING RETURNING id",
    )?;
    for node in &parsed.extraction.nodes {
        let id: Option<i64> = insert
            .query_row(
                params![
                    node.uid,
                    node.kind,
                    node.label,
                    parsed.path,
                    node.line_start,
                    node.line_end
                ],
                |r| r.get(0),
            )
            .ok();
        if let Some(id) = id {
            ids.insert(node.uid.as_str(), id);
        }
    }
    Ok(ids)
}

/// The file's own edges, between nodes it inserted.
fn write_edges(tx: &Connection, parsed: &Parsed, ids: &HashMap<&str, i64>) -> rusqlite::Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence) VALUES (?1, ?2, ?3, ?4, 'resolved')",
    )?;
    let extractor = format!("tree-sitter-{}", parsed.language.name());
    for edge in &parsed.extraction.edges {
        if let (Some(source), Some(target)) =
            (ids.get(edge.source.as_str()), ids.get(edge.target.as_str()))
        {
            insert.execute(params![source, target, edge.kind, extractor])?;
        }
    }
    Ok(())
}

/// The references still to resolve, also handed to `to_resolve` when the
/// caller resolves them in this run.
fn write_references(
    tx: &Connection,
    parsed: &Parsed,
    ids: &HashMap<&str, i64>,
    mut to_resolve: Option<&mut Vec<Reference>>,
) -> rusqlite::Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO graph_references(source, kind, name, module) VALUES (?1, ?2, ?3, ?4)",
    )?;
    let file: Rc<str> = Rc::from(parsed.path.as_str());
    for reference in &parsed.extraction.references {
        let Some(source) = ids.get(reference.source.as_str()) else {
            continue;
        };
        insert.execute(params![
            source,
            reference.kind,
            reference.name,
            reference.module
        ])?;
        if let Some(to_resolve) = to_resolve.as_deref_mut() {
            to_resolve.push(Reference {
                source: *source,
                kind: reference.kind,
                name: reference.name.clone(),
                file: file.clone(),
                module: reference.module.clone(),
            });
        }
    }
    Ok(())
}

/// The local names the file's imports bind, kept on the file's node.
fn write_bindings(
    tx: &Connection,
    parsed: &Parsed,
    ids: &HashMap<&str, i64>,
) -> rusqlite::Result<()> {
    let file_uid = extract::file_uid(&parsed.path, parsed.language);
    let Some(file) = ids.get(file_uid.as_str()) else {
        return Ok(());
    };
    let mut insert = tx.prepare_cached(
        "INSERT INTO graph_bindings(file, local, module, symbol) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for binding in &parsed.extraction.bindings {
        insert.execute(params![file, binding.local, binding.module, binding.symbol])?;
    }
    Ok(())
}

/// The file's row: its hash, size and modification time decide whether the
/// next run reads it again.
fn write_file_row(tx: &Connection, parsed: &Parsed) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO graph_files(path, hash, language, bytes, parse_errors, indexed_at, modified_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT(path) DO UPDATE SET hash = excluded.hash, language = excluded.language, bytes = excluded.bytes,
            parse_errors = excluded.parse_errors, indexed_at = excluded.indexed_at, modified_ns = excluded.modified_ns",
        params![
            parsed.path,
            parsed.hash,
            parsed.language.name(),
            parsed.bytes as i64,
            parsed.extraction.parse_errors,
            crate::tools::now(),
            parsed.modified_ns
        ],
    )?;
    Ok(())
}

/// How the folder nodes must change for the files in the repository: a folder
/// node for every directory holding an indexed file, linked to its parent.
struct FolderChanges {
    added: Vec<String>,
    gone: Vec<String>,
}

impl FolderChanges {
    fn between(tx: &Connection, files: &BTreeSet<String>) -> rusqlite::Result<FolderChanges> {
        let mut wanted = BTreeSet::from([String::new()]);
        for file in files {
            let mut path = file.as_str();
            while let Some((parent, _)) = path.rsplit_once('/') {
                if !wanted.insert(parent.to_string()) {
                    break;
                }
                path = parent;
            }
        }
        let existing: BTreeSet<String> = {
            let mut statement = tx.prepare(
                "SELECT substr(uid, 8) FROM graph_nodes WHERE uid >= 'folder:' AND uid < 'folder;'",
            )?;
            let rows = statement.query_map([], |row| row.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        Ok(FolderChanges {
            added: wanted.difference(&existing).cloned().collect(),
            gone: existing.difference(&wanted).cloned().collect(),
        })
    }

    /// Deletes the folders that hold nothing any more and adds the new ones
    /// (parents first: the set is sorted), each linked to its parent.
    fn apply(&self, tx: &Connection) -> rusqlite::Result<()> {
        let mut delete = tx.prepare_cached("DELETE FROM graph_nodes WHERE uid = ?1")?;
        for folder in &self.gone {
            delete.execute([format!("folder:{folder}")])?;
        }
        let mut insert = tx.prepare_cached(
            "INSERT INTO graph_nodes(uid, kind, label, file) VALUES (?1, 'folder', ?2, NULL)",
        )?;
        let mut link = tx.prepare_cached(
            "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence)
             SELECT p.id, c.id, 'contains', 'walker', 'resolved' FROM graph_nodes p, graph_nodes c
             WHERE p.uid = ?1 AND c.uid = ?2",
        )?;
        for folder in &self.added {
            let label = match folder.rsplit('/').next() {
                Some("") | None => ".",
                Some(name) => name,
            };
            insert.execute(params![format!("folder:{folder}"), label])?;
            if let Some(parent) = parent_folder(folder) {
                link.execute(params![
                    format!("folder:{parent}"),
                    format!("folder:{folder}")
                ])?;
            }
        }
        Ok(())
    }
}

/// `a/b` → `a`, `a` → `` (the root), the root → none.
fn parent_folder(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    Some(path.rsplit_once('/').map_or("", |(parent, _)| parent))
}

/// Hangs files (new, or rewritten with new node ids) under their folders.
fn link_files<'a>(tx: &Connection, paths: impl Iterator<Item = &'a str>) -> rusqlite::Result<()> {
    let mut link = tx.prepare_cached(
        "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence)
         SELECT p.id, c.id, 'contains', 'walker', 'resolved' FROM graph_nodes p, graph_nodes c
         WHERE p.uid = ?1 AND c.uid IN (?2, ?3)",
    )?;
    for path in paths {
        let parent = parent_folder(path).unwrap_or_default();
        link.execute(params![
            format!("folder:{parent}"),
            format!("code:file:{path}"),
            format!("doc:file:{path}")
        ])?;
    }
    Ok(())
}

/// The references an incremental run redoes, each with its source's file:
/// references from the touched files, references to names they declared or
/// declare, and every reference of an affected source (see `note_affected`).
fn affected_references(tx: &Connection) -> rusqlite::Result<Vec<Reference>> {
    resolve::references(
        tx,
        "SELECT r.source, r.kind, r.name, s.file, r.module FROM graph_references r
         JOIN graph_nodes s ON s.id = r.source WHERE r.rowid IN (
             SELECT rowid FROM graph_references WHERE name IN (SELECT label FROM temp.affected_names)
             UNION SELECT rowid FROM graph_references WHERE source IN (
                 SELECT id FROM graph_nodes WHERE file IN (SELECT path FROM temp.changed_files))
             UNION SELECT rowid FROM graph_references WHERE source IN (SELECT id FROM temp.affected_sources))",
    )
}

/// Before touched (new, edited or removed) files are written: remember them,
/// how many definitions each name they declare has (per kind group), and which
/// nodes elsewhere imported, linked or resolved into them.
fn note_affected(tx: &Connection, touched: &[&str]) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS changed_files(path TEXT PRIMARY KEY) WITHOUT ROWID;
         CREATE TEMP TABLE IF NOT EXISTS name_counts(label TEXT PRIMARY KEY, callables INTEGER, types INTEGER) WITHOUT ROWID;
         CREATE TEMP TABLE IF NOT EXISTS affected_names(label TEXT PRIMARY KEY) WITHOUT ROWID;
         CREATE TEMP TABLE IF NOT EXISTS affected_sources(id INTEGER PRIMARY KEY);
         CREATE TEMP TABLE IF NOT EXISTS rebound_names(label TEXT PRIMARY KEY) WITHOUT ROWID;
         CREATE TEMP VIEW IF NOT EXISTS changed_bindings AS
             SELECT b.local, b.module, b.symbol FROM graph_bindings b JOIN graph_nodes f ON f.id = b.file
             WHERE f.file IN (SELECT path FROM temp.changed_files) AND f.kind = 'file';
         DELETE FROM temp.changed_files; DELETE FROM temp.name_counts;
         DELETE FROM temp.affected_names; DELETE FROM temp.affected_sources; DELETE FROM temp.rebound_names;",
    )?;
    let mut insert =
        tx.prepare_cached("INSERT OR IGNORE INTO temp.changed_files(path) VALUES (?1)")?;
    for path in touched {
        insert.execute([path])?;
    }
    tx.execute_batch(
        "INSERT INTO temp.name_counts(label, callables, types)
             SELECT label, sum(kind IN ('function', 'method')), sum(kind IN ('class', 'interface')) FROM graph_nodes
             WHERE kind IN ('function', 'method', 'class', 'interface') AND label IN (
                 SELECT label FROM graph_nodes WHERE file IN (SELECT path FROM temp.changed_files)
                 AND kind IN ('function', 'method', 'class', 'interface'))
             GROUP BY label;
         INSERT OR IGNORE INTO temp.affected_sources(id)
             SELECT e.source FROM graph_edges e JOIN graph_nodes t ON t.id = e.target
             WHERE t.file IN (SELECT path FROM temp.changed_files) AND e.extractor = 'resolver'
               AND (e.kind IN ('imports', 'links_to', 'cites_heading') OR e.confidence = 'resolved');
         CREATE TEMP TABLE IF NOT EXISTS old_bindings(local TEXT, module TEXT, symbol TEXT);
         CREATE TEMP TABLE IF NOT EXISTS old_labels(label TEXT PRIMARY KEY) WITHOUT ROWID;
         DELETE FROM temp.old_bindings; DELETE FROM temp.old_labels;
         INSERT INTO temp.old_bindings SELECT local, module, symbol FROM changed_bindings;
         INSERT OR IGNORE INTO temp.old_labels SELECT label FROM graph_nodes
             WHERE file IN (SELECT path FROM temp.changed_files) AND kind IN ('function', 'method', 'class', 'interface');",
    )
}

/// Names a bound reference elsewhere may now resolve differently: names the
/// edited files newly declare, and locals whose import binding changed (a
/// re-export through them may lead elsewhere). References that resolved into
/// the edited files are already redone (their sources are affected).
fn note_rebound_names(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute_batch(
        "INSERT OR IGNORE INTO temp.rebound_names(label)
             SELECT local FROM (SELECT local, module, symbol FROM changed_bindings
                                EXCEPT SELECT local, module, symbol FROM temp.old_bindings)
             UNION SELECT local FROM (SELECT local, module, symbol FROM temp.old_bindings
                                EXCEPT SELECT local, module, symbol FROM changed_bindings)
             UNION SELECT label FROM graph_nodes WHERE file IN (SELECT path FROM temp.changed_files)
                 AND kind IN ('function', 'method', 'class', 'interface')
                 AND label NOT IN (SELECT label FROM temp.old_labels);
         INSERT OR IGNORE INTO temp.affected_sources(id)
             SELECT source FROM graph_references
             WHERE name IN (SELECT label FROM temp.rebound_names) AND module IS NOT NULL;",
    )
}

/// After edited files are rewritten: the names whose resolution can change. A
/// name-only edge exists only for a name with one definition, so a name matters
/// when it had or has at most one definition in a kind group (references from
/// the edited files themselves are always redone).
fn note_new_names(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute_batch(
        "INSERT OR IGNORE INTO temp.name_counts(label, callables, types)
             SELECT label, sum(kind IN ('function', 'method') AND coalesce(file, '') NOT IN (SELECT path FROM temp.changed_files)),
                    sum(kind IN ('class', 'interface') AND coalesce(file, '') NOT IN (SELECT path FROM temp.changed_files))
             FROM graph_nodes WHERE kind IN ('function', 'method', 'class', 'interface') AND label IN (
                 SELECT label FROM graph_nodes WHERE file IN (SELECT path FROM temp.changed_files)
                 AND kind IN ('function', 'method', 'class', 'interface'))
             GROUP BY label;
         INSERT OR IGNORE INTO temp.affected_names(label)
             SELECT c.label FROM temp.name_counts c,
                 (SELECT label, sum(kind IN ('function', 'method')) AS callables, sum(kind IN ('class', 'interface')) AS types
                  FROM graph_nodes WHERE label IN (SELECT label FROM temp.name_counts)
                  AND kind IN ('function', 'method', 'class', 'interface') GROUP BY label) now
             WHERE now.label = c.label
               AND ((c.callables + now.callables > 0 AND min(c.callables, now.callables) <= 1)
                 OR (c.types + now.types > 0 AND min(c.types, now.types) <= 1));
         INSERT OR IGNORE INTO temp.affected_names(label)
             SELECT label FROM temp.name_counts WHERE label NOT IN (
                 SELECT label FROM graph_nodes WHERE kind IN ('function', 'method', 'class', 'interface'))
             AND (callables <= 1 OR types <= 1);",
    )?;
    note_rebound_names(tx)
}

/// Files that appear or disappear change where module paths lead: an import
/// of `a.b.c` that fell back to `a/b.py` now finds a new `a/b/c.py`, a Go
/// import finds a new package folder, a link finds a new page. Marks as
/// affected every source with an import, link or bound reference whose path
/// names such a file's stem, its folder or a folder made or removed, and the
/// sources of edges into removed folders.
fn note_moved_modules(
    tx: &Connection,
    moved: &[&str],
    folders: &FolderChanges,
) -> rusqlite::Result<()> {
    let mut keys: BTreeSet<&str> = BTreeSet::new();
    for path in moved {
        let (folder, name) = path.rsplit_once('/').unwrap_or(("", path));
        keys.insert(name.split('.').next().unwrap_or(name));
        keys.insert(folder.rsplit('/').next().unwrap_or(folder));
    }
    for folder in folders.added.iter().chain(&folders.gone) {
        keys.insert(folder.rsplit('/').next().unwrap_or(folder));
    }
    keys.remove("");
    if !keys.is_empty() {
        mark_sources_naming(tx, &keys)?;
    }
    let mut into_folder = tx.prepare_cached(
        "INSERT OR IGNORE INTO temp.affected_sources(id)
         SELECT e.source FROM graph_edges e JOIN graph_nodes t ON t.id = e.target
         WHERE t.uid = ?1 AND e.extractor = 'resolver'",
    )?;
    for folder in &folders.gone {
        into_folder.execute([format!("folder:{folder}")])?;
    }
    Ok(())
}

/// Marks as affected the sources of imports, links and bound references whose
/// path has one of `keys` as a whole segment, in one pass over them.
fn mark_sources_naming(tx: &Connection, keys: &BTreeSet<&str>) -> rusqlite::Result<()> {
    let mut candidates = tx.prepare_cached(
        "SELECT source, name, coalesce(module, '') FROM graph_references
         WHERE kind IN ('imports', 'links_to') OR module IS NOT NULL",
    )?;
    let mut affected =
        tx.prepare_cached("INSERT OR IGNORE INTO temp.affected_sources(id) VALUES (?1)")?;
    let names_a_key = |path: &str| {
        path.split(['.', '/', ':', '#', '@'])
            .any(|segment| keys.contains(segment))
    };
    let mut rows = candidates.query([])?;
    while let Some(row) = rows.next()? {
        if names_a_key(row.get_ref(1)?.as_str()?) || names_a_key(row.get_ref(2)?.as_str()?) {
            affected.execute([row.get::<_, i64>(0)?])?;
        }
    }
    Ok(())
}

/// Re-resolves what an incremental run affected (see `affected_references`),
/// after deleting the resolver edges those references made before.
fn resolve_affected(tx: &Connection) -> rusqlite::Result<()> {
    let mut stages = Stages::start();
    let references = affected_references(tx)?;
    stages.lap("collect references");
    // edges into symbols whose name is affected are recomputed from every source
    tx.execute(
        "DELETE FROM graph_edges WHERE extractor = 'resolver' AND kind IN ('calls', 'inherits_from', 'implements')
         AND target IN (SELECT id FROM graph_nodes WHERE label IN (SELECT label FROM temp.affected_names))",
        [],
    )?;
    // every reference of an affected source is redone below
    tx.execute(
        "DELETE FROM graph_edges WHERE extractor = 'resolver' AND source IN (SELECT id FROM temp.affected_sources)",
        [],
    )?;
    stages.lap("delete old resolver edges");
    resolve::resolve(tx, references, Reach::Named)?;
    stages.lap("resolve");
    tx.execute(
        "DELETE FROM graph_nodes WHERE uid >= 'code:external:' AND uid < 'code:external;'
         AND NOT EXISTS (SELECT 1 FROM graph_edges WHERE target = graph_nodes.id)",
        [],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_counted_like_group_by() {
        let connection = Connection::open_in_memory().unwrap();
        connection
            .execute_batch(
                "CREATE TABLE things(kind TEXT NOT NULL);
                 INSERT INTO things VALUES ('calls'), ('imports'), ('calls'), ('contains'), ('calls'), ('imports');",
            )
            .unwrap();
        let grouped: BTreeMap<String, u64> = connection
            .prepare("SELECT kind, count(*) FROM things GROUP BY kind")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get::<_, i64>(1)? as u64)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let counted = kinds_counted(&connection, "SELECT kind FROM things").unwrap();
        assert_eq!(counted, grouped);
        assert_eq!(counted["calls"], 3);
    }

    fn python_repo(files: usize) -> tempfile::TempDir {
        let repo = tempfile::tempdir().unwrap();
        for n in 0..files {
            std::fs::write(
                repo.path().join(format!("module_{n}.py")),
                format!("def handler_{n}():\n    return helper_{}()\n\ndef helper_{n}():\n    return {n}\n", (n + 1) % files),
            )
            .unwrap();
        }
        repo
    }

    fn count(store: &Store, sql: &str) -> i64 {
        store
            .read(|c| c.query_row(sql, [], |row| row.get(0)))
            .unwrap()
    }

    const DEFERRABLE: &str = "SELECT count(*) FROM sqlite_master
         WHERE type = 'index' AND sql IS NOT NULL
         AND tbl_name IN ('graph_nodes', 'graph_edges', 'graph_references')";

    /// Every node in the full-text index and nothing else (FTS5's own check
    /// against its content table).
    fn full_text_index_agrees(store: &Store) {
        store
            .read(|c| {
                c.execute(
                    "INSERT INTO graph_nodes_fts(graph_nodes_fts, rank) VALUES ('integrity-check', 1)",
                    [],
                )
            })
            .unwrap();
    }

    #[test]
    fn a_first_index_lets_other_writers_in_between_its_parts() {
        const FILES: usize = 300;
        let repo = python_repo(FILES);
        let hub = crate::hub::on_repo_for_tests(repo.path());
        let store = &hub.state().store;
        let parsed = std::sync::atomic::AtomicUsize::new(0);
        let seen_by_the_other_writer = Mutex::new(None);
        // midway, a writer with its own connection (a patched document,
        // say) writes while this parser waits for it: it sees the files
        // committed so far, or, were the run one transaction, waits it out
        let on_file = || {
            // late enough that a part was committed, however many parsers
            // (up to 64) are between parsing a file and handing it over
            if parsed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) != FILES * 2 / 3 {
                return;
            }
            let other = Connection::open(store.path()).unwrap();
            other
                .busy_timeout(std::time::Duration::from_secs(10))
                .unwrap();
            let files_then = other
                .execute_batch("BEGIN IMMEDIATE")
                .and_then(|()| {
                    other.query_row("SELECT count(*) FROM graph_files", [], |r| {
                        r.get::<_, i64>(0)
                    })
                })
                .and_then(|files| {
                    // every node committed so far is in the full-text
                    // index, so a run after a crash here could delete them
                    other
                        .execute_batch(
                            "INSERT INTO graph_nodes_fts(graph_nodes_fts, rank) VALUES ('integrity-check', 1);
                             COMMIT",
                        )
                        .map(|()| files)
                });
            *seen_by_the_other_writer.lock().unwrap() = Some(files_then);
        };
        let summary = index(store, repo.path(), &|_| {}, &on_file).unwrap();
        assert_eq!(summary.files, FILES as u64);
        let files_then = seen_by_the_other_writer.lock().unwrap().take();
        let files_then = files_then
            .expect("the other writer ran")
            .expect("the other writer got its turn");
        assert!(
            files_then > 0 && files_then < FILES as i64,
            "the other writer saw {files_then} of {FILES} files: not between two parts"
        );
        // the graph is whole all the same
        assert_eq!(
            count(store, "SELECT count(*) FROM graph_meta WHERE key = 'rules'"),
            1
        );
        assert!(count(store, DEFERRABLE) > 0);
        assert_eq!(
            count(
                store,
                "SELECT count(*) FROM graph_meta WHERE key = 'deferred_indexes'"
            ),
            0
        );
        full_text_index_agrees(store);
    }

    #[test]
    fn a_first_index_that_stopped_midway_is_done_over_by_the_next() {
        let repo = python_repo(40);
        let hub = crate::hub::on_repo_for_tests(repo.path());
        let store = &hub.state().store;
        let indexes = count(store, DEFERRABLE);
        assert!(indexes > 0);
        // what a run committing in parts leaves when it stops after a few:
        // the graph cleared, its indexes dropped, some files written
        let (candidates, manifests) = walk(repo.path());
        let libraries = Libraries::read(repo.path(), &manifests);
        store
            .write(|tx| -> Result<(), StoreError> {
                let run = || -> rusqlite::Result<()> {
                    start_over(tx)?;
                    for (path, language) in candidates.iter().take(10) {
                        if let Seen::Changed(parsed) = read_and_parse(
                            repo.path(),
                            path,
                            *language,
                            &libraries,
                            &HashMap::new(),
                        ) {
                            write_file(tx, &parsed, None)?;
                        }
                    }
                    take_new_nodes_into_fts(tx)?;
                    stop_tracking_new_nodes(tx)
                };
                run().map_err(|error| StoreError::on(tx, error))
            })
            .unwrap();
        assert_eq!(count(store, DEFERRABLE), 0);
        assert_eq!(count(store, "SELECT count(*) FROM graph_files"), 10);
        assert_eq!(
            count(store, "SELECT count(*) FROM graph_meta WHERE key = 'rules'"),
            0
        );

        let summary = index(store, repo.path(), &|_| {}, &|| {}).unwrap();
        assert_eq!((summary.files, summary.parsed), (40, 40), "not done over");
        assert_eq!(
            count(store, DEFERRABLE),
            indexes,
            "the dropped indexes are not back"
        );
        assert_eq!(
            count(
                store,
                "SELECT count(*) FROM graph_meta WHERE key = 'deferred_indexes'"
            ),
            0
        );
        full_text_index_agrees(store);
        // the same graph as a first index that ran through
        let elsewhere = python_repo(40);
        let fresh_hub = crate::hub::on_repo_for_tests(elsewhere.path());
        let fresh = &fresh_hub.state().store;
        index(fresh, repo.path(), &|_| {}, &|| {}).unwrap();
        let uids = |store: &Store| -> Vec<String> {
            store
                .read(|c| {
                    let mut statement = c.prepare("SELECT uid FROM graph_nodes ORDER BY uid")?;
                    let rows = statement.query_map([], |row| row.get(0))?;
                    rows.collect()
                })
                .unwrap()
        };
        assert_eq!(uids(store), uids(fresh));
        let edges = "SELECT count(*) FROM graph_edges";
        assert_eq!(count(store, edges), count(fresh, edges));
        // a run under other rules replaces the graph in one transaction
        store
            .write(|tx| {
                tx.execute(
                    "UPDATE graph_meta SET value = 'older rules' WHERE key = 'rules'",
                    [],
                )
                .map_err(|error| StoreError::on(tx, error))
            })
            .unwrap();
        index(store, repo.path(), &|_| {}, &|| {}).unwrap();
        assert_eq!(uids(store), uids(fresh));
        assert_eq!(count(store, DEFERRABLE), indexes);
        full_text_index_agrees(store);
    }

    #[test]
    fn index_runs_that_overlap_in_one_process_both_succeed() {
        use crate::tools::{Source, Unwatched};
        let repo = tempfile::tempdir().unwrap();
        for n in 0..200 {
            std::fs::write(
                repo.path().join(format!("module_{n}.py")),
                format!("def handler_{n}():\n    return {n}\n"),
            )
            .unwrap();
        }
        let hub = crate::hub::on_repo_for_tests(repo.path());
        // a watcher's first run and an agent's call, say, both on a new graph
        let outcomes: Vec<_> = std::thread::scope(|scope| {
            let runs: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        hub.call_named_here(
                            "cos_graph_index",
                            serde_json::json!({}),
                            Source::Cli,
                            &Unwatched,
                        )
                        .map(|answer| answer.data["files"].clone())
                    })
                })
                .collect();
            runs.into_iter().map(|run| run.join().unwrap()).collect()
        });
        for outcome in outcomes {
            assert_eq!(outcome.unwrap(), 200);
        }
    }
}
