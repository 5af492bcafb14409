//! The workflow rules every write obeys: transitions, WIP limits, open
//! dependencies and cycles. Each check reads inside the caller's
//! `BEGIN IMMEDIATE` transaction, so what it saw is still true at commit.

use crate::store::Session;
use serde_json::json;
use std::collections::{HashMap, HashSet};

use super::config::WipLimits;
use super::model::{Card, Status, Task, format_task_id};
use super::records;
use crate::envelope::{Category, Code, ErrorBody};
use crate::tools::ToolError;

pub fn refuse(
    category: Category,
    code: Code,
    message: String,
    details: serde_json::Value,
) -> ToolError {
    ToolError::from(ErrorBody::new(category, code, message).with_details(details))
}

pub fn check_transition(task: &Task, to: Status) -> Result<(), ToolError> {
    let allowed = task.status.allowed_targets();
    if allowed.contains(&to) {
        return Ok(());
    }
    let names: Vec<&str> = allowed.iter().map(|s| s.as_str()).collect();
    Err(refuse(
        Category::Validation,
        Code::E_TRANSITION,
        format!(
            "{} cannot move from {} to {}; allowed: {}",
            task.id,
            task.status.as_str(),
            to.as_str(),
            names.join(", ")
        ),
        json!({"field": "to", "from": task.status, "to": to, "allowed": names}),
    ))
}

/// Refuses when every task `task` depends on is not complete (archived counts as complete).
pub fn check_dependencies_done(connection: &Session, task: &Task) -> Result<(), ToolError> {
    let open = records::load_cards(
        connection,
        "t.seq IN (SELECT depends_on FROM task_dependencies WHERE task = ?1) AND t.status NOT IN ('complete', 'archive')",
        "t.seq",
        &[super::model::sequence_of(&task.id).into()],
    )?;
    if open.is_empty() {
        return Ok(());
    }
    let listed: Vec<serde_json::Value> = open
        .iter()
        .map(|t| json!({"id": t.id, "title": t.title, "status": t.status}))
        .collect();
    let ids: Vec<&str> = open.iter().map(|t| t.id.as_str()).collect();
    Err(refuse(
        Category::Conflict,
        Code::E_DEPENDENCY_OPEN,
        format!(
            "{} cannot start: it depends on {} which {} not complete",
            task.id,
            ids.join(", "),
            if ids.len() == 1 { "is" } else { "are" }
        ),
        json!({"open_dependencies": listed}),
    ))
}

/// Refuses a move into `to` that would exceed its WIP limit for `actor`.
pub fn check_wip(
    connection: &Session,
    limits: &WipLimits,
    to: Status,
    actor: &str,
) -> Result<(), ToolError> {
    let (limit, filter, order, scope, parameter) = if to == Status::InProgress {
        let Some(limit) = limits.per_actor_limit() else {
            return Ok(());
        };
        (
            limit,
            "t.status = 'in_progress' AND t.assignee = ?1",
            "t.assignee, t.status",
            format!("in_progress for {actor}"),
            actor.into(),
        )
    } else if let Some(limit) = limits.column_limit(to) {
        (
            limit,
            "t.status = ?1",
            "t.status, t.position",
            to.as_str().to_string(),
            to.as_str().into(),
        )
    } else {
        return Ok(());
    };
    let parameters = [parameter];
    // counted first: the occupants are read only for a refusal, which names them
    if records::count_tasks(connection, filter, order, &parameters, limit)? < i64::from(limit) {
        return Ok(());
    }
    let cards: Vec<Card> = records::load_cards(connection, filter, "t.position", &parameters)?;
    Err(refuse(
        Category::Conflict,
        Code::E_WIP_LIMIT,
        format!("the WIP limit of {limit} for {scope} is reached"),
        json!({"column": to, "limit": limit, "occupants": cards}),
    ))
}

/// If `task` depending on `depends_on` closes a loop, the loop as task ids (starting and ending at `task`).
pub fn find_cycle(
    connection: &Session,
    task: i64,
    depends_on: &[i64],
) -> Result<Option<Vec<String>>, ToolError> {
    let mut graph: HashMap<i64, Vec<i64>> = HashMap::new();
    for (from, to) in records::dependency_edges(connection)? {
        if from != task {
            graph.entry(from).or_default().push(to);
        }
    }
    graph.insert(task, depends_on.to_vec());
    Ok(path_back_to(&graph, task).map(|path| path.into_iter().map(format_task_id).collect()))
}

/// A path from `start` back to itself along `graph`, found depth-first.
fn path_back_to(graph: &HashMap<i64, Vec<i64>>, start: i64) -> Option<Vec<i64>> {
    let mut stack: Vec<(i64, usize)> = vec![(start, 0)];
    let mut on_path = vec![start];
    let mut seen = HashSet::new();
    while let Some((node, next)) = stack.last_mut() {
        let targets = graph.get(node).map(Vec::as_slice).unwrap_or(&[]);
        if *next >= targets.len() {
            stack.pop();
            on_path.pop();
            continue;
        }
        let target = targets[*next];
        *next += 1;
        if target == start {
            let mut cycle = on_path.clone();
            cycle.push(start);
            return Some(cycle);
        }
        if seen.insert(target) {
            stack.push((target, 0));
            on_path.push(target);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_cycle_path() {
        let graph: HashMap<i64, Vec<i64>> =
            [(1, vec![2]), (2, vec![3]), (3, vec![1]), (4, vec![1])]
                .into_iter()
                .collect();
        assert_eq!(path_back_to(&graph, 1), Some(vec![1, 2, 3, 1]));
        assert_eq!(path_back_to(&graph, 4), None);
        let chain: HashMap<i64, Vec<i64>> = [(1, vec![2, 3]), (2, vec![3])].into_iter().collect();
        assert_eq!(path_back_to(&chain, 1), None);
    }
}
