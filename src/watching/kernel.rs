//! The process's one kernel watch, shared by every `FolderWatch`. The graph's
//! and the documents' watchers both watch a repository's folders; each with
//! its own watch, every change was read from the kernel twice by two event
//! threads, every folder cost two of the user's kernel watches, and every hub
//! process two of the user's inotify instances (Linux allows 128 by default,
//! shared with editors and every other tool). Here a folder is watched once
//! for all who asked, and each event is handed to the queues of those whose
//! trees hold its paths.
//!
//! Owns the notify watcher, which folders each `FolderWatch` holds in it, and
//! the routes to their queues; knows nothing of batches or of what an event
//! means.

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak, mpsc};

use super::Tree;

/// Where one `FolderWatch` hears from: the trees it watches, its queue.
struct Route {
    id: u64,
    trees: Vec<Tree>,
    queue: mpsc::SyncSender<notify::Result<Event>>,
    overflowed: Arc<AtomicBool>,
}

/// The notify watcher and, for each folder it watches, who asked.
struct Folders {
    watcher: RecommendedWatcher,
    holders: HashMap<PathBuf, BTreeSet<u64>>,
}

pub(super) struct Kernel {
    /// Owned by notify's event thread, which takes the lock for every event
    /// (so it is never held while calling the watcher, which waits on that
    /// thread). Should the thread end, the routes and their senders go with
    /// it, and every watch hears `Heard::Ended` as with a watch of its own.
    routes: Weak<Mutex<Vec<Route>>>,
    folders: Mutex<Folders>,
    next_id: AtomicU64,
}

static SHARED: Mutex<Weak<Kernel>> = Mutex::new(Weak::new());

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One `FolderWatch`'s place in the shared watch; leaves it when dropped.
pub(super) struct Subscription {
    kernel: Arc<Kernel>,
    id: u64,
}

impl Subscription {
    /// Joins the process's kernel watch (made if nobody holds it), events
    /// for this subscription's trees going to `queue`.
    pub(super) fn join(
        queue: mpsc::SyncSender<notify::Result<Event>>,
        overflowed: Arc<AtomicBool>,
    ) -> notify::Result<Subscription> {
        let kernel = shared()?;
        let id = kernel.next_id.fetch_add(1, Ordering::Relaxed);
        let routes = kernel
            .routes
            .upgrade()
            .ok_or_else(|| notify::Error::generic("the kernel's event thread has ended"))?;
        lock(&routes).push(Route {
            id,
            trees: Vec::new(),
            queue,
            overflowed,
        });
        Ok(Subscription { kernel, id })
    }

    /// The trees whose events this subscription hears.
    pub(super) fn hear(&self, trees: &[Tree]) {
        let Some(routes) = self.kernel.routes.upgrade() else {
            return;
        };
        if let Some(route) = lock(&routes).iter_mut().find(|route| route.id == self.id) {
            route.trees = trees.to_vec();
        }
    }

    /// Watches `folder` for this subscription. The kernel is asked even when
    /// another holds the folder: a folder deleted and made again has lost its
    /// old watch before every holder has heard so.
    pub(super) fn watch(&self, folder: &Path) -> notify::Result<()> {
        let mut folders = lock(&self.kernel.folders);
        folders.watcher.watch(folder, RecursiveMode::NonRecursive)?;
        folders
            .holders
            .entry(folder.to_path_buf())
            .or_default()
            .insert(self.id);
        Ok(())
    }

    /// Lets go of `folder`; the kernel stops watching it when nobody holds it.
    pub(super) fn unwatch(&self, folder: &Path) {
        let mut folders = lock(&self.kernel.folders);
        if release(&mut folders.holders, folder, self.id) {
            let _ = folders.watcher.unwatch(folder);
        }
    }

    /// Forgets `folder`, whose kernel watch went with it (deleted, moved away).
    pub(super) fn forget(&self, folder: &Path) {
        release(&mut lock(&self.kernel.folders).holders, folder, self.id);
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(routes) = self.kernel.routes.upgrade() {
            lock(&routes).retain(|route| route.id != self.id);
        }
        let mut folders = lock(&self.kernel.folders);
        let held: Vec<PathBuf> = folders
            .holders
            .iter()
            .filter(|(_, holders)| holders.contains(&self.id))
            .map(|(folder, _)| folder.clone())
            .collect();
        for folder in held {
            if release(&mut folders.holders, &folder, self.id) {
                let _ = folders.watcher.unwatch(&folder);
            }
        }
    }
}

/// Drops `id` from the holders of `folder`; whether nobody holds it now.
fn release(holders: &mut HashMap<PathBuf, BTreeSet<u64>>, folder: &Path, id: u64) -> bool {
    let Some(held) = holders.get_mut(folder) else {
        return false;
    };
    held.remove(&id);
    if held.is_empty() {
        holders.remove(folder);
        return true;
    }
    false
}

/// The kernel watch every subscription of this process shares.
fn shared() -> notify::Result<Arc<Kernel>> {
    let mut shared = lock(&SHARED);
    // one whose event thread ended hears nothing: a new one is made
    if let Some(kernel) = shared.upgrade()
        && kernel.routes.strong_count() > 0
    {
        return Ok(kernel);
    }
    let routes: Arc<Mutex<Vec<Route>>> = Arc::default();
    let held = Arc::downgrade(&routes);
    let watcher = notify::recommended_watcher(move |event| route(&routes, event))?;
    let kernel = Arc::new(Kernel {
        routes: held,
        folders: Mutex::new(Folders {
            watcher,
            holders: HashMap::new(),
        }),
        next_id: AtomicU64::new(0),
    });
    *shared = Arc::downgrade(&kernel);
    Ok(kernel)
}

/// Hands `arrived` to every route whose trees hold one of its paths; what
/// names no path (the kernel's queue overflowed, an error of the watch
/// itself) concerns everyone.
fn route(routes: &Mutex<Vec<Route>>, arrived: notify::Result<Event>) {
    let paths: &[PathBuf] = match &arrived {
        // opening, reading and closing change nothing, and an index run
        // opens every folder and file: queued, they would overflow the
        // queue, and a dropped event asks for the very run that made them
        Ok(Event {
            kind: EventKind::Access(_),
            ..
        }) => return,
        Ok(event) if event.need_rescan() => &[],
        Ok(event) => &event.paths,
        Err(error) => &error.paths,
    };
    for route in lock(routes).iter() {
        let concerned = paths.is_empty()
            || paths
                .iter()
                .any(|path| route.trees.iter().any(|tree| tree.holds(path)));
        if !concerned {
            continue;
        }
        let copy = match &arrived {
            Ok(event) => Ok(event.clone()),
            // an error's own kind cannot be copied (an I/O error): its words can
            Err(error) => {
                Err(notify::Error::generic(&error.to_string()).set_paths(error.paths.clone()))
            }
        };
        if let Err(mpsc::TrySendError::Full(_)) = route.queue.try_send(copy) {
            route.overflowed.store(true, Ordering::Relaxed);
        }
    }
}
