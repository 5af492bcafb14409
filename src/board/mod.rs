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

use crate::store::StoreError;
use crate::tools::{Area, HubState, Module, Registry};

/// The board's switch.
pub const MODULE: Module = Module::new("board", "task board with a Scrumban workflow");

/// The board as the hub lists it.
pub const AREA: Area = Area {
    id: "board",
    module: MODULE,
    migrations: schema::MIGRATIONS,
    team: Some(&schema::TEAM),
    revision: Some(revision),
    register,
    search: Some(&searchable::SEARCHABLE),
    resources: resources::RESOURCES,
    prompts: prompts::PROMPTS,
    health: None,
};

/// The board's revision, bumped by every write from any process (on any
/// hub, with a team database).
pub fn revision(hub: &HubState) -> Result<i64, StoreError> {
    hub.shared.view(records::board_revision)
}

/// The board's revision as a reader holding a connection to the hub's own
/// database sees it: read on that connection (in its snapshot) when the
/// board lives there, else from the team database.
pub fn revision_in(hub: &HubState, connection: &rusqlite::Connection) -> Result<i64, StoreError> {
    hub.shared.view_beside(connection, records::board_revision)
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
        .register::<tools::TaskRenewLease>()
        .register::<files::BoardExport>()
        .register::<files::BoardImport>();
}
