//! `/api/search`: the search tool over REST, with the budget off.

use super::RouterSpec;
use crate::search::indexer::{SearchIndex, SearchIndexInput, SearchIndexReport};
use crate::search::model::SearchAnswer;
use crate::search::tools::{Search, SearchRequest};
use crate::tools::Hub;
use crate::web::extract::{AppJson, AppQuery};
use crate::web::unwrap::{ApiError, Success, run};
use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

pub const SPEC: RouterSpec = RouterSpec {
    tag: "search",
    extra_errors: &[409],
    request_ids_under: None,
    router,
};

fn router() -> OpenApiRouter<Hub> {
    // the request's lists of areas, kinds, languages and statuses are what
    // the hub's areas offer search: declared before the schema is drawn
    for offered in crate::hub::AREAS.iter().filter_map(|area| area.search) {
        crate::tools::searchable::declare(offered);
    }
    OpenApiRouter::new()
        .routes(routes!(search))
        .routes(routes!(search_index))
}

/// One ranked search over code symbols, code text, documents, tasks and agent evidence.
#[utoipa::path(get, path = "/api/search", operation_id = "search", tag = "search",
    params(SearchRequest),
    responses((status = 200, description = "A page of ranked hits", body = crate::web::unwrap::ApiOk<SearchAnswer>)))]
async fn search(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<SearchRequest>,
) -> Result<Success<SearchAnswer>, ApiError> {
    run::<Search>(&hub, input).await
}

/// Brings the search index level with every area it follows now.
#[utoipa::path(post, path = "/api/search/index", operation_id = "search_index", tag = "search",
    request_body = SearchIndexInput,
    responses((status = 200, description = "What the index took in", body = crate::web::unwrap::ApiOk<SearchIndexReport>)))]
async fn search_index(
    State(hub): State<Hub>,
    AppJson(input): AppJson<SearchIndexInput>,
) -> Result<Success<SearchIndexReport>, ApiError> {
    run::<SearchIndex>(&hub, input).await
}
