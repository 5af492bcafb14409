//! Request extractors whose rejections are ErrorEnvelopes, never axum's
//! default plain-text bodies: malformed JSON, a wrong content type, bad query
//! or path parameters and over-large bodies all answer in the contract.

use super::unwrap::ApiError;
use crate::envelope::{Category, Code, ErrorBody};
use axum::extract::FromRequestParts;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::json;

/// A JSON body as `T`: read as JSON first (axum's rejections, enveloped),
/// then deserialised the way tool arguments are (tools::input), so REST and
/// MCP take the same values and word refusals alike.
pub struct AppJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for AppJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let axum::Json(value) = axum::Json::<Value>::from_request(request, state).await?;
        crate::tools::input::deserialize(value)
            .map(AppJson)
            .map_err(|error| ApiError::new(error.to_body("")))
    }
}

#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct AppQuery<T>(pub T);

#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct AppPath<T>(pub T);

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> ApiError {
        let text = rejection.body_text();
        match rejection {
            JsonRejection::JsonDataError(_) => plain(&text),
            JsonRejection::JsonSyntaxError(_) => ApiError::validation(
                Code::E_JSON,
                format!(
                    "the request body is not valid JSON: {}",
                    strip_prefix(&text)
                ),
                json!({"field": "body"}),
            ),
            JsonRejection::MissingJsonContentType(_) => ApiError::validation(
                Code::E_CONTENT_TYPE,
                "the request body must be sent with `Content-Type: application/json`",
                json!({"field": "content-type", "expected": "application/json"}),
            ),
            other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => payload_too_large(),
            _ => ApiError::validation(
                Code::E_BODY,
                format!("the request body could not be read: {text}"),
                json!({"field": "body"}),
            ),
        }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> ApiError {
        plain(&rejection.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> ApiError {
        let text = rejection.body_text();
        ApiError::validation(
            Code::E_ARGUMENT,
            format!("bad path parameter: {}", strip_prefix(&text)),
            json!({"field": "path", "expected": strip_prefix(&text)}),
        )
    }
}

pub fn payload_too_large() -> ApiError {
    ApiError::with_status(
        ErrorBody::new(
            Category::Validation,
            Code::E_TOO_LARGE,
            format!(
                "the request body is larger than the {} KiB limit",
                super::BODY_LIMIT_BYTES / 1024
            ),
        )
        .with_details(json!({"field": "body", "limit_bytes": super::BODY_LIMIT_BYTES})),
        StatusCode::PAYLOAD_TOO_LARGE,
    )
}

/// axum prefixes its texts with a generic sentence; keep the part that names the problem.
fn strip_prefix(text: &str) -> &str {
    for prefix in [
        "Failed to deserialize the JSON body into the target type: ",
        "Failed to parse the request body as JSON: ",
        "Failed to deserialize query string: ",
        "Failed to deserialize query string. Error: ",
        "Invalid URL: ",
    ] {
        if let Some(rest) = text.strip_prefix(prefix) {
            return rest;
        }
    }
    text
}

/// A body or query refusal in plain words: serde_path_to_error messages start
/// with `path: message`, and the path names the field.
fn plain(text: &str) -> ApiError {
    let rest = strip_prefix(text);
    let (path, wording) = match rest.split_once(": ") {
        Some((path, wording)) if !path.contains(' ') => (path, wording),
        _ => (".", rest),
    };
    ApiError::new(crate::tools::input::refusal(path, wording).to_body(""))
}
