//! Taking the turn of index runs: one run at a time per database in this
//! process (a mutex), and across processes (an advisory lock on a file in
//! the state folder), so a second run finds the first one's work done.

use super::*;

/// The turn of index runs on the database at `database` in this process.
pub(super) fn turn_for(database: &Path) -> Arc<Mutex<()>> {
    static TURNS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    TURNS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .entry(database.to_path_buf())
        .or_default()
        .clone()
}

/// Holds the turn of index runs on the database at `database` among
/// processes (a `cos serve` and an agent's `cos mcp` on one repository both
/// follow saves) until dropped: an advisory lock on a file beside it. None
/// when that file cannot be had (a read-only state folder): the run then
/// goes on, as it would have alone.
pub(super) fn lock_across_processes(database: &Path) -> Option<std::fs::File> {
    let path = database.with_extension("graph-index.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .inspect_err(|error| tracing::warn!(%error, path = %path.display(), "index runs of other processes cannot be waited for"))
        .ok()?;
    file.lock()
        .inspect_err(|error| tracing::warn!(%error, path = %path.display(), "index runs of other processes cannot be waited for"))
        .ok()?;
    Some(file)
}
