//! The write protocol every document change follows, so that an answer of
//! `committed` is true after any crash and a request ID is never applied twice:
//!
//! 1. A request ID already answered: the same intent gets the stored receipt
//!    again, another intent `E_REQUEST_REUSE` with the original receipt.
//! 2. The file is read and hashed right before the write (an outside edit is
//!    recorded as an `external` revision first), and the base must be the
//!    document's current `{rev, hash}`, else `STALE_REVISION`.
//! 3. The new content goes to a temporary file beside the document.
//! 4. One transaction at `synchronous = FULL`: the content, the history
//!    entry, the document's row, the receipt and a publication record (the
//!    redo journal). Nothing is on record before this commits; everything is
//!    after it. The temporary file is synced first when other writers are
//!    committing (this one waits for them anyway), else meanwhile on another
//!    thread, so that a lone writer's two syncs overlap.
//! 5. Once both are done, the temporary file is renamed over the document
//!    and the folder synced; the publication is forgotten. A crash between 4
//!    and 5 is finished by whoever touches the document next or by the next
//!    start (`sync::finish`), which syncs the temporary file first, or writes
//!    it anew from the stored content when the crash tore it; where the files
//!    no longer say what happened, the receipt turns `unknown`.
//!
//! One file (about 840 lines) because the steps share one write's state and
//! their order is the crash guarantee: split, the order would be spread over
//! files that each look safe alone.

use serde_json::{Value, json};
use std::collections::HashSet;

use super::chain::content_hash;
use super::disk::{self, MountDir};
use super::group;
use super::model::{Base, DocHistoryEntry, Durability, Identity, Receipt, ReceiptState};
use super::mounts::Mount;
use super::outlines;
use super::patch::{self, Operation};
use super::paths::DocPath;
use super::records::{self, DocRow, Publishing};
use super::sections;
use super::sync::{self, Current, Outcome};
use crate::envelope::{Category, Code, ErrorBody};
use crate::store::Store;
use crate::tools::now;
use crate::tools::{Source, ToolError};

/// What a write asks for.
#[derive(Debug, Clone)]
pub enum Change {
    Create {
        content: String,
    },
    Patch {
        base: Base,
        operations: Vec<Operation>,
    },
    Move {
        base: Base,
        to: DocPath,
    },
    Delete {
        base: Base,
    },
}

impl Change {
    fn op(&self) -> &'static str {
        match self {
            Change::Create { .. } => "create",
            Change::Patch { .. } => "patch",
            Change::Move { .. } => "move",
            Change::Delete { .. } => "delete",
        }
    }

    fn base(&self) -> Option<&Base> {
        match self {
            Change::Create { .. } => None,
            Change::Patch { base, .. } | Change::Move { base, .. } | Change::Delete { base } => {
                Some(base)
            }
        }
    }
}

pub struct Intent<'a> {
    pub mount: &'a Mount,
    pub path: DocPath,
    pub request_id: String,
    pub change: Change,
    pub actor: String,
    pub source: Source,
}

/// Largest document the hub writes.
pub const MAX_DOCUMENT_BYTES: usize = 8 << 20;

/// A request ID as the seed allows it: 1 to 128 visible ASCII characters.
pub fn check_request_id(field: &str, request_id: &str) -> Result<(), ToolError> {
    if (1..=128).contains(&request_id.len())
        && request_id.bytes().all(|b| (0x21..=0x7e).contains(&b))
    {
        return Ok(());
    }
    Err(ToolError::fail(
        Category::Validation,
        Code::E_REQUEST_ID,
        format!(
            "{field}: expected 1 to 128 visible ASCII characters (no spaces), unique to this intent"
        ),
    )
    .with_details(json!({"field": field})))
}

/// How the hub names a front door in history.
pub fn source_label(source: Source) -> &'static str {
    match source {
        Source::Rest => "person",
        Source::Mcp => "agent",
        Source::Cli => "cli",
        Source::Watcher => "external",
    }
}

