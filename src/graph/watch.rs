//! Keeping the graph fresh while `cos serve` runs: one index at start, then a
//! re-index whenever a source file under the repository changes (debounced),
//! on a thread of its own. Only new and changed files are parsed again.

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use super::extract::Language;
use crate::tools::{Hub, Module};

/// Quiet time after the last change before re-indexing.
pub const DEBOUNCE: Duration = Duration::from_millis(300);
/// What the tools call the graph's background work in `HubState::pending`.
pub const PENDING: &str = "graph";

/// Watching stops when this is dropped.
pub struct Watcher {
    stop: Arc<AtomicBool>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// How often the watcher thread checks whether it should stop.
const STOP_CHECK: Duration = Duration::from_millis(500);

/// Starts watching `hub`'s repository on a thread of its own, so setting up the
/// watch (which visits every folder) never delays serving; `None` when no thread
/// can be had. Problems later are logged, and the graph then just is not refreshed.
pub fn start(hub: Hub) -> Option<Watcher> {
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let spawned = std::thread::Builder::new()
        .name("cos-graph-watch".into())
        .spawn(move || watch(hub, stopping));
    match spawned {
        Ok(_) => Some(Watcher { stop }),
        Err(error) => {
            tracing::warn!(%error, "the graph will not follow file changes: no thread for the watcher");
            None
        }
    }
}

fn watch(hub: Hub, stop: Arc<AtomicBool>) {
    let (sender, receiver) = mpsc::channel::<DebounceEventResult>();
    let root = hub.state().config.repo_root.clone();
    let state_dir = hub.state().config.state_dir.clone();
    let debouncer = new_debouncer(DEBOUNCE, sender).and_then(|mut debouncer| {
        debouncer.watcher().watch(&root, RecursiveMode::Recursive)?;
        Ok(debouncer)
    });
    let _debouncer: Debouncer<RecommendedWatcher> = match debouncer {
        Ok(debouncer) => debouncer,
        Err(error) => {
            tracing::warn!(%error, "the graph will not follow file changes: the repository cannot be watched");
            return;
        }
    };
    reindex(&hub);
    while !stop.load(Ordering::Relaxed) {
        let batch = match receiver.recv_timeout(STOP_CHECK) {
            Ok(batch) => batch,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let relevant = |batch: &DebounceEventResult| match batch {
            Ok(events) => events
                .iter()
                .any(|event| matters(&event.path, &root, &state_dir)),
            Err(error) => {
                tracing::warn!(%error, "file watching reported an error; re-indexing to be safe");
                true
            }
        };
        // Collapse whatever else arrived meanwhile into this one run.
        let mut changed = relevant(&batch);
        for more in receiver.try_iter() {
            changed |= relevant(&more);
        }
        if changed && !stop.load(Ordering::Relaxed) {
            reindex(&hub);
        }
    }
}

/// A change matters when it is a source file the graph reads, a folder (one
/// moved or copied in whole: its files' own events may come before the watch
/// on it does), a `.gitignore`, or a path that is gone (a deleted file or
/// folder), outside the state directory and `.git`.
fn matters(path: &Path, root: &Path, state_dir: &Path) -> bool {
    if path.starts_with(state_dir) || path.strip_prefix(root).is_ok_and(|p| p.starts_with(".git")) {
        return false;
    }
    let name = path.to_string_lossy();
    Language::of(&name).is_some() || name.ends_with(".gitignore") || path.is_dir() || !path.exists()
}

fn reindex(hub: &Hub) {
    let state = hub.state();
    if !state.modules.is_enabled(Module::Graph).unwrap_or(false) {
        return;
    }
    state.pending.set(PENDING, true);
    match super::index::index(&state.store, &state.config.repo_root, &|_| {}, &|| {}) {
        Ok(summary) if summary.parsed + summary.removed > 0 => {
            tracing::info!(
                parsed = summary.parsed,
                removed = summary.removed,
                ms = summary.milliseconds,
                "graph updated"
            );
        }
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "re-indexing the graph failed"),
    }
    state.pending.set(PENDING, false);
}
