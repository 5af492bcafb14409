//! Running the migrations areas hand to the store. Each area's schema is an
//! ordered list of migrations with its own version numbers; the database
//! records the last version applied per area in `schema_versions`. Never edit
//! a released migration: append a new one.

use rusqlite::{Connection, OptionalExtension};
use std::collections::BTreeMap;

use super::StoreError;

pub struct Migration {
    /// 1, 2, ... within the area.
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
    /// The `PRAGMA user_version` this migration had when the hub kept one
    /// list for every area: a database from then is adopted without running
    /// again what it already holds.
    pub legacy_version: Option<i64>,
}

/// One area's tables, as the migrations that build them.
pub struct Schema {
    pub area: &'static str,
    pub migrations: &'static [Migration],
}

const VERSIONS_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_versions (
    area    TEXT PRIMARY KEY,
    version INTEGER NOT NULL
) WITHOUT ROWID";

/// Brings every schema up to date inside `transaction`, in the order given.
pub fn apply(transaction: &Connection, schemas: &[Schema]) -> Result<(), StoreError> {
    let fail = |error| StoreError::on(transaction, error);
    let adopting = !has_versions_table(transaction).map_err(fail)?;
    transaction.execute_batch(VERSIONS_TABLE).map_err(fail)?;
    if adopting {
        adopt_single_list(transaction, schemas).map_err(fail)?;
    }
    for schema in schemas {
        let current = version_of(transaction, schema.area).map_err(fail)?;
        for migration in schema.migrations.iter().filter(|m| m.version > current) {
            let run = || -> rusqlite::Result<()> {
                transaction.execute_batch(migration.sql)?;
                record(transaction, schema.area, migration.version)
            };
            run().map_err(|source| StoreError::Migration {
                area: schema.area,
                version: migration.version,
                name: migration.name,
                source,
            })?;
        }
    }
    Ok(())
}

/// The version of every area the database has a schema for.
pub fn versions(connection: &Connection) -> rusqlite::Result<BTreeMap<String, i64>> {
    let mut statement = connection.prepare("SELECT area, version FROM schema_versions")?;
    let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
    rows.collect()
}

fn has_versions_table(connection: &Connection) -> rusqlite::Result<bool> {
    connection
        .query_row(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_versions'",
            [],
            |_| Ok(()),
        )
        .optional()
        .map(|found| found.is_some())
}

/// Records, for a database written when one `user_version` counted every
/// area's migrations, which of each area's migrations it already holds.
fn adopt_single_list(transaction: &Connection, schemas: &[Schema]) -> rusqlite::Result<()> {
    let legacy: i64 = transaction.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if legacy == 0 {
        return Ok(());
    }
    for schema in schemas {
        let held = schema
            .migrations
            .iter()
            .filter(|m| m.legacy_version.is_some_and(|v| v <= legacy))
            .map(|m| m.version)
            .max();
        if let Some(version) = held {
            record(transaction, schema.area, version)?;
        }
    }
    Ok(())
}

fn version_of(connection: &Connection, area: &str) -> rusqlite::Result<i64> {
    connection
        .query_row(
            "SELECT version FROM schema_versions WHERE area = ?1",
            [area],
            |row| row.get(0),
        )
        .optional()
        .map(|version| version.unwrap_or(0))
}

fn record(connection: &Connection, area: &str, version: i64) -> rusqlite::Result<()> {
    connection.execute(
        "INSERT INTO schema_versions(area, version) VALUES (?1, ?2)
         ON CONFLICT(area) DO UPDATE SET version = excluded.version",
        rusqlite::params![area, version],
    )?;
    Ok(())
}
