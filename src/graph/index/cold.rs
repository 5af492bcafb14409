//! A cold index: every file written from nothing, in parts of a few dozen
//! files a transaction when the repository is large, so other writers get
//! their turn between parts; then links and references resolved whole.

use super::*;

/// How a cold index holds the database's one write lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Commits {
    /// One transaction: readers keep the complete graph of the old rules
    /// until the new one is whole.
    Once,
    /// A transaction for each batch of files and each closing stage, so
    /// that other writers (a patched document, a moved task) get their turn
    /// between them instead of waiting out the whole run (seconds on a large
    /// repository, past their wait for the lock). Only for a graph never
    /// completed (no rules recorded): there is no whole graph to hide
    /// meanwhile, and the rules, recorded last, tell a run after a crash to
    /// start over.
    InParts,
}

/// Files written in one transaction at most, when committing in parts.
pub(super) const FILES_PER_PART: usize = 64;

/// A first index, or one under new rules: files are written while the
/// others are still being parsed (a bounded channel keeps memory flat), then
/// everything is resolved once.
pub(super) fn cold_index(
    store: &Store,
    root: &Path,
    candidates: &[(String, Language)],
    libraries: &Libraries,
    rules: &str,
    commits: Commits,
    on_file: &(dyn Fn() + Sync),
) -> Result<IndexSummary, StoreError> {
    let nothing_known = HashMap::new();
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Seen>(64);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            candidates
                .par_iter()
                .for_each_with(sender, |sender, (path, language)| {
                    let outcome = read_and_parse(root, path, *language, libraries, &nothing_known);
                    on_file();
                    // fails only once the writer gave up; its error is what the caller sees
                    let _ = sender.send(outcome);
                });
        });
        // the receiver is moved into the writing side, so a failed write
        // hangs up and the parsers stop waiting
        match commits {
            Commits::Once => cold_index_at_once(store, receiver, rules),
            Commits::InParts => cold_index_in_parts(store, receiver, rules),
        }
    })
}

pub(super) fn cold_index_at_once(
    store: &Store,
    receiver: std::sync::mpsc::Receiver<Seen>,
    rules: &str,
) -> Result<IndexSummary, StoreError> {
    store.write(move |tx| -> Result<IndexSummary, StoreError> {
        let receiver = receiver;
        let mut tally = Tally::default();
        let mut run = || -> rusqlite::Result<()> {
            let mut stages = Stages::start();
            let deferred = start_over(tx)?;
            let mut references = Vec::new();
            for outcome in receiver.iter() {
                if let Some(parsed) = tally.add(outcome) {
                    write_file(tx, &parsed, Some(&mut references))?;
                }
            }
            stages.lap("parse and write files");
            link_and_resolve(tx, &tally, references, &mut stages)?;
            build_deferred_indexes(tx, &deferred)?;
            stages.lap("build indexes");
            index_new_nodes(tx)?;
            stages.lap("full-text index");
            complete(tx, rules)
        };
        run().map_err(|error| StoreError::on(tx, error))?;
        Ok(tally.summary)
    })
}

pub(super) fn cold_index_in_parts(
    store: &Store,
    receiver: std::sync::mpsc::Receiver<Seen>,
    rules: &str,
) -> Result<IndexSummary, StoreError> {
    // one connection throughout: the tracking of new nodes lives on it
    let writer = store.writer()?;
    let written = write_in_parts(&writer, receiver, rules);
    // the connection goes back to the pool: no trigger of this run stays on it
    let stopped = writer.write(|tx| stop_tracking_new_nodes(tx).map_err(|e| StoreError::on(tx, e)));
    if let Err(error) = stopped {
        tracing::warn!(%error, "a pooled connection keeps tracking new graph nodes");
    }
    written
}

pub(super) fn write_in_parts(
    writer: &Writer,
    receiver: std::sync::mpsc::Receiver<Seen>,
    rules: &str,
) -> Result<IndexSummary, StoreError> {
    let mut stages = Stages::start();
    let deferred = in_part(writer, start_over)?;
    let mut tally = Tally::default();
    let mut references = Vec::new();
    // waits for the parsers outside any transaction, then writes what is ready
    while let Ok(first) = receiver.recv() {
        let batch: Vec<Seen> = std::iter::once(first)
            .chain(receiver.try_iter().take(FILES_PER_PART - 1))
            .collect();
        in_part(writer, |tx| {
            for outcome in batch {
                if let Some(parsed) = tally.add(outcome) {
                    write_file(tx, &parsed, Some(&mut references))?;
                }
            }
            Ok(())
        })?;
    }
    stages.lap("parse and write files");
    in_part(writer, |tx| {
        link_and_resolve(tx, &tally, references, &mut stages)
    })?;
    in_part(writer, |tx| build_deferred_indexes(tx, &deferred))?;
    stages.lap("build indexes");
    in_part(writer, |tx| complete(tx, rules))?;
    Ok(tally.summary)
}

/// Runs `part` in a transaction of its own on `writer`, the nodes it
/// inserted taken into the full-text index in the same transaction (a run
/// after a crash deletes them, and the delete trigger expects them there),
/// then lets a writer waiting for the lock in.
pub(super) fn in_part<T>(
    writer: &Writer,
    part: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> Result<T, StoreError> {
    writer.write_in_turn(|tx| {
        part(tx)
            .and_then(|value| take_new_nodes_into_fts(tx).map(|()| value))
            .map_err(|error| StoreError::on(tx, error))
    })
}

/// Clears the graph and its rules (a run that stops before `complete` leaves
/// none, so the next one starts over), and drops the bulk tables' secondary
/// indexes for `build_deferred_indexes`: their statements, which it answers.
pub(super) fn start_over(tx: &Connection) -> rusqlite::Result<Vec<Deferred>> {
    // a run that stopped midway dropped them: deleting needs them back
    let dropped_before = deferred_indexes(tx)?;
    build_deferred_indexes(tx, &dropped_before)?;
    // no files means no nodes but folders and externals, or else a graph
    // built under other rules: clear it all while the indexes that make
    // deleting cheap are still there
    tx.execute("DELETE FROM graph_nodes", [])?;
    tx.execute("DELETE FROM graph_files", [])?;
    tx.execute("DELETE FROM graph_meta WHERE key = 'rules'", [])?;
    track_new_nodes(tx)?;
    defer_indexes(tx)
}

/// Folders, files hung under them, and every reference resolved.
pub(super) fn link_and_resolve(
    tx: &Connection,
    tally: &Tally,
    references: Vec<Reference>,
    stages: &mut Stages,
) -> rusqlite::Result<()> {
    FolderChanges::between(tx, &tally.present)?.apply(tx)?;
    link_files(tx, tally.present.iter().map(String::as_str))?;
    stages.lap("folders");
    // the graph was empty: no resolver edges or external nodes to clear
    resolve::resolve(tx, references, Reach::Everything)?;
    stages.lap("resolve");
    link_overrides(tx, Touched::All)?;
    stages.lap("overrides");
    resolution::recount_all(tx)?;
    stages.lap("count what resolved");
    Ok(())
}

/// Records the rules the graph was built under: the graph is whole.
pub(super) fn complete(tx: &Connection, rules: &str) -> rusqlite::Result<()> {
    set_meta(tx, "rules", rules)?;
    bump_revision(tx)
}
