//! Creating and editing tasks: each write loads the task inside `BEGIN IMMEDIATE`,
//! checks the caller's expected version, writes the row and its history, and commits.

use crate::store::Session;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::board::config::BoardConfig;
use crate::board::model::*;
use crate::board::records::{self, Change};
use crate::board::rules::{self, refuse};
use crate::envelope::{Category, Code};
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

use super::{Writer, actor_for, require_task, spec};
use crate::board::validate::{
    check_appetite, check_epic, check_swimlane, check_text_list, check_title, markdown_text,
    resolve_dependencies,
};

/// Accepts a present `null` as `Some(None)`, so edits can clear a field.
pub(super) fn clearable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Records one history entry per field that differs between `before` and `after`.
pub(super) fn diff(before: &Task, after: &Task) -> Vec<Change<'static>> {
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
    compare("lease", json!(before.lease), json!(after.lease));
    changes
}

/// Saves `after` over `before` with a bumped version, its dependencies and its history.
pub(super) fn commit_change(
    connection: &Session,
    seq: i64,
    before: &Task,
    mut after: Task,
    dependencies: Option<&[i64]>,
    by: &Writer,
) -> Result<Task, ToolError> {
    let changes = diff(before, &after);
    if changes.is_empty() {
        return Ok(after);
    }
    let now = crate::tools::now();
    after.version = before.version + 1;
    after.updated_at = now.clone();
    after.updated_by = by.key();
    records::save_change(connection, seq, &after, &by.author(), &now, &changes)?;
    if let Some(dependencies) = dependencies {
        records::set_dependencies(connection, seq, dependencies)?;
    }
    Ok(after)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateInput {
    /// The task's name.
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub title: String,
    /// Markdown, kept as written.
    #[serde(default)]
    pub description: String,
    #[serde(default = "default_kind")]
    pub kind: Kind,
    #[serde(default = "default_priority")]
    pub priority: Priority,
    /// One of the board's swimlanes (default: the first configured).
    pub swimlane: Option<String>,
    #[schema(max_length = 200, format = "cos-name")]
    pub epic: Option<String>,
    #[serde(default)]
    #[schema(max_items = 100, format = "cos-name-list")]
    pub labels: Vec<String>,
    /// 30m, 2h, 1d, 3w, 1cy or another `<n><m|h|d|w|cy>`.
    #[schema(pattern = "^[1-9][0-9]{0,3}(m|h|d|w|cy)$")]
    pub appetite: Option<String>,
    /// Existing tasks this one waits for.
    #[serde(default)]
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub depends_on: Vec<String>,
    #[serde(default)]
    #[schema(max_items = 100, format = "cos-name-list")]
    pub references: Vec<String>,
    #[schema(schema_with = new_task_status)]
    pub status: Option<Status>,
    pub actor: Option<Actor>,
}

fn new_task_status() -> utoipa::openapi::schema::Object {
    crate::tools::schema::one_of(
        &[Status::Icebox.as_str(), Status::Emergency.as_str()],
        "icebox (default) or emergency.",
    )
}

pub(super) fn default_kind() -> Kind {
    Kind::Feature
}
pub(super) fn default_priority() -> Priority {
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
        let status = checked_new_task(&input)?;
        context
            .hub
            .shared
            .write(|tx| {
                let config = BoardConfig::load_in(tx, &context.hub.config.state_dir)?;
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
                let now = crate::tools::now();
                let task = Task {
                    id: format_task_id(seq),
                    title: input.title.trim().to_string(),
                    description: markdown_text(&input.description).into_owned(),
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
                    lease: None,
                };
                let created = Change {
                    field: "created",
                    old: Value::Null,
                    new: json!(task.status),
                };
                records::save_change(tx, seq, &task, &actor.author(), &now, &[created])?;
                records::set_dependencies(tx, seq, &dependencies)?;
                Ok(task)
            })
            .map(Answer::from)
    }
}

/// The new task's fields as the board accepts them; the status it starts in.
fn checked_new_task(input: &CreateInput) -> Result<Status, ToolError> {
    check_title(&input.title)?;
    check_epic(input.epic.as_deref())?;
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
    Ok(status)
}

/// Fields to change; absent fields stay as they are, `null` clears epic or appetite.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskChanges {
    /// The task's name.
    #[schema(min_length = 1, max_length = 200, format = "cos-visible-name")]
    pub title: Option<String>,
    pub description: Option<String>,
    pub kind: Option<Kind>,
    pub priority: Option<Priority>,
    pub swimlane: Option<String>,
    #[serde(default, deserialize_with = "clearable")]
    #[schema(value_type = Option<String>, max_length = 200, format = "cos-name")]
    pub epic: Option<Option<String>>,
    #[schema(max_items = 100, format = "cos-name-list")]
    pub labels: Option<Vec<String>>,
    #[serde(default, deserialize_with = "clearable")]
    #[schema(value_type = Option<String>, pattern = "^[1-9][0-9]{0,3}(m|h|d|w|cy)$")]
    pub appetite: Option<Option<String>>,
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub depends_on: Option<Vec<String>>,
    #[schema(max_items = 100, format = "cos-name-list")]
    pub references: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    #[schema(pattern = "^(TASK|task)-(?=[0-9]*[1-9])[0-9]{1,12}$")]
    pub id: String,
    /// The version you read (else STALE_VERSION).
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
        "Edits a task's fields if it is still at the version you read; else STALE_VERSION with the current \
         task in details, and nothing changes.",
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
        if let Some(epic) = &changes.epic {
            check_epic(epic.as_deref())?;
        }
        context
            .hub
            .shared
            .write(|tx| {
                let config = BoardConfig::load_in(tx, &context.hub.config.state_dir)?;
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
                    after.description = markdown_text(description).into_owned();
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
                commit_change(tx, seq, &before, after, dependencies.as_deref(), &actor)
            })
            .map(Answer::from)
    }
}
