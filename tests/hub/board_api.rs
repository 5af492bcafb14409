//! The board through HTTP against a spawned server: every workflow rule and every error.

use crate::common::{ChangeStream, TestServer, column, error_of};
use serde_json::{Value, json};

async fn create(server: &TestServer, body: Value) -> Value {
    let (status, answer) = server.post_json("/api/board/tasks", body).await;
    assert_eq!(status, 201, "{answer}");
    answer["data"].clone()
}

async fn task(server: &TestServer, id: &str) -> Value {
    let (status, answer) = server.get(&format!("/api/board/tasks/{id}")).await;
    assert_eq!(status, 200, "{answer}");
    answer["data"].clone()
}

async fn move_task(
    server: &TestServer,
    id: &str,
    from: &str,
    to: &str,
    actor: &str,
) -> (u16, Value) {
    server
        .post_json(
            &format!("/api/board/tasks/{id}/move"),
            json!({"from": from, "to": to, "actor": {"kind": "agent", "id": actor}}),
        )
        .await
}

async fn history_len(server: &TestServer, id: &str) -> usize {
    let (_, answer) = server.get(&format!("/api/board/tasks/{id}/history")).await;
    answer["data"]["history"].as_array().unwrap().len()
}

#[tokio::test(flavor = "multi_thread")]
async fn create_show_and_validation() {
    let server = TestServer::start_on(super::BOARD).await;
    let response = server
        .client
        .post(server.url("/api/board/tasks"))
        .json(&json!({"title": "Write the parser", "kind": "bug", "priority": "P1", "labels": ["parser"], "appetite": "2h"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["etag"], "\"1\"");
    let (status, answer) = crate::common::decode(response).await;
    assert_eq!(status, 201);
    let created = &answer["data"];
    assert_eq!(created["id"], "TASK-001");
    assert_eq!(created["status"], "icebox");
    assert_eq!(
        created["swimlane"], "backend",
        "the first configured swimlane by default"
    );
    assert_eq!(created["version"], 1);
    assert_eq!(answer["meta"]["layer"], "tasks");
    let second = create(&server, json!({"title": "Second"})).await;
    assert_eq!(second["id"], "TASK-002");
    assert_eq!(
        task(&server, "TASK-1").await["title"],
        "Write the parser",
        "ids parse with any padding"
    );

    // unknown enum value: 400 naming the field and the allowed values
    let (status, answer) = server
        .post_json("/api/board/tasks", json!({"title": "x", "kind": "epic"}))
        .await;
    assert_eq!(status, 400);
    let error = error_of(&answer);
    assert_eq!(error["details"]["field"], "kind");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("feature") && message.contains("security"),
        "{message}"
    );

    let (status, answer) = server
        .post_json("/api/board/tasks", json!({"title": "x", "priority": "P9"}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&answer)["details"]["field"], "priority");

    let (status, answer) = server
        .post_json("/api/board/tasks", json!({"title": "x".repeat(201)}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&answer)["details"]["field"], "title");
    let (status, _) = server
        .post_json("/api/board/tasks", json!({"title": "   "}))
        .await;
    assert_eq!(status, 400);

    let (status, answer) = server
        .post_json(
            "/api/board/tasks",
            json!({"title": "x", "swimlane": "kitchen"}),
        )
        .await;
    assert_eq!(status, 400);
    let error = error_of(&answer);
    assert_eq!(
        error["details"]["allowed"],
        json!(["backend", "frontend", "docs", "infra"])
    );

    let (status, answer) = server
        .post_json(
            "/api/board/tasks",
            json!({"title": "x", "appetite": "soon"}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&answer)["details"]["field"], "appetite");

    let (status, answer) = server
        .post_json(
            "/api/board/tasks",
            json!({"title": "x", "status": "complete"}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&answer)["details"]["field"], "status");

    let (status, answer) = server
        .post_json(
            "/api/board/tasks",
            json!({"title": "x", "depends_on": ["TASK-99"]}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&answer)["details"]["unknown"], "TASK-99");

    // unknown task: 404 naming the id; malformed id: 400
    let (status, answer) = server.get("/api/board/tasks/TASK-404").await;
    assert_eq!(status, 404);
    let error = error_of(&answer);
    assert!(error["message"].as_str().unwrap().contains("TASK-404"));
    assert_eq!(error["details"]["id"], "TASK-404");
    let (status, _) = server.get("/api/board/tasks/banana").await;
    assert_eq!(status, 400);

    // refused creates left nothing behind: the next id is still 3
    assert_eq!(
        create(&server, json!({"title": "Third"})).await["id"],
        "TASK-003"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn moves_follow_the_transition_table_and_refusals_change_nothing() {
    let server = TestServer::start_on(super::BOARD).await;
    let id = create(&server, json!({"title": "Move me"})).await["id"]
        .as_str()
        .unwrap()
        .to_string();

    let (status, answer) = move_task(&server, &id, "icebox", "testing", "a1").await;
    assert_eq!(status, 400, "{answer}");
    let error = error_of(&answer);
    assert_eq!(error["code"], "E_TRANSITION");
    assert_eq!(
        error["details"]["allowed"],
        json!(["in_progress", "emergency", "archive"])
    );

    let (status, moved) = move_task(&server, &id, "icebox", "in_progress", "a1").await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved["data"]["status"], "in_progress");
    assert_eq!(moved["data"]["assignee"], "agent:a1");
    assert_eq!(moved["data"]["version"], 2);
    assert!(moved["data"]["started_at"].is_string());

    // a writer that still believes it is in icebox is refused with the current task
    let before = history_len(&server, &id).await;
    let (status, answer) = move_task(&server, &id, "icebox", "in_progress", "a2").await;
    assert_eq!(status, 409);
    let error = error_of(&answer);
    assert_eq!(error["code"], "STALE_STATE");
    assert_eq!(error["details"]["current"]["status"], "in_progress");
    assert_eq!(
        history_len(&server, &id).await,
        before,
        "a refused move writes no history"
    );
    assert_eq!(task(&server, &id).await["version"], 2);

    for (from, to) in [
        ("in_progress", "testing"),
        ("testing", "complete"),
        ("complete", "archive"),
    ] {
        let (status, answer) = move_task(&server, &id, from, to, "a1").await;
        assert_eq!(status, 200, "{from}→{to}: {answer}");
    }
    let archived = task(&server, &id).await;
    assert!(archived["completed_at"].is_string());
    assert_eq!(archived["version"], 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn wip_limits_per_actor_and_per_column() {
    let server = TestServer::start_on(super::BOARD).await;
    server.set_board_config("[wip]\ntesting = 1\nemergency = 1\n");
    let mut ids = Vec::new();
    for n in 0..4 {
        ids.push(
            create(&server, json!({"title": format!("t{n}")})).await["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    assert_eq!(
        move_task(&server, &ids[0], "icebox", "in_progress", "alice")
            .await
            .0,
        200
    );
    let (status, answer) = move_task(&server, &ids[1], "icebox", "in_progress", "alice").await;
    assert_eq!(status, 409, "{answer}");
    let error = error_of(&answer);
    assert_eq!(error["code"], "E_WIP_LIMIT");
    assert_eq!(error["details"]["occupants"][0]["id"], ids[0].as_str());
    assert_eq!(error["details"]["limit"], 1);
    assert_eq!(
        task(&server, &ids[1]).await["status"],
        "icebox",
        "nothing persisted"
    );
    assert_eq!(
        move_task(&server, &ids[1], "icebox", "in_progress", "bob")
            .await
            .0,
        200,
        "another actor may start"
    );

    assert_eq!(
        move_task(&server, &ids[0], "in_progress", "testing", "alice")
            .await
            .0,
        200
    );
    let (status, answer) = move_task(&server, &ids[1], "in_progress", "testing", "bob").await;
    assert_eq!(status, 409);
    assert_eq!(error_of(&answer)["details"]["column"], "testing");

    assert_eq!(
        move_task(&server, &ids[2], "icebox", "emergency", "carol")
            .await
            .0,
        200
    );
    let (status, _) = move_task(&server, &ids[3], "icebox", "emergency", "carol").await;
    assert_eq!(status, 409);

    let (_, board) = server.get("/api/board/list").await;
    let testing = column(&board, "testing");
    assert_eq!(
        testing["wip"],
        json!({"limit": 1, "per_actor": false, "occupied": 1, "at_limit": true})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn dependencies_gate_starting_and_cycles_are_refused() {
    let server = TestServer::start_on(super::BOARD).await;
    let a = create(&server, json!({"title": "A"})).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let b = create(&server, json!({"title": "B", "depends_on": [a]})).await;
    let b_id = b["id"].as_str().unwrap().to_string();
    assert_eq!(b["depends_on"], json!([a]));

    let (status, answer) = move_task(&server, &b_id, "icebox", "in_progress", "x").await;
    assert_eq!(status, 409, "{answer}");
    let error = error_of(&answer);
    assert_eq!(error["code"], "E_DEPENDENCY_OPEN");
    assert_eq!(error["details"]["open_dependencies"][0]["id"], a.as_str());

    let (status, deps) = server
        .get(&format!("/api/board/tasks/{b_id}/dependencies"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(deps["data"]["open"], json!([a]));
    let (_, dependents) = server
        .get(&format!("/api/board/tasks/{a}/dependents"))
        .await;
    assert_eq!(dependents["data"]["dependents"][0]["id"], b_id.as_str());

    // A depending on B would close a loop
    let version = task(&server, &a).await["version"].as_i64().unwrap();
    let (status, answer) = server
        .patch_json(
            &format!("/api/board/tasks/{a}"),
            json!({"changes": {"depends_on": [b_id]}}),
            Some(&format!("\"{version}\"")),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    let error = error_of(&answer);
    assert_eq!(error["code"], "E_DEPENDENCY_CYCLE");
    assert_eq!(error["details"]["cycle"], json!([a, b_id, a]));
    assert_eq!(
        task(&server, &a).await["depends_on"],
        json!([]),
        "nothing persisted"
    );

    assert_eq!(
        move_task(&server, &a, "icebox", "in_progress", "x").await.0,
        200
    );
    assert_eq!(
        move_task(&server, &a, "in_progress", "complete", "x")
            .await
            .0,
        200
    );
    let (_, ready) = server.get("/api/board/ready").await;
    assert_eq!(ready["data"]["results"][0]["id"], b_id.as_str());
    assert_eq!(
        move_task(&server, &b_id, "icebox", "in_progress", "y")
            .await
            .0,
        200
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn titles_labels_and_names_refuse_control_and_invisible_characters() {
    let server = TestServer::start_on(super::BOARD).await;
    for (body, field, character) in [
        (json!({"title": "\u{0}\u{0}\u{0}"}), "title", "U+0000"),
        (json!({"title": "red \u{1b}[31malert"}), "title", "U+001B"),
        (json!({"title": "\u{200b}"}), "title", "U+200B"),
        (
            json!({"title": "ok", "labels": ["fine", "bell\u{7}"]}),
            "labels",
            "U+0007",
        ),
        (
            json!({"title": "ok", "epic": "e\u{202e}pic"}),
            "epic",
            "U+202E",
        ),
        (
            json!({"title": "ok", "actor": {"kind": "agent", "id": "a\nb"}}),
            "actor.id",
            "U+000A",
        ),
    ] {
        let (status, answer) = server.post_json("/api/board/tasks", body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        let error = error_of(&answer);
        assert_eq!(error["details"]["field"], field, "{body}: {answer}");
        assert_eq!(error["details"]["character"], character, "{body}: {answer}");
        assert!(
            error["message"].as_str().unwrap().contains(character),
            "{answer}"
        );
    }
    // a title that shows nothing but spaces
    let (status, answer) = server
        .post_json("/api/board/tasks", json!({"title": " \u{3000} "}))
        .await;
    assert_eq!(status, 400, "{answer}");
    // descriptions are kept as written; names keep their letters and emoji
    let (status, answer) = server
        .post_json(
            "/api/board/tasks",
            json!({"title": "Ünïcödé 🚀 title", "description": "# Plan\r\n\n\t- step\n", "labels": ["naïve"]}),
        )
        .await;
    assert_eq!(status, 201, "{answer}");
    // nothing was stored by the refusals
    let (_, board) = server.get("/api/board/list").await;
    let stored: u64 = board["data"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|column| column["total"].as_u64().unwrap())
        .sum();
    assert_eq!(stored, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn if_match_compares_strongly_and_star_matches_the_current_task() {
    let server = TestServer::start_on(super::BOARD).await;
    let id = create(&server, json!({"title": "Tagged"})).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/api/board/tasks/{id}");
    let edit = |title: &str| json!({"changes": {"title": title}});
    // a weak tag never matches, even the current version's
    let (status, answer) = server
        .patch_json(&path, edit("weak"), Some("W/\"1\""))
        .await;
    assert_eq!(status, 412, "{answer}");
    assert_eq!(error_of(&answer)["code"], "STALE_VERSION");
    assert_eq!(error_of(&answer)["details"]["current"]["version"], 1);
    // `*` matches whatever the task is now
    let (status, answer) = server.patch_json(&path, edit("star"), Some("*")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["data"]["version"], 2);
    // a list matches when one of its strong tags is current
    let (status, answer) = server
        .patch_json(&path, edit("listed"), Some("\"7\", W/\"2\", \"2\""))
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["data"]["title"], "listed");
    let (status, _) = server
        .patch_json(&path, edit("stale list"), Some("\"1\", \"2\""))
        .await;
    assert_eq!(status, 412);
    // `*` on a task that does not exist
    let (status, _) = server
        .patch_json("/api/board/tasks/TASK-999", edit("ghost"), Some("*"))
        .await;
    assert_eq!(status, 404);
    let (status, answer) = server
        .patch_json(&path, edit("bad"), Some("\"three\""))
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&answer)["details"]["field"], "If-Match");
    // the body's version outside If-Match's tags: no task can be both, 412
    let (status, answer) = server
        .patch_json(
            &path,
            json!({"version": 2, "changes": {"title": "torn"}}),
            Some("\"3\""),
        )
        .await;
    assert_eq!(status, 412, "{answer}");
    assert_eq!(error_of(&answer)["code"], "STALE_VERSION");
    assert_eq!(error_of(&answer)["details"]["current"]["version"], 3);
    assert_eq!(task(&server, &id).await["title"], "listed");
    // JSON Schema counts 3.0 as the integer 3
    let (status, answer) = server
        .patch_json(
            &path,
            json!({"version": 3.0, "changes": {"title": "whole"}}),
            None,
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = server
        .patch_json(
            &path,
            json!({"version": 4.5, "changes": {"title": "half"}}),
            None,
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(error_of(&answer)["details"]["field"], "version");
    assert_eq!(task(&server, &id).await["title"], "whole");
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_are_compare_and_set_on_the_version() {
    let server = TestServer::start_on(super::BOARD).await;
    let id = create(&server, json!({"title": "Original", "epic": "e1"})).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/api/board/tasks/{id}");

    let response = server
        .client
        .patch(server.url(&path))
        .header("if-match", "\"1\"")
        .json(&json!({"changes": {"title": "Renamed", "labels": ["x"], "epic": null}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["etag"], "\"2\"");
    let (status, answer) = crate::common::decode(response).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["data"]["title"], "Renamed");
    assert_eq!(answer["data"]["epic"], Value::Null, "null clears");
    assert_eq!(answer["data"]["version"], 2);

    // a second writer that read version 1: 412 with If-Match, with the current task
    let (status, answer) = server
        .patch_json(&path, json!({"changes": {"title": "Lost"}}), Some("\"1\""))
        .await;
    assert_eq!(status, 412, "{answer}");
    let error = error_of(&answer);
    assert_eq!(error["code"], "STALE_VERSION");
    assert_eq!(error["details"]["current"]["title"], "Renamed");
    // and 409 when the version came in the body
    let (status, _) = server
        .patch_json(
            &path,
            json!({"version": 1, "changes": {"title": "Lost"}}),
            None,
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(task(&server, &id).await["title"], "Renamed");

    let (status, answer) = server
        .patch_json(&path, json!({"changes": {"title": "No version"}}), None)
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&answer)["details"]["field"], "version");
    let (status, answer) = server
        .patch_json(&path, json!({"changes": {"titel": "typo"}}), Some("\"2\""))
        .await;
    assert_eq!(
        status, 400,
        "unknown fields are refused, not ignored: {answer}"
    );
    let (status, _) = server
        .patch_json(&path, json!({"changes": {}}), Some("soon"))
        .await;
    assert_eq!(status, 400);

    let (_, history) = server.get(&format!("{path}/history")).await;
    let entries = history["data"]["history"].as_array().unwrap();
    let fields: Vec<&str> = entries
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["labels", "epic", "title", "created"],
        "newest first"
    );
    let title = &entries[2];
    assert_eq!(title["old"], "Original");
    assert_eq!(title["new"], "Renamed");
    assert_eq!(title["actor"], "human:web");
    assert_eq!(title["source"], "rest");
    assert_eq!(title["version"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn ready_tasks_page_best_first_and_leave_out_those_waiting() {
    let server = TestServer::start_on(super::BOARD).await;
    for (title, priority) in [
        ("low", "P3"),
        ("high", "P0"),
        ("mid", "P1"),
        ("also high", "P0"),
    ] {
        create(&server, json!({"title": title, "priority": priority})).await;
    }
    create(
        &server,
        json!({"title": "waiting", "priority": "P0", "depends_on": ["TASK-001"]}),
    )
    .await;
    let mut seen = Vec::new();
    let mut path = "/api/board/ready?limit=2".to_string();
    loop {
        let (status, page) = server.get(&path).await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["data"]["total_count"], 4, "{page}");
        let results = page["data"]["results"].as_array().unwrap();
        assert!(results.len() <= 2, "{page}");
        seen.extend(
            results
                .iter()
                .map(|card| card["title"].as_str().unwrap().to_string()),
        );
        match page["data"]["next_cursor"].as_str() {
            Some(cursor) => path = format!("/api/board/ready?limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, ["high", "also high", "mid", "low"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wip_limit_of_zero_is_none() {
    let server = TestServer::start_on(super::BOARD).await;
    server.set_board_config("[wip]\nin_progress_per_actor = 0\ntesting = 0\n");
    for n in 0..3 {
        let id = create(&server, json!({"title": format!("t{n}")})).await["id"]
            .as_str()
            .unwrap()
            .to_string();
        let (status, answer) = move_task(&server, &id, "icebox", "in_progress", "alice").await;
        assert_eq!(status, 200, "{answer}");
        if n < 2 {
            let (status, answer) = move_task(&server, &id, "in_progress", "testing", "alice").await;
            assert_eq!(status, 200, "{answer}");
        }
    }
    create(&server, json!({"title": "next"})).await;
    let (status, claim) = server
        .post_json(
            "/api/board/claim-next",
            json!({"actor": {"kind": "agent", "id": "alice"}}),
        )
        .await;
    assert_eq!(status, 200, "{claim}");
    assert_eq!(claim["data"]["task"]["id"], "TASK-004");
    let held = task(&server, "TASK-003").await["position"]
        .as_f64()
        .unwrap();
    assert!(
        claim["data"]["task"]["position"].as_f64().unwrap() > held,
        "a claimed task goes to the end of in_progress: {claim}"
    );
    let (_, board) = server.get("/api/board/list").await;
    assert!(column(&board, "in_progress")["wip"].is_null(), "{board}");
    assert!(column(&board, "testing")["wip"].is_null(), "{board}");
    assert_eq!(column(&board, "emergency")["wip"]["limit"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn board_pages_done_columns_with_cursors() {
    let server = TestServer::start_on(super::BOARD).await;
    server.set_board_config("[wip]\nin_progress_per_actor = 100\n");
    for n in 0..7 {
        let id = create(&server, json!({"title": format!("done {n}")})).await["id"]
            .as_str()
            .unwrap()
            .to_string();
        move_task(&server, &id, "icebox", "in_progress", "w").await;
        move_task(&server, &id, "in_progress", "complete", "w").await;
    }
    create(&server, json!({"title": "waiting", "kind": "bug"})).await;

    let (status, board) = server.get("/api/board/list?page_size=3").await;
    assert_eq!(status, 200);
    let data = &board["data"];
    assert_eq!(data["total_count"], 8);
    let complete = column(&board, "complete");
    assert_eq!(complete["total"], 7);
    let mut seen: Vec<String> = complete["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        seen,
        ["TASK-007", "TASK-006", "TASK-005"],
        "newest completed first"
    );
    let mut cursor = complete["next_cursor"].as_str().unwrap().to_string();
    loop {
        let (status, page) = server
            .get(&format!(
                "/api/board/list?page_size=3&complete_cursor={cursor}"
            ))
            .await;
        assert_eq!(status, 200);
        let complete = column(&page, "complete");
        seen.extend(
            complete["cards"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap().to_string()),
        );
        match complete["next_cursor"].as_str() {
            Some(next) => cursor = next.to_string(),
            None => break,
        }
    }
    assert_eq!(seen.len(), 7);
    assert_eq!(
        seen.iter().collect::<std::collections::HashSet<_>>().len(),
        7,
        "no card twice across pages"
    );
    assert_eq!(column(&board, "icebox")["cards"][0]["title"], "waiting");

    let (status, answer) = server.get("/api/board/list?complete_cursor=garbage").await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&answer)["code"], "E_CURSOR");
    let (status, answer) = server.get("/api/board/list?page_size=500").await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&answer)["details"]["field"], "page_size");
    let (status, answer) = server.get("/api/board/list?colour=red").await;
    assert_eq!(
        status, 400,
        "unknown query parameters are refused: {answer}"
    );

    let (_, filtered) = server.get("/api/board/list?kind=bug").await;
    assert_eq!(filtered["data"]["total_count"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn search_ready_claim_and_reposition() {
    let server = TestServer::start_on(super::BOARD).await;
    create(&server, json!({"title": "Parser rewrite", "description": "tokenizer and grammar", "priority": "P2"})).await;
    create(&server, json!({"title": "Fix crash on empty input", "kind": "bug", "priority": "P0", "labels": ["crash"]})).await;
    create(
        &server,
        json!({"title": "Docs for grammar", "kind": "docs", "priority": "P1"}),
    )
    .await;

    let (status, found) = server.get("/api/board/search?text=gramm").await;
    assert_eq!(status, 200);
    assert_eq!(
        found["data"]["total_count"], 2,
        "prefix words match title and description"
    );
    let (_, found) = server.get("/api/board/search?label=crash").await;
    assert_eq!(found["data"]["results"][0]["id"], "TASK-002");
    let (status, found) = server.get("/api/board/search?text=%22%2A%28").await;
    assert_eq!(status, 200, "FTS syntax never reaches SQLite: {found}");
    assert_eq!(found["data"]["total_count"], 0, "{found}");
    let (status, blank) = server.get("/api/board/search?text=%20%20").await;
    assert_eq!(status, 400, "blank text names the field: {blank}");
    assert_eq!(blank["error"]["details"]["field"], "text", "{blank}");

    let (_, ready) = server.get("/api/board/ready").await;
    let order: Vec<&str> = ready["data"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        ["TASK-002", "TASK-003", "TASK-001"],
        "highest priority first"
    );

    let (status, claim) = server
        .post_json(
            "/api/board/claim-next",
            json!({"actor": {"kind": "agent", "id": "claimer"}}),
        )
        .await;
    assert_eq!(status, 200, "{claim}");
    assert_eq!(claim["data"]["task"]["id"], "TASK-002");
    assert_eq!(claim["data"]["task"]["status"], "in_progress");
    let (status, answer) = server
        .post_json(
            "/api/board/claim-next",
            json!({"actor": {"kind": "agent", "id": "claimer"}}),
        )
        .await;
    assert_eq!(status, 409, "the claimer already holds its WIP limit");
    assert_eq!(error_of(&answer)["code"], "E_WIP_LIMIT");
    let (_, claim) = server
        .post_json(
            "/api/board/claim-next",
            json!({"actor": {"kind": "agent", "id": "b"}, "kind": "feature"}),
        )
        .await;
    assert_eq!(
        claim["data"]["task"]["id"], "TASK-001",
        "filters narrow the claim"
    );
    let (_, claim) = server
        .post_json(
            "/api/board/claim-next",
            json!({"actor": {"kind": "agent", "id": "c"}, "kind": "feature"}),
        )
        .await;
    assert_eq!(claim["data"]["task"], Value::Null);
    assert!(claim["data"]["reason"].as_str().unwrap().contains("ready"));

    // reposition within icebox
    create(&server, json!({"title": "Fourth"})).await;
    let reposition = |body: Value| server.post_json("/api/board/tasks/TASK-004/reposition", body);
    let (status, moved) = reposition(json!({"before": "TASK-003"})).await;
    assert_eq!(status, 200, "{moved}");
    let (_, board) = server.get("/api/board/list").await;
    let icebox = column(&board, "icebox");
    let order: Vec<&str> = icebox["cards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["TASK-004", "TASK-003"]);
    // an anchor in another column is the board's state, not a bad request
    let (status, refused) = reposition(json!({"after": "TASK-002"})).await;
    assert_eq!(
        status, 409,
        "the anchor must be in the same column: {refused}"
    );
    assert_eq!(refused["error"]["code"], "STALE_STATE");
    assert_eq!(refused["error"]["details"]["field"], "after");
    assert_eq!(refused["error"]["details"]["current"]["id"], "TASK-002");
    assert_ne!(
        refused["error"]["details"]["current"]["status"], "icebox",
        "{refused}"
    );
    let (status, refused) = reposition(json!({"before": "TASK-4"})).await;
    assert_eq!(status, 400, "a task is not placed beside itself: {refused}");
    assert_eq!(refused["error"]["details"]["field"], "before");
    assert_eq!(refused["error"]["details"]["with"], "id");
    let (status, _) = reposition(json!({})).await;
    assert_eq!(status, 400);

    server
        .post_json(
            "/api/board/tasks",
            json!({"title": "Parse a -> b arrows", "kind": "feature", "priority": "P2"}),
        )
        .await;
    let (status, found) = server.get("/api/board/search?text=-%3E").await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(
        found["data"]["results"][0]["title"], "Parse a -> b arrows",
        "text without words is found as written: {found}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn browsers_get_every_card_while_agents_get_a_trimmed_board() {
    let server = TestServer::start_on(super::BOARD).await;
    // 5,000 tasks through the import path (a folder of task files), all in icebox
    let folder = server.repo().join("tasks");
    std::fs::create_dir_all(&folder).unwrap();
    for n in 1..=5000 {
        let text = format!(
            "---\nid: TASK-{n:04}\ntitle: \"Task number {n} with a reasonably descriptive title\"\nstatus: icebox\nkind: feature\npriority: P2\nswimlane: backend\n---\nbody {n}\n"
        );
        std::fs::write(folder.join(format!("TASK-{n:04}-t.md")), text).unwrap();
    }
    let (status, report) = server
        .post_json("/api/tools/cos_board_import", json!({"dir": "tasks"}))
        .await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["data"]["created"].as_array().unwrap().len(), 5000);

    let (status, board) = server.get("/api/board/list").await;
    assert_eq!(status, 200);
    let icebox = column(&board, "icebox");
    assert_eq!(
        icebox["cards"].as_array().unwrap().len(),
        5000,
        "the browser gets every active card"
    );
    assert_eq!(board["meta"]["truncated"], false);

    let (status, trimmed) = server
        .post_json("/api/tools/cos_task_board?budget=agent", json!({}))
        .await;
    assert_eq!(status, 200);
    let meta = &trimmed["meta"];
    assert_eq!(meta["truncated"], true);
    let columns = trimmed["data"]["columns"].as_array().unwrap();
    let at = columns
        .iter()
        .position(|c| c["status"] == "icebox")
        .unwrap();
    let icebox = columns[at].clone();
    let kept = icebox["cards"].as_array().unwrap().len();
    assert!(kept < 5000);
    assert_eq!(
        meta["truncated_lists"][format!("/columns/{at}/cards")],
        json!({"from": 5000, "to": kept})
    );
    assert_eq!(icebox["total"], 5000, "the column total stays true");
    assert!(serde_json::to_string(&trimmed).unwrap().len() <= 33_000);

    // outside the repository is refused for non-shell callers
    let (status, answer) = server
        .post_json(
            "/api/tools/cos_board_export",
            json!({"dir": "../elsewhere"}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&answer)["code"], "E_PATH");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_disabled_board_answers_module_disabled_on_its_routes() {
    let server = TestServer::start_on(super::BOARD).await;
    let (status, _) = server
        .put_json("/api/settings/modules/board", json!({"enabled": false}))
        .await;
    assert_eq!(status, 200);
    let (status, answer) = server.get("/api/board/list").await;
    assert_eq!(status, 403);
    assert_eq!(error_of(&answer)["category"], "module_disabled");
    let (status, _) = server
        .post_json("/api/board/tasks", json!({"title": "x"}))
        .await;
    assert_eq!(status, 403);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cached_board_follows_writes_from_another_process_and_config_changes() {
    let server = TestServer::start_on(super::BOARD).await;
    create(&server, json!({"title": "first"})).await;
    let total = |board: &Value| board["data"]["total_count"].as_u64().unwrap();
    let (_, board) = server.get("/api/board/list").await;
    assert_eq!(total(&board), 1);
    let (_, again) = server.get("/api/board/list").await;
    assert_eq!(board, again, "a repeated read answers the same board");

    // another process writes to the same state directory
    let folder = server.repo().join("incoming");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("TASK-0050-x.md"),
        "---\nid: TASK-0050\ntitle: from elsewhere\nstatus: icebox\nkind: chore\npriority: P3\n---\n",
    )
    .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cos"))
        .args(["board", "import", "--dir", "incoming", "--repo"])
        .arg(server.repo())
        .args(server.database_args())
        .current_dir(server.repo())
        .env_remove("COS_STATE_DIR")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (_, board) = server.get("/api/board/list").await;
    assert_eq!(
        total(&board),
        2,
        "the other process's import is visible at once"
    );

    // a changed board.toml shows in the WIP state at once
    server.set_board_config("[wip]\ntesting = 7\n");
    let (_, board) = server.get("/api/board/list").await;
    let testing = column(&board, "testing");
    assert_eq!(testing["wip"]["limit"], 7);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_change_stream_announces_board_writes() {
    let server = TestServer::start_on(super::BOARD).await;
    let mut stream = ChangeStream::open(&server).await;
    let first = stream.next("board").await;
    create(&server, json!({"title": "announced"})).await;
    let mut latest = first;
    while latest == first {
        latest = stream.next("board").await;
    }
    assert!(latest > first, "{first} → {latest}");
}

fn write_task_files(server: &TestServer, count: usize, status: &str) {
    let folder = server.repo().join("tasks");
    std::fs::create_dir_all(&folder).unwrap();
    for n in 1..=count {
        let done = if status == "complete" {
            format!(
                "completed_at: 2026-01-{:02}T00:00:{:02}Z\n",
                1 + n % 28,
                n % 60
            )
        } else {
            String::new()
        };
        std::fs::write(
            folder.join(format!("TASK-{n:04}-t.md")),
            format!("---\nid: TASK-{n:04}\ntitle: \"Task {n} with a title long enough to weigh something\"\nstatus: {status}\nkind: chore\npriority: P{}\nswimlane: backend\nlabels: [walk]\n{done}---\n", n % 4),
        )
        .unwrap();
    }
}

async fn import(server: &TestServer) {
    let (status, report) = server
        .post_json("/api/tools/cos_board_import", json!({"dir": "tasks"}))
        .await;
    assert_eq!(status, 200, "{report}");
}

fn ids(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|card| card["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_walks_a_trimmed_active_column_and_gets_every_card_once_in_order() {
    let server = TestServer::start_on(super::BOARD).await;
    write_task_files(&server, 3_000, "icebox");
    import(&server).await;
    let (_, whole) = server.get("/api/board/list").await;
    let icebox = column(&whole, "icebox");
    let expected = ids(icebox["cards"].as_array().unwrap());
    assert_eq!(expected.len(), 3_000);

    // the first page is the whole board; the column's next_cursor then continues it alone
    let (status, first) = server
        .post_json("/api/tools/cos_task_board?budget=agent", json!({}))
        .await;
    assert_eq!(status, 200);
    let columns = first["data"]["columns"].as_array().unwrap();
    let at = columns
        .iter()
        .position(|c| c["status"] == "icebox")
        .unwrap();
    let mut seen = ids(columns[at]["cards"].as_array().unwrap());
    let cursor = columns[at]["next_cursor"]
        .as_str()
        .expect("a cut column resumes")
        .to_string();
    let (rest, pages) = crate::common::walk_under_agent_budget(
        &server,
        "cos_task_board",
        json!({"cursor": cursor}),
        "/columns/0/cards",
        "/columns/0/next_cursor",
        "cursor",
    )
    .await;
    seen.extend(ids(&rest));
    assert!(pages > 5, "{pages} pages");
    assert_eq!(seen, expected, "every card exactly once, in board order");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_walks_the_complete_column_and_search_results_exactly() {
    let server = TestServer::start_on(super::BOARD).await;
    write_task_files(&server, 1_200, "complete");
    import(&server).await;
    // complete pages of 200, each cut to the budget, then resumed where the cut fell
    let (_, whole) = server.get("/api/board/list?page_size=200").await;
    let complete_total = column(&whole, "complete")["total"].clone();
    assert_eq!(complete_total, 1_200);
    let mut all = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut arguments = json!({"page_size": 200});
        if let Some(cursor) = &cursor {
            arguments["complete_cursor"] = json!(cursor);
        }
        let (status, page) = server
            .post_json("/api/tools/cos_task_board?budget=agent", arguments)
            .await;
        assert_eq!(status, 200);
        let column = column(&page, "complete");
        all.extend(ids(column["cards"].as_array().unwrap()));
        match column["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    let unique: std::collections::BTreeSet<&String> = all.iter().collect();
    assert_eq!(all.len(), 1_200, "every complete card once");
    assert_eq!(unique.len(), 1_200);

    // search: 1,200 matches under one label, pages of 500 cut to the budget
    let (_, whole) = server.get("/api/board/search?label=walk&limit=500").await;
    assert_eq!(whole["data"]["total_count"], 1_200);
    let (found, _) = crate::common::walk_under_agent_budget(
        &server,
        "cos_task_search",
        json!({"label": "walk", "limit": 500}),
        "/results",
        "/next_cursor",
        "cursor",
    )
    .await;
    let mut expected = Vec::new();
    for offset in (0..1_200).step_by(500) {
        let (_, page) = server
            .get(&format!(
                "/api/board/search?label=walk&limit=500&offset={offset}"
            ))
            .await;
        expected.extend(ids(page["data"]["results"].as_array().unwrap()));
    }
    assert_eq!(
        ids(&found),
        expected,
        "search results exactly once, in rank order"
    );

    // a cursor for another query is stale; a forged one is malformed
    let (_, first) = server
        .post_json(
            "/api/tools/cos_task_search?budget=agent",
            json!({"label": "walk", "limit": 500}),
        )
        .await;
    let cursor = first["data"]["next_cursor"].as_str().unwrap();
    let (status, refused) = server
        .post_json(
            "/api/tools/cos_task_search",
            json!({"label": "other", "cursor": cursor}),
        )
        .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "STALE_CURSOR");
    let (status, refused) = server
        .post_json(
            "/api/tools/cos_task_search",
            json!({"cursor": "not-a-cursor"}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(refused["error"]["code"], "E_CURSOR");
    assert_eq!(refused["error"]["details"]["field"], "cursor");
    // data that moved on makes an offset cursor stale
    create(&server, json!({"title": "a new task", "labels": ["walk"]})).await;
    let (status, refused) = server
        .post_json(
            "/api/tools/cos_task_search",
            json!({"label": "walk", "limit": 500, "cursor": cursor}),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(refused["error"]["code"], "STALE_CURSOR");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_walks_a_long_history_newest_first() {
    let server = TestServer::start_on(super::BOARD).await;
    let task = create(&server, json!({"title": "edited many times"})).await;
    let id = task["id"].as_str().unwrap().to_string();
    let path = format!("/api/board/tasks/{id}");
    for n in 1..=400 {
        let (status, body) = server
            .patch_json(&path, json!({"changes": {"title": format!("edit number {n} of a task whose history is long")}}), Some(&format!("\"{n}\"")))
            .await;
        assert_eq!(status, 200, "{body}");
    }
    let (_, whole) = server.get(&format!("{path}/history?limit=1000")).await;
    let expected = whole["data"]["history"].as_array().unwrap().clone();
    assert_eq!(expected.len(), 401);
    assert_eq!(expected[0]["version"], 401, "newest first");
    let (walked, pages) = crate::common::walk_under_agent_budget(
        &server,
        "cos_task_history",
        json!({"id": id, "limit": 1000}),
        "/history",
        "/next_cursor",
        "cursor",
    )
    .await;
    assert!(pages > 1, "the history was cut");
    assert_eq!(walked, expected, "every entry once, newest first");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idempotency_key_replays_the_first_answer_and_refuses_another_request() {
    let server = TestServer::start_on(super::BOARD).await;
    let send = |key: &str, body: Value| {
        server
            .client
            .post(server.url("/api/board/tasks"))
            .header("idempotency-key", key)
            .json(&body)
            .send()
    };
    let first = send("create-7f3a", json!({"title": "Once only"}))
        .await
        .unwrap();
    assert_eq!(first.status().as_u16(), 201);
    assert!(first.headers().get("idempotency-replayed").is_none());
    let etag = first.headers()["etag"].clone();
    let (_, created) = crate::common::decode(first).await;
    // the retry gets the same answer, and no second task
    let again = send("create-7f3a", json!({"title": "Once only"}))
        .await
        .unwrap();
    assert_eq!(again.status().as_u16(), 201);
    assert_eq!(again.headers()["idempotency-replayed"], "true");
    assert_eq!(again.headers()["etag"], etag);
    let (_, replayed) = crate::common::decode(again).await;
    assert_eq!(replayed, created);
    // the same key with another request is refused and writes nothing
    let other = send("create-7f3a", json!({"title": "Something else"}))
        .await
        .unwrap();
    let (status, answer) = crate::common::decode(other).await;
    assert_eq!(status, 409, "{answer}");
    assert_eq!(error_of(&answer)["code"], "E_REQUEST_REUSE");
    assert_eq!(error_of(&answer)["details"]["field"], "Idempotency-Key");
    // a refused request is kept too: its repeat is refused again, not run
    let bad = send("bad-title", json!({"title": ""})).await.unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    let bad_again = send("bad-title", json!({"title": ""})).await.unwrap();
    assert_eq!(bad_again.headers()["idempotency-replayed"], "true");
    // keys are 1 to 255 visible ASCII characters
    let (status, answer) =
        crate::common::decode(send("with space", json!({"title": "x"})).await.unwrap()).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(error_of(&answer)["details"]["field"], "Idempotency-Key");
    // one task was made by all of that
    let (_, board) = server.get("/api/board/list").await;
    let stored: u64 = board["data"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|column| column["total"].as_u64().unwrap())
        .sum();
    assert_eq!(stored, 1);
    // a move with a key, replayed, moves once
    let id = created["data"]["id"].as_str().unwrap().to_string();
    for _ in 0..2 {
        let moved = server
            .client
            .post(server.url(&format!("/api/board/tasks/{id}/move")))
            .header("idempotency-key", "move-1")
            .json(&json!({"from": "icebox", "to": "in_progress"}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            moved.status().as_u16(),
            200,
            "a replay, not a stale-state refusal"
        );
    }
    let (_, history) = server.get(&format!("/api/board/tasks/{id}/history")).await;
    let moves = history["data"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["field"] == "status")
        .count();
    assert_eq!(moves, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claim_holds_its_task_under_a_lease_until_moved_renewed_or_expired() {
    let server = TestServer::start_on(super::BOARD).await;
    let id = create(&server, json!({"title": "leased"})).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let agent = |name: &str| json!({"kind": "agent", "id": name});
    let claim = |name: &str, seconds: u64| {
        server.post_json(
            "/api/board/claim-next",
            json!({"actor": agent(name), "lease_seconds": seconds}),
        )
    };

    let (status, answer) = claim("first", 4).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(error_of(&answer)["details"]["field"], "lease_seconds");
    let (status, answer) = claim("first", 5).await;
    assert_eq!(status, 200, "{answer}");
    let lease = &answer["data"]["task"]["lease"];
    assert_eq!(lease["holder"], "agent:first");
    let claimed_until = lease["expires_at"].as_str().unwrap().to_string();

    // no one else may move it, or renew it
    let (status, refused) = server
        .post_json(
            &format!("/api/board/tasks/{id}/move"),
            json!({"from": "in_progress", "to": "testing", "actor": agent("second")}),
        )
        .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(error_of(&refused)["code"], "E_LEASE");
    assert_eq!(
        error_of(&refused)["details"]["lease"]["holder"],
        "agent:first"
    );
    let lease_path = format!("/api/board/tasks/{id}/lease");
    let renew = |name: &str, seconds: u64| {
        server.post_json(
            &lease_path,
            json!({"actor": agent(name), "lease_seconds": seconds}),
        )
    };
    let (status, refused) = renew("second", 60).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(error_of(&refused)["code"], "E_LEASE");
    // its holder renews it: later, and shown on the board's card
    let (status, renewed) = renew("first", 5).await;
    assert_eq!(status, 200, "{renewed}");
    let renewed_until = renewed["data"]["lease"]["expires_at"].as_str().unwrap();
    assert!(renewed_until >= claimed_until.as_str(), "{renewed_until}");
    let (_, board) = server.get("/api/board/list").await;
    let card = board["data"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|column| column["cards"].as_array().unwrap().iter())
        .find(|card| card["id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(card["lease"]["holder"], "agent:first");

    // once it runs out, the task goes back to icebox and the next claim gets
    // it before a lesser task that was ready all along
    let lesser = create(&server, json!({"title": "lesser", "priority": "P3"})).await;
    assert_eq!(lesser["priority"], "P3", "{lesser}");
    tokio::time::sleep(std::time::Duration::from_millis(5_300)).await;
    let (status, answer) = claim("second", 60).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["data"]["task"]["id"], id.as_str());
    assert_eq!(answer["data"]["task"]["lease"]["holder"], "agent:second");
    let (_, history) = server.get(&format!("/api/board/tasks/{id}/history")).await;
    let expired = history["data"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .any(|entry| {
            entry["actor"] == "system:lease-expiry"
                && entry["field"] == "status"
                && entry["new"] == "icebox"
        });
    assert!(expired, "the expiry is in the history: {history}");
    let (status, refused) = renew("first", 60).await;
    assert_eq!(status, 409, "{refused}");

    // moving it ends the lease
    let (status, moved) = server
        .post_json(
            &format!("/api/board/tasks/{id}/move"),
            json!({"from": "in_progress", "to": "testing", "actor": agent("second")}),
        )
        .await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved["data"]["lease"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_nul_in_a_description_becomes_the_replacement_character_as_in_commonmark() {
    let server = TestServer::start_on(super::BOARD).await;
    let created = create(&server, json!({"title": "NUL", "description": "a\u{0}b"})).await;
    assert_eq!(created["description"], "a\u{FFFD}b");
    let id = created["id"].as_str().unwrap();
    let (status, edited) = server
        .patch_json(
            &format!("/api/board/tasks/{id}"),
            json!({"changes": {"description": "\u{0}"}}),
            Some("\"1\""),
        )
        .await;
    assert_eq!(status, 200, "{edited}");
    assert_eq!(edited["data"]["description"], "\u{FFFD}");
}

#[tokio::test(flavor = "multi_thread")]
async fn filters_holding_a_nul_find_nothing_rather_than_fail() {
    let server = TestServer::start_on(super::BOARD).await;
    create(&server, json!({"title": "plain", "labels": ["x"]})).await;
    for query in [
        "label=x%00",
        "epic=%2F&label=%C3%85%0A%00",
        "text=%00",
        "swimlane=%00",
    ] {
        let (status, answer) = server.get(&format!("/api/board/search?{query}")).await;
        assert_eq!(status, 200, "{query}: {answer}");
        assert_eq!(answer["data"]["total_count"], 0, "{query}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_write_answers_its_request_id_and_its_receipt_says_whether_it_committed() {
    let server = TestServer::start_on(super::BOARD).await;
    let post = |headers: &[(&str, &str)], body: Value| {
        let mut request = server
            .client
            .post(server.url("/api/board/tasks"))
            .json(&body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let server = &server;
    let receipt = |id: String| async move {
        let (status, answer) = server.get(&format!("/api/receipts/{id}")).await;
        assert_eq!(status, 200, "{answer}");
        answer["data"].clone()
    };

    // a named write answers its name, and its receipt says it committed
    let named = post(&[("x-request-id", "plan-42")], json!({"title": "Named"}))
        .await
        .unwrap();
    assert_eq!(named.status().as_u16(), 201);
    assert_eq!(named.headers()["x-request-id"], "plan-42");
    let committed = receipt("plan-42".into()).await;
    assert_eq!(committed["state"], "committed", "{committed}");
    assert_eq!(committed["tool"], "cos_task_create");
    assert!(committed["committed_at"].as_str().unwrap().ends_with('Z'));

    // an unnamed one gets a name of its own
    let unnamed = post(&[], json!({"title": "Unnamed"})).await.unwrap();
    let id = unnamed.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(!id.is_empty());
    assert_eq!(receipt(id).await["state"], "committed");

    // a refused write committed nothing, and says so
    let refused = post(&[("x-request-id", "empty-title")], json!({"title": ""}))
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 400);
    assert_eq!(refused.headers()["x-request-id"], "empty-title");
    let nothing = receipt("empty-title".into()).await;
    assert_eq!(nothing["state"], "not_committed", "{nothing}");
    assert_eq!(nothing["tool"], Value::Null);

    // an Idempotency-Key names the write; another name beside it is refused
    let keyed = post(&[("idempotency-key", "key-9")], json!({"title": "Keyed"}))
        .await
        .unwrap();
    assert_eq!(keyed.headers()["x-request-id"], "key-9");
    assert_eq!(receipt("key-9".into()).await["state"], "committed");
    for headers in [
        &[("idempotency-key", "key-10"), ("x-request-id", "other")][..],
        &[("x-request-id", "with space")][..],
    ] {
        let (status, answer) =
            crate::common::decode(post(headers, json!({"title": "Refused"})).await.unwrap()).await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(error_of(&answer)["code"], "E_REQUEST_ID");
        assert_eq!(error_of(&answer)["details"]["field"], "X-Request-Id");
        if headers.len() == 2 {
            assert_eq!(error_of(&answer)["details"]["with"], "Idempotency-Key");
        }
    }
    let (status, answer) = server
        .get(&format!("/api/receipts/{}", "x".repeat(300)))
        .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(error_of(&answer)["code"], "E_REQUEST_ID");

    // reads carry no request ID
    let read = server
        .client
        .get(server.url("/api/board/list"))
        .send()
        .await
        .unwrap();
    assert!(read.headers().get("x-request-id").is_none());
}
