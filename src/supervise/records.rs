//! Every SQL statement of the supervise area: sessions with their bundles,
//! dispatches, and the area's revision.

use super::model::{Contents, Dispatch, DispatchStatus};
use crate::store::{Row, Session, StoreError};

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

fn session_row(row: &Row) -> Result<SessionRow, StoreError> {
    Ok(SessionRow {
        session_id: row.text(0)?,
        task_marker: row.text(1)?,
        persona_id: row.text(2)?,
        version: row.int(3)?,
        bundle: row.text(4)?,
        created_at: row.text(5)?,
        updated_at: row.text(6)?,
    })
}

const SESSION_COLUMNS: &str =
    "session_id, task_marker, persona_id, version, bundle, created_at, updated_at";

pub fn session(session: &Session, session_id: &str) -> Result<Option<SessionRow>, StoreError> {
    session
        .query_opt(
            &format!("SELECT {SESSION_COLUMNS} FROM supervise_sessions WHERE session_id = ?1"),
            &[session_id.into()],
        )?
        .as_ref()
        .map(session_row)
        .transpose()
}

/// Sessions after `after` by id (of one task when given), each with its dispatch count.
pub fn sessions(
    session: &Session,
    task_marker: Option<&str>,
    after: &str,
    limit: usize,
) -> Result<Vec<(SessionRow, i64)>, StoreError> {
    session
        .query(
            &format!(
                "SELECT {SESSION_COLUMNS},
                        (SELECT count(*) FROM supervise_dispatches d WHERE d.session_id = s.session_id)
                 FROM supervise_sessions s
                 WHERE session_id > ?1 AND (CAST(?2 AS TEXT) IS NULL OR task_marker = ?2)
                 ORDER BY session_id LIMIT ?3"
            ),
            &[
                after.into(),
                task_marker.into(),
                i64::try_from(limit).unwrap_or(i64::MAX).into(),
            ],
        )?
        .iter()
        .map(|row| Ok((session_row(row)?, row.int(7)?)))
        .collect()
}

/// Every session's id and version, by id.
pub fn session_versions(session: &Session) -> Result<Vec<(String, i64)>, StoreError> {
    session
        .query(
            "SELECT session_id, version FROM supervise_sessions ORDER BY session_id",
            &[],
        )?
        .iter()
        .map(|row| Ok((row.text(0)?, row.int(1)?)))
        .collect()
}

pub fn all_sessions(session: &Session) -> Result<Vec<SessionRow>, StoreError> {
    session
        .query(
            &format!("SELECT {SESSION_COLUMNS} FROM supervise_sessions ORDER BY session_id"),
            &[],
        )?
        .iter()
        .map(session_row)
        .collect()
}

pub fn save_session(session: &Session, row: &SessionRow) -> Result<(), StoreError> {
    session.execute(
        "INSERT INTO supervise_sessions (session_id, task_marker, persona_id, version, bundle, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (session_id) DO UPDATE SET version = excluded.version,
             bundle = excluded.bundle, updated_at = excluded.updated_at",
        &[
            (&row.session_id).into(),
            (&row.task_marker).into(),
            (&row.persona_id).into(),
            row.version.into(),
            (&row.bundle).into(),
            (&row.created_at).into(),
            (&row.updated_at).into(),
        ],
    )?;
    Ok(())
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
pub fn add_dispatch(session: &Session, dispatch: &NewDispatch) -> Result<i64, StoreError> {
    Ok(session
        .query_one(
            "INSERT INTO supervise_dispatches (session_id, task_marker, persona_id, formula_id,
                 input_hash, output_hash, latency_ms, status, at, error)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             RETURNING seq",
            &[
                dispatch.session_id.into(),
                dispatch.task_marker.into(),
                dispatch.persona_id.into(),
                dispatch.formula_id.into(),
                dispatch.input_hash.into(),
                dispatch.output_hash.into(),
                dispatch.latency_ms.into(),
                dispatch.status.as_str().into(),
                dispatch.at.into(),
                dispatch.error.into(),
            ],
        )?
        .int(0)?)
}

pub fn dispatch_count(session: &Session, session_id: &str) -> Result<i64, StoreError> {
    Ok(session
        .query_one(
            "SELECT count(*) FROM supervise_dispatches WHERE session_id = ?1",
            &[session_id.into()],
        )?
        .int(0)?)
}

/// The latest `limit` dispatches of a session, oldest first.
pub fn latest_dispatches(
    session: &Session,
    session_id: &str,
    limit: usize,
) -> Result<Vec<Dispatch>, StoreError> {
    session
        .query(
            "SELECT seq, formula_id, persona_id, status, latency_ms, input_hash, output_hash, at, error
             FROM (SELECT * FROM supervise_dispatches WHERE session_id = ?1 ORDER BY seq DESC LIMIT ?2) AS latest
             ORDER BY seq",
            &[
                session_id.into(),
                i64::try_from(limit).unwrap_or(i64::MAX).into(),
            ],
        )?
        .iter()
        .map(|row| {
            Ok(Dispatch {
                seq: row.int(0)?,
                formula_id: row.text(1)?,
                persona_id: row.text(2)?,
                status: DispatchStatus::parse(&row.text(3)?),
                latency_ms: row.int(4)?,
                input_hash: row.text(5)?,
                output_hash: row.text(6)?,
                at: row.text(7)?,
                error: row.opt_text(8)?,
            })
        })
        .collect()
}

pub fn revision(session: &Session) -> Result<i64, StoreError> {
    Ok(session
        .query_one("SELECT value FROM supervise_revision WHERE id = 1", &[])?
        .int(0)?)
}

pub fn bump_revision(session: &Session) -> Result<(), StoreError> {
    session.execute(
        "UPDATE supervise_revision SET value = value + 1 WHERE id = 1",
        &[],
    )?;
    Ok(())
}
