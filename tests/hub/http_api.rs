//! The HTTP hub through its public interface: a server on 127.0.0.1:0, real requests.

use crate::common::{TestServer, error_of};
use cos_hub::envelope::Category;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn health_answers_with_typed_data_and_meta() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/api/health").await;
    assert_eq!(status, 200, "{body}");
    let data = &body["data"];
    assert_eq!(data["status"], "ok");
    assert_eq!(data["version"], env!("CARGO_PKG_VERSION"));
    // every area's tables are at a version of their own
    for area in ["hub", "board", "graph", "docs", "supervise", "search"] {
        assert!(
            data["schema_versions"][area].as_i64().unwrap() >= 1,
            "{area}: {data}"
        );
    }
    let modules: Vec<&str> = data["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        modules,
        ["core", "board", "graph", "docs", "supervise", "search"]
    );
    assert_eq!(body["meta"]["layer"], "health");
    assert_eq!(body["meta"]["truncated"], false);
    assert!(body["meta"]["tokens_estimated"].as_u64().unwrap() > 10);
    assert!(data.get("meta").is_none(), "REST moves meta beside data");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_category_maps_to_its_status() {
    let server = TestServer::start().await;
    let table = [
        ("validation", 400),
        ("unauthorized", 401),
        ("permission", 403),
        ("module_disabled", 403),
        ("not_found", 404),
        ("conflict", 409),
        ("internal", 500),
        ("transient", 503),
        ("unavailable", 503),
    ];
    assert_eq!(table.len(), Category::ALL.len());
    for (category, expected) in table {
        let response = server
            .client
            .post(server.url("/api/tools/cos_test_fail"))
            .json(&json!({"category": category}))
            .send()
            .await
            .unwrap();
        let retry_after = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_string());
        let (status, body) = crate::common::decode(response).await;
        assert_eq!(status, expected, "{category}: {body}");
        let error = error_of(&body);
        assert_eq!(error["category"], category);
        assert_eq!(error["code"], "E_ARGUMENT");
        if expected == 503 {
            assert_eq!(
                retry_after.as_deref(),
                Some("1"),
                "{category} carries Retry-After"
            );
            assert_eq!(error["retryable"], true);
        } else {
            assert_eq!(retry_after, None);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_tool_is_contained_and_logged_once() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post_json("/api/tools/cos_test_panic", json!({}))
        .await;
    assert_eq!(status, 500, "{body}");
    let error = error_of(&body);
    assert_eq!(error["category"], "internal");
    assert!(
        !error["message"].as_str().unwrap().contains("/secret"),
        "no internals leak: {error}"
    );
    let error_id = error["error_id"]
        .as_str()
        .expect("internal errors carry an error_id")
        .to_string();

    // the server is still serving
    let (status, _) = server.get("/api/health").await;
    assert_eq!(status, 200);

    let log =
        std::fs::read_to_string(server.state_dir().join(".mcp.log")).expect("forensic log written");
    let lines: Vec<&str> = log
        .lines()
        .filter(|line| line.contains(&error_id))
        .collect();
    assert_eq!(lines.len(), 1, "one line per failure: {log}");
    let line = lines[0];
    assert!(line.contains("tool=cos_test_panic"), "{line}");
    assert!(
        line.contains(&format!("pid={}", std::process::id())),
        "{line}"
    );
    assert!(line.contains("thread="), "{line}");
    assert!(
        line.contains("deliberate test panic"),
        "the chain is in the log: {line}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_failures_log_the_attached_databases() {
    let server = TestServer::start().await;
    let (status, body) = server.post_json("/api/tools/cos_test_sql", json!({})).await;
    assert_eq!(status, 500, "{body}");
    let error = error_of(&body);
    assert!(
        !error["message"].as_str().unwrap().contains("missing_table"),
        "no SQL leaks: {error}"
    );
    let log = std::fs::read_to_string(server.state_dir().join(".mcp.log")).unwrap();
    let line = log
        .lines()
        .find(|l| l.contains("tool=cos_test_sql"))
        .expect("logged");
    assert!(line.contains("sqlite_databases=\"main="), "{line}");
    assert!(line.contains("cos.db"), "{line}");
    assert!(line.contains("missing_table"), "{line}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_disabled_module_answers_module_disabled_until_enabled() {
    let server = TestServer::start().await;
    let (status, _) = server
        .post_json("/api/tools/cos_test_echo", json!({"text": "hi"}))
        .await;
    assert_eq!(status, 200);

    let (status, body) = server
        .put_json("/api/settings/modules/board", json!({"enabled": false}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["enabled"], false);
    assert!(
        body["data"]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("cos_test_echo"))
    );

    let (status, body) = server
        .post_json("/api/tools/cos_test_echo", json!({"text": "hi"}))
        .await;
    assert_eq!(status, 403, "{body}");
    let error = error_of(&body);
    assert_eq!(error["category"], "module_disabled");
    assert_eq!(error["retryable"], false);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("board") && message.contains("cos module enable board"),
        "{message}"
    );

    // the switch is shared through the state file: a second hub on the same state sees it
    let state = std::fs::read_to_string(server.state_dir().join("subsystems-state.json")).unwrap();
    assert!(state.contains("\"board\": false"), "{state}");

    let (status, _) = server
        .put_json("/api/settings/modules/board", json!({"enabled": true}))
        .await;
    assert_eq!(status, 200);
    let (status, body) = server
        .post_json("/api/tools/cos_test_echo", json!({"text": "back"}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["text"], "back");
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_refuse_unknown_modules_and_switching_core_off() {
    let server = TestServer::start().await;
    let (status, body) = server
        .put_json("/api/settings/modules/kitchen", json!({"enabled": false}))
        .await;
    assert_eq!(status, 400, "{body}");
    let error = error_of(&body);
    assert_eq!(error["details"]["field"], "module");
    assert_eq!(
        error["details"]["allowed"],
        json!(["core", "board", "graph", "docs", "supervise", "search"]),
        "the modules of the areas the hub is built with"
    );
    let (status, body) = server
        .put_json("/api/settings/modules/core", json!({"enabled": false}))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        error_of(&body)["message"]
            .as_str()
            .unwrap()
            .contains("core")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rejections_are_error_envelopes() {
    let server = TestServer::start().await;
    let url = server.url("/api/settings/modules/board");

    // malformed JSON
    let response = server
        .client
        .put(&url)
        .header("content-type", "application/json")
        .body("{enabled:")
        .send()
        .await
        .unwrap();
    let (status, body) = crate::common::decode(response).await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&body)["code"], "E_JSON");

    // wrong content type
    let response = server
        .client
        .put(&url)
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    let (status, body) = crate::common::decode(response).await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&body)["code"], "E_CONTENT_TYPE");

    // wrong type for a field: named in the answer (axum's default would be a 422 in plain text)
    let (status, body) = server
        .put_json("/api/settings/modules/board", json!({"enabled": "yes"}))
        .await;
    assert_eq!(status, 400, "{body}");
    let error = error_of(&body);
    assert_eq!(error["category"], "validation");
    assert_eq!(error["details"]["field"], "enabled", "{error}");

    // missing field
    let (status, body) = server
        .put_json("/api/settings/modules/board", json!({}))
        .await;
    assert_eq!(status, 400);
    assert!(
        error_of(&body)["message"]
            .as_str()
            .unwrap()
            .contains("enabled")
    );

    // unknown path under /api
    let (status, body) = server.get("/api/no/such/route").await;
    assert_eq!(status, 404);
    assert_eq!(error_of(&body)["category"], "not_found");

    // wrong method
    let response = server
        .client
        .delete(server.url("/api/health"))
        .send()
        .await
        .unwrap();
    let (status, body) = crate::common::decode(response).await;
    assert_eq!(status, 405);
    assert_eq!(error_of(&body)["code"], "E_METHOD");

    // body over the limit
    let huge = "x".repeat(cos_hub::web::BODY_LIMIT_BYTES + 10);
    let response = server
        .client
        .put(&url)
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .unwrap();
    let (status, body) = crate::common::decode(response).await;
    assert_eq!(status, 413);
    assert_eq!(error_of(&body)["code"], "E_TOO_LARGE");

    // bad query parameter
    let (status, body) = server
        .post_json("/api/tools/cos_test_big?budget=lots", json!({"count": 1}))
        .await;
    assert_eq!(status, 400);
    assert!(
        error_of(&body)["message"]
            .as_str()
            .unwrap()
            .contains("budget")
    );

    // tool input that fails validation names the field
    let (status, body) = server
        .post_json("/api/tools/cos_test_big", json!({"count": "many"}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&body)["details"]["field"], "count");

    // unknown tool
    let (status, body) = server.post_json("/api/tools/cos_nope", json!({})).await;
    assert_eq!(status, 404);
    assert_eq!(error_of(&body)["code"], "E_UNKNOWN_TOOL");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_no_trim_can_fit_is_refused_as_over_the_context_budget() {
    let server = TestServer::start().await;
    let arguments = json!({"count": 10, "wide": 10_000});
    let (status, body) = server
        .post_json("/api/tools/cos_test_big?budget=agent", arguments.clone())
        .await;
    assert_eq!(status, 400, "{body}");
    let error = error_of(&body);
    assert_eq!(error["code"], "E_CONTEXT_BUDGET");
    assert_eq!(error["category"], "validation");
    assert_eq!(error["retryable"], false);
    assert_eq!(error["details"]["budget"], 32_000);
    assert!(error["details"]["size"].as_u64().unwrap() > 32_000);
    assert_eq!(error["details"]["narrow_with"], json!(["wide"]));
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("narrow it with wide")
    );
    // a browser, with the budget off, gets the whole answer
    let (status, body) = server.post_json("/api/tools/cos_test_big", arguments).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["field_9999"], 9_999);
}

