//! The board as files: one Markdown file per task (YAML front matter plus the
//! description), so a board can live in git. Import also reads the reference
//! system's `TASK-NNN-slug.md` files as they are, and is idempotent.
//!
//! One file (about 690 lines): export and import share the file format both
//! ways, and keeping them together keeps the round trip exact.

use crate::store::Session;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use utoipa::ToSchema;

use super::config::BoardConfig;
use super::model::*;
use super::records::{self, Change};
use super::rules;
use super::validate::{check_title, markdown_text};
use crate::envelope::{Category, Code};
use crate::tools::{Answer, Source, Tool, ToolContext, ToolError, ToolSpec};

const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FolderInput {
    /// Folder to write to or read from, relative to the repository root.
    pub dir: String,
}

/// The longest folder path, and name within it, Linux accepts (PATH_MAX, NAME_MAX).
const MAX_DIR_BYTES: usize = 4096;
const MAX_NAME_BYTES: usize = 255;

/// Resolves the folder; callers other than the local shell stay inside the
/// repository, out of `.git` and the state folder, symbolic links followed.
fn resolve_dir(context: &ToolContext, dir: &str) -> Result<PathBuf, ToolError> {
    if dir.trim().is_empty() {
        return Err(ToolError::invalid("dir", "a folder path"));
    }
    if dir.chars().any(char::is_control) {
        return Err(dir_refusal(
            "dir: a folder path without NUL or other control characters",
        ));
    }
    if dir.len() > MAX_DIR_BYTES
        || Path::new(dir)
            .iter()
            .any(|name| name.len() > MAX_NAME_BYTES)
    {
        return Err(dir_refusal(&format!(
            "dir: a folder path of at most {MAX_DIR_BYTES} bytes, each name in it at most {MAX_NAME_BYTES}"
        )));
    }
    let config = &context.hub.config;
    let path = config.repo_root.join(dir);
    if context.source != Source::Cli && !stays_inside(&path, &config.repo_root, &config.state_dir) {
        return Err(dir_refusal(
            "dir: must be a folder inside the repository, outside .git and the hub's state folder",
        ));
    }
    Ok(path)
}

/// `path` is beneath `root` as written and as the disk resolves it (its
/// deepest existing folder, links followed), and not in `.git` or `state_dir`.
fn stays_inside(path: &Path, root: &Path, state_dir: &Path) -> bool {
    let kept_out = [root.join(".git"), state_dir.to_path_buf()];
    let as_written = path.starts_with(root)
        && !path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        && !kept_out.iter().any(|folder| path.starts_with(folder));
    if !as_written {
        return false;
    }
    let real = |p: &Path| p.canonicalize().ok();
    let (Some(real_root), Some(existing)) = (real(root), path.ancestors().find_map(real)) else {
        return false;
    };
    existing.starts_with(&real_root)
        && !kept_out
            .iter()
            .filter_map(|folder| real(folder))
            .any(|folder| existing.starts_with(folder))
}

fn dir_refusal(message: &str) -> ToolError {
    ToolError::from(
        crate::envelope::ErrorBody::new(Category::Validation, Code::E_PATH, message)
            .with_details(json!({"field": "dir"})),
    )
}

// ---------------------------------------------------------------- export

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ExportReport {
    pub dir: String,
    /// Files written because they were new or changed.
    pub written: u64,
    /// Files already up to date.
    pub unchanged: u64,
    /// Stale files of the same task under an old name, removed.
    pub removed: Vec<String>,
}

pub struct BoardExport;

impl Tool for BoardExport {
    type Input = FolderInput;
    type Output = ExportReport;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_board_export",
        module: crate::board::MODULE,
        layer: "tasks",
        description: "Writes one Markdown file per task (YAML front matter + description) into a folder, so the board can live in git.",
        // overwrites the task files already in the folder; the same board writes the same files
        effect: crate::tools::Effect::writes(true, true),
        list_hints: &[],
        agent_budget: None,
        upkeep: true,
    };

    fn run(context: &ToolContext, input: FolderInput) -> Result<Answer<ExportReport>, ToolError> {
        let dir = resolve_dir(context, &input.dir)?;
        let tasks = context
            .hub
            .shared
            .view(|c| records::load_tasks(c, "1 = 1", "t.seq", &[]))?;
        std::fs::create_dir_all(&dir).map_err(|e| ToolError::io("export folder", e))?;
        let existing = task_files(&dir)?;
        let mut report = ExportReport {
            dir: dir.display().to_string(),
            written: 0,
            unchanged: 0,
            removed: Vec::new(),
        };
        for task in &tasks {
            let name = file_name(task);
            let text = render(task);
            let path = dir.join(&name);
            if std::fs::read(&path).ok().as_deref() == Some(text.as_bytes()) {
                report.unchanged += 1;
            } else {
                write_atomically(&path, text.as_bytes())?;
                report.written += 1;
            }
            let prefix = format!("{}-", task.id);
            for old in existing
                .iter()
                .filter(|f| f.starts_with(&prefix) && **f != name)
            {
                std::fs::remove_file(dir.join(old))
                    .map_err(|e| ToolError::io("stale task file", e))?;
                report.removed.push(old.clone());
            }
        }
        Ok(Answer::from(report))
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    let temporary = path.with_extension(format!("md.{}.tmp", std::process::id()));
    std::fs::write(&temporary, bytes).map_err(|e| ToolError::io("task file", e))?;
    std::fs::rename(&temporary, path).map_err(|e| ToolError::io("task file", e))
}

