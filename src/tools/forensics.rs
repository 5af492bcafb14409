//! The server-side half of a failure: one line per failed call in
//! `$COS_STATE_DIR/.mcp.log`, with enough identity to attribute it when several
//! hub processes share the file. System failures are `level=error`, or
//! `level=warn` when they are transient (a busy database clears by itself,
//! and the caller is told to try again); a refusal of the caller's request
//! (bad input, unknown id, conflict) is `level=info`. The file rotates by
//! size: past `MAX_LOG_BYTES` it becomes `.mcp.log.1` (and `.1` becomes
//! `.2`, ...), keeping `KEPT_LOGS` old files.

use super::ToolError;
use std::io::Write;
use std::path::Path;

pub const LOG_FILE: &str = ".mcp.log";
/// The size past which the log starts a new file.
pub const MAX_LOG_BYTES: u64 = 4 << 20;
/// Old log files kept beside the current one.
pub const KEPT_LOGS: usize = 3;

/// A short random id that ties an answer to its log line.
pub fn new_error_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_string()
}

/// Appends the forensic line and mirrors it to the tracing log. Never fails the call:
/// a log that cannot be written is reported on stderr through tracing instead.
pub fn record(state_dir: &Path, tool: &str, error_id: &str, error: &ToolError) {
    let line = forensic_line(tool, error_id, error);
    match Level::of(error) {
        Level::Error => {
            tracing::error!(target: "cos::tools", tool, error_id, chain = %error.chain(), "tool failed")
        }
        Level::Warn => {
            tracing::warn!(target: "cos::tools", tool, error_id, chain = %error.chain(), "tool failed for now; a retry may succeed")
        }
        Level::Info => {
            tracing::debug!(target: "cos::tools", tool, error_id, "tool refused: {}", error)
        }
    }
    if let Err(io_error) = append(&state_dir.join(LOG_FILE), &line, MAX_LOG_BYTES) {
        tracing::warn!(target: "cos::tools", %io_error, "could not append to the forensic log");
    }
}

/// Appends `line` to the log at `path`, first rotating it when it has grown
/// past `max_bytes`. Several processes may share the file: each appends whole
/// lines, and a rename that another process already made is not an error.
fn append(path: &Path, line: &str, max_bytes: u64) -> std::io::Result<()> {
    if std::fs::metadata(path).is_ok_and(|meta| meta.len() + line.len() as u64 > max_bytes) {
        rotate(path);
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(line.as_bytes())
}

fn rotate(path: &Path) {
    let numbered = |n: usize| {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{n}"));
        std::path::PathBuf::from(name)
    };
    for n in (1..KEPT_LOGS).rev() {
        let _ = std::fs::rename(numbered(n), numbered(n + 1));
    }
    let _ = std::fs::rename(path, numbered(1));
}

/// How much a failure should alarm whoever reads the log.
enum Level {
    /// The caller's request was refused: nothing is wrong with the hub.
    Info,
    /// The hub failed for now (a busy database): a retry may succeed.
    Warn,
    Error,
}

impl Level {
    fn of(error: &ToolError) -> Level {
        match (error.is_system(), error.category()) {
            (false, _) => Level::Info,
            (true, crate::envelope::Category::Transient) => Level::Warn,
            (true, _) => Level::Error,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

fn forensic_line(tool: &str, error_id: &str, error: &ToolError) -> String {
    let thread = std::thread::current();
    let level = Level::of(error).name();
    let mut line = format!(
        "{} level={level} tool={tool} error_id={error_id} category={} pid={} thread={:?} chain={:?}",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_by_size_and_keeps_a_few_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOG_FILE);
        let line = format!("{}\n", "x".repeat(99));
        for _ in 0..100 {
            append(&path, &line, 1_000).unwrap();
        }
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        assert!(
            size(&path) <= 1_000,
            "the current file stays under the limit"
        );
        for n in 1..=KEPT_LOGS {
            let old = dir.path().join(format!("{LOG_FILE}.{n}"));
            assert_eq!(size(&old), 1_000, "{} is a full old file", old.display());
        }
        assert!(
            !dir.path()
                .join(format!("{LOG_FILE}.{}", KEPT_LOGS + 1))
                .exists()
        );
        let files = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(files, KEPT_LOGS + 1);
    }

    #[test]
    fn refusals_are_info_transient_failures_warn_and_other_failures_error() {
        let refused = ToolError::invalid("title", "1 to 200 characters");
        assert!(forensic_line("cos_task_create", "id1", &refused).contains(" level=info "));
        let failed = ToolError::internal("reading", std::io::Error::other("disk"));
        assert!(forensic_line("cos_task_create", "id2", &failed).contains(" level=error "));
        let timed_out = ToolError::io("reading", std::io::ErrorKind::TimedOut.into());
        assert!(forensic_line("cos_search_index", "id3", &timed_out).contains(" level=warn "));
    }
}
