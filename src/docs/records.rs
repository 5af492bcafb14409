//! Every SQL statement of the documents area.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::chain;
use super::disk::Stat;
use super::model::DocHistoryEntry;
use crate::store::{StoreError, run_cached};

/// Runs a statement's body, its error carrying the connection's databases.
fn sql<T>(
    connection: &Connection,
    run: impl FnOnce() -> rusqlite::Result<T>,
) -> Result<T, StoreError> {
    run().map_err(|error| StoreError::on(connection, error))
}

/// A document's row: its identity now and what the file looked like then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocRow {
    pub rev: i64,
    pub hash: String,
    pub size: i64,
    pub mtime_ns: i64,
    pub deleted: bool,
    /// The history entry of its last change.
    pub seq: i64,
    /// Its first heading, else its file name.
    pub title: String,
}

/// A listed document with its last change.
#[derive(Debug, Clone)]
pub struct Listed {
    pub path: String,
    pub row: DocRow,
    pub actor: String,
    pub source: String,
    pub at: String,
}

/// A write committed here whose file may not be in place yet.
#[derive(Debug, Clone)]
pub struct Publishing {
    pub request_id: String,
    pub mount: String,
    pub path: String,
    pub from_path: Option<String>,
    /// The synced temporary file to rename; `None` for a delete or move.
    pub temp: Option<String>,
    pub hash: String,
}

/// The area's revision: the last history entry's `seq`, since every change
/// appends one (a revision counter of its own cost every write a page).
pub fn revision(connection: &Connection) -> Result<i64, StoreError> {
    sql(connection, || -> rusqlite::Result<i64> {
        connection
            .prepare_cached("SELECT coalesce(max(seq), 0) FROM docs_history")?
            .query_row([], |row| row.get(0))
    })
}

fn doc_row(row: &Row, at: usize) -> rusqlite::Result<DocRow> {
    Ok(DocRow {
        rev: row.get(at)?,
        hash: row.get(at + 1)?,
        size: row.get(at + 2)?,
        mtime_ns: row.get(at + 3)?,
        deleted: row.get::<_, i64>(at + 4)? != 0,
        seq: row.get(at + 5)?,
        title: row.get(at + 6)?,
    })
}

pub fn document(
    connection: &Connection,
    mount: &str,
    path: &str,
) -> Result<Option<DocRow>, StoreError> {
    sql(connection, || -> rusqlite::Result<Option<DocRow>> {
        connection
        .prepare_cached(
            "SELECT rev, hash, size, mtime_ns, deleted, seq, title FROM docs_documents WHERE mount = ?1 AND path = ?2",
        )?
        .query_row(params![mount, path], |row| doc_row(row, 0))
        .optional()
    })
}

pub fn save_document(
    connection: &Connection,
    mount: &str,
    path: &str,
    row: &DocRow,
) -> Result<(), StoreError> {
    sql(connection, || -> rusqlite::Result<()> {
        connection
            .prepare_cached(
                "INSERT INTO docs_documents (mount, path, rev, hash, size, mtime_ns, deleted, seq, title)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (mount, path) DO UPDATE SET rev = excluded.rev, hash = excluded.hash,
               size = excluded.size, mtime_ns = excluded.mtime_ns, deleted = excluded.deleted,
               seq = excluded.seq, title = excluded.title",
            )?
            .execute(params![
                mount,
                path,
                row.rev,
                row.hash,
                row.size,
                row.mtime_ns,
                i64::from(row.deleted),
                row.seq,
                row.title
            ])
            .map(|_| ())
    })
}

/// Records the file's stat without a new revision (its content was unchanged).
pub fn touch_document(
    connection: &Connection,
    mount: &str,
    path: &str,
    size: i64,
    mtime_ns: i64,
) -> Result<(), StoreError> {
    sql(connection, || -> rusqlite::Result<()> {
        connection
            .prepare_cached(
                "UPDATE docs_documents SET size = ?3, mtime_ns = ?4 WHERE mount = ?1 AND path = ?2",
            )?
            .execute(params![mount, path, size, mtime_ns])
            .map(|_| ())
    })
}

