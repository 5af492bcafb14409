//! Noticing edits made outside the hub while it serves (`cos serve`, `cos
//! mcp`). Each mount's folder is watched through the kernel (notify); a
//! change to a Markdown file, a folder or a path that is gone marks its
//! mount, and a marked mount is scanned by a call of `cos_docs_scan` through
//! the tool runtime (the module gate, the guard and the forensic log apply as
//! for any caller), at most once per `INTERVAL`; a scan that found the
//! database busy leaves its mount marked. An idle repository costs
//! nothing: no walk runs until something changes. A mount whose folder cannot
//! be watched (the watch limit reached) is scanned every `INTERVAL` instead,
//! and every mount is scanned when the kernel says it dropped events.

use notify::Event;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::mounts::{Mount, Mounts};
use super::paths::is_markdown;
use super::tools::DocsScan;
use crate::background;
use crate::envelope::ErrorBody;
use crate::tools::{Hub, Source, Tool, Unwatched};
use crate::watching::{Batch, FolderWatch, Heard, Tree};

/// Least time between two scans of a mount, and between two looks at which
/// mounts there are (`docs.toml` may change while the hub runs).
pub const INTERVAL: Duration = Duration::from_secs(2);
/// Quiet time after a change before it is reported.
const DEBOUNCE: Duration = Duration::from_millis(200);
/// How often the watcher thread checks whether it should stop.
const STOP_CHECK: Duration = Duration::from_millis(500);

/// Watching stops when this is dropped.
pub type Watcher = crate::background::Background;

/// Starts watching on a thread of its own (setting up a watch visits every
/// folder of a mount); `None` when no thread can be had.
pub fn start(hub: Hub) -> Option<Watcher> {
    crate::background::start(
        "cos-docs-watch",
        "documents edited outside the hub are noticed only when read",
        move |stopping| watch(hub, stopping),
    )
}

fn watch(hub: Hub, stop: Arc<AtomicBool>) {
    let mut kernel = match FolderWatch::new() {
        Ok(kernel) => Some(kernel),
        Err(error) => {
            tracing::warn!(%error, "documents are scanned every {} s: the kernel's file events are not available", INTERVAL.as_secs());
            None
        }
    };
    let mut marks = Marks::default();
    let mut next_look = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        match kernel.as_mut() {
            Some(watch) => match watch.next_batch(STOP_CHECK, DEBOUNCE) {
                Heard::Batch(batch) => marks.note(&batch),
                Heard::Nothing => {}
                // the kernel's events stopped: every mount is polled
                Heard::Ended => kernel = None,
            },
            None => std::thread::sleep(STOP_CHECK),
        }
        if Instant::now() < next_look || stop.load(Ordering::Relaxed) {
            continue;
        }
        let config = &hub.state().config;
        match Mounts::load(&config.repo_root, &config.state_dir) {
            Ok(mounts) => marks.follow(mounts.mounts, kernel.as_mut()),
            Err(error) => tracing::debug!(%error, "documents watcher: the mounts cannot be read"),
        }
        for key in marks.take_due() {
            // a scan that found the database busy is done again at the next
            // look: the edits it missed were already heard
            if background::failed_for_now(&scan(&hub, &key)) {
                marks.changed.insert(key);
            }
        }
        next_look = Instant::now() + INTERVAL;
    }
}

fn scan(hub: &Hub, mount: &str) -> Result<(), ErrorBody> {
    let scanned = hub.call_named_here(
        DocsScan::SPEC.name,
        serde_json::json!({ "mount": mount }),
        Source::Watcher,
        &Unwatched,
    );
    if let Err(error) = &scanned {
        tracing::debug!(code = %error.code, mount, "documents scan: {}", error.message);
    }
    scanned.map(|_| ())
}

/// Which mounts are watched, which are polled, and which changed since
/// their last scan.
#[derive(Default)]
struct Marks {
    mounts: Vec<Mount>,
    /// Folder trees the kernel watches, by mount key.
    watched: BTreeMap<String, Tree>,
    /// Mounts that could not be watched: scanned every look.
    polled: BTreeSet<String>,
    changed: BTreeSet<String>,
}

