//! The board: tasks on a Scrumban workflow (statuses, transition rules, WIP
//! limits, dependencies, history), race-safe moves and edits, and the board as
//! Markdown files.
//!
//! Owns the board's tables (tasks, task_dependencies, task_history,
//! board_swimlanes, tasks_fts, board_revision: `schema.rs`), their SQL
//! (`records.rs`), its cache namespace and `board.toml`. Its tools are plain functions
//! registered with the runtime; it knows nothing of HTTP or MCP, and no other
//! area writes its tables.

pub mod config;
pub mod files;
mod filters;
pub mod model;
mod paging;
mod prompts;
mod records;
mod resources;
mod rules;
mod schema;
mod searchable;
pub mod tools;
mod validate;

use crate::store::{Store, StoreError};
use crate::tools::{Area, Module, Registry};

/// The board's switch.
pub const MODULE: Module = Module::new("board", "task board with a Scrumban workflow");

/// The board as the hub lists it.
pub const AREA: Area = Area {
    id: "board",
    module: MODULE,
    migrations: schema::MIGRATIONS,
    revision: Some(revision),
    register,
    search: Some(&searchable::SEARCHABLE),
    resources: resources::RESOURCES,
    prompts: prompts::PROMPTS,
    health: None,
};

/// The board's revision, bumped by every write from any process.
pub fn revision(store: &Store) -> Result<i64, StoreError> {
    store.view(records::board_revision)
}

/// The board's revision, read on a connection a caller holds already.
pub fn revision_in(connection: &rusqlite::Connection) -> Result<i64, StoreError> {
    records::board_revision(connection)
}

/// Registers every board tool.
pub fn register(registry: &mut Registry) {
    registry
        .register::<tools::TaskCreate>()
        .register::<tools::TaskShow>()
        .register::<tools::TaskEdit>()
        .register::<tools::TaskMove>()
        .register::<tools::TaskReposition>()
        .register::<tools::TaskBoard>()
        .register::<tools::TaskHistory>()
        .register::<tools::TaskSearch>()
        .register::<tools::TaskDependencies>()
        .register::<tools::TaskDependents>()
        .register::<tools::TaskReady>()
        .register::<tools::TaskClaimNext>()
        .register::<files::BoardExport>()
        .register::<files::BoardImport>();
}
