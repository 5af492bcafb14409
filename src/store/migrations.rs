//! The schema, as an ordered list of migrations. A database records the last
//! version applied in `PRAGMA user_version`; never edit a released migration,
//! append a new one.

pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
}

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "hub_meta",
    sql: "CREATE TABLE hub_meta (
              key   TEXT PRIMARY KEY,
              value TEXT NOT NULL
          ) STRICT;
          INSERT INTO hub_meta(key, value) VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));",
}];
