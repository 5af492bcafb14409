//! The search index's tables, as the migrations that build them. The index
//! is derived: every row can be rebuilt from the graph, the board and the
//! documents, so a migration may drop it and let the next query refill it.

use crate::store::Migration;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "search",
        sql: SEARCH,
        legacy_version: None,
    },
    Migration {
        version: 2,
        name: "search words in memory",
        sql: WORDS_IN_MEMORY,
        legacy_version: None,
    },
    Migration {
        version: 3,
        name: "text before a document's first heading unnamed",
        sql: SECTIONS_AGAIN,
        legacy_version: None,
    },
    Migration {
        version: 4,
        name: "areas say which items are tests, units named by source",
        sql: TESTS_FROM_THE_AREAS,
        legacy_version: None,
    },
    Migration {
        version: 5,
        name: "vectors of an embedding model",
        sql: VECTORS,
        legacy_version: None,
    },
    Migration {
        version: 6,
        name: "the center pieces are distilled less",
        sql: "ALTER TABLE search_embedding ADD COLUMN center BLOB;",
        legacy_version: None,
    },
];

/// What semantic search keeps when an embedding model is set:
/// - `search_embedding`: the model (by `ModelFolder::id`) the vectors were
///   made with (vectors of another model are dropped, never compared), and
///   a count of the changes to the vectors, which the triggers move: a
///   query reads this one row to know its vectors in memory are current.
///   Version 6 adds `center`: what each piece was distilled less
///   (`semantic/encoder.rs`), so a new process need not distil it again.
/// - `search_piece_vectors`: the vector distilled for each word piece of the
///   model's vocabulary met so far (`semantic/encoder.rs`), so a restarted
///   hub distils only pieces it never met.
/// - `search_vectors`: one vector an item, quantised to signed bytes with
///   its scale; gone with its item (the trigger).
const VECTORS: &str = "
CREATE TABLE search_embedding (
    one     INTEGER PRIMARY KEY CHECK (one = 1),
    model   TEXT NOT NULL,
    changes INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE TABLE search_piece_vectors (
    piece  INTEGER PRIMARY KEY,
    scale  REAL NOT NULL,
    vector BLOB NOT NULL
) STRICT;
CREATE TABLE search_vectors (
    item   INTEGER PRIMARY KEY,
    scale  REAL NOT NULL,
    vector BLOB NOT NULL
) STRICT;
CREATE TRIGGER search_vectors_follow_items AFTER DELETE ON search_items BEGIN
    DELETE FROM search_vectors WHERE item = old.id;
END;
CREATE TRIGGER search_vectors_added AFTER INSERT ON search_vectors BEGIN
    UPDATE search_embedding SET changes = changes + 1;
END;
CREATE TRIGGER search_vectors_removed AFTER DELETE ON search_vectors BEGIN
    UPDATE search_embedding SET changes = changes + 1;
END;
";

/// Whether an item or a file is a test's comes from the area that offers it
/// (`tools::searchable`), kept in a column, and units are named by their
/// source (`graph:`, `board:`, `docs:`, `supervise:`). Every row goes, since
/// no unit keeps its name (items of a unit left behind would be found
/// twice), and the sources' revisions with them, so the next query indexes
/// everything again. Row ids are never reused (`AUTOINCREMENT`), and the
/// `writes:` counts stay and only grow.
const TESTS_FROM_THE_AREAS: &str = "
DELETE FROM search_items;
ALTER TABLE search_items ADD COLUMN test INTEGER NOT NULL DEFAULT 0;
DROP TABLE search_trigrams;
CREATE VIRTUAL TABLE search_trigrams USING fts5(
    grams, content='', contentless_delete=1, tokenize='ascii', detail='none'
);
DELETE FROM search_files;
ALTER TABLE search_files ADD COLUMN test INTEGER NOT NULL DEFAULT 0;
DELETE FROM search_units;
DELETE FROM search_sources WHERE substr(source, 1, 6) <> 'writes';
";

/// The documents' sections are built anew (the text before a document's
/// first heading no longer takes the title its first heading has): their
/// units are forgotten and the documents' source with them, so the next
/// query indexes every document again. The `writes:` counts stay.
const SECTIONS_AGAIN: &str = "
DELETE FROM search_units WHERE substr(unit, 1, 4) = 'doc:';
DELETE FROM search_sources WHERE source = 'docs';
";

/// The first version's tables; `WORDS_IN_MEMORY` changes them.
/// - `search_units`: what each indexed unit (a file, a task, a document)
///   was built from, so a refresh re-indexes only what changed.
/// - `search_items`: symbols, document sections and tasks (and, until
///   `WORDS_IN_MEMORY`, `search_words`: their identifier-aware words in a
///   contentless FTS5 table, one column per field).
/// - `search_files` and `search_trigrams`: the text of every indexed file
///   and the set of its lower-cased trigrams, each as a 32-bit hash token
///   (rowids only, `detail=none`). A prefilter: a hash shared by two
///   trigrams only adds candidates, and every candidate is verified line by
///   line. Each file's distinct trigrams are found before SQLite sees them,
///   which makes a cold index about three times faster than FTS5's own
///   trigram tokenizer (that one tokenizes every position).
/// - `search_sources`: the revision of each source area the index last
///   caught up with, and when; and a row per source, `writes:<source>`,
///   counting the commits that rewrote its units, so the index's revision
///   (the sum) moves with each of them and a source's count names one state
///   of its units (a database made before kept a single `writes` row, which
///   stays as it is).
const SEARCH: &str = "
CREATE TABLE search_units (
    unit        TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE search_items (
    id      INTEGER PRIMARY KEY,
    unit    TEXT NOT NULL,
    corpus  TEXT NOT NULL,
    kind    TEXT NOT NULL,
    name    TEXT NOT NULL,
    -- the name's identifier parts, space-separated: ranking compares them
    name_parts TEXT NOT NULL,
    target  TEXT NOT NULL,
    path    TEXT,
    line    INTEGER,
    lang    TEXT,
    status  TEXT,
    body    TEXT NOT NULL
) STRICT;
CREATE INDEX search_items_by_unit ON search_items(unit);
CREATE VIRTUAL TABLE search_words USING fts5(
    name, path, body, content='', contentless_delete=1,
    tokenize='unicode61 remove_diacritics 2'
);

CREATE TABLE search_files (
    id      INTEGER PRIMARY KEY,
    path    TEXT NOT NULL UNIQUE,
    lang    TEXT NOT NULL,
    content TEXT NOT NULL
) STRICT;
CREATE VIRTUAL TABLE search_trigrams USING fts5(
    grams, content='', contentless_delete=1, tokenize='ascii', detail='none'
);

CREATE TABLE search_sources (
    source     TEXT PRIMARY KEY,
    revision   INTEGER NOT NULL,
    updated_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
";

/// Items keep their words beside them (`words`: name, path and body, one a
/// line), and the word index is built in memory from them (`postings`), so
/// `search_words` goes. Item and file row ids are never reused
/// (`AUTOINCREMENT`): what is kept in memory of them (the word index, the
/// lines by run) follows them by the ids that came and went. Every unit is
/// forgotten, and the sources' revisions with them, so the next query
/// indexes everything again; the `writes:` counts stay and only grow, so the
/// index's revision, once caught up, is past every one a cursor was given.
const WORDS_IN_MEMORY: &str = "
DROP TABLE search_words;
DROP TABLE search_items;
CREATE TABLE search_items (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    unit    TEXT NOT NULL,
    corpus  TEXT NOT NULL,
    kind    TEXT NOT NULL,
    name    TEXT NOT NULL,
    name_parts TEXT NOT NULL,
    target  TEXT NOT NULL,
    path    TEXT,
    line    INTEGER,
    lang    TEXT,
    status  TEXT,
    body    TEXT NOT NULL,
    words   TEXT NOT NULL
) STRICT;
CREATE INDEX search_items_by_unit ON search_items(unit);
DROP TABLE search_trigrams;
DROP TABLE search_files;
CREATE TABLE search_files (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    path    TEXT NOT NULL UNIQUE,
    lang    TEXT NOT NULL,
    content TEXT NOT NULL
) STRICT;
CREATE VIRTUAL TABLE search_trigrams USING fts5(
    grams, content='', contentless_delete=1, tokenize='ascii', detail='none'
);
DELETE FROM search_units;
DELETE FROM search_sources WHERE substr(source, 1, 6) <> 'writes';
";

/// An empty search index in memory, for the tests of the modules that read it.
#[cfg(test)]
pub fn index_for_tests() -> rusqlite::Connection {
    let c = rusqlite::Connection::open_in_memory().expect("an in-memory database");
    for migration in MIGRATIONS {
        c.execute_batch(migration.sql)
            .expect("the search migrations");
    }
    c
}
