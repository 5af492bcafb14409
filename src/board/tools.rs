//! The `cos_task_*` tools. Every write loads the task inside `BEGIN IMMEDIATE`,
//! checks the caller's expectation (status for moves, version for edits),
//! applies the rules, writes the row and its history, and commits; a refusal
//! returns before anything is written.

use rusqlite::Connection;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};
use utoipa::{IntoParams, ToSchema};

use super::config::{BoardConfig, WipLimits};
use super::model::*;
use super::paging::{ColumnCursors, Position};
use super::records::{self, Change};
use super::rules::{self, refuse, sequence_of};
use crate::envelope::{Category, Code};
use crate::tools::cache::Shared;
use crate::tools::cursor::Offsets;
use crate::tools::{Answer, Module, Source, Tool, ToolContext, ToolError, ToolSpec};

const LAYER: &str = "tasks";
const MAX_TITLE_CHARS: usize = 200;
const MAX_PAGE: u32 = 200;
const DEFAULT_PAGE: u32 = 50;

const fn spec(name: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        module: Module::Board,
        layer: LAYER,
        description,
        effect: crate::tools::Effect::READ,
        list_hints: &[],
    }
}

/// The actor a call acts as: the one given, else one named after the front door.
fn actor_for(context: &ToolContext, given: Option<Actor>) -> Result<Actor, ToolError> {
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

fn task_seq(field: &str, id: &str) -> Result<i64, ToolError> {
    parse_task_id(id)
        .ok_or_else(|| ToolError::invalid(field, format!("a task id like TASK-12, got {id:?}")))
}

fn unknown_task(id: &str) -> ToolError {
    refuse(
        Category::NotFound,
        Code::E_NOT_FOUND,
        format!("no task {id}"),
        json!({"id": id}),
    )
}

fn require_task(connection: &Connection, id: &str) -> Result<(i64, Task), ToolError> {
    let seq = task_seq("id", id)?;
    let task = records::load_task(connection, seq)?.ok_or_else(|| unknown_task(id))?;
    Ok((seq, task))
}

/// Swimlanes a task may use: the configured ones plus any the board already holds.
fn known_swimlanes(
    connection: &Connection,
    config: &BoardConfig,
) -> Result<Vec<String>, ToolError> {
    let mut lanes = config.swimlanes.clone();
    for lane in records::extra_swimlanes(connection)? {
        if !lanes.contains(&lane) {
            lanes.push(lane);
        }
    }
    Ok(lanes)
}

fn check_swimlane(
    connection: &Connection,
    config: &BoardConfig,
    swimlane: &str,
) -> Result<(), ToolError> {
    let lanes = known_swimlanes(connection, config)?;
    if lanes.iter().any(|lane| lane == swimlane) {
        return Ok(());
    }
    Err(
        ToolError::invalid("swimlane", format!("one of {}", lanes.join(", ")))
            .with_details(json!({"field": "swimlane", "allowed": lanes, "got": swimlane})),
    )
}

pub fn check_title(title: &str) -> Result<(), ToolError> {
    let length = title.trim().chars().count();
    if length == 0 || title.chars().count() > MAX_TITLE_CHARS {
        return Err(ToolError::invalid(
            "title",
            format!("1 to {MAX_TITLE_CHARS} characters, got {length}"),
        ));
    }
    Ok(())
}

fn check_appetite(appetite: Option<&str>) -> Result<(), ToolError> {
    match appetite {
        Some(text) if !valid_appetite(text) => Err(ToolError::invalid(
            "appetite",
            format!("a duration such as 30m, 2h, 1d, 3w or 1cy, got {text:?}"),
        )),
        _ => Ok(()),
    }
}

fn check_text_list(field: &str, items: &[String]) -> Result<(), ToolError> {
    if items.len() > 100 {
        return Err(ToolError::invalid(field, "at most 100 entries"));
    }
    if let Some(bad) = items
        .iter()
        .find(|item| item.trim().is_empty() || item.chars().count() > 500)
    {
        return Err(ToolError::invalid(
            field,
            format!("entries of 1 to 500 characters, got {bad:?}"),
        ));
    }
    Ok(())
}

/// Resolves dependency ids, refusing unknown ones, self-references and cycles.
fn resolve_dependencies(
    connection: &Connection,
    seq: i64,
    depends_on: &[String],
) -> Result<Vec<i64>, ToolError> {
    let mut resolved = Vec::with_capacity(depends_on.len());
    for id in depends_on {
        let dependency = task_seq("depends_on", id)?;
        if dependency == seq {
            return Err(ToolError::invalid(
                "depends_on",
                "other tasks: a task cannot depend on itself",
            ));
        }
        if !records::task_exists(connection, dependency)? {
            return Err(ToolError::invalid(
                "depends_on",
                format!("existing tasks; there is no {id}"),
            )
            .with_details(json!({"field": "depends_on", "unknown": id})));
        }
        if !resolved.contains(&dependency) {
            resolved.push(dependency);
        }
    }
    if let Some(cycle) = rules::find_cycle(connection, seq, &resolved)? {
        return Err(refuse(
            Category::Validation,
            Code::E_DEPENDENCY_CYCLE,
            format!(
                "these dependencies would make a cycle: {}",
                cycle.join(" → ")
            ),
            json!({"field": "depends_on", "cycle": cycle}),
        ));
    }
    resolved.sort_unstable();
    Ok(resolved)
}

/// Accepts a present `null` as `Some(None)`, so edits can clear a field.
fn clearable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Records one history entry per field that differs between `before` and `after`.
fn diff(before: &Task, after: &Task) -> Vec<Change<'static>> {
    let mut changes = Vec::new();
    let mut compare = |field: &'static str, old: Value, new: Value| {
        if old != new {
            changes.push(Change { field, old, new });
        }
    };
    compare("title", json!(before.title), json!(after.title));
    compare(
        "description",
        json!(before.description),
        json!(after.description),
    );
    compare("status", json!(before.status), json!(after.status));
    compare("kind", json!(before.kind), json!(after.kind));
    compare("priority", json!(before.priority), json!(after.priority));
    compare("swimlane", json!(before.swimlane), json!(after.swimlane));
    compare("epic", json!(before.epic), json!(after.epic));
    compare("labels", json!(before.labels), json!(after.labels));
    compare("appetite", json!(before.appetite), json!(after.appetite));
    compare(
        "depends_on",
        json!(before.depends_on),
        json!(after.depends_on),
    );
    compare(
        "references",
        json!(before.references),
        json!(after.references),
    );
    compare("assignee", json!(before.assignee), json!(after.assignee));
    compare("position", json!(before.position), json!(after.position));
    changes
}

