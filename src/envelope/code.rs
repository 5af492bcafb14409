//! The one closed list of error codes. Every code any tool, extractor or
//! transport can emit is a variant here, with what it means and what to do;
//! the spec publishes the list as `ErrorBody.code`'s enum, the MCP output
//! schemas carry it, and the table in docs/errors.md is checked against it.
//!
//! Naming: `E_<WHAT>` for every code, except the seeds' outcome codes, kept as
//! the seeds spell them (`STALE_READ`, `STALE_CURSOR`, `COMMIT_UNKNOWN`),
//! whose `STALE_*` family the hub's own stale-state conflicts join.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

macro_rules! codes {
    ($($code:ident => $meaning:literal,)*) => {
        /// A stable machine code: what went wrong, precisely enough to act on.
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum Code {
            $(#[doc = $meaning] $code,)*
        }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$code,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$code => stringify!($code),)*
                }
            }

            /// What the code means and what the caller should do.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(Code::$code => $meaning,)*
                }
            }
        }
    };
}

codes! {
    E_ARGUMENT => "An argument is missing, of the wrong type, out of range or not one of the allowed values; details.field names it (and details.with the other one, when two arguments do not go together). Correct the request; do not retry it unchanged.",
    E_AMBIGUOUS => "A name matches several things; details lists the candidates. Pass one of their exact ids.",
    E_NOT_FOUND => "The named thing does not exist; details may list the closest candidates.",
    E_UNKNOWN_TOOL => "No tool has this name; the tool list shows them.",
    E_CURSOR => "The cursor is malformed or was not issued by this hub. Obtain a new one from the listing that pages it.",
    STALE_CURSOR => "The cursor belongs to another query, or the data it pages changed. Ask again without a cursor.",
    STALE_READ => "The state changed while it was read; read again.",
    E_REQUEST_REUSE => "The request ID (a document write's request_id, or an Idempotency-Key) already belongs to another intent, or its first request is still running; resolve the original receipt and use a new ID for a new intent.",
    STALE_VERSION => "The task changed since the version the write was based on; details.current holds the fresh task. Re-read and re-apply.",
    STALE_STATE => "The task's status is no longer the one the move expected; details.current holds the fresh task.",
    E_TRANSITION => "The workflow does not allow this move; details.allowed lists the statuses it allows.",
    E_WIP_LIMIT => "The target column (or actor) is at its WIP limit; finish or move other work first.",
    E_DEPENDENCY_OPEN => "The task depends on tasks that are not complete; details lists them.",
    E_DEPENDENCY_CYCLE => "The dependency would close a cycle; details shows it.",
    E_LEASE => "The task is under another actor's live lease (details.lease: holder, expires_at), or the lease to renew is not the caller's; wait for it to end or take other work.",
    STALE_REVISION => "The document changed since the {rev, hash} the write was based on; details.current holds its identity now. Re-read, rebase your intent on the new content and send it with a new request_id.",
    E_READ_ONLY => "The mount, the MCP session or the caller's role (a read token; only admin changes the hub's settings) is read-only to this call; reads may continue, writes need a writable mount, session or token.",
    E_REQUEST_ID => "request_id is missing or not 1 to 128 visible ASCII characters.",
    COMMIT_UNKNOWN => "Whether the write committed cannot be established (a document's file changed outside the hub meanwhile, or the team database's connection dropped during the commit). Check the receipt of details.request_id (cos_docs_receipt for documents, cos_write_receipt otherwise) or re-read the record, or resend the identical write with the same request_id or Idempotency-Key; do not claim success.",
    E_INTEGRITY => "The documents' hash-chained history failed its audit; writes are refused until it is repaired (reads continue). details names the first bad entry. Do not repair it by editing the history.",
    E_TOO_MANY_DOCUMENTS => "More documents were asked for at once than a call reads (20); split the request.",
    E_PATH => "A path leaves the folder it must stay in, or names something that is not allowed there.",
    E_UNAVAILABLE => "A capability this call asks for is not available in this build or setup (semantic search needs an embedding model), or the team database cannot be reached; the message says what it needs and what to use instead.",
    E_CONFIG => "A configuration file of the hub cannot be read; the message names the file and the fault.",
    E_CONTEXT_BUDGET => "The answer stays over the agent budget even after trimming; details.narrow_with names the arguments that shrink it.",
    E_MODULE_DISABLED => "The tool's module is switched off in this project; the message says how to enable it.",
    E_MODULE_STATE => "The module switchboard (subsystems-state.json) cannot be read; fix or remove the file.",
    E_BUSY => "The hub's database is busy; retry shortly.",
    E_PERMISSION => "The hub may not read or write a file it needs; check the file's permissions.",
    E_STORAGE => "Storage is unavailable (disk full, read-only, missing); check disk space and permissions, then retry.",
    E_TIMEOUT => "The request took longer than the server allows.",
    E_INTERNAL => "Something unexpected failed; the server log has the details under error_id.",
    E_JSON => "The request body is not valid JSON, or not of the expected shape.",
    E_BODY => "The request body could not be read.",
    E_CONTENT_TYPE => "The request body must be sent as application/json.",
    E_TOO_LARGE => "The request body is larger than the server accepts.",
    E_METHOD => "The route does not accept this HTTP method.",
    E_ROUTE => "No route has this path.",
    E_HOST => "The Host header (or the request target) is missing, repeated or does not name this hub.",
    E_ORIGIN => "The request's Origin is not allowed.",
    E_TOKEN => "The bearer token is missing or wrong.",
}

impl Code {
    /// The names of every code, as the spec's and the MCP schemas' enum.
    pub fn names() -> Vec<&'static str> {
        Code::ALL.iter().map(|code| code.as_str()).collect()
    }

    /// One line per code, `CODE: meaning`, as the spec describes the enum.
    pub fn table() -> String {
        Code::ALL
            .iter()
            .map(|code| format!("- `{}`: {}", code.as_str(), code.meaning()))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl PartialSchema for Code {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(Code::names()))
            .description(Some(format!(
                "The closed list of error codes:\n{}",
                Code::table()
            )))
            .into()
    }
}

impl ToSchema for Code {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Code")
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_as_their_names_and_follow_one_convention() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            let name = code.as_str();
            assert_eq!(
                serde_json::to_value(code).ok(),
                Some(serde_json::json!(name))
            );
            assert!(seen.insert(name), "{name} twice");
            assert!(
                name.starts_with("E_") || name.starts_with("STALE_") || name == "COMMIT_UNKNOWN",
                "{name} breaks the naming convention"
            );
            assert!(
                name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'),
                "{name}"
            );
            assert!(!code.meaning().is_empty());
        }
    }
}
