//! Indexing: walk the repository the way git sees it, parse what changed on all
//! cores, write each file's nodes, edges and references in one transaction,
//! then resolve references across files.

use rayon::prelude::*;
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::rc::Rc;
use std::time::Instant;
use utoipa::ToSchema;

use super::extract::{self, Extraction, Language};
use crate::store::{Store, StoreError};

/// Files larger than this are skipped (generated or vendored code, data).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// What an index run did.
#[derive(Debug, Default, Clone, Serialize, Deserialize, ToSchema)]
pub struct IndexSummary {
    /// Source files the graph covers after the run.
    pub files: u64,
    /// Files parsed because they were new or changed.
    pub parsed: u64,
    pub unchanged: u64,
    pub removed: u64,
    /// Skipped as binary or larger than 1 MiB.
    pub skipped: u64,
    /// Files with syntax errors tree-sitter recovered from.
    pub files_with_parse_errors: u64,
    pub nodes_by_kind: BTreeMap<String, u64>,
    pub edges_by_kind: BTreeMap<String, u64>,
    pub milliseconds: u64,
}

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
    Skipped,
}

/// Indexes `root` into `store`; `on_file` is called once per candidate file (for progress).
pub fn index(
    store: &Store,
    root: &Path,
    on_candidates: &dyn Fn(u64),
    on_file: &(dyn Fn() + Sync),
) -> Result<IndexSummary, StoreError> {
    let started = Instant::now();
    let candidates = walk(root);
    on_candidates(candidates.len() as u64);
    let known: HashMap<String, Known> = store.read(|c| {
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
        rows.collect()
    })?;
    let mut summary = if known.is_empty() {
        cold_index(store, root, &candidates, on_file)?
    } else {
        update_index(store, root, &candidates, &known, on_file)?
    };
    store.read(|c| {
        summary.files = c.query_row("SELECT count(*) FROM graph_files", [], |r| {
            r.get::<_, i64>(0)
        })? as u64;
        summary.files_with_parse_errors = c.query_row(
            "SELECT count(*) FROM graph_files WHERE parse_errors > 0",
            [],
            |r| r.get::<_, i64>(0),
        )? as u64;
        summary.nodes_by_kind = counts(c, "SELECT kind, count(*) FROM graph_nodes GROUP BY kind")?;
        summary.edges_by_kind = counts(c, "SELECT kind, count(*) FROM graph_edges GROUP BY kind")?;
        Ok(())
    })?;
    summary.milliseconds = started.elapsed().as_millis() as u64;
    Ok(summary)
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
            Seen::Skipped => {
                self.summary.skipped += 1;
                None
            }
        }
    }
}

/// A first index: files are written while the others are still being parsed
/// (a bounded channel keeps memory flat), then everything is resolved once.
fn cold_index(
    store: &Store,
    root: &Path,
    candidates: &[(String, Language)],
    on_file: &(dyn Fn() + Sync),
) -> Result<IndexSummary, StoreError> {
    let nothing_known = HashMap::new();
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Seen>(64);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            candidates
                .par_iter()
                .for_each_with(sender, |sender, (path, language)| {
                    let outcome = read_and_parse(root, path, *language, &nothing_known);
                    on_file();
                    // fails only once the writer gave up; its error is what the caller sees
                    let _ = sender.send(outcome);
                });
        });
        store.write(move |tx| -> Result<IndexSummary, StoreError> {
            // owned here, so a failed write hangs up and the parsers stop waiting
            let receiver = receiver;
            let mut tally = Tally::default();
            let mut run = || -> rusqlite::Result<()> {
                track_new_nodes(tx)?;
                for outcome in receiver.iter() {
                    if let Some(parsed) = tally.add(outcome) {
                        write_file(tx, &parsed)?;
                    }
                }
                rebuild_folders(tx, &tally.present)?;
                resolve(tx, Scope::All)?;
                index_new_nodes(tx)?;
                bump_revision(tx)
            };
            run().map_err(|error| StoreError::on(tx, error))?;
            Ok(tally.summary)
        })
    })
}

