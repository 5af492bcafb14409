//! What `tools/list` costs an agent: the definitions a model reads (name,
//! description, input schema) and the output schemas a client checks stay
//! within their budgets, and stay useful: every tool still says what it does.

use super::{call, repository_with_tasks, stdio_client};
use serde_json::{Value, json};

/// The definitions a model reads, all tools together.
const MODEL_FACING_BUDGET: usize = 35_000;
/// The output schemas, all tools together.
const OUTPUT_SCHEMA_BUDGET: usize = 60_000;

fn compact(value: &impl serde::Serialize) -> usize {
    serde_json::to_string(value)
        .map(|text| text.len())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn all_tool_definitions_together_stay_within_their_budgets() {
    let repo = repository_with_tasks(1);
    let client = stdio_client(repo.path()).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), cos_hub::hub::default_registry().iter().count());
    let model_facing: usize = tools
        .iter()
        .map(|tool| {
            compact(&json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": tool.input_schema,
            }))
        })
        .sum();
    let outputs: usize = tools.iter().map(|tool| compact(&tool.output_schema)).sum();
    assert!(
        model_facing <= MODEL_FACING_BUDGET,
        "names, descriptions and input schemas take {model_facing} bytes, over {MODEL_FACING_BUDGET}"
    );
    assert!(
        outputs <= OUTPUT_SCHEMA_BUDGET,
        "output schemas take {outputs} bytes, over {OUTPUT_SCHEMA_BUDGET}"
    );
    for tool in &tools {
        let description = tool.description.as_deref().unwrap_or("");
        assert!(
            description.len() >= 30 && description.ends_with('.'),
            "{}: a description that says what it does and answers: {description:?}",
            tool.name
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lean_definition_still_names_every_field_and_each_edits_fields() {
    let repo = repository_with_tasks(1);
    let client = stdio_client(repo.path()).await;
    let tools = client.list_all_tools().await.unwrap();
    let registry = cos_hub::hub::default_registry();
    for tool in &tools {
        let full = &registry.get(&tool.name).unwrap().input_schema;
        let lean = Value::Object((*tool.input_schema).clone());
        assert_eq!(
            lean["properties"]
                .as_object()
                .map(|p| p.keys().collect::<Vec<_>>()),
            full["properties"]
                .as_object()
                .map(|p| p.keys().collect::<Vec<_>>()),
            "{}: the same arguments",
            tool.name
        );
        assert_eq!(lean["required"], full["required"], "{}", tool.name);
        assert!(
            !lean.to_string().contains("\\\\u200b"),
            "{}: the text rules' patterns are left to the hub",
            tool.name
        );
    }
    // a patch's operations: one object whose description says each op's fields
    let patch = tools.iter().find(|t| t.name == "cos_docs_patch").unwrap();
    let operation = &patch.input_schema["properties"]["operations"]["items"];
    assert_eq!(operation["properties"]["op"]["enum"][0], "replace_section");
    let description = operation["description"].as_str().unwrap();
    assert!(
        description.contains("replace_text (find, replace, expected_count?)"),
        "{description}"
    );
    // and the hub still refuses what the full schema refuses
    let refused = super::envelope(
        &call(
            &client,
            "cos_task_create",
            json!({"title": "tab\tin a title"}),
        )
        .await,
    );
    assert_eq!(refused["error"]["code"], "E_ARGUMENT", "{refused}");
    client.cancel().await.unwrap();
}
