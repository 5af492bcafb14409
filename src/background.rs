//! Threads that work beside a serving hub until their handle is dropped: the
//! graph's and the documents' watchers, search's follower. Owns the starting,
//! the stop signal and when a run that failed for now is tried again; what a
//! thread does is its area's, and this module knows no area.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::envelope::{Category, ErrorBody};

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

/// Whether a run failed only for now: the database was busy past its wait,
/// say, which clears by itself. Such a run's work is still to do, and
/// nothing else may come to ask for it again (no file changes, no write).
pub fn failed_for_now<T>(outcome: &Result<T, ErrorBody>) -> bool {
    matches!(outcome, Err(error) if error.category == Category::Transient)
}

/// When a run that failed for now is tried again: `FIRST_RETRY` after the
/// failure, twice as long after each further one up to `LAST_RETRY`, and
/// not at all once a run succeeded or failed for good (which a retry would
/// only repeat).
#[derive(Debug, Default)]
pub struct Retry {
    due: Option<Instant>,
    wait: Duration,
}

const FIRST_RETRY: Duration = Duration::from_millis(500);
const LAST_RETRY: Duration = Duration::from_secs(30);

impl Retry {
    /// Takes in how a run ended.
    pub fn record<T>(&mut self, outcome: &Result<T, ErrorBody>) {
        if failed_for_now(outcome) {
            self.wait = (self.wait * 2).clamp(FIRST_RETRY, LAST_RETRY);
            self.due = Some(Instant::now() + self.wait);
        } else {
            *self = Retry::default();
        }
    }

    /// Whether a run that failed for now should be tried again now.
    pub fn is_due(&self) -> bool {
        self.due.is_some_and(|due| Instant::now() >= due)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::Code;

    fn failure(category: Category) -> Result<(), ErrorBody> {
        Err(ErrorBody::new(category, Code::E_BUSY, "busy"))
    }

    #[test]
    fn a_run_that_failed_for_now_is_due_again_later_and_later_until_one_succeeds() {
        let mut retry = Retry::default();
        assert!(!retry.is_due(), "nothing failed yet");
        retry.record(&failure(Category::Transient));
        assert!(!retry.is_due(), "not at once");
        assert_eq!(retry.wait, FIRST_RETRY);
        std::thread::sleep(FIRST_RETRY);
        assert!(retry.is_due());
        for _ in 0..10 {
            retry.record(&failure(Category::Transient));
        }
        assert_eq!(retry.wait, LAST_RETRY, "the wait doubles to its ceiling");
        retry.record(&Ok(()));
        assert!(!retry.is_due() && retry.due.is_none());
        retry.record(&failure(Category::Transient));
        assert_eq!(retry.wait, FIRST_RETRY, "a success starts the waits over");
    }

    #[test]
    fn a_run_that_failed_for_good_is_not_tried_again() {
        let mut retry = Retry::default();
        retry.record(&failure(Category::Transient));
        retry.record(&failure(Category::Internal));
        assert!(retry.due.is_none());
        assert!(!failed_for_now(&failure(Category::Validation)));
        assert!(failed_for_now(&failure(Category::Transient)));
    }

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
