//! How much of what the code names the graph found: per file, the calls and
//! imports resolved and left unresolved (kept beside the file's row after
//! every resolution pass), summed by language for `cos index`, health and
//! the doctor.

use super::*;

/// Calls and imports linked (`resolved`: to the repository or a library) and
/// not linked, of one language.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolution {
    pub calls_resolved: u64,
    pub calls_unresolved: u64,
    pub imports_resolved: u64,
    pub imports_unresolved: u64,
}

const COUNTS: &str = "coalesce(sum(r.kind = 'calls' AND NOT r.unresolved), 0),
    coalesce(sum(r.kind = 'calls' AND r.unresolved), 0),
    coalesce(sum(r.kind = 'imports' AND NOT r.unresolved), 0),
    coalesce(sum(r.kind = 'imports' AND r.unresolved), 0)";

/// Recounts every file's references (a cold index: one pass over them all,
/// grouped, as the per-file lookups' indexes are not built yet).
pub(super) fn recount_all(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE graph_files SET
             calls_resolved = c.calls_resolved, calls_unresolved = c.calls_unresolved,
             imports_resolved = c.imports_resolved, imports_unresolved = c.imports_unresolved
         FROM (SELECT s.file AS file,
                   sum(r.kind = 'calls' AND NOT r.unresolved) AS calls_resolved,
                   sum(r.kind = 'calls' AND r.unresolved) AS calls_unresolved,
                   sum(r.kind = 'imports' AND NOT r.unresolved) AS imports_resolved,
                   sum(r.kind = 'imports' AND r.unresolved) AS imports_unresolved
               FROM graph_references r JOIN graph_nodes s ON s.id = r.source
               GROUP BY s.file) AS c
         WHERE graph_files.path = c.file",
        [],
    )?;
    Ok(())
}

/// Recounts the references of `files` (an incremental run's pass).
pub(super) fn recount(tx: &Connection, files: &HashSet<Rc<str>>) -> rusqlite::Result<()> {
    let mut update = tx.prepare_cached(&format!(
        "UPDATE graph_files SET (calls_resolved, calls_unresolved, imports_resolved, imports_unresolved) =
             (SELECT {COUNTS} FROM graph_nodes s JOIN graph_references r ON r.source = s.id
              WHERE s.file = ?1)
         WHERE path = ?1"
    ))?;
    for file in files {
        update.execute([&**file])?;
    }
    Ok(())
}

/// The calls and imports found and not found, by the language of the file
/// they are in (only languages whose files make any).
pub(super) fn by_language(c: &Connection) -> rusqlite::Result<BTreeMap<String, Resolution>> {
    let mut statement = c.prepare_cached(
        "SELECT language, sum(calls_resolved), sum(calls_unresolved), sum(imports_resolved),
                sum(imports_unresolved)
         FROM graph_files GROUP BY language
         HAVING sum(calls_resolved + calls_unresolved + imports_resolved + imports_unresolved) > 0",
    )?;
    let rows = statement.query_map([], |row| {
        let count = |i| row.get::<_, i64>(i).map(|n| n as u64);
        Ok((
            row.get::<_, String>(0)?,
            Resolution {
                calls_resolved: count(1)?,
                calls_unresolved: count(2)?,
                imports_resolved: count(3)?,
                imports_unresolved: count(4)?,
            },
        ))
    })?;
    rows.collect()
}

/// What the last index run counted (nothing before the first run): the
/// hub's health and the doctor read this rather than count at each call.
pub fn resolution_now(c: &Connection) -> rusqlite::Result<BTreeMap<String, Resolution>> {
    meta_json(c, "resolution")
}
