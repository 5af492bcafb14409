//! The documents' tables, as the migrations that build them (versioned within
//! the documents area; the store runs them in order).

use crate::store::Migration;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "documents",
        sql: DOCUMENTS,
        legacy_version: None,
    },
    Migration {
        version: 2,
        name: "document titles",
        sql: TITLES,
        legacy_version: None,
    },
    Migration {
        version: 3,
        name: "leaner write bookkeeping",
        sql: LEANER,
        legacy_version: None,
    },
];

/// Every write touched two pages that told nothing new: an index on the
/// unfinished publications (a handful of rows, and the lookup asks for a
/// path or a move's source, which it could not serve) and a counter that
/// counted history entries. The area's revision is now the history's last
/// `seq`: every change appends exactly one entry.
const LEANER: &str = "
DROP INDEX docs_publishing_by_document;
DROP TABLE docs_revision;
";

/// Each document's title (its first heading, else its file name), for listings.
const TITLES: &str = "ALTER TABLE docs_documents ADD COLUMN title TEXT NOT NULL DEFAULT '';";

/// - `docs_documents`: each document's identity now (a deleted one keeps its
///   row, so a document made again at its path continues its revisions), with
///   the file's size and modification time when the hub last saw it, to notice
///   edits made outside the hub without reading every file.
/// - `docs_contents`: every revision's text, deflated, by its BLAKE3 hash.
/// - `docs_history`: the hash chain; `entry_hash` covers `prev_hash` and a
///   canonical encoding of the entry.
/// - `docs_receipts`: each request ID's intent fingerprint and outcome.
/// - `docs_publishing`: writes committed here whose file is not yet known to
///   be in place (the redo journal a restart finishes).
/// - `docs_meta`: the audit's verdict when it failed (writes refused).
///
/// (Version 3 drops `docs_publishing_by_document` and `docs_revision`.)
const DOCUMENTS: &str = "
CREATE TABLE docs_documents (
    mount      TEXT NOT NULL,
    path       TEXT NOT NULL,
    rev        INTEGER NOT NULL,
    hash       TEXT NOT NULL,
    size       INTEGER NOT NULL,
    mtime_ns   INTEGER NOT NULL,
    deleted    INTEGER NOT NULL DEFAULT 0,
    seq        INTEGER NOT NULL,
    PRIMARY KEY (mount, path)
) STRICT, WITHOUT ROWID;

CREATE TABLE docs_contents (
    hash     TEXT PRIMARY KEY,
    size     INTEGER NOT NULL,
    deflated BLOB NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE docs_history (
    seq        INTEGER PRIMARY KEY,
    mount      TEXT NOT NULL,
    path       TEXT NOT NULL,
    rev        INTEGER NOT NULL,
    hash       TEXT NOT NULL,
    op         TEXT NOT NULL,
    actor      TEXT NOT NULL,
    source     TEXT NOT NULL,
    at         TEXT NOT NULL,
    from_path  TEXT,
    request_id TEXT,
    prev_hash  TEXT NOT NULL,
    entry_hash TEXT NOT NULL
) STRICT;
CREATE INDEX docs_history_by_document ON docs_history(mount, path, rev);

CREATE TABLE docs_receipts (
    request_id TEXT PRIMARY KEY,
    intent     TEXT NOT NULL,
    state      TEXT NOT NULL,
    receipt    TEXT NOT NULL,
    at         TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE docs_publishing (
    request_id TEXT PRIMARY KEY,
    mount      TEXT NOT NULL,
    path       TEXT NOT NULL,
    from_path  TEXT,
    temp       TEXT,
    hash       TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX docs_publishing_by_document ON docs_publishing(mount, path);

CREATE TABLE docs_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE docs_revision (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
) STRICT;
INSERT INTO docs_revision (id, value) VALUES (1, 0);
";
