//! Documents: Markdown files in mounts (named folders), written safely by
//! people and agents at once: compare-and-set on `{path, rev, hash}`,
//! request IDs with receipts, durable replacement, cursors bound to what they
//! page, and a hash-chained history whose audit refuses writes when it fails.
//!
//! Owns the documents' tables (`schema.rs`), their SQL (`records.rs`), its
//! cache namespace and `docs.toml` (`mounts.rs`). Files stay plain Markdown
//! on disk, reached only beneath their mount's directory handle (`disk.rs`).
//! The write protocol is in `write.rs`, keeping the record equal to the files
//! (outside edits, unfinished publications) in `sync.rs`. It knows nothing of
//! HTTP or MCP, and no other area writes its tables.

pub mod audit;
mod chain;
mod disk;
mod feed;
mod group;
mod heading_changes;
pub mod model;
pub mod mounts;
mod offload;
mod outlines;
mod paging;
pub mod patch;
mod paths;
mod records;
mod resources;
mod schema;
mod searchable;
mod sections;
mod sync;
pub mod tools;
pub mod watch;
mod write;

use crate::store::{Store, StoreError};
use crate::tools::{Area, Module, Registry};

/// The documents' switch.
pub const MODULE: Module = Module::new(
    "docs",
    "Markdown documents in mounts with safe concurrent writes",
);

/// The documents as the hub lists them.
pub const AREA: Area = Area {
    id: "docs",
    module: MODULE,
    migrations: schema::MIGRATIONS,
    team: None,
    revision: Some(|hub| revision(&hub.store)),
    register,
    search: Some(&searchable::SEARCHABLE),
    resources: resources::RESOURCES,
    prompts: &[],
    health: None,
};

/// The documents' revision, bumped by every change from any process.
pub fn revision(store: &Store) -> Result<i64, StoreError> {
    store.view(records::revision)
}

/// The documents' revision, read on a connection a caller holds already.
pub fn revision_in(connection: &rusqlite::Connection) -> Result<i64, StoreError> {
    records::revision(connection)
}

/// Registers every documents tool.
pub fn register(registry: &mut Registry) {
    registry
        .register::<tools::DocsMounts>()
        .register::<tools::DocsList>()
        .register::<tools::DocsRead>()
        .register::<tools::DocsReadMany>()
        .register::<tools::DocsCreate>()
        .register::<tools::DocsPatch>()
        .register::<tools::DocsMove>()
        .register::<tools::DocsDelete>()
        .register::<tools::DocsReceipt>()
        .register::<tools::DocsHistory>()
        .register::<tools::DocsAudit>()
        .register::<tools::DocsScan>();
}
