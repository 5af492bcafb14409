//! A team database on PostgreSQL: a bounded pool of connections (each with
//! its prepared statements), the areas' PostgreSQL migrations run under an
//! advisory lock so hubs starting together do not race, and transactions
//! for the areas' SQL. Writes take one advisory lock for their transaction,
//! so writers from every hub queue one at a time as SQLite's do inside one;
//! writes that lock the rows they change share that lock with each other
//! instead, and reads never wait for it.

mod keys;
mod target;
mod transaction;
mod values;

use target::Target;
use transaction::{Kind, Open};

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::{Client, Statement};

use super::migrations::Migration;
use super::sql::{Row, Value, Write, for_postgres, inlined};
use super::{Session, StoreError};

/// Connections one hub keeps at most (PostgreSQL's `max_connections` is
/// shared by every hub, so the README says how many hubs a server serves).
pub const POOL_SIZE: u32 = 8;
/// How long a call waits for a connection before it is answered unavailable.
const POOL_WAIT: Duration = Duration::from_secs(5);
/// A statement running longer is cancelled by the server.
const STATEMENT_TIMEOUT_MS: u32 = 30_000;
/// Prepared statements one connection keeps; past it the cache starts again.
const STATEMENTS_KEPT: usize = 256;
/// The advisory lock the migrations run under (`cos-hub` and 2).
const MIGRATION_LOCK: i64 = 0x636f_732d_6875_6202;

/// An area's tables as PostgreSQL builds them.
#[derive(Clone, Copy)]
pub struct TeamSchema {
    pub area: &'static str,
    pub migrations: &'static [Migration],
}

/// One pooled connection and the statements prepared on it.
pub struct PgConnection {
    /// Always Some but while it is dropped.
    client: Option<Client>,
    statements: HashMap<String, Statement>,
    /// When it last went back to the pool in good order.
    returned_at: Option<std::time::Instant>,
}

/// A connection back in the pool for less than this is taken out again
/// without a round trip to check it: it answered a moment ago, and if the
/// server went away meanwhile its first statement says so as a check would.
const FRESH: Duration = Duration::from_secs(1);

/// The blocking client runs a small runtime of its own, and closing it
/// inside an async task (a hub's last handle dropped there) would panic:
/// there it is closed on a thread of its own instead.
impl Drop for PgConnection {
    fn drop(&mut self) {
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        if let Some(client) = self.client.take() {
            let closing = std::thread::Builder::new()
                .name("cos-pg-close".into())
                .spawn(move || drop(client));
            if let Err(error) = closing {
                tracing::warn!(%error, "a PostgreSQL connection was left to close by itself");
            }
        }
    }
}

struct Manager {
    config: postgres::Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
}

impl r2d2::ManageConnection for Manager {
    type Connection = PgConnection;
    type Error = postgres::Error;

    fn connect(&self) -> Result<PgConnection, postgres::Error> {
        let mut client = self.config.connect(self.tls.clone())?;
        client.batch_execute(&format!(
            "SET statement_timeout = {STATEMENT_TIMEOUT_MS}; SET idle_in_transaction_session_timeout = {STATEMENT_TIMEOUT_MS}; \
             SET default_transaction_read_only = on"
        ))?;
        Ok(PgConnection {
            client: Some(client),
            statements: HashMap::new(),
            returned_at: None,
        })
    }

    fn is_valid(&self, connection: &mut PgConnection) -> Result<(), postgres::Error> {
        if connection
            .returned_at
            .is_some_and(|at| at.elapsed() < FRESH)
        {
            return Ok(());
        }
        match &mut connection.client {
            Some(client) => client.simple_query("").map(|_| ()),
            None => Ok(()),
        }
    }

    /// Asked as a connection goes back to the pool.
    fn has_broken(&self, connection: &mut PgConnection) -> bool {
        let broken = connection.client.as_ref().is_none_or(Client::is_closed);
        connection.returned_at = (!broken).then(std::time::Instant::now);
        broken
    }
}

/// The hub's team database.
#[derive(Clone)]
pub struct PgStore {
    pool: r2d2::Pool<Manager>,
    name: Arc<str>,
    schemas: Arc<Vec<TeamSchema>>,
    migrated: Arc<(AtomicBool, Mutex<()>)>,
    /// Until when calls fail at once after the database could not be
    /// reached, and why: a call does not wait out the pool's timeout again
    /// and again while it is down.
    outage: Arc<Mutex<Option<(std::time::Instant, String)>>>,
}

/// How long a failure to reach the database is taken as its answer.
const OUTAGE_HOLD: Duration = Duration::from_secs(1);