/// Every live document of a mount, by path.
pub fn documents_in(
    connection: &Connection,
    mount: &str,
) -> Result<Vec<(String, DocRow)>, StoreError> {
    sql(connection, || -> rusqlite::Result<Vec<(String, DocRow)>> {
        let mut statement = connection.prepare_cached(
            "SELECT path, rev, hash, size, mtime_ns, deleted, seq, title FROM docs_documents
         WHERE mount = ?1 AND deleted = 0 ORDER BY path",
        )?;
        let rows =
            statement.query_map(params![mount], |row| Ok((row.get(0)?, doc_row(row, 1)?)))?;
        rows.collect()
    })
}

/// The stat recorded for each live document of `folder` (relative to the
/// mount, "" for all of it) and beneath it, or the one it names, by path in
/// byte order: all a scan compares. A range of the key, not a pass over the
/// mount ('0' follows '/').
pub fn stats_within(
    connection: &Connection,
    mount: &str,
    folder: &str,
) -> Result<Vec<(String, Stat)>, StoreError> {
    sql(connection, || -> rusqlite::Result<Vec<(String, Stat)>> {
        let mut statement = connection.prepare_cached(
            "SELECT path, size, mtime_ns FROM docs_documents
         WHERE mount = ?1 AND deleted = 0
           AND (?2 = '' OR path = ?2 OR (path > ?2 || '/' AND path < ?2 || '0'))
         ORDER BY path",
        )?;
        let rows = statement.query_map(params![mount, folder], |row| {
            Ok((
                row.get(0)?,
                Stat {
                    size: row.get(1)?,
                    mtime_ns: row.get(2)?,
                },
            ))
        })?;
        rows.collect()
    })
}

