//! Changing a bundle: one transaction reads the session's row, changes its
//! contents, bumps its version and appends the dispatch, so recorders racing
//! on one session are serialised by the database and none is lost; the
//! bundle file is rewritten after the commit.

use serde_json::{Value, json};

use super::files;
use super::model::{Contents, DispatchStatus, Filled};
use super::records::{self, NewDispatch, SessionRow};
use super::roles::Roles;
use crate::store::SharedStore;
use crate::tools::{HubConfig, ToolError, now};

/// Largest `output_json` accepted.
pub const MAX_OUTPUT_BYTES: usize = 1 << 20;
/// How much of a failed run's output its dispatch keeps as the error.
const ERROR_EXCERPT_CHARS: usize = 1000;

/// A session ID names a file: letters, digits, `_`, `.`, `-`, not leading with a dot.
pub fn check_session_id(session_id: &str) -> Result<(), ToolError> {
    let mut bytes = session_id.bytes();
    let starts_well = bytes.next().is_some_and(|b| b.is_ascii_alphanumeric());
    let rest_well = bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if starts_well && rest_well && session_id.len() <= 128 {
        return Ok(());
    }
    Err(ToolError::invalid(
        "session_id",
        "1 to 128 letters, digits, '_', '.' or '-', starting with a letter or digit (it names the bundle file)",
    ))
}

pub fn check_text(field: &str, text: &str, max_chars: usize) -> Result<(), ToolError> {
    if text.chars().count() > max_chars {
        return Err(ToolError::invalid(
            field,
            format!("at most {max_chars} characters"),
        ));
    }
    crate::tools::text::check_visible_name(field, text)
}

/// `output_json` parsed, or a refusal naming its size or the line and column of its fault.
pub fn parse_output(output_json: &str) -> Result<Value, ToolError> {
    if output_json.len() > MAX_OUTPUT_BYTES {
        return Err(ToolError::invalid(
            "output_json",
            format!(
                "at most 1 MiB of JSON text (this one is {} bytes); keep large artefacts in files and record their paths",
                output_json.len()
            ),
        ));
    }
    serde_json::from_str(output_json).map_err(|error| {
        ToolError::invalid(
            "output_json",
            format!(
                "JSON text; {error} (line {}, column {})",
                error.line(),
                error.column()
            ),
        )
        .with_details(
            json!({"field": "output_json", "line": error.line(), "column": error.column()}),
        )
    })
}

/// One formula-agent's output, checked.
pub struct Output<'a> {
    pub session_id: &'a str,
    pub task_marker: &'a str,
    pub persona_id: &'a str,
    pub formula_id: &'a str,
    pub output_json: &'a str,
    pub output: Value,
    pub status: DispatchStatus,
    pub latency_ms: i64,
}

/// What a recorded output did to its bundle.
pub struct Outcome {
    pub status: DispatchStatus,
    pub field: Option<String>,
    pub degraded: bool,
    pub error: Option<String>,
    pub version: i64,
    pub seq: i64,
    pub filled: usize,
}

/// Records `output` into its session's bundle (made on the first output).
pub fn record_output(
    store: &SharedStore,
    roles: &Roles,
    output: &Output,
) -> Result<Outcome, ToolError> {
    let role = roles.get(output.formula_id)?;
    let (status, error) = match output.status {
        DispatchStatus::Ok => match role.refusal(&output.output) {
            None => (DispatchStatus::Ok, None),
            Some(refusal) => (DispatchStatus::Fail, Some(refusal)),
        },
        DispatchStatus::Timeout => (DispatchStatus::Timeout, Some("timeout".to_string())),
        DispatchStatus::Fail => (
            DispatchStatus::Fail,
            Some(
                output
                    .output_json
                    .chars()
                    .take(ERROR_EXCERPT_CHARS)
                    .collect(),
            ),
        ),
    };
    let degraded = match output.status {
        DispatchStatus::Ok => status == DispatchStatus::Fail,
        DispatchStatus::Timeout => true,
        DispatchStatus::Fail => false,
    };
    let at = now();
    let input_hash = blake3::hash(
        json!([
            output.session_id,
            output.task_marker,
            output.persona_id,
            output.formula_id
        ])
        .to_string()
        .as_bytes(),
    )
    .to_hex()
    .to_string();
    let output_hash = blake3::hash(output.output_json.as_bytes())
        .to_hex()
        .to_string();
    store.write(|tx| -> Result<Outcome, ToolError> {
        let (mut row, mut contents) = session_for(
            tx,
            output.session_id,
            output.task_marker,
            output.persona_id,
            &at,
        )?;
        let field = (status == DispatchStatus::Ok).then(|| role.field.clone());
        if let Some(field) = &field {
            contents.slots.insert(
                field.clone(),
                Filled {
                    formula_id: output.formula_id.to_string(),
                    output: output.output.clone(),
                    at: at.clone(),
                },
            );
        }
        if degraded
            && !contents
                .degraded_formulas
                .iter()
                .any(|f| f == output.formula_id)
        {
            contents
                .degraded_formulas
                .push(output.formula_id.to_string());
        }
        save(tx, &mut row, &contents, &at)?;
        let seq = records::add_dispatch(
            tx,
            &NewDispatch {
                session_id: output.session_id,
                task_marker: &row.task_marker,
                persona_id: output.persona_id,
                formula_id: output.formula_id,
                input_hash: &input_hash,
                output_hash: &output_hash,
                latency_ms: output.latency_ms,
                status,
                at: &at,
                error: error.as_deref(),
            },
        )?;
        Ok(Outcome {
            status,
            field,
            degraded,
            error: error.clone(),
            version: row.version,
            seq,
            filled: contents.slots.len(),
        })
    })
}

