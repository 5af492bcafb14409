//! Group commit: writers that reach the commit while another's is being
//! synced wait for it and are then recorded together, in one transaction and
//! one fsync (FULL), each inside its own savepoint so one write's refusal
//! leaves the others whole. Whoever holds the leader's lock commits for
//! everyone queued; each writer gets its own outcome back.
//!
//! Also keeps which publications this process has finished (their files are
//! in place): their redo records are removed by the next group's transaction
//! rather than by a transaction of their own.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, mpsc};

use super::records;
use crate::envelope::{Category, Code};
use crate::store::Store;
use crate::tools::ToolError;

/// Hands a recorded write's outcome to its writer, once the group committed.
type Deliver = Box<dyn FnOnce() + Send>;

/// One write's recording, run by whichever writer leads: whether it
/// succeeded (else its savepoint is rolled back), and how to deliver it.
type Run = Box<dyn FnOnce(&rusqlite::Connection) -> (bool, Deliver) + Send>;

struct Job {
    run: Run,
    /// Tells the writer the group's transaction failed.
    fail: Box<dyn FnOnce(ToolError) + Send>,
}

/// Most writes one transaction records.
const MAX_GROUP: usize = 64;

#[derive(Default)]
pub(super) struct Committer {
    queue: Mutex<Vec<Job>>,
    leader: Mutex<()>,
    published: Mutex<HashSet<String>>,
}

/// The committer of this database, shared by every writer in the process.
pub(super) fn committer(store: &Store) -> Arc<Committer> {
    static COMMITTERS: OnceLock<Mutex<HashMap<PathBuf, Arc<Committer>>>> = OnceLock::new();
    let committers = COMMITTERS.get_or_init(Mutex::default);
    let mut committers = committers
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    committers
        .entry(store.path().to_path_buf())
        .or_default()
        .clone()
}

impl Committer {
    /// Records `work` durably, alone or with others queued meanwhile.
    pub(super) fn commit<T: Send + 'static>(
        &self,
        store: &Store,
        work: impl FnOnce(&rusqlite::Connection) -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let (reply, outcome) = mpsc::channel::<Result<T, ToolError>>();
        let failed = reply.clone();
        let run: Run = Box::new(move |tx| {
            let result = work(tx);
            let ok = result.is_ok();
            let deliver: Deliver = Box::new(move || {
                let _ = reply.send(result);
            });
            (ok, deliver)
        });
        let fail = Box::new(move |error| {
            let _ = failed.send(Err(error));
        });
        lock(&self.queue).push(Job { run, fail });
        loop {
            let leading = lock(&self.leader);
            // a leader before us may have recorded our write already
            if let Some(result) = settled(&outcome) {
                return result;
            }
            let jobs: Vec<Job> = {
                let mut queue = lock(&self.queue);
                let take = queue.len().min(MAX_GROUP);
                queue.drain(..take).collect()
            };
            self.run(store, jobs);
            drop(leading);
            if let Some(result) = settled(&outcome) {
                return result;
            }
        }
    }

    /// No writer is committing or queued: a write now commits at once.
    pub(super) fn is_idle(&self) -> bool {
        lock(&self.queue).is_empty() && self.leader.try_lock().is_ok()
    }

    fn run(&self, store: &Store, jobs: Vec<Job>) {
        if jobs.is_empty() {
            return;
        }
        let finished: Vec<String> = lock(&self.published).iter().cloned().collect();
        let mut replies = Vec::with_capacity(jobs.len());
        let committed = store.write_durable(|tx| -> Result<(), ToolError> {
            for request_id in &finished {
                records::remove_publishing(tx, request_id)?;
            }
            for Job { run, fail } in jobs {
                records::savepoint(tx)?;
                let (ok, deliver) = run(tx);
                if ok {
                    records::release(tx)?;
                } else {
                    records::roll_back_to_savepoint(tx)?;
                }
                replies.push((deliver, fail));
            }
            Ok(())
        });
        match committed {
            Ok(()) => {
                let mut published = lock(&self.published);
                for request_id in &finished {
                    published.remove(request_id);
                }
                for (deliver, _) in replies {
                    deliver();
                }
            }
            Err(error) => {
                let message = format!(
                    "the transaction recording this write failed, so nothing of it was written: {error}; retry with the same request_id"
                );
                let mut first = Some(error);
                for (_, fail) in replies {
                    fail(first.take().unwrap_or_else(|| {
                        ToolError::fail(Category::Transient, Code::E_STORAGE, message.clone())
                    }));
                }
            }
        }
    }

    /// The publication's file is in place; its redo record goes with the next group.
    pub(super) fn published(&self, request_id: &str) {
        lock(&self.published).insert(request_id.to_string());
    }

    pub(super) fn is_published(&self, request_id: &str) -> bool {
        lock(&self.published).contains(request_id)
    }
}

/// The outcome if it has arrived; a leader that died recording it (its
/// transaction rolled back) leaves the write not committed.
fn settled<T>(outcome: &mpsc::Receiver<Result<T, ToolError>>) -> Option<Result<T, ToolError>> {
    match outcome.try_recv() {
        Ok(result) => Some(result),
        Err(mpsc::TryRecvError::Empty) => None,
        Err(mpsc::TryRecvError::Disconnected) => Some(Err(ToolError::fail(
            Category::Transient,
            Code::E_BUSY,
            "the transaction recording this write was interrupted, so nothing of it was written; retry with the same request_id",
        ))),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
