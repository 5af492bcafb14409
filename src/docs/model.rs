//! The documents' shapes as tools answer them, and the values an identity
//! (a revision's number and hash, a history entry's) can hold.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::tools::ToolError;

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

/// Whether `hash` is a content or entry hash as the hub writes one: the 64
/// lowercase hex digits of a BLAKE3 digest.
pub fn is_full_hash(hash: &str) -> bool {
    hash.len() == 64 && is_lower_hex(hash)
}

/// Whether `text` is lowercase hex digits only, as hashes are written.
pub fn is_lower_hex(text: &str) -> bool {
    text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Refuses, naming `field`, a hash no revision or entry can have: a cut,
/// capitalised or mistyped copy is bad input, never a stale or forged one.
/// `what` says whose hash was wanted.
pub fn require_full_hash(field: &str, hash: &str, what: &str) -> Result<(), ToolError> {
    if is_full_hash(hash) {
        return Ok(());
    }
    let count = hash.chars().count();
    let got = if is_lower_hex(hash) {
        format!("got {count} digits")
    } else {
        format!("got {count} characters, not all of them 0-9 or a-f")
    };
    Err(ToolError::invalid(
        field,
        format!("{what}, 64 lowercase hex digits ({got})"),
    ))
}

/// Refuses, naming `field`, a revision or entry number below 1 (numbering
/// starts at 1).
pub fn require_counted(field: &str, number: i64, what: &str) -> Result<(), ToolError> {
    if number >= 1 {
        return Ok(());
    }
    Err(ToolError::invalid(
        field,
        format!("{what}, 1 or more (got {number})"),
    ))
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

impl Base {
    /// Refuses a base no revision can have (a number below 1, a hash that is
    /// not whole): a typo or a cut copy, not a stale read.
    pub fn check(&self) -> Result<(), ToolError> {
        require_counted("base.rev", self.rev, "the revision number you read")?;
        require_full_hash("base.hash", &self.hash, "the document's whole hash as read")
    }

    /// Whether some revision could have this identity (see [`Base::check`]).
    pub fn could_name_a_revision(&self) -> bool {
        self.check().is_ok()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(hash: &str) -> String {
        match require_full_hash("base.hash", hash, "the hash") {
            Err(ToolError::Fail(body)) => body.message,
            other => panic!("refused, not {other:?}"),
        }
    }

    #[test]
    fn a_refused_hash_says_whether_it_was_cut_or_mistyped() {
        assert!(
            refusal("abc123").ends_with("(got 6 digits)"),
            "{}",
            refusal("abc123")
        );
        let capitals = "A".repeat(64);
        assert!(
            refusal(&capitals).ends_with("(got 64 characters, not all of them 0-9 or a-f)"),
            "{}",
            refusal(&capitals)
        );
    }

    proptest::proptest! {
        #[test]
        fn a_full_hash_is_exactly_what_the_spec_publishes(
            text in "[0-9a-fA-F]{60,68}|[0-9a-f]{64}|\\PC{0,70}",
            rev in -2i64..3,
        ) {
            let published = regex::Regex::new("^[0-9a-f]{64}$").unwrap();
            proptest::prop_assert_eq!(is_full_hash(&text), published.is_match(&text));
            let base = Base { rev, hash: text.clone() };
            proptest::prop_assert_eq!(
                base.could_name_a_revision(),
                rev >= 1 && published.is_match(&text)
            );
        }
    }
}