/// Changes an existing session's accumulators with `change`; answers the
/// new version and the contents.
pub fn note(
    store: &SharedStore,
    session_id: &str,
    change: impl FnOnce(&mut Contents, &str),
) -> Result<(i64, Contents), ToolError> {
    let at = now();
    store.write(|tx| -> Result<(i64, Contents), ToolError> {
        let mut row =
            records::session(tx, session_id)?.ok_or_else(|| unknown_session(session_id))?;
        let mut contents = contents_of(&row)?;
        change(&mut contents, &at);
        save(tx, &mut row, &contents, &at)?;
        Ok((row.version, contents))
    })
}

pub fn unknown_session(session_id: &str) -> ToolError {
    ToolError::not_found(
        crate::envelope::Code::E_NOT_FOUND,
        format!(
            "session_id: no session {session_id:?}; a session begins with its first cos_supervise_record_output, and cos_supervise_sessions lists them"
        ),
    )
    .with_details(json!({"field": "session_id"}))
}

fn contents_of(row: &SessionRow) -> Result<Contents, ToolError> {
    row.contents()
        .map_err(|error| ToolError::internal("reading a stored bundle", error))
}

fn session_for(
    tx: &crate::store::Session,
    session_id: &str,
    task_marker: &str,
    persona_id: &str,
    at: &str,
) -> Result<(SessionRow, Contents), ToolError> {
    match records::session(tx, session_id)? {
        Some(row) if row.task_marker != task_marker => Err(ToolError::invalid(
            "task_marker",
            format!(
                "{:?}, the task session {session_id:?} belongs to; use a new session_id for another task",
                row.task_marker
            ),
        )),
        Some(row) => {
            let contents = contents_of(&row)?;
            Ok((row, contents))
        }
        None => Ok((
            SessionRow {
                session_id: session_id.to_string(),
                task_marker: task_marker.to_string(),
                persona_id: persona_id.to_string(),
                version: 0,
                bundle: String::new(),
                created_at: at.to_string(),
                updated_at: at.to_string(),
            },
            Contents::default(),
        )),
    }
}

fn save(
    tx: &crate::store::Session,
    row: &mut SessionRow,
    contents: &Contents,
    at: &str,
) -> Result<(), ToolError> {
    row.version += 1;
    row.updated_at = at.to_string();
    row.bundle = serde_json::to_string(contents)
        .map_err(|error| ToolError::internal("encoding a bundle", error))?;
    records::save_session(tx, row)?;
    records::bump_revision(tx)?;
    Ok(())
}

/// Rewrites the session's bundle file; answers where it is and whether that worked.
pub fn write_file(
    store: &SharedStore,
    config: &HubConfig,
    roles: &Roles,
    session_id: &str,
) -> (String, bool) {
    let dir = files::agent_dir(config);
    let path = files::bundle_path(&dir, session_id).display().to_string();
    match files::write_latest(store, &dir, session_id, &roles.fields()) {
        Ok(()) => (path, true),
        Err(error) => {
            tracing::warn!(%error, session_id, "the bundle file was not rewritten; the database holds the bundle");
            (path, false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(result: Result<Value, ToolError>) -> crate::envelope::ErrorBody {
        match result {
            Err(ToolError::Fail(body)) => *body,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn output_json_is_refused_past_one_mib_or_where_it_stops_being_json() {
        let big = format!("\"{}\"", "x".repeat(MAX_OUTPUT_BYTES));
        let too_big = refusal(parse_output(&big));
        assert!(
            too_big.message.starts_with("output_json: at most 1 MiB"),
            "{}",
            too_big.message
        );
        let broken = refusal(parse_output("{\"a\": [1,\n2,,]}"));
        assert!(
            broken.message.starts_with("output_json: JSON text;"),
            "{}",
            broken.message
        );
        assert_eq!(
            broken.details.as_ref().map(|d| d["line"].clone()),
            Some(json!(2))
        );
        assert_eq!(parse_output("{\"a\": 1}").ok(), Some(json!({"a": 1})));
    }

    #[test]
    fn session_ids_name_files_and_nothing_else() {
        for good in ["s-1", "2026.12.01_run", "A"] {
            assert!(check_session_id(good).is_ok(), "{good}");
        }
        for bad in ["", ".hidden", "../x", "a/b", "a b", "ü", &"x".repeat(129)] {
            assert!(check_session_id(bad).is_err(), "{bad}");
        }
    }
}
