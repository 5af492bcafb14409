//! The HTTP hub: REST routes over the tool runtime, the OpenAPI spec, Swagger UI.
//!
//! Routes stay thin: each calls one tool function through the runtime with the
//! budget off and lets the unwrap layer choose the status. Every error on the
//! wire, including axum's own rejections and unknown paths, is an ErrorEnvelope.
//! This module must not hold business rules: those live in the tools.

pub mod access;
pub mod connections;
pub mod extract;
pub mod idempotency;
pub mod routes;
pub mod spec;
pub mod ui;
pub mod unwrap;
pub mod users;

use crate::envelope::{Category, Code, ErrorBody};
use crate::events::ChangeFeed;
use crate::tools::Hub;
use access::Access;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;
use unwrap::ApiError;
use utoipa_swagger_ui::SwaggerUi;

/// Largest request body accepted.
pub const BODY_LIMIT_BYTES: usize = 1024 * 1024;
/// A read that takes longer than this is answered 503 (transient) and abandoned.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A client that has not sent its request headers within this time is disconnected.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How the hub is served.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub access: Access,
    /// A connection that has not sent its request headers (or any byte) within this is closed.
    pub header_read_timeout: Duration,
    /// Connections open at once at most; silent ones make room for newcomers.
    pub max_connections: usize,
    /// MCP sessions at `/mcp`: how many at once, and how long one may sit idle.
    pub mcp_sessions: crate::mcp::sessions::SessionLimits,
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            access: Access::default(),
            header_read_timeout: HEADER_READ_TIMEOUT,
            max_connections: connections::default_ceiling(1024),
            mcp_sessions: crate::mcp::sessions::SessionLimits::default(),
        }
    }
}

/// The whole HTTP application for `hub`: REST under /api, MCP at /mcp, Swagger
/// UI at /docs, the hub UI everywhere else.
pub fn app(
    hub: Hub,
    access: Access,
    feed: ChangeFeed,
    mcp_sessions: crate::mcp::sessions::SessionLimits,
) -> Router {
    let (api, openapi) = spec::api_router();
    api.merge(SwaggerUi::new("/docs").url("/api/openapi.json", openapi))
        .nest_service(
            "/mcp",
            crate::mcp::http_service(hub.clone(), feed.clone(), BODY_LIMIT_BYTES, mcp_sessions),
        )
        .fallback(fallback)
        .layer(axum::Extension(feed))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        .layer(middleware::from_fn_with_state(
            hub.clone(),
            idempotency::check,
        ))
        .layer(middleware::from_fn(request_timeout))
        .layer(CatchPanicLayer::custom(handler_panicked))
        .layer(middleware::from_fn_with_state(
            Arc::new(access::Guard::new(access, hub.clone())),
            access::check,
        ))
        // spans name the method and path only: a query string may carry what
        // a client should not have put there (a token), and logs must not
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request| {
            tracing::debug_span!("request", method = %request.method(), path = %request.uri().path())
        }))
        .with_state(hub)
}

/// Serves `hub` with default options until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    hub: Hub,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, hub, ServeOptions::default(), shutdown).await
}

/// Serves `hub` on `listener` until `shutdown` resolves, then lets in-flight
/// requests finish. Connections that dawdle over their headers are dropped, so
/// slow or abandoned clients cannot pile up.
pub async fn serve_with(
    listener: TcpListener,
    hub: Hub,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (feed, watcher) = crate::events::start(hub.clone());
    let _stop_watcher = AbortOnDrop(watcher);
    let service = hyper_util::service::TowerToHyperService::new(app(
        hub.clone(),
        options.access,
        feed,
        options.mcp_sessions,
    ));
    let mut builder =
        hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(options.header_read_timeout);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let admission =
        connections::Admission::new(options.max_connections, options.header_read_timeout);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(connection) => connection,
                Err(error) => {
                    // Out of file descriptors and the like: wait a moment rather than spin.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let Some(place) = admission.admit().await else {
            tokio::spawn(connections::refuse(stream));
            continue;
        };
        let admission = admission.clone();
        let builder = builder.clone();
        let service = service.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let _place = place;
            if !admission.first_byte(&stream).await {
                return;
            }
            let io = hyper_util::rt::TokioIo::new(stream);
            let connection = builder
                .serve_connection_with_upgrades(io, service)
                .into_owned();
            if let Err(error) = watcher.watch(connection).await {
                tracing::debug!(%error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => {},
        _ = tokio::time::sleep(REQUEST_TIMEOUT) => tracing::warn!("some connections were still open at shutdown"),
    }
    hub.close().await;
    Ok(())
}

/// Ends the change feed's watcher with the server.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Unknown paths: an ErrorEnvelope under /api and /mcp, the hub UI elsewhere.
async fn fallback(method: axum::http::Method, uri: Uri) -> Response {
    let path = uri.path();
    let api = path == "/api" || path.starts_with("/api/") || path.starts_with("/mcp");
    if api || !(method == axum::http::Method::GET || method == axum::http::Method::HEAD) {
        return not_found(uri).await.into_response();
    }
    ui::page(path)
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::new(
        ErrorBody::new(
            Category::NotFound,
            Code::E_ROUTE,
            format!("no route for {}", uri.path()),
        )
        .with_details(serde_json::json!({"path": uri.path(), "spec": "/api/openapi.json"})),
    )
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::with_status(
        ErrorBody::new(
            Category::Validation,
            Code::E_METHOD,
            format!(
                "{} is not allowed on {}",
                request.method(),
                request.uri().path()
            ),
        )
        .with_details(serde_json::json!({"field": "method", "got": request.method().as_str()})),
        StatusCode::METHOD_NOT_ALLOWED,
    )
}

/// Reads (GET, HEAD, OPTIONS) that outlive `REQUEST_TIMEOUT` are answered
/// 503: they changed nothing. Other methods may write, and a write is never answered
/// retryable while it may still commit: the tool runtime bounds read-only
/// tools by any method and lets writes finish.
async fn request_timeout(request: Request, next: Next) -> Response {
    if idempotency::may_write(request.method()) {
        return next.run(request).await;
    }
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            ErrorBody::new(
                Category::Transient,
                Code::E_TIMEOUT,
                format!("the request took longer than {REQUEST_TIMEOUT:?}"),
            )
            .with_details(serde_json::json!({"retry_after_seconds": 1})),
        )
        .into_response(),
    }
}

fn handler_panicked(_panic: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let error_id = uuid::Uuid::new_v4().simple().to_string()[..12].to_string();
    tracing::error!(error_id, "an HTTP handler panicked");
    let mut body = ErrorBody::new(
        Category::Internal,
        Code::E_INTERNAL,
        format!("internal error; the server log has the details under error_id {error_id}"),
    );
    body.error_id = Some(error_id);
    ApiError::new(body).into_response()
}

/// True when the router serving `path` keeps its own request IDs.
pub fn keeps_own_request_ids(path: &str) -> bool {
    routes::ROUTERS
        .iter()
        .filter_map(|router| router.request_ids_under)
        .any(|prefix| path.starts_with(prefix))
}
