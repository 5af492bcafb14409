//! `cos docs ...`: the documents tools from the shell. Reads print the
//! Markdown itself (every page followed); the mounts, a listing (every page
//! followed) and the history print one line each (`lines.rs`), or a page's
//! envelope with `--json`; writes (create, patch, move, delete) and checks
//! print the tool's envelope, so scripts read the receipt or the audit's
//! head. A write sent without `--request-id` makes one up and says it on
//! stderr: the write stays checkable with `cos docs receipt`.

use clap::Subcommand;
use serde_json::{Value, json};
use std::io::Read;

mod lines;

use super::{call, call_for_data, print_envelope};
use crate::docs::model::is_lower_hex;
use crate::docs::tools::MAX_LISTED;
use crate::envelope::Budget;
use crate::tools::Hub;
use lines::{
    document_lines, history_lines, mount_lines, print_document, print_every_page, print_lines,
};

#[derive(Debug, Subcommand)]
pub enum DocsCommand {
    /// The mounts: key, display name, folder, who may write.
    Mounts {
        /// Print the tool's envelope instead of one line a mount.
        #[arg(long)]
        json: bool,
    },
    /// A mount's documents with their rev and hash, every page.
    List {
        /// The mount's key, as `cos docs mounts` prints it (e.g. docs, repo).
        mount: String,
        /// Only documents under this folder (e.g. guides/).
        #[arg(long)]
        prefix: Option<String>,
        /// Print one page's envelope (continue it with --cursor) instead of one line a document.
        #[arg(long)]
        json: bool,
        /// With --json: continue after an earlier page's next_cursor.
        #[arg(long, requires = "json")]
        cursor: Option<String>,
    },
    /// Print a document (or one section, or a past revision) as Markdown.
    Read {
        #[command(flatten)]
        document: DocumentArgs,
        /// Only this section: its heading path (Setup/Install) or its anchor (install).
        #[arg(long)]
        section: Option<String>,
        /// A past revision instead of the current one.
        #[arg(long)]
        rev: Option<i64>,
        /// Print the first page's envelope (identity, outline) instead of the text.
        #[arg(long)]
        json: bool,
    },
    /// Create a document from stdin; prints the receipt.
    Create {
        #[command(flatten)]
        document: DocumentArgs,
        #[command(flatten)]
        request: RequestArgs,
    },
    /// Apply patch operations at base REV and HASH; prints the receipt.
    Patch {
        #[command(flatten)]
        write: BasedWrite,
        /// A JSON array of operations, or - to read it from stdin, e.g.
        /// '[{"op": "append_to_section", "section": "Setup/Install", "content": "..."}]'.
        /// Operations: replace_section, insert_before_section,
        /// insert_after_section, append_to_section, delete_section (each with
        /// section), replace_text (find, replace, expected_count), append,
        /// prepend, replace_all (content). Applied all or nothing.
        #[arg(long)]
        operations: String,
    },
    /// Move (rename) a document within its mount at base REV and HASH; prints the receipt.
    Move {
        #[command(flatten)]
        write: BasedWrite,
        /// The new path in the same mount; refused if a document is there.
        to: String,
    },
    /// Delete a document at base REV and HASH (its history stays); prints the receipt.
    Delete {
        #[command(flatten)]
        write: BasedWrite,
    },
    /// The history, newest first.
    History {
        /// Only this mount's entries.
        #[arg(long)]
        mount: Option<String>,
        /// Only this document's entries (with --mount).
        #[arg(long)]
        path: Option<String>,
        /// Entries to show, 1 to 200.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Continue after an earlier answer's next_cursor.
        #[arg(long)]
        cursor: Option<String>,
        /// Print the tool's envelope instead of one line an entry.
        #[arg(long)]
        json: bool,
    },
    /// Audit the hash-chained history; prints the head {seq, entry_hash} to keep as a checkpoint.
    Audit {
        /// An earlier head, as SEQ:ENTRY_HASH: also prove the history up to it is unchanged.
        #[arg(long)]
        checkpoint: Option<String>,
    },
    /// Whether the write with this request ID committed.
    Receipt {
        /// The request ID the write was sent with (its receipt or error names it).
        request_id: String,
    },
}

