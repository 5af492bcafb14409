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
const CONSTRUCTORS: &str =
    "'__init__', '__new__', 'constructor', 'init', 'initialize', '__construct', 'new'";

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
            "DELETE FROM graph_edges WHERE extractor = '{EXTRACTOR}' AND (
                 source IN (SELECT id FROM graph_nodes WHERE file IN (SELECT path FROM temp.changed_files))
                 OR target IN (SELECT id FROM graph_nodes WHERE file IN (SELECT path FROM temp.changed_files)));
             INSERT OR IGNORE INTO temp.override_types(id)
                 SELECT h.source FROM graph_nodes s JOIN graph_edges h ON h.source = s.id
                 WHERE s.file IN (SELECT path FROM temp.changed_files)
                   AND h.kind IN ('inherits_from', 'implements');
             INSERT OR IGNORE INTO temp.override_types(id)
                 SELECT h.source FROM temp.affected_sources a JOIN graph_edges h ON h.source = a.id
                 WHERE h.kind IN ('inherits_from', 'implements');
             INSERT OR IGNORE INTO temp.override_types(id)
                 SELECT h.source FROM graph_nodes t JOIN graph_edges h ON h.target = t.id
                 WHERE t.file IN (SELECT path FROM temp.changed_files)
                   AND h.kind IN ('inherits_from', 'implements');
             DELETE FROM graph_edges WHERE extractor = '{EXTRACTOR}' AND target IN (
                 SELECT c.target FROM temp.override_types o
                 JOIN graph_edges c ON c.source = o.id AND c.kind = 'contains');"
        ))?,
    }
    tx.execute(
        &format!(
            "INSERT OR IGNORE INTO graph_edges(source, target, kind, extractor, confidence)
             SELECT base_method.id, method.id, 'calls', '{EXTRACTOR}', 'dispatch'
             FROM temp.override_types o
             JOIN graph_edges h ON h.source = o.id AND h.kind IN ('inherits_from', 'implements')
             JOIN graph_edges c ON c.source = h.source AND c.kind = 'contains'
             JOIN graph_nodes method ON method.id = c.target AND method.kind = 'method'
             JOIN graph_edges bc ON bc.source = h.target AND bc.kind = 'contains'
             JOIN graph_nodes base_method ON base_method.id = bc.target
                 AND base_method.kind = 'method' AND base_method.label = method.label
             WHERE h.target <> h.source AND method.label NOT IN ({CONSTRUCTORS})"
        ),
        [],
    )?;
    Ok(())
}
