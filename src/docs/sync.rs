//! Keeping the hub's record equal to the files: finishing writes whose file
//! was not yet in place (after a crash, or while another caller is between
//! its commit and its rename), and recording edits made outside the hub as
//! revisions with source `external`, so a write based on what the hub knew
//! before is refused as stale instead of clobbering the edit.

use std::collections::BTreeMap;

use super::chain::content_hash;
use super::disk::{MountDir, Stat, TEMP_SUFFIX};
use super::model::{DocHistoryEntry, ReceiptState};
use super::mounts::Mount;
use super::paths::{self, DocPath};
use super::records::{self, DocRow, Publishing};
use crate::store::Store;
use crate::tools::{ToolError, now};

/// A document as it is now: its row (live ones only) and its bytes.
#[derive(Debug, Default)]
pub struct Current {
    pub row: Option<DocRow>,
    /// The row as recorded, a deleted one too (its revisions continue).
    pub recorded: Option<DocRow>,
    pub bytes: Option<Vec<u8>>,
    /// The file's stat when it was read, to notice a save right before a write.
    pub stat: Option<Stat>,
}

/// Whether a publication's effect is in place.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// The files no longer say whether it happened (changed outside meanwhile).
    Unknown(String),
}

/// Puts a committed write's file in place (idempotent: whoever comes first
/// does it), then forgets the publication; answers what the record now says.
pub fn finish(
    store: &Store,
    dir: &MountDir,
    publishing: &Publishing,
) -> Result<Outcome, ToolError> {
    if let Some(temp) = &publishing.temp {
        // its writer may still be syncing it, or a crash may have torn it
        dir.settle_temp(temp, &publishing.hash, || {
            let stored = store.view(|c| records::content(c, &publishing.hash))?;
            Ok(stored.map(|(bytes, _)| bytes))
        })?;
    }
    let outcome = put_in_place(dir, publishing)?;
    forget(store, publishing, outcome)
}

/// Removes a publication's redo record. An unknown outcome marks its
/// receipt, unless someone else finished the publication meanwhile: then the
/// file holding other content only means a later write followed, and their
/// verdict (in the receipt) stands.
pub fn forget(
    store: &Store,
    publishing: &Publishing,
    outcome: Outcome,
) -> Result<Outcome, ToolError> {
    let group = super::group::committer(store);
    store.write(|tx| -> Result<Outcome, ToolError> {
        let pending = records::publishing_of(tx, &publishing.request_id)?.is_some()
            && !group.is_published(&publishing.request_id);
        records::remove_publishing(tx, &publishing.request_id)?;
        match outcome {
            Outcome::Unknown(why) if pending => {
                mark_unknown(tx, &publishing.request_id, &why)?;
                Ok(Outcome::Unknown(why))
            }
            Outcome::Unknown(why) => match records::receipt(tx, &publishing.request_id)? {
                Some((_, state, _)) if state == "unknown" => Ok(Outcome::Unknown(why)),
                _ => Ok(Outcome::Done),
            },
            Outcome::Done => Ok(Outcome::Done),
        }
    })
}

/// The file side of finishing a publication: rename, remove or move.
pub fn put_in_place(dir: &MountDir, publishing: &Publishing) -> Result<Outcome, ToolError> {
    let target = DocPath::trusted(&publishing.path);
    let outcome = match (&publishing.temp, &publishing.from_path) {
        (Some(temp), _) => {
            if dir.publish(temp, &target)? {
                Outcome::Done
            } else {
                match dir.read(&target)? {
                    Some((bytes, _)) if content_hash(&bytes) == publishing.hash => Outcome::Done,
                    _ => Outcome::Unknown(
                        "its temporary file is gone and the document holds other content".into(),
                    ),
                }
            }
        }
        (None, Some(from)) => {
            let from = DocPath::trusted(from);
            let target_hash = dir.read(&target)?.map(|(bytes, _)| content_hash(&bytes));
            let already_moved = target_hash.as_deref() == Some(publishing.hash.as_str())
                && dir.stat(&from)?.is_none();
            if already_moved || (target_hash.is_none() && dir.rename(&from, &target)?) {
                Outcome::Done
            } else {
                Outcome::Unknown(
                    "the files at both ends of the move changed outside the hub".into(),
                )
            }
        }
        (None, None) => match dir.read(&target)? {
            None => Outcome::Done,
            Some((bytes, _)) if content_hash(&bytes) == publishing.hash => {
                dir.remove(&target)?;
                Outcome::Done
            }
            Some(_) => Outcome::Unknown(
                "the document was rewritten outside the hub before it was deleted".into(),
            ),
        },
    };
    Ok(outcome)
}

