//! Storage: one SQLite database per hub under the state directory.
//!
//! Owns the connection pool, connection pragmas (WAL, busy timeout, foreign keys),
//! running the migrations it is given (versioned per area, in `schema_versions`),
//! and the read/write helpers: every write runs in `BEGIN IMMEDIATE` so writers
//! queue instead of failing mid-transaction. A pooled connection belongs to one
//! thread at a time and is never shared. It knows nothing of tools, envelopes,
//! HTTP or any area: areas bring their tables as migrations, and callers decide
//! what a failure means to their clients. `receipts` keeps the answers of
//! writes sent with an idempotency key, in the hub's `request_receipts` table;
//! `requests` records which shared writes committed, by request ID.

pub mod copy;
mod migrations;
pub mod pg;
pub mod receipts;
pub mod requests;
mod session;
mod shared;
pub mod shared_files;
pub mod sql;
pub mod users;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, ErrorCode};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use migrations::{Migration, Schema};
pub use session::Session;
pub use shared::SharedStore;
pub use sql::{Dialect, Row, Value, Write};

/// How long a writer waits for the write lock before the call is answered `transient`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
const POOL_SIZE: u32 = 16;
/// Each pooled connection's page cache at most, in KiB (SQLite's own default,
/// stated): the pool's caches together stay under POOL_SIZE times this.
const PAGE_CACHE_KIB: u32 = 2_000;
const POOL_WAIT: Duration = Duration::from_secs(10);
/// The write-ahead log is cut back to this size whenever it restarts after a
/// checkpoint, so a burst of writes (or a reader that held a checkpoint back)
/// does not leave it large for ever.
pub const WAL_SIZE_LIMIT: u64 = 64 << 20;
/// Longest a read may keep its snapshot: a reader past it is interrupted, so
/// none pins the write-ahead log (and its growth) indefinitely. Well past the
/// tools' read timeout, so only a read nobody waits for any more meets it.
pub const READ_LIMIT: Duration = Duration::from_secs(60);
/// Virtual-machine steps between two looks at a read's clock.
const READ_CLOCK_STEPS: i32 = 1_000;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("sqlite: {source}")]
    Sqlite {
        #[source]
        source: rusqlite::Error,
        /// `PRAGMA database_list` of the failing connection, for the forensic log.
        databases: Vec<String>,
    },
    #[error("no database connection became free in time: {0}")]
    Pool(#[from] r2d2::Error),
    #[error("migration {area} {version} ({name}) failed: {source}")]
    Migration {
        area: &'static str,
        version: i64,
        name: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("creating the state directory failed: {0}")]
    StateDir(#[source] std::io::Error),
    /// PostgreSQL refused, or could not be reached; `database` names it
    /// (user, host, port, database: never the password).
    #[error("postgresql {database}: {source}")]
    Postgres {
        #[source]
        source: ::postgres::Error,
        database: String,
    },
    /// No connection to PostgreSQL could be made or taken from the pool.
    #[error("postgresql {database} is unreachable: {reason}")]
    Unreachable { database: String, reason: String },
    /// A write's connection dropped while its commit was under way: it may
    /// or may not have been committed; `request` is the request ID its
    /// outcome is recorded under, when it ran inside a call.
    #[error("postgresql {database}: the connection dropped during the commit: {reason}")]
    CommitUnknown {
        database: String,
        reason: String,
        request: Option<String>,
    },
    #[error("team migration {area} {version} ({name}) failed on postgresql {database}: {source}")]
    TeamMigration {
        area: &'static str,
        version: i64,
        name: &'static str,
        database: String,
        #[source]
        source: ::postgres::Error,
    },
    /// A team database's URL, TLS settings or shared key cannot be used.
    #[error("a team database: {0}")]
    Url(String),
    #[error(transparent)]
    Column(#[from] sql::ColumnError),
    #[error("a query that must find a row found none")]
    NoRows,
}

impl StoreError {
    /// SQLite's primary result code, when SQLite itself refused.
    pub fn sqlite_code(&self) -> Option<ErrorCode> {
        match self {
            StoreError::Sqlite {
                source: rusqlite::Error::SqliteFailure(failure, _),
                ..
            } => Some(failure.code),
            _ => None,
        }
    }

    /// True when a query that must find a row found none.
    pub fn is_no_rows(&self) -> bool {
        matches!(
            self,
            StoreError::NoRows
                | StoreError::Sqlite {
                    source: rusqlite::Error::QueryReturnedNoRows,
                    ..
                }
        )
    }

    /// True when the database could not be reached (PostgreSQL down, the
    /// network gone): worth retrying once it is back.
    pub fn is_unreachable(&self) -> bool {
        match self {
            StoreError::Unreachable { .. } => true,
            StoreError::Postgres { source, .. } => pg::is_connection_error(source),
            _ => false,
        }
    }

    /// The database a failure came from, named without its password.
    pub fn database(&self) -> Option<&str> {
        match self {
            StoreError::Postgres { database, .. }
            | StoreError::Unreachable { database, .. }
            | StoreError::CommitUnknown { database, .. } => Some(database),
            _ => None,
        }
    }

    /// True when no pooled connection became free in time.
    pub fn is_pool_timeout(&self) -> bool {
        matches!(self, StoreError::Pool(_))
    }

    pub fn databases(&self) -> &[String] {
        match self {
            StoreError::Sqlite { databases, .. } => databases,
            _ => &[],
        }
    }

    /// Wraps a rusqlite error with the attached-database list of the connection it came from.
    pub fn on(connection: &Connection, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            source,
            databases: database_list(connection),
        }
    }
}

/// `name=file` for every database attached to `connection`, best effort.
fn database_list(connection: &Connection) -> Vec<String> {
    let list = || -> rusqlite::Result<Vec<String>> {
        let mut statement = connection.prepare("PRAGMA database_list")?;
        let rows = statement.query_map([], |row| {
            let name: String = row.get(1)?;
            let file: Option<String> = row.get(2)?;
            Ok(format!("{name}={}", file.unwrap_or_default()))
        })?;
        rows.collect()
    };
    list().unwrap_or_else(|error| vec![format!("unavailable: {error}")])
}

/// Process-wide SQLite settings, applied before the first connection opens.
///
/// Memory statistics make every SQLite allocation take one global mutex; with
/// several pooled connections reading at once that mutex was the hottest lock
/// of a board request. Each connection is already used by one thread at a
/// time (rusqlite opens them without per-connection mutexes).
fn configure_sqlite_once() {
    static CONFIGURE: std::sync::Once = std::sync::Once::new();
    CONFIGURE.call_once(|| {
        // SAFETY: sqlite3_config must run before sqlite3_initialize and while no
        // other thread uses SQLite; `Once` runs it exactly once, before this
        // process opens its first connection. It returns SQLITE_MISUSE if SQLite
        // was already initialised, in which case the default stays: harmless.
        let code = unsafe {
            rusqlite::ffi::sqlite3_config(
                rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS,
                0 as std::os::raw::c_int,
            )
        };
        if code != rusqlite::ffi::SQLITE_OK {
            tracing::debug!(
                code,
                "SQLite memory statistics stay on: it was initialised before the hub"
            );
        }
    });
}

/// The hub's database: a pool of connections to one SQLite file.
#[derive(Clone)]
pub struct Store {
    pool: r2d2::Pool<SqliteConnectionManager>,
    path: PathBuf,
    read_limit: Duration,
}

/// Puts a `.gitignore` of `*` in the state folder (as pytest and ruff do in
/// their caches), so that a folder inside the repository (`.cos`, the
/// default) never shows in `git status` nor gets committed with its database
/// and the key that seals cursors. An existing one is left as it is; one
/// that cannot be written only costs that convenience.
fn keep_out_of_git(state_dir: &Path) {
    let ignore = state_dir.join(".gitignore");
    if ignore.exists() {
        return;
    }
    if let Err(error) = std::fs::write(&ignore, "# the hub's state (cos-hub): never committed\n*\n")
    {
        tracing::warn!(%error, path = %ignore.display(), "the state folder may show in git status");
    }
}

impl Store {
    /// Opens (creating if needed) `state_dir/cos.db` and brings every area's
    /// schema in `schemas` up to date, in the order given.
    pub fn open(state_dir: &Path, schemas: &[Schema]) -> Result<Store, StoreError> {
        Store::open_with_wal_limit(state_dir, schemas, WAL_SIZE_LIMIT)
    }

    fn open_with_wal_limit(
        state_dir: &Path,
        schemas: &[Schema],
        wal_limit: u64,
    ) -> Result<Store, StoreError> {
        configure_sqlite_once();
        std::fs::create_dir_all(state_dir).map_err(StoreError::StateDir)?;
        keep_out_of_git(state_dir);
        let path = state_dir.join("cos.db");
        let manager = SqliteConnectionManager::file(&path).with_init(move |connection| {
            connection.busy_timeout(BUSY_TIMEOUT)?;
            // Every tool's statements stay prepared across calls on this connection.
            connection.set_prepared_statement_cache_capacity(128);
            connection.execute_batch(&format!(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = NORMAL;
                 PRAGMA foreign_keys = ON;
                 PRAGMA cache_size = -{PAGE_CACHE_KIB};
                 PRAGMA journal_size_limit = {wal_limit};"
            ))
        });
        let pool = r2d2::Pool::builder()
            .max_size(POOL_SIZE)
            .min_idle(Some(1))
            // A pooled SQLite connection does not go stale the way a network one
            // does; checking it on every checkout cost a statement per request.
            .test_on_check_out(false)
            .connection_timeout(POOL_WAIT)
            .build(manager)?;
        let store = Store {
            pool,
            path,
            read_limit: READ_LIMIT,
        };
        store.write(|transaction| migrations::apply(transaction, schemas))?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Copies what the write-ahead log holds into the database without
    /// waiting for anyone (after a large write such as an index run); the log
    /// restarts, cut back to its size limit, once no reader needs its frames.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        self.read(|connection| {
            connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
        })
    }

    /// Checkpoints everything and empties the write-ahead log (at a clean
    /// shutdown, when the hub's own readers are done).
    pub fn truncate_wal(&self) -> Result<(), StoreError> {
        self.read(|connection| {
            connection.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        })
    }

    /// The same store with another read limit (for tests of the limit).
    pub fn with_read_limit(mut self, limit: Duration) -> Store {
        self.read_limit = limit;
        self
    }

    /// Runs `read` on a pooled connection (this thread's alone while it
    /// runs), interrupted past the read limit.
    pub fn read<T>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let connection = self.pool.get()?;
        let _clock = ReadClock::start(&connection, self.read_limit);
        read(&connection).map_err(|error| StoreError::on(&connection, error))
    }

    /// Like [`Store::read`], for bodies that return their own error type.
    pub fn view<T, E>(&self, read: impl FnOnce(&Connection) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let connection = self.pool.get().map_err(StoreError::from)?;
        let _clock = ReadClock::start(&connection, self.read_limit);
        read(&connection)
    }

    /// Like [`Store::view`], inside one read transaction: every statement
    /// sees the same state of the database, taken once (in autocommit each
    /// statement would begin a read of its own).
    pub fn view_at_once<T, E>(&self, read: impl FnOnce(&Connection) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let connection = self.pool.get().map_err(StoreError::from)?;
        let _clock = ReadClock::start(&connection, self.read_limit);
        in_transaction(&connection, "BEGIN", read)
    }

    /// Runs `write` in a `BEGIN IMMEDIATE` transaction, committing only if it succeeds:
    /// a refused write leaves nothing behind.
    pub fn write<T, E>(&self, write: impl FnOnce(&Connection) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.writer()?.write(write)
    }

    /// One pooled connection held for a run of write transactions: a long
    /// bulk write done in parts, so other writers get their turn between
    /// them (each waits for the write lock at most `BUSY_TIMEOUT`), with
    /// what lives on a connection (temporary tables and triggers) kept from
    /// part to part.
    pub fn writer(&self) -> Result<Writer, StoreError> {
        Ok(Writer {
            connection: self.pool.get()?,
            owed_pause: std::cell::Cell::new(Duration::ZERO),
        })
    }

    /// Like [`Store::write`], committed with `synchronous = FULL`: the commit
    /// is on disk (the WAL synced) before this returns, not only safe from a
    /// process crash. The connection goes back to the pool at NORMAL.
    pub fn write_durable<T, E>(
        &self,
        write: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let connection = self.pool.get().map_err(StoreError::from)?;
        run_cached(&connection, "PRAGMA synchronous = FULL")
            .map_err(|error| StoreError::on(&connection, error))?;
        let outcome = in_transaction(&connection, "BEGIN IMMEDIATE", write);
        if let Err(error) = run_cached(&connection, "PRAGMA synchronous = NORMAL") {
            tracing::warn!(%error, "a connection stayed at synchronous = FULL");
        }
        outcome
    }

    /// The schema version of each area in this database.
    pub fn schema_versions(&self) -> Result<std::collections::BTreeMap<String, i64>, StoreError> {
        self.read(migrations::versions)
    }
}

