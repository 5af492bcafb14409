//! Keeping the graph fresh while the hub serves (`cos serve`, `cos mcp`):
//! one index at start, then a re-index whenever a source file under the
//! repository changes (debounced), on a thread of its own, and again after a
//! run that found the database busy (`background::Retry`). Only new and
//! changed files are parsed again; a repository the kernel cannot watch is
//! re-indexed on a timer instead. Each run is a call of `cos_graph_index`
//! through the tool runtime, like any other caller's: the module gate, the
//! guard (a panic is contained and logged with its error id) and the
//! forensic log apply.

use ignore::gitignore::Gitignore;
use notify::Event;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::PENDING;
use super::extract::Language;
use crate::background::Retry;
use crate::envelope::{Code, ErrorBody};
use crate::tools::{Hub, Pending, Source, Tool, Unwatched};
use crate::watching::{Batch, FolderWatch, Heard, Tree};

/// Quiet time after the last change before re-indexing.
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// Watching stops when this is dropped.
pub type Watcher = crate::background::Background;

/// How often the watcher thread checks whether it should stop.
const STOP_CHECK: Duration = Duration::from_millis(500);

/// Starts watching `hub`'s repository on a thread of its own, so setting up the
/// watch (which visits every folder) never delays serving; `None` when no thread
/// can be had. A repository the kernel cannot watch is re-indexed every `POLL`
/// instead; problems later are logged.
pub fn start(hub: Hub) -> Option<Watcher> {
    crate::background::start(
        "cos-graph-watch",
        "the graph will not follow file changes",
        move |stopping| watch(hub, stopping),
    )
}

/// How often a repository the kernel cannot watch (its limit on watches
/// reached, `fs.inotify.max_user_watches`) is re-indexed instead, at least:
/// a run that took long waits ten times its own length before the next.
const POLL: Duration = Duration::from_secs(10);

fn watch(hub: Hub, stop: Arc<AtomicBool>) {
    let root = hub.state().config.repo_root.clone();
    let state_dir = hub.state().config.state_dir.clone();
    let tree = repository_tree(&root, &state_dir);
    let mut kernel = match watch_repository(&tree) {
        Ok(kernel) => kernel,
        Err(error) => {
            tracing::warn!(
                %error,
                "the repository cannot be watched (has the kernel's limit on watches, fs.inotify.max_user_watches, been reached?): the graph is re-indexed every {} s instead",
                POLL.as_secs()
            );
            poll(&hub, &stop, POLL);
            return;
        }
    };
    // a run that found the database busy is tried again even when no file
    // changes after it: the changes it missed were already heard
    let mut retry = Retry::default();
    retry.record(&reindex(&hub));
    while !stop.load(Ordering::Relaxed) {
        let changed = match kernel.next_batch(STOP_CHECK, DEBOUNCE) {
            Heard::Batch(batch) => relevant(&batch, &tree),
            Heard::Nothing => false,
            Heard::Ended => break,
        };
        if (changed || retry.is_due()) && !stop.load(Ordering::Relaxed) {
            retry.record(&reindex(&hub));
        }
    }
}

/// Re-indexes every `every` (or ten times the last run's length, if more)
/// until `stop`: what keeps the graph fresh when nothing can be heard.
fn poll(hub: &Hub, stop: &AtomicBool, every: Duration) {
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let _ = reindex(hub);
        let next = started + every.max(started.elapsed() * 10);
        while !stop.load(Ordering::Relaxed) {
            let Some(left) = next.checked_duration_since(Instant::now()) else {
                break;
            };
            std::thread::sleep(left.min(STOP_CHECK));
        }
    }
}

/// The repository's folders, but for `.git` and the hub's state, whose
/// writes never change the graph.
fn repository_tree(root: &Path, state_dir: &Path) -> Tree {
    Tree {
        root: root.to_path_buf(),
        left_out: vec![root.join(".git"), state_dir.to_path_buf()],
    }
}

fn watch_repository(tree: &Tree) -> notify::Result<FolderWatch> {
    let mut kernel = FolderWatch::new()?;
    kernel.add(tree.clone())?;
    Ok(kernel)
}

/// Whether a batch of events calls for a re-index.
fn relevant(batch: &Batch, tree: &Tree) -> bool {
    for error in &batch.errors {
        tracing::warn!(%error, "file watching reported an error; re-indexing to be safe");
    }
    // the kernel dropped events: anything may have changed
    batch.dropped
        || !batch.errors.is_empty()
        // a folder deleted or moved away takes its files with it
        || !batch.vanished_folders.is_empty()
        || {
            let ignored = top_ignores(&tree.root);
            batch
                .events
                .iter()
                .any(|event| matters(event, tree, &ignored))
        }
}

