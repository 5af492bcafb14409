//! Moving tasks between columns and within one, and claiming the next ready
//! task: the workflow's transition, dependency and WIP rules are checked
//! inside the writing transaction.

use crate::store::Session;
use serde::{Deserialize, Serialize};
use serde_json::json;
use utoipa::ToSchema;

use crate::board::config::{BoardConfig, WipLimits};
use crate::board::model::*;
use crate::board::records;
use crate::board::rules::{self, refuse};
use crate::envelope::{Category, Code};
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

use super::leases::{check_lease, expire_leases};
use super::reads::ReadyInput;
use super::writes::commit_change;
use super::{Writer, actor_for, require_task, spec};
use crate::board::filters::load_filtered;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveInput {
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub id: String,
    /// The status you saw it in (else STALE_STATE).
    pub from: Status,
    pub to: Status,
    pub actor: Option<Actor>,
}

pub struct TaskMove;

impl Tool for TaskMove {
    type Input = MoveInput;
    type Output = Task;
    const SPEC: ToolSpec = spec(
        "cos_task_move",
        "Moves a task to another status if it is still in `from`. Refused with E_TRANSITION (allowed targets), \
         E_WIP_LIMIT, E_DEPENDENCY_OPEN, E_LEASE or STALE_STATE (the task now).",
    ).writing(false, true);

    fn run(context: &ToolContext, input: MoveInput) -> Result<Answer<Task>, ToolError> {
        let actor = actor_for(context, input.actor.clone())?;
        context
            .hub
            .shared
            .write(|tx| {
                let config = BoardConfig::load_in(tx, &context.hub.config.state_dir)?;
                expire_leases(tx, context.source)?;
                let (seq, before) = require_task(tx, &input.id)?;
                move_task(
                    tx,
                    &config.wip,
                    seq,
                    before,
                    Transition::new(input.from, input.to),
                    &actor,
                )
            })
            .map(Answer::from)
    }
}

/// A move from one status to another, with the lease the task is to be
/// held under afterwards (a claim's); any other move ends the lease.
pub(super) struct Transition {
    pub from: Status,
    pub to: Status,
    pub lease: Option<Lease>,
}

impl Transition {
    pub fn new(from: Status, to: Status) -> Transition {
        Transition {
            from,
            to,
            lease: None,
        }
    }
}

