//! The `cos_docs_*` tools, by role: reads (mounts, list, read, read many,
//! history), writes (create, patch, move, delete, receipt) and checks (audit,
//! scan). What they share is here: the spec, the actor, and readiness (a
//! process finishes interrupted writes and audits the history before its
//! first documents call).

mod checks;
mod reads;
mod writes;

pub use checks::*;
pub use reads::*;
pub use writes::*;

use std::collections::BTreeSet;

use super::mounts::Mounts;
use super::{audit, disk, records, sync};
use crate::tools::{Source, ToolContext, ToolError, ToolSpec};

pub(super) const LAYER: &str = "documents";
/// The seed's compact response budget for document tools.
pub const COMPACT_BUDGET: usize = 16_384;

pub(super) const fn spec(name: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        module: crate::docs::MODULE,
        layer: LAYER,
        description,
        effect: crate::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    }
    .within_agent_budget(COMPACT_BUDGET)
}

/// The mounts, once this process has made the record whole: writes a crash
/// interrupted are finished (or their receipts marked unknown) and the
/// history is audited, so a tampered history refuses writes from the start.
pub(super) fn ready(context: &ToolContext) -> Result<Mounts, ToolError> {
    let config = &context.hub.config;
    let mounts = Mounts::load(&config.repo_root, &config.state_dir)?;
    crate::tools::area::once_per_database(&context.hub.store, "documents recovery", || {
        recover(context, &mounts)?;
        audit::run(&context.hub.store, None).map(|_| ())
    })?;
    Ok(mounts)
}

/// How old a temporary file must be before a start removes it.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(600);

/// Finishes every publication a crash left behind, and removes the
/// temporary files of writes that never committed.
fn recover(context: &ToolContext, mounts: &Mounts) -> Result<(), ToolError> {
    let store = &context.hub.store;
    let pending = store.view(records::all_publishing)?;
    for mount in &mounts.mounts {
        let Some(dir) = disk::open(mount, false)? else {
            continue;
        };
        for publishing in pending.iter().filter(|p| p.mount == mount.key) {
            sync::finish(store, &dir, publishing)?;
        }
        let mut folders: BTreeSet<String> = store
            .view(|c| records::documents_in(c, &mount.key))?
            .into_iter()
            .map(|(path, _)| {
                path.rsplit_once('/')
                    .map_or(String::new(), |(folder, _)| folder.to_string())
            })
            .collect();
        folders.insert(String::new());
        for folder in folders {
            dir.sweep_temps(&folder, STALE_TEMP);
        }
    }
    Ok(())
}

/// Who a write is recorded as: the one given, else one named after the front door.
pub(super) fn actor_for(context: &ToolContext, given: Option<&str>) -> Result<String, ToolError> {
    if let Some(actor) = given {
        if actor.chars().count() > 200 {
            return Err(ToolError::invalid("actor", "at most 200 characters"));
        }
        crate::tools::text::check_visible_name("actor", actor)?;
        return Ok(actor.trim().to_string());
    }
    Ok(match context.source {
        Source::Rest => "web".to_string(),
        Source::Mcp => "mcp".to_string(),
        Source::Cli => std::env::var("USER").unwrap_or_else(|_| "cli".into()),
        Source::Watcher => "watcher".to_string(),
    })
}
