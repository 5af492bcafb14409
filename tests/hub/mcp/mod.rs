//! Every tool over MCP with a real client (rmcp's), over stdio (`cos mcp` as a
//! child process) and over streamable HTTP (`/mcp` on a served hub). Every
//! answer is checked against the output schema tools/list gave for its tool;
//! hostile and generated arguments must be refused, never answered as faults.

mod definitions;
mod prompts;
mod resources;

use crate::common::TestServer;
use proptest::prelude::*;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) type Client = RunningService<RoleClient, ()>;

fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("arguments are an object"),
    }
}

/// A tool's answer, checked against the output schema tools/list gave for
/// it: a client such as the TypeScript SDK's refuses structured content
/// outside it, so every answer of every test here must fit, trimmed or not.
/// (A session that does not list the tool, such as a read-only one asked to
/// write, advertised no schema for its refusal.)
pub(crate) async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let result = client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(arguments(args)))
        .await
        .unwrap_or_else(|error| panic!("{name}: a tool answer, not a protocol error: {error}"));
    if let (Some(structured), Some(schema)) = (
        &result.structured_content,
        output_schema(client, name).await,
    ) {
        let outside: Vec<String> = schema
            .iter_errors(structured)
            .map(|error| format!("{error} (at {})", error.instance_path()))
            .take(5)
            .collect();
        assert!(
            outside.is_empty(),
            "{name}: the answer is outside its advertised output schema: {outside:?}"
        );
    }
    result
}

type Validators = HashMap<String, Arc<jsonschema::Validator>>;

/// A tool's output schema from tools/list, compiled once for every test
/// (every hub the tests start lists the same definitions); `None` when the
/// client's session does not list the tool.
async fn output_schema(client: &Client, name: &str) -> Option<Arc<jsonschema::Validator>> {
    static SCHEMAS: std::sync::Mutex<Option<Validators>> = std::sync::Mutex::new(None);
    let known = |name: &str| {
        let schemas = SCHEMAS.lock().unwrap();
        schemas
            .as_ref()
            .and_then(|schemas| schemas.get(name).cloned())
    };
    if let Some(found) = known(name) {
        return Some(found);
    }
    let tools = client.list_all_tools().await.expect("tools/list");
    let compiled: Validators = tools
        .into_iter()
        .map(|tool| {
            let schema = Value::Object(
                tool.output_schema
                    .as_deref()
                    .cloned()
                    .expect("an output schema"),
            );
            let validator = jsonschema::validator_for(&schema).unwrap_or_else(|error| {
                panic!("{}: its output schema compiles: {error}", tool.name)
            });
            (tool.name.to_string(), Arc::new(validator))
        })
        .collect();
    SCHEMAS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .extend(compiled);
    known(name)
}

/// The envelope, checked to be the structured content and the same JSON as text.
pub(crate) fn envelope(result: &CallToolResult) -> Value {
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent is the envelope");
    let text = result
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|t| t.text.clone())
        .expect("text content");
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        structured,
        "text holds the same JSON once"
    );
    assert!(
        structured.is_object() && structured.get("ok").is_some(),
        "the envelope itself, not a wrapped string"
    );
    structured
}

fn write_tasks(folder: &Path, count: usize) {
    // and a little code beside them, for the graph tools
    let repo = folder.parent().unwrap();
    std::fs::write(
        repo.join("store.py"),
        "from db import connect as open_db\n\ndef save():\n    open_db()\n",
    )
    .unwrap();
    std::fs::write(repo.join("db.py"), "def connect():\n    pass\n").unwrap();
    std::fs::create_dir_all(folder).unwrap();
    for n in 1..=count {
        std::fs::write(
            folder.join(format!("TASK-{n:04}-t.md")),
            format!("---\nid: TASK-{n:04}\ntitle: \"Generated task number {n} for the trimming check\"\nstatus: icebox\nkind: chore\npriority: P2\nswimlane: backend\n---\n"),
        )
        .unwrap();
    }
}

/// A repository whose board holds `count` generated tasks (imported by
/// `cos board import`), with a little code beside them.
fn repository_with_tasks(count: usize) -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    let tasks = repo.path().join("tasks");
    write_tasks(&tasks, count);
    let imported = std::process::Command::new(env!("CARGO_BIN_EXE_cos"))
        .args(["board", "import", "--dir"])
        .arg(&tasks)
        .current_dir(repo.path())
        .env_remove("COS_STATE_DIR")
        .output()
        .unwrap();
    assert!(imported.status.success());
    repo
}

/// A search for 200 of the 3,000 generated tasks under the agent budget,
/// and the one hit after its cut, through the cursor it answered (null
/// when it answered none).
async fn search_and_continue(client: &Client) -> (Value, Value) {
    let found = envelope(
        &call(
            client,
            "cos_search",
            json!({"q": "trimming check", "limit": 200}),
        )
        .await,
    );
    let Some(cursor) = found["data"]["next_cursor"].as_str() else {
        return (found, Value::Null);
    };
    let next = envelope(
        &call(
            client,
            "cos_search",
            json!({"q": "trimming check", "limit": 1, "cursor": cursor}),
        )
        .await,
    );
    (found, next)
}