/// Sleeps a little between the write transactions of a long run of them,
/// after one that held the write lock for `held` ([`Writer::write_in_turn`]).
/// A writer waiting for the lock tries again after sleeps that grow to
/// 100 ms (SQLite's busy handler), and a run that takes the lock again at
/// once let the waiter in only by chance: it waited out the whole run
/// (seconds on a large repository). A quarter of `held`, at most 200 ms
/// (two of the waiter's sleeps, so one of its tries falls in the pause
/// after a long transaction, and often enough after short ones).
fn let_waiting_writers_in(held: Duration) {
    std::thread::sleep((held / 4).min(Duration::from_millis(200)));
}

/// A connection held by one writer across transactions ([`Store::writer`]).
pub struct Writer {
    connection: r2d2::PooledConnection<SqliteConnectionManager>,
    /// How long the last part of a run held the lock, paused for before the
    /// next part: none after the last, whose caller would only wait.
    owed_pause: std::cell::Cell<Duration>,
}

impl Writer {
    /// Runs `write` in a `BEGIN IMMEDIATE` transaction of its own, as [`Store::write`].
    pub fn write<T, E>(&self, write: impl FnOnce(&Connection) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        in_transaction(&self.connection, "BEGIN IMMEDIATE", write)
    }

    /// Like [`Writer::write`], as one part of a long run of them (a first
    /// index, a first scan of many documents); each part after the first
    /// begins with a pause of a quarter of the time the one before held the
    /// lock, so a writer waiting for it gets its turn.
    /// Not for a run that others wait on to finish (a search catch-up a
    /// query shares): there the pauses only lengthen their wait.
    pub fn write_in_turn<T, E>(
        &self,
        write: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let_waiting_writers_in(self.owed_pause.take());
        let started = std::time::Instant::now();
        let written = self.write(write);
        self.owed_pause.set(started.elapsed());
        written
    }
}

