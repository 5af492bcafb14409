//! Storage: one SQLite database per hub under the state directory.
//!
//! Owns the connection pool, connection pragmas (WAL, busy timeout, foreign keys),
//! versioned migrations, and the read/write helpers: every write runs in
//! `BEGIN IMMEDIATE` so writers queue instead of failing mid-transaction. A
//! pooled connection belongs to one thread at a time and is never shared. It
//! knows nothing of tools, envelopes or HTTP; areas bring their SQL as migrations.

mod migrations;

use crate::envelope::Category;
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, ErrorCode, Transaction, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use migrations::{MIGRATIONS, Migration};

/// How long a writer waits for the write lock before the call is answered `transient`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
const POOL_SIZE: u32 = 16;
const POOL_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("sqlite: {source}")]
    Sqlite {
        #[source]
        source: rusqlite::Error,
        /// `PRAGMA database_list` of the failing connection, for the forensic log.
        databases: Vec<String>,
    },
    #[error("no database connection became free within {POOL_WAIT:?}: {0}")]
    Pool(#[from] r2d2::Error),
    #[error("migration {version} ({name}) failed: {source}")]
    Migration {
        version: i64,
        name: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("creating the state directory failed: {0}")]
    StateDir(#[source] std::io::Error),
}

impl StoreError {
    /// The envelope category a failure of this kind belongs to.
    pub fn category(&self) -> Category {
        match self {
            StoreError::Sqlite { source, .. } => sqlite_category(source),
            StoreError::Pool(_) => Category::Transient,
            StoreError::Migration { .. } | StoreError::StateDir(_) => Category::Internal,
        }
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

fn sqlite_category(error: &rusqlite::Error) -> Category {
    match error {
        rusqlite::Error::SqliteFailure(failure, _) => match failure.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => Category::Transient,
            ErrorCode::ReadOnly
            | ErrorCode::PermissionDenied
            | ErrorCode::AuthorizationForStatementDenied => Category::Permission,
            ErrorCode::CannotOpen | ErrorCode::DiskFull => Category::Unavailable,
            _ => Category::Internal,
        },
        rusqlite::Error::QueryReturnedNoRows => Category::NotFound,
        _ => Category::Internal,
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
}

impl Store {
    /// Opens (creating if needed) `state_dir/cos.db` and brings its schema up to date.
    pub fn open(state_dir: &Path) -> Result<Store, StoreError> {
        configure_sqlite_once();
        std::fs::create_dir_all(state_dir).map_err(StoreError::StateDir)?;
        let path = state_dir.join("cos.db");
        let manager = SqliteConnectionManager::file(&path).with_init(|connection| {
            connection.busy_timeout(BUSY_TIMEOUT)?;
            // Every tool's statements stay prepared across calls on this connection.
            connection.set_prepared_statement_cache_capacity(128);
            connection.execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = NORMAL;
                 PRAGMA foreign_keys = ON;",
            )
        });
        let pool = r2d2::Pool::builder()
            .max_size(POOL_SIZE)
            .min_idle(Some(1))
            // A pooled SQLite connection does not go stale the way a network one
            // does; checking it on every checkout cost a statement per request.
            .test_on_check_out(false)
            .connection_timeout(POOL_WAIT)
            .build(manager)?;
        let store = Store { pool, path };
        store.migrate()?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `read` on a pooled connection (this thread's alone while it runs).
    pub fn read<T>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let connection = self.pool.get()?;
        read(&connection).map_err(|error| StoreError::on(&connection, error))
    }

    /// Like [`Store::read`], for bodies that return their own error type.
    pub fn view<T, E>(&self, read: impl FnOnce(&Connection) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let connection = self.pool.get().map_err(StoreError::from)?;
        read(&connection)
    }

    /// Runs `write` in a `BEGIN IMMEDIATE` transaction, committing only if it succeeds:
    /// a refused write leaves nothing behind.
    pub fn write<T, E>(&self, write: impl FnOnce(&Transaction) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let mut connection = self.pool.get().map_err(StoreError::from)?;
        let transaction = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|error| StoreError::Sqlite {
                source: error,
                databases: Vec::new(),
            })?;
        let value = write(&transaction)?;
        transaction.commit().map_err(|error| StoreError::Sqlite {
            source: error,
            databases: Vec::new(),
        })?;
        Ok(value)
    }

    /// The schema version this database is at.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        self.read(|connection| connection.query_row("PRAGMA user_version", [], |row| row.get(0)))
    }

    fn migrate(&self) -> Result<(), StoreError> {
        self.write(|transaction| {
            let current: i64 = transaction
                .query_row("PRAGMA user_version", [], |row| row.get(0))
                .map_err(|error| StoreError::on(transaction, error))?;
            for migration in MIGRATIONS.iter().filter(|m| m.version > current) {
                let apply = || -> rusqlite::Result<()> {
                    transaction.execute_batch(migration.sql)?;
                    transaction.pragma_update(None, "user_version", migration.version)
                };
                apply().map_err(|source| StoreError::Migration {
                    version: migration.version,
                    name: migration.name,
                    source,
                })?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_with_wal_foreign_keys_and_latest_schema() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let latest = MIGRATIONS.iter().map(|m| m.version).max().unwrap();
        assert_eq!(store.schema_version().unwrap(), latest);
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
        // reopening applies nothing twice
        drop(store);
        let again = Store::open(dir.path()).unwrap();
        assert_eq!(again.schema_version().unwrap(), latest);
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let result: Result<(), StoreError> = store.write(|tx| {
            tx.execute("INSERT INTO hub_meta(key, value) VALUES ('probe', 'x')", [])
                .map_err(|e| StoreError::on(tx, e))?;
            tx.execute("INSERT INTO no_such_table VALUES (1)", [])
                .map_err(|e| StoreError::on(tx, e))?;
            Ok(())
        });
        let error = result.unwrap_err();
        assert_eq!(error.category(), Category::Internal);
        assert!(
            error
                .databases()
                .iter()
                .any(|d| d.starts_with("main=") && d.ends_with("cos.db"))
        );
        let probe: Option<String> = store
            .read(|c| {
                c.query_row("SELECT value FROM hub_meta WHERE key = 'probe'", [], |r| {
                    r.get(0)
                })
                .map(Some)
                .or_else(|e| {
                    if e == rusqlite::Error::QueryReturnedNoRows {
                        Ok(None)
                    } else {
                        Err(e)
                    }
                })
            })
            .unwrap();
        assert_eq!(probe, None);
    }

    #[test]
    fn busy_and_locked_are_transient() {
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        assert_eq!(sqlite_category(&busy), Category::Transient);
        let read_only = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
            None,
        );
        assert_eq!(sqlite_category(&read_only), Category::Permission);
    }
}
