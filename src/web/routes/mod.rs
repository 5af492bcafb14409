//! One file per router. Each router names its tag and the error statuses its
//! operations can answer beyond the shared 400/404/500/503; the spec finaliser
//! attaches an ErrorEnvelope response for each.

pub mod board;
pub mod docs;
pub mod graph;
pub mod health;
pub mod receipts;
pub mod search;
pub mod settings;
pub mod stream;
pub mod supervise;
pub mod tools;

use crate::tools::Hub;
use utoipa_axum::router::OpenApiRouter;

/// A router with the facts the spec needs about it.
pub struct RouterSpec {
    pub tag: &'static str,
    /// Error statuses beyond the shared ones that this router's operations can return.
    pub extra_errors: &'static [u16],
    /// Routes under this path take `Idempotency-Key` as their tools' own
    /// request ID (with receipts of their own), so the generic replay layer
    /// leaves them alone.
    pub request_ids_under: Option<&'static str>,
    pub router: fn() -> OpenApiRouter<Hub>,
}

/// Every router under /api.
pub const ROUTERS: &[RouterSpec] = &[
    health::SPEC,
    receipts::SPEC,
    settings::SPEC,
    board::SPEC,
    graph::SPEC,
    docs::SPEC,
    supervise::SPEC,
    search::SPEC,
    stream::SPEC,
    tools::SPEC,
];
