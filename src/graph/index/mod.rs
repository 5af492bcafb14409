//! Indexing: walk the repository the way git sees it, parse what changed on all
//! cores, write each file's nodes, edges and references in one transaction,
//! then resolve references across files.
//!
//! Here: the run itself (`index`), what it reports, and its stages; beside
//! it `walk.rs` (finding and parsing files), `write.rs` (one file's rows),
//! `cold.rs` (indexing from nothing), `incremental.rs` (only what changed),
//! `deferred.rs` (indexes built after bulk writes), `meta.rs` (the graph's
//! bookkeeping and revision), `resolution.rs` (what resolution found and
//! missed), `overrides.rs` (base methods to their overrides) and `lock.rs`
//! (one run at a time).

mod cold;
mod deferred;
mod incremental;
mod lock;
mod meta;
mod overrides;
mod resolution;
mod walk;
mod write;

use rayon::prelude::*;
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use utoipa::ToSchema;

use super::crates::Libraries;
use super::extract::{self, Extraction, Language};
use super::left_out::{self, MAX_FILE_BYTES};
use super::resolve::{self, Reach, Reference};
use super::text_languages;
use crate::store::{Store, StoreError, Writer};
use cold::*;
use deferred::*;
use incremental::*;
use lock::*;
use meta::*;
pub use meta::{LeftOutNow, bump_revision, languages_now, left_out_now, revision, updated_at};
use overrides::*;
pub use resolution::{Resolution, resolution_now};
use walk::*;
use write::*;

/// The version of the rules that turn files into the graph. An update re-extracts
/// only changed files and re-resolves only what they touch, so a graph built by a
/// cos whose extraction or resolution rules differ keeps their old results until
/// rebuilt: bump this with every such change, and the first run of the new build
/// indexes from scratch.
pub const GRAPH_RULES: &str = "2026-12-08.2";

/// What an index run did.
#[derive(Debug, Default, Clone, Serialize, Deserialize, ToSchema)]
pub struct IndexSummary {
    /// Source files the graph covers after the run.
    pub files: u64,
    /// Files parsed because they were new or changed.
    pub parsed: u64,
    pub unchanged: u64,
    pub removed: u64,
    /// Left out as binary, minified JavaScript, larger than 1 MiB or unreadable.
    pub skipped: u64,
    /// Which files were left out and why, in path order: the first 20.
    pub left_out: Vec<LeftOut>,
    /// How many of the left out files each reason left out.
    pub left_out_by_reason: BTreeMap<String, u64>,
    /// The files the graph covers by language (`text` for those no language
    /// claims): how many, and their bytes. Every one is searched as code
    /// text but Markdown, which is searched by section as documents.
    pub languages: BTreeMap<String, FilesAndBytes>,
    /// By language: calls_resolved, calls_unresolved, imports_resolved,
    /// imports_unresolved.
    #[schema(value_type = Object)]
    pub resolution: BTreeMap<String, Resolution>,
    /// Files with syntax errors tree-sitter recovered from.
    pub files_with_parse_errors: u64,
    pub nodes_by_kind: BTreeMap<String, u64>,
    pub edges_by_kind: BTreeMap<String, u64>,
    pub milliseconds: u64,
}

/// A file the graph leaves out although git tracks it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
pub struct LeftOut {
    pub path: String,
    /// binary, minified, larger than 1 MiB, or unreadable.
    pub why: String,
}

/// How many files of one language the graph covers, and their size.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct FilesAndBytes {
    pub files: u64,
    pub bytes: u64,
}

/// Files named in a summary's `left_out` at most; `skipped` counts them all.
const LEFT_OUT_NAMED: usize = 20;

struct Parsed {
    path: String,
    language: Language,
    /// The file's language as search's `lang:` names it.
    facet: &'static str,
    hash: String,
    bytes: u64,
    modified_ns: Option<i64>,
    extraction: Extraction,
}

/// What the graph holds about a file since it was last indexed.
struct Known {
    hash: String,
    bytes: u64,
    modified_ns: Option<i64>,
}