/// A later index: parse what changed, then rewrite it in one transaction. Only
/// edits re-resolve what the edited files touch; added, removed or renamed files
/// re-resolve everything.
fn update_index(
    store: &Store,
    root: &Path,
    candidates: &[(String, Language)],
    known: &HashMap<String, Known>,
    on_file: &(dyn Fn() + Sync),
) -> Result<IndexSummary, StoreError> {
    let seen: Vec<Seen> = candidates
        .par_iter()
        .map(|(path, language)| {
            let outcome = read_and_parse(root, path, *language, known);
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
            let file_set_changed = !removed.is_empty()
                || changed
                    .iter()
                    .any(|parsed| !known.contains_key(&parsed.path));
            if file_set_changed {
                for path in &removed {
                    tx.execute("DELETE FROM graph_nodes WHERE file = ?1", [path])?;
                    tx.execute("DELETE FROM graph_files WHERE path = ?1", [path])?;
                }
                for parsed in &changed {
                    write_file(tx, parsed)?;
                }
                rebuild_folders(tx, &tally.present)?;
                resolve(tx, Scope::All)?;
            } else if !changed.is_empty() {
                note_affected(tx, &changed)?;
                for parsed in &changed {
                    write_file(tx, parsed)?;
                }
                note_new_names(tx)?;
                relink_files(tx, &changed)?;
                resolve(tx, Scope::Affected)?;
            }
            index_new_nodes(tx)?;
            if file_set_changed || !changed.is_empty() {
                bump_revision(tx)?;
            }
            Ok(())
        };
        run().map_err(|error| StoreError::on(tx, error))
    })?;
    Ok(tally.summary)
}

/// Nodes inserted by this run, for `index_new_nodes`. The permanent delete
/// trigger keeps graph_nodes_fts right when nodes go; a run never deletes a node
/// it inserted (each file is rewritten once, folders and externals are cleared
/// before they are rebuilt), so every deleted node was already in the index.
fn track_new_nodes(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS new_nodes(id INTEGER PRIMARY KEY);
         DELETE FROM temp.new_nodes;
         CREATE TEMP TRIGGER IF NOT EXISTS track_new_graph_nodes AFTER INSERT ON main.graph_nodes BEGIN
             INSERT OR IGNORE INTO temp.new_nodes(id) VALUES (new.id);
         END;",
    )
}

/// Marks the graph changed: answers cached under the old revision are not served again.
pub fn bump_revision(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute("UPDATE graph_revision SET revision = revision + 1", [])?;
    Ok(())
}

/// The graph's revision; read it before the data an answer is cached under.
pub fn revision(connection: &Connection) -> rusqlite::Result<i64> {
    connection.query_row("SELECT revision FROM graph_revision", [], |row| row.get(0))
}

/// Adds the run's new nodes to the full-text index in one statement.
fn index_new_nodes(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute_batch(
        "INSERT INTO graph_nodes_fts(rowid, label, uid)
             SELECT n.id, n.label, n.uid FROM temp.new_nodes f JOIN graph_nodes n ON n.id = f.id;
         DELETE FROM temp.new_nodes;
         DROP TRIGGER IF EXISTS temp.track_new_graph_nodes;",
    )
}

fn counts(connection: &Connection, sql: &str) -> rusqlite::Result<BTreeMap<String, u64>> {
    let mut statement = connection.prepare(sql)?;
    let rows = statement.query_map([], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)? as u64))
    })?;
    rows.collect()
}

/// Every source file git would see (ignores .gitignore'd and hidden paths), repository-relative.
fn walk(root: &Path) -> Vec<(String, Language)> {
    let mut files: Vec<(String, Language)> = ignore::WalkBuilder::new(root)
        .hidden(true)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|entry| {
            let relative = entry
                .path()
                .strip_prefix(root)
                .ok()?
                .to_str()?
                .replace('\\', "/");
            let language = Language::of(&relative)?;
            Some((relative, language))
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

fn read_and_parse(
    root: &Path,
    path: &str,
    language: Language,
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
        _ => return Seen::Skipped,
    };
    let Ok(bytes) = std::fs::read(&full) else {
        return Seen::Skipped;
    };
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Seen::Skipped;
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    if known.get(path).is_some_and(|before| before.hash == hash) {
        return Seen::Touched(path.to_string(), modified_ns);
    }
    let text = String::from_utf8_lossy(&bytes);
    let extraction = extract::extract(path, language, &text);
    Seen::Changed(Box::new(Parsed {
        path: path.to_string(),
        language,
        hash,
        bytes: bytes.len() as u64,
        modified_ns,
        extraction,
    }))
}

fn write_file(tx: &Connection, parsed: &Parsed) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM graph_nodes WHERE file = ?1", [&parsed.path])?;
    let mut ids: HashMap<&str, i64> = HashMap::new();
    {
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
    }
    {
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
    }
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO graph_references(source, kind, name, module) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for reference in &parsed.extraction.references {
            if let Some(source) = ids.get(reference.source.as_str()) {
                insert.execute(params![
                    source,
                    reference.kind,
                    reference.name,
                    reference.module
                ])?;
            }
        }
    }
    let file_uid = extract::file_uid(&parsed.path, parsed.language);
    if let Some(file) = ids.get(file_uid.as_str()) {
        let mut insert = tx.prepare_cached(
            "INSERT INTO graph_bindings(file, local, module, symbol) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for binding in &parsed.extraction.bindings {
            insert.execute(params![file, binding.local, binding.module, binding.symbol])?;
        }
    }
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
            humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            parsed.modified_ns
        ],
    )?;
    Ok(())
}

