//! The `cos_supervise_*` tools: recording (outputs, discoveries, backtracks)
//! and reading (a bundle, the sessions). What they share is here: the spec,
//! and readiness (a process makes every bundle file equal to its row before
//! its first call, finishing what a crash between the two left).

mod reads;
mod writes;

pub use reads::*;
pub use writes::*;

use super::files;
use super::roles::Roles;
use crate::tools::{ToolContext, ToolError, ToolSpec};

pub(super) const LAYER: &str = "routing";

/// Temporary bundle files older than this are what a crash left.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(600);

pub(super) const fn spec(name: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        module: crate::supervise::MODULE,
        layer: LAYER,
        description,
        effect: crate::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    }
}

/// The role registry, once this process has reconciled the bundle files.
pub(super) fn ready(context: &ToolContext) -> Result<Roles, ToolError> {
    let roles = Roles::load(&context.hub.config.state_dir)?;
    // once per hub (its own files), from wherever the sessions live
    crate::tools::area::once_per_database(&context.hub.store, "evidence bundle files", || {
        let dir = files::agent_dir(&context.hub.config);
        files::reconcile(&context.hub.shared, &dir, &roles.fields(), STALE_TEMP).map(|rewritten| {
            if rewritten > 0 {
                tracing::info!(rewritten, "bundle files rewritten from the database");
            }
        })
    })?;
    Ok(roles)
}