/// Saves `after` over `before` with a bumped version, its dependencies and its history.
fn commit_change(
    connection: &Connection,
    seq: i64,
    before: &Task,
    mut after: Task,
    dependencies: Option<&[i64]>,
    actor: &Actor,
    source: Source,
) -> Result<Task, ToolError> {
    let changes = diff(before, &after);
    if changes.is_empty() {
        return Ok(after);
    }
    let now = records::now();
    after.version = before.version + 1;
    after.updated_at = now.clone();
    after.updated_by = actor.key();
    records::save_task(connection, seq, &after)?;
    if let Some(dependencies) = dependencies {
        records::set_dependencies(connection, seq, dependencies)?;
    }
    records::append_history(
        connection,
        seq,
        &actor.key(),
        source.as_str(),
        after.version,
        &now,
        &changes,
    )?;
    Ok(after)
}

// ---------------------------------------------------------------- create

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateInput {
    /// 1 to 200 characters.
    pub title: String,
    /// Markdown.
    #[serde(default)]
    pub description: String,
    #[serde(default = "default_kind")]
    pub kind: Kind,
    #[serde(default = "default_priority")]
    pub priority: Priority,
    /// One of the board's swimlanes (default: the first configured).
    pub swimlane: Option<String>,
    pub epic: Option<String>,
    #[serde(default)]
    pub labels: Vec<String>,
    /// 30m, 2h, 1d, 3w, 1cy or another `<n><m|h|d|w|cy>`.
    pub appetite: Option<String>,
    #[serde(default)]
    pub depends_on: Vec<String>,
    #[serde(default)]
    pub references: Vec<String>,
    /// icebox (default) or emergency.
    pub status: Option<Status>,
    pub actor: Option<Actor>,
}

fn default_kind() -> Kind {
    Kind::Feature
}
fn default_priority() -> Priority {
    Priority::P2
}

pub struct TaskCreate;

impl Tool for TaskCreate {
    type Input = CreateInput;
    type Output = Task;
    const SPEC: ToolSpec = spec(
        "cos_task_create",
        "Creates a task in icebox (or emergency) and returns it with its new TASK-<n> id.",
    )
    .writing(false, false);