/// The intent's fingerprint: what a request ID is bound to.
fn fingerprint(intent: &Intent) -> String {
    let detail = match &intent.change {
        Change::Create { content } => json!({"content_hash": content_hash(content.as_bytes())}),
        Change::Patch { operations, .. } => json!({"operations": operations}),
        Change::Move { to, .. } => json!({"to": to.as_str()}),
        Change::Delete { .. } => json!({}),
    };
    let canonical = json!([
        intent.change.op(),
        intent.mount.key,
        intent.path.as_str(),
        intent.change.base(),
        detail
    ]);
    content_hash(canonical.to_string().as_bytes())
}

pub fn identity(mount: &Mount, path: &str, row: &DocRow) -> Identity {
    identity_in(&mount.key, path, row)
}

fn identity_in(mount: &str, path: &str, row: &DocRow) -> Identity {
    Identity {
        mount: mount.to_string(),
        path: path.to_string(),
        rev: row.rev,
        hash: row.hash.clone(),
    }
}

/// A write's outcome: its receipt, and whether it was the stored one.
pub struct Written {
    pub receipt: Receipt,
    pub replayed: bool,
}

/// Runs one write to its end (see the module's comment).
pub fn execute(store: &Store, intent: Intent) -> Result<Written, ToolError> {
    check_request_id("request_id", &intent.request_id)?;
    // a base no revision can have is bad input, before the document is looked at
    if let Some(base) = intent.change.base() {
        base.check()?;
    }
    intent.mount.check_writable(intent.source)?;
    let fingerprint = fingerprint(&intent);
    let first = store.view_at_once(|c| first_look(c, &intent))?;
    let mut seen = Some(first.seen);
    let stored = match first.publishing {
        // finished before its receipt is answered; the record then moved on
        Some(_) => {
            seen = None;
            stored_receipt(
                store,
                std::slice::from_ref(intent.mount),
                &intent.request_id,
            )?
        }
        None => first
            .receipt
            .map(|(intent, state, receipt)| StoredReceipt::parse(intent, &state, &receipt))
            .transpose()?,
    };
    if let Some(stored) = stored {
        return replay(stored, &fingerprint);
    }
    if let Some(verdict) = first.integrity_failure {
        return Err(integrity_refusal(&verdict));
    }
    let dir = disk::open(intent.mount, matches!(intent.change, Change::Create { .. }))?
        .ok_or_else(|| {
            ToolError::not_found(
                Code::E_NOT_FOUND,
                format!(
                    "path: {:?} does not exist in mount {:?}",
                    intent.path.as_str(),
                    intent.mount.key
                ),
            )
            .with_details(json!({"field": "path"}))
        })?;
    dir.refuse_symlink(&intent.path)?;
    if let Change::Move { to, .. } = &intent.change {
        dir.refuse_symlink(to)?;
    }
    for _ in 0..8 {
        let current =
            sync::observe_from(store, intent.mount, Some(&dir), &intent.path, seen.take())?;
        let mut plan = plan(store, &intent, &dir, &current)?;
        let unsynced = plan.unsynced.take();
        let temp = plan.temp.as_ref().map(|(temp, _)| temp.clone());
        let discard = || {
            if let Some(temp) = &temp {
                dir.discard(temp);
            }
        };
        // the file as the base was checked against, still: an edit saved
        // meanwhile is recorded by the next round and makes this write stale
        if dir.stat(&intent.path)? != current.stat {
            discard();
            continue;
        }
        let (committed, synced) = match unsynced {
            // a busy committer keeps this writer waiting anyway: sync first
            Some(file) if !group::committer(store).is_idle() => {
                if let Err(error) = file.sync() {
                    discard();
                    return Err(ToolError::io(
                        format!("syncing the new content of {}", intent.path.as_str()),
                        error,
                    ));
                }
                (commit(store, &intent, &fingerprint, &current, plan), Ok(()))
            }
            // an idle one commits at once: the file syncs beside it
            unsynced => {
                let syncing = unsynced.map(disk::Unsynced::sync_beside);
                let committed = commit(store, &intent, &fingerprint, &current, plan);
                let synced = match syncing.map(|synced| synced.recv()) {
                    None | Some(Ok(Ok(()))) => Ok(()),
                    Some(Ok(Err(error))) => Err(error.to_string()),
                    Some(Err(_)) => Err("the sync of the temporary file died".to_string()),
                };
                (committed, synced)
            }
        };
        match committed {
            Ok(Committed::Yes(receipt, publishing)) => {
                if let Err(why) = synced {
                    // on record, but its new content is not known to be on
                    // disk: the next touch or start makes it whole and renames it
                    return Err(commit_unknown(
                        &receipt.request_id,
                        &format!("Replacement recorded but its file could not be synced: {why}"),
                    ));
                }
                return publish(store, &dir, *receipt, &publishing);
            }
            Ok(Committed::Replay(stored)) => {
                discard();
                return replay(stored, &fingerprint);
            }
            Ok(Committed::Raced) => discard(),
            Err(error) => {
                discard();
                return Err(error);
            }
        }
    }
    Err(ToolError::fail(
        Category::Transient,
        Code::E_BUSY,
        format!(
            "{}: the document kept changing under this write; nothing was written, retry with the same request_id",
            intent.path.as_str()
        ),
    ))
}

