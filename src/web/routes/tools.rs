//! `/api/tools`: every registered tool, callable by name with JSON arguments.
//! Scripts get the same tool functions agents get, with the budget off unless
//! they ask for one.

use super::RouterSpec;
use crate::envelope::{Budget, Category, Code, ErrorBody};
use crate::tools::{Hub, JsonObject, Source};
use crate::web::extract::{AppPath, AppQuery};
use crate::web::unwrap::{ApiError, ApiOk};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

pub const SPEC: RouterSpec = RouterSpec {
    tag: "tools",
    extra_errors: &[401, 403, 409, 412],
    request_ids_under: None,
    router,
};

fn router() -> OpenApiRouter<Hub> {
    OpenApiRouter::new()
        .routes(routes!(tools_list))
        .routes(routes!(tool_call))
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ToolInfo {
    pub name: String,
    /// The module whose switch the tool answers to.
    pub module: String,
    pub layer: String,
    pub description: String,
    /// JSON Schema of the arguments.
    #[schema(value_type = Object)]
    pub input_schema: Value,
    /// JSON Schema of the answer's `data`.
    #[schema(value_type = Object)]
    pub output_schema: Value,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ToolListing {
    pub tools: Vec<ToolInfo>,
}

/// Lists every registered tool with its JSON schemas.
#[utoipa::path(get, path = "/api/tools", operation_id = "tools_list", tag = "tools",
    responses((status = 200, description = "Every registered tool", body = ApiOk<ToolListing>)))]
async fn tools_list(State(hub): State<Hub>) -> Response {
    let tools = hub
        .registry()
        .iter()
        .map(|tool| ToolInfo {
            name: tool.spec.name.to_string(),
            module: tool.spec.module.id().to_string(),
            layer: tool.spec.layer.to_string(),
            description: tool.spec.description.to_string(),
            input_schema: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
        })
        .collect();
    crate::web::unwrap::Success::ok(ToolListing { tools }, "health").into_response()
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CallParams {
    /// `none` (default), `agent`, `graph`, or a number of characters.
    pub budget: Option<String>,
}

/// Calls a tool by name. The body is the tool's JSON arguments (empty means none).
#[utoipa::path(post, path = "/api/tools/{name}", operation_id = "tools_call", tag = "tools",
    params(("name" = String, Path, description = "Tool name, e.g. cos_hub_health"), CallParams),
    request_body(content = Object, description = "The tool's arguments", content_type = "application/json"),
    responses((status = 200, description = "The tool's answer, unwrapped", body = ApiOk<JsonObject>)))]
async fn tool_call(
    State(hub): State<Hub>,
    AppPath(name): AppPath<String>,
    AppQuery(params): AppQuery<CallParams>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let budget = match params.budget.as_deref() {
        None => Budget::None,
        Some(text) => text.parse::<Budget>().map_err(|message| {
            ApiError::validation(
                Code::E_ARGUMENT,
                format!("budget: {message}"),
                json!({"field": "budget"}),
            )
        })?,
    };
    // an empty body means no arguments; anything sent must be an object
    let arguments: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Object(serde_json::Map::new())
    } else {
        serde_json::from_slice(&body).map_err(|error| {
            ApiError::validation(
                Code::E_JSON,
                format!("the request body is not valid JSON: {error}"),
                json!({"field": "body"}),
            )
        })?
    };
    if !arguments.is_object() {
        return Err(ApiError::validation(
            Code::E_JSON,
            "body: expected a JSON object of the tool's arguments (or no body at all)",
            json!({"field": "body", "expected": "object"}),
        ));
    }
    let envelope = hub.call_json(&name, arguments, budget, Source::Rest).await;
    unwrap_envelope(envelope)
}

/// Turns a whole envelope into the REST shape: data without meta, meta beside it.
fn unwrap_envelope(envelope: Value) -> Result<Response, ApiError> {
    let Value::Object(mut envelope) = envelope else {
        return Err(ApiError::new(ErrorBody::new(
            Category::Internal,
            Code::E_INTERNAL,
            "malformed envelope",
        )));
    };
    if envelope.get("ok") != Some(&Value::Bool(true)) {
        let body = envelope
            .remove("error")
            .and_then(|error| serde_json::from_value::<ErrorBody>(error).ok())
            .unwrap_or_else(|| {
                ErrorBody::new(
                    Category::Internal,
                    Code::E_INTERNAL,
                    "malformed error envelope",
                )
            });
        return Err(ApiError::new(body));
    }
    let mut data = match envelope.remove("data") {
        Some(Value::Object(data)) => data,
        _ => Map::new(),
    };
    let meta = data.shift_remove("meta").unwrap_or(Value::Null);
    let body = json!({"data": Value::Object(data), "meta": meta});
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        bytes,
    )
        .into_response())
}