impl PgStore {
    /// A store on `url` for `schemas`; connects lazily, so a hub starts (and
    /// keeps its local areas working) while the database is down, and the
    /// migrations run on the first connection made.
    pub fn open(url: &str, schemas: Vec<TeamSchema>) -> Result<PgStore, StoreError> {
        let Target { config, tls, name } = target::parse(url)?;
        let pool = r2d2::Pool::builder()
            .max_size(POOL_SIZE)
            .min_idle(Some(0))
            .connection_timeout(POOL_WAIT)
            .test_on_check_out(true)
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build_unchecked(Manager { config, tls });
        Ok(PgStore {
            pool,
            name: name.into(),
            schemas: Arc::new(schemas),
            migrated: Arc::default(),
            outage: Arc::default(),
        })
    }

    /// `user@host:port/database`: never the password.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn fail(&self) -> impl Fn(postgres::Error) -> StoreError + '_ {
        move |source| StoreError::Postgres {
            source,
            database: self.name.to_string(),
        }
    }

    fn closed(&self) -> StoreError {
        StoreError::Unreachable {
            database: self.name.to_string(),
            reason: "the connection was closed".into(),
        }
    }

    /// A pooled connection, the schemas brought up to date first.
    fn connection(&self) -> Result<r2d2::PooledConnection<Manager>, StoreError> {
        let unreachable = |reason: String| StoreError::Unreachable {
            database: self.name.to_string(),
            reason,
        };
        {
            let outage = self
                .outage
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some((until, reason)) = &*outage
                && std::time::Instant::now() < *until
            {
                return Err(unreachable(reason.clone()));
            }
        }
        let mut connection = self.pool.get().map_err(|error| {
            // every connection open and busy: the hub is busy, the database is there
            if self.pool.state().connections >= POOL_SIZE {
                return StoreError::Pool(error);
            }
            let reason = error.to_string();
            *self
                .outage
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) =
                Some((std::time::Instant::now() + OUTAGE_HOLD, reason.clone()));
            unreachable(reason)
        })?;
        let (done, lock) = &*self.migrated;
        if !done.load(Ordering::Acquire) {
            let _one_at_a_time = lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if !done.load(Ordering::Acquire) {
                let client = connection.client.as_mut().ok_or_else(|| self.closed())?;
                migrate(client, &self.schemas).map_err(|error| match error {
                    Migrating::Postgres(source) => self.fail()(source),
                    Migrating::Step {
                        area,
                        version,
                        name,
                        source,
                    } => StoreError::TeamMigration {
                        area,
                        version,
                        name,
                        database: self.name.to_string(),
                        source,
                    },
                })?;
                done.store(true, Ordering::Release);
            }
        }
        Ok(connection)
    }

    /// Checks the database answers now (and is migrated): for a start-up
    /// message and health.
    pub fn check(&self) -> Result<(), StoreError> {
        let mut connection = self.connection()?;
        let client = connection.client.as_mut().ok_or_else(|| self.closed())?;
        client.simple_query("").map(|_| ()).map_err(self.fail())
    }

    /// Runs `read`, each statement on its own (read-only, and no round
    /// trips to open or end a transaction).
    pub fn view<T, E>(&self, read: impl FnOnce(&Session) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.run(Kind::Reads, read)
    }

    /// Runs `read` in one read-only snapshot: every statement sees the same state.
    pub fn view_at_once<T, E>(&self, read: impl FnOnce(&Session) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.run(Kind::Snapshot, read)
    }

    /// Runs `write` in a transaction holding the write lock, committing only
    /// if it succeeds; a connection lost during the commit is
    /// [`StoreError::CommitUnknown`], never a guess.
    pub fn write<T, E>(&self, write: impl FnOnce(&Session) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.run(Kind::Alone, write)
    }

    /// Runs `write` beside other writes of its kind but never beside a
    /// [`PgStore::write`], holding each of `keys` (one writer at a time per
    /// key). It must lock every row it changes (`FOR UPDATE`), since others
    /// of its kind run at once.
    pub fn write_beside<T, E>(
        &self,
        keys: &[i32],
        write: impl FnOnce(&Session) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.run(Kind::Beside(keys), write)
    }

    fn run<T, E>(&self, kind: Kind<'_>, body: impl FnOnce(&Session) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        let mut connection = self.connection()?;
        let PgConnection {
            client, statements, ..
        } = &mut *connection;
        let client = client.as_mut().ok_or_else(|| self.closed())?;
        let open = Open::begin(client, &kind).map_err(self.fail())?;
        let session = Session::Postgres(PgSession {
            open: RefCell::new(open),
            statements: RefCell::new(statements),
            name: &self.name,
            at_commit: RefCell::new(None),
        });
        let value = body(&session)?;
        let Session::Postgres(session) = session else {
            return Err(StoreError::NoRows.into());
        };
        let last = session.at_commit.into_inner();
        session.open.into_inner().commit(last).map_err(|source| {
            if kind.writes() && is_connection_error(&source) {
                StoreError::CommitUnknown {
                    database: self.name.to_string(),
                    reason: source.to_string(),
                    request: super::requests::latest(),
                }
            } else {
                self.fail()(source)
            }
        })?;
        Ok(value)
    }
}

