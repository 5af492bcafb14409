//! `/api/board/...`: the board's REST face. Each handler calls one `cos_task_*`
//! tool with the budget off; edits take the version from `If-Match` (a stale
//! one answers 412) and every task answer carries its version as an ETag.

use super::RouterSpec;
use crate::board::model::{Actor, Status, Task};
use crate::board::tools::*;
use crate::envelope::Code;
use crate::tools::{Hub, Source};
use crate::web::extract::{AppJson, AppPath, AppQuery};
use crate::web::unwrap::{ApiError, ApiOk, CachedSuccess, Success, create, run, run_cached};
use axum::extract::State;
use axum::http::{HeaderMap, header};
use serde::Deserialize;
use serde_json::json;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

pub const SPEC: RouterSpec = RouterSpec {
    tag: "board",
    extra_errors: &[403, 409, 412],
    request_ids_under: None,
    router,
};

fn router() -> OpenApiRouter<Hub> {
    OpenApiRouter::new()
        .routes(routes!(board_list))
        .routes(routes!(board_task_create))
        .routes(routes!(board_task_show, board_task_edit))
        .routes(routes!(board_task_move))
        .routes(routes!(board_task_reposition))
        .routes(routes!(board_task_history))
        .routes(routes!(board_task_dependencies))
        .routes(routes!(board_task_dependents))
        .routes(routes!(board_search))
        .routes(routes!(board_ready))
        .routes(routes!(board_claim_next))
        .routes(routes!(board_task_renew_lease))
}

/// The whole board: columns with cards, totals and WIP state; complete and archive paged.
#[utoipa::path(get, path = "/api/board/list", operation_id = "board_list", tag = "board", params(BoardInput),
    responses((status = 200, description = "The board", body = ApiOk<Board>)))]
async fn board_list(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<BoardInput>,
) -> Result<CachedSuccess<Board>, ApiError> {
    run_cached::<TaskBoard, _>(&hub, input).await
}

/// Creates a task.
#[utoipa::path(post, path = "/api/board/tasks", operation_id = "board_task_create", tag = "board",
    request_body = CreateInput,
    responses((status = 201, description = "The new task", body = ApiOk<Task>)))]
async fn board_task_create(
    State(hub): State<Hub>,
    AppJson(input): AppJson<CreateInput>,
) -> Result<Success<Task>, ApiError> {
    with_etag(create::<TaskCreate>(&hub, input).await)
}

/// One task in full.
#[utoipa::path(get, path = "/api/board/tasks/{id}", operation_id = "board_task_show", tag = "board",
    params(("id" = String, Path, description = "TASK-<n>", pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")),
    responses((status = 200, description = "The task; its ETag is its version", body = ApiOk<Task>)))]
