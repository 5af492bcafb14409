//! Every statement semantic search runs: which model the stored vectors
//! are of, the distilled pieces, the items' vectors and the items still
//! without one. Vectors pass through as their stored parts (scale, bytes).

use rusqlite::{Connection, OptionalExtension, params};

use crate::store::StoreError;

fn sql<T>(c: &Connection, run: impl FnOnce() -> rusqlite::Result<T>) -> Result<T, StoreError> {
    run().map_err(|error| StoreError::on(c, error))
}

/// The model the stored vectors were made with.
pub fn stored_model(c: &Connection) -> Result<Option<String>, StoreError> {
    sql(c, || {
        c.query_row("SELECT model FROM search_embedding", [], |row| row.get(0))
            .optional()
    })
}

/// Makes `model` the one the stored vectors are of: another model's go.
pub fn adopt_model(c: &Connection, model: &str) -> Result<bool, StoreError> {
    if stored_model(c)?.as_deref() == Some(model) {
        return Ok(false);
    }
    sql(c, || {
        c.execute_batch("DELETE FROM search_vectors; DELETE FROM search_piece_vectors;")?;
        c.execute(
            "INSERT INTO search_embedding(one, model) VALUES (1, ?1)
             ON CONFLICT(one) DO UPDATE SET model = excluded.model, changes = changes + 1,
                 center = NULL",
            [model],
        )
    })?;
    Ok(true)
}

/// The center the pieces of `model` were distilled less, when stored.
pub fn center(c: &Connection, model: &str) -> Result<Option<Vec<u8>>, StoreError> {
    sql(c, || {
        c.query_row(
            "SELECT center FROM search_embedding WHERE model = ?1",
            [model],
            |row| row.get::<_, Option<Vec<u8>>>(0),
        )
        .optional()
        .map(Option::flatten)
    })
}

pub fn store_center(c: &Connection, bytes: &[u8]) -> Result<(), StoreError> {
    sql(c, || {
        c.execute("UPDATE search_embedding SET center = ?1", [bytes])
            .map(drop)
    })
}

/// Every distilled piece stored: piece, scale, bytes.
pub fn each_piece(
    c: &Connection,
    mut visit: impl FnMut(i64, f64, &[u8]),
) -> Result<(), StoreError> {
    sql(c, || {
        let mut statement =
            c.prepare_cached("SELECT piece, scale, vector FROM search_piece_vectors")?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            visit(row.get(0)?, row.get(1)?, row.get_ref(2)?.as_blob()?);
        }
        Ok(())
    })
}

pub fn store_piece(c: &Connection, piece: u32, scale: f64, bytes: &[u8]) -> Result<(), StoreError> {
    sql(c, || {
        c.prepare_cached(
            "INSERT OR REPLACE INTO search_piece_vectors(piece, scale, vector) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![piece, scale, bytes])
        .map(drop)
    })
}

/// The vector of item `id`, when the item is still there.
pub fn store_vector(c: &Connection, id: i64, scale: f64, bytes: &[u8]) -> Result<(), StoreError> {
    sql(c, || {
        c.prepare_cached(
            "INSERT OR REPLACE INTO search_vectors(item, scale, vector)
             SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM search_items WHERE id = ?1)",
        )?
        .execute(params![id, scale, bytes])
        .map(drop)
    })
}

/// How many items have a vector, and how many items there are.
pub fn counts(c: &Connection) -> Result<(i64, i64), StoreError> {
    sql(c, || {
        c.query_row(
            "SELECT (SELECT count(*) FROM search_vectors), (SELECT count(*) FROM search_items)",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
    })
}

/// At most `most` items without a vector, by row id: id, name parts, words.
pub fn without_vectors(
    c: &Connection,
    most: i64,
) -> Result<Vec<(i64, String, String)>, StoreError> {
    sql(c, || {
        let mut statement = c.prepare_cached(
            "SELECT i.id, i.name_parts, i.words FROM search_items i
             WHERE NOT EXISTS (SELECT 1 FROM search_vectors v WHERE v.item = i.id)
             ORDER BY i.id LIMIT ?1",
        )?;
        let rows =
            statement.query_map([most], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
        rows.collect()
    })
}

/// The model the stored vectors are of, and how many times they changed.
pub fn vectors_state(c: &Connection) -> Result<Option<(String, i64)>, StoreError> {
    sql(c, || {
        c.query_row("SELECT model, changes FROM search_embedding", [], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()
    })
}

/// How many vectors are stored, and the highest item id among them.
pub fn vectors_held(c: &Connection) -> Result<(i64, i64), StoreError> {
    sql(c, || {
        c.query_row(
            "SELECT count(*), coalesce(max(item), 0) FROM search_vectors",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
    })
}

/// How many vectors are of items after row `id`.
pub fn vectors_after(c: &Connection, id: i64) -> Result<i64, StoreError> {
    sql(c, || {
        c.query_row(
            "SELECT count(*) FROM search_vectors WHERE item > ?1",
            [id],
            |row| row.get(0),
        )
    })
}

/// Every vector of an item after row `id`, by row id: id, scale, bytes.
pub fn each_vector_after(
    c: &Connection,
    id: i64,
    mut visit: impl FnMut(i64, f64, &[u8]),
) -> Result<(), StoreError> {
    sql(c, || {
        let mut statement = c.prepare_cached(
            "SELECT item, scale, vector FROM search_vectors WHERE item > ?1 ORDER BY item",
        )?;
        let mut rows = statement.query([id])?;
        while let Some(row) = rows.next()? {
            visit(row.get(0)?, row.get(1)?, row.get_ref(2)?.as_blob()?);
        }
        Ok(())
    })
}
