//! The graph's prompt: review a change before commit. For the symbol or
//! file that changed it lists what depends on it by tier and where its name
//! appears (tests, documents, tasks), then the checks to make.

use serde_json::{Value, json};
use std::collections::BTreeMap;

use crate::envelope::ErrorBody;
use crate::tools::offers::{Caller, PromptArgument, PromptSpec, search_lines};

/// Dependents a prompt names one by one; the tier's count says the rest.
const NAMED: usize = 15;

pub const PROMPTS: &[PromptSpec] = &[PromptSpec {
    name: "review-change",
    title: "Review a change before commit",
    description: "What a changed symbol or file breaks or should be reviewed for (dependents by tier \
                  from the graph), where its name appears in tests, documents and tasks, and the checks \
                  to make before committing.",
    arguments: &[PromptArgument {
        name: "target",
        description: "the changed symbol, file path or node uid",
        required: true,
    }],
    build: review,
}];

fn review(caller: &dyn Caller, given: &BTreeMap<String, String>) -> Result<String, ErrorBody> {
    let target = given.get("target").map(String::as_str).unwrap_or_default();
    let impact = caller.call("cos_graph_impact", json!({"uid": target}))?;
    let node = &impact["node"];
    let label = node["label"].as_str().unwrap_or(target);
    let mut text = format!(
        "Review the change to {} `{label}`{} before committing it.\n",
        node["kind"].as_str().unwrap_or("node"),
        place(node)
    );
    for (tier, heading) in [
        (
            "will_break",
            "Will break (one hop: calls, imports, extends it)",
        ),
        ("should_review", "Should be reviewed (two hops)"),
        ("context", "Context (three hops or more)"),
    ] {
        text.push_str(&tier_lines(&impact["tiers"][tier], heading));
    }
    if let Ok(found) = caller.call("cos_search", json!({"q": label, "limit": 10})) {
        let same = |hit: &Value| hit["path"] == node["path"] && hit["line"] == node["line"];
        let lines = search_lines(&found, same);
        if !lines.is_empty() {
            text.push_str(&format!(
                "\n## Where the name appears (search)\n{}\n",
                lines.join("\n")
            ));
        }
    }
    text.push_str(
        "\n## Checks\n\
         1. Read every dependent that will break (cos_graph_context on each) and fix the ones the change breaks.\n\
         2. Run the tests that exercise it; add one if none does.\n\
         3. Update the documents and tasks that name it (cos_docs_patch, cos_task_edit).\n\
         4. A renamed symbol: cos_graph_rename_plan lists every site in the order to edit them.\n",
    );
    Ok(text)
}

fn place(node: &Value) -> String {
    match (node["path"].as_str(), node["line"].as_u64()) {
        (Some(path), Some(line)) => format!(" ({path}:{line})"),
        (Some(path), None) => format!(" ({path})"),
        _ => String::new(),
    }
}

fn tier_lines(tier: &Value, heading: &str) -> String {
    let dependents = tier.as_array().map(Vec::as_slice).unwrap_or(&[]);
    if dependents.is_empty() {
        return String::new();
    }
    let mut text = format!("\n## {heading}: {}\n", dependents.len());
    for dependent in dependents.iter().take(NAMED) {
        text.push_str(&format!(
            "- {} `{}`{} via {}\n",
            dependent["node"]["kind"].as_str().unwrap_or_default(),
            dependent["node"]["label"].as_str().unwrap_or_default(),
            place(&dependent["node"]),
            dependent["edge"].as_str().unwrap_or_default(),
        ));
    }
    if dependents.len() > NAMED {
        text.push_str(&format!("- ... {} more\n", dependents.len() - NAMED));
    }
    text
}
