//! Threads that take file work off a writer's path: syncing a temporary
//! file beside the commit, and closing the files a write replaced. Knows
//! nothing of documents or the store; `disk` hands it open files.

use std::sync::mpsc::{Receiver, Sender, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, OnceLock};

/// A temporary file written but not yet synced.
pub struct Unsynced {
    file: cap_std::fs::File,
}

impl From<cap_std::fs::File> for Unsynced {
    fn from(file: cap_std::fs::File) -> Unsynced {
        Unsynced { file }
    }
}

impl Unsynced {
    pub fn sync(self) -> std::io::Result<()> {
        self.file.sync_all()
    }

    /// Syncs the file on one of the syncing threads while the caller goes
    /// on; the answer comes on the receiver (closed if the sync died).
    pub fn sync_beside(self) -> Receiver<std::io::Result<()>> {
        let (done, synced) = std::sync::mpsc::sync_channel(1);
        let job: SyncJob = Box::new(move || {
            let _ = done.send(self.sync());
        });
        match syncers() {
            Some(syncers) => {
                if let Err(refused) = syncers.send(job) {
                    drop(std::thread::spawn(refused.0));
                }
            }
            None => drop(std::thread::spawn(job)),
        }
        synced
    }
}

type SyncJob = Box<dyn FnOnce() + Send>;

/// Threads that only sync files, kept warm between writes (a new thread
/// per write cost more than a small write). They wait on nothing but their
/// queue, so a writer waiting for one is never waiting on itself, however
/// many writers there are (a pool that also runs the writers could be
/// filled by them). None when they could not be started.
fn syncers() -> Option<&'static Sender<SyncJob>> {
    const SYNCERS: usize = 2;
    static QUEUE: OnceLock<Option<Sender<SyncJob>>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (queue, jobs) = std::sync::mpsc::channel::<SyncJob>();
            let jobs = Arc::new(Mutex::new(jobs));
            for n in 0..SYNCERS {
                let jobs = jobs.clone();
                std::thread::Builder::new()
                    .name(format!("cos-docs-sync-{n}"))
                    .spawn(move || {
                        loop {
                            let next = match jobs.lock() {
                                Ok(jobs) => jobs.recv(),
                                Err(poisoned) => poisoned.into_inner().recv(),
                            };
                            match next {
                                Ok(job) => job(),
                                Err(_) => return,
                            }
                        }
                    })
                    .ok()?;
            }
            Some(queue)
        })
        .as_ref()
}

/// Replaced files waiting to be closed, at most.
const CLOSING_QUEUE: usize = 256;

/// Closes `file` on the closing thread. A file renamed over or removed while
/// the hub holds it stays allocated until its last handle closes; freeing it
/// (on ext4 with `discard`, a round trip to the device) then costs the closer
/// instead of the writer, who answers meanwhile. Closed here when the queue
/// is full or the thread could not be started.
pub fn close_later(file: cap_std::fs::File) {
    let Some(closer) = closer() else {
        return;
    };
    match closer.try_send(file) {
        Ok(()) => {}
        Err(TrySendError::Full(file) | TrySendError::Disconnected(file)) => drop(file),
    }
}

fn closer() -> Option<&'static SyncSender<cap_std::fs::File>> {
    static QUEUE: OnceLock<Option<SyncSender<cap_std::fs::File>>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (queue, files) = std::sync::mpsc::sync_channel::<cap_std::fs::File>(CLOSING_QUEUE);
            std::thread::Builder::new()
                .name("cos-docs-close".into())
                .spawn(move || files.into_iter().for_each(drop))
                .ok()?;
            Some(queue)
        })
        .as_ref()
}
