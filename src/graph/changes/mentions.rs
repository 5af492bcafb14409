//! The tasks and document sections that name a changed symbol or file,
//! found through the search and board tools (by name, never through their
//! code): open tasks first. A switched-off module names nothing.

use serde::Serialize;
use serde_json::{Value, json};
use utoipa::ToSchema;

use crate::envelope::Category;
use crate::tools::{ToolContext, ToolError};

/// Mentions of one kind listed per symbol or file at most.
const MENTIONS: u32 = 10;

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaskMention {
    pub id: String,
    pub title: String,
    pub status: String,
    /// Who holds it, when someone does.
    pub assignee: Option<String>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DocMention {
    pub mount: String,
    pub path: String,
    /// The section's heading path.
    pub section: Option<String>,
}

/// The hits of `name` as a phrase in `area`, or none when that area is off.
fn hits(context: &ToolContext, name: &str, area: &str) -> Result<Vec<Value>, ToolError> {
    let phrase = format!("\"{}\"", name.replace('"', " "));
    let asked = json!({"q": phrase, "area": area, "limit": MENTIONS});
    match context.call("cos_search", asked) {
        Ok(found) => Ok(found["hits"].as_array().cloned().unwrap_or_default()),
        Err(error) if switched_off(&error) => Ok(Vec::new()),
        Err(error) => Err(error),
    }
}

fn switched_off(error: &ToolError) -> bool {
    error.category() == Category::ModuleDisabled
}

/// The tasks that name `name`, open ones first.
pub fn tasks(context: &ToolContext, name: &str) -> Result<Vec<TaskMention>, ToolError> {
    let mut found = Vec::new();
    for hit in hits(context, name, "tasks")? {
        let Some(id) = hit["opens"]["task_id"].as_str() else {
            continue;
        };
        let task = match context.call("cos_task_show", json!({"id": id})) {
            Ok(task) => task,
            Err(error) if switched_off(&error) => return Ok(Vec::new()),
            Err(error) => return Err(error),
        };
        found.push(TaskMention {
            id: id.to_string(),
            title: task["title"].as_str().unwrap_or_default().to_string(),
            status: task["status"].as_str().unwrap_or_default().to_string(),
            assignee: task["assignee"].as_str().map(String::from),
        });
    }
    let done = |task: &TaskMention| matches!(task.status.as_str(), "complete" | "archive");
    found.sort_by_key(|task| done(task));
    Ok(found)
}

/// The document sections that name `name`.
pub fn documents(context: &ToolContext, name: &str) -> Result<Vec<DocMention>, ToolError> {
    Ok(hits(context, name, "docs")?
        .iter()
        .filter_map(|hit| {
            let document = &hit["opens"]["document"];
            Some(DocMention {
                mount: document["mount"].as_str()?.to_string(),
                path: document["path"].as_str()?.to_string(),
                section: document["section"].as_str().map(String::from),
            })
        })
        .collect())
}
