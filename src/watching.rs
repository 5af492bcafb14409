//! Hearing from the kernel about changes beneath folders, leaving out the
//! folders nobody here wants to hear from. notify's recursive mode watches
//! every folder beneath, the hub's own state folder included, where every
//! database commit writes: each commit woke every watcher thread of every
//! hub process serving the repository. Here each folder is watched on its
//! own, left-out folders never, and a folder that appears later (made, or
//! moved in whole) is watched when its event arrives. Events come in
//! batches separated by quiet (`FolderWatch::next_batch`).
//!
//! Owns the kernel watch and its event queue; knows no area: callers say
//! which folders to watch, which to leave out, and what an event means.

use notify::event::ModifyKind;
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// Events held between two batches; past it the batch says events were
/// dropped, as the kernel's own queue overflowing does.
const QUEUE_BOUND: usize = 4096;

/// A folder tree to watch: its root and the folders beneath it left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub root: PathBuf,
    pub left_out: Vec<PathBuf>,
}

impl Tree {
    /// Whether `path` lies in this tree and outside what it leaves out.
    pub fn holds(&self, path: &Path) -> bool {
        path.starts_with(&self.root) && !self.left_out.iter().any(|out| path.starts_with(out))
    }
}

/// What arrived between two quiet spells.
#[derive(Debug, Default)]
pub struct Batch {
    pub events: Vec<Event>,
    pub errors: Vec<notify::Error>,
    /// Events were lost (the kernel's queue or ours overflowed): anything
    /// may have changed.
    pub dropped: bool,
}

/// What waiting for the kernel came to.
#[derive(Debug)]
pub enum Heard {
    /// Nothing within the wait.
    Nothing,
    Batch(Batch),
    /// The kernel's event thread is gone: nothing will be heard again.
    Ended,
}

/// One kernel watch over any number of trees.
pub struct FolderWatch {
    watcher: RecommendedWatcher,
    queue: mpsc::Receiver<notify::Result<Event>>,
    overflowed: Arc<AtomicBool>,
    trees: Vec<Tree>,
}

impl FolderWatch {
    pub fn new() -> notify::Result<FolderWatch> {
        let (sender, queue) = mpsc::sync_channel(QUEUE_BOUND);
        let overflowed = Arc::new(AtomicBool::new(false));
        let overflowing = overflowed.clone();
        let watcher = notify::recommended_watcher(move |event| {
            if let Err(mpsc::TrySendError::Full(_)) = sender.try_send(event) {
                overflowing.store(true, Ordering::Relaxed);
            }
        })?;
        Ok(FolderWatch {
            watcher,
            queue,
            overflowed,
            trees: Vec::new(),
        })
    }

    /// Watches every folder of `tree` but the left-out ones. On an error (a
    /// folder gone meanwhile is not one) the tree is let go of again.
    pub fn add(&mut self, tree: Tree) -> notify::Result<()> {
        if let Err(error) = self.watch_folders(&tree, &tree.root) {
            self.unwatch_folders(&tree);
            return Err(error);
        }
        if !self.trees.contains(&tree) {
            self.trees.push(tree);
        }
        Ok(())
    }

    /// Lets go of `tree`; folders another tree also holds stay watched.
    pub fn remove(&mut self, tree: &Tree) {
        self.trees.retain(|kept| kept != tree);
        self.unwatch_folders(tree);
        // a folder two trees shared has one kernel watch, just removed
        for kept in self.trees.clone() {
            if kept.root.starts_with(&tree.root) || tree.root.starts_with(&kept.root) {
                let _ = self.watch_folders(&kept, &kept.root);
            }
        }
    }

    /// The next batch: waits up to `wait` for a first event, then gathers
    /// until a spell of `quiet` brings none, or twice `quiet` since the first
    /// (so a steady stream of changes is still handed over that often).
    /// The gathering sleeps through each spell rather than waking for every
    /// event: a saved file brings several, and each wake is a context switch.
    /// Folders the batch shows appeared are watched before it is handed over.
    pub fn next_batch(&mut self, wait: Duration, quiet: Duration) -> Heard {
        let first = match self.queue.recv_timeout(wait) {
            Ok(first) => first,
            Err(mpsc::RecvTimeoutError::Timeout) => return Heard::Nothing,
            Err(mpsc::RecvTimeoutError::Disconnected) => return Heard::Ended,
        };
        let mut batch = Batch::default();
        self.take(&mut batch, first);
        let until = Instant::now() + quiet * 2;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            std::thread::sleep(quiet.min(left));
            let before = batch.events.len() + batch.errors.len();
            while let Ok(next) = self.queue.try_recv() {
                self.take(&mut batch, next);
            }
            if batch.events.len() + batch.errors.len() == before {
                break;
            }
        }
        batch.dropped |= self.overflowed.swap(false, Ordering::Relaxed);
        self.follow_new_folders(&batch);
        Heard::Batch(batch)
    }

    fn take(&self, batch: &mut Batch, arrived: notify::Result<Event>) {
        match arrived {
            Ok(event) if event.need_rescan() => batch.dropped = true,
            Ok(event) => batch.events.push(event),
            Err(error) => batch.errors.push(error),
        }
    }

    fn follow_new_folders(&mut self, batch: &Batch) {
        let appeared = batch
            .events
            .iter()
            .filter(|event| {
                matches!(
                    event.kind,
                    EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(_))
                )
            })
            .flat_map(|event| &event.paths)
            .filter(|path| is_folder(path));
        for path in appeared {
            for tree in self.trees.clone() {
                if let Err(error) = self.watch_folders(&tree, path) {
                    tracing::warn!(%error, folder = %path.display(), "a new folder is not watched");
                }
            }
        }
    }

    /// Watches `top` and the folders beneath it that `tree` holds, without
    /// following symbolic links (a link may lead out of the tree, or round).
    fn watch_folders(&mut self, tree: &Tree, top: &Path) -> notify::Result<()> {
        let mut folders = vec![top.to_path_buf()];
        while let Some(folder) = folders.pop() {
            if !tree.holds(&folder) {
                continue;
            }
            match self.watcher.watch(&folder, RecursiveMode::NonRecursive) {
                Ok(()) => {}
                // gone meanwhile: its removal is an event of its parent
                Err(error) if matches!(error.kind, notify::ErrorKind::PathNotFound) => continue,
                Err(error) => return Err(error),
            }
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    folders.push(entry.path());
                }
            }
        }
        Ok(())
    }

    fn unwatch_folders(&mut self, tree: &Tree) {
        let mut folders = vec![tree.root.clone()];
        while let Some(folder) = folders.pop() {
            if !tree.holds(&folder) {
                continue;
            }
            let _ = self.watcher.unwatch(&folder);
            for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    folders.push(entry.path());
                }
            }
        }
    }
}