fn mark_unknown(tx: &rusqlite::Connection, request_id: &str, why: &str) -> Result<(), ToolError> {
    let Some((intent, _, receipt)) = records::receipt(tx, request_id)? else {
        return Ok(());
    };
    let mut receipt: serde_json::Value = serde_json::from_str(&receipt)
        .map_err(|error| ToolError::internal("reading a stored receipt", error))?;
    receipt["state"] = serde_json::json!(ReceiptState::Unknown);
    receipt["advice"] = serde_json::json!(format!(
        "Whether this write is in the file cannot be established: {why}. Re-read the document, or resend the identical write with the same request_id; do not claim success."
    ));
    records::save_receipt(
        tx,
        request_id,
        &intent,
        "unknown",
        &receipt.to_string(),
        &now(),
    )?;
    Ok(())
}

/// Finishes the publications `pending` names that this process has not
/// finished itself; whether there were any (the record then moved on).
pub fn settle(store: &Store, dir: &MountDir, pending: &[Publishing]) -> Result<bool, ToolError> {
    let group = super::group::committer(store);
    let mut finished = false;
    for publishing in pending {
        if !group.is_published(&publishing.request_id) {
            finish(store, dir, publishing)?;
            finished = true;
        }
    }
    Ok(finished)
}

/// What one read of the record saw of a document: its row as recorded
/// (deleted or not) and the unfinished publications touching it.
#[derive(Debug, Default)]
pub struct Look {
    pub recorded: Option<DocRow>,
    pub pending: Vec<Publishing>,
}

/// Reads what [`Look`] holds, inside the caller's read.
pub fn look(
    connection: &rusqlite::Connection,
    mount: &str,
    path: &str,
) -> Result<Look, crate::store::StoreError> {
    Ok(Look {
        pending: records::publishing_for(connection, mount, path)?,
        recorded: records::document(connection, mount, path)?,
    })
}

/// The document as it is on disk now, recording an outside edit first.
pub fn observe(
    store: &Store,
    mount: &Mount,
    dir: Option<&MountDir>,
    path: &DocPath,
) -> Result<Current, ToolError> {
    observe_from(store, mount, dir, path, None)
}