async fn board_task_show(
    State(hub): State<Hub>,
    AppPath(id): AppPath<String>,
) -> Result<Success<Task>, ApiError> {
    with_etag(run::<TaskShow>(&hub, TaskRef { id }).await)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditBody {
    /// The version you read, if not sent as `If-Match`.
    pub version: Option<i64>,
    pub changes: TaskChanges,
    pub actor: Option<Actor>,
}

/// Edits a task. Send the version you read as `If-Match` (a stale one answers 412) or in the body (409).
#[utoipa::path(patch, path = "/api/board/tasks/{id}", operation_id = "board_task_edit", tag = "board",
    params(("id" = String, Path, description = "TASK-<n>", pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$"),
           ("If-Match" = Option<String>, Header, description = "The task's version as an entity tag, e.g. \"3\" (the ETag of a task answer), a list of them, or * for the current version; weak tags (W/\"3\") never match", pattern = r#"^(\*|(W/)?"[0-9]{1,18}"(, *(W/)?"[0-9]{1,18}")*)$"#)),
    request_body = EditBody,
    responses((status = 200, description = "The edited task", body = ApiOk<Task>)))]
async fn board_task_edit(
    State(hub): State<Hub>,
    AppPath(id): AppPath<String>,
    headers: HeaderMap,
    AppJson(body): AppJson<EditBody>,
) -> Result<Success<Task>, ApiError> {
    let precondition = if_match(&headers)?;
    let version = match (&precondition, body.version) {
        (None, Some(version)) => version,
        (None, None) => {
            return Err(ApiError::validation(
                Code::E_ARGUMENT,
                "version: required; send the version you read as If-Match: \"<version>\" or in the body",
                json!({"field": "version", "with": "If-Match"}),
            ));
        }
        (Some(IfMatch::Versions(tags)), Some(field)) if tags.contains(&field) => field,
        (Some(IfMatch::Versions(tags)), Some(field)) if !tags.is_empty() => {
            // the task would have to be at the body's version and at one of
            // the tags at once: If-Match cannot hold, whatever the task is now
            let current = hub
                .call::<TaskShow>(TaskRef { id: id.clone() }, Source::Rest)
                .await
                .map_err(ApiError::new)?
                .data;
            let why = format!("If-Match names {tags:?} but the body's version is {field}");
            return Err(stale_version(&current, &why));
        }
        (Some(IfMatch::Any), Some(field)) => field,
        (Some(IfMatch::Versions(tags)), None) if tags.len() == 1 => tags[0],
        (Some(precondition), _) => {
            // `*` or several tags: the edit applies to the current version if it matches
            let current = hub
                .call::<TaskShow>(TaskRef { id: id.clone() }, Source::Rest)
                .await
                .map_err(ApiError::new)?
                .data;
            if !precondition.matches(current.version) {
                return Err(precondition_failed(&current, precondition));
            }
            current.version
        }
    };
    let input = EditInput {
        id,
        version,
        changes: body.changes,
        actor: body.actor,
    };
    let result = hub.call::<TaskEdit>(input, Source::Rest).await;
    let task = result.map_err(|error| ApiError::new(error).conditional(precondition.is_some()))?;
    with_etag(Ok(Success::ok(task.data, "tasks")))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    /// The status you expect the task to be in.
    pub from: Status,
    pub to: Status,
    pub actor: Option<Actor>,
}

/// Moves a task to another status, if it is still where you saw it.
#[utoipa::path(post, path = "/api/board/tasks/{id}/move", operation_id = "board_task_move", tag = "board",
    params(("id" = String, Path, description = "TASK-<n>", pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")),
    request_body = MoveBody,
    responses((status = 200, description = "The moved task", body = ApiOk<Task>)))]
async fn board_task_move(
    State(hub): State<Hub>,
    AppPath(id): AppPath<String>,
    AppJson(body): AppJson<MoveBody>,
) -> Result<Success<Task>, ApiError> {
    with_etag(
        run::<TaskMove>(
            &hub,
            MoveInput {
                id,
                from: body.from,
                to: body.to,
                actor: body.actor,
            },
        )
        .await,
    )
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RepositionBody {
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub before: Option<String>,
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub after: Option<String>,
    pub actor: Option<Actor>,
}

/// Reorders a task within its column.
#[utoipa::path(post, path = "/api/board/tasks/{id}/reposition", operation_id = "board_task_reposition", tag = "board",
    params(("id" = String, Path, description = "TASK-<n>", pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")),
    request_body = RepositionBody,
    responses((status = 200, description = "The task at its new position", body = ApiOk<Task>)))]
async fn board_task_reposition(
    State(hub): State<Hub>,
    AppPath(id): AppPath<String>,
    AppJson(body): AppJson<RepositionBody>,
) -> Result<Success<Task>, ApiError> {
    let input = RepositionInput {
        id,
        before: body.before,
        after: body.after,
        actor: body.actor,
    };
    with_etag(run::<TaskReposition>(&hub, input).await)
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LimitQuery {
    /// Entries to return, newest first (1 to 1000, default 200).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    /// A previous answer's `next_cursor`: the older entries after it.
    pub cursor: Option<String>,
}

/// A task's history: every status change and field edit.
#[utoipa::path(get, path = "/api/board/tasks/{id}/history", operation_id = "board_task_history", tag = "board",
    params(("id" = String, Path, description = "TASK-<n>", pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$"), LimitQuery),
    responses((status = 200, description = "History, newest first", body = ApiOk<History>)))]
async fn board_task_history(
    State(hub): State<Hub>,
    AppPath(id): AppPath<String>,
    AppQuery(query): AppQuery<LimitQuery>,
) -> Result<Success<History>, ApiError> {
    run::<TaskHistory>(
        &hub,
        HistoryInput {
            id,
            limit: query.limit,
            cursor: query.cursor,
        },
    )
    .await
}

/// The tasks a task depends on, and which are still open.
#[utoipa::path(get, path = "/api/board/tasks/{id}/dependencies", operation_id = "board_task_dependencies", tag = "board",
    params(("id" = String, Path, description = "TASK-<n>", pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")),
    responses((status = 200, description = "Dependencies", body = ApiOk<Dependencies>)))]
async fn board_task_dependencies(
    State(hub): State<Hub>,
    AppPath(id): AppPath<String>,
) -> Result<Success<Dependencies>, ApiError> {
    run::<TaskDependencies>(&hub, TaskRef { id }).await
}

/// The tasks that depend on a task.
#[utoipa::path(get, path = "/api/board/tasks/{id}/dependents", operation_id = "board_task_dependents", tag = "board",
    params(("id" = String, Path, description = "TASK-<n>", pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")),
    responses((status = 200, description = "Dependents", body = ApiOk<Dependents>)))]
async fn board_task_dependents(
    State(hub): State<Hub>,
    AppPath(id): AppPath<String>,
) -> Result<Success<Dependents>, ApiError> {
    run::<TaskDependents>(&hub, TaskRef { id }).await
}

/// Finds tasks by words and filters.
#[utoipa::path(get, path = "/api/board/search", operation_id = "board_search", tag = "board", params(SearchInput),
    responses((status = 200, description = "Matching cards", body = ApiOk<CardList>)))]
async fn board_search(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<SearchInput>,
) -> Result<Success<CardList>, ApiError> {
    run::<TaskSearch>(&hub, input).await
}

/// Tasks ready to start, best first.
#[utoipa::path(get, path = "/api/board/ready", operation_id = "board_ready", tag = "board", params(ReadyInput),
    responses((status = 200, description = "Ready cards", body = ApiOk<CardList>)))]
