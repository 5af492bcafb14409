//! Tells followers in this process that the hub's data changed: the runtime
//! rings it after every call of a writing tool that succeeded, whoever made
//! the call (a front door, the CLI, a watcher). A follower that keeps
//! something derived level (search's index) waits for a ring instead of
//! polling. Knows no area by name. Changes made by other processes ring
//! nothing here: whatever follows them must still check when it is read.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct Bell {
    /// Rings so far.
    rung: Mutex<u64>,
    rang: Condvar,
}

impl Bell {
    pub fn ring(&self) {
        *self.lock() += 1;
        self.rang.notify_all();
    }

    /// Rings so far: pass it to [`Bell::wait_past`].
    pub fn rings(&self) -> u64 {
        *self.lock()
    }

    /// Waits at most `wait` for a ring after the first `seen`; answers the
    /// rings so far (more than `seen` when it rang).
    pub fn wait_past(&self, seen: u64, wait: Duration) -> u64 {
        let deadline = Instant::now() + wait;
        let mut rung = self.lock();
        while *rung <= seen {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            rung = self
                .rang
                .wait_timeout(rung, left)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
        }
        *rung
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        // a counter cannot be left half-changed
        self.rung
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_waiter_wakes_at_a_ring_and_otherwise_when_its_time_is_up() {
        let bell = Arc::new(Bell::default());
        let seen = bell.rings();
        assert_eq!(bell.wait_past(seen, Duration::from_millis(20)), seen);
        let ringer = {
            let bell = bell.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                bell.ring();
            })
        };
        assert_eq!(bell.wait_past(seen, Duration::from_secs(30)), seen + 1);
        ringer.join().unwrap();
        // a ring before the wait is not missed
        bell.ring();
        assert_eq!(bell.wait_past(seen + 1, Duration::from_secs(30)), seen + 2);
    }
}
