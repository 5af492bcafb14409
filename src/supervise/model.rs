//! What the supervise tools answer and what a bundle holds.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// How a formula-agent's run ended, as its caller reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DispatchStatus {
    Ok,
    Fail,
    Timeout,
}

impl DispatchStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DispatchStatus::Ok => "ok",
            DispatchStatus::Fail => "fail",
            DispatchStatus::Timeout => "timeout",
        }
    }

    pub fn parse(text: &str) -> DispatchStatus {
        match text {
            "ok" => DispatchStatus::Ok,
            "timeout" => DispatchStatus::Timeout,
            _ => DispatchStatus::Fail,
        }
    }
}

/// A step back from one formula to another, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Backtrack {
    pub from_formula: String,
    pub to_formula: String,
    pub reason: String,
    pub at: String,
}

/// What to do about a discovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiscoveryDecision {
    BacktrackNow,
    RecordForLater,
}

/// Something found mid-work that changes the plan or is kept for later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Discovery {
    pub kind: String,
    pub summary: String,
    pub impact_assessment: String,
    pub decision: DiscoveryDecision,
    pub at: String,
}

/// A role's output as the bundle keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Filled {
    pub formula_id: String,
    pub output: Value,
    pub at: String,
}

/// A bundle's contents as stored: the filled slots by field, and the accumulators.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Contents {
    #[serde(default)]
    pub slots: std::collections::BTreeMap<String, Filled>,
    #[serde(default)]
    pub backtracks: Vec<Backtrack>,
    #[serde(default)]
    pub discoveries: Vec<Discovery>,
    #[serde(default)]
    pub degraded_formulas: Vec<String>,
}

/// One slot of a bundle: the field a role fills, and its output once recorded.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Slot {
    /// The bundle field.
    pub field: String,
    /// The roles whose outputs fill it.
    pub roles: Vec<String>,
    pub filled: bool,
    /// The formula whose output is here.
    pub formula_id: Option<String>,
    /// The output, as recorded (any JSON its role's schema accepts).
    pub output: Option<Value>,
    pub filled_at: Option<String>,
}

/// One recorded output: who ran, how it ended, its hashes and its error.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Dispatch {
    pub seq: i64,
    pub formula_id: String,
    pub persona_id: String,
    pub status: DispatchStatus,
    pub latency_ms: i64,
    /// BLAKE3 of the session, task, persona and formula.
    pub input_hash: String,
    /// BLAKE3 of `output_json` as sent.
    pub output_hash: String,
    pub at: String,
    /// Why it failed, timed out or did not validate.
    pub error: Option<String>,
}

/// A session's evidence bundle: one slot per role of the registry, the
/// backtracks, discoveries and degraded formulas, and the latest dispatches.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EvidenceBundle {
    pub session_id: String,
    pub task_marker: String,
    pub persona_id: String,
    /// Bumped by every change; the bundle file carries the same number.
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
    pub slots: Vec<Slot>,
    pub fields_filled: usize,
    pub backtracks: Vec<Backtrack>,
    pub discoveries: Vec<Discovery>,
    pub degraded_formulas: Vec<String>,
    /// All dispatches of the session.
    pub dispatch_count: i64,
    /// The latest dispatches (at most 100), oldest first.
    pub dispatches: Vec<Dispatch>,
    /// Where the bundle's JSON file is.
    pub bundle_file: String,
}

/// A session in a listing.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SessionSummary {
    pub session_id: String,
    pub task_marker: String,
    pub persona_id: String,
    pub version: i64,
    pub fields_filled: usize,
    pub degraded_formulas: Vec<String>,
    pub dispatch_count: i64,
    pub created_at: String,
    pub updated_at: String,
}

/// A page of sessions.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SessionList {
    pub sessions: Vec<SessionSummary>,
    /// Pass back as `cursor` to continue the listing past these; null when none remain.
    pub next_cursor: Option<String>,
}

/// What recording an output did.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Recorded {
    pub session_id: String,
    pub formula_id: String,
    /// The status recorded: an `ok` output its role's schema refuses becomes `fail`.
    pub status: DispatchStatus,
    /// Slots of the bundle holding an output now.
    pub bundle_fields_filled: usize,
    /// The field this output filled, when it did.
    pub field: Option<String>,
    /// True when the formula is now among the degraded ones.
    pub degraded: bool,
    /// Why the output did not fill its slot.
    pub error: Option<String>,
    pub version: i64,
    pub seq: i64,
    /// The bundle's JSON file, and whether it was rewritten (when not, the
    /// database holds the bundle and the file is rewritten on the next change
    /// or start).
    pub bundle_file: String,
    pub file_written: bool,
}

/// What recording a discovery or a backtrack did.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Noted {
    pub session_id: String,
    pub version: i64,
    pub backtracks: usize,
    pub discoveries: usize,
    pub bundle_file: String,
    pub file_written: bool,
}
