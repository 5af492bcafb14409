//! Reading tasks: one task, its history, text search, dependencies and
//! dependents, and the tasks ready to start.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::board::model::*;
use crate::board::records;
use crate::tools::cursor::Offsets;
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

use super::{require_task, spec};
use crate::board::filters::{TaskFilter, count_filtered, filtered_clause, load_filtered};
use crate::board::validate::check_limit;

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct TaskRef {
    /// TASK-<n>
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub id: String,
}

pub struct TaskShow;

impl Tool for TaskShow {
    type Input = TaskRef;
    type Output = Task;
    const SPEC: ToolSpec = spec(
        "cos_task_show",
        "Shows one task in full, with its description and dependencies.",
    );

    fn run(context: &ToolContext, input: TaskRef) -> Result<Answer<Task>, ToolError> {
        context
            .hub
            .shared
            .view(|c| require_task(c, &input.id))
            .map(|(_, task)| task)
            .map(Answer::from)
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryInput {
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub id: String,
    /// Entries to return, newest first (1 to 1000, default 200).
    #[schema(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    /// A previous answer's `next_cursor`: the older entries after it.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct History {
    pub id: String,
    /// Newest first.
    pub history: Vec<HistoryEntry>,
    /// Entries in all.
    pub total: u64,
    /// Pass back as `cursor` for the older entries; null when none remain.
    pub next_cursor: Option<String>,
}

pub struct TaskHistory;

impl Tool for TaskHistory {
    type Input = HistoryInput;
    type Output = History;
    const SPEC: ToolSpec = spec(
        "cos_task_history",
        "Every status change and field edit of a task, newest first: field, old, new, actor, time, source. \
         Paged by next_cursor.",
    )
    .cutting_first(&["history"]);

    fn run(context: &ToolContext, input: HistoryInput) -> Result<Answer<History>, ToolError> {
        let limit = check_limit("limit", input.limit, 200, 1000)?;
        context.hub.shared.view(|c| {
            let (seq, task) = require_task(c, &input.id)?;
            // a task's history changes only with its version: offsets hold until then
            let offsets = Offsets::new(
                &context.hub.cursors,
                Self::SPEC.name,
                &task.id,
                task.version,
            );
            let start = offsets.start("cursor", input.cursor.as_deref())?;
            let (history, total) = records::history_page(c, seq, start, limit)?;
            let more = start + history.len() < total as usize;
            Ok(Answer::new(History {
                next_cursor: offsets.next(start, history.len(), more),
                id: task.id,
                history,
                total,
            })
            .with_page(offsets.page("/history", "/next_cursor", start)))
        })
    }
}

#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchInput {
    /// Words all in the title or description (prefix match); text
    /// without words (`->`) is found as written.
    #[schema(format = "cos-not-blank")]
    #[param(format = "cos-not-blank")]
    pub text: Option<String>,
    pub status: Option<Status>,
    pub kind: Option<Kind>,
    pub priority: Option<Priority>,
    pub label: Option<String>,
    pub swimlane: Option<String>,
    pub epic: Option<String>,
    /// 1 to 500, default 50.
    #[schema(minimum = 1, maximum = 500)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
    /// Results to skip.
    pub offset: Option<u32>,
    /// A previous answer's `next_cursor`: the results after it (instead of `offset`).
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CardList {
    pub results: Vec<Card>,
    /// Cards in `results`.
    pub count: u64,
    /// Matching tasks in all.
    pub total_count: u64,
    /// Pass back as `cursor` for the results after these; null when none remain.
    pub next_cursor: Option<String>,
}

pub struct TaskSearch;

impl Tool for TaskSearch {
    type Input = SearchInput;
    type Output = CardList;
    const SPEC: ToolSpec = spec(
        "cos_task_search",
        "Finds tasks by words in title or description and by status, kind, priority, label, swimlane or epic.",
    );

    fn run(context: &ToolContext, input: SearchInput) -> Result<Answer<CardList>, ToolError> {
        let limit = check_limit("limit", input.limit, 50, 500)?;
        if input.cursor.is_some() && input.offset.is_some() {
            return Err(ToolError::invalid_pair(
                "cursor",
                "offset",
                "either cursor or offset, not both",
            ));
        }
        let filter = TaskFilter {
            status: input.status,
            kind: input.kind,
            priority: input.priority,
            label: input.label.clone(),
            swimlane: input.swimlane.clone(),
            epic: input.epic.clone(),
            text: input.text.clone(),
        };
        context.hub.shared.view(|c| {
            let revision = records::board_revision(c)?;
            let offsets = Offsets::new(&context.hub.cursors, Self::SPEC.name, &filter, revision);
            let start = match input.offset {
                Some(offset) => offset as usize,
                None => offsets.start("cursor", input.cursor.as_deref())?,
            };
            let total_count: u64 = count_filtered(c, &filter)?.iter().map(|(_, n)| n).sum();
            let order = format!("t.priority, t.seq DESC LIMIT {limit} OFFSET {start}");
            let results = load_filtered(c, &filter, "", &order, Vec::new())?;
            let more = start + results.len() < total_count as usize;
            Ok(Answer::new(CardList {
                count: results.len() as u64,
                next_cursor: offsets.next(start, results.len(), more),
                results,
                total_count,
            })
            .with_page(offsets.page("/results", "/next_cursor", start)))
        })
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Dependencies {
    pub id: String,
    /// What this task waits for.
    pub dependencies: Vec<Card>,
    /// Those not yet complete.
    pub open: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Dependents {
    pub id: String,
    /// Tasks that wait for this one.
    pub dependents: Vec<Card>,
}

pub struct TaskDependencies;

impl Tool for TaskDependencies {
    type Input = TaskRef;
    type Output = Dependencies;
    const SPEC: ToolSpec = spec(
        "cos_task_dependencies",
        "The tasks a task depends on, and which of them are still open.",
    )
    .cutting_first(&["dependencies"]);

    fn run(context: &ToolContext, input: TaskRef) -> Result<Answer<Dependencies>, ToolError> {
        context
            .hub
            .shared
            .view(|c| {
                let (seq, task) = require_task(c, &input.id)?;
                let cards: Vec<Card> =
                    records::load_cards(c, records::DEPENDENCIES_OF, "t.seq", &[seq.into()])?
                        .into_iter()
                        .collect();
                let open = cards
                    .iter()
                    .filter(|card| !matches!(card.status, Status::Complete | Status::Archive))
                    .map(|card| card.id.clone())
                    .collect();
                Ok(Dependencies {
                    id: task.id,
                    dependencies: cards,
                    open,
                })
            })
            .map(Answer::from)
    }
}

pub struct TaskDependents;

impl Tool for TaskDependents {
    type Input = TaskRef;
    type Output = Dependents;
    const SPEC: ToolSpec = spec("cos_task_dependents", "The tasks that depend on a task.")
        .cutting_first(&["dependents"]);

    fn run(context: &ToolContext, input: TaskRef) -> Result<Answer<Dependents>, ToolError> {
        context
            .hub
            .shared
            .view(|c| {
                let (seq, task) = require_task(c, &input.id)?;
                let dependents =
                    records::load_cards(c, records::DEPENDENTS_OF, "t.seq", &[seq.into()])?
                        .into_iter()
                        .collect();
                Ok(Dependents {
                    id: task.id,
                    dependents,
                })
            })
            .map(Answer::from)
    }
}

#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ReadyInput {
    pub kind: Option<Kind>,
    pub priority: Option<Priority>,
    pub label: Option<String>,
    pub swimlane: Option<String>,
    pub epic: Option<String>,
    /// 1 to 500, default 50.
    #[schema(minimum = 1, maximum = 500)]
    #[param(minimum = 1, maximum = 500)]
    pub limit: Option<u32>,
    /// A previous answer's `next_cursor`: the ready tasks after it.
    pub cursor: Option<String>,
}

impl ReadyInput {
    pub(super) fn filter(&self) -> TaskFilter {
        TaskFilter {
            status: Some(Status::Icebox),
            kind: self.kind,
            priority: self.priority,
            label: self.label.clone(),
            swimlane: self.swimlane.clone(),
            epic: self.epic.clone(),
            text: None,
        }
    }
}

pub struct TaskReady;

impl Tool for TaskReady {
    type Input = ReadyInput;
    type Output = CardList;
    const SPEC: ToolSpec = spec(
        "cos_task_ready",
        "Tasks ready to start: in icebox with every dependency complete, highest priority first.",
    );

    fn run(context: &ToolContext, input: ReadyInput) -> Result<Answer<CardList>, ToolError> {
        let limit = check_limit("limit", input.limit, 50, 500)?;
        let filter = input.filter();
        // one snapshot: the count and the page agree
        context.hub.shared.view_at_once(|c| {
            let revision = records::board_revision(c)?;
            let offsets = Offsets::new(&context.hub.cursors, Self::SPEC.name, &filter, revision);
            let start = offsets.start("cursor", input.cursor.as_deref())?;
            // the page is read, not the column: a board may hold thousands ready
            let (clause, parameters) = filtered_clause(c, &filter, records::READY, Vec::new())?;
            let total_count =
                records::count_tasks(c, &clause, records::READY_ORDER, &parameters, u32::MAX)?
                    as u64;
            let order = format!("{} LIMIT {limit} OFFSET {start}", records::READY_ORDER);
            let results = records::load_cards(c, &clause, &order, &parameters)?;
            let more = start + results.len() < total_count as usize;
            Ok(Answer::new(CardList {
                count: results.len() as u64,
                next_cursor: offsets.next(start, results.len(), more),
                results,
                total_count,
            })
            .with_page(offsets.page("/results", "/next_cursor", start)))
        })
    }
}
