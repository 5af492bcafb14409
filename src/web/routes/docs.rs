//! `/api/docs/...`: the documents' REST face. Each handler calls one
//! `cos_docs_*` tool with the budget off. A document's path travels as a
//! query parameter; its identity is the strong ETag `"<rev>-<hash>"`;
//! `If-Match` is the base of a write (a stale one answers 412) and
//! `Idempotency-Key` its request ID, so a retried write returns its receipt.

use super::RouterSpec;
use crate::docs::audit::{AuditReport, Checkpoint};
use crate::docs::model::{Base, Identity, Receipt};
use crate::docs::patch::Operation;
use crate::docs::tools::*;
use crate::envelope::Code;
use crate::tools::Hub;
use crate::web::extract::{AppJson, AppPath, AppQuery};
use crate::web::unwrap::{ApiError, Success, create, run};
use axum::extract::State;
use axum::http::{HeaderMap, header};
use serde::Deserialize;
use serde_json::json;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

pub const SPEC: RouterSpec = RouterSpec {
    tag: "docs",
    extra_errors: &[403, 409, 412],
    request_ids_under: Some("/api/docs/"),
    router,
};

fn router() -> OpenApiRouter<Hub> {
    OpenApiRouter::new()
        .routes(routes!(docs_mounts))
        .routes(routes!(docs_list))
        .routes(routes!(docs_read, docs_patch, docs_delete))
        .routes(routes!(docs_create))
        .routes(routes!(docs_move))
        .routes(routes!(docs_read_many))
        .routes(routes!(docs_receipt))
        .routes(routes!(docs_history))
        .routes(routes!(docs_audit))
        .routes(routes!(docs_scan))
}

/// `"<rev>-<hash>"`: a document's identity as an entity tag.
fn etag(identity: &Identity) -> String {
    format!("\"{}-{}\"", identity.rev, identity.hash)
}

fn with_identity_etag<T: serde::Serialize>(
    result: Result<Success<T>, ApiError>,
    identity: impl Fn(&T) -> Option<&Identity>,
) -> Result<Success<T>, ApiError> {
    let success = result?;
    match identity(success.data()).filter(|identity| !identity.hash.is_empty()) {
        Some(identity) => {
            let tag = etag(identity);
            Ok(success.with_header(header::ETAG, tag))
        }
        None => Ok(success),
    }
}

/// The mounts and who may write where.
#[utoipa::path(get, path = "/api/docs/mounts", operation_id = "docs_mounts", tag = "docs",
    responses((status = 200, description = "The mounts", body = crate::web::unwrap::ApiOk<MountList>)))]
async fn docs_mounts(State(hub): State<Hub>) -> Result<Success<MountList>, ApiError> {
    run::<DocsMounts>(&hub, DocsNoInput {}).await
}

/// A mount's documents by path, each with its identity and last change.
#[utoipa::path(get, path = "/api/docs/list", operation_id = "docs_list", tag = "docs", params(ListInput),
    responses((status = 200, description = "A page of documents", body = crate::web::unwrap::ApiOk<DocListing>)))]
async fn docs_list(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<ListInput>,
) -> Result<Success<DocListing>, ApiError> {
    run::<DocsList>(&hub, input).await
}

/// One document (or a section of it, or a past revision), by page; its ETag is its identity.
#[utoipa::path(get, path = "/api/docs/document", operation_id = "docs_read", tag = "docs", params(ReadInput),
    responses((status = 200, description = "The page; the ETag is \"<rev>-<hash>\"", body = crate::web::unwrap::ApiOk<DocPage>)))]
