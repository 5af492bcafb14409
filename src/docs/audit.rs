//! The history audit: walks the chain from the first entry, recomputing every
//! entry hash and checking every stored content against its hash; with a
//! checkpoint `{seq, entry_hash}` taken earlier it also proves the history up
//! to there is unchanged (only appended to since). A failure is recorded, so
//! every process refuses writes until an audit passes again.

use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::HashSet;
use utoipa::ToSchema;

use super::chain::{self, GENESIS, content_hash};
use super::model::{require_counted, require_full_hash};
use super::records;
use crate::store::Store;
use crate::tools::ToolError;

/// A point in the history: its sequence number and entry hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    #[schema(minimum = 1)]
    pub seq: i64,
    #[schema(min_length = 64, max_length = 64, pattern = "^[0-9a-f]{64}$")]
    pub entry_hash: String,
}

/// The first entry that does not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Fault {
    pub seq: i64,
    pub problem: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AuditReport {
    /// True when every entry and content checked out (and the checkpoint, if given).
    pub verified: bool,
    pub entries: i64,
    /// Distinct contents read back and hashed.
    pub contents: usize,
    /// The head to keep as a checkpoint.
    pub head: Option<Checkpoint>,
    pub first_bad: Option<Fault>,
    /// Whether the checkpoint given is still in the history as it was.
    pub checkpoint_holds: Option<bool>,
    /// True while writes are refused.
    pub writes_refused: bool,
}

/// A checkpoint that could have been a head: a mistyped or cut one is bad
/// input, never a sign that the history was rewritten.
fn check_checkpoint(point: &Checkpoint) -> Result<(), ToolError> {
    require_counted(
        "checkpoint.seq",
        point.seq,
        "the entry number an audit answered as its head",
    )?;
    require_full_hash(
        "checkpoint.entry_hash",
        &point.entry_hash,
        "the head's whole entry hash",
    )
}

/// Audits the whole history and records the verdict.
pub fn run(store: &Store, checkpoint: Option<&Checkpoint>) -> Result<AuditReport, ToolError> {
    if let Some(point) = checkpoint {
        check_checkpoint(point)?;
    }
    let mut expected_seq = 1;
    let mut prev = GENESIS.to_string();
    let mut fault: Option<Fault> = None;
    let mut checked: HashSet<String> = HashSet::new();
    let mut contents_fault: Option<Fault> = None;
    let mut checkpoint_holds = checkpoint.map(|_| false);
    store.view(|connection| {
        records::walk_history(connection, |entry| {
            let problem = if entry.seq != expected_seq {
                Some(format!(
                    "sequence number {} where {expected_seq} was expected",
                    entry.seq
                ))
            } else if entry.prev_hash != prev {
                Some("prev_hash does not match the previous entry's hash".to_string())
            } else if chain::entry_hash(&entry) != entry.entry_hash {
                Some("entry_hash does not match the entry's fields".to_string())
            } else {
                None
            };
            if let Some(problem) = problem {
                fault = Some(Fault {
                    seq: entry.seq,
                    problem,
                });
                return false;
            }
            if let Some(point) = checkpoint
                && point.seq == entry.seq
            {
                checkpoint_holds = Some(point.entry_hash == entry.entry_hash);
            }
            if !entry.hash.is_empty()
                && contents_fault.is_none()
                && checked.insert(entry.hash.clone())
            {
                let verdict = match records::content(connection, &entry.hash) {
                    Ok(Some((deflated, size))) => {
                        match chain::inflate(&deflated, usize::try_from(size).unwrap_or(0)) {
                            Ok(bytes) if content_hash(&bytes) == entry.hash => None,
                            Ok(_) => Some("its stored content does not match its hash"),
                            Err(_) => Some("its stored content cannot be decompressed"),
                        }
                    }
                    Ok(None) => Some("its content is missing"),
                    Err(_) => Some("its content cannot be read"),
                };
                if let Some(problem) = verdict {
                    contents_fault = Some(Fault {
                        seq: entry.seq,
                        problem: problem.to_string(),
                    });
                }
            }
            prev = entry.entry_hash.clone();
            expected_seq += 1;
            true
        })
    })?;
    let chain_fault = fault.or(contents_fault);
    let entries = expected_seq - 1;
    // A checkpoint is the caller's claim: one that does not hold fails this
    // audit, but only a fault in the chain itself refuses everyone's writes.
    let verdict = chain_fault
        .as_ref()
        .map(|fault| json!({"first_bad": fault, "audited_at": crate::tools::now()}).to_string());
    let fault = match (chain_fault, checkpoint, checkpoint_holds) {
        (Some(fault), ..) => Some(fault),
        (None, Some(point), Some(false)) => Some(Fault {
            seq: point.seq,
            problem: if point.seq > entries {
                format!(
                    "the checkpoint names entry {} but the history has {entries}",
                    point.seq
                )
            } else {
                "the entry differs from the checkpoint: the history was rewritten, not appended to"
                    .into()
            },
        }),
        _ => None,
    };
    let head = store
        .view(records::head)?
        .map(|(seq, entry_hash)| Checkpoint { seq, entry_hash });
    store.view(|connection| records::set_integrity_failure(connection, verdict.as_deref()))?;
    Ok(AuditReport {
        verified: fault.is_none(),
        entries,
        contents: checked.len(),
        head,
        writes_refused: verdict.is_some(),
        first_bad: fault,
        checkpoint_holds,
    })
}