/// Folder nodes for every directory holding an indexed file, and the contains spine.
fn rebuild_folders(tx: &Connection, files: &BTreeSet<String>) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM graph_nodes WHERE kind = 'folder'", [])?;
    let mut folders = BTreeSet::new();
    for file in files {
        let mut path = file.as_str();
        while let Some((parent, _)) = path.rsplit_once('/') {
            folders.insert(parent.to_string());
            path = parent;
        }
    }
    folders.insert(String::new());
    let mut insert = tx.prepare_cached(
        "INSERT INTO graph_nodes(uid, kind, label, file) VALUES (?1, 'folder', ?2, NULL)",
    )?;
    for folder in &folders {
        let label = if folder.is_empty() {
            ".".to_string()
        } else {
            folder.rsplit('/').next().unwrap_or(folder).to_string()
        };
        insert.execute(params![format!("folder:{folder}"), label])?;
    }
    let mut link = tx.prepare_cached(
        "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence)
         SELECT p.id, c.id, 'contains', 'walker', 'resolved' FROM graph_nodes p, graph_nodes c WHERE p.uid = ?1 AND c.uid IN (?2, ?3, ?4)",
    )?;
    for folder in folders.iter().filter(|f| !f.is_empty()) {
        let parent = folder.rsplit_once('/').map_or("", |(p, _)| p);
        link.execute(params![
            format!("folder:{parent}"),
            format!("folder:{folder}"),
            "",
            ""
        ])?;
    }
    for file in files {
        let parent = file.rsplit_once('/').map_or("", |(p, _)| p);
        link.execute(params![
            format!("folder:{parent}"),
            format!("code:file:{file}"),
            format!("doc:file:{file}"),
            ""
        ])?;
    }
    Ok(())
}

/// Which references a resolution pass redoes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Every reference (files were added, removed or renamed).
    All,
    /// References from edited files, references to names they declared or declare,
    /// and imports or links that pointed into them (see `note_affected`).
    Affected,
}

impl Scope {
    /// Fills `temp.todo` with the references this pass resolves, each with its source's file.
    fn collect(self, tx: &Connection) -> rusqlite::Result<()> {
        tx.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS todo(source INTEGER, kind TEXT, name TEXT, file TEXT, module TEXT);
             CREATE INDEX IF NOT EXISTS temp.todo_by_kind_name ON todo(kind, name);
             DELETE FROM temp.todo;",
        )?;
        let sql = match self {
            Scope::All => {
                "INSERT INTO temp.todo SELECT r.source, r.kind, r.name, s.file, r.module
                 FROM graph_references r JOIN graph_nodes s ON s.id = r.source"
            }
            Scope::Affected => {
                "INSERT INTO temp.todo SELECT r.source, r.kind, r.name, s.file, r.module FROM graph_references r
                 JOIN graph_nodes s ON s.id = r.source WHERE r.rowid IN (
                     SELECT rowid FROM graph_references WHERE name IN (SELECT label FROM temp.affected_names)
                     UNION SELECT rowid FROM graph_references WHERE source IN (
                         SELECT id FROM graph_nodes WHERE file IN (SELECT path FROM temp.changed_files))
                     UNION SELECT rowid FROM graph_references WHERE source IN (SELECT id FROM temp.affected_sources))"
            }
        };
        tx.execute(sql, [])?;
        Ok(())
    }
}

