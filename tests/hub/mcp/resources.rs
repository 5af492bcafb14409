//! MCP resources through a real client: documents, tasks and the board
//! listed page by page, their templates, reads whole and by section within
//! the agent budget, the refusals a bad address gets, the module switch,
//! and a watched document's change announced.

use super::{Client, call, envelope, repository_with_tasks, stdio_client};
use rmcp::model::{
    ReadResourceRequestParams, ReadResourceResult, ResourceContents,
    ResourceUpdatedNotificationParam, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient, ServiceError};
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};
use std::time::Duration;

/// The board's tasks, a guide with sections and a document larger than
/// the agent budget.
fn repository() -> tempfile::TempDir {
    let repo = repository_with_tasks(120);
    let docs = repo.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("guide.md"),
        "# Guide\n\nIntro.\n\n## Setup\n\nRun it.\n\n## Use\n\nUse it.\n",
    )
    .unwrap();
    let paragraph = "A line of the long document that goes on for a while. ".repeat(20);
    std::fs::write(
        docs.join("long.md"),
        format!("# Long\n\n{}", format!("{paragraph}\n\n").repeat(200)),
    )
    .unwrap();
    repo
}

async fn read(client: &Client, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    match client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
    {
        Ok(result) => Ok(result),
        Err(ServiceError::McpError(error)) => Err(error),
        Err(other) => panic!("{uri}: a JSON-RPC answer, not {other}"),
    }
}