fn task_files(dir: &Path) -> Result<Vec<String>, ToolError> {
    let entries = std::fs::read_dir(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::not_found(
            Code::E_NOT_FOUND,
            "dir: no such folder (relative paths start at the repository root)",
        )
        .with_details(json!({"field": "dir"})),
        _ => ToolError::io("task folder", e),
    })?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.starts_with("TASK-") && name.ends_with(".md"))
        .collect();
    names.sort();
    Ok(names)
}

fn file_name(task: &Task) -> String {
    let mut slug = String::new();
    for c in task.title.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 60 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        format!("{}.md", task.id)
    } else {
        format!("{}-{slug}.md", task.id)
    }
}

/// JSON scalars and flow lists are valid YAML, and quoting every string keeps
/// values such as `no`, `1d` or `2026-05-15` strings on the way back.
fn yaml<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

pub fn render(task: &Task) -> String {
    let lines = [
        format!("id: {}", task.id),
        format!("title: {}", yaml(&task.title)),
        format!("status: {}", task.status.as_str()),
        format!("kind: {}", task.kind.as_str()),
        format!("priority: {}", task.priority.as_str()),
        format!("swimlane: {}", yaml(&task.swimlane)),
        format!("epic: {}", yaml(&task.epic)),
        format!("labels: {}", yaml(&task.labels)),
        format!("appetite: {}", yaml(&task.appetite)),
        format!("depends_on: {}", yaml(&task.depends_on)),
        format!("references: {}", yaml(&task.references)),
        format!("assignee: {}", yaml(&task.assignee)),
        format!("position: {}", yaml(&task.position)),
        format!("created: {}", yaml(&task.created_at)),
        format!("started: {}", yaml(&task.started_at)),
        format!("completed: {}", yaml(&task.completed_at)),
    ];
    format!("---\n{}\n---\n{}", lines.join("\n"), task.description)
}

// ---------------------------------------------------------------- import

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Refusal {
    pub file: String,
    pub reason: String,
}

#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
pub struct ImportReport {
    pub created: Vec<String>,
    pub updated: Vec<String>,
    pub unchanged: u64,
    /// Files not imported, with the reason for each.
    pub refused: Vec<Refusal>,
    /// Files imported with an adjustment worth knowing about.
    pub warnings: Vec<Refusal>,
    /// Swimlanes the files used that the board did not know yet.
    pub swimlanes_added: Vec<String>,
}

pub struct BoardImport;

impl Tool for BoardImport {
    type Input = FolderInput;
    type Output = ImportReport;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_board_import",
        module: crate::board::MODULE,
        layer: "tasks",
        description: "Reads TASK-<n>-*.md files (ours or the reference system's) into the board. Idempotent: reports \
                      what it created, updated, left unchanged and refused (with file and reason).",
        // updates tasks the files name; a second run finds them unchanged
        effect: crate::tools::Effect::writes(true, true),
        list_hints: &[],
        agent_budget: None,
        upkeep: true,
    };

    fn run(context: &ToolContext, input: FolderInput) -> Result<Answer<ImportReport>, ToolError> {
        let dir = resolve_dir(context, &input.dir)?;
        let state_dir = &context.hub.config.state_dir;
        let config = context
            .hub
            .shared
            .view(|tx| BoardConfig::load_in(tx, state_dir))?;
        let mut report = ImportReport::default();
        let mut parsed = Vec::new();
        let mut seen = HashSet::new();
        for name in task_files(&dir)? {
            match read_task_file(&dir.join(&name), &config) {
                Ok(file) if !seen.insert(file.seq) => report.refused.push(Refusal {
                    file: name,
                    reason: format!("another file already holds {}", format_task_id(file.seq)),
                }),
                Ok(file) => {
                    for warning in &file.warnings {
                        report.warnings.push(Refusal {
                            file: name.clone(),
                            reason: warning.clone(),
                        });
                    }
                    parsed.push((name, file));
                }
                Err(reason) => report.refused.push(Refusal { file: name, reason }),
            }
        }
        parsed.sort_by_key(|(_, file)| file.seq);
        let by = records::Author {
            actor: "system:import".into(),
            source: context.source.as_str(),
            user: context.user.as_ref().map(|user| user.name.clone()),
        };
        let report = context
            .hub
            .shared
            .write(|tx| apply_import(tx, &config, parsed, &by, report))?;
        // an import can write thousands of rows: let the log restart small
        context.hub.store.checkpoint()?;
        Ok(Answer::from(report))
    }
}