/// What the commit will record, prepared outside the lock.
struct Plan {
    /// The document's row and path after the write.
    after: DocRow,
    path: String,
    /// The new bytes and their temporary file (create, patch).
    temp: Option<(String, Vec<u8>)>,
    /// That file, to be synced beside the commit.
    unsynced: Option<disk::Unsynced>,
    /// A move's new path row, and the prior row there.
    move_to: Option<(DocPath, Option<DocRow>)>,
}

fn plan(
    store: &Store,
    intent: &Intent,
    dir: &MountDir,
    current: &Current,
) -> Result<Plan, ToolError> {
    let path = intent.path.as_str();
    let next_rev = current.recorded.as_ref().map_or(1, |row| row.rev + 1);
    match &intent.change {
        Change::Create { content } => {
            if let Some(row) = &current.row {
                return Err(ToolError::from(
                    ErrorBody::new(
                        Category::Conflict,
                        Code::STALE_REVISION,
                        format!("path: a document already exists at {path:?}; read it and patch it, or create another path"),
                    )
                    .with_details(json!({"field": "path", "current": identity(intent.mount, path, row)})),
                ));
            }
            check_size(content.len())?;
            temp_plan(dir, intent, content.clone().into_bytes(), None, next_rev)
        }
        Change::Patch { base, operations } => {
            let (row, bytes) = require_base(store, intent, current, base)?;
            let text = as_text(path, bytes)?;
            // the base's outline may be kept (a read or the last write parsed
            // it), found by the hash already known; the texts between two
            // operations are only this patch's, so neither hashed nor kept
            let outline_of = |addressed: &str| -> std::sync::Arc<[sections::Section]> {
                if std::ptr::eq(addressed, text) {
                    outlines::outline(&row.hash, text)
                } else {
                    sections::outline(addressed).into()
                }
            };
            let (patched, outline) = patch::apply_outlined(text, operations, &outline_of)?;
            check_size(patched.len())?;
            temp_plan(dir, intent, patched.into_bytes(), outline, next_rev)
        }
        Change::Delete { base } => {
            let (row, _) = require_base(store, intent, current, base)?;
            Ok(Plan {
                after: DocRow {
                    rev: row.rev + 1,
                    hash: String::new(),
                    size: 0,
                    mtime_ns: 0,
                    deleted: true,
                    seq: 0,
                    title: row.title.clone(),
                },
                path: path.to_string(),
                temp: None,
                unsynced: None,
                move_to: None,
            })
        }
        Change::Move { base, to } => {
            let (row, bytes) = require_base(store, intent, current, base)?;
            let title = sections::title_of(&String::from_utf8_lossy(bytes), to.file_name());
            if to == &intent.path {
                return Err(ToolError::invalid(
                    "to",
                    "a path other than the document's own",
                ));
            }
            let there = sync::observe(store, intent.mount, Some(dir), to)?;
            if let Some(existing) = &there.row {
                return Err(ToolError::from(
                    ErrorBody::new(
                        Category::Conflict,
                        Code::STALE_REVISION,
                        format!("to: a document already exists at {:?}; move elsewhere or delete it first", to.as_str()),
                    )
                    .with_details(json!({"field": "to", "current": identity(intent.mount, to.as_str(), existing)})),
                ));
            }
            let prior_there = there.recorded;
            let rev = prior_there.as_ref().map_or(0, |r| r.rev).max(row.rev) + 1;
            Ok(Plan {
                after: DocRow {
                    rev,
                    hash: row.hash.clone(),
                    size: row.size,
                    mtime_ns: row.mtime_ns,
                    deleted: false,
                    seq: 0,
                    title,
                },
                path: to.as_str().to_string(),
                temp: None,
                unsynced: None,
                move_to: Some((to.clone(), prior_there)),
            })
        }
    }
}

