//! `/api/graph/...`: the knowledge graph's REST face; each handler calls one `cos_graph_*` tool.

use super::RouterSpec;
use crate::graph::analysis::{
    Export, ExportInput, GraphExport, GraphImpact, GraphPath, GraphReferences, Impact, ImpactInput,
    PathAnswer, PathInput, References, ReferencesInput,
};
use crate::graph::changes::{Changes, ChangesInput, ChangesTool};
use crate::graph::doctor::{Doctor, DoctorInput, GraphDoctor};
use crate::graph::index::IndexSummary;
use crate::graph::plans::{GraphSimilar, GraphTrace, Similar, SimilarInput, Trace, TraceInput};
use crate::graph::rename::{GraphRenamePlan, RenamePlan, RenamePlanInput};
use crate::graph::tools::{
    Context, ContextInput, GraphContext, GraphIndex, GraphResolve, GraphSearch, GraphSearchInput,
    IndexInput, ResolveAnswer, ResolveInput, SearchResults,
};
use crate::tools::Hub;
use crate::web::extract::{AppJson, AppQuery};
use crate::web::unwrap::{ApiError, ApiOk, CachedSuccess, Success, run, run_cached};
use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

pub const SPEC: RouterSpec = RouterSpec {
    tag: "graph",
    extra_errors: &[],
    request_ids_under: None,
    router,
};

fn router() -> OpenApiRouter<Hub> {
    OpenApiRouter::new()
        .routes(routes!(graph_index))
        .routes(routes!(graph_search))
        .routes(routes!(graph_resolve))
        .routes(routes!(graph_context))
        .routes(routes!(graph_rename_plan))
        .routes(routes!(graph_trace))
        .routes(routes!(graph_similar))
        .routes(routes!(graph_impact))
        .routes(routes!(graph_references))
        .routes(routes!(graph_path))
        .routes(routes!(graph_export))
        .routes(routes!(graph_doctor))
        .routes(routes!(changes))
}

/// What the working tree's change (or the staged one, or a range's) affects.
#[utoipa::path(get, path = "/api/changes", operation_id = "changes", tag = "graph", params(ChangesInput),
    responses((status = 200, description = "The changed symbols with their dependents, tests, tasks and documents", body = ApiOk<Changes>)))]
async fn changes(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<ChangesInput>,
) -> Result<Success<Changes>, ApiError> {
    run::<ChangesTool>(&hub, input).await
}

/// What depends on a node, in tiers by distance.
#[utoipa::path(post, path = "/api/graph/impact", operation_id = "graph_impact", tag = "graph", request_body = ImpactInput,
    responses((status = 200, description = "Dependents in tiers", body = ApiOk<Impact>)))]
async fn graph_impact(
    State(hub): State<Hub>,
    AppJson(input): AppJson<ImpactInput>,
) -> Result<Success<Impact>, ApiError> {
    run::<GraphImpact>(&hub, input).await
}

/// Who refers to a node.
#[utoipa::path(post, path = "/api/graph/references", operation_id = "graph_references", tag = "graph", request_body = ReferencesInput,
    responses((status = 200, description = "Incoming references", body = ApiOk<References>)))]
async fn graph_references(
    State(hub): State<Hub>,
    AppJson(input): AppJson<ReferencesInput>,
) -> Result<Success<References>, ApiError> {
    run::<GraphReferences>(&hub, input).await
}

/// The shortest path between two nodes.
#[utoipa::path(post, path = "/api/graph/path", operation_id = "graph_path", tag = "graph", request_body = PathInput,
    responses((status = 200, description = "The path, or found: false", body = ApiOk<PathAnswer>)))]
async fn graph_path(
    State(hub): State<Hub>,
    AppJson(input): AppJson<PathInput>,
) -> Result<Success<PathAnswer>, ApiError> {
    run::<GraphPath>(&hub, input).await
}

/// A subgraph as nodes and edges.
#[utoipa::path(post, path = "/api/graph/export", operation_id = "graph_export", tag = "graph", request_body = ExportInput,
    responses((status = 200, description = "Nodes and the edges between them", body = ApiOk<Export>)))]