/// A read's clock: SQLite interrupts the read's statements once it has run
/// past its limit; taken off the connection when the read ends, so the
/// pooled connection's next user (a write, say) runs unlimited.
struct ReadClock<'c> {
    connection: &'c Connection,
}

impl<'c> ReadClock<'c> {
    fn start(connection: &'c Connection, limit: Duration) -> ReadClock<'c> {
        let started = std::time::Instant::now();
        if let Err(error) =
            connection.progress_handler(READ_CLOCK_STEPS, Some(move || started.elapsed() > limit))
        {
            tracing::warn!(%error, "a read runs without its time limit");
        }
        ReadClock { connection }
    }
}

impl Drop for ReadClock<'_> {
    fn drop(&mut self) {
        let _ = self.connection.progress_handler(0, None::<fn() -> bool>);
    }
}

/// Runs `body` in a transaction opened by `begin` (`BEGIN` for a read,
/// `BEGIN IMMEDIATE` for a write) on `connection`, committing only if it
/// succeeds; rolled back on an error, a failed commit or a panic. `BEGIN`
/// and `COMMIT` are cached statements: preparing them again for every call
/// was a measurable share of a small durable write.
fn in_transaction<T, E>(
    connection: &Connection,
    begin: &str,
    body: impl FnOnce(&Connection) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<StoreError>,
{
    let sqlite = |error| StoreError::on(connection, error);
    run_cached(connection, begin).map_err(sqlite)?;
    let open = RollBackUnlessCommitted(connection);
    let value = body(connection)?;
    run_cached(connection, "COMMIT").map_err(sqlite)?;
    drop(open);
    Ok(value)
}

/// Runs a statement that answers no rows, prepared once per connection
/// (for the statements every write runs: transactions, savepoints).
pub fn run_cached(connection: &Connection, statement: &str) -> rusqlite::Result<()> {
    connection
        .prepare_cached(statement)?
        .execute([])
        .map(|_| ())
}

/// Rolls back the connection's open transaction when dropped, if any: after
/// a refused write, a failed commit (busy, full disk) or a panic, so the
/// pooled connection is never handed on inside a transaction.
struct RollBackUnlessCommitted<'c>(&'c Connection);