/// Writes the new content to a temporary file. `outline` is the content's
/// outline when the patch already parsed it.
fn temp_plan(
    dir: &MountDir,
    intent: &Intent,
    bytes: Vec<u8>,
    outline: Option<std::sync::Arc<[sections::Section]>>,
    rev: i64,
) -> Result<Plan, ToolError> {
    let (temp, stat, unsynced) = dir.write_temp(&intent.path, &bytes)?;
    let hash = content_hash(&bytes);
    let title = sections::title_of(&String::from_utf8_lossy(&bytes), intent.path.file_name());
    // whatever comes next to a large document (a read, a page, the next
    // patch) needs the new text's outline: kept, or parsed meanwhile
    match outline {
        Some(outline) => outlines::keep(&hash, bytes.len(), outline),
        None => outlines::warm(&hash, &bytes),
    }
    Ok(Plan {
        after: DocRow {
            rev,
            hash,
            size: stat.size,
            mtime_ns: stat.mtime_ns,
            deleted: false,
            seq: 0,
            title,
        },
        path: intent.path.as_str().to_string(),
        temp: Some((temp, bytes)),
        unsynced: Some(unsynced),
        move_to: None,
    })
}

fn check_size(bytes: usize) -> Result<(), ToolError> {
    if bytes > MAX_DOCUMENT_BYTES {
        return Err(ToolError::invalid(
            "content",
            format!(
                "a document of at most {} MiB (this one would be {bytes} bytes)",
                MAX_DOCUMENT_BYTES >> 20
            ),
        ));
    }
    Ok(())
}

pub fn as_text<'a>(path: &str, bytes: &'a [u8]) -> Result<&'a str, ToolError> {
    std::str::from_utf8(bytes).map_err(|error| {
        ToolError::invalid(
            "path",
            format!(
                "{path:?} is not UTF-8 text (invalid byte at offset {}); the hub edits only text",
                error.valid_up_to()
            ),
        )
    })
}

/// The current row and bytes when `base` names them, else `STALE_REVISION`
/// with the current identity and the sections that changed since the base.
fn require_base<'c>(
    store: &Store,
    intent: &Intent,
    current: &'c Current,
    base: &Base,
) -> Result<(&'c DocRow, &'c [u8]), ToolError> {
    let path = intent.path.as_str();
    let (Some(row), Some(bytes)) = (&current.row, &current.bytes) else {
        return Err(ToolError::not_found(
            Code::E_NOT_FOUND,
            format!("path: no document {path:?} in mount {:?}", intent.mount.key),
        )
        .with_details(json!({"field": "path"})));
    };
    if row.rev == base.rev && row.hash == base.hash {
        return Ok((row, bytes));
    }
    let changed = changed_sections(store, &base.hash, bytes);
    Err(ToolError::from(
        ErrorBody::new(
            Category::Conflict,
            Code::STALE_REVISION,
            if row.rev == base.rev {
                format!(
                    "base: rev {} does not have the hash you sent (it changed outside the hub, or the hash was mistyped); re-read it, rebase your edit and send it with a new request_id",
                    row.rev
                )
            } else {
                format!(
                    "base: the document is at rev {} now, not the rev {} you read; re-read it, rebase your edit and send it with a new request_id",
                    row.rev, base.rev
                )
            },
        )
        .with_details(json!({
            "field": "base",
            "current": identity(intent.mount, path, row),
            "base": base,
            "changed_sections": changed,
        })),
    ))
}

