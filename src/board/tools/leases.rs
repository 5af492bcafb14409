//! Leases: a claim holds its task for a while. No one else may move a task
//! under a live lease; its holder renews it or ends it by moving the task;
//! one that runs out sends the task back to icebox (the ready pool), in its
//! history, at the next claim, move or renewal on any hub.

use serde::Deserialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::board::model::*;
use crate::board::records;
use crate::board::rules::refuse;
use crate::envelope::{Category, Code};
use crate::store::Session;
use crate::tools::{Answer, Source, Tool, ToolContext, ToolError, ToolSpec};

use super::writes::commit_change;
use super::{Writer, actor_for, require_task, spec};

/// How long a claim holds its task when the caller does not say.
pub const DEFAULT_LEASE_SECONDS: u32 = 900;
const LEASE_SECONDS: std::ops::RangeInclusive<u32> = 5..=86_400;

/// The lease length asked for, or the default; out of bounds is `E_ARGUMENT`.
pub(super) fn lease_seconds(asked: Option<u32>) -> Result<u32, ToolError> {
    let seconds = asked.unwrap_or(DEFAULT_LEASE_SECONDS);
    if LEASE_SECONDS.contains(&seconds) {
        Ok(seconds)
    } else {
        Err(ToolError::invalid(
            "lease_seconds",
            format!(
                "{} to {} seconds",
                LEASE_SECONDS.start(),
                LEASE_SECONDS.end()
            ),
        ))
    }
}

/// Refuses `actor` a task someone else holds under a live lease.
pub(super) fn check_lease(task: &Task, actor: &Actor) -> Result<(), ToolError> {
    match &task.lease {
        Some(lease) if lease.is_live(&crate::tools::now()) && lease.holder != actor.key() => {
            Err(refuse(
                Category::Conflict,
                Code::E_LEASE,
                format!(
                    "{} is held by {} until {}",
                    task.id, lease.holder, lease.expires_at
                ),
                json!({"lease": lease, "current": task}),
            ))
        }
        _ => Ok(()),
    }
}

/// Ends every lease that ran out: its task goes back to icebox (when still
/// in progress) with its assignee cleared, recorded as the lease's expiry.
pub(super) fn expire_leases(tx: &Session, source: Source) -> Result<(), ToolError> {
    let expiry = Writer {
        actor: Actor {
            kind: ActorKind::System,
            id: "lease-expiry".into(),
        },
        source,
        user: None,
    };
    for seq in records::expired_leases(tx, &crate::tools::now())? {
        let Some(before) = records::load_task(tx, seq)? else {
            continue;
        };
        let mut after = before.clone();
        after.lease = None;
        if before.status == Status::InProgress {
            after.status = Status::Icebox;
            after.assignee = None;
            after.position = records::end_position(tx, Status::Icebox)?;
        }
        commit_change(tx, seq, &before, after, None, &expiry)?;
    }
    Ok(())
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenewInput {
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub id: String,
    pub actor: Option<Actor>,
    /// Seconds from now (default 900).
    #[schema(minimum = 5, maximum = 86400)]
    pub lease_seconds: Option<u32>,
}

pub struct TaskRenewLease;

impl Tool for TaskRenewLease {
    type Input = RenewInput;
    type Output = Task;
    const SPEC: ToolSpec = spec(
        "cos_task_renew_lease",
        "Extends the actor's lease on a task it claimed. E_LEASE when the actor holds no live lease on it.",
    )
    .writing(false, true);

    fn run(context: &ToolContext, input: RenewInput) -> Result<Answer<Task>, ToolError> {
        let actor = actor_for(context, input.actor.clone())?;
        let seconds = lease_seconds(input.lease_seconds)?;
        context
            .hub
            .shared
            .write(|tx| {
                expire_leases(tx, context.source)?;
                let (seq, before) = require_task(tx, &input.id)?;
                match &before.lease {
                    Some(lease) if lease.holder == actor.key() => {}
                    held => {
                        let message = match held {
                            Some(lease) => format!("{} is held by {}, not {}", before.id, lease.holder, actor.key()),
                            None => format!("{} is under no lease (it expired, or was moved or never claimed); claim it again", before.id),
                        };
                        return Err(refuse(
                            Category::Conflict,
                            Code::E_LEASE,
                            message,
                            json!({"lease": held, "current": before}),
                        ));
                    }
                }
                let mut after = before.clone();
                after.lease = Some(Lease::for_seconds(actor.key(), seconds));
                commit_change(tx, seq, &before, after, None, &actor)
            })
            .map(Answer::from)
    }
}
