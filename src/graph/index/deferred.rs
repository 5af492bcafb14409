//! Indexes built after a bulk write rather than during it: the bulk tables'
//! secondary indexes are dropped before a cold index and built once at its
//! end, and new nodes reach the full-text index in one statement.

use super::*;

/// The tables a cold index fills in bulk.
pub(super) const BULK_TABLES: &str = "('graph_nodes', 'graph_edges', 'graph_references')";

/// Drops the secondary indexes of `BULK_TABLES` and returns the statements
/// that build them again: building an index once from sorted rows is several
/// times cheaper than inserting every row into it at random. Only for a graph
/// with no nodes: a delete without its index would scan the table. The
/// statements are kept in `graph_meta` until built again, so that a run
/// that stopped in between (committing in parts) is finished by the next.
pub(super) fn defer_indexes(tx: &Connection) -> rusqlite::Result<Vec<Deferred>> {
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
pub(super) type Deferred = (String, String);

/// The indexes a run dropped and has not built again (none unless a run
/// committing in parts stopped midway).
pub(super) fn deferred_indexes(tx: &Connection) -> rusqlite::Result<Vec<Deferred>> {
    meta_json(tx, "deferred_indexes")
}

/// Builds the indexes `defer_indexes` dropped, each unless it is there
/// (say a migration made it again after a run stopped midway).
pub(super) fn build_deferred_indexes(
    tx: &Connection,
    indexes: &[Deferred],
) -> rusqlite::Result<()> {
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
pub(super) fn track_new_nodes(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS new_nodes(id INTEGER PRIMARY KEY);
         DELETE FROM temp.new_nodes;
         CREATE TEMP TRIGGER IF NOT EXISTS track_new_graph_nodes AFTER INSERT ON main.graph_nodes BEGIN
             INSERT OR IGNORE INTO temp.new_nodes(id) VALUES (new.id);
         END;",
    )
}

/// Adds the run's new nodes to the full-text index in one statement.
pub(super) fn index_new_nodes(tx: &Connection) -> rusqlite::Result<()> {
    take_new_nodes_into_fts(tx)?;
    stop_tracking_new_nodes(tx)
}

/// Adds the nodes inserted since the last call to the full-text index.
pub(super) fn take_new_nodes_into_fts(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute_batch(
        "INSERT INTO graph_nodes_fts(rowid, label, uid)
             SELECT n.id, n.label, n.uid FROM temp.new_nodes f JOIN graph_nodes n ON n.id = f.id;
         DELETE FROM temp.new_nodes;",
    )
}

pub(super) fn stop_tracking_new_nodes(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute_batch("DROP TRIGGER IF EXISTS temp.track_new_graph_nodes;")
}