enum Seen {
    Unchanged(String),
    /// Same content with a new modification time (to record, not to re-extract).
    Touched(String, Option<i64>),
    Changed(Box<Parsed>),
    Skipped(LeftOut),
}

/// Indexes `root` into `store`; `on_file` is called once per candidate file (for progress).
///
/// Runs on one database take turns, in a process (the watcher's and a
/// caller's, say) and across processes: what a run finds changed is read
/// once it has its turn, so the second finds the first one's work done
/// instead of writing it again (two first indexes at once failed on the
/// files the other had written).
pub fn index(
    store: &Store,
    root: &Path,
    on_candidates: &dyn Fn(u64),
    on_file: &(dyn Fn() + Sync),
) -> Result<IndexSummary, StoreError> {
    let turn = turn_for(store.path());
    let _turn = turn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let _across_processes = lock_across_processes(store.path());
    let started = Instant::now();
    let (candidates, manifests) = walk(root);
    on_candidates(candidates.len() as u64);
    let libraries = Libraries::read(root, &manifests);
    let rules_now = format!("{GRAPH_RULES}; libraries {}", libraries.fingerprint());
    let (known, rules): (HashMap<String, Known>, Option<String>) = store.read(|c| {
        let rules = meta(c, "rules")?;
        let mut statement = c.prepare("SELECT path, hash, bytes, modified_ns FROM graph_files")?;
        let rows = statement.query_map([], |row| {
            Ok((
                row.get(0)?,
                Known {
                    hash: row.get(1)?,
                    bytes: row.get::<_, i64>(2)? as u64,
                    modified_ns: row.get(3)?,
                },
            ))
        })?;
        Ok((rows.collect::<rusqlite::Result<_>>()?, rules))
    })?;
    let same_rules = rules.as_deref() == Some(rules_now.as_str());
    if !known.is_empty() && !same_rules {
        tracing::info!(
            built_by = rules.as_deref().unwrap_or("an earlier cos"),
            now = rules_now,
            "the graph was built under other rules: indexing from scratch"
        );
    }
    let mut summary = if known.is_empty() || !same_rules {
        let commits = match rules {
            Some(_) => Commits::Once,
            None => Commits::InParts,
        };
        cold_index(
            store,
            root,
            &candidates,
            &libraries,
            &rules_now,
            commits,
            on_file,
        )?
    } else {
        update_index(store, root, &candidates, &libraries, &known, on_file)?
    };
    let mut stages = Stages::start();
    let (left_out_kept, languages_kept, resolution_kept) = store.read(|c| {
        summary.files = c.query_row("SELECT count(*) FROM graph_files", [], |r| {
            r.get::<_, i64>(0)
        })? as u64;
        summary.files_with_parse_errors = c.query_row(
            "SELECT count(*) FROM graph_files WHERE parse_errors > 0",
            [],
            |r| r.get::<_, i64>(0),
        )? as u64;
        summary.languages = files_by_language(c)?;
        summary.resolution = resolution::by_language(c)?;
        summary.nodes_by_kind = kinds_counted(c, "SELECT kind FROM graph_nodes")?;
        summary.edges_by_kind = kinds_counted(c, "SELECT kind FROM graph_edges")?;
        Ok::<_, rusqlite::Error>((left_out_now(c)?, languages_now(c)?, resolution_now(c)?))
    })?;
    stages.lap("summary counts");
    summary.left_out.sort();
    for file in &summary.left_out {
        *summary
            .left_out_by_reason
            .entry(file.why.clone())
            .or_default() += 1;
    }
    summary.left_out.truncate(LEFT_OUT_NAMED);
    let left_out_now = LeftOutNow {
        count: summary.skipped,
        by_reason: summary.left_out_by_reason.clone(),
        first: summary.left_out.clone(),
    };
    // searches that find nothing say what was left out, and health what
    // is searchable; a run that changed nothing writes nothing
    if left_out_now != left_out_kept {
        keep_meta_json(store, "left_out", &left_out_now)?;
    }
    if summary.languages != languages_kept {
        keep_meta_json(store, "languages", &summary.languages)?;
    }
    if summary.resolution != resolution_kept {
        keep_meta_json(store, "resolution", &summary.resolution)?;
    }
    summary.milliseconds = started.elapsed().as_millis() as u64;
    Ok(summary)
}