/// Before edited files are rewritten: remember them, how many definitions each
/// name they declare has (per kind group), and which nodes elsewhere imported
/// or linked into them.
fn note_affected(tx: &Connection, changed: &[Parsed]) -> rusqlite::Result<()> {
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
    for parsed in changed {
        insert.execute([&parsed.path])?;
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

/// Rewritten files got new node ids: hang them back under their folders.
fn relink_files(tx: &Connection, changed: &[Parsed]) -> rusqlite::Result<()> {
    let mut link = tx.prepare_cached(
        "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence)
         SELECT p.id, c.id, 'contains', 'walker', 'resolved' FROM graph_nodes p, graph_nodes c
         WHERE p.uid = ?1 AND c.file = ?2 AND c.kind IN ('file', 'doc_file')",
    )?;
    for parsed in changed {
        let parent = parsed.path.rsplit_once('/').map_or("", |(p, _)| p);
        link.execute(params![format!("folder:{parent}"), parsed.path])?;
    }
    Ok(())
}

/// Turns references into edges: calls and bases by name (same file first, else a
/// name unique in the repository), imports and links by path. Unresolved imports
/// point at external nodes.
fn resolve(tx: &Connection, scope: Scope) -> rusqlite::Result<()> {
    scope.collect(tx)?;
    if scope == Scope::All {
        tx.execute("DELETE FROM graph_edges WHERE extractor = 'resolver'", [])?;
        tx.execute("DELETE FROM graph_nodes WHERE kind = 'external'", [])?;
    } else {
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
    }
    let places = Places::load(tx)?;
    resolve_bound(tx, &places)?;
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS unique_names(label TEXT PRIMARY KEY, id INTEGER) WITHOUT ROWID;",
    )?;
    for (reference, kinds) in [
        ("calls", "('function', 'method')"),
        ("inherits_from", "('class', 'interface')"),
        ("implements", "('interface', 'class')"),
    ] {
        tx.execute("DELETE FROM temp.unique_names", [])?;
        tx.execute(
            &format!(
                "INSERT INTO temp.unique_names(label, id) SELECT label, min(id) FROM graph_nodes
                 WHERE kind IN {kinds} AND label IN (SELECT name FROM temp.todo WHERE kind = ?1)
                 GROUP BY label HAVING count(*) = 1"
            ),
            [reference],
        )?;
        // same file first
        tx.execute(
            &format!(
                "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence)
                 SELECT r.source, n.id, ?1, 'resolver', 'resolved'
                 FROM temp.todo r JOIN graph_nodes n ON n.label = r.name AND n.kind IN {kinds} AND n.file = r.file
                 WHERE r.kind = ?1 AND n.id <> r.source"
            ),
            [reference],
        )?;
        // else a name unique in the repository
        tx.execute(
                            "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence)
                 SELECT r.source, u.id, ?1, 'resolver', 'name'
                 FROM temp.todo r JOIN temp.unique_names u ON u.label = r.name
                 WHERE r.kind = ?1 AND u.id <> r.source
                   AND NOT EXISTS (SELECT 1 FROM graph_edges e JOIN graph_nodes t ON t.id = e.target
                                   WHERE e.source = r.source AND e.kind = ?1 AND e.extractor = 'resolver' AND t.label = r.name)"
            ,
            [reference],
        )?;
    }
    resolve_paths(tx, &places)?;
    if scope == Scope::Affected {
        tx.execute(
            "DELETE FROM graph_nodes WHERE uid >= 'code:external:' AND uid < 'code:external;'
             AND NOT EXISTS (SELECT 1 FROM graph_edges WHERE target = graph_nodes.id)",
            [],
        )?;
    }
    Ok(())
}

/// The repository's files, folders and headings by path, for resolving imports and links.
struct Places {
    files: HashMap<String, i64>,
    folders: HashMap<String, i64>,
    headings: HashMap<String, i64>,
    /// Files directly inside each folder (a Go import names a folder).
    files_by_folder: HashMap<String, Vec<String>>,
}

impl Places {
    fn load(tx: &Connection) -> rusqlite::Result<Places> {
        let pairs = |sql: &str| -> rusqlite::Result<HashMap<String, i64>> {
            let mut statement = tx.prepare(sql)?;
            let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect()
        };
        // by uid (an index), not by kind (a scan of every node)
        let files = pairs(
            "SELECT f.path, n.id FROM graph_files f JOIN graph_nodes n
             ON n.uid = (CASE f.language WHEN 'markdown' THEN 'doc:file:' ELSE 'code:file:' END) || f.path",
        )?;
        let mut files_by_folder: HashMap<String, Vec<String>> = HashMap::new();
        for path in files.keys() {
            let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
            files_by_folder
                .entry(folder.to_string())
                .or_default()
                .push(path.clone());
        }
        Ok(Places {
            files,
            folders: pairs(
                "SELECT substr(uid, 8), id FROM graph_nodes WHERE uid >= 'folder:' AND uid < 'folder;'",
            )?,
            headings: pairs(
                "SELECT uid, id FROM graph_nodes WHERE uid >= 'doc:heading:' AND uid < 'doc:heading;'",
            )?,
            files_by_folder,
        })
    }
}

/// Where an import leads (see `import_target`).
type ImportTarget = (Option<Place>, String);

/// What an import names inside the repository.
enum Place {
    File(String),
    /// A Go package.
    Folder(String),
}

/// How many re-exports (`from .base import Model` in a package's `__init__`) a
/// bound reference follows before giving up.
const MAX_REEXPORT_HOPS: usize = 3;

/// Calls and bases made through an import binding: the bound symbol in the
/// bound module's file (following re-exports), with confidence `resolved`; a
/// module outside the repository gets an edge to its external node. References
/// resolved here leave `temp.todo`; the rest fall back to name matching.
fn resolve_bound(tx: &Connection, places: &Places) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS bound(todo INTEGER, source INTEGER, kind TEXT, name TEXT,
             file TEXT, member TEXT, target INTEGER, live INTEGER NOT NULL DEFAULT 1);
         DELETE FROM temp.bound;",
    )?;
    let rows: Vec<(i64, i64, String, String, String, String)> = {
        let mut statement = tx.prepare(
            "SELECT rowid, source, kind, name, coalesce(file, ''), module FROM temp.todo
             WHERE module IS NOT NULL AND kind IN ('calls', 'inherits_from', 'implements')",
        )?;
        let rows = statement.query_map([], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
            ))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    if rows.is_empty() {
        return Ok(());
    }
    let mut insert = tx.prepare_cached(
        "INSERT INTO temp.bound(todo, source, kind, name, file, member) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut external_edge = tx.prepare_cached(
        "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence) VALUES (?1, ?2, ?3, 'resolver', 'external')",
    )?;
    let mut done = tx.prepare_cached("DELETE FROM temp.todo WHERE rowid = ?1")?;
    // many references share a folder and a module: resolve each pair once
    let mut targets: HashMap<(String, String), Rc<ImportTarget>> = HashMap::new();
    for (todo, source, kind, name, from_file, module) in rows {
        let member = member_of(&module);
        let folder = from_file.rsplit_once('/').map_or("", |(folder, _)| folder);
        let target = targets
            .entry((folder.to_string(), module.clone()))
            .or_insert_with(|| Rc::new(import_target(&module, &from_file, places)))
            .clone();
        match &*target {
            (Some(Place::File(file)), _) => {
                insert.execute(params![todo, source, kind, name, file, member])?;
            }
            (Some(Place::Folder(folder)), _) => {
                for file in places.files_by_folder.get(folder).into_iter().flatten() {
                    insert.execute(params![todo, source, kind, name, file, ""])?;
                }
            }
            (None, top) if is_external(top, &module) => {
                let target = external_node(tx, top)?;
                external_edge.execute(params![source, target, kind])?;
                done.execute([todo])?;
            }
            (None, _) => {}
        }
    }
    for hop in 0..=MAX_REEXPORT_HOPS {
        tx.execute_batch(
            "UPDATE temp.bound SET target = (
                 SELECT n.id FROM graph_nodes n WHERE n.uid IN (
                     'code:function:' || bound.file || '::' || bound.name,
                     'code:class:' || bound.file || '::' || bound.name,
                     'code:interface:' || bound.file || '::' || bound.name,
                     'code:method:' || bound.file || '::' || bound.member || '.' || bound.name)
                 AND ((bound.kind = 'calls' AND n.kind IN ('function', 'method', 'class'))
                   OR (bound.kind <> 'calls' AND n.kind IN ('class', 'interface')))
                 ORDER BY n.kind = 'method' LIMIT 1)
             WHERE target IS NULL AND live = 1;
             UPDATE temp.bound SET target = (
                 SELECT min(n.id) FROM graph_nodes n WHERE n.label = bound.name AND n.file = bound.file
                 AND ((bound.kind = 'calls' AND n.kind IN ('function', 'method', 'class'))
                   OR (bound.kind <> 'calls' AND n.kind IN ('class', 'interface')))
                 HAVING count(*) = 1)
             WHERE target IS NULL AND live = 1;",
        )?;
        if hop == MAX_REEXPORT_HOPS || !follow_reexports(tx, places)? {
            break;
        }
    }
    tx.execute_batch(
        "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence)
             SELECT source, target, kind, 'resolver', 'resolved' FROM temp.bound
             WHERE target IS NOT NULL AND target <> source;
         DELETE FROM temp.todo WHERE rowid IN (SELECT todo FROM temp.bound WHERE target IS NOT NULL);",
    )
}