#[tokio::test(flavor = "multi_thread")]
async fn rest_is_untrimmed_unless_a_budget_is_asked_for() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post_json("/api/tools/cos_test_big", json!({"count": 5000}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["results"].as_array().unwrap().len(), 5000);
    assert_eq!(body["meta"]["truncated"], false);

    let (status, body) = server
        .post_json(
            "/api/tools/cos_test_big?budget=agent",
            json!({"count": 5000}),
        )
        .await;
    assert_eq!(status, 200);
    let kept = body["data"]["results"].as_array().unwrap().len();
    assert!(kept < 5000);
    assert_eq!(body["meta"]["truncated"], true);
    assert_eq!(body["meta"]["truncated_results_from"], 5000);
    assert_eq!(body["meta"]["truncated_results_to"], kept);
    assert_eq!(body["data"]["count"], kept);
}

#[tokio::test(flavor = "multi_thread")]
async fn spec_and_swagger_are_served() {
    let server = TestServer::start().await;
    let (status, spec) = server.get("/api/openapi.json").await;
    assert_eq!(status, 200);
    assert!(spec["openapi"].as_str().unwrap().starts_with("3.1"));
    let served: Value = spec;
    let generated: Value = serde_json::from_str(&cos_hub::web::spec::openapi_json()).unwrap();
    assert_eq!(served, generated);
    let response = server
        .client
        .get(server.url("/docs/"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(
        response.text().await.unwrap().contains("swagger"),
        "Swagger UI page"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_are_listed_with_schemas() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/api/tools").await;
    assert_eq!(status, 200);
    let tools = body["data"]["tools"].as_array().unwrap();
    let set = tools
        .iter()
        .find(|t| t["name"] == "cos_module_set")
        .expect("cos_module_set listed");
    assert_eq!(set["module"], "core");
    assert_eq!(set["input_schema"]["type"], "object");
    assert!(
        set["input_schema"]["properties"]["enabled"].is_object(),
        "{}",
        set["input_schema"]
    );
    let health = tools
        .iter()
        .find(|t| t["name"] == "cos_hub_health")
        .unwrap();
    let modules = &health["output_schema"]["properties"]["modules"];
    assert!(
        modules.to_string().contains("#/$defs/ModuleInfo"),
        "{modules}"
    );
    assert!(health["output_schema"]["$defs"]["ModuleInfo"].is_object());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_read_times_out_retryable_but_a_slow_write_is_never_cut_short() {
    let mut registry = cos_hub::hub::default_registry();
    registry
        .register::<crate::common::SlowReadTool>()
        .register::<crate::common::SlowWriteTool>();
    let server =
        TestServer::with_tuned_hub(registry, cos_hub::web::ServeOptions::default(), |hub| {
            hub.with_read_timeout(std::time::Duration::from_millis(150))
        })
        .await;
    let (status, body) = server
        .post_json("/api/tools/cos_test_slow_read", json!({"millis": 600}))
        .await;
    assert_eq!(status, 503, "{body}");
    let error = error_of(&body);
    assert_eq!(error["code"], "E_TIMEOUT");
    assert_eq!(
        error["retryable"], true,
        "a read changed nothing: retrying is safe"
    );
    // a write past the same time runs to its end and answers what it did
    let (status, body) = server
        .post_json("/api/tools/cos_test_slow_write", json!({"millis": 600}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["slept_ms"], 600);
    // the same over MCP's front door (the runtime decides, not HTTP)
    let envelope = server
        .hub
        .call_json(
            "cos_test_slow_write",
            json!({"millis": 400}),
            cos_hub::envelope::Budget::Agent,
            cos_hub::tools::Source::Mcp,
        )
        .await;
    assert_eq!(envelope["ok"], true, "{envelope}");
    // retried with its Idempotency-Key while it runs and after: it runs once
    let slow_write = |key: &'static str| {
        let request = server
            .client
            .post(server.url("/api/tools/cos_test_slow_write"))
            .header("idempotency-key", key)
            .json(&json!({"millis": 600, "mark": "retried-past-the-timeout"}));
        async move { request.send().await.expect("an answer") }
    };
    let first = tokio::spawn(slow_write("slow-write-1"));
    while crate::common::slow_runs("retried-past-the-timeout") == 0 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let (status, body) = crate::common::decode(slow_write("slow-write-1").await).await;
    assert_eq!(status, 409, "a retry while the write runs: {body}");
    assert_eq!(error_of(&body)["code"], "E_REQUEST_REUSE");
    let (status, body) = crate::common::decode(first.await.expect("the first write")).await;
    assert_eq!(status, 200, "the write itself is never cut short: {body}");
    let replay = slow_write("slow-write-1").await;
    assert_eq!(
        replay
            .headers()
            .get("idempotency-replayed")
            .map(|v| v.as_bytes()),
        Some(&b"true"[..])
    );
    let (status, replayed) = crate::common::decode(replay).await;
    assert_eq!(
        (status, &replayed),
        (200, &body),
        "the stored answer, again"
    );
    assert_eq!(
        crate::common::slow_runs("retried-past-the-timeout"),
        1,
        "the write ran once for three requests with its key"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_call_body_must_be_an_object_or_nothing() {
    let server = TestServer::start().await;
    for body in ["null", "[1]", "\"text\"", "3"] {
        let response = server
            .client
            .post(server.url("/api/tools/cos_graph_doctor"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        let (status, answer) = crate::common::decode(response).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(error_of(&answer)["details"]["field"], "body");
    }
    let response = server
        .client
        .post(server.url("/api/tools/cos_hub_health"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "no body is no arguments");
}

#[tokio::test]
async fn an_oversized_body_over_http2_gets_the_413_envelope() {
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    let server = TestServer::start().await;
    let client: Client<_, axum::body::Body> = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http();
    let body = json!({"title": "x".repeat(2 << 20)}).to_string();
    let request = axum::http::Request::post(server.url("/api/board/tasks"))
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body))
        .unwrap();
    let response = client
        .request(request)
        .await
        .expect("an answer, not a reset");
    assert_eq!(response.version(), axum::http::Version::HTTP_2);
    assert_eq!(response.status(), 413);
    let bytes = axum::body::to_bytes(axum::body::Body::new(response.into_body()), 1 << 20)
        .await
        .unwrap();
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(error_of(&answer)["code"], "E_TOO_LARGE", "{answer}");
    assert_eq!(error_of(&answer)["details"]["limit_bytes"], 1 << 20);
}