/// Heading paths whose text differs between the base's content (when kept) and now.
fn changed_sections(store: &Store, base_hash: &str, now: &[u8]) -> Value {
    let Ok(Some((deflated, size))) = store.view(|c| records::content(c, base_hash)) else {
        return Value::Null;
    };
    let Ok(before) = super::chain::inflate(&deflated, usize::try_from(size).unwrap_or(0)) else {
        return Value::Null;
    };
    let (Ok(before), Ok(after)) = (std::str::from_utf8(&before), std::str::from_utf8(now)) else {
        return Value::Null;
    };
    let texts = |text: &str| -> Vec<(String, String)> {
        let outline = sections::outline(text);
        let mut pieces = vec![(
            String::new(),
            text[..outline.first().map_or(text.len(), |s| s.start)].to_string(),
        )];
        for (index, section) in outline.iter().enumerate() {
            let own_end = outline.get(index + 1).map_or(text.len(), |next| next.start);
            pieces.push((
                section.path.clone(),
                text[section.start..own_end].to_string(),
            ));
        }
        pieces
    };
    let (old, new) = (texts(before), texts(after));
    // by lookup: a document may have thousands of sections
    let old_pieces: HashSet<(&str, &str)> =
        old.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let new_paths: HashSet<&str> = new.iter().map(|(p, _)| p.as_str()).collect();
    let mut listed: HashSet<&str> = HashSet::new();
    let mut changed: Vec<&str> = Vec::new();
    for (path, text) in &new {
        if !old_pieces.contains(&(path.as_str(), text.as_str())) && listed.insert(path) {
            changed.push(path);
        }
    }
    for (path, _) in &old {
        if !new_paths.contains(path.as_str()) && listed.insert(path) {
            changed.push(path);
        }
    }
    json!(changed)
}

enum Committed {
    Yes(Box<Receipt>, Publishing),
    Replay(StoredReceipt),
    /// Someone else changed the document between the read and the lock.
    Raced,
}

/// What one write records, owned, so whichever writer leads the group
/// commit can record it.
struct Record {
    mount: String,
    path: String,
    request_id: String,
    fingerprint: String,
    op: &'static str,
    actor: String,
    source: Source,
    deleting: bool,
    current: Option<DocRow>,
    plan: Plan,
}

fn commit(
    store: &Store,
    intent: &Intent,
    fingerprint: &str,
    current: &Current,
    plan: Plan,
) -> Result<Committed, ToolError> {
    let record = Record {
        mount: intent.mount.key.clone(),
        path: intent.path.as_str().to_string(),
        request_id: intent.request_id.clone(),
        fingerprint: fingerprint.to_string(),
        op: intent.change.op(),
        actor: intent.actor.clone(),
        source: intent.source,
        deleting: matches!(intent.change, Change::Delete { .. }),
        current: current.row.clone(),
        plan,
    };
    group::committer(store).commit(store, move |tx| record_write(tx, record))
}