impl Drop for RollBackUnlessCommitted<'_> {
    fn drop(&mut self) {
        if !self.0.is_autocommit()
            && let Err(error) = run_cached(self.0, "ROLLBACK")
        {
            tracing::warn!(%error, "rolling back a transaction failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTES: &[Migration] = &[
        Migration {
            version: 1,
            name: "notes",
            sql: "CREATE TABLE notes (text TEXT NOT NULL) STRICT;",
            legacy_version: None,
        },
        Migration {
            version: 2,
            name: "note_authors",
            sql: "ALTER TABLE notes ADD COLUMN author TEXT;",
            legacy_version: None,
        },
    ];
    const TAGS: &[Migration] = &[Migration {
        version: 1,
        name: "tags",
        sql: "CREATE TABLE tags (name TEXT PRIMARY KEY) WITHOUT ROWID;",
        legacy_version: None,
    }];

    fn schemas() -> [Schema; 2] {
        [
            Schema {
                area: "notes",
                migrations: NOTES,
            },
            Schema {
                area: "tags",
                migrations: TAGS,
            },
        ]
    }

    #[test]
    fn a_run_in_parts_pauses_between_its_parts_and_not_after_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &schemas()).unwrap();
        let writer = store.writer().unwrap();
        let held = Duration::from_millis(40);
        writer
            .write_in_turn(|tx| -> Result<(), StoreError> {
                std::thread::sleep(held);
                tx.execute("INSERT INTO tags (name) VALUES ('first')", [])
                    .map_err(|error| StoreError::on(tx, error))?;
                Ok(())
            })
            .unwrap();
        // the part is committed and its caller answered; the pause is owed
        // to the next part, taken only if one comes
        assert!(writer.owed_pause.get() >= held);
        let count: i64 = store
            .read(|c| c.query_row("SELECT count(*) FROM tags", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(count, 1);
        // a sleep is never shorter than asked, so this bound cannot flake
        let next_part = std::time::Instant::now();
        writer.write_in_turn(|_| Ok::<_, StoreError>(())).unwrap();
        assert!(
            next_part.elapsed() >= held / 4,
            "the next part began with the pause"
        );
        assert!(writer.owed_pause.get() < held, "the next part paid it");
    }

    #[test]
    fn opens_with_wal_foreign_keys_and_every_area_at_its_latest_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &schemas()).unwrap();
        let versions = store.schema_versions().unwrap();
        assert_eq!(versions.get("notes"), Some(&2));
        assert_eq!(versions.get("tags"), Some(&1));
        let (mode, keys): (String, i64) = store
            .read(|c| {
                Ok((
                    c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?,
                    c.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?,
                ))
            })
            .unwrap();
        assert_eq!(mode, "wal");
        assert_eq!(keys, 1);
        // reopening applies nothing twice (a second CREATE TABLE would fail)
        drop(store);
        let again = Store::open(dir.path(), &schemas()).unwrap();
        assert_eq!(again.schema_versions().unwrap(), versions);
    }

    #[test]
    fn an_area_added_later_gets_its_tables_without_touching_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let [notes, tags] = schemas();
        let store = Store::open(dir.path(), std::slice::from_ref(&notes)).unwrap();
        store
            .write(|tx| {
                tx.execute("INSERT INTO notes(text) VALUES ('kept')", [])
                    .map_err(|e| StoreError::on(tx, e))
            })
            .unwrap();
        drop(store);
        let store = Store::open(dir.path(), &[notes, tags]).unwrap();
        assert_eq!(store.schema_versions().unwrap().get("tags"), Some(&1));
        let kept: String = store
            .read(|c| c.query_row("SELECT text FROM notes", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(kept, "kept");
    }

    #[test]
    fn a_database_from_the_single_list_days_is_adopted_where_it_stood() {
        const OLD: &[Migration] = &[
            Migration {
                version: 1,
                name: "notes",
                sql: "CREATE TABLE notes (text TEXT NOT NULL) STRICT;",
                legacy_version: Some(1),
            },
            Migration {
                version: 2,
                name: "note_authors",
                sql: "ALTER TABLE notes ADD COLUMN author TEXT;",
                legacy_version: Some(2),
            },
            Migration {
                version: 3,
                name: "note_dates",
                sql: "ALTER TABLE notes ADD COLUMN at TEXT;",
                legacy_version: None,
            },
        ];
        let dir = tempfile::tempdir().unwrap();
        {
            let connection = Connection::open(dir.path().join("cos.db")).unwrap();
            connection
                .execute_batch(
                    "CREATE TABLE notes (text TEXT NOT NULL, author TEXT) STRICT;
                     PRAGMA user_version = 2;",
                )
                .unwrap();
        }
        let store = Store::open(
            dir.path(),
            &[Schema {
                area: "notes",
                migrations: OLD,
            }],
        )
        .unwrap();
        assert_eq!(store.schema_versions().unwrap().get("notes"), Some(&3));
        store
            .read(|c| {
                c.execute(
                    "INSERT INTO notes(text, author, at) VALUES ('a', 'b', 'c')",
                    [],
                )
            })
            .unwrap();
    }

    #[test]
    fn a_failed_migration_names_its_area_and_leaves_nothing_behind() {
        const BROKEN: &[Migration] = &[Migration {
            version: 1,
            name: "broken",
            sql: "CREATE TABLE half (x); CREATE TABLE half (x);",
            legacy_version: None,
        }];
        let dir = tempfile::tempdir().unwrap();
        let error = Store::open(
            dir.path(),
            &[Schema {
                area: "broken_area",
                migrations: BROKEN,
            }],
        )
        .err()
        .unwrap();
        assert!(
            error.to_string().contains("broken_area 1 (broken)"),
            "{error}"
        );
        let store = Store::open(dir.path(), &[]).unwrap();
        let tables: i64 = store
            .read(|c| {
                c.query_row(
                    "SELECT count(*) FROM sqlite_schema WHERE name = 'half'",
                    [],
                    |r| r.get(0),
                )
            })
            .unwrap();
        assert_eq!(tables, 0);
    }

    #[test]
    fn the_wal_comes_back_under_its_limit_once_a_held_reader_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let limit = 256 * 1024;
        let store = Store::open_with_wal_limit(dir.path(), &schemas(), limit).unwrap();
        let wal = dir.path().join("cos.db-wal");
        let wal_size = || std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        // another process's reader holds a snapshot open: no checkpoint can pass it
        let reader = Connection::open(dir.path().join("cos.db")).unwrap();
        reader
            .execute_batch("BEGIN; SELECT count(*) FROM notes;")
            .unwrap();
        for n in 0..400 {
            store
                .write(|tx| {
                    tx.execute(
                        "INSERT INTO notes(text) VALUES (?1)",
                        [format!("{n}{}", "x".repeat(4000))],
                    )
                    .map_err(|e| StoreError::on(tx, e))
                })
                .unwrap();
        }
        assert!(
            wal_size() > 4 * limit,
            "the log grew behind the reader: {}",
            wal_size()
        );
        reader.execute_batch("COMMIT").unwrap();
        drop(reader);
        store.checkpoint().unwrap();
        store
            .write(|tx| {
                tx.execute("INSERT INTO notes(text) VALUES ('after')", [])
                    .map_err(|e| StoreError::on(tx, e))
            })
            .unwrap();
        assert!(wal_size() <= limit, "the log was cut back: {}", wal_size());
        store.truncate_wal().unwrap();
        assert_eq!(wal_size(), 0, "a clean shutdown empties it");
    }

    #[test]
    fn a_reader_past_its_limit_is_stopped_and_pins_the_log_no_longer() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &schemas())
            .unwrap()
            .with_read_limit(Duration::from_millis(200));
        store
            .write(|tx| -> Result<(), StoreError> {
                for n in 0..2_000 {
                    tx.execute("INSERT INTO notes(text) VALUES (?1)", [format!("note {n}")])
                        .map_err(|error| StoreError::on(tx, error))?;
                }
                Ok(())
            })
            .unwrap();
        // a reader that stalls between rows, as a slow client's read would
        let started = std::time::Instant::now();
        let stalled = store.read(|c| {
            let mut statement = c.prepare("SELECT text FROM notes")?;
            let mut rows = statement.query([])?;
            while rows.next()?.is_some() {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        });
        let error = stalled.expect_err("interrupted");
        assert_eq!(
            error.sqlite_code(),
            Some(rusqlite::ErrorCode::OperationInterrupted)
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        // the pooled connection's next read runs unlimited again
        let count: i64 = store
            .read(|c| {
                std::thread::sleep(Duration::from_millis(300));
                c.query_row("SELECT count(*) FROM notes", [], |row| row.get(0))
            })
            .unwrap();
        assert_eq!(count, 2_000);
        // nothing holds a snapshot: the log is emptied
        store.truncate_wal().unwrap();
        let wal = dir.path().join("cos.db-wal");
        assert_eq!(std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0), 0);
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &schemas()).unwrap();
        let result: Result<(), StoreError> = store.write(|tx| {
            tx.execute("INSERT INTO notes(text) VALUES ('probe')", [])
                .map_err(|e| StoreError::on(tx, e))?;
            tx.execute("INSERT INTO no_such_table VALUES (1)", [])
                .map_err(|e| StoreError::on(tx, e))?;
            Ok(())
        });
        let error = result.unwrap_err();
        assert_eq!(error.sqlite_code(), Some(ErrorCode::Unknown));
        assert!(
            error
                .databases()
                .iter()
                .any(|d| d.starts_with("main=") && d.ends_with("cos.db"))
        );
        let notes: i64 = store
            .read(|c| c.query_row("SELECT count(*) FROM notes", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(notes, 0);
    }

    #[test]
    fn a_write_that_panics_is_rolled_back_and_its_connection_reused_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &schemas()).unwrap();
        for _ in 0..POOL_SIZE + 1 {
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _: Result<(), StoreError> = store.write(|tx| {
                    tx.execute("INSERT INTO notes(text) VALUES ('half')", [])
                        .map_err(|e| StoreError::on(tx, e))?;
                    panic!("a bug inside a write");
                });
            }));
            assert!(panicked.is_err());
        }
        // every pooled connection is out of its transaction: a durable write commits
        store
            .write_durable(|tx| {
                tx.execute("INSERT INTO notes(text) VALUES ('whole')", [])
                    .map_err(|e| StoreError::on(tx, e))
            })
            .unwrap();
        let notes: Vec<String> = store
            .read(|c| {
                c.prepare("SELECT text FROM notes")?
                    .query_map([], |r| r.get(0))?
                    .collect()
            })
            .unwrap();
        assert_eq!(notes, vec!["whole".to_string()]);
    }

    #[test]
    fn a_view_at_once_sees_one_state_though_a_write_lands_between_its_statements() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), &schemas()).unwrap();
        let count = |c: &Connection| -> Result<i64, StoreError> {
            c.query_row("SELECT count(*) FROM notes", [], |r| r.get(0))
                .map_err(|e| StoreError::on(c, e))
        };
        let write_one = || {
            let store = store.clone();
            std::thread::spawn(move || {
                store.write(|tx| {
                    tx.execute("INSERT INTO notes(text) VALUES ('between')", [])
                        .map_err(|e| StoreError::on(tx, e))
                })
            })
            .join()
            .unwrap()
            .unwrap();
        };
        // counts, lets a write land, counts again
        let around_a_write = |c: &Connection| -> Result<(i64, i64), StoreError> {
            let before = count(c)?;
            write_one();
            Ok((before, count(c)?))
        };
        assert_eq!(store.view_at_once(around_a_write).unwrap(), (0, 0));
        // a plain view begins a read per statement, and sees the write
        assert_eq!(store.view(around_a_write).unwrap(), (1, 2));
    }
}
