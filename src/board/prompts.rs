//! The board's prompt: work the next ready task. It shows the task that
//! `cos_task_claim_next` would hand out now, with what it waits for and what
//! search finds about it, and the calls that claim, work and finish it.
//! Fetching the prompt changes nothing: the agent claims.

use serde_json::{Value, json};
use std::collections::BTreeMap;

use crate::envelope::ErrorBody;
use crate::tools::offers::{Caller, PromptArgument, PromptSpec, search_lines};

pub const PROMPTS: &[PromptSpec] = &[PromptSpec {
    name: "work-next-task",
    title: "Work the next ready task",
    description: "The task the board would hand out next (highest priority, every dependency \
                  complete), with its description, dependencies and related code and documents, and \
                  the calls to claim, work and finish it.",
    arguments: &[
        PromptArgument {
            name: "label",
            description: "only tasks with this label",
            required: false,
        },
        PromptArgument {
            name: "swimlane",
            description: "only tasks in this swimlane",
            required: false,
        },
    ],
    build: next_task,
}];

fn next_task(caller: &dyn Caller, given: &BTreeMap<String, String>) -> Result<String, ErrorBody> {
    let mut filters = json!({});
    for name in ["label", "swimlane"] {
        if let Some(value) = given.get(name) {
            filters[name] = json!(value);
        }
    }
    let mut asked = filters.clone();
    asked["limit"] = json!(1);
    let ready = caller.call("cos_task_ready", asked)?;
    let Some(id) = ready["results"][0]["id"].as_str() else {
        return Ok(format!(
            "No task on the board is ready{} (in icebox with every dependency complete). \
             Look at cos_task_board for blocked or waiting work, or create one with cos_task_create.",
            describe_filters(&filters)
        ));
    };
    let task = caller.call("cos_task_show", json!({"id": id}))?;
    let dependencies = caller.call("cos_task_dependencies", json!({"id": id}))?;
    let mut text = format!(
        "Work the next ready task of this repository's board.\n\n\
         ## {id}: {}\n\n{} {} task, {}. Version {}.\n\n{}\n",
        task["title"].as_str().unwrap_or_default(),
        task["priority"].as_str().unwrap_or_default(),
        task["kind"].as_str().unwrap_or_default(),
        task["status"].as_str().unwrap_or_default(),
        task["version"],
        task["description"]
            .as_str()
            .unwrap_or("(no description)")
            .trim(),
    );
    text.push_str(&dependency_lines(&dependencies));
    text.push_str(&related(
        caller,
        id,
        task["title"].as_str().unwrap_or_default(),
    ));
    text.push_str(&format!(
        "\n## Steps\n\
         1. Claim it: cos_task_claim_next with {} (atomic: if another agent took {id} first, \
         you get the next one; work the task it returns).\n\
         2. Read what it touches: cos_graph_context and cos_search for the code, cos_docs_read for the documents.\n\
         3. Do the work; record findings with cos_supervise_record_discovery if this is a supervised session.\n\
         4. Finish: cos_task_move from in_progress to testing (or complete), with the version you hold.\n",
        if filters.as_object().is_some_and(|f| f.is_empty()) {
            "no filters".to_string()
        } else {
            format!("the filters {filters}")
        }
    ));
    Ok(text)
}

fn describe_filters(filters: &Value) -> String {
    match filters.as_object() {
        Some(filters) if !filters.is_empty() => format!(" with {}", Value::Object(filters.clone())),
        _ => String::new(),
    }
}

fn dependency_lines(dependencies: &Value) -> String {
    let listed = dependencies["dependencies"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if listed.is_empty() {
        return "\nIt depends on no other task.\n".into();
    }
    let mut text = String::from("\n## Depends on\n");
    for dependency in listed {
        text.push_str(&format!(
            "- {} ({}): {}\n",
            dependency["id"].as_str().unwrap_or_default(),
            dependency["status"].as_str().unwrap_or_default(),
            dependency["title"].as_str().unwrap_or_default(),
        ));
    }
    text
}

/// What search finds for the task's id and the longest words of its title;
/// nothing when search is switched off.
fn related(caller: &dyn Caller, id: &str, title: &str) -> String {
    let mut words: Vec<&str> = title
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|word| word.chars().count() > 3)
        .collect();
    words.sort_by_key(|word| std::cmp::Reverse(word.len()));
    let mut lines = Vec::new();
    for query in [
        id.to_string(),
        words.iter().take(2).copied().collect::<Vec<_>>().join(" "),
    ] {
        if query.trim().is_empty() {
            continue;
        }
        if let Ok(found) = caller.call("cos_search", json!({"q": query, "limit": 5})) {
            let itself =
                |hit: &Value| hit["kind"] == "task" && hit["opens"].to_string().contains(id);
            for line in search_lines(&found, itself) {
                if !lines.contains(&line) {
                    lines.push(line);
                }
            }
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!("\n## Related, from search\n{}\n", lines.join("\n"))
}