/// Which document.
#[derive(Debug, clap::Args)]
pub struct DocumentArgs {
    /// The mount's key, as `cos docs mounts` prints it (e.g. docs, repo).
    mount: String,
    /// The document's path in the mount, e.g. guides/setup.md.
    path: String,
}

/// A write to a document at the revision it was based on.
#[derive(Debug, clap::Args)]
pub struct BasedWrite {
    #[command(flatten)]
    document: DocumentArgs,
    #[command(flatten)]
    base: BaseArgs,
    #[command(flatten)]
    request: RequestArgs,
}

/// The revision a write is based on.
#[derive(Debug, clap::Args)]
pub struct BaseArgs {
    /// The revision you read (`cos docs list` or `cos docs read --json`); a stale one is refused.
    #[arg(long)]
    rev: i64,
    /// That revision's hash: whole, or its first 12 or more digits as `cos docs list` and `cos docs history` print them.
    #[arg(long)]
    hash: String,
}

/// The write's request ID.
#[derive(Debug, clap::Args)]
pub struct RequestArgs {
    /// 1 to 128 visible ASCII characters naming this write: resent with the
    /// same ID, it is answered from its receipt instead of written twice.
    /// Default: a new ID, printed on stderr.
    #[arg(long = "request-id")]
    request_id: Option<String>,
}

/// The fewest leading digits `--hash` takes for a whole hash: as many as
/// the listing and the history print.
const SHORT_HASH: usize = 12;

impl BasedWrite {
    /// The tool's arguments: the document, its base and the request ID; an
    /// exit code when the base's short hash names no such revision.
    fn arguments(self, hub: &Hub) -> Result<Value, i32> {
        let BasedWrite {
            document: DocumentArgs { mount, path },
            base: BaseArgs { rev, hash },
            request,
        } = self;
        let hash = whole_hash(hub, &mount, &path, rev, hash)?;
        Ok(
            json!({"mount": mount, "path": path, "base": {"rev": rev, "hash": hash}, "request_id": request.id()}),
        )
    }
}

/// `--hash` as given when it is not the start of a hash (the tool judges
/// it), else the whole hash of revision `rev`, which must start with it.
fn whole_hash(hub: &Hub, mount: &str, path: &str, rev: i64, given: String) -> Result<String, i32> {
    if !(SHORT_HASH..64).contains(&given.len()) || !is_lower_hex(&given) {
        return Ok(given);
    }
    let page = call_for_data(
        hub,
        "cos_docs_read",
        json!({"mount": mount, "path": path, "rev": rev, "page_bytes": 256}),
    )?;
    let whole = page["document"]["hash"].as_str().unwrap_or_default();
    if whole.starts_with(&given) {
        return Ok(whole.to_string());
    }
    eprintln!(
        "cos: --hash: rev {rev} of {path} has the hash {}, which does not start with {given}; re-read the document",
        whole.get(..SHORT_HASH).unwrap_or(whole)
    );
    Err(2)
}

impl RequestArgs {
    /// The given ID, else a new one said on stderr (the receipt names it too).
    fn id(self) -> String {
        self.request_id.unwrap_or_else(|| {
            let id = format!("cli-{}", uuid::Uuid::new_v4().simple());
            eprintln!("request_id: {id}");
            id
        })
    }
}