    fn run(context: &ToolContext, input: CreateInput) -> Result<Answer<Task>, ToolError> {
        let actor = actor_for(context, input.actor.clone())?;
        check_title(&input.title)?;
        check_appetite(input.appetite.as_deref())?;
        check_text_list("labels", &input.labels)?;
        check_text_list("references", &input.references)?;
        let status = input.status.unwrap_or(Status::Icebox);
        if !matches!(status, Status::Icebox | Status::Emergency) {
            return Err(ToolError::invalid(
                "status",
                "icebox or emergency for a new task",
            ));
        }
        let config = BoardConfig::load(&context.hub.config.state_dir)?;
        context
            .hub
            .store
            .write(|tx| {
                let swimlane = input
                    .swimlane
                    .clone()
                    .unwrap_or_else(|| config.swimlanes.first().cloned().unwrap_or_default());
                check_swimlane(tx, &config, &swimlane)?;
                if status == Status::Emergency {
                    rules::check_wip(tx, &config.wip, status, &actor.key())?;
                }
                let seq = records::next_seq(tx)?;
                let dependencies = resolve_dependencies(tx, seq, &input.depends_on)?;
                let now = records::now();
                let task = Task {
                    id: format_task_id(seq),
                    title: input.title.trim().to_string(),
                    description: input.description.clone(),
                    status,
                    kind: input.kind,
                    priority: input.priority,
                    swimlane,
                    epic: input.epic.clone().filter(|e| !e.trim().is_empty()),
                    labels: input.labels.clone(),
                    appetite: input.appetite.clone(),
                    depends_on: dependencies.iter().copied().map(format_task_id).collect(),
                    references: input.references.clone(),
                    assignee: None,
                    position: records::end_position(tx, status)?,
                    version: 1,
                    created_at: now.clone(),
                    started_at: None,
                    completed_at: None,
                    updated_at: now.clone(),
                    updated_by: actor.key(),
                };
                records::save_task(tx, seq, &task)?;
                records::set_dependencies(tx, seq, &dependencies)?;
                let created = Change {
                    field: "created",
                    old: Value::Null,
                    new: json!(task.status),
                };
                records::append_history(
                    tx,
                    seq,
                    &actor.key(),
                    context.source.as_str(),
                    1,
                    &now,
                    &[created],
                )?;
                Ok(task)
            })
            .map(Answer::from)
    }
}

// ---------------------------------------------------------------- show

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct TaskRef {
    /// TASK-<n>
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
            .store
            .view(|c| require_task(c, &input.id))
            .map(|(_, task)| task)
            .map(Answer::from)
    }
}

// ---------------------------------------------------------------- edit

/// Fields to change; absent fields stay as they are, `null` clears epic or appetite.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskChanges {
    pub title: Option<String>,
    pub description: Option<String>,
    pub kind: Option<Kind>,
    pub priority: Option<Priority>,
    pub swimlane: Option<String>,
    #[serde(default, deserialize_with = "clearable")]
    #[schema(value_type = Option<String>)]
    pub epic: Option<Option<String>>,
    pub labels: Option<Vec<String>>,
    #[serde(default, deserialize_with = "clearable")]
    #[schema(value_type = Option<String>)]
    pub appetite: Option<Option<String>>,
    pub depends_on: Option<Vec<String>>,
    pub references: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    pub id: String,
    /// The version you read; the edit is refused with `conflict` if the task changed since.
    pub version: i64,
    pub changes: TaskChanges,
    pub actor: Option<Actor>,
}

pub struct TaskEdit;

impl Tool for TaskEdit {
    type Input = EditInput;
    type Output = Task;
    const SPEC: ToolSpec = spec(
        "cos_task_edit",
        "Edits a task's fields. Send the version you read: if someone else wrote first the edit is refused \
         (conflict, STALE_VERSION) with the current task in details and nothing is changed.",
    ).writing(true, true);