async fn docs_read(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<ReadInput>,
) -> Result<Success<DocPage>, ApiError> {
    with_identity_etag(run::<DocsRead>(&hub, input).await, |page| {
        Some(&page.document)
    })
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DocumentQuery {
    /// The mount's exact key.
    #[param(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: String,
    /// The document's path in the mount.
    #[param(format = "cos-markdown-path")]
    pub path: String,
}

/// The request ID of a write: the Idempotency-Key header, else the body's
/// `request_id`, else a fresh one (a write sent without either is not
/// safe to retry).
fn request_id(headers: &HeaderMap, in_body: Option<String>) -> Result<String, ApiError> {
    let header = match headers.get(crate::web::idempotency::HEADER) {
        None => None,
        Some(value) => Some(value.to_str().map(str::to_string).map_err(|_| {
            ApiError::validation(
                Code::E_REQUEST_ID,
                "Idempotency-Key: expected 1 to 128 visible ASCII characters",
                json!({"field": "Idempotency-Key"}),
            )
        })?),
    };
    match (header, in_body) {
        (Some(header), Some(body)) if header != body => Err(ApiError::validation(
            Code::E_ARGUMENT,
            "request_id: the body's request_id differs from the Idempotency-Key header; send one",
            json!({"field": "request_id", "with": "Idempotency-Key"}),
        )),
        (Some(id), _) | (None, Some(id)) => Ok(id),
        (None, None) => Ok(format!("rest-{}", uuid::Uuid::new_v4().simple())),
    }
}

/// What If-Match asks for.
enum Precondition {
    /// No If-Match.
    None,
    /// `*`: whatever the document is now.
    Any,
    /// Strong tags `"<rev>-<hash>"`; weak ones never match and are dropped.
    Tags(Vec<Base>),
}

fn precondition(headers: &HeaderMap) -> Result<Precondition, ApiError> {
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Ok(Precondition::None);
    };
    let text = value.to_str().map_err(|_| bad_if_match())?.trim();
    if text == "*" {
        return Ok(Precondition::Any);
    }
    let mut tags = Vec::new();
    for tag in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if tag.starts_with("W/") {
            continue;
        }
        let inner = tag
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .ok_or_else(bad_if_match)?;
        let (rev, hash) = inner.split_once('-').ok_or_else(bad_if_match)?;
        let rev: i64 = rev.parse().map_err(|_| bad_if_match())?;
        let tag = Base {
            rev,
            hash: hash.to_string(),
        };
        // a tag no revision can have (a cut or mistyped hash) never matches,
        // as a weak one: the answer is then 412 with the current ETag
        if tag.could_name_a_revision() {
            tags.push(tag);
        }
    }
    Ok(Precondition::Tags(tags))
}

fn bad_if_match() -> ApiError {
    ApiError::validation(
        Code::E_ARGUMENT,
        "If-Match: expected * or entity tags like \"3-<hash>\" (a document's ETag)",
        json!({"field": "If-Match"}),
    )
}

/// The base of a write from If-Match and the body; `None` in the second
/// place means the request carried no precondition.
async fn base_of(
    hub: &Hub,
    query: &DocumentQuery,
    headers: &HeaderMap,
    in_body: Option<Base>,
) -> Result<(Base, bool), ApiError> {
    let precondition = precondition(headers)?;
    let current = || async {
        let page = run::<DocsRead>(
            hub,
            ReadInput {
                mount: query.mount.clone(),
                path: query.path.clone(),
                section: None,
                rev: None,
                cursor: None,
                page_bytes: Some(256),
            },
        )
        .await?;
        Ok::<Identity, ApiError>(page.data().document.clone())
    };
    match (precondition, in_body) {
        (Precondition::None, Some(base)) => Ok((base, false)),
        (Precondition::None, None) => Err(ApiError::validation(
            Code::E_ARGUMENT,
            "base: required; send the document's ETag as If-Match or {rev, hash} as base",
            json!({"field": "base", "with": "If-Match"}),
        )),
        (Precondition::Any, Some(base)) => Ok((base, true)),
        (Precondition::Tags(tags), Some(base)) if tags.contains(&base) => Ok((base, true)),
        // the document would have to be the body's base and one of the tags at
        // once: If-Match cannot hold whatever the document is now
        (Precondition::Tags(_), Some(_)) => Err(if_match_failed(current().await?)),
        (Precondition::Tags(mut tags), None) if tags.len() == 1 => Ok((tags.remove(0), true)),
        (precondition, None) => {
            let identity = current().await?;
            let now = Base {
                rev: identity.rev,
                hash: identity.hash.clone(),
            };
            match precondition {
                Precondition::Tags(tags) if !tags.contains(&now) => Err(if_match_failed(identity)),
                _ => Ok((now, true)),
            }
        }
    }
}