impl Marks {
    /// Takes up the mounts as they now are: watches new folders (each is
    /// scanned once, as it may have changed while unwatched), lets go of
    /// mounts no longer declared.
    fn follow(&mut self, mounts: Vec<Mount>, mut kernel: Option<&mut FolderWatch>) {
        if kernel.is_none() {
            // the kernel's events stopped: nothing is watched any more
            self.watched.clear();
        }
        let gone: Vec<String> = self
            .watched
            .iter()
            .filter(|(key, tree)| {
                !mounts
                    .iter()
                    .any(|m| &m.key == *key && tree_of(m) == **tree)
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in gone {
            if let (Some(tree), Some(kernel)) = (self.watched.remove(&key), kernel.as_deref_mut()) {
                kernel.remove(&tree);
            }
        }
        self.polled.clear();
        for mount in &mounts {
            if self.watched.contains_key(&mount.key) || !mount.root.is_dir() {
                continue;
            }
            let watching = match kernel.as_deref_mut() {
                Some(kernel) => kernel.add(tree_of(mount)),
                None => {
                    self.polled.insert(mount.key.clone());
                    continue;
                }
            };
            match watching {
                Ok(()) => {
                    self.watched.insert(mount.key.clone(), tree_of(mount));
                    self.changed.insert(mount.key.clone());
                }
                Err(error) => {
                    tracing::warn!(%error, mount = %mount.key, "documents of this mount are scanned every {} s: its folder cannot be watched", INTERVAL.as_secs());
                    self.polled.insert(mount.key.clone());
                }
            }
        }
        self.mounts = mounts;
    }

    /// Marks the mounts a batch of events touches.
    fn note(&mut self, batch: &Batch) {
        for error in &batch.errors {
            tracing::warn!(%error, "file watching reported an error; every mount is scanned to be safe");
        }
        if batch.dropped || !batch.errors.is_empty() {
            // the kernel dropped events: anything may have changed
            self.changed.extend(self.watched.keys().cloned());
            return;
        }
        for event in &batch.events {
            self.note_event(event);
        }
        // a folder deleted or moved away takes its documents with it
        for gone in &batch.vanished_folders {
            self.mark(|tree| tree.holds(gone));
        }
    }

    /// Marks the watched mounts whose folder tree `touched` says a change reached.
    fn mark(&mut self, touched: impl Fn(&Tree) -> bool) {
        for (key, tree) in &self.watched {
            if touched(tree) {
                self.changed.insert(key.clone());
            }
        }
    }

    /// Marks the mounts an event's paths touch (the kernel watch never
    /// hands over opening and reading: `watching`).
    fn note_event(&mut self, event: &Event) {
        for path in &event.paths {
            self.mark(|tree| touches(tree, path));
        }
    }

    /// The mounts to scan now: changed or polled ones that still exist.
    fn take_due(&mut self) -> Vec<String> {
        let mut due: BTreeSet<String> = std::mem::take(&mut self.changed);
        due.extend(self.polled.iter().cloned());
        due.into_iter()
            .filter(|key| self.mounts.iter().any(|m| &m.key == key))
            .collect()
    }
}

/// A mount's folders as the kernel watches them: all but what it excludes.
fn tree_of(mount: &Mount) -> Tree {
    Tree {
        root: mount.root.clone(),
        left_out: mount
            .excluded
            .iter()
            .map(|out| mount.root.join(out))
            .collect(),
    }
}

/// Whether a change at `path` can change the documents of the mount whose
/// folders are `tree` (all but `.git` and the hub's state): a Markdown file
/// or a folder (moved in whole, its files bring no events of their own)
/// that it holds. A folder that went is in the batch's `vanished_folders`;
/// a file of another kind that went (the hub's and editors' temporary
/// files) changes nothing.
fn touches(tree: &Tree, path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy());
    tree.holds(path) && (name.is_some_and(|name| is_markdown(&name)) || path.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::EventKind;
    use notify::event::{CreateKind, ModifyKind};
    use std::path::PathBuf;

    fn mount(key: &str, root: &Path) -> Mount {
        let mut mounts = Mounts::load(root, &root.join(".cos")).unwrap();
        let mut mount = mounts.mounts.remove(1);
        mount.key = key.into();
        mount
    }

    fn event(kind: EventKind, path: &Path) -> Batch {
        Batch {
            events: vec![Event::new(kind).add_path(path.to_path_buf())],
            ..Batch::default()
        }
    }

    fn marks_over(root: &Path) -> Marks {
        let notes = mount("notes", root);
        Marks {
            watched: BTreeMap::from([("notes".into(), tree_of(&notes))]),
            mounts: vec![notes],
            ..Marks::default()
        }
    }

    #[test]
    fn an_idle_mount_is_not_scanned_again_and_a_saved_document_is() {
        let folder = tempfile::tempdir().unwrap();
        let mut marks = marks_over(folder.path());
        assert!(
            marks.take_due().is_empty(),
            "nothing changed, nothing scanned"
        );
        let saved = folder.path().join("Guide.MD");
        std::fs::write(&saved, "# Guide\n").unwrap();
        marks.note(&event(EventKind::Modify(ModifyKind::Any), &saved));
        assert_eq!(marks.take_due(), vec!["notes".to_string()]);
        assert!(marks.take_due().is_empty(), "one change, one scan");
    }

    #[test]
    fn only_markdown_files_and_folders_inside_the_mount_count() {
        let folder = tempfile::tempdir().unwrap();
        let root = folder.path();
        std::fs::create_dir_all(root.join("moved/in")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join(".cos")).unwrap();
        std::fs::write(root.join("main.rs"), "fn main() {}").unwrap();
        let marks = marks_over(root);
        let mount = &marks.watched["notes"];
        assert!(touches(mount, &root.join("moved/in")));
        assert!(
            !touches(mount, &root.join(".guide.md.1.cos-tmp")),
            "a temporary file gone"
        );
        assert!(mount.holds(&root.join("deleted-folder")));
        assert!(touches(mount, &root.join("notes.markdown")));
        assert!(!touches(mount, &root.join("main.rs")), "not a document");
        assert!(!touches(mount, &root.join(".git/HEAD.md")), "inside .git");
        assert!(
            !touches(mount, &root.join(".cos/cos.db-wal")),
            "the hub's own state"
        );
        assert!(
            !touches(mount, Path::new("/elsewhere/notes.md")),
            "outside the mount"
        );
    }

    #[test]
    fn dropped_events_and_watch_errors_scan_every_watched_mount() {
        let folder = tempfile::tempdir().unwrap();
        let mut marks = marks_over(folder.path());
        let dropped = Batch {
            dropped: true,
            ..Batch::default()
        };
        marks.note(&dropped);
        assert_eq!(marks.take_due(), vec!["notes".to_string()]);
        let failed = Batch {
            errors: vec![notify::Error::generic("queue overflow")],
            ..Batch::default()
        };
        marks.note(&failed);
        assert_eq!(marks.take_due(), vec!["notes".to_string()]);
        let text = folder.path().join("x.txt");
        std::fs::write(&text, "not a document").unwrap();
        marks.note(&event(EventKind::Create(CreateKind::File), &text));
        assert!(marks.take_due().is_empty());
    }

    #[test]
    fn a_mount_is_watched_once_scanned_when_taken_up_and_let_go_when_undeclared() {
        let folder = tempfile::tempdir().unwrap();
        let mut kernel = FolderWatch::new().unwrap();
        let missing = mount("later", &folder.path().join("later"));
        let present = mount("notes", folder.path());
        let mut marks = Marks::default();
        marks.follow(vec![present.clone(), missing.clone()], Some(&mut kernel));
        assert_eq!(
            marks.take_due(),
            vec!["notes".to_string()],
            "a missing folder waits"
        );
        std::fs::create_dir(folder.path().join("later")).unwrap();
        marks.follow(vec![present.clone(), missing.clone()], Some(&mut kernel));
        assert_eq!(
            marks.take_due(),
            vec!["later".to_string()],
            "taken up once it exists"
        );
        marks.follow(vec![present], Some(&mut kernel));
        assert!(!marks.watched.contains_key("later"));
        assert!(marks.take_due().is_empty());
        marks.follow(vec![missing], None);
        assert_eq!(
            marks.take_due(),
            vec!["later".to_string()],
            "polled without the kernel"
        );
        assert_eq!(marks.take_due(), vec!["later".to_string()], "every look");
    }

    #[test]
    fn a_folder_that_went_marks_the_mount_holding_it() {
        let folder = tempfile::tempdir().unwrap();
        let root = folder.path();
        let mut marks = marks_over(root);
        let went = |path: PathBuf| Batch {
            vanished_folders: vec![path],
            ..Batch::default()
        };
        marks.note(&went(root.join(".git/objects")));
        marks.note(&went(folder.path().with_extension("elsewhere")));
        assert!(marks.take_due().is_empty(), "not the mount's own");
        marks.note(&went(root.join("guides")));
        assert_eq!(marks.take_due(), vec!["notes".to_string()]);
    }
}
