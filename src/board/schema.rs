//! The board's tables, as the migrations that build them (versioned within the
//! board; the store runs them in order).

use crate::store::Migration;

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "board",
    sql: BOARD,
    legacy_version: Some(2),
}];

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