/// 412: If-Match does not hold for the document as it is now.
fn if_match_failed(identity: Identity) -> ApiError {
    ApiError::new(
        crate::envelope::ErrorBody::new(
            crate::envelope::Category::Conflict,
            Code::STALE_REVISION,
            "If-Match: none of the entity tags is both the write's base and the document's current identity; re-read it",
        )
        .with_details(json!({"field": "If-Match", "current": identity})),
    )
    .conditional(true)
}

/// A stale base answers 412 when it came as If-Match.
fn conditional<T: serde::Serialize>(
    result: Result<Success<T>, ApiError>,
    conditional: bool,
) -> Result<Success<T>, ApiError> {
    result.map_err(|error| {
        let stale = error.body.code == Code::STALE_REVISION;
        error.conditional(conditional && stale)
    })
}

fn receipt_identity(receipt: &Receipt) -> Option<&Identity> {
    receipt.document.as_ref()
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateBody {
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: String,
    #[schema(format = "cos-markdown-path")]
    pub path: String,
    pub content: String,
    /// The request ID, if not sent as Idempotency-Key.
    #[schema(min_length = 1, max_length = 128, pattern = "^[!-~]+$")]
    pub request_id: Option<String>,
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub actor: Option<String>,
}

/// Creates a document; answers its receipt (201), the ETag its identity.
#[utoipa::path(post, path = "/api/docs/documents", operation_id = "docs_create", tag = "docs",
    request_body = CreateBody,
    responses((status = 201, description = "The receipt", body = crate::web::unwrap::ApiOk<Receipt>)))]
