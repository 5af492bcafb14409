//! An incremental run: only the files that changed are written again, and
//! only the references their change can affect (names bound, added or
//! rebound, modules moved, folders changed) are resolved again.

use super::*;

/// A later index: parse what changed, then rewrite it in one transaction and
/// re-resolve only the references the new, edited and removed files can affect.
pub(super) fn update_index(
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

/// How the folder nodes must change for the files in the repository: a folder
/// node for every directory holding an indexed file, linked to its parent.
pub(super) struct FolderChanges {
    added: Vec<String>,
    gone: Vec<String>,
}

impl FolderChanges {
    pub(super) fn between(
        tx: &Connection,
        files: &BTreeSet<String>,
    ) -> rusqlite::Result<FolderChanges> {
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
    pub(super) fn apply(&self, tx: &Connection) -> rusqlite::Result<()> {
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
pub(super) fn parent_folder(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    Some(path.rsplit_once('/').map_or("", |(parent, _)| parent))
}

/// Hangs files (new, or rewritten with new node ids) under their folders.
pub(super) fn link_files<'a>(
    tx: &Connection,
    paths: impl Iterator<Item = &'a str>,
) -> rusqlite::Result<()> {
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
pub(super) fn affected_references(tx: &Connection) -> rusqlite::Result<Vec<Reference>> {
    resolve::references(
        tx,
        "SELECT r.source, r.kind, r.name, s.file, r.module, r.receiver, r.rowid, r.unresolved FROM graph_references r
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
pub(super) fn note_affected(tx: &Connection, touched: &[&str]) -> rusqlite::Result<()> {
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
               AND (e.kind IN ('imports', 'links_to', 'cites_heading') OR e.confidence IN ('resolved', 'dispatch'));
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
pub(super) fn note_rebound_names(tx: &Connection) -> rusqlite::Result<()> {
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
             WHERE name IN (SELECT label FROM temp.rebound_names) AND module IS NOT NULL;
         -- a name matched beside its caller: a definition added or gone in the
         -- caller's folder matters whatever the count elsewhere
         INSERT OR IGNORE INTO temp.affected_sources(id)
             SELECT r.source FROM graph_references r JOIN graph_nodes s ON s.id = r.source
             WHERE r.name IN (
                 SELECT label FROM temp.old_labels UNION SELECT label FROM graph_nodes
                 WHERE file IN (SELECT path FROM temp.changed_files)
                   AND kind IN ('function', 'method', 'class', 'interface'))
               AND rtrim(s.file, replace(s.file, '/', '')) IN (
                 SELECT rtrim(path, replace(path, '/', '')) FROM temp.changed_files);
         -- a typed call picks among every method of its name: any change to one matters
         INSERT OR IGNORE INTO temp.affected_sources(id)
             SELECT source FROM graph_references WHERE receiver <> '' AND name IN (
                 SELECT label FROM temp.old_labels UNION SELECT label FROM graph_nodes
                 WHERE file IN (SELECT path FROM temp.changed_files) AND kind IN ('function', 'method'));",
    )
}

/// After edited files are rewritten: the names whose resolution can change. A
/// name-only edge exists only for a name with one definition, so a name matters
/// when it had or has at most one definition in a kind group (references from
/// the edited files themselves are always redone).
pub(super) fn note_new_names(tx: &Connection) -> rusqlite::Result<()> {
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
pub(super) fn note_moved_modules(
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
pub(super) fn mark_sources_naming(tx: &Connection, keys: &BTreeSet<&str>) -> rusqlite::Result<()> {
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
pub(super) fn resolve_affected(tx: &Connection) -> rusqlite::Result<()> {
    let mut stages = Stages::start();
    let references = affected_references(tx)?;
    stages.lap("collect references");
    // edges into symbols whose name is affected are recomputed from every source
    tx.execute(
        "DELETE FROM graph_edges WHERE extractor = 'resolver' AND kind IN ('calls', 'inherits_from', 'implements', 'uses_type')
         AND target IN (SELECT id FROM graph_nodes WHERE label IN (SELECT label FROM temp.affected_names))",
        [],
    )?;
    // every reference of an affected source is redone below
    tx.execute(
        "DELETE FROM graph_edges WHERE extractor = 'resolver' AND source IN (SELECT id FROM temp.affected_sources)",
        [],
    )?;
    stages.lap("delete old resolver edges");
    let mut files = resolve::resolve(tx, references, Reach::Named)?;
    stages.lap("resolve");
    link_overrides(tx, Touched::Changed)?;
    stages.lap("overrides");
    // an edited file may have no reference left to resolve: count it too
    let mut changed = tx.prepare_cached("SELECT path FROM temp.changed_files")?;
    let changed = changed.query_map([], |row| row.get::<_, String>(0))?;
    for path in changed {
        files.insert(Rc::from(path?));
    }
    resolution::recount(tx, &files)?;
    tx.execute(
        "DELETE FROM graph_nodes WHERE uid >= 'code:external:' AND uid < 'code:external;'
         AND NOT EXISTS (SELECT 1 FROM graph_edges WHERE target = graph_nodes.id)",
        [],
    )?;
    Ok(())
}
