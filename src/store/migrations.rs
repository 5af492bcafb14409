//! The schema, as an ordered list of migrations. A database records the last
//! version applied in `PRAGMA user_version`; never edit a released migration,
//! append a new one.

pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
}

pub const MIGRATIONS: &[Migration] = &[
    Migration {
    version: 1,
    name: "hub_meta",
    sql: "CREATE TABLE hub_meta (
              key   TEXT PRIMARY KEY,
              value TEXT NOT NULL
          ) STRICT;
          INSERT INTO hub_meta(key, value) VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));",
},
    Migration { version: 2, name: "board", sql: BOARD },
    Migration { version: 3, name: "graph", sql: GRAPH },
    Migration { version: 4, name: "graph_bindings", sql: GRAPH_BINDINGS },
];

/// Import bindings (`from m import f as g`) and the module a reference was made
/// through, so calls through aliases resolve to the bound symbol; an index on
/// (file, label) for symbol lookups inside a module. Clearing the
/// hashes makes the next index re-extract every file with the new extractor.
const GRAPH_BINDINGS: &str = "
ALTER TABLE graph_references ADD COLUMN module TEXT;
CREATE TABLE graph_bindings (
    file   INTEGER NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
    local  TEXT NOT NULL,
    module TEXT NOT NULL,
    symbol TEXT
);
CREATE INDEX graph_bindings_by_file ON graph_bindings(file, local);
-- the indexer adds new nodes to graph_nodes_fts in one statement per run: a
-- row trigger made FTS5 flush its buffer on every insert
DROP TRIGGER graph_nodes_fts_insert;
DROP INDEX graph_nodes_by_file;
-- edges are found by their source or target; an extractor index made SQLite
-- scan every resolved edge when an edit touched a few
DROP INDEX graph_edges_by_extractor;
CREATE INDEX graph_nodes_by_file ON graph_nodes(file, label);
-- bumped by every write that changes the graph: answers are cached per revision
CREATE TABLE graph_revision (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    revision INTEGER NOT NULL
);
INSERT INTO graph_revision(id, revision) VALUES (1, 0);
-- a file whose size and modification time are unchanged is not read again
ALTER TABLE graph_files ADD COLUMN modified_ns INTEGER;
UPDATE graph_files SET hash = '';
";

/// The knowledge graph: files with their content hashes, nodes, edges (each with
/// its extractor and confidence), and the references still to resolve across files.
const GRAPH: &str = "
CREATE TABLE graph_files (
    path         TEXT PRIMARY KEY,
    hash         TEXT NOT NULL,
    language     TEXT NOT NULL,
    bytes        INTEGER NOT NULL,
    parse_errors INTEGER NOT NULL,
    indexed_at   TEXT NOT NULL
) WITHOUT ROWID;
-- graph answers report max(indexed_at) as the graph's last update
CREATE INDEX graph_files_by_indexed_at ON graph_files(indexed_at);
CREATE TABLE graph_nodes (
    id         INTEGER PRIMARY KEY,
    uid        TEXT NOT NULL UNIQUE,
    kind       TEXT NOT NULL,
    label      TEXT NOT NULL,
    file       TEXT,
    line_start INTEGER,
    line_end   INTEGER
);
CREATE INDEX graph_nodes_by_file ON graph_nodes(file);
CREATE INDEX graph_nodes_by_label ON graph_nodes(label, kind);
CREATE TABLE graph_edges (
    source     INTEGER NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
    target     INTEGER NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    extractor  TEXT NOT NULL,
    confidence TEXT NOT NULL,
    PRIMARY KEY (source, target, kind)
) WITHOUT ROWID;
CREATE INDEX graph_edges_by_target ON graph_edges(target, kind);
CREATE INDEX graph_edges_by_extractor ON graph_edges(extractor);
CREATE TABLE graph_references (
    source INTEGER NOT NULL REFERENCES graph_nodes(id) ON DELETE CASCADE,
    kind   TEXT NOT NULL,
    name   TEXT NOT NULL
);
CREATE INDEX graph_references_by_source ON graph_references(source);
CREATE INDEX graph_references_by_name ON graph_references(name, kind);
CREATE VIRTUAL TABLE graph_nodes_fts USING fts5(
    label, uid, content='graph_nodes', content_rowid='id', tokenize=\"unicode61 tokenchars '_'\"
);
CREATE TRIGGER graph_nodes_fts_insert AFTER INSERT ON graph_nodes BEGIN
    INSERT INTO graph_nodes_fts(rowid, label, uid) VALUES (new.id, new.label, new.uid);
END;
CREATE TRIGGER graph_nodes_fts_delete AFTER DELETE ON graph_nodes BEGIN
    INSERT INTO graph_nodes_fts(graph_nodes_fts, rowid, label, uid) VALUES ('delete', old.id, old.label, old.uid);
END;
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