    fn run(context: &ToolContext, input: EditInput) -> Result<Answer<Task>, ToolError> {
        let actor = actor_for(context, input.actor.clone())?;
        let changes = &input.changes;
        if let Some(title) = &changes.title {
            check_title(title)?;
        }
        if let Some(Some(appetite)) = &changes.appetite {
            check_appetite(Some(appetite))?;
        }
        if let Some(labels) = &changes.labels {
            check_text_list("labels", labels)?;
        }
        if let Some(references) = &changes.references {
            check_text_list("references", references)?;
        }
        let config = BoardConfig::load(&context.hub.config.state_dir)?;
        context
            .hub
            .store
            .write(|tx| {
                let (seq, before) = require_task(tx, &input.id)?;
                if before.version != input.version {
                    return Err(refuse(
                        Category::Conflict,
                        Code::STALE_VERSION,
                        format!(
                            "{} changed since version {} (now {}); reload and re-apply",
                            before.id, input.version, before.version
                        ),
                        json!({"current": before}),
                    ));
                }
                let mut after = before.clone();
                if let Some(title) = &changes.title {
                    after.title = title.trim().to_string();
                }
                if let Some(description) = &changes.description {
                    after.description = description.clone();
                }
                if let Some(kind) = changes.kind {
                    after.kind = kind;
                }
                if let Some(priority) = changes.priority {
                    after.priority = priority;
                }
                if let Some(swimlane) = &changes.swimlane {
                    if swimlane != &before.swimlane {
                        check_swimlane(tx, &config, swimlane)?;
                    }
                    after.swimlane = swimlane.clone();
                }
                if let Some(epic) = &changes.epic {
                    after.epic = epic.clone().filter(|e| !e.trim().is_empty());
                }
                if let Some(labels) = &changes.labels {
                    after.labels = labels.clone();
                }
                if let Some(appetite) = &changes.appetite {
                    after.appetite = appetite.clone();
                }
                if let Some(references) = &changes.references {
                    after.references = references.clone();
                }
                let dependencies = match &changes.depends_on {
                    Some(ids) => {
                        let resolved = resolve_dependencies(tx, seq, ids)?;
                        after.depends_on = resolved.iter().copied().map(format_task_id).collect();
                        Some(resolved)
                    }
                    None => None,
                };
                commit_change(
                    tx,
                    seq,
                    &before,
                    after,
                    dependencies.as_deref(),
                    &actor,
                    context.source,
                )
            })
            .map(Answer::from)
    }
}

// ---------------------------------------------------------------- move

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveInput {
    pub id: String,
    /// The status you expect the task to be in; refused with `conflict` if it moved meanwhile.
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
        "Moves a task to another status (compare-and-set on `from`). Refusals: INVALID_TRANSITION (400, with \
         allowed targets), WIP_LIMIT (409, with occupants), DEPENDENCY_OPEN (409), STALE_STATE (409, current task).",
    ).writing(false, true);

    fn run(context: &ToolContext, input: MoveInput) -> Result<Answer<Task>, ToolError> {
        let actor = actor_for(context, input.actor.clone())?;
        let config = BoardConfig::load(&context.hub.config.state_dir)?;
        context
            .hub
            .store
            .write(|tx| {
                let (seq, before) = require_task(tx, &input.id)?;
                move_task(
                    tx,
                    &config.wip,
                    seq,
                    before,
                    input.from,
                    input.to,
                    &actor,
                    context.source,
                )
            })
            .map(Answer::from)
    }
}

#[allow(clippy::too_many_arguments)]
fn move_task(
    tx: &Connection,
    wip: &WipLimits,
    seq: i64,
    before: Task,
    from: Status,
    to: Status,
    actor: &Actor,
    source: Source,
) -> Result<Task, ToolError> {
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
    after.position = records::end_position(tx, to)?;
    match to {
        Status::InProgress => {
            after.assignee = Some(actor.key());
            after.started_at.get_or_insert_with(records::now);
        }
        Status::Icebox => after.assignee = None,
        Status::Complete => after.completed_at = Some(records::now()),
        _ => {}
    }
    if before.status == Status::Complete && to != Status::Archive {
        after.completed_at = None;
    }
    commit_change(tx, seq, &before, after, None, actor, source)
}

// ---------------------------------------------------------------- reposition

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RepositionInput {
    pub id: String,
    /// Place the task just before this task (same column).
    pub before: Option<String>,
    /// Place the task just after this task (same column).
    pub after: Option<String>,
    pub actor: Option<Actor>,
}

pub struct TaskReposition;

impl Tool for TaskReposition {
    type Input = RepositionInput;
    type Output = Task;
    const SPEC: ToolSpec = spec(
        "cos_task_reposition",
        "Reorders a task within its column: give exactly one of `before` or `after` (a task in the same column).",
    ).writing(false, true);