async fn graph_export(
    State(hub): State<Hub>,
    AppJson(input): AppJson<ExportInput>,
) -> Result<CachedSuccess<Export>, ApiError> {
    run_cached::<GraphExport, _>(&hub, input).await
}

/// The graph's health, and fixing what can be fixed.
#[utoipa::path(post, path = "/api/graph/doctor", operation_id = "graph_doctor", tag = "graph", request_body = DoctorInput,
    responses((status = 200, description = "Issues by category", body = ApiOk<Doctor>)))]
async fn graph_doctor(
    State(hub): State<Hub>,
    AppJson(input): AppJson<DoctorInput>,
) -> Result<Success<Doctor>, ApiError> {
    run::<GraphDoctor>(&hub, input).await
}

/// Indexes the repository: parses new and changed files and resolves references.
#[utoipa::path(post, path = "/api/graph/index", operation_id = "graph_index", tag = "graph",
    responses((status = 200, description = "What the run did", body = ApiOk<IndexSummary>)))]
async fn graph_index(State(hub): State<Hub>) -> Result<Success<IndexSummary>, ApiError> {
    run::<GraphIndex>(&hub, IndexInput {}).await
}

/// Finds nodes by name.
#[utoipa::path(get, path = "/api/graph/search", operation_id = "graph_search", tag = "graph", params(GraphSearchInput),
    responses((status = 200, description = "Matching nodes", body = ApiOk<SearchResults>)))]
async fn graph_search(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<GraphSearchInput>,
) -> Result<Success<SearchResults>, ApiError> {
    run::<GraphSearch>(&hub, input).await
}

/// A node and its neighbours.
#[utoipa::path(get, path = "/api/graph/context", operation_id = "graph_context", tag = "graph", params(ContextInput),
    responses((status = 200, description = "The node and its neighbours", body = ApiOk<Context>)))]
async fn graph_context(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<ContextInput>,
) -> Result<CachedSuccess<Context>, ApiError> {
    run_cached::<GraphContext, _>(&hub, input).await
}

/// One node for a uid, a path or a name.
#[utoipa::path(get, path = "/api/graph/resolve", operation_id = "graph_resolve", tag = "graph", params(ResolveInput),
    responses((status = 200, description = "The node the query names", body = ApiOk<ResolveAnswer>)))]
async fn graph_resolve(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<ResolveInput>,
) -> Result<Success<ResolveAnswer>, ApiError> {
    run::<GraphResolve>(&hub, input).await
}

/// Everything renaming a symbol touches, and in which order.
#[utoipa::path(post, path = "/api/graph/rename-plan", operation_id = "graph_rename_plan", tag = "graph", request_body = RenamePlanInput,
    responses((status = 200, description = "Sites by kind, risk and order", body = ApiOk<RenamePlan>)))]
async fn graph_rename_plan(
    State(hub): State<Hub>,
    AppJson(input): AppJson<RenamePlanInput>,
) -> Result<Success<RenamePlan>, ApiError> {
    run::<GraphRenamePlan>(&hub, input).await
}

/// The forward call chain from a function.
#[utoipa::path(post, path = "/api/graph/trace", operation_id = "graph_trace", tag = "graph", request_body = TraceInput,
    responses((status = 200, description = "Steps, branches and external targets", body = ApiOk<Trace>)))]
async fn graph_trace(
    State(hub): State<Hub>,
    AppJson(input): AppJson<TraceInput>,
) -> Result<Success<Trace>, ApiError> {
    run::<GraphTrace>(&hub, input).await
}

/// Symbols that look like this one.
#[utoipa::path(post, path = "/api/graph/similar", operation_id = "graph_similar", tag = "graph", request_body = SimilarInput,
    responses((status = 200, description = "Similar symbols, best first", body = ApiOk<Similar>)))]
async fn graph_similar(
    State(hub): State<Hub>,
    AppJson(input): AppJson<SimilarInput>,
) -> Result<Success<Similar>, ApiError> {
    run::<GraphSimilar>(&hub, input).await
}
