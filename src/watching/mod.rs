//! Hearing from the kernel about changes beneath folders, leaving out the
//! folders nobody here wants to hear from. notify's recursive mode watches
//! every folder beneath, the hub's own state folder included, where every
//! database commit writes: each commit woke every watcher thread of every
//! hub process serving the repository. Here each folder is watched on its
//! own, left-out folders never, and a folder that appears later (made, or
//! moved in whole) is watched when its event arrives. Events come in
//! batches separated by quiet (`FolderWatch::next_batch`).
//!
//! Every `FolderWatch` of the process shares one kernel watch (`kernel`), so
//! a folder two of them watch is watched, and its events read, once.
//!
//! Owns the folders each watch holds and its event queue; knows no area:
//! callers say which folders to watch, which to leave out, and what an event
//! means.

mod kernel;

use kernel::Subscription;
use notify::Event;
use notify::EventKind;
use notify::event::{CreateKind, ModifyKind};
use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// Events held waiting, and held in one batch; past it the batch says
/// events were dropped, as the kernel's own queue overflowing does.
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
    /// Watched folders the batch shows are gone (deleted, or moved away).
    /// A path that is gone cannot be asked what it was, and most that go
    /// are temporary files (the hub's, an editor's), which change nothing.
    pub vanished_folders: Vec<PathBuf>,
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

/// A watch over any number of trees, with its own queue of their events.
pub struct FolderWatch {
    subscription: Subscription,
    queue: mpsc::Receiver<notify::Result<Event>>,
    overflowed: Arc<AtomicBool>,
    trees: Vec<Tree>,
    /// Every folder watched (ordered, so a folder's descendants follow it).
    folders: BTreeSet<PathBuf>,
}

impl FolderWatch {
    pub fn new() -> notify::Result<FolderWatch> {
        let (sender, queue) = mpsc::sync_channel(QUEUE_BOUND);
        let overflowed = Arc::new(AtomicBool::new(false));
        Ok(FolderWatch {
            subscription: Subscription::join(sender, overflowed.clone())?,
            queue,
            overflowed,
            trees: Vec::new(),
            folders: BTreeSet::new(),
        })
    }

    /// Watches every folder of `tree` but the left-out ones. On an error (a
    /// folder gone meanwhile is not one) the tree is let go of again.
    pub fn add(&mut self, tree: Tree) -> notify::Result<()> {
        if !self.trees.contains(&tree) {
            self.trees.push(tree.clone());
            self.subscription.hear(&self.trees);
        }
        if let Err(error) = self.watch_folders(&tree, &tree.root) {
            self.remove(&tree);
            return Err(error);
        }
        Ok(())
    }

    /// Lets go of `tree`; folders another tree also holds stay watched.
    pub fn remove(&mut self, tree: &Tree) {
        self.trees.retain(|kept| kept != tree);
        self.subscription.hear(&self.trees);
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
        self.forget_vanished_folders(&mut batch);
        self.follow_new_folders(&batch);
        Heard::Batch(batch)
    }

    fn take(&self, batch: &mut Batch, arrived: notify::Result<Event>) {
        match arrived {
            Ok(event) if event.need_rescan() => batch.dropped = true,
            Ok(_) if batch.events.len() >= QUEUE_BOUND => batch.dropped = true,
            Ok(event) => batch.events.push(event),
            Err(error) => batch.errors.push(error),
        }
    }

    /// Folders a removal or a move took away: their kernel watches went with
    /// them (notify lets go of a watch whose folder is deleted or moved
    /// away), and the batch says they were folders.
    fn forget_vanished_folders(&mut self, batch: &mut Batch) {
        let candidates: Vec<PathBuf> = paths_where(batch, |kind| {
            matches!(
                kind,
                EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_))
            )
        })
        .filter(|path| self.folders.contains(*path))
        .cloned()
        .collect();
        for path in candidates {
            // a path may come in several events: named once
            if self.folders.contains(&path) && std::fs::symlink_metadata(&path).is_err() {
                for gone in self.forget_beneath(&path) {
                    self.subscription.forget(&gone);
                }
                batch.vanished_folders.push(path);
            }
        }
    }

    /// Drops `top` and the folders beneath it from the record.
    fn forget_beneath(&mut self, top: &Path) -> Vec<PathBuf> {
        let beneath: Vec<PathBuf> = self
            .folders
            .range::<Path, _>((Bound::Included(top), Bound::Unbounded))
            .take_while(|folder| folder.starts_with(top))
            .cloned()
            .collect();
        for folder in &beneath {
            self.folders.remove(folder);
        }
        beneath
    }

    fn follow_new_folders(&mut self, batch: &Batch) {
        // the kernel says when it made a file: only the rest are looked at
        let appeared = paths_where(batch, |kind| {
            matches!(
                kind,
                EventKind::Create(CreateKind::Folder | CreateKind::Any | CreateKind::Other)
                    | EventKind::Modify(ModifyKind::Name(_))
            )
        })
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
            match self.subscription.watch(&folder) {
                Ok(()) => {
                    self.folders.insert(folder.clone());
                }
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
        for folder in self.forget_beneath(&tree.root) {
            if tree.holds(&folder) {
                self.subscription.unwatch(&folder);
            } else {
                // left out of this tree, so watched for another: kept
                self.folders.insert(folder);
            }
        }
    }
}

