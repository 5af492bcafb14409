//! Request IDs and `Idempotency-Key` on REST writes. Every write runs under
//! a request ID (its `Idempotency-Key`, else its `X-Request-Id`, else a new
//! one), sent back as `X-Request-Id`: whether it committed can be asked
//! later at `/api/receipts/{id}`, whatever its answer said.
//!
//! The first request with a key runs and its answer (status, body, ETag)
//! is kept for 24 hours; the same request with the same key gets that
//! answer again, marked `Idempotency-Replayed: true`, without writing again;
//! another request with the key is refused with `E_REQUEST_REUSE` (409). An
//! answer that says nothing happened (503) frees the key, so the retry runs.
//! Reads pass through untouched.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::unwrap::ApiError;
use crate::envelope::{Category, Code, ErrorBody};
use crate::store::receipts::{Claim, Receipt};
use crate::tools::{Hub, requests};

pub const HEADER: &str = "idempotency-key";
pub const REQUEST_ID: &str = "x-request-id";
const REPLAYED: &str = "idempotency-replayed";
/// Largest answer kept for a replay; a larger one is sent but not kept.
const MAX_KEPT_BYTES: usize = 4 << 20;

/// Methods that may change something; the others only read.
pub fn may_write(method: &Method) -> bool {
    matches!(
        *method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    )
}

fn request_id_refusal(fault: &str, details: serde_json::Value) -> Response {
    ApiError::with_status(
        ErrorBody::new(
            Category::Validation,
            Code::E_REQUEST_ID,
            format!("X-Request-Id: {fault}"),
        )
        .with_details(details),
        StatusCode::BAD_REQUEST,
    )
    .into_response()
}

fn refusal(message: String, status: StatusCode, category: Category, code: Code) -> Response {
    ApiError::with_status(
        ErrorBody::new(category, code, message).with_details(json!({"field": "Idempotency-Key"})),
        status,
    )
    .into_response()
}

pub async fn check(State(hub): State<Hub>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if !may_write(request.method())
        || !path.starts_with("/api/")
        || super::keeps_own_request_ids(path)
    {
        return next.run(request).await;
    }
    let key = match header_value(&request, HEADER) {
        Ok(key) => key,
        Err(()) => {
            return refusal(
                "Idempotency-Key: expected 1 to 255 visible ASCII characters".to_string(),
                StatusCode::BAD_REQUEST,
                Category::Validation,
                Code::E_ARGUMENT,
            );
        }
    };
    let named = match header_value(&request, REQUEST_ID) {
        Ok(named) => named,
        Err(()) => {
            return request_id_refusal(
                "expected 1 to 255 visible ASCII characters",
                json!({"field": "X-Request-Id"}),
            );
        }
    };
    let id = match (&key, named) {
        (Some(key), Some(named)) if *key != named => {
            return request_id_refusal(
                "differs from the Idempotency-Key, which names the request; send one",
                json!({"field": "X-Request-Id", "with": "Idempotency-Key"}),
            );
        }
        (Some(key), _) => key.clone(),
        (None, Some(named)) => named,
        (None, None) => crate::store::requests::new_id(),
    };
    let mut response = match key {
        Some(key) => requests::carrying(id.clone(), once(hub, key, request, next)).await,
        None => requests::carrying(id.clone(), next.run(request)).await,
    };
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    response
}

/// A header's text: none, or `Err` when it is not a valid key or request ID.
fn header_value(request: &Request, name: &str) -> Result<Option<String>, ()> {
    match request.headers().get(name) {
        None => Ok(None),
        Some(value) => match value.to_str() {
            Ok(text) if requests::valid(text) => Ok(Some(text.to_string())),
            _ => Err(()),
        },
    }
}