pub fn run(command: DocsCommand, hub: &Hub) -> i32 {
    let (tool, arguments) = match command {
        DocsCommand::Read {
            document: DocumentArgs { mount, path },
            section,
            rev,
            json,
        } => {
            let arguments = json!({"mount": mount, "path": path, "section": section, "rev": rev});
            if !json {
                return print_document(hub, arguments);
            }
            ("cos_docs_read", arguments)
        }
        DocsCommand::Mounts { json: false } => {
            return print_lines(hub, "cos_docs_mounts", json!({}), mount_lines);
        }
        DocsCommand::Mounts { json: true } => ("cos_docs_mounts", json!({})),
        DocsCommand::List {
            mount,
            prefix,
            json: false,
            ..
        } => {
            return print_every_page(
                hub,
                "cos_docs_list",
                json!({"mount": mount, "prefix": prefix, "limit": MAX_LISTED}),
                document_lines,
            );
        }
        DocsCommand::List {
            mount,
            prefix,
            json: true,
            cursor,
        } => (
            "cos_docs_list",
            json!({"mount": mount, "prefix": prefix, "limit": MAX_LISTED, "cursor": cursor}),
        ),
        DocsCommand::Create {
            document: DocumentArgs { mount, path },
            request,
        } => {
            let mut content = String::new();
            if let Err(error) = std::io::stdin().read_to_string(&mut content) {
                eprintln!("cos: reading the document from stdin: {error}");
                return 1;
            }
            (
                "cos_docs_create",
                json!({"mount": mount, "path": path, "content": content, "request_id": request.id()}),
            )
        }
        DocsCommand::Patch { write, operations } => {
            let operations = match read_operations(&operations) {
                Ok(operations) => operations,
                Err(message) => {
                    eprintln!("cos: --operations: {message}");
                    return 2;
                }
            };
            let mut arguments = match write.arguments(hub) {
                Ok(arguments) => arguments,
                Err(code) => return code,
            };
            arguments["operations"] = operations;
            ("cos_docs_patch", arguments)
        }
        DocsCommand::Move { write, to } => {
            let mut arguments = match write.arguments(hub) {
                Ok(arguments) => arguments,
                Err(code) => return code,
            };
            arguments["to"] = json!(to);
            ("cos_docs_move", arguments)
        }
        DocsCommand::Delete { write } => match write.arguments(hub) {
            Ok(arguments) => ("cos_docs_delete", arguments),
            Err(code) => return code,
        },
        DocsCommand::History {
            mount,
            path,
            limit,
            cursor,
            json,
        } => {
            let arguments = json!({"mount": mount, "path": path, "limit": limit, "cursor": cursor});
            if !json {
                return print_lines(hub, "cos_docs_history", arguments, history_lines);
            }
            ("cos_docs_history", arguments)
        }
        DocsCommand::Audit { checkpoint } => {
            let checkpoint = match checkpoint.as_deref().map(parse_checkpoint).transpose() {
                Ok(checkpoint) => checkpoint,
                Err(message) => {
                    eprintln!("cos: --checkpoint: {message}");
                    return 2;
                }
            };
            ("cos_docs_audit", json!({"checkpoint": checkpoint}))
        }
        DocsCommand::Receipt { request_id } => {
            ("cos_docs_receipt", json!({"request_id": request_id}))
        }
    };
    let arguments = drop_nulls(arguments);
    match call(hub, tool, arguments, Budget::None) {
        Ok(envelope) => {
            let head = &envelope["data"]["head"];
            if tool == "cos_docs_audit"
                && let (Some(seq), Some(hash)) = (head["seq"].as_i64(), head["entry_hash"].as_str())
            {
                eprintln!(
                    "checkpoint: {seq}:{hash} (keep it; cos docs audit --checkpoint {seq}:{hash} proves the history since was only appended to)"
                );
            }
            print_envelope(&envelope)
        }
        Err(code) => code,
    }
}

/// Optional arguments left out rather than sent as null.
fn drop_nulls(mut arguments: Value) -> Value {
    if let Some(object) = arguments.as_object_mut() {
        object.retain(|_, value| !value.is_null());
    }
    arguments
}

fn read_operations(given: &str) -> Result<Value, String> {
    let text = if given == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|error| format!("reading stdin: {error}"))?;
        text
    } else {
        given.to_string()
    };
    let value: Value = serde_json::from_str(&text)
        .map_err(|error| format!("a JSON array of operations ({error})"))?;
    if !value.is_array() {
        return Err(
            "a JSON array of operations, like [{\"op\": \"append\", \"content\": \"...\"}]".into(),
        );
    }
    Ok(value)
}

fn parse_checkpoint(text: &str) -> Result<Value, String> {
    let (seq, hash) = text
        .split_once(':')
        .ok_or_else(|| "expected SEQ:ENTRY_HASH, as cos docs audit prints it".to_string())?;
    let seq: i64 = seq
        .parse()
        .map_err(|_| format!("{seq:?} is not a sequence number"))?;
    Ok(json!({"seq": seq, "entry_hash": hash}))
}
