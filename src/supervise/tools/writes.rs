//! Recording into a session's bundle: a formula-agent's output, a discovery, a backtrack.

use serde::Deserialize;
use utoipa::ToSchema;

use super::{ready, spec};
use crate::supervise::model::{
    Backtrack, Discovery, DiscoveryDecision, DispatchStatus, Noted, Recorded,
};
use crate::supervise::record::{self, Output, check_session_id, check_text};
use crate::supervise::roles::is_identifier;
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

/// Largest latency accepted: what a JSON number holds exactly.
/// How long a summary, an impact assessment or a reason may be.
const MAX_PROSE_CHARS: usize = 2000;
const MAX_LATENCY_MS: u64 = (1 << 53) - 1;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordOutputInput {
    /// The session the bundle belongs to; its first output begins it.
    #[schema(
        min_length = 1,
        max_length = 128,
        pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]*$"
    )]
    pub session_id: String,
    /// The task the session works on (e.g. a board task id); fixed by the first output.
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub task_marker: String,
    /// The persona the orchestrating agent plays.
    #[schema(min_length = 1, max_length = 128, format = "cos-visible-name")]
    pub persona_id: String,
    /// The role that produced the output, as the role registry names it.
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z0-9_]+$")]
    pub formula_id: String,
    /// The output as JSON text (at most 1 MiB); an `ok` one must meet its role's schema.
    pub output_json: String,
    /// How the run ended (default ok).
    #[serde(default = "ok_status")]
    pub status: DispatchStatus,
    /// How long the run took.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 9007199254740991_u64)]
    pub latency_ms: u64,
}

fn ok_status() -> DispatchStatus {
    DispatchStatus::Ok
}

pub struct SuperviseRecordOutput;

impl Tool for SuperviseRecordOutput {
    type Input = RecordOutputInput;
    type Output = Recorded;
    const SPEC: ToolSpec = spec(
        "cos_supervise_record_output",
        "Records a formula-agent's output in the session's evidence bundle (its role's slot) and dispatch timeline; an ok output its role's schema refuses, or a timeout, marks the formula degraded.",
    )
    .writing(false, false);

    fn run(context: &ToolContext, input: RecordOutputInput) -> Result<Answer<Recorded>, ToolError> {
        // checked before any use: a tool-call fragment must never land in storage
        if !is_identifier(&input.formula_id) {
            return Err(ToolError::invalid(
                "formula_id",
                "1 to 64 of [a-z0-9_] (lower-case letters, digits, underscore)",
            ));
        }
        check_session_id(&input.session_id)?;
        check_text("task_marker", &input.task_marker, 200)?;
        check_text("persona_id", &input.persona_id, 128)?;
        if input.latency_ms > MAX_LATENCY_MS {
            return Err(ToolError::invalid(
                "latency_ms",
                format!("0 to {MAX_LATENCY_MS}"),
            ));
        }
        let output = record::parse_output(&input.output_json)?;
        let roles = ready(context)?;
        let store = &context.hub.shared;
        let outcome = record::record_output(
            store,
            &roles,
            &Output {
                session_id: &input.session_id,
                task_marker: &input.task_marker,
                persona_id: &input.persona_id,
                formula_id: &input.formula_id,
                output_json: &input.output_json,
                output,
                status: input.status,
                latency_ms: i64::try_from(input.latency_ms).unwrap_or(i64::MAX),
            },
        )?;
        let (bundle_file, file_written) =
            record::write_file(store, &context.hub.config, &roles, &input.session_id);
        Ok(Answer::new(Recorded {
            session_id: input.session_id,
            formula_id: input.formula_id,
            status: outcome.status,
            bundle_fields_filled: outcome.filled,
            field: outcome.field,
            degraded: outcome.degraded,
            error: outcome.error,
            version: outcome.version,
            seq: outcome.seq,
            bundle_file,
            file_written,
        }))
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordDiscoveryInput {
    #[schema(
        min_length = 1,
        max_length = 128,
        pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]*$"
    )]
    pub session_id: String,
    /// What kind of thing was found (e.g. hidden_dependency, scope_change).
    #[schema(min_length = 1, max_length = 64, format = "cos-visible-name")]
    pub kind: String,
    #[schema(min_length = 1, max_length = 2000, format = "cos-prose")]
    pub summary: String,
    #[schema(min_length = 1, max_length = 2000, format = "cos-prose")]
    pub impact_assessment: String,
    pub decision: DiscoveryDecision,
}