/// Like [`observe`], starting from what a caller's read already saw.
pub fn observe_from(
    store: &Store,
    mount: &Mount,
    dir: Option<&MountDir>,
    path: &DocPath,
    mut seen: Option<Look>,
) -> Result<Current, ToolError> {
    for _ in 0..4 {
        let look_now = || store.view_at_once(|c| look(c, &mount.key, path.as_str()));
        let mut now = match seen.take() {
            Some(seen) => seen,
            None => look_now()?,
        };
        if let Some(dir) = dir
            && settle(store, dir, &now.pending)?
        {
            now = look_now()?;
        }
        let recorded = now.recorded;
        let row = recorded.clone().filter(|row| !row.deleted);
        let disk = match dir {
            Some(dir) => dir.read(path)?,
            None => None,
        };
        let current = match (row, disk) {
            (None, None) => {
                return Ok(Current {
                    recorded,
                    ..Current::default()
                });
            }
            (Some(row), Some((bytes, stat))) if content_hash(bytes.as_slice()) == row.hash => {
                let row = if stat.size != row.size || stat.mtime_ns != row.mtime_ns {
                    store.view(|c| {
                        records::touch_document(
                            c,
                            &mount.key,
                            path.as_str(),
                            stat.size,
                            stat.mtime_ns,
                        )
                    })?;
                    DocRow {
                        size: stat.size,
                        mtime_ns: stat.mtime_ns,
                        ..row
                    }
                } else {
                    row
                };
                return Ok(Current {
                    recorded: Some(row.clone()),
                    row: Some(row),
                    bytes: Some(bytes),
                    stat: Some(stat),
                });
            }
            (row, disk) => (row, disk),
        };
        let (seen_row, disk) = current;
        let recorded = store.write(|tx| -> Result<Option<DocRow>, ToolError> {
            let now_row = records::document(tx, &mount.key, path.as_str())?;
            if now_row.as_ref().filter(|row| !row.deleted) != seen_row.as_ref()
                || !unchanged_since_read(store, tx, mount, dir, path, disk.as_ref())?
            {
                return Ok(None);
            }
            let disk = disk.as_ref().map(|(bytes, stat)| (bytes.as_slice(), *stat));
            record_external(tx, &mount.key, path.as_str(), now_row.as_ref(), disk).map(Some)
        })?;
        if let Some(row) = recorded {
            let live = !row.deleted;
            return Ok(Current {
                row: live.then(|| row.clone()),
                recorded: Some(row),
                stat: disk.as_ref().map(|(_, stat)| *stat),
                bytes: disk.map(|(bytes, _)| bytes),
            });
        }
    }
    Err(ToolError::fail(
        crate::envelope::Category::Transient,
        crate::envelope::Code::E_BUSY,
        format!(
            "{}: the document kept changing while it was read; read again",
            path.as_str()
        ),
    ))
}

/// Whether the file read is still what is there, with no write of the hub's
/// between its commit and its rename: only then does a difference from the
/// record tell of an outside edit. The order matters: a publication seen
/// finished here had its file renamed before, so the stat taken after it
/// shows that file.
fn unchanged_since_read(
    store: &Store,
    tx: &rusqlite::Connection,
    mount: &Mount,
    dir: Option<&MountDir>,
    path: &DocPath,
    read: Option<&(Vec<u8>, Stat)>,
) -> Result<bool, ToolError> {
    if publishing_under_way(store, tx, &mount.key, path.as_str())? {
        return Ok(false);
    }
    let still = match dir {
        Some(dir) => dir.stat(path)?,
        None => None,
    };
    Ok(still == read.map(|(_, stat)| *stat))
}

/// True while a write committed to the record may not have its file in
/// place yet: the file then does not tell of an outside edit.
fn publishing_under_way(
    store: &Store,
    tx: &rusqlite::Connection,
    mount: &str,
    path: &str,
) -> Result<bool, ToolError> {
    let group = super::group::committer(store);
    Ok(records::publishing_for(tx, mount, path)?
        .iter()
        .any(|publishing| !group.is_published(&publishing.request_id)))
}

/// Appends an `external` revision for what is on disk (`None`: the file is gone).
fn record_external(
    tx: &rusqlite::Connection,
    mount: &str,
    path: &str,
    prior: Option<&DocRow>,
    disk: Option<(&[u8], Stat)>,
) -> Result<DocRow, ToolError> {
    let rev = prior.map_or(1, |row| row.rev + 1);
    let (hash, op, stat) = match disk {
        Some((bytes, stat)) => {
            let hash = content_hash(bytes);
            records::save_content(tx, &hash, bytes)?;
            (hash, "external", stat)
        }
        None => (
            String::new(),
            "delete",
            Stat {
                size: 0,
                mtime_ns: 0,
            },
        ),
    };
    let entry = records::append_history(
        tx,
        DocHistoryEntry {
            seq: 0,
            mount: mount.to_string(),
            path: path.to_string(),
            rev,
            hash: hash.clone(),
            op: op.to_string(),
            actor: "disk".to_string(),
            source: "external".to_string(),
            at: now(),
            from_path: None,
            request_id: None,
            prev_hash: String::new(),
            entry_hash: String::new(),
        },
    )?;
    let title = match disk {
        Some((bytes, _)) => {
            let file_name = path.rsplit_once('/').map_or(path, |(_, name)| name);
            super::outlines::warm(&hash, bytes);
            super::sections::title_of(&String::from_utf8_lossy(bytes), file_name)
        }
        None => prior.map(|row| row.title.clone()).unwrap_or_default(),
    };
    let row = DocRow {
        rev,
        hash,
        size: stat.size,
        mtime_ns: stat.mtime_ns,
        deleted: disk.is_none(),
        seq: entry.seq,
        title,
    };
    records::save_document(tx, mount, path, &row)?;
    Ok(row)
}