fn text_of(result: &ReadResourceResult) -> (&str, Value) {
    match &result.contents[..] {
        [ResourceContents::TextResourceContents { text, meta, .. }] => (
            text.as_str(),
            serde_json::to_value(meta).unwrap_or(Value::Null),
        ),
        other => panic!("one text content, not {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn documents_tasks_and_the_board_are_listed_page_by_page_with_their_templates() {
    let repo = repository();
    let client = stdio_client(repo.path()).await;
    let listed = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    let mut unique = uris.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), uris.len(), "no resource listed twice");
    assert!(uris.contains(&"cos://board"), "{uris:?}");
    let tasks = uris.iter().filter(|u| u.starts_with("cos://task/")).count();
    assert_eq!(tasks, 120, "every task, over more than one page");
    assert!(uris.contains(&"cos://docs/docs/guide.md"), "{uris:?}");
    for resource in &listed {
        assert!(
            resource
                .description
                .as_deref()
                .is_some_and(|d| !d.is_empty()),
            "{}: a description",
            resource.uri
        );
        assert_eq!(resource.mime_type.as_deref(), Some("text/markdown"));
    }
    let guide = listed
        .iter()
        .find(|r| r.uri == "cos://docs/docs/guide.md")
        .unwrap();
    assert_eq!(guide.title.as_deref(), Some("Guide"));
    assert_eq!(guide.size, Some(52));

    let templates = client.list_all_resource_templates().await.unwrap();
    let templates: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert!(
        templates.contains(&"cos://docs/{mount}/{+path}{?section,rev}")
            && templates.contains(&"cos://task/{id}"),
        "{templates:?}"
    );

    // a cursor the hub did not give is refused as the spec says
    let bad = client
        .list_resources(Some(
            rmcp::model::PaginatedRequestParams::default().with_cursor(Some("nonsense".into())),
        ))
        .await;
    match bad {
        Err(ServiceError::McpError(error)) => {
            assert_eq!(error.code.0, -32602, "{error:?}");
            assert_eq!(error.data.unwrap()["code"], "E_CURSOR");
        }
        other => panic!("a refusal, not {other:?}"),
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resource_reads_whole_by_section_or_cut_to_the_budget_with_its_identity() {
    let repo = repository();
    let client = stdio_client(repo.path()).await;
    let whole = read(&client, "cos://docs/docs/guide.md").await.unwrap();
    let (text, meta) = text_of(&whole);
    assert_eq!(
        text,
        std::fs::read_to_string(repo.path().join("docs/guide.md")).unwrap()
    );
    let identity = envelope(
        &call(
            &client,
            "cos_docs_read",
            json!({"mount": "docs", "path": "guide.md"}),
        )
        .await,
    );
    assert_eq!(meta["rev"], identity["data"]["document"]["rev"]);
    assert_eq!(meta["hash"], identity["data"]["document"]["hash"]);
    assert_eq!(
        serde_json::to_value(&whole.meta).unwrap()["hash"],
        meta["hash"],
        "the result's metadata carries the identity too"
    );

    let section = read(&client, "cos://docs/docs/guide.md?section=Setup")
        .await
        .unwrap();
    let (text, meta) = text_of(&section);
    assert_eq!(text, "## Setup\n\nRun it.\n\n");
    assert_eq!(meta["section"], "Guide/Setup");

    let long = read(&client, "cos://docs/docs/long.md").await.unwrap();
    let (text, meta) = text_of(&long);
    let size = std::fs::metadata(repo.path().join("docs/long.md"))
        .unwrap()
        .len();
    assert!(
        (text.len() as u64) < size && text.len() <= 32_000,
        "cut to the agent budget: {} of {size}",
        text.len()
    );
    assert_eq!(meta["truncated"], true);
    let rest = envelope(
        &call(
            &client,
            "cos_docs_read",
            json!({"mount": "docs", "path": "long.md", "cursor": meta["next_cursor"]}),
        )
        .await,
    );
    assert_eq!(
        rest["ok"], true,
        "the next page is one cos_docs_read away: {rest}"
    );

    let task = read(&client, "cos://task/TASK-0007").await.unwrap();
    let (text, meta) = text_of(&task);
    assert!(text.starts_with("---\nid: TASK-007\n"), "{text}");
    assert_eq!(meta["version"], 1);
    let board = read(&client, "cos://board").await.unwrap();
    let (text, _) = text_of(&board);
    assert!(text.contains("## icebox: 120"), "{text}");
    assert!(text.contains("... 95 more"), "{text}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_address_is_refused_by_what_is_wrong_and_the_module_switch_holds() {
    let repo = repository();
    let client = stdio_client(repo.path()).await;
    for (uri, code, contract) in [
        ("cos://docs/docs/../secret.md", -32602, "E_PATH"),
        ("cos://docs/docs/guide.md?colour=red", -32602, "E_ARGUMENT"),
        ("cos://docs/docs/guide.md?rev=zero", -32602, "E_ARGUMENT"),
        ("cos://docs/nowhere/guide.md", -32602, "E_PATH"),
        ("cos://task/TASK-99999", -32002, "E_NOT_FOUND"),
        ("cos://task/not-a-task", -32602, "E_ARGUMENT"),
        ("cos://elsewhere/x", -32002, "E_NOT_FOUND"),
        ("file:///etc/passwd", -32602, "E_ARGUMENT"),
    ] {
        let error = read(&client, uri).await.expect_err(uri);
        let data = error.data.clone().unwrap_or(Value::Null);
        assert_eq!(
            (error.code.0, data["code"].as_str()),
            (code, Some(contract)),
            "{uri}: {error:?}"
        );
    }

    call(
        &client,
        "cos_module_set",
        json!({"module": "docs", "enabled": false}),
    )
    .await;
    let error = read(&client, "cos://docs/docs/guide.md").await.unwrap_err();
    assert_eq!(error.data.unwrap()["category"], "module_disabled");
    let listed = client.list_all_resources().await.unwrap();
    assert!(listed.iter().all(|r| !r.uri.starts_with("cos://docs/")));
    assert!(listed.iter().any(|r| r.uri == "cos://board"));
    client.cancel().await.unwrap();
}

/// A client that passes on the resource updates the server announces.
struct Announced(tokio::sync::mpsc::UnboundedSender<String>);

impl ClientHandler for Announced {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.send(params.uri).ok();
    }
}

#[tokio::test(flavor = "multi_thread")]
#[allow(deprecated)] // resources/subscribe is the 2025-11-25 revision's way
async fn a_watched_document_that_changes_is_announced_and_only_then() {
    let repo = repository();
    let (sender, mut announced) = tokio::sync::mpsc::unbounded_channel();
    let client = Announced(sender)
        .serve(super::child_transport(repo.path(), &["--toolsets", "all"]))
        .await
        .unwrap();
    let uri = "cos://docs/docs/guide.md";
    client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .unwrap();
    // a change elsewhere on the board is no change to the document
    let created = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("cos_task_create")
                .with_arguments(super::arguments(json!({"title": "Unrelated"}))),
        )
        .await
        .unwrap();
    assert_eq!(created.is_error, Some(false));
    let quiet = tokio::time::timeout(Duration::from_millis(800), announced.recv()).await;
    assert!(quiet.is_err(), "nothing announced: {quiet:?}");

    let read = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    let (_, meta) = text_of(&read);
    let patched = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("cos_docs_patch").with_arguments(
                super::arguments(json!({
                    "mount": "docs", "path": "guide.md", "request_id": "watched-1",
                    "base": {"rev": meta["rev"], "hash": meta["hash"]},
                    "operations": [{"op": "append", "content": "\nMore.\n"}]
                })),
            ),
        )
        .await
        .unwrap();
    assert_eq!(patched.is_error, Some(false), "{patched:?}");
    let heard = tokio::time::timeout(Duration::from_secs(10), announced.recv())
        .await
        .expect("the change is announced");
    assert_eq!(heard.as_deref(), Some(uri));
    client.cancel().await.unwrap();
}
