//! Keeping the graph fresh while `cos serve` runs: one index at start, then a
//! re-index whenever a source file under the repository changes (debounced),
//! on a thread of its own. Only new and changed files are parsed again.

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use std::path::Path;
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
    _debouncer: Debouncer<RecommendedWatcher>,
}

/// Starts watching `hub`'s repository; `None` (with a warning) when the platform refuses.
pub fn start(hub: Hub) -> Option<Watcher> {
    let (sender, receiver) = mpsc::channel::<DebounceEventResult>();
    let mut debouncer = match new_debouncer(DEBOUNCE, sender) {
        Ok(debouncer) => debouncer,
        Err(error) => {
            tracing::warn!(%error, "the graph will not follow file changes: watching failed to start");
            return None;
        }
    };
    let root = hub.state().config.repo_root.clone();
    if let Err(error) = debouncer.watcher().watch(&root, RecursiveMode::Recursive) {
        tracing::warn!(%error, "the graph will not follow file changes: the repository cannot be watched");
        return None;
    }
    let state_dir = hub.state().config.state_dir.clone();
    let spawned = std::thread::Builder::new().name("cos-graph-watch".into()).spawn(move || {
        reindex(&hub);
        while let Ok(batch) = receiver.recv() {
            let relevant = match batch {
                Ok(events) => events.iter().any(|event| matters(&event.path, &root, &state_dir)),
                Err(error) => {
                    tracing::warn!(%error, "file watching reported an error; re-indexing to be safe");
                    true
                }
            };
            // Collapse whatever else arrived meanwhile into this one run.
            let more = receiver.try_iter().any(|batch| batch.map_or(true, |events| events.iter().any(|e| matters(&e.path, &root, &state_dir))));
            if relevant || more {
                reindex(&hub);
            }
        }
    });
    if let Err(error) = spawned {
        tracing::warn!(%error, "the graph will not follow file changes: no thread for the watcher");
        return None;
    }
    Some(Watcher {
        _debouncer: debouncer,
    })
}

/// A change matters when it is a source file the graph reads, or a path that is
/// gone (a deleted file or folder), outside the state directory and `.git`.
fn matters(path: &Path, root: &Path, state_dir: &Path) -> bool {
    if path.starts_with(state_dir) || path.strip_prefix(root).is_ok_and(|p| p.starts_with(".git")) {
        return false;
    }
    let name = path.to_string_lossy();
    Language::of(&name).is_some() || !path.exists()
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