pub(super) fn move_task(
    tx: &Session,
    wip: &WipLimits,
    seq: i64,
    before: Task,
    Transition { from, to, lease }: Transition,
    actor: &Writer,
) -> Result<Task, ToolError> {
    check_lease(&before, actor)?;
    if before.status != from {
        return Err(refuse(
            Category::Conflict,
            Code::STALE_STATE,
            format!(
                "{} is in {}, not {}; someone moved it first",
                before.id,
                before.status.as_str(),
                from.as_str()
            ),
            json!({"current": before}),
        ));
    }
    rules::check_transition(&before, to)?;
    if to == Status::InProgress {
        rules::check_dependencies_done(tx, &before)?;
    }
    rules::check_wip(tx, wip, to, &actor.key())?;
    let mut after = before.clone();
    after.status = to;
    after.lease = lease;
    after.position = records::end_position(tx, to)?;
    match to {
        Status::InProgress => {
            after.assignee = Some(actor.key());
            after.started_at.get_or_insert_with(crate::tools::now);
        }
        Status::Icebox => after.assignee = None,
        Status::Complete => after.completed_at = Some(crate::tools::now()),
        _ => {}
    }
    if before.status == Status::Complete && to != Status::Archive {
        after.completed_at = None;
    }
    commit_change(tx, seq, &before, after, None, actor)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RepositionInput {
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub id: String,
    /// Place the task just before this task (same column).
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub before: Option<String>,
    /// Place the task just after this task (same column).
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub after: Option<String>,
    pub actor: Option<Actor>,
}

pub struct TaskReposition;

impl Tool for TaskReposition {
    type Input = RepositionInput;
    type Output = Task;
    const SPEC: ToolSpec = spec(
        "cos_task_reposition",
        "Reorders a task within its column: exactly one of `before` or `after`, a task in the same column \
         (one elsewhere is STALE_STATE, with it in details.current).",
    ).writing(false, true);

    fn run(context: &ToolContext, input: RepositionInput) -> Result<Answer<Task>, ToolError> {
        let actor = actor_for(context, input.actor.clone())?;
        let (anchor_id, place_before) = match (&input.before, &input.after) {
            (Some(before), None) => (before.clone(), true),
            (None, Some(after)) => (after.clone(), false),
            _ => {
                return Err(ToolError::invalid_pair(
                    "before",
                    "after",
                    "exactly one of before or after",
                ));
            }
        };
        context
            .hub
            .shared
            .write(|tx| {
                let field = if place_before { "before" } else { "after" };
                let (seq, task) = require_task(tx, &input.id)?;
                let (anchor_seq, anchor) = require_task(tx, &anchor_id)?;
                if anchor_seq == seq {
                    return Err(ToolError::invalid_pair(
                        field,
                        "id",
                        "a task other than the one being repositioned",
                    ));
                }
                if anchor.status != task.status {
                    // the board as it is now, not the request, is at odds:
                    // either task may have moved since the caller read it
                    return Err(refuse(
                        Category::Conflict,
                        Code::STALE_STATE,
                        format!(
                            "{field}: {} is in {}, not in {} with {}; re-read the column and name a task in it",
                            anchor.id,
                            anchor.status.as_str(),
                            task.status.as_str(),
                            task.id
                        ),
                        json!({"field": field, "current": anchor}),
                    ));
                }
                let column = records::load_cards(
                    tx,
                    "t.status = ?1 AND t.seq <> ?2",
                    "t.position, t.seq",
                    &[task.status.as_str().into(), seq.into()],
                )?;
                let index = column.iter().position(|t| t.id == anchor.id).unwrap_or(0);
                let target = if place_before { index } else { index + 1 };
                let position = position_between(
                    column.get(target.wrapping_sub(1)).filter(|_| target > 0),
                    column.get(target),
                );
                let position = match position {
                    Some(position) => position,
                    None => {
                        records::respace(tx, &column)?;
                        target as f64 + 0.5
                    }
                };
                let mut after = task.clone();
                after.position = position;
                commit_change(tx, seq, &task, after, None, &actor)
            })
            .map(Answer::from)
    }
}

/// A position strictly between two neighbours, or `None` when they are too close to split.
pub(super) fn position_between(previous: Option<&Card>, next: Option<&Card>) -> Option<f64> {
    let position = match (previous, next) {
        (Some(p), Some(n)) => (p.position + n.position) / 2.0,
        (Some(p), None) => p.position + 1.0,
        (None, Some(n)) => n.position - 1.0,
        (None, None) => 1.0,
    };
    let clear = previous.is_none_or(|p| position > p.position)
        && next.is_none_or(|n| position < n.position);
    clear.then_some(position)
}

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
        let lease_seconds = super::leases::lease_seconds(input.lease_seconds)?;
        let filter = ReadyInput {
            kind: input.kind,
            priority: input.priority,
            label: input.label.clone(),
            swimlane: input.swimlane.clone(),
            epic: input.epic.clone(),
            limit: None,
            cursor: None,
        }
        .filter();
        context
            .hub
            .shared
            .write(|tx| {
                let config = BoardConfig::load_in(tx, &context.hub.config.state_dir)?;
                expire_leases(tx, context.source)?;
                rules::check_wip(tx, &config.wip, Status::InProgress, &actor.key())?;
                let candidates = load_filtered(
                    tx,
                    &filter,
                    records::READY,
                    &format!("{} LIMIT 1", records::READY_ORDER),
                    Vec::new(),
                )?;
                let Some(card) = candidates.into_iter().next() else {
                    return Ok(Claim {
                        task: None,
                        reason: Some(
                            "no task is ready: none in icebox with every dependency complete"
                                .into(),
                        ),
                    });
                };
                let (seq, task) = require_task(tx, &card.id)?;
                let transition = Transition {
                    from: Status::Icebox,
                    to: Status::InProgress,
                    lease: Some(Lease::for_seconds(actor.key(), lease_seconds)),
                };
                let moved = move_task(tx, &config.wip, seq, task, transition, &actor)?;
                Ok(Claim {
                    task: Some(moved),
                    reason: None,
                })
            })
            .map(Answer::from)
    }
}