struct TaskFile {
    seq: i64,
    task: Task,
    depends_on: Vec<String>,
    has_position: bool,
    warnings: Vec<String>,
}

fn text_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

fn list_of(field: &str, value: Option<&Value>) -> Result<Vec<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items
            .iter()
            .filter_map(|item| text_of(Some(item)))
            .collect()),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(Vec::new()),
        Some(Value::String(text)) => Ok(vec![text.clone()]),
        Some(other) => Err(format!("{field}: expected a list, got {other}")),
    }
}

fn enum_of<T>(
    field: &str,
    value: Option<String>,
    parse: fn(&str) -> Option<T>,
    allowed: &[&str],
) -> Result<T, String> {
    let text =
        value.ok_or_else(|| format!("{field}: missing; expected one of {}", allowed.join(", ")))?;
    parse(&text).ok_or_else(|| format!("{field}: {text:?} is not one of {}", allowed.join(", ")))
}

fn read_task_file(path: &Path, config: &BoardConfig) -> Result<TaskFile, String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read: {e}"))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(format!("larger than {} MiB", MAX_FILE_BYTES / 1024 / 1024));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())?;
    let text = text
        .strip_prefix('\u{feff}')
        .unwrap_or(&text)
        .replace("\r\n", "\n");
    let rest = text
        .strip_prefix("---\n")
        .ok_or("no front matter: the file must start with a --- line")?;
    let end = rest
        .find("\n---\n")
        .or_else(|| rest.strip_suffix("\n---").map(|r| r.len()))
        .ok_or("front matter is not closed by a --- line")?;
    let (front, body) = (
        &rest[..end],
        rest[end + 4..]
            .strip_prefix('\n')
            .unwrap_or(&rest[(end + 4).min(rest.len())..]),
    );
    let fields: Map<String, Value> = serde_saphyr::from_str(front)
        .map_err(|e| format!("front matter is not valid YAML: {e}"))?;
    parse_fields(&fields, body, config)
}

fn parse_fields(
    fields: &Map<String, Value>,
    body: &str,
    config: &BoardConfig,
) -> Result<TaskFile, String> {
    let get = |key: &str| fields.get(key);
    let id = text_of(get("id")).ok_or("id: missing")?;
    let seq =
        parse_task_id(&id).ok_or_else(|| format!("id: {id:?} is not a task id like TASK-12"))?;
    let mut warnings = Vec::new();
    let text = markdown_text(body);
    if text.len() != body.len() {
        warnings.push(
            "NUL characters in the description: replaced by U+FFFD, as CommonMark does".into(),
        );
    }
    let (title, description) = fitted_title(
        text_of(get("title")).unwrap_or_default().trim(),
        &text,
        &mut warnings,
    );
    check_title(&title).map_err(|e| e.to_string())?;
    let status = enum_of(
        "status",
        text_of(get("status")),
        Status::parse,
        &Status::ALL.map(Status::as_str),
    )?;
    let kind = enum_of(
        "kind",
        text_of(get("kind")),
        Kind::parse,
        &Kind::ALL.map(Kind::as_str),
    )?;
    let priority = enum_of(
        "priority",
        text_of(get("priority")),
        Priority::parse,
        &Priority::ALL.map(Priority::as_str),
    )?;
    let appetite = text_of(get("appetite"));
    if let Some(appetite) = &appetite
        && !valid_appetite(appetite)
    {
        return Err(format!(
            "appetite: {appetite:?} is not a duration such as 30m, 2h, 1d, 3w or 1cy"
        ));
    }
    let depends_on = dependencies_of(fields, &mut warnings)?;
    let assignee = text_of(get("assignee"))
        .or_else(|| text_of(get("agent_session")).map(|session| format!("agent:{session}")));
    let position = get("position").and_then(Value::as_f64);
    let created = text_of(get("created")).unwrap_or_else(crate::tools::now);
    let task = Task {
        id: format_task_id(seq),
        title,
        description,
        status,
        kind,
        priority,
        swimlane: text_of(get("swimlane"))
            .unwrap_or_else(|| config.swimlanes.first().cloned().unwrap_or_default()),
        epic: text_of(get("epic")).filter(|e| !e.trim().is_empty()),
        labels: list_of("labels", get("labels"))?,
        appetite,
        depends_on: Vec::new(),
        references: list_of("references", get("references"))?,
        assignee,
        position: position.unwrap_or(0.0),
        version: 1,
        created_at: created.clone(),
        started_at: text_of(get("started")),
        completed_at: text_of(get("completed")),
        updated_at: created,
        updated_by: "system:import".into(),
        lease: None,
    };
    Ok(TaskFile {
        seq,
        task,
        depends_on,
        has_position: position.is_some(),
        warnings,
    })
}

