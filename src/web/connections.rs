//! Admitting connections. A connection counts against a ceiling from the
//! moment it is accepted; it must send its first byte within the header
//! timeout (hyper's own header timer only starts once bytes arrive, so a
//! silent socket would otherwise stay open for ever); and when the ceiling is
//! reached, the oldest connection that has still sent nothing makes room, so
//! a crowd of silent sockets cannot lock real clients out. With no silent
//! connection to drop, a newcomer gets a plain 503 and is closed.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// The ceiling when nothing else is configured: half the open-file limit,
/// leaving the rest for the database, the watcher and the logs.
pub fn default_ceiling(open_file_limit: u64) -> usize {
    (open_file_limit / 2).clamp(64, 16_384) as usize
}

/// Raises this process's soft open-file limit to its hard limit; the limit in
/// force afterwards.
pub fn raise_open_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed in.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
    }
    limit.rlim_cur
}

/// The connections of one server: how many may be open, and which of them
/// have not spoken yet.
#[derive(Clone)]
pub struct Admission {
    permits: Arc<Semaphore>,
    silent: Arc<Mutex<Silent>>,
    first_byte_within: Duration,
}

#[derive(Default)]
struct Silent {
    next: u64,
    waiting: BTreeMap<u64, Arc<Notify>>,
}

/// A connection let in: it holds its place until dropped.
pub struct Admitted {
    _permit: OwnedSemaphorePermit,
}

impl Admission {
    pub fn new(ceiling: usize, first_byte_within: Duration) -> Admission {
        Admission {
            permits: Arc::new(Semaphore::new(ceiling.max(1))),
            silent: Arc::new(Mutex::new(Silent::default())),
            first_byte_within,
        }
    }

    /// A place for a new connection: a free one, else the place of the
    /// oldest silent connection, which is told to close; `None` when every
    /// connection is busy.
    pub async fn admit(&self) -> Option<Admitted> {
        if let Ok(permit) = self.permits.clone().try_acquire_owned() {
            return Some(Admitted { _permit: permit });
        }
        let oldest = {
            let mut silent = self.lock();
            silent.waiting.pop_first()
        };
        let (_, oldest) = oldest?;
        oldest.notify_one();
        // the evicted connection drops its place as soon as it is told
        let permit =
            tokio::time::timeout(Duration::from_secs(1), self.permits.clone().acquire_owned())
                .await
                .ok()?
                .ok()?;
        Some(Admitted { _permit: permit })
    }

    /// Waits for `stream`'s first byte; false when it does not come within
    /// the deadline or the connection is evicted to make room.
    pub async fn first_byte(&self, stream: &TcpStream) -> bool {
        let evicted = Arc::new(Notify::new());
        let id = {
            let mut silent = self.lock();
            let id = silent.next;
            silent.next += 1;
            silent.waiting.insert(id, evicted.clone());
            id
        };
        let mut byte = [0u8; 1];
        let spoke = tokio::select! {
            peeked = tokio::time::timeout(self.first_byte_within, stream.peek(&mut byte)) => {
                matches!(peeked, Ok(Ok(read)) if read > 0)
            }
            _ = evicted.notified() => false,
        };
        self.lock().waiting.remove(&id);
        spoke
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Silent> {
        self.silent
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Tells a client the hub is full (an ErrorEnvelope, 503), then closes.
pub async fn refuse(mut stream: TcpStream) {
    let error = crate::envelope::ErrorBody::new(
        crate::envelope::Category::Transient,
        crate::envelope::Code::E_BUSY,
        "the hub has as many connections open as it serves; retry shortly",
    );
    let body = serde_json::json!({ "error": error }).to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(
        Duration::from_secs(1),
        stream.write_all(response.as_bytes()),
    )
    .await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_is_half_the_file_limit_within_bounds() {
        assert_eq!(default_ceiling(1024), 512);
        assert_eq!(default_ceiling(10), 64);
        assert_eq!(default_ceiling(1 << 20), 16_384);
    }
}
