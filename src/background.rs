//! Threads that work beside a serving hub until their handle is dropped: the
//! graph's and the documents' watchers, search's follower. Owns only the
//! starting and the stop signal; what a thread does is its area's, and this
//! module knows no area.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Its thread is asked to stop when this is dropped.
pub struct Background {
    stop: Arc<AtomicBool>,
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Runs `work` on a thread named `name`, handing it the flag that turns true
/// once the returned handle is dropped (the thread checks it between waits).
/// `None`, with a warning saying `without` (what the hub does instead), when
/// no thread can be had.
pub fn start(
    name: &str,
    without: &str,
    work: impl FnOnce(Arc<AtomicBool>) + Send + 'static,
) -> Option<Background> {
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || work(stopping));
    match spawned {
        Ok(_) => Some(Background { stop }),
        Err(error) => {
            tracing::warn!(%error, "{without}: no thread for {name}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_thread_sees_its_stop_once_the_handle_is_dropped() {
        let (told, heard) = std::sync::mpsc::channel();
        let handle = start("cos-test-background", "nothing", move |stop| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = told.send(());
        })
        .expect("a thread");
        assert!(heard.recv_timeout(Duration::from_millis(50)).is_err());
        drop(handle);
        heard
            .recv_timeout(Duration::from_secs(30))
            .expect("the thread stopped");
    }
}
