//! `/api/receipts/{request_id}`: whether a board or evidence write committed.

use super::RouterSpec;
use crate::hub::{WriteReceipt, WriteReceiptInput, WriteReceiptTool};
use crate::tools::Hub;
use crate::web::extract::AppPath;
use crate::web::unwrap::{ApiError, ApiOk, Success, run};
use axum::extract::State;
use utoipa_axum::{router::OpenApiRouter, routes};

pub const SPEC: RouterSpec = RouterSpec {
    tag: "receipts",
    extra_errors: &[],
    request_ids_under: None,
    router,
};

fn router() -> OpenApiRouter<Hub> {
    OpenApiRouter::new().routes(routes!(write_receipt))
}

/// Whether the write sent under this request ID committed (kept 24 hours).
/// It waits for the writes under way, so the answer is final.
#[utoipa::path(get, path = "/api/receipts/{request_id}", operation_id = "write_receipt", tag = "receipts",
    params(("request_id" = String, Path, description = "The write's request ID: its X-Request-Id or Idempotency-Key, or as a COMMIT_UNKNOWN names it", pattern = "^[!-~]{1,266}$")),
    responses((status = 200, description = "committed or not_committed", body = ApiOk<WriteReceipt>)))]
async fn write_receipt(
    State(hub): State<Hub>,
    AppPath(request_id): AppPath<String>,
) -> Result<Success<WriteReceipt>, ApiError> {
    run::<WriteReceiptTool>(&hub, WriteReceiptInput { request_id }).await
}