/// Records one write inside the group's transaction.
fn record_write(tx: &rusqlite::Connection, record: Record) -> Result<Committed, ToolError> {
    let Record {
        mount,
        path,
        request_id,
        fingerprint,
        op,
        actor,
        source,
        deleting,
        current,
        plan,
    } = record;
    if let Some((intent_hash, state, receipt)) = records::receipt(tx, &request_id)? {
        return Ok(Committed::Replay(StoredReceipt::parse(
            intent_hash,
            &state,
            &receipt,
        )?));
    }
    if let Some(verdict) = records::integrity_failure(tx)? {
        return Err(integrity_refusal(&verdict));
    }
    let row_now = records::document(tx, &mount, &path)?.filter(|row| !row.deleted);
    if row_now != current || !records::publishing_for(tx, &mount, &path)?.is_empty() {
        return Ok(Committed::Raced);
    }
    if let Some((to, prior_there)) = &plan.move_to {
        let there_now = records::document(tx, &mount, to.as_str())?;
        if there_now != *prior_there
            || !records::publishing_for(tx, &mount, to.as_str())?.is_empty()
        {
            return Ok(Committed::Raced);
        }
    }
    let at = now();
    if let Some((_, bytes)) = &plan.temp {
        records::save_content(tx, &plan.after.hash, bytes)?;
    }
    let moving = plan.move_to.is_some();
    let entry = records::append_history(
        tx,
        DocHistoryEntry {
            seq: 0,
            mount: mount.clone(),
            path: plan.path.clone(),
            rev: plan.after.rev,
            hash: plan.after.hash.clone(),
            op: op.to_string(),
            actor,
            source: source_label(source).to_string(),
            at: at.clone(),
            from_path: moving.then(|| path.clone()),
            request_id: Some(request_id.clone()),
            prev_hash: String::new(),
            entry_hash: String::new(),
        },
    )?;
    let after = DocRow {
        seq: entry.seq,
        ..plan.after.clone()
    };
    records::save_document(tx, &mount, &plan.path, &after)?;
    if let (true, Some(row)) = (moving, &current) {
        let left = DocRow {
            deleted: true,
            hash: String::new(),
            seq: entry.seq,
            ..row.clone()
        };
        records::save_document(tx, &mount, &path, &left)?;
    }
    let receipt = Receipt {
        request_id: request_id.clone(),
        state: ReceiptState::Committed,
        document: Some(identity_in(&mount, &plan.path, &after)),
        previous: current.as_ref().map(|row| identity_in(&mount, &path, row)),
        seq: Some(entry.seq),
        durable: Some(Durability {
            file: true,
            directory: true,
            database: true,
        }),
        op: Some(op.to_string()),
        known: true,
        advice: "Committed: the content, its folder entry and the history entry are on disk."
            .into(),
    };
    let receipt_json = serde_json::to_string(&receipt)
        .map_err(|error| ToolError::internal("encoding a receipt", error))?;
    records::save_receipt(
        tx,
        &request_id,
        &fingerprint,
        "committed",
        &receipt_json,
        &at,
    )?;
    let publishing = Publishing {
        request_id,
        mount,
        path: plan.path.clone(),
        from_path: moving.then_some(path),
        temp: plan.temp.as_ref().map(|(temp, _)| temp.clone()),
        hash: if deleting {
            current.as_ref().map(|r| r.hash.clone()).unwrap_or_default()
        } else {
            plan.after.hash.clone()
        },
    };
    records::add_publishing(tx, &publishing)?;
    Ok(Committed::Yes(Box::new(receipt), publishing))
}

/// Step 5: the file in place. A failure here leaves the write committed in
/// the history with its file not known to be in place: `COMMIT_UNKNOWN`
/// with the seed's words (the next touch or start finishes it).
fn publish(
    store: &Store,
    dir: &MountDir,
    receipt: Receipt,
    publishing: &Publishing,
) -> Result<Written, ToolError> {
    let outcome = sync::put_in_place(dir, publishing).and_then(|outcome| match outcome {
        Outcome::Done => Ok(Outcome::Done),
        // someone else may have finished it, and a later write followed
        unknown => sync::forget(store, publishing, unknown),
    });
    match outcome {
        Ok(Outcome::Done) => {
            group::committer(store).published(&publishing.request_id);
            Ok(Written {
                receipt,
                replayed: false,
            })
        }
        Ok(Outcome::Unknown(why)) => Err(commit_unknown(
            &receipt.request_id,
            &format!("Replacement published but durability is uncertain: {why}"),
        )),
        Err(error) => Err(commit_unknown(
            &receipt.request_id,
            &format!("Replacement published but durability is uncertain: {error}"),
        )),
    }
}