    fn run(context: &ToolContext, input: RepositionInput) -> Result<Answer<Task>, ToolError> {
        let actor = actor_for(context, input.actor.clone())?;
        let (anchor_id, place_before) = match (&input.before, &input.after) {
            (Some(before), None) => (before.clone(), true),
            (None, Some(after)) => (after.clone(), false),
            _ => {
                return Err(ToolError::invalid(
                    "before",
                    "exactly one of before or after",
                ));
            }
        };
        context
            .hub
            .store
            .write(|tx| {
                let (seq, task) = require_task(tx, &input.id)?;
                let (anchor_seq, anchor) = require_task(tx, &anchor_id)?;
                if anchor_seq == seq {
                    return Err(ToolError::invalid(
                        if place_before { "before" } else { "after" },
                        "another task",
                    ));
                }
                if anchor.status != task.status {
                    return Err(ToolError::invalid(
                        if place_before { "before" } else { "after" },
                        format!(
                            "a task in {} ({} is in {})",
                            task.status.as_str(),
                            anchor.id,
                            anchor.status.as_str()
                        ),
                    ));
                }
                let column = records::load_cards(
                    tx,
                    "t.status = ?1 AND t.seq <> ?2",
                    "t.position, t.seq",
                    &[&task.status.as_str(), &seq],
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
                        renumber(tx, &column)?;
                        target as f64 + 0.5
                    }
                };
                let mut after = task.clone();
                after.position = position;
                commit_change(tx, seq, &task, after, None, &actor, context.source)
            })
            .map(Answer::from)
    }
}

/// A position strictly between two neighbours, or `None` when they are too close to split.
fn position_between(previous: Option<&Card>, next: Option<&Card>) -> Option<f64> {
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

/// Respaces a column to whole numbers so later moves have room.
fn renumber(connection: &Connection, column: &[Card]) -> Result<(), ToolError> {
    let mut update = connection
        .prepare_cached("UPDATE tasks SET position = ?1 WHERE seq = ?2")
        .map_err(|e| crate::store::StoreError::on(connection, e))?;
    for (index, task) in column.iter().enumerate() {
        update
            .execute(rusqlite::params![index as f64, sequence_of(&task.id)])
            .map_err(|e| crate::store::StoreError::on(connection, e))?;
    }
    Ok(())
}

// ---------------------------------------------------------------- filters

/// Filters shared by the board, search, ready and claim tools.
#[derive(Debug, Default, Clone)]
pub struct TaskFilter {
    pub status: Option<Status>,
    pub kind: Option<Kind>,
    pub priority: Option<Priority>,
    pub label: Option<String>,
    pub swimlane: Option<String>,
    pub epic: Option<String>,
    pub text: Option<String>,
}

impl TaskFilter {
    /// A WHERE clause over `t` and its parameters.
    fn sql(&self) -> Result<(String, Vec<Box<dyn rusqlite::ToSql>>), ToolError> {
        let mut clauses = vec!["1 = 1".to_string()];
        let mut parameters: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
        let mut push = |clause: &str, value: Box<dyn rusqlite::ToSql>| {
            parameters.push(value);
            clauses.push(clause.replace('?', &format!("?{}", parameters.len())));
        };
        if let Some(status) = self.status {
            push("t.status = ?", Box::new(status.as_str()));
        }
        if let Some(kind) = self.kind {
            push("t.kind = ?", Box::new(kind.as_str()));
        }
        if let Some(priority) = self.priority {
            push("t.priority = ?", Box::new(priority.as_str()));
        }
        if let Some(label) = &self.label {
            push(
                "EXISTS (SELECT 1 FROM json_each(t.labels) WHERE value = ?)",
                Box::new(label.clone()),
            );
        }
        if let Some(swimlane) = &self.swimlane {
            push("t.swimlane = ?", Box::new(swimlane.clone()));
        }
        if let Some(epic) = &self.epic {
            push("t.epic = ?", Box::new(epic.clone()));
        }
        if let Some(text) = &self.text {
            let query = fts_query(text)?;
            push(
                "t.seq IN (SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH ?)",
                Box::new(query),
            );
        }
        Ok((clauses.join(" AND "), parameters))
    }
}

/// Turns free text into a safe FTS5 query: every word must appear (as a prefix).
fn fts_query(text: &str) -> Result<String, ToolError> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .take(16)
        .map(|word| format!("\"{word}\"*"))
        .collect();
    if words.is_empty() {
        return Err(ToolError::invalid("text", "at least one letter or digit"));
    }
    Ok(words.join(" "))
}

pub(super) fn load_filtered(
    connection: &Connection,
    filter: &TaskFilter,
    extra: &str,
    order: &str,
    extra_parameters: Vec<Box<dyn rusqlite::ToSql>>,
) -> Result<Vec<Card>, ToolError> {
    let (mut clause, mut parameters) = filter.sql()?;
    if !extra.is_empty() {
        let offset = parameters.len();
        let mut extra = extra.to_string();
        for index in (1..=extra_parameters.len()).rev() {
            extra = extra.replace(&format!("?{index}"), &format!("?{}", index + offset));
        }
        clause = format!("{clause} AND {extra}");
        parameters.extend(extra_parameters);
    }
    let references: Vec<&dyn rusqlite::ToSql> = parameters.iter().map(|p| p.as_ref()).collect();
    Ok(records::load_cards(
        connection,
        &clause,
        order,
        &references,
    )?)
}

