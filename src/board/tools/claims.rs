//! Claiming the next ready task. On a team database claims run beside one
//! another: each locks the task it takes and passes over those another
//! claim holds, and claims by one actor take turns (its WIP limit), while
//! every other board write still runs alone.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::board::config::BoardConfig;
use crate::board::filters::{TaskFilter, filtered_clause};
use crate::board::model::*;
use crate::board::records::{self, Claimable};
use crate::board::rules;
use crate::store::Session;
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

use super::leases::expire_leases;
use super::moves::{Transition, move_task};
use super::reads::ReadyInput;
use super::{Writer, actor_for, spec};

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimInput {
    /// Who claims (WIP counts per actor).
    pub actor: Option<Actor>,
    pub kind: Option<Kind>,
    pub priority: Option<Priority>,
    pub label: Option<String>,
    pub swimlane: Option<String>,
    pub epic: Option<String>,
    /// Seconds the claim holds the task unless renewed (default 900).
    #[schema(minimum = 5, maximum = 86400)]
    pub lease_seconds: Option<u32>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Claim {
    /// The task now in progress for the actor, or null when nothing is ready.
    pub task: Option<Task>,
    /// Why nothing was claimed.
    pub reason: Option<String>,
}

pub struct TaskClaimNext;

impl Tool for TaskClaimNext {
    type Input = ClaimInput;
    type Output = Claim;
    const SPEC: ToolSpec = spec(
        "cos_task_claim_next",
        "Atomically moves the highest-priority ready task to in_progress for the actor under a lease \
         (renewed by cos_task_renew_lease; expired, the task returns to icebox). No task goes to two claimers. \
         E_WIP_LIMIT when the actor is at its limit.",
    ).writing(false, false);

    fn run(context: &ToolContext, input: ClaimInput) -> Result<Answer<Claim>, ToolError> {
        let actor = actor_for(context, input.actor.clone())?;
        let claim = Claiming {
            lease_seconds: super::leases::lease_seconds(input.lease_seconds)?,
            filter: ReadyInput {
                kind: input.kind,
                priority: input.priority,
                label: input.label.clone(),
                swimlane: input.swimlane.clone(),
                epic: input.epic.clone(),
                limit: None,
                cursor: None,
            }
            .filter(),
            actor,
        };
        let shared = &context.hub.shared;
        let beside = shared.write_beside(&[actor_lock(&claim.actor.key())], |tx| {
            let now = crate::tools::now();
            let found = claim.pick(tx, &now)?;
            let lease_expired = match &found {
                Some(found) => found.lease_expired,
                None => records::has_expired_lease(tx, &now)?,
            };
            // expiring a lease moves a task another claim may hold: that is done alone
            if lease_expired {
                return Ok(None);
            }
            claim.take(context, tx, found).map(Some)
        })?;
        let claimed = match beside {
            Some(claimed) => claimed,
            None => shared.write(|tx| {
                expire_leases(tx, context.source)?;
                let found = claim.pick(tx, &crate::tools::now())?;
                claim.take(context, tx, found)
            })?,
        };
        Ok(Answer::from(claimed))
    }
}

/// One claim's request.
struct Claiming {
    actor: Writer,
    lease_seconds: u32,
    filter: TaskFilter,
}

impl Claiming {
    /// The best ready task the filter holds, locked against other claims.
    fn pick(&self, tx: &Session, now: &str) -> Result<Option<Claimable>, ToolError> {
        let (clause, parameters) = filtered_clause(tx, &self.filter, records::READY, Vec::new())?;
        let order = format!(
            "{} LIMIT 1{}",
            records::READY_ORDER,
            tx.dialect().lock_skipping_locked("t")
        );
        Ok(records::load_claimable(
            tx,
            &clause,
            &order,
            &parameters,
            Status::InProgress,
            now,
        )?)
    }

    /// Moves the task `pick` found to in_progress under the actor's lease,
    /// within its WIP limit.
    fn take(
        &self,
        context: &ToolContext,
        tx: &Session,
        found: Option<Claimable>,
    ) -> Result<Claim, ToolError> {
        let config = BoardConfig::load_in(tx, &context.hub.config.state_dir)?;
        rules::check_wip(tx, &config.wip, Status::InProgress, &self.actor.key())?;
        let Some(Claimable { task, end, .. }) = found else {
            return Ok(Claim {
                task: None,
                reason: Some(
                    "no task is ready: none in icebox with every dependency complete that another claim is not taking"
                        .into(),
                ),
            });
        };
        let seq = sequence_of(&task.id);
        let transition = Transition {
            from: Status::Icebox,
            to: Status::InProgress,
            lease: Some(Lease::for_seconds(self.actor.key(), self.lease_seconds)),
            claimed: true,
            end: Some(end),
        };
        let moved = move_task(tx, &config.wip, seq, task, transition, &self.actor)?;
        Ok(Claim {
            task: Some(moved),
            reason: None,
        })
    }
}

/// The key one actor's claims take turns on: their count in progress is
/// checked against its limit, so two of its claims must not run at once.
fn actor_lock(actor: &str) -> i32 {
    let hash = blake3::hash(actor.as_bytes());
    let bytes = hash.as_bytes();
    i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_actors_lock_is_its_own_and_the_same_every_time() {
        assert_eq!(actor_lock("agent:a"), actor_lock("agent:a"));
        assert_ne!(actor_lock("agent:a"), actor_lock("agent:b"));
    }
}