fn commit_unknown(request_id: &str, message: &str) -> ToolError {
    ToolError::from(
        ErrorBody::new(Category::Transient, Code::COMMIT_UNKNOWN, message)
            .with_retryable(true)
            .with_details(json!({
                "request_id": request_id,
                "next": "check cos_docs_receipt or re-read the document, or resend the identical write with the same request_id; do not claim success",
            })),
    )
}

pub fn integrity_refusal(verdict: &str) -> ToolError {
    let details: Value =
        serde_json::from_str(verdict).unwrap_or_else(|_| json!({"verdict": verdict}));
    ToolError::from(
        ErrorBody::new(
            Category::Conflict,
            Code::E_INTEGRITY,
            "the documents' history failed its audit; writes are refused until it is repaired (reads continue); do not repair it by editing the history",
        )
        .with_details(details),
    )
}

/// What a write reads before anything else, in one read: whether its
/// request ID has a publication under way or a receipt, whether the history
/// failed its audit, and the document as recorded.
struct FirstLook {
    publishing: Option<Publishing>,
    receipt: Option<(String, String, String)>,
    integrity_failure: Option<String>,
    seen: sync::Look,
}

fn first_look(
    connection: &rusqlite::Connection,
    intent: &Intent,
) -> Result<FirstLook, crate::store::StoreError> {
    Ok(FirstLook {
        publishing: records::publishing_of(connection, &intent.request_id)?,
        receipt: records::receipt(connection, &intent.request_id)?,
        integrity_failure: records::integrity_failure(connection)?,
        seen: sync::look(connection, &intent.mount.key, intent.path.as_str())?,
    })
}

/// A receipt as stored, with the intent it is bound to.
pub struct StoredReceipt {
    intent: String,
    pub receipt: Receipt,
}

impl StoredReceipt {
    fn parse(intent: String, state: &str, receipt: &str) -> Result<StoredReceipt, ToolError> {
        let mut receipt: Receipt = serde_json::from_str(receipt)
            .map_err(|error| ToolError::internal("reading a stored receipt", error))?;
        if state == "unknown" {
            receipt.state = ReceiptState::Unknown;
        }
        Ok(StoredReceipt { intent, receipt })
    }
}

/// The stored receipt of `request_id`, its publication finished first (when
/// it is in one of `mounts`): a receipt is answered only once its file is in
/// place, or known not to be.
pub fn stored_receipt(
    store: &Store,
    mounts: &[Mount],
    request_id: &str,
) -> Result<Option<StoredReceipt>, ToolError> {
    if let Some(publishing) = store.view(|c| records::publishing_of(c, request_id))?
        && let Some(mount) = mounts.iter().find(|m| m.key == publishing.mount)
        && let Some(dir) = disk::open(mount, false)?
    {
        sync::finish(store, &dir, &publishing)?;
    }
    let stored = store.view(|c| records::receipt(c, request_id))?;
    stored
        .map(|(intent, state, receipt)| StoredReceipt::parse(intent, &state, &receipt))
        .transpose()
}

fn replay(stored: StoredReceipt, fingerprint: &str) -> Result<Written, ToolError> {
    if stored.intent != fingerprint {
        return Err(ToolError::from(
            ErrorBody::new(
                Category::Conflict,
                Code::E_REQUEST_REUSE,
                "request_id belongs to another intent",
            )
            .with_details(json!({
                "field": "request_id",
                "receipt": stored.receipt,
                "next": "resolve the original receipt; send a new intent with a new request_id",
            })),
        ));
    }
    if stored.receipt.state == ReceiptState::Unknown {
        return Err(commit_unknown(
            &stored.receipt.request_id,
            &stored.receipt.advice,
        ));
    }
    Ok(Written {
        receipt: stored.receipt,
        replayed: true,
    })
}