/// A folder itself, not a link to one.
fn is_folder(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUIET: Duration = Duration::from_millis(50);

    /// Every path the watch reports changed within `wait` of `act` (opening
    /// a folder, as watching one does, changes nothing).
    fn heard(watch: &mut FolderWatch, act: impl FnOnce(), wait: Duration) -> Vec<PathBuf> {
        act();
        let deadline = Instant::now() + wait;
        let mut paths = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match watch.next_batch(left, QUIET) {
                Heard::Batch(batch) => paths.extend(
                    batch
                        .events
                        .into_iter()
                        .filter(|event| !matches!(event.kind, EventKind::Access(_)))
                        .flat_map(|event| event.paths),
                ),
                Heard::Nothing | Heard::Ended => break,
            }
        }
        paths
    }

    fn tree_of(root: &Path) -> Tree {
        Tree {
            root: root.to_path_buf(),
            left_out: vec![root.join(".cos"), root.join(".git")],
        }
    }

    #[test]
    fn writes_in_left_out_folders_are_not_heard_and_the_rest_are() {
        let folder = tempfile::tempdir().unwrap();
        let root = folder.path().canonicalize().unwrap();
        for sub in [".cos", ".git/objects", "src/deep"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        let mut watch = FolderWatch::new().unwrap();
        watch.add(tree_of(&root)).unwrap();
        let paths = heard(
            &mut watch,
            || {
                std::fs::write(root.join(".cos/cos.db-wal"), "page").unwrap();
                std::fs::write(root.join(".git/objects/ab"), "blob").unwrap();
            },
            Duration::from_millis(300),
        );
        assert!(paths.is_empty(), "left-out folders were heard: {paths:?}");
        let saved = root.join("src/deep/m.py");
        let paths = heard(
            &mut watch,
            || std::fs::write(&saved, "x = 1\n").unwrap(),
            Duration::from_secs(2),
        );
        assert!(paths.contains(&saved), "{paths:?}");
    }

    #[test]
    fn folders_made_or_moved_in_later_are_watched_to_their_depths() {
        let folder = tempfile::tempdir().unwrap();
        let root = folder.path().canonicalize().unwrap().join("repo");
        let outside = folder.path().canonicalize().unwrap().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(outside.join("a/b")).unwrap();
        let mut watch = FolderWatch::new().unwrap();
        watch.add(tree_of(&root)).unwrap();
        heard(
            &mut watch,
            || {
                std::fs::create_dir_all(root.join("made/inner")).unwrap();
                std::fs::rename(&outside, root.join("moved")).unwrap();
            },
            Duration::from_millis(500),
        );
        for later in ["made/inner/new.md", "moved/a/b/new.md"] {
            let saved = root.join(later);
            let paths = heard(
                &mut watch,
                || std::fs::write(&saved, "# New\n").unwrap(),
                Duration::from_secs(2),
            );
            assert!(paths.contains(&saved), "{later} not heard: {paths:?}");
        }
    }

    #[test]
    fn a_tree_let_go_of_is_not_heard_but_a_tree_sharing_its_folders_still_is() {
        let folder = tempfile::tempdir().unwrap();
        let root = folder.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("docs/guides")).unwrap();
        std::fs::create_dir_all(root.join("notes")).unwrap();
        let whole = tree_of(&root);
        let notes = tree_of(&root.join("notes"));
        let docs = tree_of(&root.join("docs"));
        let mut watch = FolderWatch::new().unwrap();
        watch.add(notes.clone()).unwrap();
        watch.add(whole.clone()).unwrap();
        watch.add(docs.clone()).unwrap();
        watch.remove(&docs);
        let guide = root.join("docs/guides/a.md");
        let paths = heard(
            &mut watch,
            || std::fs::write(&guide, "# A\n").unwrap(),
            Duration::from_secs(2),
        );
        assert!(paths.contains(&guide), "the whole tree still holds it");
        watch.remove(&whole);
        let paths = heard(
            &mut watch,
            || std::fs::write(root.join("docs/guides/b.md"), "# B\n").unwrap(),
            Duration::from_millis(300),
        );
        assert!(paths.is_empty(), "let go of: {paths:?}");
        let note = root.join("notes/n.md");
        let paths = heard(
            &mut watch,
            || std::fs::write(&note, "# N\n").unwrap(),
            Duration::from_secs(2),
        );
        assert!(paths.contains(&note), "the notes tree stays: {paths:?}");
    }
}
