//! The graph's reads: every query its tools make of the graph's tables (the
//! index and the resolver write them). Keeping the SQL here means another
//! storage for the graph is a change inside this file, the indexer and the
//! resolver, not across the tools.

use rusqlite::{Connection, OptionalExtension, params};
use std::collections::BTreeSet;

use crate::store::StoreError;
use crate::tools::ToolError;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A node as every graph answer shows it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct GraphNode {
    pub uid: String,
    pub kind: String,
    pub label: String,
    /// Repository-relative file, when the node lives in one.
    pub path: Option<String>,
    pub line: Option<u32>,
}

fn sql_error(connection: &Connection) -> impl Fn(rusqlite::Error) -> ToolError + '_ {
    move |error| ToolError::from(StoreError::on(connection, error))
}

pub(super) fn node_from_row(row: &rusqlite::Row) -> rusqlite::Result<GraphNode> {
    node_at(row, 0)
}

/// A node from the five `NODE_COLUMNS` starting at column `first`.
pub(super) fn node_at(row: &rusqlite::Row, first: usize) -> rusqlite::Result<GraphNode> {
    Ok(GraphNode {
        uid: row.get(first)?,
        kind: row.get(first + 1)?,
        label: row.get(first + 2)?,
        path: row.get(first + 3)?,
        line: row.get(first + 4)?,
    })
}

pub(super) const NODE_COLUMNS: &str = "n.uid, n.kind, n.label, n.file, n.line_start";

/// How many nodes bear exactly this name.
pub(super) fn count_named(connection: &Connection, name: &str) -> Result<usize, ToolError> {
    let count: i64 = connection
        .query_row(
            "SELECT count(*) FROM graph_nodes WHERE label = ?1",
            params![name],
            |row| row.get(0),
        )
        .map_err(|error| StoreError::on(connection, error))?;
    Ok(count as usize)
}

pub(super) fn node_by_id(connection: &Connection, id: i64) -> Result<GraphNode, ToolError> {
    connection
        .query_row(
            "SELECT uid, kind, label, file, line_start FROM graph_nodes WHERE id = ?1",
            [id],
            |row| node_at(row, 0),
        )
        .map_err(|error| ToolError::from(StoreError::on(connection, error)))
}