/// A change matters when it is a file the graph reads (any file git would
/// track: the graph parses some, search reads the rest as text), a Rust
/// manifest, a folder (one moved or copied in whole: its files' own events
/// may come before the watch on it does) or a `.gitignore`, that the
/// repository's tree holds (an event about `.git` or the state folder
/// itself comes from the watch on their parent); a folder that went is in
/// the batch's `vanished_folders`. Opening or reading a path never reaches
/// here (`watching` drops it: indexing opens every folder it walks). Hidden
/// files (the hub's temporary files, an editor's swap files), editors'
/// backups and what the repository's top `.gitignore` ignores (a build's
/// output) do not matter: they would re-index on every save and build.
fn matters(event: &Event, tree: &Tree, ignored: &Gitignore) -> bool {
    event
        .paths
        .iter()
        .any(|path| path_matters(path, tree, ignored))
}

fn path_matters(path: &Path, tree: &Tree, ignored: &Gitignore) -> bool {
    let Some(relative) = path
        .strip_prefix(&tree.root)
        .ok()
        .filter(|_| tree.holds(path))
    else {
        return false;
    };
    let name = path.to_string_lossy();
    if name.ends_with(".gitignore") {
        return true;
    }
    let hidden = relative
        .components()
        .any(|part| part.as_os_str().to_string_lossy().starts_with('.'));
    let backup = name.ends_with('~') || name.ends_with(".swp") || name.ends_with(".swx");
    let is_dir = path.is_dir();
    let parsed = Language::of(&name).is_some();
    !hidden
        && !backup
        && (parsed
            || !ignored
                .matched_path_or_any_parents(relative, is_dir)
                .is_ignore())
}

/// What the repository's top `.gitignore` ignores (nothing when it has none
/// or it cannot be read: then every change is looked at).
fn top_ignores(root: &Path) -> Gitignore {
    let (ignores, error) = Gitignore::new(root.join(".gitignore"));
    if let Some(error) = error.filter(|_| root.join(".gitignore").exists()) {
        tracing::debug!(%error, "the repository's .gitignore is read in part");
    }
    ignores
}

/// One watcher run of the index tool; whatever happens, the graph is no
/// longer pending afterwards. Answers how it ended.
fn reindex(hub: &Hub) -> Result<(), ErrorBody> {
    let _pending = PendingWhile::start(&hub.state().pending);
    let outcome = hub.call_named_here(
        super::tools::GraphIndex::SPEC.name,
        serde_json::json!({}),
        Source::Watcher,
        &Unwatched,
    );
    match &outcome {
        Ok(answer) => {
            let changed = |key: &str| answer.data[key].as_u64().unwrap_or(0);
            if changed("parsed") + changed("removed") > 0 {
                tracing::info!(
                    parsed = changed("parsed"),
                    removed = changed("removed"),
                    ms = changed("milliseconds"),
                    "graph updated"
                );
            }
        }
        Err(error) if error.code == Code::E_MODULE_DISABLED => {}
        Err(error) => tracing::warn!(
            code = error.code.as_str(),
            error_id = error.error_id.as_deref().unwrap_or(""),
            "re-indexing the graph failed: {}",
            error.message
        ),
    }
    outcome.map(|_| ())
}

/// Marks the graph pending while it lives, even when the run panics.
struct PendingWhile<'a>(&'a Pending);