async fn exercise(client: &Client) {
    // tools/list: every registered tool, with object schemas
    let tools = client.list_all_tools().await.unwrap();
    let listed: Vec<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
    for tool in cos_hub::hub::default_registry().iter() {
        assert!(
            listed.contains(&tool.spec.name.to_string()),
            "{} missing from tools/list",
            tool.spec.name
        );
    }
    for tool in &tools {
        assert_eq!(
            tool.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            tool.name
        );
        assert!(
            tool.description.as_deref().is_some_and(|d| !d.is_empty()),
            "{}",
            tool.name
        );
        let output = tool.output_schema.as_ref().expect("an output schema");
        assert_eq!(output.get("type"), Some(&json!("object")));
    }
    let create = tools.iter().find(|t| t.name == "cos_task_create").unwrap();
    assert!(create.input_schema["properties"]["title"].is_object());

    // every tool is annotated, truthfully: readers read, writers say how they write
    let hints = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let a = tool.annotations.clone().expect("annotations");
        (
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint,
        )
    };
    for tool in &tools {
        let (read_only, destructive, idempotent, open_world) = hints(&tool.name);
        assert!(read_only.is_some() && destructive.is_some() && idempotent.is_some());
        assert_eq!(
            open_world,
            Some(false),
            "{}: the hub is a closed world",
            tool.name
        );
    }
    assert_eq!(
        hints("cos_task_board"),
        (Some(true), Some(false), Some(true), Some(false))
    );
    assert_eq!(
        hints("cos_task_create"),
        (Some(false), Some(false), Some(false), Some(false))
    );
    assert_eq!(
        hints("cos_task_claim_next").2,
        Some(false),
        "claiming twice claims two tasks"
    );
    assert_eq!(hints("cos_graph_doctor").1, Some(true), "fix=true deletes");
    let error = &create.output_schema.as_ref().unwrap()["oneOf"][1]["properties"]["error"];
    assert_eq!(
        error["required"],
        json!(["category", "code", "retryable", "message"])
    );

    // success
    let result = call(client, "cos_task_create", json!({"title": "From an agent"})).await;
    assert_eq!(result.is_error, Some(false));
    let created = envelope(&result);
    assert_eq!(created["ok"], true);
    assert_eq!(created["data"]["status"], "icebox");
    assert_eq!(created["data"]["meta"]["layer"], "tasks");
    assert_eq!(
        created["data"]["updated_by"], "agent:mcp",
        "MCP callers act as agents by default"
    );

    // a failing call is a tool result with isError and the fail envelope
    let result = call(client, "cos_task_show", json!({"id": "TASK-9999"})).await;
    assert_eq!(result.is_error, Some(true));
    let failed = envelope(&result);
    assert_eq!(failed["ok"], false);
    assert_eq!(failed["error"]["category"], "not_found");
    assert_eq!(failed["error"]["retryable"], false);

    // input that fails validation names the field
    let result = call(client, "cos_task_create", json!({"title": 7})).await;
    assert_eq!(result.is_error, Some(true));
    let invalid = envelope(&result);
    assert_eq!(invalid["error"]["category"], "validation");
    assert_eq!(invalid["error"]["details"]["field"], "title");
    assert_eq!(invalid["error"]["code"], "E_ARGUMENT");
    let message = invalid["error"]["message"].as_str().unwrap();
    assert!(message.contains("got the number 7"), "{message}");
    assert!(
        !message.contains("invalid type"),
        "no parser wording: {message}"
    );
    // a missing argument is named as itself, an unknown kind lists the allowed ones
    let missing = envelope(&call(client, "cos_task_show", json!({})).await);
    assert_eq!(missing["error"]["details"]["field"], "id", "{missing}");
    let kind = envelope(
        &call(
            client,
            "cos_graph_search",
            json!({"query": "x", "kind": "nonsense_kind"}),
        )
        .await,
    );
    assert_eq!(kind["error"]["details"]["field"], "kind", "{kind}");
    assert!(
        kind["error"]["details"]["allowed"]
            .as_array()
            .unwrap()
            .contains(&json!("function"))
    );

    // an unknown tool is a protocol error
    let unknown = client
        .call_tool(CallToolRequestParams::new("cos_nope"))
        .await;
    assert!(unknown.is_err(), "unknown tools are JSON-RPC errors");

    // a trimmed answer: the 3,000-task board under the agent budget
    let result = call(client, "cos_task_board", json!({})).await;
    let board = envelope(&result);
    assert_eq!(
        board["data"]["meta"]["truncated"], true,
        "something was cut and meta says so"
    );
    let columns = board["data"]["columns"].as_array().unwrap();
    let at = columns
        .iter()
        .position(|c| c["status"] == "icebox")
        .unwrap();
    let kept = columns[at]["cards"].as_array().unwrap().len();
    assert!(kept < 3001);
    assert_eq!(
        board["data"]["meta"]["truncated_lists"][format!("/columns/{at}/cards")],
        json!({"from": 3001, "to": kept})
    );
    assert!(serde_json::to_string(&board).unwrap().len() <= 33_000);

    // search under the agent budget: 200 task hits are cut to fit, the cut
    // is marked, and the cursor continues right after the last hit kept.
    // What the hub does by itself (the first indexes of 3,000 tasks' files,
    // a run retried after the database was busy) may still move the index
    // between the two calls: the cursor is then stale, and an agent asks
    // again, as this does (a few times at most)
    let mut attempts = 0;
    let (found, next) = loop {
        attempts += 1;
        let (found, next) = search_and_continue(client).await;
        // a busy database, too, is a refusal to retry (its envelope says so)
        let ask_again = |answer: &Value| {
            answer["error"]["code"] == "STALE_CURSOR" || answer["error"]["retryable"] == true
        };
        if !(ask_again(&found) || ask_again(&next)) || attempts == 3 {
            break (found, next);
        }
    };
    assert_eq!(found["ok"], true, "{found}");
    // 3,000 tasks match: a query collects 2,000 items at most and says so
    assert_eq!(found["data"]["facets"]["tasks"], 2000);
    assert_eq!(found["data"]["capped"], true);
    assert_eq!(found["data"]["meta"]["mode"], "lexical");
    let kept = found["data"]["hits"].as_array().unwrap().len();
    assert!(kept < 200, "{kept} hits kept");
    assert_eq!(found["data"]["meta"]["truncated"], true);
    assert_eq!(found["data"]["meta"]["truncated_hits_from"], 200);
    assert_eq!(found["data"]["meta"]["truncated_hits_to"], kept);
    assert!(serde_json::to_string(&found).unwrap().len() <= 33_000);
    assert!(
        found["data"]["next_cursor"].is_string(),
        "a cursor after the cut: {found}"
    );
    let ids = |answer: &Value| -> Vec<String> {
        answer["data"]["hits"]
            .as_array()
            .unwrap_or_else(|| panic!("hits in {answer}"))
            .iter()
            .map(|h| h["opens"]["task_id"].as_str().unwrap().to_string())
            .collect()
    };
    // equal hits rank by task id: the page after the cut starts at the next one
    let (kept_ids, next_ids) = (ids(&found), ids(&next));
    assert!(kept_ids.windows(2).all(|w| w[0] < w[1]), "{kept_ids:?}");
    assert_eq!(next_ids.len(), 1);
    assert!(
        kept_ids.last().unwrap() < &next_ids[0],
        "nothing repeated: {next_ids:?}"
    );
    let successor = format!("TASK-{:03}", kept + 1);
    assert_eq!(next_ids[0], successor, "nothing skipped");

    // graph tools: an agent reads the tool's diagnostics in data.meta
    let result = call(client, "cos_graph_index", json!({})).await;
    assert_eq!(envelope(&result)["ok"], true);
    let doctor = envelope(&call(client, "cos_graph_doctor", json!({})).await);
    assert_eq!(
        doctor["data"]["meta"]["fixable_categories"],
        json!([
            "stale_paths",
            "malformed_uid_path",
            "dangling_source",
            "dangling_target",
            "duplicate_contains",
            "orphaned_phantom",
            "orphaned_external_unresolved"
        ]),
        "exactly the seed's list, in its order"
    );
    assert_eq!(
        doctor["data"]["meta"]["informational_categories"],
        json!([
            "slowest_extractions",
            "orphaned_external_unresolved",
            "files_with_parse_errors"
        ])
    );
    let reported: Vec<&str> = doctor["data"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| issue["category"].as_str().unwrap())
        .collect();
    for category in [
        "duplicate_contains",
        "orphaned_phantom",
        "slowest_extractions",
    ] {
        assert!(
            reported.contains(&category),
            "{category} is reported even at count 0"
        );
    }
    let result = call(client, "cos_graph_references", json!({"uid": "connect"})).await;
    let references = envelope(&result);
    assert_eq!(references["data"]["meta"]["resolved_from"], "fuzzy_fts5");
    assert_eq!(
        references["data"]["references"][0]["node"]["uid"], "code:function:store.py::save",
        "the call through the import alias is a reference: {references}"
    );
    let result = call(
        client,
        "cos_graph_trace",
        json!({"uid": "code:function:store.py::save", "depth": 9}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(envelope(&result)["error"]["details"]["field"], "depth");

    // a disabled module answers module_disabled through MCP too
    let result = call(
        client,
        "cos_module_set",
        json!({"module": "board", "enabled": false}),
    )
    .await;
    assert_eq!(envelope(&result)["ok"], true);
    let result = call(client, "cos_task_board", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    let disabled = envelope(&result);
    assert_eq!(disabled["error"]["category"], "module_disabled");
    assert!(
        disabled["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cos module enable board")
    );
    call(
        client,
        "cos_module_set",
        json!({"module": "board", "enabled": true}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_tool_over_stdio() {
    let repo = repository_with_tasks(3000);
    let client = stdio_client(repo.path()).await;
    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("cos-hub")
    );
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(
        instructions.contains("envelope") && instructions.contains("truncated"),
        "{instructions}"
    );
    for tool in cos_hub::hub::default_registry().iter() {
        assert!(
            instructions.contains(tool.spec.name),
            "the instructions, made from the registry, name {}",
            tool.spec.name
        );
    }
    exercise(&client).await;
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn every_answer_fits_its_tools_output_schema_whether_trimmed_paged_or_refused() {
    let repo = repository_with_tasks(400);
    let docs = repo.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let sections: String = (0..80)
        .map(|n| {
            format!(
                "## Part {n}\n\n{}\n\n### Detail {n}\n\n{}\n\n",
                "Generated prose. ".repeat(40),
                "more ".repeat(150)
            )
        })
        .collect();
    std::fs::write(docs.join("big.md"), format!("# Big\n\n{sections}")).unwrap();
    let lines: String = (0..2_000)
        .map(|n| format!("line {n} of a document without headings, long enough to page\n"))
        .collect();
    std::fs::write(docs.join("flat.md"), lines).unwrap();
    let client = stdio_client(repo.path()).await;

    // every tool, given nothing: its answer or its refusal
    for tool in cos_hub::hub::default_registry().iter() {
        call(&client, tool.spec.name, json!({})).await;
    }
    // pages of a large document, with and without headings, to their ends
    for path in ["big.md", "flat.md"] {
        let mut args = json!({"mount": "docs", "path": path});
        for _ in 0..200 {
            let page = envelope(&call(&client, "cos_docs_read", args.clone()).await);
            assert_eq!(page["ok"], true, "{page}");
            let Some(cursor) = page["data"]["next_cursor"].as_str() else {
                break;
            };
            args["cursor"] = json!(cursor);
        }
    }
    let big = envelope(
        &call(
            &client,
            "cos_docs_read",
            json!({"mount": "docs", "path": "big.md", "section": "Big/Part 7"}),
        )
        .await,
    );
    assert_eq!(big["ok"], true, "{big}");
    let document = big["data"]["document"].clone();
    for (name, args) in [
        (
            "cos_docs_read_many",
            json!({"mount": "docs", "paths": ["big.md", "flat.md", "none.md"]}),
        ),
        ("cos_docs_list", json!({"mount": "docs", "limit": 1})),
        (
            "cos_docs_patch",
            json!({"mount": "docs", "path": "big.md", "request_id": "fit-1",
            "base": {"rev": document["rev"], "hash": document["hash"]},
            "operations": [{"op": "append_to_section", "section": "Big/Part 3", "content": "added"}]}),
        ),
        (
            "cos_docs_patch",
            json!({"mount": "docs", "path": "big.md", "request_id": "fit-2",
            "base": {"rev": document["rev"], "hash": document["hash"]},
            "operations": [{"op": "append", "content": "stale"}]}),
        ),
        ("cos_docs_receipt", json!({"request_id": "fit-1"})),
        ("cos_write_receipt", json!({"request_id": "fit-1"})),
        ("cos_docs_history", json!({"limit": 1})),
        ("cos_search", json!({"q": "generated"})),
        (
            "cos_search",
            json!({"q": "/task number \\d+ for/", "limit": 100}),
        ),
        ("cos_search", json!({"q": "prose", "area": "docs"})),
        ("cos_search", json!({"q": "conect"})),
        ("cos_task_board", json!({})),
        (
            "cos_task_search",
            json!({"text": "generated", "limit": 200}),
        ),
        ("cos_task_ready", json!({"limit": 200})),
        ("cos_graph_search", json!({"query": "connect"})),
        ("cos_graph_export", json!({})),
    ] {
        call(&client, name, args).await;
    }
    let resolved = envelope(&call(&client, "cos_graph_resolve", json!({"query": "save"})).await);
    let uid = resolved["data"]["node"]["uid"].clone();
    assert!(uid.is_string(), "{resolved}");
    for name in [
        "cos_graph_context",
        "cos_graph_impact",
        "cos_graph_references",
        "cos_graph_trace",
        "cos_graph_similar",
    ] {
        call(&client, name, json!({"uid": uid})).await;
    }
    call(
        &client,
        "cos_graph_rename_plan",
        json!({"uid": uid, "new_name": "store"}),
    )
    .await;
    call(
        &client,
        "cos_graph_path",
        json!({"source": uid, "target": uid}),
    )
    .await;
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn agents_export_and_import_the_board_only_inside_the_repository() {
    let repo = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join(".git")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path().join("linked")).unwrap();
    let client = stdio_client(repo.path()).await;
    call(
        &client,
        "cos_task_create",
        json!({"title": "Exported by an agent"}),
    )
    .await;

    let exported = envelope(&call(&client, "cos_board_export", json!({"dir": "board"})).await);
    assert_eq!(exported["data"]["written"], 1, "{exported}");
    let imported = envelope(&call(&client, "cos_board_import", json!({"dir": "board"})).await);
    assert_eq!(imported["ok"], true, "{imported}");

    let outside_dir = outside.path().join("tasks");
    for dir in [
        "../escape",
        outside_dir.to_str().unwrap(),
        "linked",
        "linked/deeper",
        ".git/tasks",
        ".cos/tasks",
        "bo\u{0}ard",
        "board\nnext",
    ] {
        for tool in ["cos_board_export", "cos_board_import"] {
            let refused = envelope(&call(&client, tool, json!({"dir": dir})).await);
            assert_eq!(
                refused["error"]["code"], "E_PATH",
                "{tool} {dir:?}: {refused}"
            );
            assert_eq!(refused["error"]["details"]["field"], "dir");
        }
    }
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing was written outside"
    );
    let missing = envelope(&call(&client, "cos_board_import", json!({"dir": "nowhere"})).await);
    assert_eq!(missing["error"]["code"], "E_NOT_FOUND", "{missing}");
    assert_eq!(missing["error"]["details"]["field"], "dir");
    assert!(
        missing["error"].get("error_id").is_none(),
        "a refusal, not a fault: {missing}"
    );
    client.cancel().await.unwrap();
}

/// A repository holding one document under `docs/` and one Python file.
fn repository_with_a_document_and_code() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join("docs")).unwrap();
    std::fs::write(repo.path().join("docs/guide.md"), "# Guide\n\n## Setup\n").unwrap();
    std::fs::write(repo.path().join("app.py"), "def run():\n    pass\n").unwrap();
    repo
}

/// An answer or a refusal by what is wrong, never an internal fault (only a
/// transient refusal, a busy database, carries a forensic error id).
fn assert_not_a_fault(asked: &str, answer: &Value) {
    if answer["ok"] == false {
        let error = &answer["error"];
        assert_ne!(error["category"], "internal", "{asked}: {answer}");
        assert!(
            error.get("error_id").is_none() || error["category"] == "transient",
            "{asked}: a refusal, not a fault: {answer}"
        );
    }
}

/// A plausible value of a JSON Schema `type`, to fill the arguments a call
/// needs besides the one under test.
fn plain_value(schema: &Value) -> Value {
    let kind = schema["type"]
        .as_str()
        .or_else(|| schema["type"].as_array().and_then(|t| t.first()?.as_str()))
        .unwrap_or("string");
    match kind {
        "integer" | "number" => json!(1),
        "boolean" => json!(false),
        "array" => json!([]),
        "object" => json!({}),
        _ => schema["enum"]
            .as_array()
            .and_then(|values| values.first().cloned())
            .unwrap_or_else(|| json!("x")),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_values_in_any_argument_of_any_tool_are_refused_never_a_fault() {
    let repo = repository_with_a_document_and_code();
    let client = stdio_client(repo.path()).await;
    let hostile = [
        json!("\u{0}"),
        json!("a\u{1}b\u{7f}"),
        json!("../../../etc/passwd"),
        json!("/etc/passwd"),
        json!("%2e%2e%2fescape"),
        json!("C:\\Windows"),
        json!(" "),
        json!("\u{202e}é\u{fe0f}\u{10ffff}"),
        json!("x".repeat(20_000)),
        // and values of every other shape, at the edges of their types
        json!(-1),
        json!(i64::MAX),
        json!(u64::MAX),
        json!(1e300),
        json!(0.5),
        json!(null),
        json!(true),
        json!([]),
        json!([null, {"a": [1]}]),
        json!({"": null}),
        json!(vec!["x"; 10_000]),
    ];
    let tools = client.list_all_tools().await.unwrap();
    for tool in &tools {
        let name = tool.name.as_ref();
        let schema = Value::Object((*tool.input_schema).clone());
        let properties = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let base: Map<String, Value> = properties
            .iter()
            .filter(|(field, _)| required.contains(&field.as_str()))
            .map(|(field, schema)| (field.clone(), plain_value(schema)))
            .collect();
        for field in properties.keys() {
            for value in &hostile {
                let mut args = base.clone();
                args.insert(field.clone(), value.clone());
                let answer = envelope(&call(&client, name, Value::Object(args)).await);
                let asked = format!("{name} {field}={:.80}", value.to_string());
                assert_not_a_fault(&asked, &answer);
            }
        }
    }
    client.cancel().await.unwrap();
}

/// Any JSON an agent might send as an argument: text of any characters and
/// length, numbers of any size, and values nested in arrays and objects.
fn any_argument() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,40}".prop_map(Value::String),
        "[a-zA-Z0-9/._ -]{0,24}".prop_map(Value::String),
        (0usize..6_000).prop_map(|n| Value::String("é".repeat(n))),
    ];
    leaf.prop_recursive(3, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(("[a-z_]{1,12}", inner), 0..5)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

#[test]
fn any_arguments_to_any_tool_get_an_answer_within_its_schema_never_a_fault() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let repo = repository_with_a_document_and_code();
    let client = runtime.block_on(stdio_client(repo.path()));
    // each tool's name and its arguments' names, from tools/list
    let tools: Vec<(String, Vec<String>)> = runtime
        .block_on(client.list_all_tools())
        .unwrap()
        .into_iter()
        .map(|tool| {
            let fields = tool
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|properties| properties.keys().cloned().collect())
                .unwrap_or_default();
            (tool.name.to_string(), fields)
        })
        .collect();
    let config = proptest::test_runner::Config {
        cases: 1_000,
        failure_persistence: None,
        ..Default::default()
    };
    proptest!(config, |(
        tool in 0..tools.len(),
        given in proptest::collection::vec((any::<usize>(), any_argument()), 0..5),
        stray in proptest::option::weighted(0.1, ("[a-z_]{1,12}", any_argument())),
    )| {
        let (name, fields) = &tools[tool];
        let mut args = Map::new();
        for (pick, value) in given {
            if !fields.is_empty() {
                args.insert(fields[pick % fields.len()].clone(), value);
            }
        }
        if let Some((field, value)) = stray {
            args.insert(field, value);
        }
        let answer = envelope(&runtime.block_on(call(&client, name, Value::Object(args.clone()))));
        assert_not_a_fault(&format!("{name} {args:?}"), &answer);
    });
    runtime.block_on(client.cancel()).unwrap();
}

/// An MCP client of `cos mcp` serving `repo` over stdio with every tool
/// (`--toolsets all`), as an agent set up for upkeep starts it.
pub(crate) async fn stdio_client(repo: &Path) -> Client {
    stdio_client_with(repo, &["--toolsets", "all"]).await
}

/// An MCP client of `cos mcp REPO ARGS...` over stdio.
async fn stdio_client_with(repo: &Path, args: &[&str]) -> Client {
    ().serve(child_transport(repo, args))
        .await
        .expect("initialize over stdio")
}

/// `cos mcp REPO ARGS...` as a child process, for any client handler.
fn child_transport(repo: &Path, args: &[&str]) -> TokioChildProcess {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cos"));
    command
        .arg("mcp")
        .arg(repo)
        .args(args)
        .env_remove("COS_STATE_DIR")
        .env("RUST_LOG", "warn");
    TokioChildProcess::new(command).unwrap()
}

/// An MCP client of the served hub's `/mcp`, sending `headers` with every request.
async fn http_client_with(server: &TestServer, headers: &[(&'static str, &str)]) -> Client {
    let headers = headers
        .iter()
        .map(|(name, value)| {
            (
                reqwest::header::HeaderName::from_static(name),
                reqwest::header::HeaderValue::from_str(value).unwrap(),
            )
        })
        .collect();
    let config =
        StreamableHttpClientTransportConfig::with_uri(server.url("/mcp")).custom_headers(headers);
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("initialize over HTTP")
}

async fn listed_names(client: &Client) -> Vec<String> {
    let tools = client.list_all_tools().await.unwrap();
    tools.iter().map(|tool| tool.name.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn toolsets_tools_and_read_only_choose_what_a_session_lists_and_calls() {
    let repo = repository_with_tasks(2);
    let registry = cos_hub::hub::default_registry();
    let writing: Vec<&str> = registry
        .iter()
        .filter(|tool| !tool.spec.effect.read_only)
        .map(|tool| tool.spec.name)
        .collect();

    // the everyday list: at most 40, the upkeep tools one flag away and said so
    let client = stdio_client_with(repo.path(), &[]).await;
    let everyday = listed_names(&client).await;
    assert!(everyday.len() <= 40, "{} tools by default", everyday.len());
    assert!(!everyday.contains(&"cos_board_export".to_string()));
    let instructions = client.peer_info().unwrap().instructions.clone().unwrap();
    assert!(
        instructions.contains("cos_board_export") && instructions.contains("--toolsets all"),
        "{instructions}"
    );
    let refused = client
        .call_tool(
            CallToolRequestParams::new("cos_board_export")
                .with_arguments(arguments(json!({"dir": "out"}))),
        )
        .await;
    assert!(
        format!("{refused:?}").contains("not among the toolsets this client asked for"),
        "{refused:?}"
    );
    client.cancel().await.unwrap();

    // read-only over stdio: no writing tool listed, a write by name refused
    let client = stdio_client_with(repo.path(), &["--toolsets", "board", "--read-only"]).await;
    let listed = listed_names(&client).await;
    assert!(listed.contains(&"cos_task_show".to_string()), "{listed:?}");
    assert!(
        listed
            .iter()
            .all(|name| name.starts_with("cos_task_") || name.starts_with("cos_board_"))
    );
    assert!(
        writing
            .iter()
            .all(|name| !listed.contains(&name.to_string())),
        "{listed:?}"
    );
    let refused = envelope(&call(&client, "cos_task_create", json!({"title": "x", "description": "", "kind": "bug", "priority": "P1", "labels": [], "depends_on": [], "references": []})).await);
    assert_eq!(refused["error"]["code"], "E_READ_ONLY", "{refused}");
    assert_eq!(refused["error"]["category"], "permission");
    client.cancel().await.unwrap();

    // the same per request over HTTP, by header
    let server = TestServer::start().await;
    let client = http_client_with(
        &server,
        &[("x-mcp-toolsets", "graph"), ("x-mcp-tools", "cos_search")],
    )
    .await;
    let listed = listed_names(&client).await;
    assert!(
        listed.contains(&"cos_search".to_string())
            && listed.contains(&"cos_graph_index".to_string())
    );
    assert!(
        listed.iter().all(|name| name == "cos_search"
            || name == "cos_changes"
            || name.starts_with("cos_graph_")),
        "{listed:?}"
    );
    client.cancel().await.unwrap();
    let client = http_client_with(&server, &[("x-mcp-readonly", "true")]).await;
    let listed = listed_names(&client).await;
    assert!(
        writing
            .iter()
            .all(|name| !listed.contains(&name.to_string())),
        "{listed:?}"
    );
    let refused = envelope(&call(&client, "cos_task_create", json!({"title": "x"})).await);
    assert_eq!(refused["error"]["code"], "E_READ_ONLY", "{refused}");
    client.cancel().await.unwrap();
    let client = http_client_with(&server, &[("x-mcp-toolsets", "nowhere")]).await;
    let refused = client.list_all_tools().await;
    assert!(
        format!("{refused:?}").contains("not `nowhere`"),
        "{refused:?}"
    );
    client.cancel().await.unwrap();

    // and by query parameters, for clients that cannot send headers
    let config = StreamableHttpClientTransportConfig::with_uri(
        server.url("/mcp?toolsets=board&readonly=true"),
    );
    let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    let listed = listed_names(&client).await;
    assert!(listed.contains(&"cos_task_board".to_string()), "{listed:?}");
    assert!(
        listed.iter().all(
            |name| (name.starts_with("cos_task_") || name == "cos_test_echo")
                && !writing.contains(&name.as_str())
        ),
        "{listed:?}"
    );
    client.cancel().await.unwrap();
}

/// The paths of the symbols `cos_search` finds for `name`, asked over `client`
/// until one is found or `patience` runs out (the hub indexes on its own).
async fn symbols_found(client: &Client, name: &'static str, patience: Duration) -> Vec<String> {
    let deadline = Instant::now() + patience;
    loop {
        let found =
            envelope(&call(client, "cos_search", json!({"q": name, "area": "symbols"})).await);
        let paths: Vec<String> = found["data"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| hit["path"].as_str().unwrap().to_string())
            .collect();
        if !paths.is_empty() || Instant::now() > deadline {
            return paths;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn over_stdio_the_code_is_indexed_and_saved_files_are_found_without_an_index_call() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("app.py"),
        "def first_handler():\n    pass\n",
    )
    .unwrap();
    let client = stdio_client(repo.path()).await;
    // nobody calls cos_graph_index: the session indexes the repository itself
    let patience = Duration::from_secs(30);
    assert_eq!(
        symbols_found(&client, "first_handler", patience).await,
        vec!["app.py".to_string()]
    );
    // and follows a file saved while it runs
    std::fs::write(
        repo.path().join("more.py"),
        "def second_handler():\n    pass\n",
    )
    .unwrap();
    assert_eq!(
        symbols_found(&client, "second_handler", patience).await,
        vec!["more.py".to_string()]
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn every_tool_over_streamable_http() {
    let server = TestServer::start().await;
    let tasks = server.repo().join("tasks");
    write_tasks(&tasks, 3000);
    let (status, _) = server
        .post_json("/api/tools/cos_board_import", json!({"dir": "tasks"}))
        .await;
    assert_eq!(status, 200);

    let client = http_client_with(&server, &[("x-mcp-toolsets", "all")]).await;
    exercise(&client).await;
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_http_needs_the_token_when_one_is_set() {
    let token = "a-long-enough-test-token-0123456789";
    let options = cos_hub::web::ServeOptions {
        access: cos_hub::web::access::Access {
            token: Some(token.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let server = TestServer::with_options(cos_hub::hub::default_registry(), options).await;

    let anonymous = StreamableHttpClientTransport::from_uri(server.url("/mcp"));
    assert!(().serve(anonymous).await.is_err(), "no token, no session");

    let config =
        StreamableHttpClientTransportConfig::with_uri(server.url("/mcp")).auth_header(token);
    let client =
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .expect("with the token");
    let result = call(&client, "cos_hub_health", json!({})).await;
    assert_eq!(envelope(&result)["data"]["status"], "ok");
    client.cancel().await.unwrap();
}

/// Raw JSON-RPC over `/mcp`: what a client that gets the framing wrong is told.
#[tokio::test(flavor = "multi_thread")]
async fn malformed_json_rpc_over_http_gets_json_rpc_errors() {
    let server = TestServer::start().await;
    let client = reqwest::Client::new();
    let post = |body: String, session: Option<String>| {
        let mut request = client
            .post(server.url("/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let json_of = |text: &str| -> Value {
        // a JSON body, or the data line of a one-event stream
        serde_json::from_str(text).unwrap_or_else(|_| {
            let data = text
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .find(|l| !l.is_empty());
            serde_json::from_str(data.unwrap_or("null")).unwrap()
        })
    };

    let response = post("{not json".into(), None).await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = json_of(&response.text().await.unwrap());
    assert_eq!(body["error"]["code"], -32700, "{body}");
    assert_eq!(body["id"], Value::Null);

    let session = open_session(&client, &server.url("/mcp")).await;

    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "cos_hub_health", "arguments": [1, 2]}});
    let response = post(call.to_string(), Some(session.clone())).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = json_of(&response.text().await.unwrap());
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert_eq!(body["id"], 5);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("arguments")
    );

    // a closed session answers 404 with a JSON-RPC body, so the client re-initialises
    let closed = client
        .delete(server.url("/mcp"))
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    // 204: the official Python SDK warns of a failed termination at any
    // other answer but 200
    assert_eq!(closed.status(), 204);
    assert!(closed.bytes().await.unwrap().is_empty());
    let list = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"});
    let response = post(list.to_string(), Some(session)).await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = json_of(&response.text().await.unwrap());
    assert_eq!(body["error"]["code"], -32001, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize")
    );
}

/// The same mistakes over stdio get the same answers, one line each.
#[tokio::test(flavor = "multi_thread")]
async fn malformed_json_rpc_over_stdio_gets_json_rpc_errors() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let repo = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_cos"))
        .arg("mcp")
        .arg(repo.path())
        .env_remove("COS_STATE_DIR")
        .env("RUST_LOG", "off")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    async fn next(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("a line");
        serde_json::from_str::<Value>(&line).unwrap()
    }
    stdin.write_all(b"{not json\n").await.unwrap();
    let answer = next(&mut lines).await;
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    // bytes that are not UTF-8 are a parse error too, and the session goes on
    stdin
        .write_all(b"{\"jsonrpc\": \"\xff\xfe\"}\n")
        .await
        .unwrap();
    assert_eq!(next(&mut lines).await["error"]["code"], -32700);
    // a line past the bound is refused without being held, and the session goes on
    let long = vec![b' '; cos_hub::web::BODY_LIMIT_BYTES + 10];
    stdin.write_all(&long).await.unwrap();
    stdin.write_all(b"{}\n").await.unwrap();
    let answer = next(&mut lines).await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (Value::Null, json!(-32600)),
        "{answer}"
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 1048576 bytes"),
        "{answer}"
    );
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    assert_eq!(next(&mut lines).await["id"], 1);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "cos_hub_health", "arguments": [1]}});
    stdin
        .write_all(format!("{call}\n").as_bytes())
        .await
        .unwrap();
    let answer = next(&mut lines).await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(2), json!(-32602)),
        "{answer}"
    );
    drop(stdin);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
        .await
        .expect("the server ends with its input")
        .unwrap();
    assert!(status.success());
}

/// Opens an MCP session over HTTP the way a client does; its id.
async fn open_session(client: &reqwest::Client, url: &str) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let _ = response.text().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let _ = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .body(initialized.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await;
    session
}

/// The status of a `tools/list` on `session`.
async fn list_status(client: &reqwest::Client, url: &str, session: &str) -> u16 {
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .body(list.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let _ = response.text().await;
    status
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_sessions_are_capped_and_expire_when_idle() {
    let options = cos_hub::web::ServeOptions {
        mcp_sessions: cos_hub::mcp::sessions::SessionLimits {
            max_sessions: 3,
            idle: std::time::Duration::from_millis(800),
        },
        ..cos_hub::web::ServeOptions::default()
    };
    let server = TestServer::with_options(cos_hub::hub::default_registry(), options).await;
    let client = reqwest::Client::new();
    let url = server.url("/mcp");
    let mut sessions = Vec::new();
    for _ in 0..5 {
        sessions.push(open_session(&client, &url).await);
    }
    // the two used longest ago made room for the last three
    let mut statuses = Vec::new();
    for session in &sessions {
        statuses.push(list_status(&client, &url, session).await);
    }
    assert_eq!(statuses, [404, 404, 200, 200, 200]);
    // idle past the limit: gone, and the client is told to initialise again
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    assert_eq!(list_status(&client, &url, &sessions[4]).await, 404);
    let fresh = open_session(&client, &url).await;
    assert_eq!(list_status(&client, &url, &fresh).await, 200);
}
