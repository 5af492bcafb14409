//! `/api/graph/...`: the knowledge graph's REST face; each handler calls one `cos_graph_*` tool.

use super::RouterSpec;
use crate::graph::index::IndexSummary;
use crate::graph::tools::{
    Context, ContextInput, GraphContext, GraphIndex, GraphSearch, IndexInput, SearchInput,
    SearchResults,
};
use crate::tools::Hub;
use crate::web::extract::AppQuery;
use crate::web::unwrap::{ApiError, ApiOk, Success, run};
use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

pub const SPEC: RouterSpec = RouterSpec {
    tag: "graph",
    extra_errors: &[],
    router,
};

fn router() -> OpenApiRouter<Hub> {
    OpenApiRouter::new()
        .routes(routes!(graph_index))
        .routes(routes!(graph_search))
        .routes(routes!(graph_context))
}

/// Indexes the repository: parses new and changed files and resolves references.
#[utoipa::path(post, path = "/api/graph/index", operation_id = "graph_index", tag = "graph",
    responses((status = 200, description = "What the run did", body = ApiOk<IndexSummary>)))]
async fn graph_index(State(hub): State<Hub>) -> Result<Success<IndexSummary>, ApiError> {
    run::<GraphIndex>(&hub, IndexInput {}).await
}

/// Finds nodes by name.
#[utoipa::path(get, path = "/api/graph/search", operation_id = "graph_search", tag = "graph", params(SearchInput),
    responses((status = 200, description = "Matching nodes", body = ApiOk<SearchResults>)))]
async fn graph_search(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<SearchInput>,
) -> Result<Success<SearchResults>, ApiError> {
    run::<GraphSearch>(&hub, input).await
}

/// A node and its neighbours.
#[utoipa::path(get, path = "/api/graph/context", operation_id = "graph_context", tag = "graph", params(ContextInput),
    responses((status = 200, description = "The node and its neighbours", body = ApiOk<Context>)))]
async fn graph_context(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<ContextInput>,
) -> Result<Success<Context>, ApiError> {
    run::<GraphContext>(&hub, input).await
}
