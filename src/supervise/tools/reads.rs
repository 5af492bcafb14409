//! Reading the evidence: one session's bundle, and the sessions (of a task).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};

use super::{ready, spec};
use crate::supervise::files;
use crate::supervise::model::{EvidenceBundle, SessionList, SessionSummary, Slot};
use crate::supervise::record::{check_session_id, check_text, unknown_session};
use crate::supervise::records::{self, SessionRow};
use crate::tools::{Answer, Page, Tool, ToolContext, ToolError, ToolSpec};

/// Dispatches a bundle answer carries (the latest ones).
const BUNDLE_DISPATCHES: usize = 100;

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Path)]
pub struct BundleInput {
    /// The session whose bundle to read.
    #[schema(
        min_length = 1,
        max_length = 128,
        pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]*$"
    )]
    #[param(
        min_length = 1,
        max_length = 128,
        pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]*$"
    )]
    pub session_id: String,
}

pub struct SuperviseBundle;

impl Tool for SuperviseBundle {
    type Input = BundleInput;
    type Output = EvidenceBundle;
    const SPEC: ToolSpec = spec(
        "cos_supervise_bundle",
        "Reads a session's evidence bundle: one slot per role (filled or not), backtracks, discoveries, degraded formulas and the latest dispatches.",
    )
    .cutting_first(&["dispatches"]);

    fn run(context: &ToolContext, input: BundleInput) -> Result<Answer<EvidenceBundle>, ToolError> {
        check_session_id(&input.session_id)?;
        let roles = ready(context)?;
        let store = &context.hub.shared;
        let (row, count, dispatches) = store.view(|c| -> Result<_, ToolError> {
            let row = records::session(c, &input.session_id)?
                .ok_or_else(|| unknown_session(&input.session_id))?;
            let count = records::dispatch_count(c, &input.session_id)?;
            let dispatches = records::latest_dispatches(c, &input.session_id, BUNDLE_DISPATCHES)?;
            Ok((row, count, dispatches))
        })?;
        let contents = row
            .contents()
            .map_err(|error| ToolError::internal("reading a stored bundle", error))?;
        let mut slots: Vec<Slot> = roles
            .fields()
            .into_iter()
            .map(|(field, roles)| {
                let filled = contents.slots.get(&field);
                Slot {
                    filled: filled.is_some(),
                    formula_id: filled.map(|f| f.formula_id.clone()),
                    output: filled.map(|f| f.output.clone()),
                    filled_at: filled.map(|f| f.at.clone()),
                    field,
                    roles,
                }
            })
            .collect();
        // a slot filled under an earlier registry stays visible
        for (field, filled) in &contents.slots {
            if !slots.iter().any(|slot| slot.field == *field) {
                slots.push(Slot {
                    field: field.clone(),
                    roles: Vec::new(),
                    filled: true,
                    formula_id: Some(filled.formula_id.clone()),
                    output: Some(filled.output.clone()),
                    filled_at: Some(filled.at.clone()),
                });
            }
        }
        let bundle_file =
            files::bundle_path(&files::agent_dir(&context.hub.config), &row.session_id);
        Ok(Answer::new(EvidenceBundle {
            fields_filled: contents.slots.len(),
            session_id: row.session_id,
            task_marker: row.task_marker,
            persona_id: row.persona_id,
            version: row.version,
            created_at: row.created_at,
            updated_at: row.updated_at,
            slots,
            backtracks: contents.backtracks,
            discoveries: contents.discoveries,
            degraded_formulas: contents.degraded_formulas,
            dispatch_count: count,
            dispatches,
            bundle_file: bundle_file.display().to_string(),
        }))
    }
}

#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SessionsInput {
    /// Only the sessions of this task.
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    #[param(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub task_marker: Option<String>,
    /// Most sessions per page (1 to 200, default 50).
    #[schema(minimum = 1, maximum = 200)]
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
    /// A previous page's `next_cursor`.
    pub cursor: Option<String>,
}

pub struct SuperviseSessions;

impl Tool for SuperviseSessions {
    type Input = SessionsInput;
    type Output = SessionList;
    const SPEC: ToolSpec = spec(
        "cos_supervise_sessions",
        "Lists sessions by id (of one task when task_marker is given), each with its bundle's slots filled, degraded formulas and dispatch count; continue with next_cursor.",
    )
    .cutting_first(&["sessions"]);

    fn run(context: &ToolContext, input: SessionsInput) -> Result<Answer<SessionList>, ToolError> {
        if let Some(task) = &input.task_marker {
            check_text("task_marker", task, 200)?;
        }
        let limit = match input.limit {
            None => 50,
            Some(limit @ 1..=200) => limit as usize,
            Some(_) => return Err(ToolError::invalid("limit", "1 to 200")),
        };
        ready(context)?;
        let scope = format!("cos_supervise_sessions|{:?}", input.task_marker);
        let keyring = context.hub.cursors.clone();
        let after = match &input.cursor {
            None => String::new(),
            Some(cursor) => keyring.open("cursor", &scope, cursor)?["a"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| ToolError::invalid("cursor", "a next_cursor this listing gave"))?,
        };
        let store = &context.hub.shared;
        let rows = store
            .view(|c| records::sessions(c, input.task_marker.as_deref(), &after, limit + 1))?;
        let more = rows.len() > limit;
        let sessions: Vec<SessionSummary> = rows
            .into_iter()
            .take(limit)
            .map(|(row, count)| summary(row, count))
            .collect::<Result<_, _>>()?;
        let seal = move |after: &str| keyring.seal(&scope, &json!({"a": after}));
        let next_cursor = more
            .then(|| sessions.last().map(|s| seal(&s.session_id)))
            .flatten();
        let resume =
            Arc::new(move |_: usize, last: &Value| seal(last["session_id"].as_str().unwrap_or("")));
        Ok(Answer::new(SessionList {
            sessions,
            next_cursor,
        })
        .with_page(Page {
            list: "/sessions".into(),
            cursor_field: "/next_cursor".into(),
            resume,
        }))
    }
}

fn summary(row: SessionRow, dispatch_count: i64) -> Result<SessionSummary, ToolError> {
    let contents = row
        .contents()
        .map_err(|error| ToolError::internal("reading a stored bundle", error))?;
    Ok(SessionSummary {
        session_id: row.session_id,
        task_marker: row.task_marker,
        persona_id: row.persona_id,
        version: row.version,
        fields_filled: contents.slots.len(),
        degraded_formulas: contents.degraded_formulas,
        dispatch_count,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}
