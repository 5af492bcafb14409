//! Moving tasks between columns and within one: the workflow's transition,
//! dependency and WIP rules are checked inside the writing transaction.

use crate::store::Session;
use serde::Deserialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::board::config::{BoardConfig, WipLimits};
use crate::board::model::*;
use crate::board::records;
use crate::board::rules::{self, refuse};
use crate::envelope::{Category, Code};
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

use super::leases::{check_lease, expire_leases};
use super::writes::commit_change;
use super::{Writer, actor_for, require_task, spec};

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
    /// A claim's: the task was found ready and the actor's WIP counted in
    /// the moving transaction, so neither is checked again.
    pub claimed: bool,
    /// The position at the end of `to`, when the caller read it already.
    pub end: Option<f64>,
}

impl Transition {
    pub fn new(from: Status, to: Status) -> Transition {
        Transition {
            from,
            to,
            lease: None,
            claimed: false,
            end: None,
        }
    }
}

pub(super) fn move_task(
    tx: &Session,
    wip: &WipLimits,
    seq: i64,
    before: Task,
    Transition {
        from,
        to,
        lease,
        claimed,
        end,
    }: Transition,
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
    if !claimed {
        if to == Status::InProgress {
            rules::check_dependencies_done(tx, &before)?;
        }
        rules::check_wip(tx, wip, to, &actor.key())?;
    }
    let mut after = before.clone();
    after.status = to;
    after.lease = lease;
    after.position = match end {
        Some(end) => end,
        None => records::end_position(tx, to)?,
    };
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
