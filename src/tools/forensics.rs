//! The server-side half of a failure: one line per failed call in
//! `$COS_STATE_DIR/.mcp.log`, with enough identity to attribute it when several
//! hub processes share the file.

use super::ToolError;
use std::io::Write;
use std::path::Path;

pub const LOG_FILE: &str = ".mcp.log";

/// A short random id that ties an answer to its log line.
pub fn new_error_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_string()
}

/// Appends the forensic line and mirrors it to the tracing log. Never fails the call:
/// a log that cannot be written is reported on stderr through tracing instead.
pub fn record(state_dir: &Path, tool: &str, error_id: &str, error: &ToolError) {
    let line = forensic_line(tool, error_id, error);
    if error.is_system() {
        tracing::error!(target: "cos::tools", tool, error_id, chain = %error.chain(), "tool failed");
    } else {
        tracing::debug!(target: "cos::tools", tool, error_id, "tool refused: {}", error);
    }
    let path = state_dir.join(LOG_FILE);
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(io_error) = written {
        tracing::warn!(target: "cos::tools", %io_error, "could not append to the forensic log");
    }
}

fn forensic_line(tool: &str, error_id: &str, error: &ToolError) -> String {
    let thread = std::thread::current();
    let mut line = format!(
        "{} level=error tool={tool} error_id={error_id} category={} pid={} thread={:?} chain={:?}",
        humantime::format_rfc3339_millis(std::time::SystemTime::now()),
        error.category(),
        std::process::id(),
        thread.name().unwrap_or("unnamed"),
        error.chain(),
    );
    let databases = error.sqlite_databases();
    if !databases.is_empty() {
        line.push_str(&format!(" sqlite_databases={:?}", databases.join(",")));
    }
    line.push('\n');
    line
}