/// A title the board accepts: one over 200 characters is shortened, and the
/// whole title kept at the top of the description.
fn fitted_title(title: &str, body: &str, warnings: &mut Vec<String>) -> (String, String) {
    if title.chars().count() <= 200 {
        return (title.to_string(), body.to_string());
    }
    let description = if body.contains(title) {
        body.to_string()
    } else {
        format!("Full title: {title}\n\n{body}")
    };
    warnings.push(
        "title longer than 200 characters: shortened, the full title stays in the description"
            .into(),
    );
    let shortened = format!("{}…", title.chars().take(199).collect::<String>());
    (shortened, description)
}

/// `depends_on`, and the reference system's `blocked_by`, which become dependencies too.
fn dependencies_of(
    fields: &Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<Vec<String>, String> {
    let mut depends_on = list_of("depends_on", fields.get("depends_on"))?;
    let blocked_by = list_of("blocked_by", fields.get("blocked_by"))?;
    if !blocked_by.is_empty() {
        warnings.push(format!(
            "blocked_by {} kept as dependencies",
            blocked_by.join(", ")
        ));
        depends_on.extend(blocked_by);
    }
    Ok(depends_on)
}

/// The fields a file carries, for deciding whether an import changes anything.
fn same_content(a: &Task, b: &Task) -> bool {
    a.title == b.title
        && a.description == b.description
        && a.status == b.status
        && a.kind == b.kind
        && a.priority == b.priority
        && a.swimlane == b.swimlane
        && a.epic == b.epic
        && a.labels == b.labels
        && a.appetite == b.appetite
        && a.references == b.references
        && a.assignee == b.assignee
        && a.created_at == b.created_at
        && a.started_at == b.started_at
        && a.completed_at == b.completed_at
}

fn apply_import(
    tx: &Session,
    config: &BoardConfig,
    files: Vec<(String, TaskFile)>,
    by: &records::Author,
    mut report: ImportReport,
) -> Result<ImportReport, ToolError> {
    let actor = by.actor.as_str();
    let now = crate::tools::now();
    let mut known: Vec<String> = config.swimlanes.clone();
    known.extend(records::extra_swimlanes(tx)?);
    let mut imported = Vec::with_capacity(files.len());
    for (name, file) in files {
        if !known.contains(&file.task.swimlane) {
            records::add_swimlane(tx, &file.task.swimlane)?;
            known.push(file.task.swimlane.clone());
            report.swimlanes_added.push(file.task.swimlane.clone());
        }
        let mut task = file.task;
        match records::load_task(tx, file.seq)? {
            None => {
                if !file.has_position {
                    task.position = records::end_position(tx, task.status)?;
                }
                records::save_task(tx, file.seq, &task)?;
                let created = Change {
                    field: "created",
                    old: Value::Null,
                    new: json!(task.status),
                };
                records::append_history(tx, file.seq, by, 1, &now, &[created])?;
                report.created.push(task.id.clone());
            }
            Some(current)
                if same_content(&current, &task)
                    && (!file.has_position || current.position == task.position) =>
            {
                report.unchanged += 1;
            }
            Some(current) => {
                task.position = if file.has_position {
                    task.position
                } else {
                    current.position
                };
                task.depends_on = current.depends_on.clone();
                task.version = current.version + 1;
                task.updated_at = now.clone();
                task.updated_by = actor.into();
                let changes = changed_fields(&current, &task);
                records::save_change(tx, file.seq, &task, by, &now, &changes)?;
                report.updated.push(task.id.clone());
            }
        }
        imported.push((name, file.seq, file.depends_on));
    }
    link_dependencies(tx, imported, by, &now, &mut report)?;
    Ok(report)
}

fn changed_fields(before: &Task, after: &Task) -> Vec<Change<'static>> {
    let old = serde_json::to_value(before).unwrap_or(Value::Null);
    let new = serde_json::to_value(after).unwrap_or(Value::Null);
    let mut changes = Vec::new();
    for field in [
        "title",
        "description",
        "status",
        "kind",
        "priority",
        "swimlane",
        "epic",
        "labels",
        "appetite",
        "references",
        "assignee",
        "position",
        "created_at",
        "started_at",
        "completed_at",
    ] {
        if old[field] != new[field] {
            changes.push(Change {
                field,
                old: old[field].clone(),
                new: new[field].clone(),
            });
        }
    }
    changes
}