/// A page of live documents after `after`, with their last change.
pub fn listing(
    connection: &Connection,
    mount: &str,
    prefix: &str,
    after: &str,
    limit: usize,
) -> Result<Vec<Listed>, StoreError> {
    sql(connection, || -> rusqlite::Result<Vec<Listed>> {
        let mut statement = connection.prepare_cached(
        "SELECT d.path, d.rev, d.hash, d.size, d.mtime_ns, d.deleted, d.seq, d.title, h.actor, h.source, h.at
         FROM docs_documents d JOIN docs_history h ON h.seq = d.seq
         WHERE d.mount = ?1 AND d.deleted = 0 AND d.path > ?2
           AND (?3 = '' OR d.path = ?3 OR substr(d.path, 1, length(?3) + 1) = ?3 || '/')
         ORDER BY d.path LIMIT ?4",
    )?;
        let rows = statement.query_map(
            params![
                mount,
                after,
                prefix,
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            |row| {
                Ok(Listed {
                    path: row.get(0)?,
                    row: doc_row(row, 1)?,
                    actor: row.get(8)?,
                    source: row.get(9)?,
                    at: row.get(10)?,
                })
            },
        )?;
        rows.collect()
    })
}

/// A listing's scope (a mount, under a prefix) as it stands: how many live
/// documents it holds, and its version, the last history entry that touched
/// any document in it (a move or delete marks the row it leaves too), so a
/// cursor goes stale only when its own listing changed.
pub struct ListedScope {
    pub total: i64,
    pub version: i64,
}

pub fn listed_scope(
    connection: &Connection,
    mount: &str,
    prefix: &str,
) -> Result<ListedScope, StoreError> {
    sql(connection, || -> rusqlite::Result<ListedScope> {
        connection
            .prepare_cached(
                "SELECT count(*) FILTER (WHERE deleted = 0), coalesce(max(seq), 0)
               FROM docs_documents WHERE mount = ?1
               AND (?2 = '' OR path = ?2 OR substr(path, 1, length(?2) + 1) = ?2 || '/')",
            )?
            .query_row(params![mount, prefix], |row| {
                Ok(ListedScope {
                    total: row.get(0)?,
                    version: row.get(1)?,
                })
            })
    })
}

/// Keeps a revision's text (once per distinct content).
pub fn save_content(connection: &Connection, hash: &str, bytes: &[u8]) -> Result<(), StoreError> {
    sql(connection, || -> rusqlite::Result<()> {
        let exists: bool = connection
            .prepare_cached("SELECT 1 FROM docs_contents WHERE hash = ?1")?
            .exists(params![hash])?;
        if exists {
            return Ok(());
        }
        connection
            .prepare_cached("INSERT INTO docs_contents (hash, size, deflated) VALUES (?1, ?2, ?3)")?
            .execute(params![
                hash,
                i64::try_from(bytes.len()).unwrap_or(i64::MAX),
                chain::deflate(bytes)
            ])
            .map(|_| ())
    })
}

/// A stored revision's deflated text and size.
pub fn content(connection: &Connection, hash: &str) -> Result<Option<(Vec<u8>, i64)>, StoreError> {
    sql(
        connection,
        || -> rusqlite::Result<Option<(Vec<u8>, i64)>> {
            connection
                .prepare_cached("SELECT deflated, size FROM docs_contents WHERE hash = ?1")?
                .query_row(params![hash], |row| Ok((row.get(0)?, row.get(1)?)))
                .optional()
        },
    )
}

fn entry(row: &Row) -> rusqlite::Result<DocHistoryEntry> {
    Ok(DocHistoryEntry {
        seq: row.get(0)?,
        mount: row.get(1)?,
        path: row.get(2)?,
        rev: row.get(3)?,
        hash: row.get(4)?,
        op: row.get(5)?,
        actor: row.get(6)?,
        source: row.get(7)?,
        at: row.get(8)?,
        from_path: row.get(9)?,
        request_id: row.get(10)?,
        prev_hash: row.get(11)?,
        entry_hash: row.get(12)?,
    })
}

const ENTRY_COLUMNS: &str = "seq, mount, path, rev, hash, op, actor, source, at, from_path, request_id, prev_hash, entry_hash";

/// The last entry's `{seq, entry_hash}`.
pub fn head(connection: &Connection) -> Result<Option<(i64, String)>, StoreError> {
    sql(connection, || -> rusqlite::Result<Option<(i64, String)>> {
        connection
            .prepare_cached("SELECT seq, entry_hash FROM docs_history ORDER BY seq DESC LIMIT 1")?
            .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()
    })
}

/// Appends `entry` (its `seq`, `prev_hash` and `entry_hash` filled here).
pub fn append_history(
    connection: &Connection,
    mut entry: DocHistoryEntry,
) -> Result<DocHistoryEntry, StoreError> {
    sql(connection, || -> rusqlite::Result<DocHistoryEntry> {
        let last: Option<(i64, String)> = connection
            .prepare_cached("SELECT seq, entry_hash FROM docs_history ORDER BY seq DESC LIMIT 1")?
            .query_row([], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?;
        let (seq, prev_hash) = last.map_or((1, chain::GENESIS.to_string()), |(seq, hash)| {
            (seq + 1, hash)
        });
        entry.seq = seq;
        entry.prev_hash = prev_hash;
        entry.entry_hash = chain::entry_hash(&entry);
        connection
        .prepare_cached(&format!(
            "INSERT INTO docs_history ({ENTRY_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
        ))?
        .execute(params![
            entry.seq,
            entry.mount,
            entry.path,
            entry.rev,
            entry.hash,
            entry.op,
            entry.actor,
            entry.source,
            entry.at,
            entry.from_path,
            entry.request_id,
            entry.prev_hash,
            entry.entry_hash
        ])?;
        Ok(entry)
    })
}

/// Entries after `after_seq`, newest first when `newest_first`, filtered by mount and path.
pub fn history(
    connection: &Connection,
    mount: Option<&str>,
    path: Option<&str>,
    before_seq: i64,
    limit: usize,
) -> Result<Vec<DocHistoryEntry>, StoreError> {
    sql(connection, || -> rusqlite::Result<Vec<DocHistoryEntry>> {
        let mut statement = connection.prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM docs_history
         WHERE seq < ?1 AND (?2 IS NULL OR mount = ?2)
           AND (?3 IS NULL OR path = ?3 OR from_path = ?3)
         ORDER BY seq DESC LIMIT ?4"
        ))?;
        let rows = statement.query_map(
            params![
                before_seq,
                mount,
                path,
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            entry,
        )?;
        rows.collect()
    })
}

/// The entry that made revision `rev` of a document.
pub fn entry_at(
    connection: &Connection,
    mount: &str,
    path: &str,
    rev: i64,
) -> Result<Option<DocHistoryEntry>, StoreError> {
    sql(
        connection,
        || -> rusqlite::Result<Option<DocHistoryEntry>> {
            connection
                .prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM docs_history WHERE mount = ?1 AND path = ?2 AND rev = ?3
             ORDER BY seq DESC LIMIT 1"
        ))?
                .query_row(params![mount, path, rev], entry)
                .optional()
        },
    )
}

