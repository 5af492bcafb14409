//! The graph's tables, as the migrations that build them (versioned within
//! the graph; the store runs them in order).

use crate::store::Migration;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "graph",
        sql: GRAPH,
        legacy_version: Some(3),
    },
    Migration {
        version: 2,
        name: "graph_bindings",
        sql: GRAPH_BINDINGS,
        legacy_version: Some(4),
    },
    Migration {
        version: 3,
        name: "graph_meta",
        sql: GRAPH_META,
        legacy_version: None,
    },
    Migration {
        version: 4,
        name: "graph_receivers",
        sql: GRAPH_RECEIVERS,
        legacy_version: None,
    },
];

/// A call through an object of a known type keeps that type's name, so
/// resolution links it to that type's method and no other; each reference
/// says whether resolution found what it names, and each file counts its
/// calls and imports found and not found. Clearing the hashes makes the next
/// index re-extract every file.
const GRAPH_RECEIVERS: &str = "
ALTER TABLE graph_references ADD COLUMN receiver TEXT;
ALTER TABLE graph_references ADD COLUMN unresolved INTEGER NOT NULL DEFAULT 0;
ALTER TABLE graph_files ADD COLUMN calls_resolved INTEGER NOT NULL DEFAULT 0;
ALTER TABLE graph_files ADD COLUMN calls_unresolved INTEGER NOT NULL DEFAULT 0;
ALTER TABLE graph_files ADD COLUMN imports_resolved INTEGER NOT NULL DEFAULT 0;
ALTER TABLE graph_files ADD COLUMN imports_unresolved INTEGER NOT NULL DEFAULT 0;
UPDATE graph_files SET hash = '';
";

/// The graph's own settings (the rules it was built under) move out of the
/// hub's table, and the graph keeps the time of its last change beside its
/// revision: that time never goes back, even when files are removed. An empty
/// rules row makes the next index rebuild the graph under the current rules.
const GRAPH_META: &str = "
CREATE TABLE graph_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
ALTER TABLE graph_revision ADD COLUMN updated_at TEXT;
UPDATE graph_revision SET updated_at = (SELECT max(indexed_at) FROM graph_files);
DROP INDEX graph_files_by_indexed_at;
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
