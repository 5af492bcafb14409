//! Writing documents: create, patch, move and delete, each one request ID
//! with a receipt (`docs::write` holds the protocol), and reading a receipt.

use serde::Deserialize;
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};

use super::{actor_for, ready, spec};
use crate::docs::model::{Base, Receipt, ReceiptState};
use crate::docs::patch::Operation;
use crate::docs::paths;
use crate::docs::write::{self, Change, Intent, Written, check_request_id};
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

fn answer(written: Written) -> Answer<Receipt> {
    let mut answer = Answer::new(written.receipt);
    answer
        .meta
        .insert("replayed".into(), Value::Bool(written.replayed));
    answer
}

fn run_write(
    context: &ToolContext,
    mount: &str,
    path: &str,
    request_id: &str,
    actor: Option<&str>,
    change: impl FnOnce(&crate::docs::mounts::Mount) -> Result<Change, ToolError>,
) -> Result<Answer<Receipt>, ToolError> {
    check_request_id("request_id", request_id)?;
    let mounts = ready(context)?;
    let mount = mounts.get(mount)?;
    let path = paths::document("path", path, mount)?;
    let intent = Intent {
        mount,
        path,
        request_id: request_id.to_string(),
        change: change(mount)?,
        actor: actor_for(context, actor)?,
        source: context.source,
    };
    write::execute(&context.hub.store, intent).map(answer)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocCreateInput {
    /// The mount's exact key (cos_docs_mounts).
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: String,
    /// Relative to the mount, ending in .md or .markdown; folders are made as needed.
    #[schema(format = "cos-markdown-path")]
    pub path: String,
    /// The document's Markdown.
    pub content: String,
    /// New for each intent; resend the same one only with the identical
    /// request.
    #[schema(min_length = 1, max_length = 128, pattern = "^[!-~]+$")]
    pub request_id: String,
    /// Who to record (default: the front door's caller).
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub actor: Option<String>,
}

pub struct DocsCreate;

impl Tool for DocsCreate {
    type Input = DocCreateInput;
    type Output = Receipt;
    const SPEC: ToolSpec = spec(
        "cos_docs_create",
        "Creates a document (refused if one exists at the path). Answers a receipt; the same request_id and request returns it again without writing.",
    )
    .writing(false, true);

    fn run(context: &ToolContext, input: DocCreateInput) -> Result<Answer<Receipt>, ToolError> {
        let content = input.content;
        run_write(
            context,
            &input.mount,
            &input.path,
            &input.request_id,
            input.actor.as_deref(),
            |_| Ok(Change::Create { content }),
        )
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchInput {
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: String,
    #[schema(format = "cos-markdown-path")]
    pub path: String,
    /// The {rev, hash} you read; a stale one is refused with STALE_REVISION.
    pub base: Base,
    #[schema(min_length = 1, max_length = 128, pattern = "^[!-~]+$")]
    pub request_id: String,
    /// Applied in order, all or nothing; 1 to 100.
    #[schema(min_items = 1, max_items = 100)]
    pub operations: Vec<Operation>,
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub actor: Option<String>,
}

pub struct DocsPatch;

impl Tool for DocsPatch {
    type Input = PatchInput;
    type Output = Receipt;
    const SPEC: ToolSpec = spec(
        "cos_docs_patch",
        "Edits a document by operations on its sections or text, all or nothing, if it is still at base {rev, hash}; answers a receipt. On STALE_REVISION re-read, rebase, send with a new request_id; if unsure it committed, check cos_docs_receipt or resend it unchanged with the same request_id.",
    )
    .writing(true, true);

    fn run(context: &ToolContext, input: PatchInput) -> Result<Answer<Receipt>, ToolError> {
        let PatchInput {
            base, operations, ..
        } = input;
        if operations.is_empty() {
            return Err(ToolError::invalid("operations", "at least one operation"));
        }
        run_write(
            context,
            &input.mount,
            &input.path,
            &input.request_id,
            input.actor.as_deref(),
            |_| Ok(Change::Patch { base, operations }),
        )
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DocMoveInput {
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: String,
    #[schema(format = "cos-markdown-path")]
    pub path: String,
    /// The new path in the same mount; refused if a document is there.
    #[schema(format = "cos-markdown-path")]
    pub to: String,
    pub base: Base,
    #[schema(min_length = 1, max_length = 128, pattern = "^[!-~]+$")]
    pub request_id: String,
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub actor: Option<String>,
}

pub struct DocsMove;

impl Tool for DocsMove {
    type Input = DocMoveInput;
    type Output = Receipt;
    const SPEC: ToolSpec = spec(
        "cos_docs_move",
        "Moves (renames) a document within its mount if it is still at base {rev, hash}; answers a receipt.",
    )
    .writing(true, true);

    fn run(context: &ToolContext, input: DocMoveInput) -> Result<Answer<Receipt>, ToolError> {
        let DocMoveInput { base, to, .. } = input;
        run_write(
            context,
            &input.mount,
            &input.path,
            &input.request_id,
            input.actor.as_deref(),
            |mount| {
                Ok(Change::Move {
                    base,
                    to: paths::document("to", &to, mount)?,
                })
            },
        )
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteInput {
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: String,
    #[schema(format = "cos-markdown-path")]
    pub path: String,
    pub base: Base,
    #[schema(min_length = 1, max_length = 128, pattern = "^[!-~]+$")]
    pub request_id: String,
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub actor: Option<String>,
}

pub struct DocsDelete;

impl Tool for DocsDelete {
    type Input = DeleteInput;
    type Output = Receipt;
    const SPEC: ToolSpec = spec(
        "cos_docs_delete",
        "Deletes a document if it is still at base {rev, hash}; its revisions stay readable from history. Answers a receipt.",
    )
    .writing(true, true);

    fn run(context: &ToolContext, input: DeleteInput) -> Result<Answer<Receipt>, ToolError> {
        let base = input.base;
        run_write(
            context,
            &input.mount,
            &input.path,
            &input.request_id,
            input.actor.as_deref(),
            |_| Ok(Change::Delete { base }),
        )
    }
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ReceiptInput {
    /// 1 to 128 visible ASCII characters.
    #[schema(min_length = 1, max_length = 128, pattern = "^[!-~]+$")]
    #[param(min_length = 1, max_length = 128, pattern = "^[!-~]+$")]
    pub request_id: String,
}

pub struct DocsReceipt;

impl Tool for DocsReceipt {
    type Input = ReceiptInput;
    type Output = Receipt;
    const SPEC: ToolSpec = spec(
        "cos_docs_receipt",
        "Whether the write with this request_id committed: committed (with its receipt), not_committed (resend it, same request_id) or unknown (check the document; resend only the identical write).",
    );

    fn run(context: &ToolContext, input: ReceiptInput) -> Result<Answer<Receipt>, ToolError> {
        check_request_id("request_id", &input.request_id)?;
        let mounts = ready(context)?;
        let stored = write::stored_receipt(&context.hub.store, &mounts.mounts, &input.request_id)?;
        let receipt = match stored {
            Some(stored) => stored.receipt,
            None => Receipt {
                request_id: input.request_id.clone(),
                state: ReceiptState::NotCommitted,
                document: None,
                previous: None,
                seq: None,
                durable: None,
                op: None,
                known: false,
                advice: "Nothing with this request_id is in the history: it did not commit (or has not yet). Resend the identical write with the same request_id.".into(),
            },
        };
        let mut answer = Answer::new(receipt);
        answer
            .meta
            .insert("checked_at".into(), json!(crate::tools::now()));
        Ok(answer)
    }
}
