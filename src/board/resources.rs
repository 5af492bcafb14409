//! The board as resources: `cos://board`, every column in a few lines, and
//! `cos://task/{id}`, one task as the Markdown file `cos board export`
//! writes. Both read through the board's tools.

use serde_json::{Map, Value, json};

use super::files;
use super::model::Task;
use crate::envelope::{Category, Code, ErrorBody};
use crate::tools::offers::{
    Caller, ResourceAddress, ResourceEntry, ResourceKind, ResourcePage, ResourceText,
    argument_error, cursor_error, resource_uri,
};

/// Tasks per page of a listing.
const PAGE: u32 = 100;
/// Cards the board summary shows per column; the column's total says the rest.
const CARDS_PER_COLUMN: usize = 25;

pub const RESOURCES: &[ResourceKind] = &[
    ResourceKind {
        segment: "board",
        template: None,
        name: "board",
        description: "The board in a few lines: each column's total, WIP state and first cards.",
        mime_type: "text/markdown",
        list: list_board,
        read: read_board,
    },
    ResourceKind {
        segment: "task",
        template: Some("cos://task/{id}"),
        name: "task",
        description: "One task as Markdown: YAML front matter (status, priority, dependencies, \
                      assignee, ...) and its description. _meta.version is the version cos_task_edit \
                      expects.",
        mime_type: "text/markdown",
        list: list_tasks,
        read: read_task,
    },
];

fn list_board(_: &dyn Caller, cursor: Option<&str>) -> Result<ResourcePage, ErrorBody> {
    if cursor.is_some() {
        return Err(cursor_error());
    }
    Ok(ResourcePage {
        entries: vec![ResourceEntry {
            uri: resource_uri("board", &[]),
            name: "board".into(),
            title: Some("The board".into()),
            description: "Every column of the board with its total, WIP state and first cards"
                .into(),
            size: None,
            meta: Map::new(),
        }],
        next: None,
    })
}

fn read_board(caller: &dyn Caller, address: &ResourceAddress) -> Result<ResourceText, ErrorBody> {
    if !address.segments.is_empty() || !address.query.is_empty() {
        return Err(argument_error("uri", "cos://board, with nothing after it"));
    }
    let board = caller.call("cos_task_board", json!({}))?;
    let mut text = format!("# Board (revision {})\n", board["revision"]);
    for column in board["columns"].as_array().into_iter().flatten() {
        text.push_str(&column_summary(column));
    }
    let mut meta = Map::new();
    meta.insert("revision".into(), board["revision"].clone());
    Ok(ResourceText { text, meta })
}

fn column_summary(column: &Value) -> String {
    let status = column["status"].as_str().unwrap_or_default();
    let total = column["total"].as_u64().unwrap_or(0);
    let wip = match column["wip"]["limit"].as_u64() {
        Some(limit) => format!(", WIP {}/{limit}", column["wip"]["occupied"]),
        None => String::new(),
    };
    let mut text = format!("\n## {status}: {total}{wip}\n");
    let cards = column["cards"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    for card in cards.iter().take(CARDS_PER_COLUMN) {
        let assignee = card["assignee"]
            .as_str()
            .map(|who| format!(" @{who}"))
            .unwrap_or_default();
        text.push_str(&format!(
            "- {} [{}] {}{assignee}\n",
            card["id"].as_str().unwrap_or_default(),
            card["priority"].as_str().unwrap_or_default(),
            card["title"].as_str().unwrap_or_default(),
        ));
    }
    let shown = cards.len().min(CARDS_PER_COLUMN) as u64;
    if total > shown {
        text.push_str(&format!("- ... {} more (cos_task_board)\n", total - shown));
    }
    text
}

fn list_tasks(caller: &dyn Caller, cursor: Option<&str>) -> Result<ResourcePage, ErrorBody> {
    let found = caller
        .call("cos_task_search", json!({"limit": PAGE, "cursor": cursor}))
        .map_err(|error| match error.code {
            Code::E_CURSOR | Code::STALE_CURSOR => cursor_error(),
            _ => error,
        })?;
    let entries = found["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(task_entry)
        .collect();
    Ok(ResourcePage {
        entries,
        next: found["next_cursor"].as_str().map(String::from),
    })
}

fn task_entry(card: &Value) -> ResourceEntry {
    let id = card["id"].as_str().unwrap_or_default();
    let mut meta = Map::new();
    meta.insert("version".into(), card["version"].clone());
    meta.insert("status".into(), card["status"].clone());
    ResourceEntry {
        uri: resource_uri("task", &[id]),
        name: id.to_string(),
        title: card["title"].as_str().map(String::from),
        description: format!(
            "{} {} task, {}",
            card["priority"].as_str().unwrap_or_default(),
            card["kind"].as_str().unwrap_or_default(),
            card["status"].as_str().unwrap_or_default()
        ),
        size: None,
        meta,
    }
}

fn read_task(caller: &dyn Caller, address: &ResourceAddress) -> Result<ResourceText, ErrorBody> {
    let [id] = address.segments.as_slice() else {
        return Err(argument_error(
            "uri",
            "cos://task/{id}, such as cos://task/TASK-12",
        ));
    };
    if !address.query.is_empty() {
        return Err(argument_error("uri", "cos://task/{id} without a query"));
    }
    let shown = caller.call("cos_task_show", json!({"id": id}))?;
    let task: Task = serde_json::from_value(shown).map_err(|_| {
        ErrorBody::new(
            Category::Internal,
            Code::E_INTERNAL,
            "cos_task_show answered a task this reader does not know",
        )
    })?;
    let mut meta = Map::new();
    meta.insert("id".into(), json!(task.id));
    meta.insert("version".into(), json!(task.version));
    Ok(ResourceText {
        text: files::render(&task),
        meta,
    })
}
