//! Where the state a team shares lives: in the hub's own SQLite database by
//! default, or in a team database on PostgreSQL that many hubs use at once.
//! The areas that can be shared run their SQL through a [`Session`] on
//! either, and never ask which unless their SQL differs.

use super::pg::PgStore;
use super::{Session, Store, StoreError};

#[derive(Clone)]
pub enum SharedStore {
    /// The hub's own database.
    Local(Store),
    /// A team database shared by many hubs.
    Team(PgStore),
}

impl SharedStore {
    /// The team database, when the shared state lives in one.
    pub fn team(&self) -> Option<&PgStore> {
        match self {
            SharedStore::Team(team) => Some(team),
            SharedStore::Local(_) => None,
        }
    }

    /// Where the shared state lives, for health and messages: a file, or
    /// `postgres user@host:port/database` (never a password).
    pub fn describe(&self) -> String {
        match self {
            SharedStore::Local(store) => format!("sqlite {}", store.path().display()),
            SharedStore::Team(team) => format!("postgres {}", team.name()),
        }
    }

    /// Runs `read` on a connection of its own.
    pub fn view<T, E>(&self, read: impl FnOnce(&Session) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        match self {
            SharedStore::Local(store) => {
                store.view(|connection| read(&Session::Sqlite(connection)))
            }
            SharedStore::Team(team) => team.view(read),
        }
    }

    /// Runs `read` on `connection`, a connection to the hub's own database
    /// a caller holds (so in its snapshot), when the shared state lives
    /// there; else in the team database.
    pub fn view_beside<T>(
        &self,
        connection: &rusqlite::Connection,
        read: impl FnOnce(&Session) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        match self {
            SharedStore::Local(_) => read(&Session::Sqlite(connection)),
            SharedStore::Team(team) => team.view(read),
        }
    }

    /// Runs `read` in one snapshot: every statement sees the same state.
    pub fn view_at_once<T, E>(&self, read: impl FnOnce(&Session) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        match self {
            SharedStore::Local(store) => {
                store.view_at_once(|connection| read(&Session::Sqlite(connection)))
            }
            SharedStore::Team(team) => team.view_at_once(read),
        }
    }

    /// Runs `write` in a transaction that commits only if it succeeds, one
    /// writer at a time (across every hub on a team database). Inside a
    /// tool call, the transaction records the call's request ID.
    pub fn write<T, E>(&self, write: impl FnOnce(&Session) -> Result<T, E>) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        self.write_unrecorded(|tx| {
            let value = write(tx)?;
            super::requests::record(tx)?;
            Ok(value)
        })
    }

    /// Runs `write` in a transaction that may run beside others made the
    /// same way, though never beside a [`SharedStore::write`] (in the hub's
    /// own database, one writer at a time as ever). Those beside it take
    /// turns on each of `keys`; `write` must lock the rows it changes
    /// (`Dialect::lock_skipping_locked`). `None` from `write` is a write
    /// that changed nothing: it is not recorded as the call's.
    pub fn write_beside<T, E>(
        &self,
        keys: &[i32],
        write: impl FnOnce(&Session) -> Result<Option<T>, E>,
    ) -> Result<Option<T>, E>
    where
        E: From<StoreError>,
    {
        let write = |tx: &Session| {
            let value = write(tx)?;
            if value.is_some() {
                super::requests::record(tx)?;
            }
            Ok(value)
        };
        match self {
            SharedStore::Local(store) => {
                store.write(|connection| write(&Session::Sqlite(connection)))
            }
            SharedStore::Team(team) => {
                let mut keys = keys.to_vec();
                // always taken in one order, so two writers never wait on each other
                keys.sort_unstable();
                keys.dedup();
                team.write_beside(&keys, write)
            }
        }
    }

    /// [`SharedStore::write`] without a request record: the hub's own
    /// bookkeeping around a call.
    pub fn write_unrecorded<T, E>(
        &self,
        write: impl FnOnce(&Session) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<StoreError>,
    {
        match self {
            SharedStore::Local(store) => {
                store.write(|connection| write(&Session::Sqlite(connection)))
            }
            SharedStore::Team(team) => team.write(write),
        }
    }
}