/// What the files of a run came to: counts, and the paths still in the repository.
#[derive(Default)]
struct Tally {
    summary: IndexSummary,
    present: BTreeSet<String>,
    touched: Vec<(String, Option<i64>)>,
}

impl Tally {
    /// Counts one file; a parsed one is handed back to be written.
    fn add(&mut self, outcome: Seen) -> Option<Parsed> {
        match outcome {
            Seen::Unchanged(path) => {
                self.summary.unchanged += 1;
                self.present.insert(path);
                None
            }
            Seen::Touched(path, modified_ns) => {
                self.summary.unchanged += 1;
                self.present.insert(path.clone());
                self.touched.push((path, modified_ns));
                None
            }
            Seen::Changed(parsed) => {
                self.summary.parsed += 1;
                self.present.insert(parsed.path.clone());
                Some(*parsed)
            }
            Seen::Skipped(left_out) => {
                self.summary.skipped += 1;
                self.summary.left_out.push(left_out);
                None
            }
        }
    }
}

/// Logs how long each stage of a run took (`RUST_LOG=cos_hub::graph=debug`).
struct Stages(Instant);

impl Stages {
    fn start() -> Stages {
        Stages(Instant::now())
    }

    fn lap(&mut self, stage: &str) {
        let now = Instant::now();
        tracing::debug!(
            stage,
            ms = (now - self.0).as_secs_f64() * 1000.0,
            "index stage"
        );
        self.0 = now;
    }
}

/// The files the graph covers and their bytes, by language.
fn files_by_language(c: &Connection) -> rusqlite::Result<BTreeMap<String, FilesAndBytes>> {
    let mut statement = c.prepare_cached(
        "SELECT language, count(*), sum(bytes) FROM graph_files GROUP BY language",
    )?;
    let rows = statement.query_map([], |row| {
        Ok((
            row.get::<_, String>(0)?,
            FilesAndBytes {
                files: row.get::<_, i64>(1)? as u64,
                bytes: row.get::<_, Option<i64>>(2)?.unwrap_or(0) as u64,
            },
        ))
    })?;
    rows.collect()
}

