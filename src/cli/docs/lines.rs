//! What `cos docs` prints for people: a document's text and the one-line
//! forms of mounts, documents and history entries, every page followed.
//! Knows the tools' answers only as JSON; the commands are `docs.rs`'s.

use serde_json::{Value, json};

use super::drop_nulls;
use crate::cli::call_for_data;
use crate::tools::Hub;

/// Prints the document's text, following every page's cursor.
pub(super) fn print_document(hub: &Hub, arguments: Value) -> i32 {
    follow_pages(hub, "cos_docs_read", arguments, |data| {
        let text = data["content"].as_str().unwrap_or_default();
        let mut out = std::io::stdout().lock();
        i32::from(std::io::Write::write_all(&mut out, text.as_bytes()).is_err())
    })
}

/// Prints one answer's lines, and how to continue it when there is more.
pub(super) fn print_lines(
    hub: &Hub,
    tool: &str,
    arguments: Value,
    lines: fn(&Value) -> Vec<String>,
) -> i32 {
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
pub(super) fn print_every_page(
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
pub(super) fn mount_lines(data: &Value) -> Vec<String> {
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
pub(super) fn document_lines(data: &Value) -> Vec<String> {
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
pub(super) fn history_lines(data: &Value) -> Vec<String> {
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