async fn docs_create(
    State(hub): State<Hub>,
    headers: HeaderMap,
    AppJson(body): AppJson<CreateBody>,
) -> Result<Success<Receipt>, ApiError> {
    let input = DocCreateInput {
        request_id: request_id(&headers, body.request_id)?,
        mount: body.mount,
        path: body.path,
        content: body.content,
        actor: body.actor,
    };
    with_identity_etag(create::<DocsCreate>(&hub, input).await, receipt_identity)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchBody {
    /// The {rev, hash} you read, if not sent as If-Match.
    pub base: Option<Base>,
    #[schema(min_length = 1, max_length = 128, pattern = "^[!-~]+$")]
    pub request_id: Option<String>,
    #[schema(min_items = 1, max_items = 100)]
    pub operations: Vec<Operation>,
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub actor: Option<String>,
}

/// Edits a document by operations if it is still at its base (If-Match: its ETag; a stale one answers 412).
#[utoipa::path(patch, path = "/api/docs/document", operation_id = "docs_patch", tag = "docs",
    params(DocumentQuery,
           ("If-Match" = Option<String>, Header, description = "The document's ETag (\"<rev>-<hash>\"), a list of them, or *; weak tags never match", pattern = r#"^(\*|(W/)?"[0-9]{1,18}-[0-9a-f]{64}"(, *(W/)?"[0-9]{1,18}-[0-9a-f]{64}")*)$"#)),
    request_body = PatchBody,
    responses((status = 200, description = "The receipt", body = crate::web::unwrap::ApiOk<Receipt>)))]
async fn docs_patch(
    State(hub): State<Hub>,
    AppQuery(query): AppQuery<DocumentQuery>,
    headers: HeaderMap,
    AppJson(body): AppJson<PatchBody>,
) -> Result<Success<Receipt>, ApiError> {
    let request_id = request_id(&headers, body.request_id)?;
    let (base, from_header) = base_of(&hub, &query, &headers, body.base).await?;
    let input = PatchInput {
        mount: query.mount,
        path: query.path,
        base,
        request_id,
        operations: body.operations,
        actor: body.actor,
    };
    conditional(
        with_identity_etag(run::<DocsPatch>(&hub, input).await, receipt_identity),
        from_header,
    )
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeleteQuery {
    #[param(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: String,
    #[param(format = "cos-markdown-path")]
    pub path: String,
    /// The rev you read, if not sent as If-Match (with `hash`).
    #[param(minimum = 1)]
    pub rev: Option<i64>,
    /// The hash you read, with `rev`.
    #[param(min_length = 64, max_length = 64, pattern = "^[0-9a-f]{64}$")]
    pub hash: Option<String>,
    #[param(min_length = 1, max_length = 128, pattern = "^[!-~]+$")]
    pub request_id: Option<String>,
}

/// Deletes a document if it is still at its base (If-Match: its ETag).
#[utoipa::path(delete, path = "/api/docs/document", operation_id = "docs_delete", tag = "docs",
    params(DeleteQuery,
           ("If-Match" = Option<String>, Header, description = "The document's ETag (\"<rev>-<hash>\"), a list of them, or *", pattern = r#"^(\*|(W/)?"[0-9]{1,18}-[0-9a-f]{64}"(, *(W/)?"[0-9]{1,18}-[0-9a-f]{64}")*)$"#)),
    responses((status = 200, description = "The receipt", body = crate::web::unwrap::ApiOk<Receipt>)))]
async fn docs_delete(
    State(hub): State<Hub>,
    AppQuery(query): AppQuery<DeleteQuery>,
    headers: HeaderMap,
) -> Result<Success<Receipt>, ApiError> {
    let request_id = request_id(&headers, query.request_id)?;
    let in_query = match (query.rev, query.hash) {
        (Some(rev), Some(hash)) => Some(Base { rev, hash }),
        (None, None) => None,
        _ => {
            return Err(ApiError::validation(
                Code::E_ARGUMENT,
                "rev: send rev and hash together, or If-Match",
                json!({"field": "rev", "with": "hash"}),
            ));
        }
    };
    let document = DocumentQuery {
        mount: query.mount,
        path: query.path,
    };
    let (base, from_header) = base_of(&hub, &document, &headers, in_query).await?;
    let input = DeleteInput {
        mount: document.mount,
        path: document.path,
        base,
        request_id,
        actor: None,
    };
    conditional(run::<DocsDelete>(&hub, input).await, from_header)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocMoveBody {
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: String,
    #[schema(format = "cos-markdown-path")]
    pub path: String,
    #[schema(format = "cos-markdown-path")]
    pub to: String,
    pub base: Option<Base>,
    #[schema(min_length = 1, max_length = 128, pattern = "^[!-~]+$")]
    pub request_id: Option<String>,
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub actor: Option<String>,
}

/// Moves a document within its mount if it is still at its base.
#[utoipa::path(post, path = "/api/docs/move", operation_id = "docs_move", tag = "docs",
    params(("If-Match" = Option<String>, Header, description = "The document's ETag, a list of them, or *", pattern = r#"^(\*|(W/)?"[0-9]{1,18}-[0-9a-f]{64}"(, *(W/)?"[0-9]{1,18}-[0-9a-f]{64}")*)$"#)),
    request_body = DocMoveBody,
    responses((status = 200, description = "The receipt", body = crate::web::unwrap::ApiOk<Receipt>)))]
async fn docs_move(
    State(hub): State<Hub>,
    headers: HeaderMap,
    AppJson(body): AppJson<DocMoveBody>,
) -> Result<Success<Receipt>, ApiError> {
    let request_id = request_id(&headers, body.request_id)?;
    let document = DocumentQuery {
        mount: body.mount,
        path: body.path,
    };
    let (base, from_header) = base_of(&hub, &document, &headers, body.base).await?;
    let input = DocMoveInput {
        mount: document.mount,
        path: document.path,
        to: body.to,
        base,
        request_id,
        actor: body.actor,
    };
    conditional(
        with_identity_etag(run::<DocsMove>(&hub, input).await, receipt_identity),
        from_header,
    )
}

/// The first page of up to 20 documents of one mount.
#[utoipa::path(post, path = "/api/docs/read-many", operation_id = "docs_read_many", tag = "docs",
    request_body = ReadManyInput,
    responses((status = 200, description = "One first page (or error) per path", body = crate::web::unwrap::ApiOk<ManyPages>)))]
async fn docs_read_many(
    State(hub): State<Hub>,
    AppJson(input): AppJson<ReadManyInput>,
) -> Result<Success<ManyPages>, ApiError> {
    run::<DocsReadMany>(&hub, input).await
}

/// Whether the write with this request ID committed.
#[utoipa::path(get, path = "/api/docs/receipts/{request_id}", operation_id = "docs_receipt", tag = "docs",
    params(("request_id" = String, Path, description = "The write's request ID (or Idempotency-Key)", pattern = "^[!-~]{1,128}$")),
    responses((status = 200, description = "committed, not_committed or unknown", body = crate::web::unwrap::ApiOk<Receipt>)))]
