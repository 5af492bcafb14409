//! Search: one ranked query over every corpus the areas offer (code
//! symbols, code text, documents, tasks, agent evidence), identifier-aware
//! (`parseHttpRequest` finds `parse_http_request`), filterable, continuable
//! and fresh. It knows nothing of HTTP or MCP, and names no area: each area
//! declares what it offers (`tools::searchable`).
//!
//! - `index/`: the derived index in SQLite (its schema and every statement)
//!   and its catch-up with the areas' revisions, on a query's path or ahead
//!   of it in the background.
//! - `query/`: the query language, what a query reaches and the plan it
//!   becomes before it meets the index (word phrases, trigram prefilters,
//!   the line matcher).
//! - `memory/`: what a process keeps between queries: the inverted word
//!   index, file texts, the identifier runs of code lines, bounded caches.
//! - `rank/`: collecting a query's hits, ranking them deterministically, and
//!   cutting their snippets.
//! - `tools.rs` the `cos_search` tool, `model.rs` what it answers,
//!   `empty.rs` why an answer is empty.

mod empty;
mod index;
mod memory;
pub mod model;
mod modes;
pub mod query;
mod rank;
mod semantic;
pub mod tools;

pub use index::indexer;
pub use semantic::model as embedding_model;

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
    migrations: index::schema::MIGRATIONS,
    team: None,
    revision: Some(|hub| revision(&hub.store)),
    register,
    search: None,
    resources: &[],
    prompts: &[],
    health: Some(tools::health),
};

/// The index's revision: it moves whenever the index takes in a change.
pub fn revision(store: &Store) -> Result<i64, StoreError> {
    store.view(|c| Ok(index::records::Sources::read(c)?.indexed_revision()))
}

pub fn register(registry: &mut Registry) {
    registry.register::<tools::Search>();
    registry.register::<indexer::SearchIndex>();
}
