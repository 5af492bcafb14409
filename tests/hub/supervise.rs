//! Agent evidence through its front doors: recording outputs over MCP and
//! REST into a session's bundle, the role registry and its schemas, the
//! refusals, concurrent recorders, and the bundle file kept equal to the
//! database (after a kill -9 too).

use crate::cli::{announced_address, serve_on_any_port_with};
use crate::common::{TestServer, error_of};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn output(session: &str, formula: &str, output: Value) -> Value {
    json!({"session_id": session, "task_marker": "TASK-004", "persona_id": "lead",
           "formula_id": formula, "output_json": output.to_string(), "latency_ms": 1200})
}

async fn record(server: &TestServer, body: Value) -> (u16, Value) {
    server.post_json("/api/supervise/outputs", body).await
}

fn bundle_file(server: &TestServer, session: &str) -> Value {
    let path = server
        .state_dir()
        .join("agents")
        .join(format!("evidence_bundle_{session}.json"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn slot<'a>(bundle: &'a Value, field: &str) -> &'a Value {
    bundle["slots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|slot| slot["field"] == field)
        .unwrap_or_else(|| panic!("no slot {field} in {bundle}"))
}

#[tokio::test]
async fn outputs_over_mcp_and_rest_fill_one_bundle_and_its_file() {
    let server = TestServer::start_on(super::BOARD).await;
    let (status, first) = record(
        &server,
        output(
            "s-1",
            "researcher",
            json!({"findings": ["the cache is cold"]}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{first}");
    assert_eq!(first["data"]["status"], "ok");
    assert_eq!(first["data"]["bundle_fields_filled"], 1);
    assert_eq!(first["data"]["file_written"], true);

    let client =
        ().serve(StreamableHttpClientTransport::from_uri(server.url("/mcp")))
            .await
            .expect("initialize over HTTP");
    let Value::Object(arguments) = output("s-1", "analyst", json!({"risks": []})) else {
        unreachable!()
    };
    let answer = client
        .call_tool(
            CallToolRequestParams::new("cos_supervise_record_output").with_arguments(arguments),
        )
        .await
        .unwrap();
    let text = &answer.content[0].as_text().unwrap().text;
    let envelope: Value = serde_json::from_str(text).unwrap();
    assert_eq!(envelope["ok"], true, "{envelope}");
    assert_eq!(envelope["data"]["formula_id"], "analyst");
    assert_eq!(envelope["data"]["bundle_fields_filled"], 2);

    let (status, bundle) = server.get("/api/supervise/sessions/s-1").await;
    assert_eq!(status, 200, "{bundle}");
    let bundle = &bundle["data"];
    assert_eq!(bundle["task_marker"], "TASK-004");
    assert_eq!(bundle["version"], 2);
    assert_eq!(bundle["fields_filled"], 2);
    // one slot per role of the default registry, filled or not
    let fields: Vec<&str> = bundle["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["researcher", "analyst", "architect", "reviewer", "tester"]
    );
    assert_eq!(
        slot(bundle, "researcher")["output"]["findings"][0],
        "the cache is cold"
    );
    assert_eq!(slot(bundle, "reviewer")["filled"], false);
    assert_eq!(bundle["dispatch_count"], 2);
    let dispatch = &bundle["dispatches"][0];
    assert_eq!(dispatch["formula_id"], "researcher");
    assert_eq!(dispatch["latency_ms"], 1200);
    assert_eq!(dispatch["status"], "ok");
    assert_eq!(dispatch["output_hash"].as_str().unwrap().len(), 64);

    // the file: the reference system's flat shape, equal to the database
    let file = bundle_file(&server, "s-1");
    assert_eq!(file["version"], 2);
    assert_eq!(file["researcher"]["findings"][0], "the cache is cold");
    assert_eq!(file["analyst"], json!({"risks": []}));
    assert_eq!(file["reviewer"], Value::Null);
    assert_eq!(file["degraded_formulas"], json!([]));
    assert_eq!(file["backtracks"], json!([]));

    let (_, listed) = server
        .get("/api/supervise/sessions?task_marker=TASK-004")
        .await;
    let sessions = listed["data"]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["session_id"], "s-1");
    assert_eq!(sessions[0]["dispatch_count"], 2);
    let (_, other) = server
        .get("/api/supervise/sessions?task_marker=TASK-999")
        .await;
    assert_eq!(other["data"]["sessions"], json!([]));
}

#[tokio::test]
async fn role_schemas_decide_what_fills_a_slot_and_what_degrades() {
    let server = TestServer::start_on(super::BOARD).await;
    std::fs::create_dir_all(server.state_dir()).unwrap();
    std::fs::write(
        server.state_dir().join("roles.toml"),
        "[[roles]]\nid = \"researcher\"\nfield = \"research\"\nschema = { type = \"object\", required = [\"findings\"], properties = { findings = { type = \"array\" } } }\n\n[[roles]]\nid = \"reviewer\"\n",
    )
    .unwrap();
    let (status, refused) = record(
        &server,
        output("s-2", "researcher", json!({"findings": "one"})),
    )
    .await;
    assert_eq!(status, 201, "{refused}");
    let refused = &refused["data"];
    assert_eq!(
        refused["status"], "fail",
        "an ok output its schema refuses is a failure"
    );
    assert_eq!(refused["degraded"], true);
    assert!(
        refused["error"].as_str().unwrap().contains("/findings"),
        "{refused}"
    );
    assert_eq!(refused["bundle_fields_filled"], 0);

    let (_, timed_out) = record(
        &server,
        json!({"session_id": "s-2", "task_marker": "TASK-004", "persona_id": "lead",
               "formula_id": "reviewer", "output_json": "{}", "status": "timeout"}),
    )
    .await;
    assert_eq!(timed_out["data"]["degraded"], true);
    let (_, failed) = record(
        &server,
        json!({"session_id": "s-2", "task_marker": "TASK-004", "persona_id": "lead",
               "formula_id": "reviewer", "output_json": "{\"why\": \"no access\"}", "status": "fail"}),
    )
    .await;
    assert_eq!(
        failed["data"]["degraded"], false,
        "a reported failure is not a degradation"
    );
    let (_, filled) = record(
        &server,
        output("s-2", "researcher", json!({"findings": ["a"]})),
    )
    .await;
    assert_eq!(filled["data"]["field"], "research");
    assert_eq!(filled["data"]["bundle_fields_filled"], 1);

    let (_, bundle) = server.get("/api/supervise/sessions/s-2").await;
    let bundle = &bundle["data"];
    assert_eq!(
        bundle["degraded_formulas"],
        json!(["researcher", "reviewer"])
    );
    assert_eq!(
        slot(bundle, "research")["output"],
        json!({"findings": ["a"]})
    );
    let statuses: Vec<&str> = bundle["dispatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["fail", "timeout", "fail", "ok"]);
    assert_eq!(bundle["dispatches"][2]["error"], "{\"why\": \"no access\"}");

    // a role the registry does not have is refused, listing those it has
    let (status, unknown) = record(&server, output("s-2", "analyst", json!({}))).await;
    assert_eq!(status, 400, "{unknown}");
    let message = error_of(&unknown)["message"].as_str().unwrap();
    assert!(
        message.starts_with("formula_id:") && message.contains("researcher, reviewer"),
        "{message}"
    );
}

#[tokio::test]
async fn bad_input_is_refused_naming_the_field_and_nothing_lands() {
    let server = TestServer::start_on(super::BOARD).await;
    let cases = [
        (
            output("s-3", "researcher</formula_id><x>", json!({})),
            400,
            "formula_id",
        ),
        (
            output("../escape", "researcher", json!({})),
            400,
            "session_id",
        ),
        (
            json!({"session_id": "s-3", "task_marker": "T", "persona_id": "p", "formula_id": "researcher",
                "output_json": "{\"a\": 1,\n \"b\": }"}),
            400,
            "output_json",
        ),
        (
            json!({"session_id": "s-3", "task_marker": "T", "persona_id": "p", "formula_id": "researcher",
                "output_json": format!("{{\"blob\": \"{}\"}}", "x".repeat(1 << 20))}),
            413,
            "body",
        ),
        (
            json!({"session_id": "s-3", "task_marker": "T", "persona_id": "p", "formula_id": "researcher",
                "output_json": "{}", "status": "done"}),
            400,
            "status",
        ),
    ];
    for (body, status, field) in cases {
        let (got, answer) = record(&server, body).await;
        assert_eq!(got, status, "{answer}");
        let error = error_of(&answer);
        assert_eq!(error["category"], "validation", "{answer}");
        assert!(
            error["message"].as_str().unwrap().contains(field),
            "{field}: {answer}"
        );
    }
    let (_, positioned) = record(
        &server,
        json!({"session_id": "s-3", "task_marker": "T", "persona_id": "p", "formula_id": "researcher",
               "output_json": "{\"a\": 1,\n \"b\": }"}),
    )
    .await;
    assert_eq!(error_of(&positioned)["details"]["line"], 2, "{positioned}");
    let (_, listed) = server.get("/api/supervise/sessions").await;
    assert_eq!(
        listed["data"]["sessions"],
        json!([]),
        "refusals store nothing"
    );

    let (status, missing) = server.get("/api/supervise/sessions/nobody").await;
    assert_eq!(status, 404, "{missing}");
    assert_eq!(error_of(&missing)["category"], "not_found");
    let (status, missing) = server
        .post_json(
            "/api/supervise/sessions/nobody/backtracks",
            json!({"from_formula": "reviewer", "to_formula": "analyst", "reason": "tests fail"}),
        )
        .await;
    assert_eq!(status, 404, "{missing}");

    // a session belongs to one task
    record(&server, output("s-4", "researcher", json!({}))).await;
    let mut other_task = output("s-4", "analyst", json!({}));
    other_task["task_marker"] = json!("TASK-005");
    let (status, refused) = record(&server, other_task).await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        error_of(&refused)["message"]
            .as_str()
            .unwrap()
            .starts_with("task_marker:")
    );
}

#[tokio::test]
async fn discoveries_and_backtracks_accumulate_in_the_bundle() {
    let server = TestServer::start_on(super::BOARD).await;
    record(&server, output("s-5", "reviewer", json!({"passed": false}))).await;
    let (status, noted) = server
        .post_json(
            "/api/supervise/sessions/s-5/backtracks",
            json!({"from_formula": "reviewer", "to_formula": "architect", "reason": "the design misses retries"}),
        )
        .await;
    assert_eq!(status, 201, "{noted}");
    assert_eq!(noted["data"]["backtracks"], 1);
    let (status, noted) = server
        .post_json(
            "/api/supervise/sessions/s-5/discoveries",
            json!({"kind": "hidden_dependency", "summary": "billing reads this table",
                   "impact_assessment": "migration needs a window", "decision": "record_for_later"}),
        )
        .await;
    assert_eq!(status, 201, "{noted}");
    let (_, bundle) = server.get("/api/supervise/sessions/s-5").await;
    assert_eq!(bundle["data"]["backtracks"][0]["to_formula"], "architect");
    assert_eq!(
        bundle["data"]["discoveries"][0]["decision"],
        "record_for_later"
    );
    let file = bundle_file(&server, "s-5");
    assert_eq!(file["version"], 3);
    assert_eq!(file["discoveries"][0]["kind"], "hidden_dependency");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_recorders_on_one_session_lose_nothing() {
    let server = Arc::new(TestServer::start_on(super::BOARD).await);
    let roles = ["researcher", "analyst", "architect", "reviewer", "tester"];
    let mut recorders = Vec::new();
    for recorder in 0..8 {
        let server = server.clone();
        recorders.push(tokio::spawn(async move {
            for n in 0..10 {
                let role = roles[(recorder + n) % roles.len()];
                let (status, body) = record(
                    &server,
                    output("shared", role, json!({"by": recorder, "n": n})),
                )
                .await;
                assert_eq!(status, 201, "{body}");
            }
        }));
    }
    for recorder in recorders {
        recorder.await.unwrap();
    }
    let (_, bundle) = server.get("/api/supervise/sessions/shared").await;
    let bundle = &bundle["data"];
    assert_eq!(bundle["dispatch_count"], 80);
    assert_eq!(bundle["version"], 80);
    assert_eq!(bundle["fields_filled"], 5);
    let file = bundle_file(&server, "shared");
    assert_eq!(
        file["version"], 80,
        "the file holds the last version, not an interleaving"
    );
    for role in roles {
        assert_eq!(file[role], slot(bundle, role)["output"], "{role}");
    }
}

/// Recorders against `cos serve` until it is killed; answers the outputs it acknowledged.
async fn record_until_killed(address: String, round: usize) -> Vec<(String, String)> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let mut recorders = Vec::new();
    for recorder in 0..6 {
        let (http, address, acknowledged) = (http.clone(), address.clone(), acknowledged.clone());
        recorders.push(tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_secs(10);
            for n in 0..10_000 {
                if Instant::now() > deadline {
                    break;
                }
                let session = format!("crash-{}", (recorder + n) % 3);
                let marker = format!("r{round}-{recorder}-{n}");
                let body = output(&session, "researcher", json!({"marker": marker}));
                let sent = http
                    .post(format!("http://{address}/api/supervise/outputs"))
                    .json(&body)
                    .send()
                    .await;
                match sent {
                    Ok(response) if response.status() == 201 => {
                        acknowledged.lock().unwrap().push((session, marker));
                    }
                    _ => break,
                }
            }
        }));
    }
    for recorder in recorders {
        let _ = recorder.await;
    }
    acknowledged.lock().unwrap().clone()
}

#[test]
fn a_kill_between_database_and_file_leaves_them_equal_after_restart() {
    let repo = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let database = crate::common::postgres::database_for(super::BOARD);
    let serve = || serve_on_any_port_with(repo.path(), database.as_deref());
    let mut acknowledged: Vec<(String, String)> = Vec::new();
    let mut random = 0x2545_f491_4f6c_dd1d_u64;
    for round in 0..3 {
        let mut server = serve();
        let address = announced_address(&mut server);
        let recording = runtime.spawn(record_until_killed(address, round));
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        std::thread::sleep(Duration::from_millis(200 + random % 600));
        server.kill().unwrap();
        server.wait().unwrap();
        if let Ok(Ok(seen)) = runtime
            .block_on(async { tokio::time::timeout(Duration::from_secs(10), recording).await })
        {
            acknowledged.extend(seen);
        }
    }
    assert!(
        !acknowledged.is_empty(),
        "some outputs were acknowledged before the kills"
    );
    let mut server = serve();
    let address = announced_address(&mut server);
    let http = reqwest::Client::new();
    for session in ["crash-0", "crash-1", "crash-2"] {
        let bundle: Value = runtime.block_on(async {
            http.get(format!("http://{address}/api/supervise/sessions/{session}"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap()
        });
        let bundle = &bundle["data"];
        let count = bundle["dispatch_count"].as_i64().unwrap();
        let mine = acknowledged.iter().filter(|(s, _)| s == session).count() as i64;
        assert!(
            count >= mine,
            "{session}: {count} dispatches, {mine} acknowledged"
        );
        assert_eq!(
            bundle["version"].as_i64(),
            Some(count),
            "one version per dispatch"
        );
        let file: Value = serde_json::from_slice(
            &std::fs::read(
                repo.path()
                    .join(format!(".cos/agents/evidence_bundle_{session}.json")),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            file["version"], bundle["version"],
            "{session}: file and database agree"
        );
        assert_eq!(file["researcher"], slot(bundle, "researcher")["output"]);
    }
    server.kill().unwrap();
    server.wait().unwrap();
}

#[tokio::test]
async fn recorded_evidence_is_found_by_search_until_its_module_is_switched_off() {
    let server = TestServer::start_on(super::BOARD).await;
    let (status, recorded) = record(
        &server,
        output(
            "s-9",
            "reviewer",
            json!({"verdict": "the retry budget overflows under load"}),
        ),
    )
    .await;
    assert_eq!(status, 201, "{recorded}");
    let (status, noted) = server
        .post_json(
            "/api/supervise/sessions/s-9/discoveries",
            json!({"kind": "hidden_dependency", "summary": "billing reads the ledger table",
                   "impact_assessment": "migration needs a window", "decision": "record_for_later"}),
        )
        .await;
    assert_eq!(status, 201, "{noted}");

    let (status, found) = server.get("/api/search?q=overflows&area=evidence").await;
    assert_eq!(status, 200, "{found}");
    let hit = &found["data"]["hits"][0];
    assert_eq!(hit["area"], "evidence", "{found}");
    assert_eq!(hit["kind"], "output");
    assert_eq!(hit["opens"]["session_id"], "s-9");
    assert_eq!(hit["opens"]["task_id"], "TASK-004");
    assert!(
        hit["snippet"].as_str().unwrap().contains("overflows"),
        "{hit}"
    );

    let (_, found) = server.get("/api/search?q=ledger").await;
    let hit = &found["data"]["hits"][0];
    assert_eq!(hit["kind"], "discovery", "{found}");
    assert_eq!(hit["title"], "billing reads the ledger table");
    assert_eq!(found["data"]["facets"]["evidence"], 1);

    let (status, _) = server
        .put_json("/api/settings/modules/supervise", json!({"enabled": false}))
        .await;
    assert_eq!(status, 200);
    let (status, found) = server.get("/api/search?q=ledger").await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["data"]["total"], 0, "{found}");
    assert_eq!(found["data"]["facets"]["evidence"], 0, "{found}");
    assert!(
        found["data"]["notes"]
            .to_string()
            .contains("evidence were not searched: the supervise module is switched off"),
        "{found}"
    );
}