async fn docs_receipt(
    State(hub): State<Hub>,
    AppPath(request_id): AppPath<String>,
) -> Result<Success<Receipt>, ApiError> {
    run::<DocsReceipt>(&hub, ReceiptInput { request_id }).await
}

/// The hash-chained history, newest first.
#[utoipa::path(get, path = "/api/docs/history", operation_id = "docs_history", tag = "docs", params(DocHistoryInput),
    responses((status = 200, description = "A page of history", body = crate::web::unwrap::ApiOk<HistoryPage>)))]
async fn docs_history(
    State(hub): State<Hub>,
    AppQuery(input): AppQuery<DocHistoryInput>,
) -> Result<Success<HistoryPage>, ApiError> {
    run::<DocsHistory>(&hub, input).await
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// A checkpoint's seq (with entry_hash): also prove the history up to it is unchanged.
    #[param(minimum = 1)]
    pub seq: Option<i64>,
    /// That checkpoint's entry hash, whole (with seq).
    #[param(min_length = 64, max_length = 64, pattern = "^[0-9a-f]{64}$")]
    pub entry_hash: Option<String>,
}

/// Audits the history; answers the head to keep as a checkpoint.
#[utoipa::path(get, path = "/api/docs/audit", operation_id = "docs_audit", tag = "docs", params(AuditQuery),
    responses((status = 200, description = "The audit", body = crate::web::unwrap::ApiOk<AuditReport>)))]
async fn docs_audit(
    State(hub): State<Hub>,
    AppQuery(query): AppQuery<AuditQuery>,
) -> Result<Success<AuditReport>, ApiError> {
    let checkpoint = match (query.seq, query.entry_hash) {
        (Some(seq), Some(entry_hash)) => Some(Checkpoint { seq, entry_hash }),
        (None, None) => None,
        _ => {
            return Err(ApiError::validation(
                Code::E_ARGUMENT,
                "seq: send seq and entry_hash together",
                json!({"field": "seq", "with": "entry_hash"}),
            ));
        }
    };
    run::<DocsAudit>(&hub, AuditInput { checkpoint }).await
}

/// Notices edits made outside the hub now.
#[utoipa::path(post, path = "/api/docs/scan", operation_id = "docs_scan", tag = "docs",
    request_body = ScanInput,
    responses((status = 200, description = "What changed", body = crate::web::unwrap::ApiOk<ScanReport>)))]
async fn docs_scan(
    State(hub): State<Hub>,
    AppJson(input): AppJson<ScanInput>,
) -> Result<Success<ScanReport>, ApiError> {
    run::<DocsScan>(&hub, input).await
}