/// The row id of the external node standing for module `top`, made on first use.
fn external_node(tx: &Connection, top: &str) -> rusqlite::Result<i64> {
    tx.prepare_cached(
        "INSERT INTO graph_nodes(uid, kind, label, file) VALUES (?1, 'external', ?2, NULL)
         ON CONFLICT(uid) DO UPDATE SET label = excluded.label RETURNING id",
    )?
    .query_row(params![format!("code:external:{top}"), top], |row| {
        row.get(0)
    })
}

/// The last segment of a module path (`app.models` → `models`, `./api` → `api`):
/// the type a `Type.method` qualname may start with.
fn member_of(module: &str) -> &str {
    module.rsplit(['.', '/']).next().unwrap_or("")
}

/// A module name that can only be outside the repository (not relative, not Rust's own paths).
fn is_external(top: &str, module: &str) -> bool {
    !top.is_empty() && !module.starts_with('.') && !matches!(top, "crate" | "self" | "super")
}

/// Points unresolved bound references at the module a re-export names; true when any moved.
fn follow_reexports(tx: &Connection, places: &Places) -> rusqlite::Result<bool> {
    let unresolved: Vec<(i64, String, String)> = {
        let mut statement = tx.prepare(
            "SELECT rowid, name, file FROM temp.bound WHERE target IS NULL AND live = 1",
        )?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut binding = tx.prepare_cached(
        "SELECT module, symbol FROM graph_bindings WHERE file = ?1 AND local = ?2 LIMIT 1",
    )?;
    let mut moved = tx.prepare_cached(
        "UPDATE temp.bound SET file = ?2, name = ?3, member = ?4 WHERE rowid = ?1",
    )?;
    let mut stuck = tx.prepare_cached("UPDATE temp.bound SET live = 0 WHERE rowid = ?1")?;
    let mut any = false;
    for (row, name, file) in unresolved {
        let found: Option<(String, Option<String>)> = match places.files.get(&file) {
            Some(file_id) => binding
                .query_row(params![file_id, name], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?,
            None => None,
        };
        let next = found.and_then(
            |(module, symbol)| match import_target(&module, &file, places) {
                (Some(Place::File(next)), _) if next != file => Some((next, symbol, module)),
                _ => None,
            },
        );
        match next {
            Some((next, symbol, module)) => {
                moved.execute(params![
                    row,
                    next,
                    symbol.unwrap_or(name),
                    member_of(&module)
                ])?;
                any = true;
            }
            None => {
                stuck.execute([row])?;
            }
        }
    }
    Ok(any)
}

/// Imports (dotted module paths) and Markdown links (relative paths) to file and heading nodes.
fn resolve_paths(tx: &Connection, places: &Places) -> rusqlite::Result<()> {
    let references: Vec<(i64, String, String, String)> = {
        let mut statement = tx.prepare(
            "SELECT source, kind, name, coalesce(file, '') FROM temp.todo WHERE kind IN ('imports', 'links_to')",
        )?;
        let rows = statement.query_map([], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut edge = tx.prepare_cached(
        "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence) VALUES (?1, ?2, ?3, 'resolver', ?4)",
    )?;
    for (source, kind, name, from_file) in references {
        if kind == "links_to" {
            let (target_path, anchor) = name
                .split_once('#')
                .map_or((name.as_str(), None), |(p, a)| (p, Some(a)));
            let resolved = if target_path.is_empty() {
                from_file.clone()
            } else {
                join_relative(&from_file, target_path)
            };
            let heading =
                anchor.and_then(|a| places.headings.get(&format!("doc:heading:{resolved}#{a}")));
            if let Some(target) = heading.or_else(|| places.files.get(&resolved)) {
                let kind = if heading.is_some() {
                    "cites_heading"
                } else {
                    "links_to"
                };
                edge.execute(params![source, target, kind, "resolved"])?;
            }
            continue;
        }
        let (resolved, top) = import_target(&name, &from_file, places);
        let target = match resolved {
            Some(Place::File(path)) => places.files.get(&path),
            Some(Place::Folder(path)) => places.folders.get(&path),
            None => None,
        };
        match target {
            Some(target) if *target != source => {
                edge.execute(params![source, target, "imports", "resolved"])?;
            }
            Some(_) => {}
            None => {
                if top.is_empty() || matches!(top.as_str(), "crate" | "self" | "super") {
                    continue;
                }
                let target = external_node(tx, &top)?;
                edge.execute(params![source, target, "imports", "external"])?;
            }
        }
    }
    Ok(())
}

/// `a/b/c.md` + `../d.md` → `a/d.md`.
fn join_relative(from_file: &str, target: &str) -> String {
    let mut parts: Vec<&str> = from_file.split('/').collect();
    parts.pop();
    for segment in target.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

const SCRIPT_EXTENSIONS: &[&str] = &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"];

/// What an import names, by the importing file's language: the file or Go
/// package folder it resolves to, if any, and the name of the external module otherwise.
fn import_target(name: &str, from_file: &str, places: &Places) -> ImportTarget {
    if let Some(path) = name.strip_prefix("go:") {
        // Go imports a package: the folder whose path ends the import path.
        let segments: Vec<&str> = path.split('/').collect();
        let found = (0..segments.len()).find_map(|start| {
            let folder = segments[start..].join("/");
            places
                .folders
                .contains_key(&folder)
                .then_some(Place::Folder(folder))
        });
        return (found, path.to_string());
    }
    let extension = from_file.rsplit('.').next().unwrap_or("");
    if SCRIPT_EXTENSIONS.contains(&extension) {
        if name.starts_with('.') || name.starts_with('/') {
            let base = join_relative(from_file, name);
            let mut candidates = vec![base.clone()];
            candidates.extend(SCRIPT_EXTENSIONS.iter().map(|ext| format!("{base}.{ext}")));
            candidates.extend(
                SCRIPT_EXTENSIONS
                    .iter()
                    .map(|ext| format!("{base}/index.{ext}")),
            );
            let found = candidates
                .into_iter()
                .find(|candidate| places.files.contains_key(candidate))
                .map(Place::File);
            return (found, String::new());
        }
        // a package: `react`, `@scope/name/sub` → `@scope/name`
        let parts: Vec<&str> = name.split('/').collect();
        let package = if name.starts_with('@') {
            parts.iter().take(2).copied().collect::<Vec<_>>().join("/")
        } else {
            parts[0].to_string()
        };
        return (None, package);
    }
    let top = name
        .trim_start_matches('.')
        .split('.')
        .next()
        .unwrap_or(name)
        .to_string();
    (
        module_file(name, from_file, &places.files).map(Place::File),
        top,
    )
}

/// The file a dotted module path names: Python packages and modules, Rust module paths.
fn module_file(name: &str, from_file: &str, files: &HashMap<String, i64>) -> Option<String> {
    let trimmed = name.trim_start_matches('.');
    let relative_depth = name.len() - trimmed.len();
    let mut segments: Vec<&str> = trimmed.split('.').filter(|s| !s.is_empty()).collect();
    let base: String = if relative_depth > 0 {
        let mut parts: Vec<&str> = from_file.split('/').collect();
        parts.pop();
        for _ in 1..relative_depth {
            parts.pop();
        }
        parts.join("/")
    } else if matches!(segments.first(), Some(&"crate")) {
        segments.remove(0);
        from_file
            .split("/src/")
            .next()
            .map(|p| {
                if p == from_file {
                    "src".to_string()
                } else {
                    format!("{p}/src")
                }
            })
            .unwrap_or_default()
    } else {
        String::new()
    };
    // longest prefix first: a.b.c may name module a/b/c or item c of module a/b
    for length in (1..=segments.len()).rev() {
        let stem = segments[..length].join("/");
        let stem = if base.is_empty() {
            stem
        } else {
            format!("{base}/{stem}")
        };
        for candidate in [
            format!("{stem}.py"),
            format!("{stem}/__init__.py"),
            format!("{stem}.rs"),
            format!("{stem}/mod.rs"),
        ] {
            if files.contains_key(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}
