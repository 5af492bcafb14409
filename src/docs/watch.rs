//! Noticing edits made outside the hub while `cos serve` runs: every couple
//! of seconds a call of `cos_docs_scan` through the tool runtime (the module
//! gate, the guard and the forensic log apply as for any caller). A scan only
//! stats files whose size and time are unchanged, so an idle repository costs
//! a directory walk.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::tools::DocsScan;
use crate::tools::{Hub, Source, Tool, Unwatched};

/// Time between scans.
pub const INTERVAL: Duration = Duration::from_secs(2);

/// Scanning stops when this is dropped.
pub struct Watcher {
    stop: Arc<AtomicBool>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Starts scanning on a thread of its own; `None` when no thread can be had.
pub fn start(hub: Hub) -> Option<Watcher> {
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let spawned = std::thread::Builder::new()
        .name("cos-docs-watch".into())
        .spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                let scanned = hub.call_named_here(
                    DocsScan::SPEC.name,
                    serde_json::json!({}),
                    Source::Watcher,
                    &Unwatched,
                );
                if let Err(error) = scanned {
                    tracing::debug!(code = %error.code, "documents scan: {}", error.message);
                }
                std::thread::sleep(INTERVAL);
            }
        });
    match spawned {
        Ok(_) => Some(Watcher { stop }),
        Err(error) => {
            tracing::warn!(%error, "documents edited outside the hub are noticed only when read: no thread for the watcher");
            None
        }
    }
}