async fn board_ready(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<ReadyInput>,
) -> Result<Success<CardList>, ApiError> {
    run::<TaskReady>(&hub, input).await
}

/// Atomically claims the best ready task for an actor.
#[utoipa::path(post, path = "/api/board/claim-next", operation_id = "board_claim_next", tag = "board",
    request_body = ClaimInput,
    responses((status = 200, description = "The claimed task, or null with a reason", body = ApiOk<Claim>)))]
async fn board_claim_next(
    State(hub): State<Hub>,
    AppJson(input): AppJson<ClaimInput>,
) -> Result<Success<Claim>, ApiError> {
    run::<TaskClaimNext>(&hub, input).await
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenewBody {
    pub actor: Option<Actor>,
    /// Seconds from now (default 900).
    #[schema(minimum = 5, maximum = 86400)]
    pub lease_seconds: Option<u32>,
}

/// Extends the caller's lease on a task it claimed.
#[utoipa::path(post, path = "/api/board/tasks/{id}/lease", operation_id = "board_task_renew_lease", tag = "board",
    params(("id" = String, Path, description = "TASK-<n>", pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")),
    request_body = RenewBody,
    responses((status = 200, description = "The task with its lease extended", body = ApiOk<Task>)))]
async fn board_task_renew_lease(
    State(hub): State<Hub>,
    AppPath(id): AppPath<String>,
    AppJson(body): AppJson<RenewBody>,
) -> Result<Success<Task>, ApiError> {
    let input = RenewInput {
        id,
        actor: body.actor,
        lease_seconds: body.lease_seconds,
    };
    with_etag(run::<TaskRenewLease>(&hub, input).await)
}

fn etag(task: &Task) -> String {
    format!("\"{}\"", task.version)
}

fn with_etag(result: Result<Success<Task>, ApiError>) -> Result<Success<Task>, ApiError> {
    result.map(|success| {
        let tag = etag(success.data());
        success.with_header(header::ETAG, tag)
    })
}

/// What an `If-Match` header asks for, compared strongly (RFC 9110 13.1.1):
/// `*` matches any current task; a weak tag (`W/"3"`) never matches.
#[derive(Debug)]
enum IfMatch {
    Any,
    /// The versions of the strong tags; none when every tag was weak.
    Versions(Vec<i64>),
}

impl IfMatch {
    fn matches(&self, version: i64) -> bool {
        match self {
            IfMatch::Any => true,
            IfMatch::Versions(versions) => versions.contains(&version),
        }
    }
}

/// `*`, or a list of entity tags such as `"3"`, `"3", "4"` or `W/"3"` (a bare
/// `3` is taken as `"3"`).
fn if_match(headers: &HeaderMap) -> Result<Option<IfMatch>, ApiError> {
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or("").trim();
    let refuse = || {
        ApiError::validation(
            Code::E_ARGUMENT,
            format!(
                "If-Match: expected * or the task's version as an entity tag such as \"3\", got {text:?}"
            ),
            json!({"field": "If-Match"}),
        )
    };
    if text == "*" {
        return Ok(Some(IfMatch::Any));
    }
    let mut versions = Vec::new();
    for tag in text.split(',').map(str::trim) {
        if let Some(weak) = tag.strip_prefix("W/") {
            weak.trim_matches('"')
                .parse::<i64>()
                .map_err(|_| refuse())?;
            continue;
        }
        let version = tag.trim_matches('"').parse::<i64>().map_err(|_| refuse())?;
        versions.push(version);
    }
    Ok(Some(IfMatch::Versions(versions)))
}

/// 412: the task's current version is not one `If-Match` accepts.
fn precondition_failed(current: &Task, precondition: &IfMatch) -> ApiError {
    let why = match precondition {
        IfMatch::Versions(versions) if versions.is_empty() => {
            "If-Match holds only weak tags, which never match an edit".to_string()
        }
        _ => format!(
            "If-Match does not name its current version {}",
            current.version
        ),
    };
    stale_version(current, &why)
}

/// 412 STALE_VERSION with the task as it is now.
fn stale_version(current: &Task, why: &str) -> ApiError {
    ApiError::new(
        crate::envelope::ErrorBody::new(
            crate::envelope::Category::Conflict,
            Code::STALE_VERSION,
            format!("{}: {why}; reload and re-apply", current.id),
        )
        .with_details(json!({"current": current})),
    )
    .conditional(true)
}
