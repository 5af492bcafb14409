//! The unwrap layer: tool answers become HTTP answers.
//!
//! Success is `{"data": <payload>, "meta": {...}}` with 200 (201 on create);
//! failure is `{"error": ErrorBody}` with the status the category calls for.
//! This file holds the one table that maps categories to statuses.

use crate::envelope::measure::Size;
use crate::envelope::{Category, Code, ErrorBody, ErrorEnvelope, Meta};
use crate::tools::cache::Shared;
use crate::tools::{Hub, Source, Tool};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// Seconds a client is asked to wait after a 503 unless the error says otherwise.
const DEFAULT_RETRY_AFTER_SECONDS: u64 = 1;

/// The category → status table (docs/errors.md carries the same table).
pub fn status_for(category: Category, conditional: bool) -> StatusCode {
    match category {
        Category::Validation => StatusCode::BAD_REQUEST,
        Category::Unauthorized => StatusCode::UNAUTHORIZED,
        Category::Permission | Category::ModuleDisabled => StatusCode::FORBIDDEN,
        Category::NotFound => StatusCode::NOT_FOUND,
        Category::Conflict if conditional => StatusCode::PRECONDITION_FAILED,
        Category::Conflict => StatusCode::CONFLICT,
        Category::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        Category::Transient | Category::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// The REST success body.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApiOk<T> {
    pub data: T,
    pub meta: Meta,
}

/// A success answer on its way out.
pub struct Success<T> {
    data: T,
    layer: &'static str,
    status: StatusCode,
    headers: Vec<(header::HeaderName, String)>,
    /// The tool's diagnostics, joining the envelope's own meta keys.
    diagnostics: Map<String, Value>,
}

impl<T: Serialize> Success<T> {
    pub fn ok(data: T, layer: &'static str) -> Success<T> {
        Success {
            data,
            layer,
            status: StatusCode::OK,
            headers: Vec::new(),
            diagnostics: Map::new(),
        }
    }

    pub fn created(data: T, layer: &'static str) -> Success<T> {
        Success {
            data,
            layer,
            status: StatusCode::CREATED,
            headers: Vec::new(),
            diagnostics: Map::new(),
        }
    }

    /// The tool's diagnostics (its answer's `meta`), for the envelope's meta.
    pub fn with_diagnostics(mut self, diagnostics: Map<String, Value>) -> Success<T> {
        self.diagnostics = diagnostics;
        self
    }

    pub fn data(&self) -> &T {
        &self.data
    }

    /// Adds a response header (e.g. an ETag carrying the version).
    pub fn with_header(mut self, name: header::HeaderName, value: String) -> Success<T> {
        self.headers.push((name, value));
        self
    }
}

impl<T: Serialize> IntoResponse for Success<T> {
    fn into_response(self) -> Response {
        // Serialised once, straight into the body; its own size gives tokens_estimated.
        let mut body = Vec::with_capacity(BODY_CAPACITY);
        body.extend_from_slice(DATA_OPEN);
        if let Err(error) = serde_json::to_writer(&mut body, &self.data) {
            tracing::error!(%error, "serialising a REST answer failed");
            return ApiError::new(ErrorBody::new(
                Category::Internal,
                Code::E_INTERNAL,
                "the answer could not be serialised",
            ))
            .into_response();
        }
        let body = with_meta(body, self.layer, self.diagnostics);
        respond(self.status, self.headers, body)
    }
}

/// A success whose answer came from the answer cache: the finished body is made
/// once per cached answer and every later hit sends the same bytes.
pub struct CachedSuccess<T>(Success<Shared<T>>);

impl<T> IntoResponse for CachedSuccess<T> {
    fn into_response(self) -> Response {
        let Success {
            data,
            layer,
            status,
            headers,
            diagnostics,
        } = self.0;
        // a cached answer's diagnostics are cached with it, so one body serves every hit
        let body = data.rendered("rest", |json| {
            rest_body(json.as_bytes(), layer, diagnostics.clone())
        });
        respond(status, headers, body)
    }
}

fn respond(
    status: StatusCode,
    headers: Vec<(header::HeaderName, String)>,
    body: impl Into<Body>,
) -> Response {
    let mut response = (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.into(),
    )
        .into_response();
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// What a REST success body opens with: its data follows.
const DATA_OPEN: &[u8] = br#"{"data":"#;

/// Room a success body starts with: most answers fit, so the body is not
/// regrown and copied while its data is serialised (a search page is 1 to 10 KB).
const BODY_CAPACITY: usize = 8 * 1024;

/// `{"data":<data>,"meta":{...}}` around already-serialised data; `diagnostics`
/// join the envelope's own meta keys.
pub fn rest_body(data: &[u8], layer: &str, diagnostics: Map<String, Value>) -> Vec<u8> {
    let mut body = Vec::with_capacity(DATA_OPEN.len() + data.len() + 256);
    body.extend_from_slice(DATA_OPEN);
    body.extend_from_slice(data);
    with_meta(body, layer, diagnostics)
}

/// Closes `body` (`DATA_OPEN` and the serialised data) with the envelope's
/// meta, whose `tokens_estimated` counts the whole body, meta included.
fn with_meta(mut body: Vec<u8>, layer: &str, diagnostics: Map<String, Value>) -> Vec<u8> {
    let data_size = Size::of_bytes(body.get(DATA_OPEN.len()..).unwrap_or_default());
    let mut envelope_meta = Meta {
        layer: layer.to_string(),
        tokens_estimated: 0,
        truncated: false,
        extra: diagnostics,
    };
    let mut meta_for = |tokens: usize| {
        envelope_meta.tokens_estimated = tokens as u64;
        serde_json::to_vec(&envelope_meta).unwrap_or_default()
    };
    let wrapper = r#"{"data":,"meta":}"#.len();
    let mut tokens = 0;
    let mut meta = meta_for(tokens);
    // The estimate's own digits change the size it estimates: settle in a step or two.
    for _ in 0..4 {
        let meta_size = Size::of_bytes(&meta);
        let total = Size {
            ascii: data_size.ascii + meta_size.ascii + wrapper,
            non_ascii: data_size.non_ascii + meta_size.non_ascii,
        };
        if total.tokens() == tokens {
            break;
        }
        tokens = total.tokens();
        meta = meta_for(tokens);
    }
    body.extend_from_slice(br#","meta":"#);
    body.extend_from_slice(&meta);
    body.push(b'}');
    body
}

/// A failure on its way out: an ErrorEnvelope with the table's status.
#[derive(Debug)]
pub struct ApiError {
    pub body: ErrorBody,
    /// The request carried a precondition (If-Match), so a conflict is 412.
    pub conditional: bool,
    /// Transport-level refusals (405, 413) keep their own status.
    pub status: Option<StatusCode>,
}

impl ApiError {
    pub fn new(body: ErrorBody) -> ApiError {
        ApiError {
            body,
            conditional: false,
            status: None,
        }
    }

    pub fn with_status(body: ErrorBody, status: StatusCode) -> ApiError {
        ApiError {
            body,
            conditional: false,
            status: Some(status),
        }
    }

    pub fn conditional(mut self, conditional: bool) -> ApiError {
        self.conditional = conditional;
        self
    }

    pub fn validation(
        code: Code,
        message: impl Into<String>,
        details: serde_json::Value,
    ) -> ApiError {
        ApiError::new(ErrorBody::new(Category::Validation, code, message).with_details(details))
    }
}

impl From<ErrorBody> for ApiError {
    fn from(body: ErrorBody) -> ApiError {
        ApiError::new(body)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self
            .status
            .unwrap_or_else(|| status_for(self.body.category, self.conditional));
        let retry_after = (status == StatusCode::SERVICE_UNAVAILABLE).then(|| {
            self.body
                .details
                .as_ref()
                .and_then(|details| details.get("retry_after_seconds"))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(DEFAULT_RETRY_AFTER_SECONDS)
        });
        let body = serde_json::to_vec(&ErrorEnvelope { error: self.body }).unwrap_or_else(|_| {
            br#"{"error":{"category":"internal","code":"E_INTERNAL","retryable":false,"message":"internal error"}}"#.to_vec()
        });
        let mut response = (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// Calls tool `T` with the budget off and unwraps its answer for HTTP.
pub async fn run<T: Tool>(hub: &Hub, input: T::Input) -> Result<Success<T::Output>, ApiError> {
    let answer = hub.call::<T>(input, Source::Rest).await?;
    Ok(Success::ok(answer.data, T::SPEC.layer).with_diagnostics(answer.meta))
}

/// Like [`run`] for a tool whose answers are cached ([`Shared`]): a hit is sent
/// as the body made for the first request that computed or met it.
pub async fn run_cached<T, A>(hub: &Hub, input: T::Input) -> Result<CachedSuccess<A>, ApiError>
where
    T: Tool<Output = Shared<A>>,
{
    run::<T>(hub, input).await.map(CachedSuccess)
}

/// Like [`run`], answering 201 Created.
pub async fn create<T: Tool>(hub: &Hub, input: T::Input) -> Result<Success<T::Output>, ApiError> {
    let answer = hub.call::<T>(input, Source::Rest).await?;
    Ok(Success::created(answer.data, T::SPEC.layer).with_diagnostics(answer.meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_category_has_its_status() {
        let expected = [
            (Category::Validation, 400),
            (Category::Unauthorized, 401),
            (Category::Permission, 403),
            (Category::ModuleDisabled, 403),
            (Category::NotFound, 404),
            (Category::Conflict, 409),
            (Category::Internal, 500),
            (Category::Transient, 503),
            (Category::Unavailable, 503),
        ];
        assert_eq!(expected.len(), Category::ALL.len());
        for (category, status) in expected {
            assert_eq!(status_for(category, false).as_u16(), status, "{category}");
        }
        assert_eq!(status_for(Category::Conflict, true).as_u16(), 412);
        assert_eq!(status_for(Category::Validation, true).as_u16(), 400);
    }

    #[test]
    fn rest_body_meta_counts_the_whole_body() {
        let data = serde_json::to_vec(&serde_json::json!({"name": "日本", "n": "x".repeat(5000)}))
            .unwrap();
        let body = rest_body(&data, "health", Map::new());
        let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value["meta"]["layer"], "health");
        assert_eq!(value["meta"]["truncated"], false);
        assert_eq!(
            value["meta"]["tokens_estimated"].as_u64().unwrap() as usize,
            Size::of_bytes(&body).tokens()
        );
    }

    #[tokio::test]
    async fn a_success_body_holds_its_data_and_counts_itself_whole() {
        // below and past the room a body starts with, ASCII and not
        for length in [10, BODY_CAPACITY, 3 * BODY_CAPACITY] {
            let data = serde_json::json!({"name": "日本", "n": "x".repeat(length)});
            let mut diagnostics = Map::new();
            diagnostics.insert("mode".into(), serde_json::json!("lexical"));
            let response = Success::ok(data.clone(), "search")
                .with_diagnostics(diagnostics)
                .into_response();
            assert_eq!(response.status(), StatusCode::OK);
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(value["data"], data);
            assert_eq!(value["meta"]["layer"], "search");
            assert_eq!(value["meta"]["mode"], "lexical");
            assert_eq!(
                value["meta"]["tokens_estimated"].as_u64().unwrap() as usize,
                Size::of_bytes(&body).tokens(),
                "{length}"
            );
        }
    }
}