/// A transaction on one pooled connection (or, for reads, the connection).
pub struct PgSession<'c> {
    open: RefCell<Open<'c>>,
    statements: RefCell<&'c mut HashMap<String, Statement>>,
    name: &'c str,
    /// A write sent with the `COMMIT`, its values written in.
    at_commit: RefCell<Option<String>>,
}

impl PgSession<'_> {
    fn fail(&self, source: postgres::Error) -> StoreError {
        StoreError::Postgres {
            source,
            database: self.name.to_string(),
        }
    }

    /// `sql`, prepared once on this connection.
    fn prepared(&self, client: &mut Client, sql: &str) -> Result<Statement, StoreError> {
        let mut statements = self.statements.borrow_mut();
        if let Some(statement) = statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = client
            .prepare(&for_postgres(sql))
            .map_err(|error| self.fail(error))?;
        if statements.len() >= STATEMENTS_KEPT {
            statements.clear();
        }
        statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    pub fn query(&self, sql: &str, parameters: &[Value]) -> Result<Vec<Row>, StoreError> {
        let mut open = self.open.borrow_mut();
        let statement = self.prepared(open.client, sql)?;
        let bound = values::bind(parameters);
        let rows = open
            .client
            .query(&statement, &bound)
            .map_err(|error| self.fail(error))?;
        rows.iter().map(values::row).collect()
    }

    pub fn execute_at_commit(&self, write: Write) -> Result<(), StoreError> {
        let mut at_commit = self.at_commit.borrow_mut();
        match inlined(&write.sql, &write.parameters) {
            Some(sql) if at_commit.is_none() && self.open.borrow().in_transaction() => {
                *at_commit = Some(sql);
                Ok(())
            }
            _ => self.execute(&write.sql, &write.parameters).map(|_| ()),
        }
    }

    pub fn execute(&self, sql: &str, parameters: &[Value]) -> Result<u64, StoreError> {
        let mut open = self.open.borrow_mut();
        let statement = self.prepared(open.client, sql)?;
        let bound = values::bind(parameters);
        open.client
            .execute(&statement, &bound)
            .map_err(|error| self.fail(error))
    }
}

enum Migrating {
    Postgres(postgres::Error),
    Step {
        area: &'static str,
        version: i64,
        name: &'static str,
        source: postgres::Error,
    },
}

impl From<postgres::Error> for Migrating {
    fn from(error: postgres::Error) -> Migrating {
        Migrating::Postgres(error)
    }
}

/// Brings every schema up to date in one transaction under the migration
/// lock: a second hub starting at the same moment waits, then finds them done.
fn migrate(client: &mut Client, schemas: &[TeamSchema]) -> Result<(), Migrating> {
    // the connection's transactions are read-only unless they say not
    let mut transaction = client.build_transaction().read_only(false).start()?;
    transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    transaction.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_versions (area TEXT PRIMARY KEY, version BIGINT NOT NULL)",
    )?;
    for schema in schemas {
        let current: i64 = transaction
            .query_opt(
                "SELECT version FROM schema_versions WHERE area = $1",
                &[&schema.area],
            )?
            .map(|row| row.get(0))
            .unwrap_or(0);
        for migration in schema.migrations.iter().filter(|m| m.version > current) {
            transaction
                .batch_execute(migration.sql)
                .map_err(|source| Migrating::Step {
                    area: schema.area,
                    version: migration.version,
                    name: migration.name,
                    source,
                })?;
            transaction.execute(
                "INSERT INTO schema_versions(area, version) VALUES ($1, $2)
                 ON CONFLICT(area) DO UPDATE SET version = excluded.version",
                &[&schema.area, &migration.version],
            )?;
        }
    }
    transaction.commit()?;
    Ok(())
}

/// True when `error` means the connection is gone (the server down or
/// restarting, the network cut), not that the server refused a statement.
pub fn is_connection_error(error: &postgres::Error) -> bool {
    use postgres::error::SqlState;
    if error.is_closed() {
        return true;
    }
    match error.code() {
        Some(code) => {
            code.code().starts_with("08")
                || [
                    SqlState::ADMIN_SHUTDOWN,
                    SqlState::CRASH_SHUTDOWN,
                    SqlState::CANNOT_CONNECT_NOW,
                ]
                .contains(code)
        }
        None => std::error::Error::source(error)
            .is_some_and(|source| source.downcast_ref::<std::io::Error>().is_some()),
    }
}
