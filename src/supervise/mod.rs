//! Agent evidence: when several formula-agents (researcher, analyst,
//! reviewer, ...) work one task, each records its output into a
//! session-scoped bundle, so the orchestrating agent and the people watching
//! see what was found, what degraded and what was retried.
//!
//! Owns its tables (`schema.rs`) and their SQL (`records.rs`), the role
//! registry (`roles.toml`, `roles.rs`) and the bundle files under
//! `$COS_AGENT_DIR` (`files.rs`), which it rewrites from the database after
//! every change. It knows nothing of HTTP or MCP, and no other area writes
//! its tables; tasks are named by their marker only, never read.

mod files;
pub mod model;
mod prompts;
mod record;
mod records;
mod roles;
mod schema;
mod searchable;
pub mod tools;

use crate::store::{SharedStore, StoreError};
use crate::tools::{Area, Module, Registry};

/// The evidence area's switch.
pub const MODULE: Module = Module::new(
    "supervise",
    "agent evidence bundles: formula-agents' outputs by session",
);

pub const AREA: Area = Area {
    id: "supervise",
    module: MODULE,
    migrations: schema::MIGRATIONS,
    team: Some(&schema::TEAM),
    revision: Some(|hub| revision(&hub.shared)),
    register,
    search: Some(&searchable::SEARCHABLE),
    resources: &[],
    prompts: prompts::PROMPTS,
    health: None,
};

/// The area's revision, bumped by every change from any process.
pub fn revision(store: &SharedStore) -> Result<i64, StoreError> {
    store.view(records::revision)
}

pub fn register(registry: &mut Registry) {
    registry
        .register::<tools::SuperviseRecordOutput>()
        .register::<tools::SuperviseRecordDiscovery>()
        .register::<tools::SuperviseRecordBacktrack>()
        .register::<tools::SuperviseBundle>()
        .register::<tools::SuperviseSessions>();
}
