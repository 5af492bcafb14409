//! `cos docs ...`: the documents tools from the shell. Reads print the
//! Markdown itself (every page followed); the mounts, a listing (every page
//! followed) and the history print one line each, or a page's envelope with
//! `--json`; writes and checks print the tool's envelope, so scripts read
//! the receipt or the audit's head.

use clap::Subcommand;
use serde_json::{Value, json};
use std::io::Read;

use super::{call, call_for_data, print_envelope};
use crate::envelope::Budget;
use crate::tools::Hub;

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
        mount: String,
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
        mount: String,
        path: String,
        #[arg(long)]
        section: Option<String>,
        #[arg(long)]
        rev: Option<i64>,
        /// Print the first page's envelope (identity, outline) instead of the text.
        #[arg(long)]
        json: bool,
    },
    /// Create a document from stdin.
    Create {
        mount: String,
        path: String,
        #[arg(long = "request-id")]
        request_id: String,
    },
    /// Apply patch operations (a JSON array, or - for stdin) at base REV and HASH.
    Patch {
        mount: String,
        path: String,
        #[arg(long)]
        rev: i64,
        #[arg(long)]
        hash: String,
        #[arg(long = "request-id")]
        request_id: String,
        #[arg(long)]
        operations: String,
    },
    /// The history, newest first.
    History {
        #[arg(long)]
        mount: Option<String>,
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
    Receipt { request_id: String },
}

pub fn run(command: DocsCommand, hub: &Hub) -> i32 {
    let (tool, arguments) = match command {
        DocsCommand::Read {
            mount,
            path,
            section,
            rev,
            json: false,
        } => {
            return print_document(
                hub,
                json!({"mount": mount, "path": path, "section": section, "rev": rev}),
            );
        }
        DocsCommand::Read {
            mount,
            path,
            section,
            rev,
            json: true,
        } => (
            "cos_docs_read",
            json!({"mount": mount, "path": path, "section": section, "rev": rev}),
        ),
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
                json!({"mount": mount, "prefix": prefix, "limit": 200}),
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
            json!({"mount": mount, "prefix": prefix, "limit": 200, "cursor": cursor}),
        ),
        DocsCommand::Create {
            mount,
            path,
            request_id,
        } => {
            let mut content = String::new();
            if let Err(error) = std::io::stdin().read_to_string(&mut content) {
                eprintln!("cos: reading the document from stdin: {error}");
                return 1;
            }
            (
                "cos_docs_create",
                json!({"mount": mount, "path": path, "content": content, "request_id": request_id}),
            )
        }
        DocsCommand::Patch {
            mount,
            path,
            rev,
            hash,
            request_id,
            operations,
        } => {
            let operations = match read_operations(&operations) {
                Ok(operations) => operations,
                Err(message) => {
                    eprintln!("cos: --operations: {message}");
                    return 2;
                }
            };
            (
                "cos_docs_patch",
                json!({"mount": mount, "path": path, "base": {"rev": rev, "hash": hash}, "request_id": request_id, "operations": operations}),
            )
        }
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

/// Prints the document's text, following every page's cursor.
fn print_document(hub: &Hub, arguments: Value) -> i32 {
    follow_pages(hub, "cos_docs_read", arguments, |data| {
        let text = data["content"].as_str().unwrap_or_default();
        let mut out = std::io::stdout().lock();
        i32::from(std::io::Write::write_all(&mut out, text.as_bytes()).is_err())
    })
}

/// Prints one answer's lines, and how to continue it when there is more.
fn print_lines(hub: &Hub, tool: &str, arguments: Value, lines: fn(&Value) -> Vec<String>) -> i32 {
    let data = match call_for_data(hub, tool, drop_nulls(arguments)) {
        Ok(data) => data,
        Err(code) => return code,
    };
    let mut out = lines(&data).join("\n");
    if let Some(cursor) = data["next_cursor"].as_str() {
        out.push_str(&format!("\nmore: --cursor {cursor}"));
    }
    write_out(&out)
}

/// Prints the lines of every page, following the cursors.
fn print_every_page(
    hub: &Hub,
    tool: &str,
    arguments: Value,
    lines: fn(&Value) -> Vec<String>,
) -> i32 {
    follow_pages(hub, tool, arguments, |data| {
        write_out(&lines(data).join("\n"))
    })
}

/// Calls `tool` page after page, handing each answer's data to `print`
/// (which answers an exit code: 0 to go on), until no cursor is left.
fn follow_pages(
    hub: &Hub,
    tool: &str,
    arguments: Value,
    mut print: impl FnMut(&Value) -> i32,
) -> i32 {
    let mut arguments = drop_nulls(arguments);
    loop {
        let data = match call_for_data(hub, tool, arguments.clone()) {
            Ok(data) => data,
            Err(code) => return code,
        };
        let printed = print(&data);
        if printed != 0 {
            return printed;
        }
        match data["next_cursor"].as_str() {
            Some(cursor) => arguments["cursor"] = json!(cursor),
            None => return 0,
        }
    }
}

fn write_out(lines: &str) -> i32 {
    if lines.is_empty() {
        return 0;
    }
    let mut out = std::io::stdout().lock();
    let written = std::io::Write::write_all(&mut out, lines.as_bytes())
        .and_then(|()| std::io::Write::write_all(&mut out, b"\n"));
    i32::from(written.is_err())
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// `docs  Documentation  /repo/docs  agents read_write, people read_write`
fn mount_lines(data: &Value) -> Vec<String> {
    each(data, "mounts", |mount| {
        format!(
            "{}\t{}\t{}{}\tagents {}, people {}",
            text(&mount["key"]),
            text(&mount["name"]),
            text(&mount["root"]),
            if mount["exists"] == json!(false) {
                " (missing)"
            } else {
                ""
            },
            text(&mount["agents"]),
            text(&mount["people"]),
        )
    })
}

/// `ops/runbook.md  rev 3  1f2e3d4c5b6a  812 bytes  Runbook`
fn document_lines(data: &Value) -> Vec<String> {
    each(data, "documents", |document| {
        format!(
            "{}\trev {}\t{}\t{} bytes\t{}",
            text(&document["path"]),
            document["rev"],
            short_hash(&document["hash"]),
            document["size"],
            text(&document["title"]),
        )
    })
}

/// `12  2026-12-04T03:07:34.176Z  patch  docs/ops/runbook.md rev 3  1f2e3d4c5b6a  by agent (mcp)`
fn history_lines(data: &Value) -> Vec<String> {
    each(data, "entries", |entry| {
        let moved = match entry["from_path"].as_str() {
            Some(from) => format!(" (from {from})"),
            None => String::new(),
        };
        format!(
            "{}\t{}\t{}\t{}/{} rev {}{}\t{}\tby {} ({})",
            entry["seq"],
            text(&entry["at"]),
            text(&entry["op"]),
            text(&entry["mount"]),
            text(&entry["path"]),
            entry["rev"],
            moved,
            short_hash(&entry["hash"]),
            text(&entry["actor"]),
            text(&entry["source"]),
        )
    })
}

/// One line for each element of the array `data[key]`.
fn each(data: &Value, key: &str, line: impl Fn(&Value) -> String) -> Vec<String> {
    data[key]
        .as_array()
        .map(|items| items.iter().map(line).collect())
        .unwrap_or_default()
}

/// The first 12 hex digits, as git shortens: enough to tell revisions apart by eye.
fn short_hash(hash: &Value) -> &str {
    let hash = text(hash);
    hash.get(..12).unwrap_or(hash)
}