/// Calls `visit` on every entry in order until it returns false.
pub fn walk_history(
    connection: &Connection,
    mut visit: impl FnMut(DocHistoryEntry) -> bool,
) -> Result<(), StoreError> {
    walk(connection, &mut visit).map_err(|error| StoreError::on(connection, error))
}

fn walk(
    connection: &Connection,
    visit: &mut dyn FnMut(DocHistoryEntry) -> bool,
) -> rusqlite::Result<()> {
    let mut statement = connection.prepare(&format!(
        "SELECT {ENTRY_COLUMNS} FROM docs_history ORDER BY seq"
    ))?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        if !visit(entry(row)?) {
            break;
        }
    }
    Ok(())
}

/// A request ID's stored intent fingerprint, state and receipt JSON.
pub fn receipt(
    connection: &Connection,
    request_id: &str,
) -> Result<Option<(String, String, String)>, StoreError> {
    sql(
        connection,
        || -> rusqlite::Result<Option<(String, String, String)>> {
            connection
                .prepare_cached(
                    "SELECT intent, state, receipt FROM docs_receipts WHERE request_id = ?1",
                )?
                .query_row(params![request_id], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })
                .optional()
        },
    )
}

pub fn save_receipt(
    connection: &Connection,
    request_id: &str,
    intent: &str,
    state: &str,
    receipt: &str,
    at: &str,
) -> Result<(), StoreError> {
    sql(connection, || -> rusqlite::Result<()> {
        connection
        .prepare_cached(
            "INSERT INTO docs_receipts (request_id, intent, state, receipt, at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (request_id) DO UPDATE SET state = excluded.state, receipt = excluded.receipt",
        )?
        .execute(params![request_id, intent, state, receipt, at])
        .map(|_| ())
    })
}

pub fn add_publishing(connection: &Connection, publishing: &Publishing) -> Result<(), StoreError> {
    sql(connection, || -> rusqlite::Result<()> {
        connection
        .prepare_cached(
            "INSERT INTO docs_publishing (request_id, mount, path, from_path, temp, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            publishing.request_id,
            publishing.mount,
            publishing.path,
            publishing.from_path,
            publishing.temp,
            publishing.hash
        ])
        .map(|_| ())
    })
}

fn publishing_row(row: &Row) -> rusqlite::Result<Publishing> {
    Ok(Publishing {
        request_id: row.get(0)?,
        mount: row.get(1)?,
        path: row.get(2)?,
        from_path: row.get(3)?,
        temp: row.get(4)?,
        hash: row.get(5)?,
    })
}

/// Unfinished publications touching a document (as target or as a move's source).
pub fn publishing_for(
    connection: &Connection,
    mount: &str,
    path: &str,
) -> Result<Vec<Publishing>, StoreError> {
    sql(connection, || -> rusqlite::Result<Vec<Publishing>> {
        let mut statement = connection.prepare_cached(
            "SELECT request_id, mount, path, from_path, temp, hash FROM docs_publishing
         WHERE mount = ?1 AND (path = ?2 OR from_path = ?2)",
        )?;
        let rows = statement.query_map(params![mount, path], publishing_row)?;
        rows.collect()
    })
}

pub fn publishing_of(
    connection: &Connection,
    request_id: &str,
) -> Result<Option<Publishing>, StoreError> {
    sql(connection, || -> rusqlite::Result<Option<Publishing>> {
        connection
        .prepare_cached(
            "SELECT request_id, mount, path, from_path, temp, hash FROM docs_publishing WHERE request_id = ?1",
        )?
        .query_row(params![request_id], publishing_row)
        .optional()
    })
}

