//! Every SQL statement of the supervise area: sessions with their bundles,
//! dispatches, and the area's revision.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::model::{Contents, Dispatch, DispatchStatus};
use crate::store::StoreError;

fn sql<T>(
    connection: &Connection,
    run: impl FnOnce() -> rusqlite::Result<T>,
) -> Result<T, StoreError> {
    run().map_err(|error| StoreError::on(connection, error))
}

/// A session's row.
#[derive(Debug, Clone)]
pub struct SessionRow {
    pub session_id: String,
    pub task_marker: String,
    pub persona_id: String,
    pub version: i64,
    /// The bundle's contents as stored JSON.
    pub bundle: String,
    pub created_at: String,
    pub updated_at: String,
}

impl SessionRow {
    /// The stored contents; a row this area wrote always parses.
    pub fn contents(&self) -> Result<Contents, serde_json::Error> {
        serde_json::from_str(&self.bundle)
    }
}

fn session_row(row: &Row) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        session_id: row.get(0)?,
        task_marker: row.get(1)?,
        persona_id: row.get(2)?,
        version: row.get(3)?,
        bundle: row.get(4)?,
        created_at: row.get(5)?,
        updated_at: row.get(6)?,
    })
}

const SESSION_COLUMNS: &str =
    "session_id, task_marker, persona_id, version, bundle, created_at, updated_at";

pub fn session(
    connection: &Connection,
    session_id: &str,
) -> Result<Option<SessionRow>, StoreError> {
    sql(connection, || {
        connection
            .prepare_cached(&format!(
                "SELECT {SESSION_COLUMNS} FROM supervise_sessions WHERE session_id = ?1"
            ))?
            .query_row(params![session_id], session_row)
            .optional()
    })
}

/// Sessions after `after` by id (of one task when given), each with its dispatch count.
pub fn sessions(
    connection: &Connection,
    task_marker: Option<&str>,
    after: &str,
    limit: usize,
) -> Result<Vec<(SessionRow, i64)>, StoreError> {
    sql(connection, || {
        let mut statement = connection.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS},
                    (SELECT count(*) FROM supervise_dispatches d WHERE d.session_id = s.session_id)
             FROM supervise_sessions s
             WHERE session_id > ?1 AND (?2 IS NULL OR task_marker = ?2)
             ORDER BY session_id LIMIT ?3"
        ))?;
        let rows = statement.query_map(
            params![after, task_marker, i64::try_from(limit).unwrap_or(i64::MAX)],
            |row| Ok((session_row(row)?, row.get(7)?)),
        )?;
        rows.collect()
    })
}

/// Every session's id and version, by id.
pub fn session_versions(connection: &Connection) -> Result<Vec<(String, i64)>, StoreError> {
    sql(connection, || {
        let mut statement = connection.prepare_cached(
            "SELECT session_id, version FROM supervise_sessions ORDER BY session_id",
        )?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect()
    })
}

pub fn all_sessions(connection: &Connection) -> Result<Vec<SessionRow>, StoreError> {
    sql(connection, || {
        let mut statement = connection.prepare(&format!(
            "SELECT {SESSION_COLUMNS} FROM supervise_sessions ORDER BY session_id"
        ))?;
        let rows = statement.query_map([], session_row)?;
        rows.collect()
    })
}

pub fn save_session(connection: &Connection, row: &SessionRow) -> Result<(), StoreError> {
    sql(connection, || {
        connection
            .prepare_cached(
                "INSERT INTO supervise_sessions (session_id, task_marker, persona_id, version, bundle, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (session_id) DO UPDATE SET version = excluded.version,
                     bundle = excluded.bundle, updated_at = excluded.updated_at",
            )?
            .execute(params![
                row.session_id,
                row.task_marker,
                row.persona_id,
                row.version,
                row.bundle,
                row.created_at,
                row.updated_at
            ])
            .map(|_| ())
    })
}

/// A dispatch to record, before it has its sequence number.
pub struct NewDispatch<'a> {
    pub session_id: &'a str,
    pub task_marker: &'a str,
    pub persona_id: &'a str,
    pub formula_id: &'a str,
    pub input_hash: &'a str,
    pub output_hash: &'a str,
    pub latency_ms: i64,
    pub status: DispatchStatus,
    pub at: &'a str,
    pub error: Option<&'a str>,
}

/// Appends a dispatch; answers its sequence number.
pub fn add_dispatch(connection: &Connection, dispatch: &NewDispatch) -> Result<i64, StoreError> {
    sql(connection, || {
        connection
            .prepare_cached(
                "INSERT INTO supervise_dispatches (session_id, task_marker, persona_id, formula_id,
                     input_hash, output_hash, latency_ms, status, at, error)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?
            .execute(params![
                dispatch.session_id,
                dispatch.task_marker,
                dispatch.persona_id,
                dispatch.formula_id,
                dispatch.input_hash,
                dispatch.output_hash,
                dispatch.latency_ms,
                dispatch.status.as_str(),
                dispatch.at,
                dispatch.error
            ])?;
        Ok(connection.last_insert_rowid())
    })
}

pub fn dispatch_count(connection: &Connection, session_id: &str) -> Result<i64, StoreError> {
    sql(connection, || {
        connection
            .prepare_cached("SELECT count(*) FROM supervise_dispatches WHERE session_id = ?1")?
            .query_row(params![session_id], |row| row.get(0))
    })
}

/// The latest `limit` dispatches of a session, oldest first.
pub fn latest_dispatches(
    connection: &Connection,
    session_id: &str,
    limit: usize,
) -> Result<Vec<Dispatch>, StoreError> {
    sql(connection, || {
        let mut statement = connection.prepare_cached(
            "SELECT seq, formula_id, persona_id, status, latency_ms, input_hash, output_hash, at, error
             FROM (SELECT * FROM supervise_dispatches WHERE session_id = ?1 ORDER BY seq DESC LIMIT ?2)
             ORDER BY seq",
        )?;
        let rows = statement.query_map(
            params![session_id, i64::try_from(limit).unwrap_or(i64::MAX)],
            |row| {
                Ok(Dispatch {
                    seq: row.get(0)?,
                    formula_id: row.get(1)?,
                    persona_id: row.get(2)?,
                    status: DispatchStatus::parse(&row.get::<_, String>(3)?),
                    latency_ms: row.get(4)?,
                    input_hash: row.get(5)?,
                    output_hash: row.get(6)?,
                    at: row.get(7)?,
                    error: row.get(8)?,
                })
            },
        )?;
        rows.collect()
    })
}

pub fn revision(connection: &Connection) -> Result<i64, StoreError> {
    sql(connection, || {
        connection
            .prepare_cached("SELECT value FROM supervise_revision WHERE id = 1")?
            .query_row([], |row| row.get(0))
    })
}

pub fn bump_revision(connection: &Connection) -> Result<(), StoreError> {
    sql(connection, || {
        connection
            .prepare_cached("UPDATE supervise_revision SET value = value + 1 WHERE id = 1")?
            .execute([])
            .map(|_| ())
    })
}
