//! Agent evidence's prompt: record evidence for a task. It shows the task's
//! sessions, the slots a session's bundle still lacks, and the calls that
//! record outputs, discoveries and backtracks.

use serde_json::{Value, json};
use std::collections::BTreeMap;

use crate::envelope::ErrorBody;
use crate::tools::offers::{Caller, PromptArgument, PromptSpec};

pub const PROMPTS: &[PromptSpec] = &[PromptSpec {
    name: "record-evidence",
    title: "Record evidence for a task",
    description: "The evidence sessions of a task and the slots a session's bundle still lacks, with \
                  the calls that record an output, a discovery or a backtrack.",
    arguments: &[
        PromptArgument {
            name: "task",
            description: "the task the work is for, such as TASK-12",
            required: true,
        },
        PromptArgument {
            name: "session_id",
            description: "the session to record into (default: the task's latest, or a new one)",
            required: false,
        },
    ],
    build: record,
}];

fn record(caller: &dyn Caller, given: &BTreeMap<String, String>) -> Result<String, ErrorBody> {
    let task = given.get("task").map(String::as_str).unwrap_or_default();
    let sessions = caller.call(
        "cos_supervise_sessions",
        json!({"task_marker": task, "limit": 20}),
    )?;
    let listed = sessions["sessions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let session = match given.get("session_id") {
        Some(id) => Some(id.clone()),
        None => listed
            .iter()
            .max_by_key(|s| s["updated_at"].as_str().unwrap_or_default().to_string())
            .and_then(|s| s["session_id"].as_str().map(String::from)),
    };
    let mut text = format!("Record the evidence of the work on {task}.\n");
    if listed.is_empty() {
        text.push_str("\nIt has no evidence session yet: the first output recorded begins one.\n");
    } else {
        text.push_str("\n## Sessions\n");
        for summary in listed {
            text.push_str(&format!(
                "- {} (persona {}): {} slots filled, {} dispatches{}\n",
                summary["session_id"].as_str().unwrap_or_default(),
                summary["persona_id"].as_str().unwrap_or_default(),
                summary["fields_filled"],
                summary["dispatch_count"],
                degraded(&summary["degraded_formulas"]),
            ));
        }
    }
    let session_id = session.unwrap_or_else(|| "<a new session id>".into());
    if given.contains_key("session_id") || !listed.is_empty() {
        let bundle = caller.call("cos_supervise_bundle", json!({"session_id": session_id}))?;
        text.push_str(&empty_slots(&session_id, &bundle));
    }
    text.push_str(&format!(
        "\n## Calls\n\
         - An output: cos_supervise_record_output {{session_id: \"{session_id}\", task_marker: \"{task}\", \
         persona_id, formula_id (the role), output_json (the output as JSON text), status: ok|fail|timeout}}.\n\
         - A discovery: cos_supervise_record_discovery {{session_id, kind, summary, impact_assessment, \
         decision: backtrack_now|record_for_later}}.\n\
         - A backtrack: cos_supervise_record_backtrack {{session_id, from_formula, to_formula, reason}}.\n\
         Then cos_supervise_bundle {{session_id}} shows the bundle as recorded.\n"
    ));
    Ok(text)
}

fn degraded(formulas: &Value) -> String {
    match formulas.as_array() {
        Some(formulas) if !formulas.is_empty() => {
            let names: Vec<&str> = formulas.iter().filter_map(Value::as_str).collect();
            format!(", degraded: {}", names.join(", "))
        }
        _ => String::new(),
    }
}

fn empty_slots(session_id: &str, bundle: &Value) -> String {
    let empty: Vec<String> = bundle["slots"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|slot| slot["filled"] != json!(true))
        .map(|slot| {
            let roles: Vec<&str> = slot["roles"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            format!(
                "- {} (from {})",
                slot["field"].as_str().unwrap_or_default(),
                roles.join(" or ")
            )
        })
        .collect();
    if empty.is_empty() {
        return format!("\nEvery slot of {session_id}'s bundle is filled.\n");
    }
    format!("\n## Still empty in {session_id}\n{}\n", empty.join("\n"))
}