pub struct SuperviseRecordDiscovery;

impl Tool for SuperviseRecordDiscovery {
    type Input = RecordDiscoveryInput;
    type Output = Noted;
    const SPEC: ToolSpec = spec(
        "cos_supervise_record_discovery",
        "Adds a mid-work discovery to a session's bundle: backtrack_now when it calls for going back, record_for_later to keep it for the summary.",
    )
    .writing(false, false);

    fn run(context: &ToolContext, input: RecordDiscoveryInput) -> Result<Answer<Noted>, ToolError> {
        check_session_id(&input.session_id)?;
        check_text("kind", &input.kind, 64)?;
        crate::tools::text::check_prose("summary", &input.summary, MAX_PROSE_CHARS)?;
        crate::tools::text::check_prose(
            "impact_assessment",
            &input.impact_assessment,
            MAX_PROSE_CHARS,
        )?;
        let roles = ready(context)?;
        let discovery = |at: &str| Discovery {
            kind: input.kind.clone(),
            summary: input.summary.clone(),
            impact_assessment: input.impact_assessment.clone(),
            decision: input.decision,
            at: at.to_string(),
        };
        noted(context, &roles, &input.session_id, |contents, at| {
            contents.discoveries.push(discovery(at));
        })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordBacktrackInput {
    #[schema(
        min_length = 1,
        max_length = 128,
        pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]*$"
    )]
    pub session_id: String,
    /// The formula whose work is set back.
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z0-9_]+$")]
    pub from_formula: String,
    /// The formula that runs again.
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z0-9_]+$")]
    pub to_formula: String,
    #[schema(min_length = 1, max_length = 2000, format = "cos-prose")]
    pub reason: String,
}

pub struct SuperviseRecordBacktrack;

impl Tool for SuperviseRecordBacktrack {
    type Input = RecordBacktrackInput;
    type Output = Noted;
    const SPEC: ToolSpec = spec(
        "cos_supervise_record_backtrack",
        "Adds a backtrack (from one formula back to another, and why) to a session's bundle.",
    )
    .writing(false, false);

    fn run(context: &ToolContext, input: RecordBacktrackInput) -> Result<Answer<Noted>, ToolError> {
        check_session_id(&input.session_id)?;
        for (field, formula) in [
            ("from_formula", &input.from_formula),
            ("to_formula", &input.to_formula),
        ] {
            if !is_identifier(formula) {
                return Err(ToolError::invalid(field, "1 to 64 of [a-z0-9_]"));
            }
        }
        crate::tools::text::check_prose("reason", &input.reason, MAX_PROSE_CHARS)?;
        let roles = ready(context)?;
        let backtrack = |at: &str| Backtrack {
            from_formula: input.from_formula.clone(),
            to_formula: input.to_formula.clone(),
            reason: input.reason.clone(),
            at: at.to_string(),
        };
        noted(context, &roles, &input.session_id, |contents, at| {
            contents.backtracks.push(backtrack(at));
        })
    }
}

fn noted(
    context: &ToolContext,
    roles: &crate::supervise::roles::Roles,
    session_id: &str,
    change: impl FnOnce(&mut crate::supervise::model::Contents, &str),
) -> Result<Answer<Noted>, ToolError> {
    let store = &context.hub.shared;
    let (version, contents) = record::note(store, session_id, change)?;
    let (bundle_file, file_written) =
        record::write_file(store, &context.hub.config, roles, session_id);
    Ok(Answer::new(Noted {
        session_id: session_id.to_string(),
        version,
        backtracks: contents.backtracks.len(),
        discoveries: contents.discoveries.len(),
        bundle_file,
        file_written,
    }))
}
