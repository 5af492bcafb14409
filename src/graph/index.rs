//! Indexing: walk the repository the way git sees it, parse what changed on all
//! cores, write each file's nodes, edges and references in one transaction,
//! then resolve references across files.

use rayon::prelude::*;
use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
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
    extraction: Extraction,
}

enum Seen {
    Unchanged(String),
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
    let known: HashMap<String, String> = store.read(|c| {
        let mut statement = c.prepare("SELECT path, hash FROM graph_files")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect()
    })?;
    let seen: Vec<Seen> = candidates
        .par_iter()
        .map(|(path, language)| {
            let outcome = read_and_parse(root, path, *language, &known);
            on_file();
            outcome
        })
        .collect();
    let mut summary = IndexSummary::default();
    let mut present = BTreeSet::new();
    let mut changed = Vec::new();
    for outcome in seen {
        match outcome {
            Seen::Unchanged(path) => {
                summary.unchanged += 1;
                present.insert(path);
            }
            Seen::Changed(parsed) => {
                summary.parsed += 1;
                present.insert(parsed.path.clone());
                changed.push(*parsed);
            }
            Seen::Skipped => summary.skipped += 1,
        }
    }
    let removed: Vec<String> = known
        .keys()
        .filter(|path| !present.contains(*path))
        .cloned()
        .collect();
    summary.removed = removed.len() as u64;
    store.write(|tx| -> Result<(), StoreError> {
        let run = || -> rusqlite::Result<()> {
            let file_set_changed = known.is_empty()
                || !removed.is_empty()
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
                rebuild_folders(tx, &present)?;
                resolve(tx, Scope::All)
            } else if !changed.is_empty() {
                // Only edits: re-resolve what the edited files touch, not the whole graph.
                note_affected(tx, &changed)?;
                for parsed in &changed {
                    write_file(tx, parsed)?;
                }
                note_new_names(tx)?;
                relink_files(tx, &changed)?;
                resolve(tx, Scope::Affected)
            } else {
                Ok(())
            }
        };
        run().map_err(|error| StoreError::on(tx, error))
    })?;
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
    known: &HashMap<String, String>,
) -> Seen {
    let full = root.join(path);
    match std::fs::metadata(&full) {
        Ok(meta) if meta.len() <= MAX_FILE_BYTES => {}
        _ => return Seen::Skipped,
    }
    let Ok(bytes) = std::fs::read(&full) else {
        return Seen::Skipped;
    };
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return Seen::Skipped;
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    if known.get(path) == Some(&hash) {
        return Seen::Unchanged(path.to_string());
    }
    let text = String::from_utf8_lossy(&bytes);
    let extraction = extract::extract(path, language, &text);
    Seen::Changed(Box::new(Parsed {
        path: path.to_string(),
        language,
        hash,
        bytes: bytes.len() as u64,
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
            "INSERT INTO graph_references(source, kind, name) VALUES (?1, ?2, ?3)",
        )?;
        for reference in &parsed.extraction.references {
            if let Some(source) = ids.get(reference.source.as_str()) {
                insert.execute(params![source, reference.kind, reference.name])?;
            }
        }
    }
    tx.execute(
        "INSERT INTO graph_files(path, hash, language, bytes, parse_errors, indexed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT(path) DO UPDATE SET hash = excluded.hash, language = excluded.language, bytes = excluded.bytes,
            parse_errors = excluded.parse_errors, indexed_at = excluded.indexed_at",
        params![
            parsed.path,
            parsed.hash,
            parsed.language.name(),
            parsed.bytes as i64,
            parsed.extraction.parse_errors,
            humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
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
            "CREATE TEMP TABLE IF NOT EXISTS todo(source INTEGER, kind TEXT, name TEXT, file TEXT);
             CREATE INDEX IF NOT EXISTS temp.todo_by_kind_name ON todo(kind, name);
             DELETE FROM temp.todo;",
        )?;
        let sql = match self {
            Scope::All => {
                "INSERT INTO temp.todo SELECT r.source, r.kind, r.name, s.file
                 FROM graph_references r JOIN graph_nodes s ON s.id = r.source"
            }
            Scope::Affected => {
                "INSERT INTO temp.todo SELECT r.source, r.kind, r.name, s.file FROM graph_references r
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
         DELETE FROM temp.changed_files; DELETE FROM temp.name_counts;
         DELETE FROM temp.affected_names; DELETE FROM temp.affected_sources;",
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
             WHERE t.file IN (SELECT path FROM temp.changed_files)
               AND e.kind IN ('imports', 'links_to', 'cites_heading') AND e.extractor = 'resolver';",
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
    )
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
        tx.execute(
            "DELETE FROM graph_edges WHERE extractor = 'resolver' AND source IN (SELECT id FROM temp.affected_sources)
             AND kind IN ('imports', 'links_to', 'cites_heading')",
            [],
        )?;
    }
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
    resolve_paths(tx)?;
    if scope == Scope::Affected {
        tx.execute("DELETE FROM graph_nodes WHERE kind = 'external' AND id NOT IN (SELECT target FROM graph_edges)", [])?;
    }
    Ok(())
}

/// Imports (dotted module paths) and Markdown links (relative paths) to file and heading nodes.
fn resolve_paths(tx: &Connection) -> rusqlite::Result<()> {
    let files: HashMap<String, i64> = {
        let mut statement =
            tx.prepare("SELECT file, id FROM graph_nodes WHERE kind IN ('file', 'doc_file')")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let folders: HashMap<String, i64> = {
        let mut statement =
            tx.prepare("SELECT substr(uid, 8), id FROM graph_nodes WHERE kind = 'folder'")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let headings: HashMap<String, i64> = {
        let mut statement =
            tx.prepare("SELECT uid, id FROM graph_nodes WHERE kind = 'doc_heading'")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
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
    let mut external = tx.prepare_cached(
        "INSERT INTO graph_nodes(uid, kind, label, file) VALUES (?1, 'external', ?2, NULL)
         ON CONFLICT(uid) DO UPDATE SET label = excluded.label RETURNING id",
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
            let heading = anchor.and_then(|a| headings.get(&format!("doc:heading:{resolved}#{a}")));
            if let Some(target) = heading.or_else(|| files.get(&resolved)) {
                let kind = if heading.is_some() {
                    "cites_heading"
                } else {
                    "links_to"
                };
                edge.execute(params![source, target, kind, "resolved"])?;
            }
            continue;
        }
        let (resolved, top) = import_target(&name, &from_file, &files, &folders);
        match resolved {
            Some(target) if target != source => {
                edge.execute(params![source, target, "imports", "resolved"])?;
            }
            Some(_) => {}
            None => {
                if top.is_empty() || matches!(top.as_str(), "crate" | "self" | "super") {
                    continue;
                }
                let target: i64 = external
                    .query_row(params![format!("code:external:{top}"), top], |row| {
                        row.get(0)
                    })?;
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

/// What an import names, by the importing file's language: the node it resolves
/// to, if any, and the name of the external module otherwise.
fn import_target(
    name: &str,
    from_file: &str,
    files: &HashMap<String, i64>,
    folders: &HashMap<String, i64>,
) -> (Option<i64>, String) {
    if let Some(path) = name.strip_prefix("go:") {
        // Go imports a package: the folder whose path ends the import path.
        let segments: Vec<&str> = path.split('/').collect();
        let found = (0..segments.len())
            .find_map(|start| folders.get(&segments[start..].join("/")).copied());
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
                .iter()
                .find_map(|candidate| files.get(candidate).copied());
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
    (module_file(name, from_file, files), top)
}

/// The file node a dotted module path names: Python packages and modules, Rust module paths.
fn module_file(name: &str, from_file: &str, files: &HashMap<String, i64>) -> Option<i64> {
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
            if let Some(id) = files.get(&candidate) {
                return Some(*id);
            }
        }
    }
    None
}
