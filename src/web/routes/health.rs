//! `/api/health`: is the hub up, and what is it serving.

use super::RouterSpec;
use crate::hub::{Health, HubHealth, NoInput};
use crate::tools::Hub;
use crate::web::unwrap::{ApiError, ApiOk, Success, run};
use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

pub const SPEC: RouterSpec = RouterSpec {
    tag: "health",
    extra_errors: &[],
    request_ids_under: None,
    router,
};

fn router() -> OpenApiRouter<Hub> {
    OpenApiRouter::new().routes(routes!(health_get))
}

/// Health of the hub: version, uptime, repository, state directory and modules.
#[utoipa::path(get, path = "/api/health", operation_id = "health_get", tag = "health",
    responses((status = 200, description = "The hub is answering", body = ApiOk<Health>)))]
async fn health_get(State(hub): State<Hub>) -> Result<Success<Health>, ApiError> {
    run::<HubHealth>(&hub, NoInput {}).await
}