pub fn all_publishing(connection: &Connection) -> Result<Vec<Publishing>, StoreError> {
    sql(connection, || -> rusqlite::Result<Vec<Publishing>> {
        let mut statement = connection.prepare(
            "SELECT request_id, mount, path, from_path, temp, hash FROM docs_publishing",
        )?;
        let rows = statement.query_map([], publishing_row)?;
        rows.collect()
    })
}

pub fn remove_publishing(connection: &Connection, request_id: &str) -> Result<(), StoreError> {
    sql(connection, || -> rusqlite::Result<()> {
        connection
            .prepare_cached("DELETE FROM docs_publishing WHERE request_id = ?1")?
            .execute(params![request_id])
            .map(|_| ())
    })
}

/// The audit's failure verdict, when writes are refused.
pub fn integrity_failure(connection: &Connection) -> Result<Option<String>, StoreError> {
    sql(connection, || -> rusqlite::Result<Option<String>> {
        connection
            .prepare_cached("SELECT value FROM docs_meta WHERE key = 'integrity_failure'")?
            .query_row([], |row| row.get(0))
            .optional()
    })
}

pub fn set_integrity_failure(
    connection: &Connection,
    verdict: Option<&str>,
) -> Result<(), StoreError> {
    sql(connection, || -> rusqlite::Result<()> {
        match verdict {
            Some(verdict) => connection.execute(
                "INSERT INTO docs_meta (key, value) VALUES ('integrity_failure', ?1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![verdict],
            ),
            None => connection.execute("DELETE FROM docs_meta WHERE key = 'integrity_failure'", []),
        }
        .map(|_| ())
    })
}

/// Opens a savepoint inside the current transaction (one write of a group).
pub fn savepoint(connection: &Connection) -> Result<(), StoreError> {
    sql(connection, || run_cached(connection, "SAVEPOINT one_write"))
}

pub fn release(connection: &Connection) -> Result<(), StoreError> {
    sql(connection, || run_cached(connection, "RELEASE one_write"))
}

/// Undoes everything since the savepoint and closes it.
pub fn roll_back_to_savepoint(connection: &Connection) -> Result<(), StoreError> {
    sql(connection, || {
        run_cached(connection, "ROLLBACK TO one_write")?;
        run_cached(connection, "RELEASE one_write")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_holds_its_documents_and_not_a_sibling_sharing_its_start() {
        let repo = tempfile::tempdir().unwrap();
        let hub = crate::hub::on_repo_for_tests(repo.path());
        let paths = [
            "guide.md",
            "guides",
            "guides-old/c.md",
            "guides/a.md",
            "guides/deep/b.md",
            "guides0.md",
            "z.md",
        ];
        let within = |folder: &str| -> Vec<String> {
            hub.state()
                .store
                .view(|c| stats_within(c, "docs", folder))
                .unwrap()
                .into_iter()
                .map(|(path, _)| path)
                .collect()
        };
        hub.state()
            .store
            .write(|tx| -> Result<(), StoreError> {
                for (seq, path) in paths.iter().enumerate() {
                    let row = DocRow {
                        rev: 1,
                        hash: String::new(),
                        size: 0,
                        mtime_ns: 0,
                        deleted: false,
                        seq: i64::try_from(seq).unwrap(),
                        title: String::new(),
                    };
                    save_document(tx, "docs", path, &row)?;
                    save_document(tx, "other", path, &row)?;
                }
                Ok(())
            })
            .unwrap();
        assert_eq!(within(""), paths);
        let in_mount: Vec<String> = hub
            .state()
            .store
            .view(|c| documents_in(c, "docs"))
            .unwrap()
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        assert_eq!(in_mount, paths, "the mount's own, not another's");
        assert_eq!(
            within("guides"),
            ["guides", "guides/a.md", "guides/deep/b.md"]
        );
        assert_eq!(within("guides/deep"), ["guides/deep/b.md"]);
        assert_eq!(within("guide.md"), ["guide.md"]);
        assert!(within("guid").is_empty());
    }
}
