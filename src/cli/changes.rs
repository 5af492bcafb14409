//! `cos changes`: what the working tree's change (or the staged one, or a
//! range's) affects, before a commit: each changed definition with its
//! risk, dependents, tests, tasks and documents, as lines a person reads,
//! or the envelope with `--json`.

use clap::Args;
use serde_json::{Value, json};

use super::{call, call_for_data, print_envelope};
use crate::envelope::Budget;
use crate::tools::Hub;

#[derive(Debug, Args)]
pub struct ChangesArgs {
    /// The staged changes instead of the working tree.
    #[arg(long, conflicts_with = "range")]
    pub staged: bool,
    /// `A..B`, or one ref for that ref against the working tree.
    #[arg(long)]
    pub range: Option<String>,
    /// How far to follow dependents, 1 to 4.
    #[arg(long, default_value_t = 2)]
    pub depth: u32,
    /// Print the tool's envelope instead of the list.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ChangesArgs, hub: &Hub) -> i32 {
    let mut arguments = json!({"depth": args.depth});
    if args.staged {
        arguments["staged"] = json!(true);
    }
    if let Some(range) = &args.range {
        arguments["range"] = json!(range);
    }
    if args.json {
        return match call(hub, "cos_changes", arguments, Budget::None) {
            Ok(envelope) => print_envelope(&envelope),
            Err(code) => code,
        };
    }
    match call_for_data(hub, "cos_changes", arguments) {
        Ok(data) => {
            print!("{}", render(&data));
            0
        }
        Err(code) => code,
    }
}

fn names(list: &Value, field: &str) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item[field].as_str().map(String::from))
        .collect()
}

/// The answer as lines a person reads.
fn render(data: &Value) -> String {
    let summary = &data["summary"];
    let mut out = format!(
        "{}: {} files, {} definitions changed\n",
        data["against"].as_str().unwrap_or_default(),
        summary["files"],
        summary["symbols"]
    );
    for symbol in data["symbols"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "\n{:<6} {} {} {} ({}:{}): {}\n",
            symbol["risk"].as_str().unwrap_or_default(),
            symbol["change"].as_str().unwrap_or_default(),
            symbol["kind"].as_str().unwrap_or_default(),
            symbol["name"].as_str().unwrap_or_default(),
            symbol["path"].as_str().unwrap_or_default(),
            symbol["line"],
            symbol["risk_reason"].as_str().unwrap_or_default(),
        ));
        let dependents: Vec<String> = symbol["dependents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["node"]["label"].as_str().map(String::from))
            .collect();
        for (label, list) in [
            ("dependents", dependents),
            ("tests", names(&symbol["tests"], "label")),
            ("tasks", names(&symbol["tasks"], "id")),
            ("documents", names(&symbol["documents"], "path")),
        ] {
            if !list.is_empty() {
                out.push_str(&format!("       {label}: {}\n", list.join(", ")));
            }
        }
    }
    let others: Vec<&Value> = data["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|file| file["symbols"] == 0)
        .collect();
    if !others.is_empty() {
        out.push_str("\nother files:\n");
        for file in others {
            let tasks = names(&file["tasks"], "id");
            out.push_str(&format!(
                "  {} {}{}\n",
                file["change"].as_str().unwrap_or_default(),
                file["path"].as_str().unwrap_or_default(),
                if tasks.is_empty() {
                    String::new()
                } else {
                    format!(" (tasks: {})", tasks.join(", "))
                }
            ));
        }
    }
    out
}
