//! MCP `prompts/*` over the prompts the areas declare (`tools::offers`):
//! listed with their arguments, and filled from live data when fetched,
//! after the arguments are checked. An unknown prompt or a bad argument is
//! -32602 with the contract's error body as `data`.

use rmcp::model::{
    ErrorCode, GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use super::caller::{protocol_error, with_caller};
use crate::envelope::{Category, Code, ErrorBody};
use crate::tools::offers::{PromptSpec, argument_error};
use crate::tools::{Hub, Module, module_disabled};

/// Every prompt the hub's areas declare, with its area's switch.
fn prompts(hub: &Hub) -> Vec<(Module, &'static PromptSpec)> {
    hub.registry()
        .areas()
        .iter()
        .flat_map(|area| area.prompts.iter().map(|prompt| (area.module, prompt)))
        .collect()
}

pub fn list(hub: &Hub) -> ListPromptsResult {
    let listed = prompts(hub)
        .into_iter()
        .map(|(_, prompt)| {
            let arguments = prompt
                .arguments
                .iter()
                .map(|argument| {
                    PromptArgument::new(argument.name)
                        .with_description(argument.description)
                        .with_required(argument.required)
                })
                .collect();
            Prompt::new(prompt.name, Some(prompt.description), Some(arguments))
                .with_title(prompt.title)
        })
        .collect();
    ListPromptsResult::with_all_items(listed)
}

/// The prompt named, filled in.
pub async fn get(
    hub: &Hub,
    name: &str,
    arguments: Option<Map<String, Value>>,
) -> Result<GetPromptResult, ErrorBody> {
    let Some((module, prompt)) = prompts(hub).into_iter().find(|(_, p)| p.name == name) else {
        let known: Vec<&str> = prompts(hub).iter().map(|(_, p)| p.name).collect();
        return Err(ErrorBody::new(
            Category::Validation,
            Code::E_ARGUMENT,
            format!("name: expected one of the prompts ({})", known.join(", ")),
        )
        .with_details(serde_json::json!({"field": "name", "allowed": known})));
    };
    let mut given = BTreeMap::new();
    for (key, value) in arguments.unwrap_or_default() {
        match value {
            Value::String(text) => {
                given.insert(key, text);
            }
            _ => {
                return Err(argument_error(
                    &key,
                    "a string, as every prompt argument is",
                ));
            }
        }
    }
    prompt.check(&given)?;
    let switches = hub.clone();
    let text = with_caller(hub, move |caller| {
        // a prompt of a switched-off module is refused as its tools are
        let on = switches.state().modules.switches().map(|s| s.is_on(module));
        if on.is_ok_and(|on| !on) {
            return Err(module_disabled(module).to_body(""));
        }
        (prompt.build)(caller, &given)
    })
    .await?;
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(prompt.description),
    )
}

/// A prompt refusal as JSON-RPC: -32602, as the spec names it for an
/// unknown prompt or a missing argument, for what was not found too.
pub fn refusal(error: &ErrorBody) -> rmcp::ErrorData {
    protocol_error(error, ErrorCode::INVALID_PARAMS)
}
