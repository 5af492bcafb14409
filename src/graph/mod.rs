//! The knowledge graph of the repository's code and docs.
//!
//! Owns the graph's tables (graph_files, graph_nodes, graph_edges,
//! graph_references, graph_bindings, graph_nodes_fts, graph_revision,
//! graph_meta: `schema.rs`), its cache namespace, the extractors (tree-sitter),
//! the indexer and resolver (which write those tables) and `records` (every
//! query the tools make of them). Its tools are plain functions registered
//! with the runtime; it knows nothing of HTTP or MCP, and no other area
//! writes its tables.

pub mod analysis;
pub mod bindings;
pub mod changes;
mod crates;
pub mod doctor;
pub mod extract;
mod facts;
mod health;
pub mod index;
mod left_out;
pub mod plans;
mod prompts;
mod records;
pub mod rename;
mod resolve;
mod schema;
mod searchable;
mod text_languages;
pub mod tools;
pub mod watch;

use crate::store::{Store, StoreError};
use crate::tools::{Area, Module, Registry};

/// The graph's switch.
pub const MODULE: Module =
    Module::new("graph", "knowledge graph of the repository's code and docs");

/// What the graph's background work (re-indexing after a save) is called in
/// `HubState::pending`; answers report it as `graph_pending`.
pub const PENDING: &str = AREA.id;

/// The graph as the hub lists it.
pub const AREA: Area = Area {
    id: "graph",
    module: MODULE,
    migrations: schema::MIGRATIONS,
    team: None,
    revision: Some(|hub| revision(&hub.store)),
    register,
    search: Some(&searchable::SEARCHABLE),
    resources: &[],
    prompts: prompts::PROMPTS,
    health: Some(health::report),
};

pub use records::GraphNode;
use records::{files_with_hashes, nodes_in_file};

/// The names of the languages a file can be given: those the graph parses
/// first, then every language of the files it reads as text only.
pub fn language_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = facts::Language::ALL.iter().map(|l| l.name()).collect();
    for name in text_languages::names() {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The graph's revision, bumped by every index run that changed it.
pub fn revision(store: &Store) -> Result<i64, StoreError> {
    store.read(index::revision)
}

/// The graph's revision, read on a connection a caller holds already (to
/// read several areas' revisions in one visit to the pool).
pub fn revision_in(connection: &rusqlite::Connection) -> Result<i64, StoreError> {
    index::revision(connection).map_err(|error| StoreError::on(connection, error))
}

/// What the last index run left out although git tracks it (binary,
/// minified, too large): how many, and the first by path with the reason.
pub fn left_out_in(connection: &rusqlite::Connection) -> Result<index::LeftOutNow, StoreError> {
    index::left_out_now(connection).map_err(|error| StoreError::on(connection, error))
}

/// Whether a path is a test's: under a `test`/`tests`/`__tests__`/`spec`
/// folder (or `Tests`, `*.Tests`, `*Tests` as Swift and .NET name theirs), or
/// named `test_*`, `*_test.*`, `*_tests.*`, `*_spec.*`, `*.test.*`,
/// `*.spec.*`, or `*Test`/`*Tests`/`*Spec` on a JVM, .NET, PHP or Swift
/// source. The one rule for every tool that sets tests apart (the rename plan
/// lists their sites on their own; search ranks a test after the code it tests).
pub fn is_test_path(path: &str) -> bool {
    const TYPED: [&str; 7] = [".java", ".kt", ".scala", ".cs", ".php", ".swift", ".dart"];
    let mut segments = path.split('/');
    let file = segments.next_back().unwrap_or("");
    let in_test_folder = segments.any(|s| {
        matches!(s, "test" | "tests" | "__tests__" | "spec" | "Tests")
            || (s.ends_with("Tests") || s.ends_with(".Tests")) && s.len() > 5
    });
    let stem = file.split('.').next().unwrap_or(file);
    let typed_test = TYPED.iter().any(|ext| file.ends_with(ext))
        && (stem.ends_with("Test") || stem.ends_with("Tests") || stem.ends_with("Spec"));
    in_test_folder
        || typed_test
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || file.contains(".test.")
        || file.contains(".spec.")
}

/// Registers every graph tool.
pub fn register(registry: &mut Registry) {
    registry
        .register::<tools::GraphIndex>()
        .register::<tools::GraphSearch>()
        .register::<tools::GraphResolve>()
        .register::<tools::GraphContext>()
        .register::<analysis::GraphImpact>()
        .register::<analysis::GraphReferences>()
        .register::<rename::GraphRenamePlan>()
        .register::<plans::GraphTrace>()
        .register::<plans::GraphSimilar>()
        .register::<analysis::GraphPath>()
        .register::<analysis::GraphExport>()
        .register::<doctor::GraphDoctor>()
        .register::<changes::ChangesTool>();
}