/// How many rows `sql` yields per kind. Counted here rather than with GROUP BY,
/// which sorts every row in a temporary b-tree: over Django's 132,000 edges the
/// sort took 25 ms of a 100 ms one-file re-index.
fn kinds_counted(connection: &Connection, sql: &str) -> rusqlite::Result<BTreeMap<String, u64>> {
    let mut statement = connection.prepare(sql)?;
    let mut rows = statement.query([])?;
    // a dozen kinds at most: a short list beats hashing every row's text
    let mut tally: Vec<(String, u64)> = Vec::new();
    while let Some(row) = rows.next()? {
        let kind = row.get_ref(0)?.as_str()?;
        match tally.iter_mut().find(|(known, _)| known == kind) {
            Some((_, count)) => *count += 1,
            None => tally.push((kind.to_string(), 1)),
        }
    }
    Ok(tally.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_counted_like_group_by() {
        let connection = Connection::open_in_memory().unwrap();
        connection
            .execute_batch(
                "CREATE TABLE things(kind TEXT NOT NULL);
                 INSERT INTO things VALUES ('calls'), ('imports'), ('calls'), ('contains'), ('calls'), ('imports');",
            )
            .unwrap();
        let grouped: BTreeMap<String, u64> = connection
            .prepare("SELECT kind, count(*) FROM things GROUP BY kind")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get::<_, i64>(1)? as u64)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let counted = kinds_counted(&connection, "SELECT kind FROM things").unwrap();
        assert_eq!(counted, grouped);
        assert_eq!(counted["calls"], 3);
    }

    fn python_repo(files: usize) -> tempfile::TempDir {
        let repo = tempfile::tempdir().unwrap();
        for n in 0..files {
            std::fs::write(
                repo.path().join(format!("module_{n}.py")),
                format!("def handler_{n}():\n    return helper_{}()\n\ndef helper_{n}():\n    return {n}\n", (n + 1) % files),
            )
            .unwrap();
        }
        repo
    }

    fn count(store: &Store, sql: &str) -> i64 {
        store
            .read(|c| c.query_row(sql, [], |row| row.get(0)))
            .unwrap()
    }

    const DEFERRABLE: &str = "SELECT count(*) FROM sqlite_master
         WHERE type = 'index' AND sql IS NOT NULL
         AND tbl_name IN ('graph_nodes', 'graph_edges', 'graph_references')";

    /// Every node in the full-text index and nothing else (FTS5's own check
    /// against its content table).
    fn full_text_index_agrees(store: &Store) {
        store
            .read(|c| {
                c.execute(
                    "INSERT INTO graph_nodes_fts(graph_nodes_fts, rank) VALUES ('integrity-check', 1)",
                    [],
                )
            })
            .unwrap();
    }

    #[test]
    fn a_first_index_lets_other_writers_in_between_its_parts() {
        const FILES: usize = 300;
        let repo = python_repo(FILES);
        let hub = crate::hub::on_repo_for_tests(repo.path());
        let store = &hub.state().store;
        let parsed = std::sync::atomic::AtomicUsize::new(0);
        let seen_by_the_other_writer = Mutex::new(None);
        // midway, a writer with its own connection (a patched document,
        // say) writes while this parser waits for it: it sees the files
        // committed so far, or, were the run one transaction, waits it out
        let on_file = || {
            // late enough that a part was committed, however many parsers
            // (up to 64) are between parsing a file and handing it over
            if parsed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) != FILES * 2 / 3 {
                return;
            }
            let other = Connection::open(store.path()).unwrap();
            other
                .busy_timeout(std::time::Duration::from_secs(10))
                .unwrap();
            let files_then = other
                .execute_batch("BEGIN IMMEDIATE")
                .and_then(|()| {
                    other.query_row("SELECT count(*) FROM graph_files", [], |r| {
                        r.get::<_, i64>(0)
                    })
                })
                .and_then(|files| {
                    // every node committed so far is in the full-text
                    // index, so a run after a crash here could delete them
                    other
                        .execute_batch(
                            "INSERT INTO graph_nodes_fts(graph_nodes_fts, rank) VALUES ('integrity-check', 1);
                             COMMIT",
                        )
                        .map(|()| files)
                });
            *seen_by_the_other_writer.lock().unwrap() = Some(files_then);
        };
        let summary = index(store, repo.path(), &|_| {}, &on_file).unwrap();
        assert_eq!(summary.files, FILES as u64);
        let files_then = seen_by_the_other_writer.lock().unwrap().take();
        let files_then = files_then
            .expect("the other writer ran")
            .expect("the other writer got its turn");
        assert!(
            files_then > 0 && files_then < FILES as i64,
            "the other writer saw {files_then} of {FILES} files: not between two parts"
        );
        // the graph is whole all the same
        assert_eq!(
            count(store, "SELECT count(*) FROM graph_meta WHERE key = 'rules'"),
            1
        );
        assert!(count(store, DEFERRABLE) > 0);
        assert_eq!(
            count(
                store,
                "SELECT count(*) FROM graph_meta WHERE key = 'deferred_indexes'"
            ),
            0
        );
        full_text_index_agrees(store);
    }

    #[test]
    fn a_first_index_that_stopped_midway_is_done_over_by_the_next() {
        let repo = python_repo(40);
        let hub = crate::hub::on_repo_for_tests(repo.path());
        let store = &hub.state().store;
        let indexes = count(store, DEFERRABLE);
        assert!(indexes > 0);
        // what a run committing in parts leaves when it stops after a few:
        // the graph cleared, its indexes dropped, some files written
        let (candidates, manifests) = walk(repo.path());
        let libraries = Libraries::read(repo.path(), &manifests);
        store
            .write(|tx| -> Result<(), StoreError> {
                let run = || -> rusqlite::Result<()> {
                    start_over(tx)?;
                    for (path, language) in candidates.iter().take(10) {
                        if let Seen::Changed(parsed) = read_and_parse(
                            repo.path(),
                            path,
                            *language,
                            &libraries,
                            &HashMap::new(),
                        ) {
                            write_file(tx, &parsed, None)?;
                        }
                    }
                    take_new_nodes_into_fts(tx)?;
                    stop_tracking_new_nodes(tx)
                };
                run().map_err(|error| StoreError::on(tx, error))
            })
            .unwrap();
        assert_eq!(count(store, DEFERRABLE), 0);
        assert_eq!(count(store, "SELECT count(*) FROM graph_files"), 10);
        assert_eq!(
            count(store, "SELECT count(*) FROM graph_meta WHERE key = 'rules'"),
            0
        );

        let summary = index(store, repo.path(), &|_| {}, &|| {}).unwrap();
        assert_eq!((summary.files, summary.parsed), (40, 40), "not done over");
        assert_eq!(
            count(store, DEFERRABLE),
            indexes,
            "the dropped indexes are not back"
        );
        assert_eq!(
            count(
                store,
                "SELECT count(*) FROM graph_meta WHERE key = 'deferred_indexes'"
            ),
            0
        );
        full_text_index_agrees(store);
        // the same graph as a first index that ran through
        let elsewhere = python_repo(40);
        let fresh_hub = crate::hub::on_repo_for_tests(elsewhere.path());
        let fresh = &fresh_hub.state().store;
        index(fresh, repo.path(), &|_| {}, &|| {}).unwrap();
        let uids = |store: &Store| -> Vec<String> {
            store
                .read(|c| {
                    let mut statement = c.prepare("SELECT uid FROM graph_nodes ORDER BY uid")?;
                    let rows = statement.query_map([], |row| row.get(0))?;
                    rows.collect()
                })
                .unwrap()
        };
        assert_eq!(uids(store), uids(fresh));
        let edges = "SELECT count(*) FROM graph_edges";
        assert_eq!(count(store, edges), count(fresh, edges));
        // a run under other rules replaces the graph in one transaction
        store
            .write(|tx| {
                tx.execute(
                    "UPDATE graph_meta SET value = 'older rules' WHERE key = 'rules'",
                    [],
                )
                .map_err(|error| StoreError::on(tx, error))
            })
            .unwrap();
        index(store, repo.path(), &|_| {}, &|| {}).unwrap();
        assert_eq!(uids(store), uids(fresh));
        assert_eq!(count(store, DEFERRABLE), indexes);
        full_text_index_agrees(store);
    }

    #[test]
    fn index_runs_that_overlap_in_one_process_both_succeed() {
        use crate::tools::{Source, Unwatched};
        let repo = tempfile::tempdir().unwrap();
        for n in 0..200 {
            std::fs::write(
                repo.path().join(format!("module_{n}.py")),
                format!("def handler_{n}():\n    return {n}\n"),
            )
            .unwrap();
        }
        let hub = crate::hub::on_repo_for_tests(repo.path());
        // a watcher's first run and an agent's call, say, both on a new graph
        let outcomes: Vec<_> = std::thread::scope(|scope| {
            let runs: Vec<_> = (0..2)
                .map(|_| {
                    scope.spawn(|| {
                        hub.call_named_here(
                            "cos_graph_index",
                            serde_json::json!({}),
                            Source::Cli,
                            &Unwatched,
                        )
                        .map(|answer| answer.data["files"].clone())
                    })
                })
                .collect();
            runs.into_iter().map(|run| run.join().unwrap()).collect()
        });
        for outcome in outcomes {
            assert_eq!(outcome.unwrap(), 200);
        }
    }
}
