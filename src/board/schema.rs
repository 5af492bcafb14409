//! The board's tables, as the migrations that build them (versioned within the
//! board; the store runs them in order): in the hub's SQLite database, and
//! the same tables in a team database on PostgreSQL.

use crate::store::Migration;
use crate::store::copy::SharedTable;
use crate::tools::area::Team;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "board",
        sql: BOARD,
        legacy_version: Some(2),
    },
    Migration {
        version: 2,
        name: "task_leases",
        sql: LEASES,
        legacy_version: None,
    },
    Migration {
        version: 3,
        name: "history_users",
        sql: HISTORY_USERS,
        legacy_version: None,
    },
    Migration {
        version: 4,
        name: "tasks_by_readiness",
        sql: READINESS,
        legacy_version: None,
    },
];

/// The ready tasks in the order claims take them: a claim reads the first
/// one it may take without sorting the column (both dialects).
const READINESS: &str =
    "CREATE INDEX tasks_by_readiness ON tasks(status, priority, position, seq);";

/// The authenticated user each change was made as, beside its actor.
const HISTORY_USERS: &str = "ALTER TABLE task_history ADD COLUMN user_name TEXT;";

/// A claim's lease on a task, beside the task (so reading a card never
/// walks past a long description to reach it). A task's row is written
/// with every change of its lease, which bumps the board's revision.
const LEASES: &str = "
CREATE TABLE task_leases (
    task       INTEGER PRIMARY KEY REFERENCES tasks(seq) ON DELETE CASCADE,
    holder     TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX task_leases_by_expiry ON task_leases(expires_at);
";

/// Tasks, their dependencies and history, and full-text search over them.
/// `seq` is AUTOINCREMENT so a task number is never reused, even after deletion.
const BOARD: &str = "
CREATE TABLE tasks (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    title        TEXT NOT NULL,
    status       TEXT NOT NULL,
    kind         TEXT NOT NULL,
    priority     TEXT NOT NULL,
    swimlane     TEXT NOT NULL,
    epic         TEXT,
    labels       TEXT NOT NULL DEFAULT '[]',
    appetite     TEXT,
    refs         TEXT NOT NULL DEFAULT '[]',
    assignee     TEXT,
    position     REAL NOT NULL,
    version      INTEGER NOT NULL DEFAULT 1,
    created_at   TEXT NOT NULL,
    started_at   TEXT,
    completed_at TEXT,
    updated_at   TEXT NOT NULL,
    updated_by   TEXT NOT NULL,
    -- last, so reading any other column never walks a long description's overflow pages
    description  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX tasks_by_column ON tasks(status, position, seq);
CREATE INDEX tasks_by_completion ON tasks(status, coalesce(completed_at, '') DESC, seq DESC);
CREATE INDEX tasks_by_assignee ON tasks(assignee, status);

CREATE TABLE task_dependencies (
    task       INTEGER NOT NULL REFERENCES tasks(seq) ON DELETE CASCADE,
    depends_on INTEGER NOT NULL REFERENCES tasks(seq) ON DELETE CASCADE,
    PRIMARY KEY (task, depends_on),
    CHECK (task <> depends_on)
) WITHOUT ROWID;
CREATE INDEX task_dependents ON task_dependencies(depends_on, task);

CREATE TABLE task_history (
    id        INTEGER PRIMARY KEY,
    task      INTEGER NOT NULL REFERENCES tasks(seq) ON DELETE CASCADE,
    at        TEXT NOT NULL,
    actor     TEXT NOT NULL,
    source    TEXT NOT NULL,
    field     TEXT NOT NULL,
    old_value TEXT,
    new_value TEXT,
    version   INTEGER NOT NULL
);
CREATE INDEX task_history_by_task ON task_history(task, id);

CREATE TABLE board_swimlanes (name TEXT PRIMARY KEY) WITHOUT ROWID;

-- One counter that every write to the board bumps, inside the writing transaction,
-- from any process: readers compare it to decide whether a cached answer is current.
CREATE TABLE board_revision (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    revision INTEGER NOT NULL
);
INSERT INTO board_revision(id, revision) VALUES (1, 0);
CREATE TRIGGER board_revision_task_insert AFTER INSERT ON tasks BEGIN
    UPDATE board_revision SET revision = revision + 1 WHERE id = 1;
END;
CREATE TRIGGER board_revision_task_update AFTER UPDATE ON tasks BEGIN
    UPDATE board_revision SET revision = revision + 1 WHERE id = 1;
END;
CREATE TRIGGER board_revision_task_delete AFTER DELETE ON tasks BEGIN
    UPDATE board_revision SET revision = revision + 1 WHERE id = 1;
END;
CREATE TRIGGER board_revision_dependency_insert AFTER INSERT ON task_dependencies BEGIN
    UPDATE board_revision SET revision = revision + 1 WHERE id = 1;
END;
CREATE TRIGGER board_revision_dependency_delete AFTER DELETE ON task_dependencies BEGIN
    UPDATE board_revision SET revision = revision + 1 WHERE id = 1;
END;
CREATE TRIGGER board_revision_swimlane_insert AFTER INSERT ON board_swimlanes BEGIN
    UPDATE board_revision SET revision = revision + 1 WHERE id = 1;
END;

CREATE VIRTUAL TABLE tasks_fts USING fts5(
    title, description, content='tasks', content_rowid='seq', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER tasks_fts_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO tasks_fts(rowid, title, description) VALUES (new.seq, new.title, new.description);
END;
CREATE TRIGGER tasks_fts_delete AFTER DELETE ON tasks BEGIN
    INSERT INTO tasks_fts(tasks_fts, rowid, title, description) VALUES ('delete', old.seq, old.title, old.description);
END;
CREATE TRIGGER tasks_fts_update AFTER UPDATE OF title, description ON tasks BEGIN
    INSERT INTO tasks_fts(tasks_fts, rowid, title, description) VALUES ('delete', old.seq, old.title, old.description);
    INSERT INTO tasks_fts(rowid, title, description) VALUES (new.seq, new.title, new.description);
END;
";

/// The board in a team database: its migrations, and its tables as a copy moves them.
pub const TEAM: Team = Team {
    migrations: TEAM_MIGRATIONS,
    tables: &[
        SharedTable {
            name: "tasks",
            counter: false,
        },
        SharedTable {
            name: "task_dependencies",
            counter: false,
        },
        SharedTable {
            name: "task_history",
            counter: false,
        },
        SharedTable {
            name: "board_swimlanes",
            counter: false,
        },
        SharedTable {
            name: "task_leases",
            counter: false,
        },
        SharedTable {
            name: "board_revision",
            counter: true,
        },
    ],
    // swimlanes and WIP limits hold alike on every hub
    files: &[super::config::CONFIG_FILE],
};

const TEAM_MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "board",
        sql: TEAM_BOARD,
        legacy_version: None,
    },
    Migration {
        version: 2,
        name: "task_leases",
        sql: TEAM_LEASES,
        legacy_version: None,
    },
    Migration {
        version: 3,
        name: "history_users",
        sql: HISTORY_USERS,
        legacy_version: None,
    },
    Migration {
        version: 4,
        name: "tasks_by_readiness",
        sql: READINESS,
        legacy_version: None,
    },
    Migration {
        version: 5,
        name: "revision_at_commit",
        sql: TEAM_REVISION_AT_COMMIT,
        legacy_version: None,
    },
];

/// The board's revision moves as a transaction commits, not as it writes:
/// its one row is locked only for the commit, so claims running beside one
/// another do not queue on it for the rest of their transactions.
const TEAM_REVISION_AT_COMMIT: &str = "
DROP TRIGGER board_revision_tasks ON tasks;
DROP TRIGGER board_revision_dependencies ON task_dependencies;
DROP TRIGGER board_revision_swimlanes ON board_swimlanes;
CREATE CONSTRAINT TRIGGER board_revision_tasks AFTER INSERT OR UPDATE OR DELETE ON tasks
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION board_revision_bump();
CREATE CONSTRAINT TRIGGER board_revision_dependencies AFTER INSERT OR DELETE ON task_dependencies
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION board_revision_bump();
CREATE CONSTRAINT TRIGGER board_revision_swimlanes AFTER INSERT ON board_swimlanes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION board_revision_bump();
";

const TEAM_LEASES: &str = r#"
CREATE TABLE task_leases (
    task       BIGINT PRIMARY KEY REFERENCES tasks(seq) ON DELETE CASCADE,
    holder     TEXT COLLATE "C" NOT NULL,
    expires_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX task_leases_by_expiry ON task_leases(expires_at);
"#;

/// The board's tables on PostgreSQL: the same columns (64-bit integers, so
/// one statement text binds the same values on both), the revision bumped
/// by triggers as on SQLite, task numbers from `board_sequence` (never
/// reused), the text search by an expression index instead of FTS5, and
/// text compared byte by byte (`C`) so listings sort as on SQLite.
const TEAM_BOARD: &str = r#"
CREATE TABLE tasks (
    seq          BIGINT PRIMARY KEY,
    title        TEXT COLLATE "C" NOT NULL,
    status       TEXT COLLATE "C" NOT NULL,
    kind         TEXT COLLATE "C" NOT NULL,
    priority     TEXT COLLATE "C" NOT NULL,
    swimlane     TEXT COLLATE "C" NOT NULL,
    epic         TEXT COLLATE "C",
    labels       TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    appetite     TEXT COLLATE "C",
    refs         TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    assignee     TEXT COLLATE "C",
    position     DOUBLE PRECISION NOT NULL,
    version      BIGINT NOT NULL DEFAULT 1,
    created_at   TEXT COLLATE "C" NOT NULL,
    started_at   TEXT COLLATE "C",
    completed_at TEXT COLLATE "C",
    updated_at   TEXT COLLATE "C" NOT NULL,
    updated_by   TEXT COLLATE "C" NOT NULL,
    description  TEXT COLLATE "C" NOT NULL DEFAULT ''
);
CREATE INDEX tasks_by_column ON tasks(status, position, seq);
CREATE INDEX tasks_by_completion ON tasks(status, (coalesce(completed_at, '')) DESC, seq DESC);
CREATE INDEX tasks_by_assignee ON tasks(assignee, status);
CREATE INDEX tasks_text ON tasks USING gin (to_tsvector('simple', title || ' ' || description));

CREATE TABLE task_dependencies (
    task       BIGINT NOT NULL REFERENCES tasks(seq) ON DELETE CASCADE,
    depends_on BIGINT NOT NULL REFERENCES tasks(seq) ON DELETE CASCADE,
    PRIMARY KEY (task, depends_on),
    CHECK (task <> depends_on)
);
CREATE INDEX task_dependents ON task_dependencies(depends_on, task);

CREATE TABLE task_history (
    id        BIGSERIAL PRIMARY KEY,
    task      BIGINT NOT NULL REFERENCES tasks(seq) ON DELETE CASCADE,
    at        TEXT COLLATE "C" NOT NULL,
    actor     TEXT COLLATE "C" NOT NULL,
    source    TEXT COLLATE "C" NOT NULL,
    field     TEXT COLLATE "C" NOT NULL,
    old_value TEXT COLLATE "C",
    new_value TEXT COLLATE "C",
    version   BIGINT NOT NULL
);
CREATE INDEX task_history_by_task ON task_history(task, id);

CREATE TABLE board_swimlanes (name TEXT PRIMARY KEY);

CREATE TABLE board_sequence (
    id   BIGINT PRIMARY KEY CHECK (id = 1),
    last BIGINT NOT NULL
);
INSERT INTO board_sequence(id, last) VALUES (1, 0);

CREATE TABLE board_revision (
    id       BIGINT PRIMARY KEY CHECK (id = 1),
    revision BIGINT NOT NULL
);
INSERT INTO board_revision(id, revision) VALUES (1, 0);
CREATE FUNCTION board_revision_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE board_revision SET revision = revision + 1 WHERE id = 1;
    RETURN NULL;
END
$$;
CREATE TRIGGER board_revision_tasks AFTER INSERT OR UPDATE OR DELETE ON tasks
    FOR EACH ROW EXECUTE FUNCTION board_revision_bump();
CREATE TRIGGER board_revision_dependencies AFTER INSERT OR DELETE ON task_dependencies
    FOR EACH ROW EXECUTE FUNCTION board_revision_bump();
CREATE TRIGGER board_revision_swimlanes AFTER INSERT ON board_swimlanes
    FOR EACH ROW EXECUTE FUNCTION board_revision_bump();
"#;