impl<'a> PendingWhile<'a> {
    fn start(pending: &'a Pending) -> PendingWhile<'a> {
        pending.set(PENDING, true);
        PendingWhile(pending)
    }
}

impl Drop for PendingWhile<'_> {
    fn drop(&mut self) {
        self.0.set(PENDING, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batches a real watcher on `root` delivers within `wait`.
    fn batches_after(
        root: &Path,
        act: impl FnOnce(),
        wait: Duration,
        until_relevant: bool,
    ) -> Vec<Batch> {
        let tree = repository_tree(root, &root.join(".cos"));
        let mut kernel = watch_repository(&tree).unwrap();
        act();
        let deadline = Instant::now() + wait;
        let mut batches = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match kernel.next_batch(left, Duration::from_millis(50)) {
                Heard::Batch(batch) => {
                    let done = until_relevant && relevant(&batch, &tree);
                    batches.push(batch);
                    if done {
                        break;
                    }
                }
                Heard::Nothing | Heard::Ended => break,
            }
        }
        batches
    }

    /// Whether the watcher re-indexes after `act`, within 10 s.
    fn re_indexes_after(root: &Path, act: impl FnOnce()) -> bool {
        batches_after(root, act, Duration::from_secs(10), true)
            .iter()
            .any(|batch| relevant(batch, &repository_tree(root, &root.join(".cos"))))
    }

    /// A fresh repository (its real path, as the kernel reports it) with
    /// `folders` made in it, and its watched tree.
    fn repository_with(folders: &[&str]) -> (tempfile::TempDir, std::path::PathBuf, Tree) {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path().canonicalize().unwrap();
        for folder in folders {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        let tree = repository_tree(&root, &root.join(".cos"));
        (repo, root, tree)
    }

    #[test]
    fn reading_the_tree_is_not_a_change_but_writing_a_source_file_is() {
        let (_repo, root, tree) = repository_with(&["pkg/sub"]);
        std::fs::write(root.join("pkg/sub/m.py"), "def f(): pass\n").unwrap();
        // what an index run does: list every folder and read the files
        let read = batches_after(
            &root,
            || {
                for folder in ["", "pkg", "pkg/sub"] {
                    let _ = std::fs::read_dir(root.join(folder)).unwrap().count();
                }
                std::fs::read(root.join("pkg/sub/m.py")).unwrap();
            },
            Duration::from_millis(600),
            false,
        );
        assert!(
            !read.iter().any(|batch| relevant(batch, &tree)),
            "reading re-indexes: {read:?}"
        );
        assert!(re_indexes_after(&root, || std::fs::write(
            root.join("pkg/sub/m.py"),
            "def g(): pass\n"
        )
        .unwrap()));
    }

    #[test]
    fn a_temporary_file_renamed_away_is_not_a_change_but_a_folder_deleted_is() {
        let (_repo, root, tree) = repository_with(&["docs", "pkg/sub"]);
        // what a document's durable write (or an editor's save) does
        let saved = batches_after(
            &root,
            || {
                let temp = root.join("docs/.guide.md.7.cos-tmp");
                std::fs::write(&temp, "notes").unwrap();
                std::fs::rename(&temp, root.join("docs/.notes")).unwrap();
            },
            Duration::from_millis(600),
            false,
        );
        assert!(!saved.is_empty(), "the save was heard");
        assert!(
            !saved.iter().any(|batch| relevant(batch, &tree)),
            "a temporary file that went re-indexes: {saved:?}"
        );
        assert!(re_indexes_after(&root, || std::fs::remove_dir_all(
            root.join("pkg/sub")
        )
        .unwrap()));
    }

    #[test]
    fn files_folders_and_ignore_rules_the_tree_holds_matter_and_hidden_or_ignored_files_do_not() {
        let (repo, root, tree) = repository_with(&["pkg", "target/debug"]);
        std::fs::write(root.join(".gitignore"), "/target\n*.log\n").unwrap();
        let ignored = top_ignores(&root);
        for path in [
            "pkg/m.py",
            "Cargo.toml",
            ".gitignore",
            "pkg",
            "notes.txt",
            "pkg/Dockerfile",
        ] {
            assert!(path_matters(&root.join(path), &tree, &ignored), "{path}");
        }
        for path in [
            "pkg/.m.py.swp",
            "pkg/m.py~",
            "pkg/.guide.md.1.cos-tmp",
            "target/debug/build.rs.d",
            "pkg/run.log",
        ] {
            assert!(!path_matters(&root.join(path), &tree, &ignored), "{path}");
        }
        // `.git` and the state folder as entries of the root, and what is in them
        for path in [".git", ".git/hooks/x.py", ".cos", ".cos/cos.db"] {
            assert!(!path_matters(&root.join(path), &tree, &ignored), "{path}");
        }
        assert!(!path_matters(
            &repo.path().with_extension("elsewhere").join("m.py"),
            &tree,
            &ignored
        ));
    }

    #[test]
    fn a_repository_that_cannot_be_watched_is_indexed_and_then_polled() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(
            repo.path().join("first.py"),
            "def first_handler():\n    pass\n",
        )
        .unwrap();
        let hub = crate::hub::on_repo_for_tests(repo.path());
        let stop = Arc::new(AtomicBool::new(false));
        let polling = {
            let (hub, stop) = (hub.clone(), stop.clone());
            std::thread::spawn(move || poll(&hub, &stop, Duration::from_millis(50)))
        };
        let indexed_within = |name: &str, wait: Duration| {
            let deadline = Instant::now() + wait;
            while Instant::now() < deadline {
                let answer = hub.call_named_here(
                    "cos_graph_search",
                    serde_json::json!({"query": name}),
                    Source::Cli,
                    &Unwatched,
                );
                let found = answer.is_ok_and(|answer| {
                    answer.data["results"]
                        .as_array()
                        .is_some_and(|hits| hits.iter().any(|hit| hit["label"] == name))
                });
                if found {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            false
        };
        assert!(
            indexed_within("first_handler", Duration::from_secs(10)),
            "indexed at once"
        );
        std::fs::write(
            repo.path().join("second.py"),
            "def second_handler():\n    pass\n",
        )
        .unwrap();
        assert!(
            indexed_within("second_handler", Duration::from_secs(10)),
            "a later file"
        );
        stop.store(true, Ordering::Relaxed);
        polling.join().unwrap();
    }
}