/// The Markdown files of the mount as git sees them (ignored files, `.git`,
/// the state dir and symlinks left out), with their stat: those in `folder`
/// (relative to the mount, "" for all of it) and beneath it, or `folder`
/// itself when it names a file. A folder reached through a symbolic link is
/// not walked: nothing beyond one is the mount's.
fn walk(mount: &Mount, folder: &str) -> BTreeMap<DocPath, Stat> {
    let mut found = BTreeMap::new();
    let start = if folder.is_empty() {
        mount.root.clone()
    } else {
        mount.root.join(folder)
    };
    let mut beneath = mount.root.clone();
    for part in folder.split('/').filter(|part| !part.is_empty()) {
        beneath.push(part);
        if std::fs::symlink_metadata(&beneath).map_or(true, |meta| meta.file_type().is_symlink()) {
            return found;
        }
    }
    let walker = ignore::WalkBuilder::new(&start)
        .hidden(false)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for entry in walker.filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(&mount.root) else {
            continue;
        };
        let Some(text) = relative.to_str() else {
            continue;
        };
        if text.ends_with(TEMP_SUFFIX) {
            continue;
        }
        let Ok(path) = paths::document("path", text, mount) else {
            continue;
        };
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        use std::os::unix::fs::MetadataExt;
        found.insert(
            path,
            Stat {
                size: i64::try_from(metadata.len()).unwrap_or(i64::MAX),
                mtime_ns: metadata
                    .mtime()
                    .saturating_mul(1_000_000_000)
                    .saturating_add(metadata.mtime_nsec()),
            },
        );
    }
    found
}

/// A changed document: its path, its row as read, and its file (if any).
type Seen = (DocPath, Option<DocRow>, Option<(Vec<u8>, Stat)>);

/// Brings the record of a whole mount up to date with its files; answers how
/// many documents changed outside the hub.
pub fn scan(store: &Store, mount: &Mount, dir: Option<&MountDir>) -> Result<usize, ToolError> {
    scan_within(store, mount, dir, "")
}

/// Like [`scan`], for the documents in `folder` (relative to the mount, ""
/// for all of it) and beneath it, or the one `folder` names: a listing of
/// one folder walks that folder, not the whole mount.
pub fn scan_within(
    store: &Store,
    mount: &Mount,
    dir: Option<&MountDir>,
    folder: &str,
) -> Result<usize, ToolError> {
    if let Some(dir) = dir {
        let pending = store.view(records::all_publishing)?;
        let group = super::group::committer(store);
        for publishing in pending
            .iter()
            .filter(|p| p.mount == mount.key && !group.is_published(&p.request_id))
        {
            finish(store, dir, publishing)?;
        }
    }
    let on_disk = match dir {
        Some(_) => walk(mount, folder),
        None => BTreeMap::new(),
    };
    let known = store.view(|c| records::stats_within(c, &mount.key, folder))?;
    let differ = differing(&on_disk, &known);
    // the rows of those recorded, read in one visit
    let rows: Vec<Option<DocRow>> = store.view(|c| {
        differ
            .iter()
            .map(|(path, recorded)| match recorded {
                true => records::document(c, &mount.key, path.as_str())
                    .map(|row| row.filter(|row| !row.deleted)),
                false => Ok(None),
            })
            .collect()
    })?;
    let mut seen: Vec<Seen> = Vec::new();
    for ((path, _), row) in differ.into_iter().zip(rows) {
        // read outside the write lock, record in one transaction
        let disk = match dir {
            Some(dir) => dir.read(&path)?,
            None => None,
        };
        if let (Some(row), Some((bytes, stat))) = (&row, &disk)
            && content_hash(bytes) == row.hash
        {
            store.view(|c| {
                records::touch_document(c, &mount.key, path.as_str(), stat.size, stat.mtime_ns)
            })?;
            continue;
        }
        seen.push((path, row, disk));
    }
    if seen.is_empty() {
        return Ok(0);
    }
    let mut recorded = 0;
    // each document's outside edit is a fact of its own: recorded a part at
    // a time, so a first scan of thousands of documents does not hold the
    // one write lock for seconds (past the 5 s another writer waits)
    let writer = store.writer()?;
    for part in seen.chunks(RECORDED_AT_ONCE) {
        recorded += writer.write_in_turn(|tx| -> Result<usize, ToolError> {
            let mut recorded = 0;
            for (path, row, disk) in part {
                let now_row =
                    records::document(tx, &mount.key, path.as_str())?.filter(|row| !row.deleted);
                if now_row != *row
                    || !unchanged_since_read(store, tx, mount, dir, path, disk.as_ref())?
                {
                    continue;
                }
                let disk = disk.as_ref().map(|(bytes, stat)| (bytes.as_slice(), *stat));
                let prior = records::document(tx, &mount.key, path.as_str())?;
                record_external(tx, &mount.key, path.as_str(), prior.as_ref(), disk)?;
                recorded += 1;
            }
            Ok(recorded)
        })?;
    }
    Ok(recorded)
}

