//! The `cos_task_*` tools, one file per role: writes (create, edit), moves
//! (move, reposition), claims, leases (renewal, expiry), reads (show, history, search, dependencies,
//! ready) and the board view; what they share (the spec, the actor, loading
//! a task) is here. Validation (`board::validate`) and listing filters
//! (`board::filters`) are shared with the file import and paging.

mod claims;
mod leases;
mod moves;
mod reads;
mod view;
mod writes;

pub use claims::*;
pub use leases::{RenewInput, TaskRenewLease};
pub use moves::*;
pub use reads::*;
pub use view::*;
pub use writes::*;

use crate::store::Session;

use super::model::*;
use super::records;
use super::validate::{task_seq, unknown_task};
use crate::tools::{Source, ToolContext, ToolError, ToolSpec};

pub(super) const LAYER: &str = "tasks";
pub(super) const MAX_PAGE: u32 = 200;
pub(super) const DEFAULT_PAGE: u32 = 50;

pub(super) const fn spec(name: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        module: crate::board::MODULE,
        layer: LAYER,
        description,
        effect: crate::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    }
}

/// Who writes through a tool: the actor (given, else named after the front
/// door), the door, and the authenticated user the actor acts for. It
/// reads as its actor.
pub(super) struct Writer {
    pub actor: Actor,
    pub source: Source,
    pub user: Option<String>,
}

impl std::ops::Deref for Writer {
    type Target = Actor;
    fn deref(&self) -> &Actor {
        &self.actor
    }
}

impl Writer {
    /// The history's record of who wrote.
    pub fn author(&self) -> records::Author {
        records::Author {
            actor: self.actor.key(),
            source: self.source.as_str(),
            user: self.user.clone(),
        }
    }
}

/// The writer of a call: its actor, door and user.
pub(super) fn actor_for(context: &ToolContext, given: Option<Actor>) -> Result<Writer, ToolError> {
    Ok(Writer {
        actor: default_actor(context, given)?,
        source: context.source,
        user: context.user.as_ref().map(|user| user.name.clone()),
    })
}

/// The actor a call acts as: the one given, else one named after the front door.
fn default_actor(context: &ToolContext, given: Option<Actor>) -> Result<Actor, ToolError> {
    let actor = given.unwrap_or_else(|| match context.source {
        Source::Rest => Actor {
            kind: ActorKind::Human,
            id: "web".into(),
        },
        Source::Mcp => Actor {
            kind: ActorKind::Agent,
            id: "mcp".into(),
        },
        Source::Cli => Actor {
            kind: ActorKind::Human,
            id: std::env::var("USER").unwrap_or_else(|_| "cli".into()),
        },
        Source::Watcher => Actor {
            kind: ActorKind::System,
            id: "watcher".into(),
        },
    });
    actor.validate()?;
    Ok(actor)
}

pub(super) fn require_task(connection: &Session, id: &str) -> Result<(i64, Task), ToolError> {
    let seq = task_seq("id", id)?;
    let task = records::load_task(connection, seq)?.ok_or_else(|| unknown_task(id))?;
    Ok((seq, task))
}