pub(super) fn span(c: &Connection, id: i64) -> Result<(u32, u32), ToolError> {
    c.query_row(
        "SELECT coalesce(line_start, 1), coalesce(line_end, line_start, 1) FROM graph_nodes WHERE id = ?1",
        [id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
    .map_err(sql_error(c))
}

/// Nodes that call, extend or implement `id`: (uid, file, first line, last line).
pub(super) fn callers(
    c: &Connection,
    id: i64,
) -> Result<Vec<(String, String, u32, u32)>, ToolError> {
    let run = || -> rusqlite::Result<Vec<(String, String, u32, u32)>> {
        let mut statement = c.prepare_cached(
            "SELECT s.uid, s.file, coalesce(s.line_start, 1), coalesce(s.line_end, s.line_start, 1)
             FROM graph_edges e JOIN graph_nodes s ON s.id = e.source
             WHERE e.target = ?1 AND e.kind IN ('calls', 'inherits_from', 'implements') AND s.file IS NOT NULL
             ORDER BY s.file, s.line_start",
        )?;
        let rows = statement.query_map([id], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

/// The definitions whose calls, bases or imports still name `name` (as it
/// is, not qualified: the index on names answers that) without resolving
/// it, what referred to a definition now gone, each with the kind of its
/// reference.
pub(super) fn referrers_by_name(
    c: &Connection,
    name: &str,
) -> Result<Vec<(GraphNode, String)>, ToolError> {
    let run = || -> rusqlite::Result<Vec<(GraphNode, String)>> {
        let mut statement = c.prepare_cached(&format!(
            "SELECT DISTINCT {NODE_COLUMNS}, r.kind FROM graph_references r
             JOIN graph_nodes n ON n.id = r.source
             WHERE r.name = ?1
             ORDER BY n.file, n.line_start LIMIT 500"
        ))?;
        let rows = statement.query_map([name], |row| Ok((node_at(row, 0)?, row.get(5)?)))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

/// The local names file `path` binds `symbol` to, other than its own name.
pub(super) fn aliases_in(
    c: &Connection,
    path: &str,
    symbol: &str,
) -> Result<Vec<String>, ToolError> {
    let run = || -> rusqlite::Result<Vec<String>> {
        let mut statement = c.prepare_cached(
            "SELECT DISTINCT b.local FROM graph_bindings b JOIN graph_nodes f ON f.id = b.file
             WHERE f.file = ?1 AND f.kind = 'file' AND b.symbol = ?2 AND b.local != ?2",
        )?;
        let rows = statement.query_map(params![path, symbol], |row| row.get(0))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

/// Files that import the symbol's file and bind its name.
pub(super) fn importers(c: &Connection, id: i64, name: &str) -> Result<Vec<String>, ToolError> {
    let run = || -> rusqlite::Result<Vec<String>> {
        let mut statement = c.prepare_cached(
            "SELECT DISTINCT s.file FROM graph_nodes t
             JOIN graph_nodes f ON f.file = t.file AND f.kind IN ('file', 'doc_file')
             JOIN graph_edges e ON e.target = f.id AND e.kind = 'imports'
             JOIN graph_nodes s ON s.id = e.source
             JOIN graph_bindings b ON b.file = s.id AND (b.symbol = ?2 OR b.local = ?2)
             WHERE t.id = ?1 ORDER BY s.file",
        )?;
        let rows = statement.query_map(params![id, name], |row| row.get(0))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

pub(super) fn indexed_files(c: &Connection) -> Result<Vec<(String, String)>, ToolError> {
    let run = || -> rusqlite::Result<Vec<(String, String)>> {
        let mut statement =
            c.prepare_cached("SELECT path, language FROM graph_files ORDER BY path")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

pub(super) fn callees(c: &Connection, id: i64) -> Result<Vec<(i64, GraphNode, String)>, ToolError> {
    let run = || -> rusqlite::Result<Vec<(i64, GraphNode, String)>> {
        let mut statement = c.prepare_cached(
            "SELECT n.id, n.uid, n.kind, n.label, n.file, n.line_start, e.confidence
             FROM graph_edges e JOIN graph_nodes n ON n.id = e.target
             WHERE e.source = ?1 AND e.kind = 'calls' ORDER BY n.file, n.line_start, n.uid",
        )?;
        let rows =
            statement.query_map([id], |row| Ok((row.get(0)?, node_at(row, 1)?, row.get(6)?)))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

/// A node's neighbourhood as `direction:kind:node` keys.
pub(super) fn neighbour_keys(c: &Connection, id: i64) -> Result<BTreeSet<String>, ToolError> {
    let run = || -> rusqlite::Result<BTreeSet<String>> {
        let mut statement = c.prepare_cached(
            "SELECT 'out:' || kind || ':' || target FROM graph_edges WHERE source = ?1 AND kind <> 'contains'
             UNION ALL SELECT 'in:' || kind || ':' || source FROM graph_edges WHERE target = ?1 AND kind <> 'contains'",
        )?;
        let rows = statement.query_map([id], |row| row.get(0))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

/// Nodes that share a callee, a caller or a base with `id` (at most 500).
pub(super) fn structural_candidates(
    c: &Connection,
    id: i64,
) -> Result<Vec<(i64, GraphNode)>, ToolError> {
    let run = || -> rusqlite::Result<Vec<(i64, GraphNode)>> {
        let mut statement = c.prepare_cached(
            "SELECT DISTINCT n.id, n.uid, n.kind, n.label, n.file, n.line_start FROM (
                 SELECT other.source AS id FROM graph_edges mine JOIN graph_edges other
                     ON other.target = mine.target AND other.kind = mine.kind
                     WHERE mine.source = ?1 AND mine.kind <> 'contains'
                 UNION SELECT other.target FROM graph_edges mine JOIN graph_edges other
                     ON other.source = mine.source AND other.kind = mine.kind
                     WHERE mine.target = ?1 AND mine.kind <> 'contains'
             ) shared JOIN graph_nodes n ON n.id = shared.id LIMIT 500",
        )?;
        let rows = statement.query_map([id], |row| Ok((row.get(0)?, node_at(row, 1)?)))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

/// Nodes whose names share a word with `words` (at most 200).
pub(super) fn lexical_candidates(
    c: &Connection,
    words: &BTreeSet<String>,
) -> Result<Vec<(i64, GraphNode)>, ToolError> {
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let query = words
        .iter()
        .map(|w| format!("label:\"{w}\"*"))
        .collect::<Vec<_>>()
        .join(" OR ");
    let run = || -> rusqlite::Result<Vec<(i64, GraphNode)>> {
        let mut statement = c.prepare_cached(
            "SELECT n.id, n.uid, n.kind, n.label, n.file, n.line_start FROM graph_nodes_fts f
             JOIN graph_nodes n ON n.id = f.rowid WHERE graph_nodes_fts MATCH ?1 ORDER BY bm25(graph_nodes_fts) LIMIT 200",
        )?;
        let rows = statement.query_map([query], |row| Ok((row.get(0)?, node_at(row, 1)?)))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

/// Zero-edge nodes that are not folders or external stubs and belong to no indexed file.
pub(super) mod phantom {
    pub const SELECT: &str =
        "SELECT n.uid FROM graph_nodes n WHERE n.kind NOT IN ('external', 'folder')
      AND NOT EXISTS (SELECT 1 FROM graph_edges e WHERE e.source = n.id OR e.target = n.id)
      AND (n.file IS NULL OR n.file NOT IN (SELECT path FROM graph_files))";
    pub const DELETE: &str = "DELETE FROM graph_nodes WHERE id IN (SELECT n.id FROM graph_nodes n
      WHERE n.kind NOT IN ('external', 'folder')
      AND NOT EXISTS (SELECT 1 FROM graph_edges e WHERE e.source = n.id OR e.target = n.id)
      AND (n.file IS NULL OR n.file NOT IN (SELECT path FROM graph_files)))";
}

/// (category, query returning sample rows as text, delete statement when fixable)
pub(super) const CHECKS: &[(&str, &str, Option<&str>)] = &[
    (
        "dangling_source",
        "SELECT CAST(e.source AS TEXT) FROM graph_edges e WHERE e.source NOT IN (SELECT id FROM graph_nodes)",
        Some("DELETE FROM graph_edges WHERE source NOT IN (SELECT id FROM graph_nodes)"),
    ),
    (
        "dangling_target",
        "SELECT CAST(e.target AS TEXT) FROM graph_edges e WHERE e.target NOT IN (SELECT id FROM graph_nodes)",
        Some("DELETE FROM graph_edges WHERE target NOT IN (SELECT id FROM graph_nodes)"),
    ),
    (
        "duplicate_edges",
        "SELECT CAST(source AS TEXT) || '->' || CAST(target AS TEXT) FROM graph_edges
         GROUP BY source, target, kind, extractor HAVING count(*) > 1",
        None,
    ),
    (
        "duplicate_contains",
        "SELECT n.uid FROM graph_edges e JOIN graph_nodes n ON n.id = e.target
         WHERE e.kind = 'contains' GROUP BY e.target HAVING count(*) > 1",
        Some(
            "DELETE FROM graph_edges WHERE kind = 'contains' AND EXISTS (SELECT 1 FROM graph_edges o
             WHERE o.kind = 'contains' AND o.target = graph_edges.target AND o.source < graph_edges.source)",
        ),
    ),
    (
        "self_loops",
        "SELECT n.uid FROM graph_edges e JOIN graph_nodes n ON n.id = e.source WHERE e.source = e.target",
        None,
    ),
    (
        "orphaned_inrepo",
        "SELECT n.uid FROM graph_nodes n WHERE n.kind NOT IN ('external', 'folder')
      AND NOT EXISTS (SELECT 1 FROM graph_edges e WHERE e.source = n.id OR e.target = n.id)
      AND n.file IN (SELECT path FROM graph_files)",
        None,
    ),
    (
        "orphaned_phantom",
        phantom::SELECT,
        Some(phantom::DELETE),
    ),
    (
        // per-file extraction times are not recorded, so nothing is listed here yet
        "slowest_extractions",
        "SELECT path FROM graph_files WHERE 0",
        None,
    ),
    (
        "orphaned_external_unresolved",
        "SELECT n.uid FROM graph_nodes n WHERE n.kind = 'external' AND NOT EXISTS (SELECT 1 FROM graph_edges e WHERE e.source = n.id OR e.target = n.id)",
        Some(
            "DELETE FROM graph_nodes WHERE kind = 'external' AND id NOT IN (SELECT source FROM graph_edges UNION SELECT target FROM graph_edges)",
        ),
    ),
    (
        "malformed_uid_path",
        "SELECT uid FROM graph_nodes WHERE uid LIKE '%../%' OR uid GLOB '*`*' OR uid GLOB '*[ \t]*' OR coalesce(file, '') LIKE '%../%'",
        Some(
            "DELETE FROM graph_nodes WHERE uid LIKE '%../%' OR uid GLOB '*`*' OR uid GLOB '*[ \t]*' OR coalesce(file, '') LIKE '%../%'",
        ),
    ),
    (
        "files_with_parse_errors",
        "SELECT path FROM graph_files WHERE parse_errors > 0",
        None,
    ),
];

/// Nodes whose names match the full-text query `fts` (of `kind`, when given),
/// the exact name first, then by rank.
/// How a search names the nodes it wants.
pub(super) enum NameMatch<'a> {
    /// An FTS5 query over the words of names.
    Words(String),
    /// Names holding this text as written.
    Holding(&'a str),
}

pub(super) fn search_nodes(
    c: &Connection,
    wanted: &NameMatch,
    kind: Option<&str>,
    exact: &str,
    limit: u32,
    offset: usize,
) -> Result<Vec<GraphNode>, StoreError> {
    let run = || -> rusqlite::Result<Vec<GraphNode>> {
        let (sql, text) = match wanted {
            NameMatch::Words(fts) => (
                format!(
                    "SELECT {NODE_COLUMNS} FROM graph_nodes_fts f JOIN graph_nodes n ON n.id = f.rowid
                     WHERE graph_nodes_fts MATCH ?1 AND (?2 IS NULL OR n.kind = ?2)
                     ORDER BY (n.label = ?3) DESC, bm25(graph_nodes_fts), length(n.uid), n.uid LIMIT ?4 OFFSET ?5"
                ),
                fts.as_str(),
            ),
            NameMatch::Holding(text) => (
                format!(
                    "SELECT {NODE_COLUMNS} FROM graph_nodes n
                     WHERE instr(n.label, ?1) > 0 AND (?2 IS NULL OR n.kind = ?2)
                     ORDER BY (n.label = ?3) DESC, length(n.uid), n.uid LIMIT ?4 OFFSET ?5"
                ),
                *text,
            ),
        };
        let mut statement = c.prepare_cached(&sql)?;
        let rows = statement.query_map(
            params![text, kind, exact, limit, offset as i64],
            node_from_row,
        )?;
        rows.collect()
    };
    run().map_err(|error| StoreError::on(c, error))
}

/// The node with this uid, and its row id.
pub(super) fn node_by_uid(
    c: &Connection,
    uid: &str,
) -> Result<Option<(i64, GraphNode)>, StoreError> {
    c.query_row(
        &format!("SELECT n.id, {NODE_COLUMNS} FROM graph_nodes n WHERE n.uid = ?1"),
        [uid],
        |row| Ok((row.get(0)?, node_at(row, 1)?)),
    )
    .optional()
    .map_err(|error| StoreError::on(c, error))
}

/// Up to ten nodes whose names match `fts`, those named exactly `exact` first.
pub(super) fn nodes_matching(
    c: &Connection,
    fts: &str,
    exact: &str,
) -> Result<Vec<(i64, GraphNode)>, StoreError> {
    let run = || -> rusqlite::Result<Vec<(i64, GraphNode)>> {
        let mut statement = c.prepare_cached(&format!(
            "SELECT n.id, {NODE_COLUMNS} FROM graph_nodes_fts f JOIN graph_nodes n ON n.id = f.rowid
             WHERE graph_nodes_fts MATCH ?1 ORDER BY (n.label = ?2) DESC, bm25(graph_nodes_fts) LIMIT 10"
        ))?;
        let rows = statement.query_map(params![fts, exact], |row| {
            Ok((row.get(0)?, node_at(row, 1)?))
        })?;
        rows.collect()
    };
    run().map_err(|error| StoreError::on(c, error))
}

/// The nodes one edge away from `id` (its targets when `outgoing`, else its
/// sources): row id, node, edge kind and confidence, by kind then uid.
pub(super) fn neighbours(
    c: &Connection,
    id: i64,
    outgoing: bool,
) -> Result<Vec<(i64, GraphNode, String, String)>, StoreError> {
    let sql = if outgoing {
        const OUT: &str = "SELECT n.id, n.uid, n.kind, n.label, n.file, n.line_start, e.kind, e.confidence
             FROM graph_edges e JOIN graph_nodes n ON n.id = e.target WHERE e.source = ?1 ORDER BY e.kind, n.uid";
        OUT
    } else {
        const IN: &str = "SELECT n.id, n.uid, n.kind, n.label, n.file, n.line_start, e.kind, e.confidence
             FROM graph_edges e JOIN graph_nodes n ON n.id = e.source WHERE e.target = ?1 ORDER BY e.kind, n.uid";
        IN
    };
    let run = || -> rusqlite::Result<Vec<(i64, GraphNode, String, String)>> {
        let mut statement = c.prepare_cached(sql)?;
        let rows = statement.query_map([id], |row| {
            Ok((row.get(0)?, node_at(row, 1)?, row.get(6)?, row.get(7)?))
        })?;
        rows.collect()
    };
    run().map_err(|error| StoreError::on(c, error))
}

/// The other ends of `id`'s edges (targets when `outgoing`, else sources) with
/// each edge's kind.
pub(super) fn edge_ends(
    c: &Connection,
    id: i64,
    outgoing: bool,
) -> Result<Vec<(i64, String)>, StoreError> {
    let sql = if outgoing {
        "SELECT target, kind FROM graph_edges WHERE source = ?1"
    } else {
        "SELECT source, kind FROM graph_edges WHERE target = ?1"
    };
    let run = || -> rusqlite::Result<Vec<(i64, String)>> {
        let mut statement = c.prepare_cached(sql)?;
        let rows = statement.query_map([id], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect()
    };
    run().map_err(|error| StoreError::on(c, error))
}

/// The rows one doctor check's query finds.
pub(super) fn check_rows(c: &Connection, sql: &str) -> Result<Vec<String>, StoreError> {
    let run = || -> rusqlite::Result<Vec<String>> {
        let mut statement = c.prepare(sql)?;
        let rows = statement.query_map([], |row| row.get(0))?;
        rows.collect()
    };
    run().map_err(|error| StoreError::on(c, error))
}

/// Every indexed file's path.
pub(super) fn indexed_paths(c: &Connection) -> Result<Vec<String>, StoreError> {
    check_rows(c, "SELECT path FROM graph_files")
}

/// How many nodes and edges the graph holds.
pub(super) fn sizes(c: &Connection) -> Result<(u64, u64), StoreError> {
    let count = |sql: &str| {
        c.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
    };
    let run = || -> rusqlite::Result<(u64, u64)> {
        Ok((
            count("SELECT count(*) FROM graph_nodes")?,
            count("SELECT count(*) FROM graph_edges")?,
        ))
    };
    run().map_err(|error| StoreError::on(c, error))
}

/// Deletes the rows of the fixable checks in `chosen`, and the nodes and rows
/// of the `stale` files when `stale_paths` is chosen; the rows deleted.
pub(super) fn delete_fixable(
    tx: &Connection,
    chosen: &[&str],
    stale: &[String],
) -> Result<u64, StoreError> {
    let run = || -> rusqlite::Result<u64> {
        let mut deleted = 0;
        for (category, _, delete) in CHECKS {
            if let Some(delete) = delete
                && chosen.contains(category)
            {
                deleted += tx.execute(delete, [])? as u64;
            }
        }
        if chosen.contains(&"stale_paths") {
            for path in stale {
                deleted +=
                    tx.execute("DELETE FROM graph_nodes WHERE file = ?1", params![path])? as u64;
                tx.execute("DELETE FROM graph_files WHERE path = ?1", params![path])?;
            }
        }
        if deleted > 0 {
            super::index::bump_revision(tx)?;
        }
        Ok(deleted)
    };
    run().map_err(|error| StoreError::on(tx, error))
}

/// Every indexed file: its path, content hash and language, by path (what
/// areas that read the graph, such as search, follow).
pub fn files_with_hashes(c: &Connection) -> Result<Vec<(String, String, String)>, StoreError> {
    let run = || -> rusqlite::Result<Vec<(String, String, String)>> {
        let mut statement =
            c.prepare_cached("SELECT path, hash, language FROM graph_files ORDER BY path")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
        rows.collect()
    };
    run().map_err(|error| StoreError::on(c, error))
}

/// The nodes that live in one file (the file itself and its symbols), by line.
pub fn nodes_in_file(c: &Connection, path: &str) -> Result<Vec<GraphNode>, StoreError> {
    let run = || -> rusqlite::Result<Vec<GraphNode>> {
        let mut statement = c.prepare_cached(&format!(
            "SELECT {NODE_COLUMNS} FROM graph_nodes n WHERE n.file = ?1 ORDER BY n.line_start, n.uid"
        ))?;
        let rows = statement.query_map([path], node_from_row)?;
        rows.collect()
    };
    run().map_err(|error| StoreError::on(c, error))
}

/// Call sites resolution left unlinked that name any of `labels`.
pub fn unresolved_calls_named(c: &Connection, labels: &[&str]) -> rusqlite::Result<u64> {
    let mut count = c.prepare_cached(
        "SELECT count(*) FROM graph_references WHERE name = ?1 AND kind = 'calls' AND unresolved",
    )?;
    let mut total = 0;
    for label in labels {
        total += count.query_row([label], |row| row.get::<_, i64>(0))? as u64;
    }
    Ok(total)
}
