//! Search: one ranked query over code symbols, code text, documents and
//! tasks, identifier-aware (`parseHttpRequest` finds `parse_http_request`),
//! filterable, continuable and fresh.
//!
//! Owns its index (`schema.rs`, every statement in `records.rs`): a derived
//! copy of what the graph, the board and the documents hold, which it
//! follows by their revisions (`sync.rs`) through their public read
//! functions. It never writes another area's tables, and they never call
//! it. The query language is `query.rs`, what it becomes before the index
//! sees it `matching.rs`, the word index kept in memory `postings.rs`, the
//! ordering `rank.rs`; `follow.rs` catches it up ahead of queries while a
//! hub serves. It knows nothing of HTTP or MCP.

mod ascending;
mod collect;
mod compiled;
pub mod follow;
mod grams;
mod items;
mod kept;
mod matching;
pub mod model;
mod postings;
pub mod query;
mod rank;
mod reach;
mod records;
mod runs;
mod schema;
mod snippets;
mod standing;
mod sync;
mod texts;
pub mod tools;
mod words;

use crate::store::{Store, StoreError};
use crate::tools::{Area, Module, Registry};

/// The search area's switch.
pub const MODULE: Module = Module::new(
    "search",
    "one ranked search over code symbols, code text, documents and tasks",
);

pub const AREA: Area = Area {
    id: "search",
    module: MODULE,
    migrations: schema::MIGRATIONS,
    revision: Some(revision),
    register,
    search: None,
};

/// The index's revision: it moves whenever the index takes in a change.
pub fn revision(store: &Store) -> Result<i64, StoreError> {
    store.view(|c| Ok(records::Sources::read(c)?.indexed_revision()))
}

pub fn register(registry: &mut Registry) {
    registry.register::<tools::Search>();
    registry.register::<follow::SearchIndex>();
}
