//! MCP prompts through a real client: listed with their arguments, filled
//! from the hub's live data, and bad arguments refused with the contract's
//! error body.

use super::{Client, call, repository_with_tasks, stdio_client};
use rmcp::model::{GetPromptRequestParams, GetPromptResult};
use rmcp::service::ServiceError;
use serde_json::{Map, Value, json};

async fn prompt(client: &Client, name: &str, arguments: Value) -> Result<String, rmcp::ErrorData> {
    let arguments: Map<String, Value> = serde_json::from_value(arguments).unwrap();
    let asked = GetPromptRequestParams::new(name.to_string()).with_arguments(arguments);
    match client.get_prompt(asked).await {
        Ok(GetPromptResult { messages, .. }) => Ok(messages
            .iter()
            .map(|message| match message.content.as_text() {
                Some(content) => content.text.clone(),
                None => panic!("{name}: text, not {:?}", message.content),
            })
            .collect()),
        Err(ServiceError::McpError(error)) => Err(error),
        Err(other) => panic!("{name}: a JSON-RPC answer, not {other}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_workflow_prompts_are_listed_and_filled_from_live_data() {
    let repo = repository_with_tasks(3);
    let client = stdio_client(repo.path()).await;
    let listed = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = listed.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["work-next-task", "review-change", "record-evidence"]
    );
    for listed in &listed {
        assert!(listed.description.as_deref().is_some_and(|d| d.len() > 40));
    }
    let review = listed.iter().find(|p| p.name == "review-change").unwrap();
    let target = &review.arguments.as_ref().unwrap()[0];
    assert_eq!(
        (target.name.as_str(), target.required),
        ("target", Some(true))
    );

    // the task the board hands out next: the highest priority, here made P0
    let shown = super::envelope(&call(&client, "cos_task_show", json!({"id": "TASK-2"})).await);
    call(
        &client,
        "cos_task_edit",
        json!({"id": "TASK-2", "version": shown["data"]["version"], "changes": {"priority": "P0"}}),
    )
    .await;
    let next = prompt(&client, "work-next-task", json!({})).await.unwrap();
    assert!(
        next.contains("## TASK-002: Generated task number 2")
            && next.contains("cos_task_claim_next"),
        "{next}"
    );
    let none = prompt(&client, "work-next-task", json!({"label": "no-such-label"}))
        .await
        .unwrap();
    assert!(none.starts_with("No task on the board is ready"), "{none}");
    // fetching a prompt claims nothing
    let board = super::envelope(&call(&client, "cos_task_show", json!({"id": "TASK-2"})).await);
    assert_eq!(board["data"]["status"], "icebox");

    call(&client, "cos_graph_index", json!({})).await;
    let review = prompt(&client, "review-change", json!({"target": "connect"}))
        .await
        .unwrap();
    assert!(
        review.contains("`connect` (db.py:1)") && review.contains("`save` (store.py:3) via calls"),
        "{review}"
    );

    let evidence = prompt(&client, "record-evidence", json!({"task": "TASK-1"}))
        .await
        .unwrap();
    assert!(
        evidence.contains("no evidence session yet")
            && evidence.contains("cos_supervise_record_output"),
        "{evidence}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_refuses_arguments_it_does_not_take_with_the_contracts_errors() {
    let repo = repository_with_tasks(1);
    let client = stdio_client(repo.path()).await;
    for (name, arguments, field) in [
        ("review-change", json!({}), "target"),
        ("review-change", json!({"target": "   "}), "target"),
        (
            "review-change",
            json!({"target": "x", "colour": "red"}),
            "colour",
        ),
        ("record-evidence", json!({"task": 12}), "task"),
        ("no-such-prompt", json!({}), "name"),
    ] {
        let error = prompt(&client, name, arguments.clone())
            .await
            .expect_err(name);
        assert_eq!(error.code.0, -32602, "{name} {arguments}: {error:?}");
        let data = error.data.unwrap();
        assert_eq!(
            (
                data["category"].as_str(),
                data["code"].as_str(),
                data["details"]["field"].as_str()
            ),
            (Some("validation"), Some("E_ARGUMENT"), Some(field)),
            "{name} {arguments}"
        );
    }
    // a target the graph does not hold is the graph's own refusal
    let missing = prompt(
        &client,
        "review-change",
        json!({"target": "no_such_symbol_anywhere"}),
    )
    .await
    .unwrap_err();
    assert_eq!(missing.code.0, -32602);
    assert_eq!(missing.data.unwrap()["category"], "not_found");

    call(
        &client,
        "cos_module_set",
        json!({"module": "graph", "enabled": false}),
    )
    .await;
    let off = prompt(&client, "review-change", json!({"target": "connect"}))
        .await
        .unwrap_err();
    assert_eq!(off.data.unwrap()["category"], "module_disabled");
    client.cancel().await.unwrap();
}
