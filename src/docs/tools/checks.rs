//! Checking the record: the history audit and a scan that notices every
//! edit made outside the hub now (the serve loop runs it as the watcher).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{ready, spec};
use crate::docs::audit::{self, AuditReport, Checkpoint};
use crate::docs::{disk, sync};
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditInput {
    /// A head `{seq, entry_hash}` from an earlier audit, to prove the history
    /// up to it unchanged.
    pub checkpoint: Option<Checkpoint>,
}

pub struct DocsAudit;

impl Tool for DocsAudit {
    type Input = AuditInput;
    type Output = AuditReport;
    const SPEC: ToolSpec = spec(
        "cos_docs_audit",
        "Audits the documents' hash-chained history and contents: the head {seq, entry_hash} to keep as a checkpoint, or the first bad entry (writes get E_INTEGRITY until it passes).",
    )
    .for_upkeep();

    fn run(context: &ToolContext, input: AuditInput) -> Result<Answer<AuditReport>, ToolError> {
        ready(context)?;
        audit::run(&context.hub.store, input.checkpoint.as_ref()).map(Answer::new)
    }
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScanInput {
    /// Only this mount (default: every mount).
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ScanReport {
    /// Mounts scanned.
    pub mounts: Vec<String>,
    /// Documents found changed outside the hub, now recorded as revisions.
    pub changed: usize,
}

pub struct DocsScan;

impl Tool for DocsScan {
    type Input = ScanInput;
    type Output = ScanReport;
    const SPEC: ToolSpec = spec(
        "cos_docs_scan",
        "Notices edits made outside the hub (an editor, git checkout) in every mount now and records them as revisions with source external.",
    )
    .writing(false, true)
    // every read catches up with outside edits, and `cos serve` watches the mounts
    .for_upkeep();

    fn run(context: &ToolContext, input: ScanInput) -> Result<Answer<ScanReport>, ToolError> {
        let mounts = ready(context)?;
        let chosen: Vec<&crate::docs::mounts::Mount> = match &input.mount {
            Some(key) => vec![mounts.get(key)?],
            None => mounts.mounts.iter().collect(),
        };
        let mut changed = 0;
        for mount in &chosen {
            let dir = disk::open(mount, false)?;
            changed += sync::scan(&context.hub.store, mount, dir.as_ref())?;
        }
        Ok(Answer::new(ScanReport {
            mounts: chosen.iter().map(|m| m.key.clone()).collect(),
            changed,
        }))
    }
}
