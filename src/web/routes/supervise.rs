//! `/api/supervise/...`: agent evidence over REST. Each handler calls one
//! `cos_supervise_*` tool with the budget off; a recording answers 201.

use super::RouterSpec;
use crate::supervise::model::{DiscoveryDecision, EvidenceBundle, Noted, Recorded, SessionList};
use crate::supervise::tools::*;
use crate::tools::Hub;
use crate::web::extract::{AppJson, AppPath, AppQuery};
use crate::web::unwrap::{ApiError, Success, create, run};
use axum::extract::State;
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

pub const SPEC: RouterSpec = RouterSpec {
    tag: "supervise",
    extra_errors: &[403, 409],
    request_ids_under: None,
    router,
};

fn router() -> OpenApiRouter<Hub> {
    OpenApiRouter::new()
        .routes(routes!(supervise_record_output))
        .routes(routes!(supervise_sessions))
        .routes(routes!(supervise_bundle))
        .routes(routes!(supervise_record_discovery))
        .routes(routes!(supervise_record_backtrack))
}

/// Records a formula-agent's output into its session's bundle.
#[utoipa::path(post, path = "/api/supervise/outputs", operation_id = "supervise_record_output", tag = "supervise",
    request_body = RecordOutputInput,
    responses((status = 201, description = "What the output did to its bundle", body = crate::web::unwrap::ApiOk<Recorded>)))]
async fn supervise_record_output(
    State(hub): State<Hub>,
    AppJson(input): AppJson<RecordOutputInput>,
) -> Result<Success<Recorded>, ApiError> {
    create::<SuperviseRecordOutput>(&hub, input).await
}

/// Sessions by id, of one task when given.
#[utoipa::path(get, path = "/api/supervise/sessions", operation_id = "supervise_sessions", tag = "supervise",
    params(SessionsInput),
    responses((status = 200, description = "A page of sessions", body = crate::web::unwrap::ApiOk<SessionList>)))]
async fn supervise_sessions(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<SessionsInput>,
) -> Result<Success<SessionList>, ApiError> {
    run::<SuperviseSessions>(&hub, input).await
}

/// A session's evidence bundle.
#[utoipa::path(get, path = "/api/supervise/sessions/{session_id}", operation_id = "supervise_bundle", tag = "supervise",
    params(BundleInput),
    responses((status = 200, description = "The bundle", body = crate::web::unwrap::ApiOk<EvidenceBundle>)))]
async fn supervise_bundle(
    State(hub): State<Hub>,
    AppPath(session_id): AppPath<String>,
) -> Result<Success<EvidenceBundle>, ApiError> {
    run::<SuperviseBundle>(&hub, BundleInput { session_id }).await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DiscoveryBody {
    #[schema(min_length = 1, max_length = 64, format = "cos-visible-name")]
    pub kind: String,
    #[schema(min_length = 1, max_length = 2000, format = "cos-prose")]
    pub summary: String,
    #[schema(min_length = 1, max_length = 2000, format = "cos-prose")]
    pub impact_assessment: String,
    pub decision: DiscoveryDecision,
}

/// Adds a discovery to a session's bundle.
#[utoipa::path(post, path = "/api/supervise/sessions/{session_id}/discoveries", operation_id = "supervise_record_discovery", tag = "supervise",
    params(BundleInput), request_body = DiscoveryBody,
    responses((status = 201, description = "The bundle's accumulators now", body = crate::web::unwrap::ApiOk<Noted>)))]
async fn supervise_record_discovery(
    State(hub): State<Hub>,
    AppPath(session_id): AppPath<String>,
    AppJson(body): AppJson<DiscoveryBody>,
) -> Result<Success<Noted>, ApiError> {
    let input = RecordDiscoveryInput {
        session_id,
        kind: body.kind,
        summary: body.summary,
        impact_assessment: body.impact_assessment,
        decision: body.decision,
    };
    create::<SuperviseRecordDiscovery>(&hub, input).await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BacktrackBody {
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z0-9_]+$")]
    pub from_formula: String,
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z0-9_]+$")]
    pub to_formula: String,
    #[schema(min_length = 1, max_length = 2000, format = "cos-prose")]
    pub reason: String,
}

/// Adds a backtrack to a session's bundle.
#[utoipa::path(post, path = "/api/supervise/sessions/{session_id}/backtracks", operation_id = "supervise_record_backtrack", tag = "supervise",
    params(BundleInput), request_body = BacktrackBody,
    responses((status = 201, description = "The bundle's accumulators now", body = crate::web::unwrap::ApiOk<Noted>)))]
async fn supervise_record_backtrack(
    State(hub): State<Hub>,
    AppPath(session_id): AppPath<String>,
    AppJson(body): AppJson<BacktrackBody>,
) -> Result<Success<Noted>, ApiError> {
    let input = RecordBacktrackInput {
        session_id,
        from_formula: body.from_formula,
        to_formula: body.to_formula,
        reason: body.reason,
    };
    create::<SuperviseRecordBacktrack>(&hub, input).await
}
