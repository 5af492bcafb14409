//! Overrides: a method of a type's direct base to the same-named method of
//! the type, as a `calls` edge of confidence `dispatch` (a call to the base
//! method may run the override). An interface's implementations are then
//! reached from every call to the interface method, and a change to an
//! override reaches the callers of what it overrides. Derived from the
//! `inherits_from` and `implements` edges and the types' methods alone, so
//! the edges are made again for the types a run touched, apart from the
//! references the resolver redoes.

use super::*;

/// The extractor the override edges carry, which tells them from the resolver's.
const EXTRACTOR: &str = "hierarchy";

/// Methods that construct: a type's own, not a base's run another way.
const CONSTRUCTORS: &[&str] = &[
    "__init__",
    "__new__",
    "constructor",
    "init",
    "initialize",
    "__construct",
    "new",
];

/// Which types' overrides a run makes again.
pub(super) enum Touched {
    /// Every type with a base (a cold index).
    All,
    /// Types in the changed files, their subtypes, and types whose bases
    /// were resolved again (`temp.changed_files`, `temp.affected_sources`).
    Changed,
}

pub(super) fn link_overrides(tx: &Connection, touched: Touched) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS override_types(id INTEGER PRIMARY KEY);
         DELETE FROM temp.override_types;",
    )?;
    match touched {
        Touched::All => tx.execute_batch(
            "INSERT OR IGNORE INTO temp.override_types(id)
                 SELECT source FROM graph_edges WHERE kind IN ('inherits_from', 'implements');",
        )?,
        Touched::Changed => tx.execute_batch(&format!(
            "DELETE FROM graph_edges WHERE extractor = '{EXTRACTOR}' AND source IN (
                 SELECT id FROM graph_nodes WHERE file IN (SELECT path FROM temp.changed_files));
             DELETE FROM graph_edges WHERE extractor = '{EXTRACTOR}' AND target IN (
                 SELECT id FROM graph_nodes WHERE file IN (SELECT path FROM temp.changed_files));
             INSERT OR IGNORE INTO temp.override_types(id)
                 SELECT h.source FROM graph_nodes s CROSS JOIN graph_edges h ON h.source = s.id
                 WHERE s.file IN (SELECT path FROM temp.changed_files)
                   AND h.kind IN ('inherits_from', 'implements');
             INSERT OR IGNORE INTO temp.override_types(id)
                 SELECT h.source FROM temp.affected_sources a CROSS JOIN graph_edges h ON h.source = a.id
                 WHERE h.kind IN ('inherits_from', 'implements');
             INSERT OR IGNORE INTO temp.override_types(id)
                 SELECT h.source FROM graph_nodes t CROSS JOIN graph_edges h ON h.target = t.id
                 WHERE t.file IN (SELECT path FROM temp.changed_files)
                   AND h.kind IN ('inherits_from', 'implements');
             DELETE FROM graph_edges WHERE extractor = '{EXTRACTOR}' AND target IN (
                 SELECT c.target FROM temp.override_types o
                 CROSS JOIN graph_edges c ON c.source = o.id AND c.kind = 'contains');"
        ))?,
    }
    link_pairs(tx)
}

/// The override edges of each (type, direct base) pair of `temp.override_types`:
/// each type's methods read once, matched by name in memory (a join in SQL
/// compares every method of a type with every method of its base).
fn link_pairs(tx: &Connection) -> rusqlite::Result<()> {
    let pairs: Vec<(i64, i64)> = {
        let mut statement = tx.prepare(
            "SELECT h.source, h.target FROM temp.override_types o
             CROSS JOIN graph_edges h ON h.source = o.id
             WHERE h.kind IN ('inherits_from', 'implements') AND h.target <> h.source",
        )?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut methods_of = tx.prepare_cached(
        "SELECT n.label, n.id FROM graph_edges c CROSS JOIN graph_nodes n ON n.id = c.target
         WHERE c.source = ?1 AND c.kind = 'contains' AND n.kind = 'method'",
    )?;
    let mut methods: HashMap<i64, Vec<(String, i64)>> = HashMap::new();
    let mut insert = tx.prepare_cached(&format!(
        "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence)
         VALUES (?1, ?2, 'calls', '{EXTRACTOR}', 'dispatch')"
    ))?;
    for (subtype, base) in pairs {
        for id in [subtype, base] {
            if let std::collections::hash_map::Entry::Vacant(entry) = methods.entry(id) {
                let rows = methods_of.query_map([id], |row| Ok((row.get(0)?, row.get(1)?)))?;
                entry.insert(rows.collect::<rusqlite::Result<_>>()?);
            }
        }
        let (Some(own), Some(inherited)) = (methods.get(&subtype), methods.get(&base)) else {
            continue;
        };
        let by_name: HashMap<&str, i64> = inherited
            .iter()
            .map(|(label, id)| (label.as_str(), *id))
            .collect();
        for (label, method) in own {
            if CONSTRUCTORS.iter().any(|constructor| constructor == label) {
                continue;
            }
            if let Some(base_method) = by_name.get(label.as_str()) {
                insert.execute(params![base_method, method])?;
            }
        }
    }
    Ok(())
}