/// Outside edits recorded in one transaction of a scan at most.
const RECORDED_AT_ONCE: usize = 128;

/// The paths where the files and the records (both by path in byte order)
/// disagree, in that order: a file unrecorded or of another stat, or a record
/// whose file is gone; each with whether it was recorded.
fn differing(on_disk: &BTreeMap<DocPath, Stat>, known: &[(String, Stat)]) -> Vec<(DocPath, bool)> {
    use std::cmp::Ordering;
    let mut found = Vec::new();
    let mut files = on_disk.iter().peekable();
    let mut records = known.iter().peekable();
    loop {
        let order = match (files.peek(), records.peek()) {
            (None, None) => return found,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((path, _)), Some((recorded, _))) => path.as_str().cmp(recorded.as_str()),
        };
        match order {
            Ordering::Less => {
                if let Some((path, _)) = files.next() {
                    found.push((path.clone(), false));
                }
            }
            Ordering::Greater => {
                if let Some((recorded, _)) = records.next() {
                    found.push((DocPath::trusted(recorded), true));
                }
            }
            Ordering::Equal => {
                if let (Some((path, stat)), Some((_, recorded))) = (files.next(), records.next())
                    && stat != recorded
                {
                    found.push((path.clone(), true));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(mount: &Mount, folder: &str) -> Vec<String> {
        walk(mount, folder)
            .into_keys()
            .map(|path| path.as_str().to_string())
            .collect()
    }

    #[test]
    fn a_scan_of_many_new_documents_lets_other_writers_in_between_its_parts() {
        let repo = tempfile::tempdir().unwrap();
        let hub = crate::hub::on_repo_for_tests(repo.path());
        let store = &hub.state().store;
        let folder = repo.path().join("notes");
        let total = RECORDED_AT_ONCE * 4 + 7;
        std::fs::create_dir_all(&folder).unwrap();
        for n in 0..total {
            std::fs::write(folder.join(format!("n{n:04}.md")), format!("# Note {n}\n")).unwrap();
        }
        let mount = Mount::for_tests(&folder);
        let dir = crate::docs::disk::open(&mount, false).unwrap();
        let scanning = std::thread::scope(|scope| {
            let scan = scope.spawn(|| scan(store, &mount, dir.as_ref()));
            // another writer, trying all along: what it sees each time it gets
            // in. It asks again every 100 µs rather than in SQLite's busy
            // handler's growing sleeps, whose few tries during a short scan
            // fell in one of its handful of pauses only by chance.
            let other = rusqlite::Connection::open(store.path()).unwrap();
            other.busy_timeout(std::time::Duration::ZERO).unwrap();
            let mut seen = Vec::new();
            while !scan.is_finished() {
                match other.execute_batch("BEGIN IMMEDIATE") {
                    Ok(()) => {}
                    Err(error)
                        if error.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) =>
                    {
                        std::thread::sleep(std::time::Duration::from_micros(100));
                        continue;
                    }
                    Err(error) => panic!("the other writer could not begin: {error}"),
                }
                let recorded: i64 = other
                    .query_row("SELECT count(*) FROM docs_documents", [], |row| row.get(0))
                    .unwrap();
                let recorded = recorded as usize;
                other.execute_batch("COMMIT").unwrap();
                seen.push(recorded);
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            (scan.join().unwrap(), seen)
        });
        let (scanned, seen) = scanning;
        assert_eq!(scanned.unwrap(), total);
        assert!(
            seen.iter()
                .any(|&recorded| recorded > 0 && recorded < total),
            "the other writer got in only before or after the whole scan: {seen:?}"
        );
        // every part is whole, and the history still verifies
        assert!(
            seen.iter()
                .all(|&recorded| recorded % RECORDED_AT_ONCE == 0 || recorded == total)
        );
        let audit = crate::docs::audit::run(store, None).unwrap();
        assert!(audit.verified, "{audit:?}");
        assert_eq!(audit.entries, total as i64);
    }

    #[test]
    fn a_folder_is_walked_alone_and_never_through_a_symbolic_link() {
        let root = tempfile::tempdir().unwrap();
        let mount = Mount::for_tests(root.path());
        for file in [
            "top.md",
            "guides/a.md",
            "guides/deep/b.md",
            "guides-old/c.md",
            "away/d.md",
        ] {
            let path = root.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "# T\n").unwrap();
        }
        std::os::unix::fs::symlink(root.path().join("away"), root.path().join("linked")).unwrap();
        std::os::unix::fs::symlink(root.path().join("guides"), root.path().join("away/inner"))
            .unwrap();

        let all = files(&mount, "");
        assert_eq!(
            all,
            [
                "away/d.md",
                "guides-old/c.md",
                "guides/a.md",
                "guides/deep/b.md",
                "top.md"
            ]
        );
        assert_eq!(files(&mount, "guides"), ["guides/a.md", "guides/deep/b.md"]);
        assert_eq!(files(&mount, "guides/deep"), ["guides/deep/b.md"]);
        assert_eq!(files(&mount, "guides/a.md"), ["guides/a.md"]);
        assert!(files(&mount, "missing").is_empty());
        // what the whole walk leaves out, a folder's walk leaves out too
        assert!(files(&mount, "linked").is_empty());
        assert!(files(&mount, "away/inner").is_empty());
        assert!(files(&mount, "away/inner/deep").is_empty());
    }

    proptest::proptest! {
        /// Walking the files and the records side by side finds what looking
        /// each path up in the other would: every path on one side only, and
        /// every path on both whose stat differs, once and by path.
        #[test]
        fn files_and_records_walked_side_by_side_differ_where_lookups_say(
            files in proptest::collection::btree_map("[ab/.-]{1,4}", (0i64..3, 0i64..2), 0..40),
            records in proptest::collection::btree_map("[ab/.-]{1,4}", (0i64..3, 0i64..2), 0..40),
        ) {
            let stat = |&(size, mtime_ns): &(i64, i64)| Stat { size, mtime_ns };
            let on_disk: BTreeMap<DocPath, Stat> =
                files.iter().map(|(path, s)| (DocPath::trusted(path), stat(s))).collect();
            let known: Vec<(String, Stat)> =
                records.iter().map(|(path, s)| (path.clone(), stat(s))).collect();
            let mut expected: Vec<(String, bool)> = Vec::new();
            for (path, s) in &files {
                match records.get(path) {
                    None => expected.push((path.clone(), false)),
                    Some(recorded) if recorded != s => expected.push((path.clone(), true)),
                    Some(_) => {}
                }
            }
            for path in records.keys().filter(|path| !files.contains_key(*path)) {
                expected.push((path.clone(), true));
            }
            expected.sort();
            let found: Vec<(String, bool)> = differing(&on_disk, &known)
                .into_iter()
                .map(|(path, recorded)| (path.as_str().to_string(), recorded))
                .collect();
            proptest::prop_assert_eq!(found, expected);
        }
    }
}