/// Runs the request with `key` once: the first time, and its kept answer after.
async fn once(hub: Hub, key: String, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, super::BODY_LIMIT_BYTES).await else {
        return refusal(
            format!(
                "the request body is larger than {} KiB",
                super::BODY_LIMIT_BYTES / 1024
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
            Category::Validation,
            Code::E_TOO_LARGE,
        );
    };
    let fingerprint = {
        let mut hasher = blake3::Hasher::new();
        hasher.update(parts.method.as_str().as_bytes());
        hasher.update(b" ");
        hasher.update(parts.uri.to_string().as_bytes());
        hasher.update(b"\n");
        hasher.update(&bytes);
        hasher.finalize().to_hex().to_string()
    };
    let store = hub.state().shared.clone();
    let claimed = {
        let (key, fingerprint) = (key.clone(), fingerprint.clone());
        tokio::task::spawn_blocking(move || store.claim_request(&key, &fingerprint)).await
    };
    match claimed {
        Ok(Ok(Claim::Claimed)) => {}
        Ok(Ok(Claim::Answered(receipt))) => return replay(receipt),
        Ok(Ok(Claim::OtherRequest)) => {
            return refusal(
                "Idempotency-Key: this key was used for another request; use a new key".to_string(),
                StatusCode::CONFLICT,
                Category::Conflict,
                Code::E_REQUEST_REUSE,
            );
        }
        Ok(Ok(Claim::AnswerLost { committed_at })) => {
            return ApiError::with_status(
                ErrorBody::new(
                    Category::Conflict,
                    Code::E_REQUEST_REUSE,
                    "Idempotency-Key: the first request with this key committed, but the hub that ran it stopped before keeping its answer; read the record again, and use a new key for a new intent".to_string(),
                )
                .with_details(json!({"field": "Idempotency-Key", "committed": true, "committed_at": committed_at})),
                StatusCode::CONFLICT,
            )
            .into_response();
        }
        Ok(Ok(Claim::Running)) => {
            return refusal(
                "Idempotency-Key: the first request with this key is still running; ask again shortly"
                    .to_string(),
                StatusCode::CONFLICT,
                Category::Conflict,
                Code::E_REQUEST_REUSE,
            );
        }
        // nothing ran: asking again is safe
        Ok(Err(_)) | Err(_) => {
            return refusal(
                "the hub could not check the Idempotency-Key just now; retry shortly".to_string(),
                StatusCode::SERVICE_UNAVAILABLE,
                Category::Transient,
                Code::E_BUSY,
            );
        }
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    keep(&hub, key, response).await
}

/// Keeps the answer under `key` (or frees the key when nothing happened) and sends it on.
async fn keep(hub: &Hub, key: String, response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_KEPT_BYTES).await else {
        // too large to keep: the key stays claimed, so a repeat is refused, not run twice
        return Response::from_parts(parts, Body::empty());
    };
    let store = hub.state().shared.clone();
    let status = parts.status;
    let receipt = Receipt {
        status: status.as_u16(),
        headers: kept_headers(&parts.headers),
        body: bytes.to_vec(),
    };
    // a busy or absent database changed nothing: the key is free again; a
    // write whose commit went unconfirmed keeps it, so a retry is refused
    // rather than run a second time
    let unconfirmed = memchr::memmem::find(&bytes, b"\"COMMIT_UNKNOWN\"").is_some();
    let kept = tokio::task::spawn_blocking(move || {
        if status == StatusCode::SERVICE_UNAVAILABLE && !unconfirmed {
            store.release_request(&key)
        } else {
            store.keep_receipt(&key, &receipt)
        }
    })
    .await;
    if !matches!(kept, Ok(Ok(()))) {
        tracing::warn!("an Idempotency-Key answer could not be kept");
    }
    Response::from_parts(parts, Body::from(bytes))
}

const KEPT_HEADERS: [HeaderName; 3] = [header::CONTENT_TYPE, header::ETAG, header::LOCATION];

fn kept_headers(headers: &axum::http::HeaderMap) -> String {
    KEPT_HEADERS
        .iter()
        .filter_map(|name| {
            let value = headers.get(name)?.to_str().ok()?;
            Some(format!("{name}: {value}\n"))
        })
        .collect()
}

fn replay(receipt: Receipt) -> Response {
    let status = StatusCode::from_u16(receipt.status).unwrap_or(StatusCode::OK);
    let mut response = (status, Bytes::from(receipt.body)).into_response();
    let headers = response.headers_mut();
    for line in receipt.headers.lines() {
        if let Some((name, value)) = line.split_once(": ")
            && let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            )
        {
            headers.insert(name, value);
        }
    }
    headers.insert(REPLAYED, HeaderValue::from_static("true"));
    response
}
