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

/// The tasks (open ones first) and document sections that name `name`,
/// from one search of both; none from an area whose module is off.
pub fn of(
    context: &ToolContext,
    name: &str,
) -> Result<(Vec<TaskMention>, Vec<DocMention>), ToolError> {
    let phrase = format!("\"{}\"", name.replace('"', " "));
    let asked = json!({"q": phrase, "area": "tasks,docs", "limit": 2 * MENTIONS});
    let hits = match context.call("cos_search", asked) {
        Ok(found) => found["hits"].as_array().cloned().unwrap_or_default(),
        Err(error) if switched_off(&error) => return Ok((Vec::new(), Vec::new())),
        Err(error) => return Err(error),
    };
    let documents = hits
        .iter()
        .filter_map(|hit| {
            let document = &hit["opens"]["document"];
            Some(DocMention {
                mount: document["mount"].as_str()?.to_string(),
                path: document["path"].as_str()?.to_string(),
                section: document["section"].as_str().map(String::from),
            })
        })
        .take(MENTIONS as usize)
        .collect();
    Ok((tasks(context, &hits)?, documents))
}

fn switched_off(error: &ToolError) -> bool {
    error.category() == Category::ModuleDisabled
}

/// The tasks among `hits`, each as the board shows it now, open ones first.
fn tasks(context: &ToolContext, hits: &[Value]) -> Result<Vec<TaskMention>, ToolError> {
    let mut found = Vec::new();
    for id in hits
        .iter()
        .filter_map(|hit| hit["opens"]["task_id"].as_str())
        .take(MENTIONS as usize)
    {
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
