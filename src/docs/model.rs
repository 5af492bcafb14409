//! The documents' shapes as tools answer them.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Which document, at which revision: what a write's base must match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Identity {
    pub mount: String,
    pub path: String,
    /// Bumped by every change, from 1.
    pub rev: i64,
    /// BLAKE3 of the content, 64 hex digits (empty for a deleted document).
    pub hash: String,
}

/// The revision a write was based on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Base {
    #[schema(minimum = 1)]
    pub rev: i64,
    /// The full 64-hex-digit hash, as read.
    #[schema(min_length = 64, max_length = 64, pattern = "^[0-9a-f]{64}$")]
    pub hash: String,
}

/// One change in the hash-chained history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct DocHistoryEntry {
    pub seq: i64,
    pub mount: String,
    pub path: String,
    pub rev: i64,
    pub hash: String,
    /// create, patch, move, delete or external.
    pub op: String,
    pub actor: String,
    /// person (REST), agent (MCP), cli, or external (an edit outside the hub).
    pub source: String,
    pub at: String,
    /// For a move: where the document was.
    pub from_path: Option<String>,
    pub request_id: Option<String>,
    pub prev_hash: String,
    pub entry_hash: String,
}

/// What the hub synced before it said committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Durability {
    /// The new content was fsynced before it replaced the file.
    pub file: bool,
    /// The folder was fsynced after the rename, so the entry survives power loss.
    pub directory: bool,
    /// The history entry and receipt were committed with `synchronous = FULL`.
    pub database: bool,
}

/// The outcome of a request ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptState {
    Committed,
    NotCommitted,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Receipt {
    pub request_id: String,
    pub state: ReceiptState,
    /// The document after the write (for a delete: its last identity, hash empty).
    pub document: Option<Identity>,
    /// The revision the write replaced (none for a create).
    pub previous: Option<Identity>,
    /// The history entry the write appended.
    pub seq: Option<i64>,
    pub durable: Option<Durability>,
    /// create, patch, move or delete.
    pub op: Option<String>,
    /// False when the hub has never seen this request ID.
    pub known: bool,
    /// What to do next, in words.
    pub advice: String,
}