fn count_filtered(
    connection: &Connection,
    filter: &TaskFilter,
) -> Result<Vec<(Status, u64)>, ToolError> {
    let (clause, parameters) = filter.sql()?;
    let sql = format!("SELECT t.status, count(*) FROM tasks t WHERE {clause} GROUP BY t.status");
    let references: Vec<&dyn rusqlite::ToSql> = parameters.iter().map(|p| p.as_ref()).collect();
    let run = || -> rusqlite::Result<Vec<(String, i64)>> {
        let mut statement = connection.prepare_cached(&sql)?;
        let rows =
            statement.query_map(references.as_slice(), |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect()
    };
    let rows = run().map_err(|error| crate::store::StoreError::on(connection, error))?;
    Ok(rows
        .into_iter()
        .filter_map(|(status, count)| Some((Status::parse(&status)?, count as u64)))
        .collect())
}

fn check_limit(field: &str, value: Option<u32>, default: u32, max: u32) -> Result<u32, ToolError> {
    match value {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(ToolError::invalid(field, format!("1 to {max}, got {n}"))),
    }
}

// ---------------------------------------------------------------- board

#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct BoardInput {
    /// Opaque cursor from a previous answer's complete column.
    pub complete_cursor: Option<String>,
    /// Opaque cursor from a previous answer's archive column.
    pub archive_cursor: Option<String>,
    /// Cards per page of complete and archive (1 to 200, default 50).
    pub page_size: Option<u32>,
    /// Any column's `next_cursor`: answers that column alone, continuing after it.
    pub cursor: Option<String>,
    pub kind: Option<Kind>,
    pub priority: Option<Priority>,
    pub label: Option<String>,
    pub swimlane: Option<String>,
    pub epic: Option<String>,
    /// Words that must all appear in the title or description.
    pub text: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WipState {
    pub limit: u32,
    /// True when the limit applies per actor (in_progress) rather than to the column.
    pub per_actor: bool,
    /// Cards in the column (for per-actor limits: the most any one actor holds).
    pub occupied: u32,
    pub at_limit: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Column {
    pub status: Status,
    /// Tasks in this column matching the filters, on every page.
    pub total: u64,
    pub wip: Option<WipState>,
    pub cards: Vec<Card>,
    /// Pass back (as `cursor`, or `complete_cursor`/`archive_cursor` for those
    /// columns) for the cards after these; null when the column is all here.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Board {
    /// The board revision this answer shows; `/api/stream` announces newer ones.
    pub revision: i64,
    pub columns: Vec<Column>,
    /// Tasks matching the filters across every column.
    pub total_count: u64,
    /// Swimlanes a task may use.
    pub swimlanes: Vec<String>,
}

pub struct TaskBoard;

impl Tool for TaskBoard {
    type Input = BoardInput;
    type Output = Shared<Board>;
    const SPEC: ToolSpec = spec(
        "cos_task_board",
        "The board: one column per status with cards, totals and WIP state. Active columns come whole; complete \
         and archive are paged newest-completed first with opaque cursors (at most 200 a page). A column cut to \
         the budget has a next_cursor; pass it as cursor for the rest of that column.",
    );

    fn run(context: &ToolContext, input: BoardInput) -> Result<Answer<Shared<Board>>, ToolError> {
        let page = check_limit("page_size", input.page_size, DEFAULT_PAGE, MAX_PAGE)?;
        let filter = TaskFilter {
            kind: input.kind,
            priority: input.priority,
            label: input.label.clone(),
            swimlane: input.swimlane.clone(),
            epic: input.epic.clone(),
            text: input.text.clone(),
            ..TaskFilter::default()
        };
        let cursors = ColumnCursors::new(&context.hub.cursors, &filter);
        let open = |field: &str, cursor: &Option<String>, column: Option<Status>| {
            cursor
                .as_deref()
                .map(|cursor| cursors.open(field, cursor, column))
                .transpose()
        };
        let from = Starts {
            only: open("cursor", &input.cursor, None)?,
            complete: open(
                "complete_cursor",
                &input.complete_cursor,
                Some(Status::Complete),
            )?,
            archive: open(
                "archive_cursor",
                &input.archive_cursor,
                Some(Status::Archive),
            )?,
        };
        let state_dir = &context.hub.config.state_dir;
        let key = format!("{}|{input:?}", BoardConfig::stamp(state_dir));
        let board = context.hub.store.view(|c| {
            // The revision is read before the board, so a cached board is never older than its revision.
            let revision = records::board_revision(c)?;
            context.hub.answers.get_or_compute(
                super::AREA.id,
                Self::SPEC.name,
                key,
                revision,
                || {
                    let config = BoardConfig::load(state_dir)?;
                    let board = build_board(c, &config, &filter, page, &cursors, &from)?;
                    Ok(Answer::new(Board { revision, ..board }))
                },
            )
        })?;
        let columns = if from.only.is_some() {
            1
        } else {
            Status::ALL.len()
        };
        Ok((0..columns).fold(board, |board, index| board.with_page(cursors.page(index))))
    }
}

/// Where the columns start: `only` answers one column after a cursor.
struct Starts {
    only: Option<Position>,
    complete: Option<Position>,
    archive: Option<Position>,
}

fn build_board(
    connection: &Connection,
    config: &BoardConfig,
    filter: &TaskFilter,
    page: u32,
    cursors: &ColumnCursors,
    from: &Starts,
) -> Result<Board, ToolError> {
    let totals = count_filtered(connection, filter)?;
    let total_of = |status: Status| {
        totals
            .iter()
            .find(|(s, _)| *s == status)
            .map_or(0, |(_, n)| *n)
    };
    let mut columns = Vec::with_capacity(Status::ALL.len());
    for status in Status::ALL {
        let start = match (&from.only, status) {
            (Some(only), _) if only.status != status => continue,
            (Some(only), _) => Some(only),
            (None, Status::Complete) => from.complete.as_ref(),
            (None, Status::Archive) => from.archive.as_ref(),
            (None, _) => None,
        };
        let page = status.is_paged().then_some(page);
        let (cards, next_cursor) = cursors.cards_after(connection, filter, status, start, page)?;
        let wip = wip_state(connection, &config.wip, status)?;
        columns.push(Column {
            status,
            total: total_of(status),
            wip,
            cards,
            next_cursor,
        });
    }
    Ok(Board {
        revision: 0,
        columns,
        total_count: totals.iter().map(|(_, n)| n).sum(),
        swimlanes: known_swimlanes(connection, config)?,
    })
}

fn wip_state(
    connection: &Connection,
    limits: &WipLimits,
    status: Status,
) -> Result<Option<WipState>, ToolError> {
    let (limit, per_actor, sql) = match status {
        Status::InProgress => (
            limits.in_progress_per_actor,
            true,
            "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM tasks WHERE status = 'in_progress' GROUP BY assignee)",
        ),
        other => match limits.column_limit(other) {
            Some(limit) => (limit, false, "SELECT count(*) FROM tasks WHERE status = ?1"),
            None => return Ok(None),
        },
    };
    let count = || -> rusqlite::Result<u32> {
        let mut statement = connection.prepare_cached(sql)?;
        if per_actor {
            statement.query_row([], |row| row.get(0))
        } else {
            statement.query_row([status.as_str()], |row| row.get(0))
        }
    };
    let occupied = count().map_err(|error| crate::store::StoreError::on(connection, error))?;
    Ok(Some(WipState {
        limit,
        per_actor,
        occupied,
        at_limit: occupied >= limit,
    }))
}

// ---------------------------------------------------------------- history

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryInput {
    pub id: String,
    /// Entries to return, newest first (1 to 1000, default 200).
    pub limit: Option<u32>,
    /// A previous answer's `next_cursor`: the older entries after it.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct HistoryEntry {
    pub at: String,
    /// `kind:id`
    pub actor: String,
    /// rest, mcp or cli
    pub source: String,
    /// `created`, `status` or the edited field.
    pub field: String,
    pub old: Option<Value>,
    pub new: Option<Value>,
    /// The task's version after this change.
    pub version: i64,
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
        context.hub.store.view(|c| {
            let (seq, task) = require_task(c, &input.id)?;
            // a task's history changes only with its version: offsets hold until then
            let offsets = Offsets::new(
                &context.hub.cursors,
                Self::SPEC.name,
                &task.id,
                task.version,
            );
            let start = offsets.start("cursor", input.cursor.as_deref())?;
            let (history, total) = load_history(c, seq, start, limit)?;
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

/// Entries of task `seq`, newest first, from `start` on.
fn load_history(
    connection: &Connection,
    seq: i64,
    start: usize,
    limit: u32,
) -> Result<(Vec<HistoryEntry>, u64), ToolError> {
    let run = || -> rusqlite::Result<(Vec<HistoryEntry>, u64)> {
        let total: i64 = connection.query_row(
            "SELECT count(*) FROM task_history WHERE task = ?1",
            [seq],
            |r| r.get(0),
        )?;
        let mut statement = connection.prepare_cached(
            "SELECT at, actor, source, field, old_value, new_value, version FROM task_history
             WHERE task = ?1 ORDER BY id DESC LIMIT ?2 OFFSET ?3",
        )?;
        let parse = |text: Option<String>| text.and_then(|t| serde_json::from_str(&t).ok());
        let rows = statement.query_map(rusqlite::params![seq, limit, start as i64], |row| {
            Ok(HistoryEntry {
                at: row.get(0)?,
                actor: row.get(1)?,
                source: row.get(2)?,
                field: row.get(3)?,
                old: parse(row.get(4)?),
                new: parse(row.get(5)?),
                version: row.get(6)?,
            })
        })?;
        Ok((rows.collect::<rusqlite::Result<_>>()?, total as u64))
    };
    run().map_err(|error| crate::store::StoreError::on(connection, error).into())
}

// ---------------------------------------------------------------- search

#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchInput {
    /// Words that must all appear in the title or description (prefix match).
    pub text: Option<String>,
    pub status: Option<Status>,
    pub kind: Option<Kind>,
    pub priority: Option<Priority>,
    pub label: Option<String>,
    pub swimlane: Option<String>,
    pub epic: Option<String>,
    /// 1 to 500, default 50.
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
            return Err(ToolError::invalid(
                "cursor",
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
        context.hub.store.view(|c| {
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

// ---------------------------------------------------------------- dependencies

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
            .store
            .view(|c| {
                let (seq, task) = require_task(c, &input.id)?;
                let cards: Vec<Card> = records::load_cards(
                    c,
                    "t.seq IN (SELECT depends_on FROM task_dependencies WHERE task = ?1)",
                    "t.seq",
                    &[&seq],
                )?
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
            .store
            .view(|c| {
                let (seq, task) = require_task(c, &input.id)?;
                let dependents = records::load_cards(
                    c,
                    "t.seq IN (SELECT task FROM task_dependencies WHERE depends_on = ?1)",
                    "t.seq",
                    &[&seq],
                )?
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

// ---------------------------------------------------------------- ready and claim

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
    pub limit: Option<u32>,
    /// A previous answer's `next_cursor`: the ready tasks after it.
    pub cursor: Option<String>,
}

impl ReadyInput {
    fn filter(&self) -> TaskFilter {
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

/// Icebox tasks whose every dependency is complete, best first.
const READY: &str =
    "NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks dt ON dt.seq = d.depends_on
                     WHERE d.task = t.seq AND dt.status NOT IN ('complete', 'archive'))";
const READY_ORDER: &str = "t.priority, t.position, t.seq";

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
        context.hub.store.view(|c| {
            let revision = records::board_revision(c)?;
            let offsets = Offsets::new(&context.hub.cursors, Self::SPEC.name, &filter, revision);
            let start = offsets.start("cursor", input.cursor.as_deref())?;
            let ready = load_filtered(c, &filter, READY, READY_ORDER, Vec::new())?;
            let total_count = ready.len() as u64;
            let results: Vec<Card> = ready.into_iter().skip(start).take(limit as usize).collect();
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

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimInput {
    /// Who claims; in_progress WIP is counted per actor.
    pub actor: Option<Actor>,
    pub kind: Option<Kind>,
    pub priority: Option<Priority>,
    pub label: Option<String>,
    pub swimlane: Option<String>,
    pub epic: Option<String>,
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
        "Atomically picks the highest-priority ready task and moves it to in_progress for the actor. Concurrent \
         claimers never receive the same task. Refused with WIP_LIMIT when the actor already holds its limit.",
    ).writing(false, false);

    fn run(context: &ToolContext, input: ClaimInput) -> Result<Answer<Claim>, ToolError> {
        let actor = actor_for(context, input.actor.clone())?;
        let config = BoardConfig::load(&context.hub.config.state_dir)?;
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
            .store
            .write(|tx| {
                rules::check_wip(tx, &config.wip, Status::InProgress, &actor.key())?;
                let candidates = load_filtered(
                    tx,
                    &filter,
                    READY,
                    &format!("{READY_ORDER} LIMIT 1"),
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
                let moved = move_task(
                    tx,
                    &config.wip,
                    seq,
                    task,
                    Status::Icebox,
                    Status::InProgress,
                    &actor,
                    context.source,
                )?;
                Ok(Claim {
                    task: Some(moved),
                    reason: None,
                })
            })
            .map(Answer::from)
    }
}