/// The paths of the batch's events of the kinds `wanted` picks.
fn paths_where(batch: &Batch, wanted: fn(&EventKind) -> bool) -> impl Iterator<Item = &PathBuf> {
    batch
        .events
        .iter()
        .filter(move |event| wanted(&event.kind))
        .flat_map(|event| &event.paths)
}

/// A folder itself, not a link to one.
fn is_folder(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUIET: Duration = Duration::from_millis(50);

    /// Every path the watch reports within `wait` of `act`.
    fn heard(watch: &mut FolderWatch, act: impl FnOnce(), wait: Duration) -> Vec<PathBuf> {
        act();
        let deadline = Instant::now() + wait;
        let mut paths = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match watch.next_batch(left, QUIET) {
                Heard::Batch(batch) => {
                    paths.extend(batch.events.into_iter().flat_map(|event| event.paths))
                }
                Heard::Nothing | Heard::Ended => break,
            }
        }
        paths
    }

    /// Writes `path` and asserts the watch reports it.
    fn assert_heard_writing(watch: &mut FolderWatch, path: &Path) {
        let paths = heard(
            watch,
            || std::fs::write(path, "# Text\n").unwrap(),
            Duration::from_secs(2),
        );
        assert!(
            paths.iter().any(|heard| heard == path),
            "{} not heard: {paths:?}",
            path.display()
        );
    }

    /// A fresh folder (its real path, as the kernel reports it) with `folders` made in it.
    fn folder_with(folders: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let folder = tempfile::tempdir().unwrap();
        let root = folder.path().canonicalize().unwrap();
        for sub in folders {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        (folder, root)
    }

    /// A watch over `tree`.
    fn watching(tree: Tree) -> FolderWatch {
        let mut watch = FolderWatch::new().unwrap();
        watch.add(tree).unwrap();
        watch
    }

    fn tree_of(root: &Path) -> Tree {
        Tree {
            root: root.to_path_buf(),
            left_out: vec![root.join(".cos"), root.join(".git")],
        }
    }

    #[test]
    fn writes_in_left_out_folders_are_not_heard_and_the_rest_are() {
        let (_folder, root) = folder_with(&[".cos", ".git/objects", "src/deep"]);
        let mut watch = watching(tree_of(&root));
        let paths = heard(
            &mut watch,
            || {
                std::fs::write(root.join(".cos/cos.db-wal"), "page").unwrap();
                std::fs::write(root.join(".git/objects/ab"), "blob").unwrap();
            },
            Duration::from_millis(300),
        );
        assert!(paths.is_empty(), "left-out folders were heard: {paths:?}");
        let paths = heard(
            &mut watch,
            || {
                let _ = std::fs::read_dir(root.join("src/deep")).unwrap().count();
                std::fs::read(root.join(".cos/cos.db-wal")).unwrap();
            },
            Duration::from_millis(300),
        );
        assert!(
            paths.is_empty(),
            "opening and reading were heard: {paths:?}"
        );
        assert_heard_writing(&mut watch, &root.join("src/deep/m.py"));
    }

    #[test]
    fn folders_made_or_moved_in_later_are_watched_to_their_depths() {
        let (_folder, parent) = folder_with(&["repo", "outside/a/b"]);
        let (root, outside) = (parent.join("repo"), parent.join("outside"));
        let mut watch = watching(tree_of(&root));
        heard(
            &mut watch,
            || {
                std::fs::create_dir_all(root.join("made/inner")).unwrap();
                std::fs::rename(&outside, root.join("moved")).unwrap();
            },
            Duration::from_millis(500),
        );
        for later in ["made/inner/new.md", "moved/a/b/new.md"] {
            assert_heard_writing(&mut watch, &root.join(later));
        }
    }

    #[test]
    fn a_tree_let_go_of_is_not_heard_but_a_tree_sharing_its_folders_still_is() {
        let (_folder, root) = folder_with(&["docs/guides", "notes"]);
        let whole = tree_of(&root);
        let notes = tree_of(&root.join("notes"));
        let docs = tree_of(&root.join("docs"));
        let mut watch = watching(notes.clone());
        watch.add(whole.clone()).unwrap();
        watch.add(docs.clone()).unwrap();
        watch.remove(&docs);
        // the whole tree still holds it
        assert_heard_writing(&mut watch, &root.join("docs/guides/a.md"));
        watch.remove(&whole);
        let paths = heard(
            &mut watch,
            || std::fs::write(root.join("docs/guides/b.md"), "# B\n").unwrap(),
            Duration::from_millis(300),
        );
        assert!(paths.is_empty(), "let go of: {paths:?}");
        // the notes tree stays
        assert_heard_writing(&mut watch, &root.join("notes/n.md"));
    }

    #[test]
    fn a_folder_that_goes_is_named_in_the_batch_and_a_file_that_goes_is_not() {
        let (_folder, root) = folder_with(&["pkg/deleted/deeper", "pkg/moved"]);
        let mut watch = watching(tree_of(&root));
        let temp = root.join("pkg/.guide.md.1.cos-tmp");
        std::fs::write(&temp, "# Guide\n").unwrap();
        std::fs::rename(&temp, root.join("pkg/guide.md")).unwrap();
        std::fs::remove_dir_all(root.join("pkg/deleted")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::rename(root.join("pkg/moved"), outside.path().join("away")).unwrap();
        let mut vanished = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(2);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match watch.next_batch(left, QUIET) {
                Heard::Batch(batch) => vanished.extend(batch.vanished_folders),
                Heard::Nothing | Heard::Ended => break,
            }
        }
        vanished.sort();
        assert_eq!(
            vanished,
            [
                root.join("pkg/deleted"),
                root.join("pkg/deleted/deeper"),
                root.join("pkg/moved")
            ]
        );
        assert!(watch.folders.iter().all(|kept| kept.exists()));
        // the folder moved away is out of the tree: what happens in it is not heard
        let paths = heard(
            &mut watch,
            || std::fs::write(outside.path().join("away/later.md"), "# Later\n").unwrap(),
            Duration::from_millis(300),
        );
        assert!(
            paths.is_empty(),
            "a folder moved away is still heard: {paths:?}"
        );
    }

    /// Every path `watch` reports within `wait`.
    fn heard_by(watch: &mut FolderWatch, wait: Duration) -> Vec<PathBuf> {
        heard(watch, || {}, wait)
    }

    #[test]
    fn watches_sharing_a_folder_each_hear_it_and_only_what_their_trees_hold() {
        let (_folder, root) = folder_with(&["docs", "src"]);
        let mut whole = watching(tree_of(&root));
        let mut docs = watching(tree_of(&root.join("docs")));
        std::fs::write(root.join("docs/a.md"), "# A\n").unwrap();
        std::fs::write(root.join("src/m.py"), "x = 1\n").unwrap();
        let wait = Duration::from_millis(500);
        let (by_whole, by_docs) = (heard_by(&mut whole, wait), heard_by(&mut docs, wait));
        assert!(by_whole.contains(&root.join("docs/a.md")), "{by_whole:?}");
        assert!(by_whole.contains(&root.join("src/m.py")), "{by_whole:?}");
        assert!(by_docs.contains(&root.join("docs/a.md")), "{by_docs:?}");
        assert!(
            by_docs
                .iter()
                .all(|path| path.starts_with(root.join("docs"))),
            "heard beyond its tree: {by_docs:?}"
        );
        // one letting go of the folder leaves the other hearing it
        drop(docs);
        assert_heard_writing(&mut whole, &root.join("docs/b.md"));
        let mut again = watching(tree_of(&root.join("docs")));
        whole.remove(&tree_of(&root));
        assert_heard_writing(&mut again, &root.join("docs/c.md"));
    }

    #[test]
    fn a_shared_folder_deleted_and_made_again_is_heard_by_the_watch_that_noticed() {
        let (_folder, root) = folder_with(&["docs/inner"]);
        let mut first = watching(tree_of(&root));
        let mut second = watching(tree_of(&root));
        // the first hears the folder go and come back before the second
        // has looked at its queue: the kernel's watch on it went meanwhile
        heard(
            &mut first,
            || {
                std::fs::remove_dir_all(root.join("docs/inner")).unwrap();
                std::fs::create_dir(root.join("docs/inner")).unwrap();
            },
            Duration::from_millis(500),
        );
        assert_heard_writing(&mut first, &root.join("docs/inner/a.md"));
        heard_by(&mut second, Duration::from_millis(300));
        assert_heard_writing(&mut second, &root.join("docs/inner/b.md"));
    }

    #[test]
    fn more_changes_than_the_queue_holds_are_said_to_be_dropped() {
        let (_folder, root) = folder_with(&[]);
        let mut watch = watching(tree_of(&root));
        for n in 0..QUEUE_BOUND + 100 {
            std::fs::write(root.join(format!("f{n}")), "").unwrap();
        }
        // nobody takes events meanwhile, as while a watcher re-indexes
        std::thread::sleep(Duration::from_secs(1));
        let (mut dropped, mut largest) = (false, 0);
        while let Heard::Batch(batch) = watch.next_batch(Duration::from_millis(500), QUIET) {
            dropped |= batch.dropped;
            largest = largest.max(batch.events.len());
        }
        assert!(dropped, "an overflow went unsaid");
        assert!(largest <= QUEUE_BOUND, "{largest} events held at once");
    }
}
