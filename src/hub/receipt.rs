//! `cos_write_receipt`: whether the shared write sent under a request ID
//! committed, read from the record the write's own transaction made
//! (`store::requests`). It waits for the writes under way, so the answer
//! is final: a write whose commit went unconfirmed (`COMMIT_UNKNOWN`) has
//! settled one way or the other by then.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::MODULE;
use crate::envelope::{Category, Code};
use crate::tools::{Answer, Effect, Tool, ToolContext, ToolError, ToolSpec, requests};

/// Longest ID asked about: a 255-character request ID and a write's `#N`.
const MAX_ID_LEN: usize = 266;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteReceiptInput {
    /// As sent, or as COMMIT_UNKNOWN names it.
    #[schema(min_length = 1, max_length = 266, pattern = "^[!-~]+$")]
    pub request_id: String,
}

/// Whether a write committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteState {
    Committed,
    /// No write under the ID committed in the last 24 hours, and none is under way.
    NotCommitted,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WriteReceipt {
    pub request_id: String,
    pub state: WriteState,
    /// The tool whose write committed.
    pub tool: Option<String>,
    /// When it committed (RFC 3339).
    pub committed_at: Option<String>,
}

pub struct WriteReceiptTool;

impl Tool for WriteReceiptTool {
    type Input = WriteReceiptInput;
    type Output = WriteReceipt;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_write_receipt",
        module: MODULE,
        layer: "receipt",
        description: "Whether the board or evidence write under request_id committed, once writes under way settle (kept 24 h). Ask after COMMIT_UNKNOWN.",
        effect: Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    };

    fn run(
        context: &ToolContext,
        input: WriteReceiptInput,
    ) -> Result<Answer<WriteReceipt>, ToolError> {
        let id = input.request_id;
        if !requests::visible_ascii(&id, MAX_ID_LEN) {
            return Err(ToolError::fail(
                Category::Validation,
                Code::E_REQUEST_ID,
                format!("request_id: expected 1 to {MAX_ID_LEN} visible ASCII characters"),
            )
            .with_details(serde_json::json!({"field": "request_id"})));
        }
        let committed = context.hub.shared.committed_request(&id)?;
        Ok(Answer::from(match committed {
            Some(committed) => WriteReceipt {
                request_id: id,
                state: WriteState::Committed,
                committed_at: Some(committed.rfc3339()),
                tool: Some(committed.tool),
            },
            None => WriteReceipt {
                request_id: id,
                state: WriteState::NotCommitted,
                tool: None,
                committed_at: None,
            },
        }))
    }
}
