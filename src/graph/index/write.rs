//! Writing one parsed file: its row, nodes, edges, references and bindings,
//! replacing what the file held before.

use super::*;

/// Replaces what the graph held about a file with its new extraction.
pub(super) fn rewrite_file(tx: &Connection, parsed: &Parsed) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM graph_nodes WHERE file = ?1", [&parsed.path])?;
    write_file(tx, parsed, None)
}

/// Writes a file's nodes, edges, references and bindings (it has none yet),
/// and adds its references to `to_resolve` when given.
pub(super) fn write_file(
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
pub(super) fn write_nodes<'p>(
    tx: &Connection,
    parsed: &'p Parsed,
) -> rusqlite::Result<HashMap<&'p str, i64>> {
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
pub(super) fn write_edges(
    tx: &Connection,
    parsed: &Parsed,
    ids: &HashMap<&str, i64>,
) -> rusqlite::Result<()> {
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
pub(super) fn write_references(
    tx: &Connection,
    parsed: &Parsed,
    ids: &HashMap<&str, i64>,
    mut to_resolve: Option<&mut Vec<Reference>>,
) -> rusqlite::Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO graph_references(source, kind, name, module, receiver) VALUES (?1, ?2, ?3, ?4, ?5)",
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
            reference.module,
            reference.receiver
        ])?;
        if let Some(to_resolve) = to_resolve.as_deref_mut() {
            to_resolve.push(Reference {
                source: *source,
                kind: reference.kind,
                name: reference.name.clone(),
                file: file.clone(),
                module: reference.module.clone(),
                receiver: reference.receiver.clone(),
                row: tx.last_insert_rowid(),
                marked_unresolved: false,
            });
        }
    }
    Ok(())
}

/// The local names the file's imports bind, kept on the file's node.
pub(super) fn write_bindings(
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
pub(super) fn write_file_row(tx: &Connection, parsed: &Parsed) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO graph_files(path, hash, language, bytes, parse_errors, indexed_at, modified_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT(path) DO UPDATE SET hash = excluded.hash, language = excluded.language, bytes = excluded.bytes,
            parse_errors = excluded.parse_errors, indexed_at = excluded.indexed_at, modified_ns = excluded.modified_ns",
        params![
            parsed.path,
            parsed.hash,
            parsed.facet,
            parsed.bytes as i64,
            parsed.extraction.parse_errors,
            crate::tools::now(),
            parsed.modified_ns
        ],
    )?;
    Ok(())
}
