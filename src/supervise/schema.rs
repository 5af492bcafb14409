//! The evidence tables, as the migrations that build them (versioned within
//! the supervise area; the store runs them in order): in the hub's SQLite
//! database, and the same tables in a team database on PostgreSQL.

use crate::store::Migration;
use crate::store::copy::SharedTable;
use crate::tools::area::Team;

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "evidence bundles",
    sql: EVIDENCE,
    legacy_version: None,
}];

/// - `supervise_sessions`: each session's bundle (slots and accumulators as
///   JSON) and its version, bumped by every change; the bundle file on disk
///   is rewritten from here, so this row is the truth after any crash.
/// - `supervise_dispatches`: one row per recorded output, in order.
const EVIDENCE: &str = "
CREATE TABLE supervise_sessions (
    session_id  TEXT PRIMARY KEY,
    task_marker TEXT NOT NULL,
    persona_id  TEXT NOT NULL,
    version     INTEGER NOT NULL,
    bundle      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX supervise_sessions_by_task ON supervise_sessions (task_marker, session_id);

CREATE TABLE supervise_dispatches (
    seq         INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL,
    task_marker TEXT NOT NULL,
    persona_id  TEXT NOT NULL,
    formula_id  TEXT NOT NULL,
    input_hash  TEXT NOT NULL,
    output_hash TEXT NOT NULL,
    latency_ms  INTEGER NOT NULL,
    status      TEXT NOT NULL,
    at          TEXT NOT NULL,
    error       TEXT
) STRICT;
CREATE INDEX supervise_dispatches_by_session ON supervise_dispatches (session_id, seq);

CREATE TABLE supervise_revision (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
) STRICT;
INSERT INTO supervise_revision (id, value) VALUES (1, 0);
";

/// Evidence in a team database: its migrations, and its tables as a copy moves them.
pub const TEAM: Team = Team {
    migrations: TEAM_MIGRATIONS,
    tables: &[
        SharedTable {
            name: "supervise_sessions",
            counter: false,
        },
        SharedTable {
            name: "supervise_dispatches",
            counter: false,
        },
        SharedTable {
            name: "supervise_revision",
            counter: true,
        },
    ],
    files: &[],
};

const TEAM_MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "evidence bundles",
    sql: TEAM_EVIDENCE,
    legacy_version: None,
}];

/// The same tables in a team database, text compared byte by byte as on SQLite.
const TEAM_EVIDENCE: &str = r#"
CREATE TABLE supervise_sessions (
    session_id  TEXT COLLATE "C" PRIMARY KEY,
    task_marker TEXT COLLATE "C" NOT NULL,
    persona_id  TEXT NOT NULL,
    version     BIGINT NOT NULL,
    bundle      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX supervise_sessions_by_task ON supervise_sessions (task_marker, session_id);

CREATE TABLE supervise_dispatches (
    seq         BIGSERIAL PRIMARY KEY,
    session_id  TEXT COLLATE "C" NOT NULL,
    task_marker TEXT NOT NULL,
    persona_id  TEXT NOT NULL,
    formula_id  TEXT NOT NULL,
    input_hash  TEXT NOT NULL,
    output_hash TEXT NOT NULL,
    latency_ms  BIGINT NOT NULL,
    status      TEXT NOT NULL,
    at          TEXT NOT NULL,
    error       TEXT
);
CREATE INDEX supervise_dispatches_by_session ON supervise_dispatches (session_id, seq);

CREATE TABLE supervise_revision (
    id    BIGINT PRIMARY KEY CHECK (id = 1),
    value BIGINT NOT NULL
);
INSERT INTO supervise_revision (id, value) VALUES (1, 0);
"#;