/// Second pass, once every task exists: dependencies may point at any imported task.
fn link_dependencies(
    tx: &Session,
    imported: Vec<(String, i64, Vec<String>)>,
    by: &records::Author,
    now: &str,
    report: &mut ImportReport,
) -> Result<(), ToolError> {
    let mut by_task: BTreeMap<i64, (String, Vec<i64>)> = BTreeMap::new();
    for (name, seq, ids) in imported {
        let mut resolved = Vec::new();
        for id in ids {
            match parse_task_id(&id) {
                Some(dependency) if dependency != seq && records::task_exists(tx, dependency)? => {
                    if !resolved.contains(&dependency) {
                        resolved.push(dependency);
                    }
                }
                _ => report.warnings.push(Refusal {
                    file: name.clone(),
                    reason: format!("dependency {id} dropped: no such task on the board"),
                }),
            }
        }
        resolved.sort_unstable();
        by_task.insert(seq, (name, resolved));
    }
    for (seq, (name, mut dependencies)) in by_task {
        let Some(current) = records::load_task(tx, seq)? else {
            continue;
        };
        let current_ids: Vec<i64> = current
            .depends_on
            .iter()
            .filter_map(|id| parse_task_id(id))
            .collect();
        if current_ids == dependencies {
            continue;
        }
        if let Some(cycle) = rules::find_cycle(tx, seq, &dependencies)? {
            report.warnings.push(Refusal {
                file: name,
                reason: format!(
                    "dependencies dropped: they would make a cycle {}",
                    cycle.join(" → ")
                ),
            });
            dependencies = current_ids.clone();
            if dependencies.is_empty() {
                continue;
            }
        }
        records::set_dependencies(tx, seq, &dependencies)?;
        if !report.created.contains(&current.id) && !report.updated.contains(&current.id) {
            report.updated.push(current.id.clone());
            report.unchanged = report.unchanged.saturating_sub(1);
        }
        let change = Change {
            field: "depends_on",
            old: json!(current.depends_on),
            new: json!(
                dependencies
                    .iter()
                    .copied()
                    .map(format_task_id)
                    .collect::<Vec<_>>()
            ),
        };
        records::append_history(tx, seq, by, current.version, now, &[change])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::stays_inside;

    #[test]
    fn a_folder_stays_inside_unless_it_leaves_by_dots_links_git_or_the_state_folder() {
        let root_holder = tempfile::tempdir().unwrap();
        let root = root_holder.path();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join(".cos")).unwrap();
        std::fs::create_dir_all(root.join("boards")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("away")).unwrap();
        let state = root.join(".cos");
        let inside = |dir: &str| stays_inside(&root.join(dir), root, &state);
        assert!(inside("boards"));
        assert!(inside("boards/new/deeper"), "folders still to be made");
        assert!(inside("tasks"));
        assert!(!inside("../elsewhere"));
        assert!(!inside("boards/../../elsewhere"));
        assert!(
            !inside(outside.path().to_str().unwrap()),
            "an absolute path"
        );
        assert!(!inside("away"), "a link to a folder outside");
        assert!(
            !inside("away/new"),
            "a folder to be made beyond such a link"
        );
        assert!(!inside(".git"));
        assert!(!inside(".git/hooks"));
        assert!(!inside(".cos/tasks"), "the state folder");
        // a state folder elsewhere is kept out wherever it is
        let elsewhere = outside.path().join("state");
        std::fs::create_dir_all(&elsewhere).unwrap();
        assert!(stays_inside(&root.join(".cos"), root, &elsewhere));
        assert!(!stays_inside(&elsewhere, root, &elsewhere));
    }
}
