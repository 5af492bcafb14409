//! How MCP's resources and prompts read the hub: the areas' declared
//! functions run on the blocking pool and call tools through the same
//! runtime, budget and switches as `tools/call`; their refusals become
//! JSON-RPC errors carrying the contract's error body as `data`.

use rmcp::ErrorData;
use serde_json::Value;

use crate::envelope::{Budget, Category, Code, ErrorBody};
use crate::tools::offers::{Caller, answer_of};
use crate::tools::{Hub, Source};

/// Calls tools for a declared resource or prompt, from a blocking thread.
pub struct HubCaller {
    hub: Hub,
    runtime: tokio::runtime::Handle,
}

impl Caller for HubCaller {
    fn call(&self, tool: &str, arguments: Value) -> Result<Value, ErrorBody> {
        let envelope =
            self.runtime.block_on(
                self.hub
                    .call_json(tool, arguments, Budget::Agent, Source::Mcp),
            );
        answer_of(envelope)
    }
}

/// Runs `work` with a caller on the blocking pool: the declared functions
/// wait on tool calls, which must not hold an async worker.
pub async fn with_caller<T: Send + 'static>(
    hub: &Hub,
    work: impl FnOnce(&HubCaller) -> Result<T, ErrorBody> + Send + 'static,
) -> Result<T, ErrorBody> {
    let caller = HubCaller {
        hub: hub.clone(),
        runtime: tokio::runtime::Handle::current(),
    };
    tokio::task::spawn_blocking(move || work(&caller))
        .await
        .unwrap_or_else(|_| {
            Err(ErrorBody::new(
                Category::Internal,
                Code::E_INTERNAL,
                "the hub stopped while answering",
            ))
        })
}

/// A refusal as a JSON-RPC error, `data` holding the contract's error body:
/// a bad argument is -32602, a missing thing `not_found` (the spec names
/// -32002 for a resource, -32602 for a prompt), anything else -32603.
pub fn protocol_error(error: &ErrorBody, not_found: rmcp::model::ErrorCode) -> ErrorData {
    let data = serde_json::to_value(error).ok();
    let message = error.message.clone();
    match error.category {
        Category::NotFound => ErrorData::new(not_found, message, data),
        Category::Validation => ErrorData::invalid_params(message, data),
        _ => ErrorData::internal_error(message, data),
    }
}
