//! Two hubs on two checkouts sharing one board in a team database: each sees
//! the other's writes, compare-and-set races have one winner, claims hand a
//! task out once and one actor's claims at once keep to its WIP limit, a
//! cursor or an idempotency key from one hub works on the other, and one
//! hub's change stream announces the other's writes.

use crate::common::{Board, ChangeStream, TestServer, column, error_of};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;

async fn create(server: &TestServer, title: &str) -> String {
    let (status, answer) = server
        .post_json("/api/board/tasks", json!({"title": title}))
        .await;
    assert_eq!(status, 201, "{answer}");
    answer["data"]["id"].as_str().unwrap().to_string()
}

async fn two_hubs() -> (TestServer, TestServer) {
    let first = TestServer::start_on(Board::Team).await;
    let second = first.beside().await;
    assert_ne!(first.repo(), second.repo(), "two checkouts");
    (first, second)
}

#[tokio::test(flavor = "multi_thread")]
async fn each_hub_sees_the_others_writes_and_search_follows_them() {
    let (alice, build_box) = two_hubs().await;
    let id = create(&alice, "Rotate the signing keys").await;
    let (status, shown) = build_box.get(&format!("/api/board/tasks/{id}")).await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["data"]["title"], "Rotate the signing keys");

    let (status, moved) = build_box
        .post_json(
            &format!("/api/board/tasks/{id}/move"),
            json!({"from": "icebox", "to": "in_progress", "actor": {"kind": "agent", "id": "ci"}}),
        )
        .await;
    assert_eq!(status, 200, "{moved}");
    let (_, seen) = alice.get(&format!("/api/board/tasks/{id}")).await;
    assert_eq!(seen["data"]["status"], "in_progress");
    assert_eq!(seen["data"]["assignee"], "agent:ci");

    // the other hub's search index takes in a task written on the first
    let (status, found) = build_box
        .get("/api/search?q=signing%20keys%20area:tasks")
        .await;
    assert_eq!(status, 200, "{found}");
    let targets: Vec<&str> = found["data"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|hit| hit["opens"]["task_id"].as_str())
        .collect();
    assert!(targets.contains(&id.as_str()), "{found}");

    // the local areas stay each hub's own
    assert_ne!(alice.state_dir(), build_box.state_dir());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_compare_and_set_race_across_hubs_has_exactly_one_winner() {
    let (first, second) = two_hubs().await;
    let id = create(&first, "Contended").await;
    let path = format!("/api/board/tasks/{id}");
    let servers = [Arc::new(first), Arc::new(second)];
    let mut racers = Vec::new();
    for n in 0..12 {
        let server = servers[n % 2].clone();
        let path = path.clone();
        racers.push(tokio::spawn(async move {
            server
                .patch_json(
                    &path,
                    json!({"changes": {"description": format!("writer {n}")}}),
                    Some("\"1\""),
                )
                .await
        }));
    }
    let mut winners = Vec::new();
    for racer in racers {
        let (status, answer) = racer.await.unwrap();
        match status {
            200 => winners.push(answer["data"]["description"].clone()),
            412 => assert_eq!(error_of(&answer)["code"], "STALE_VERSION"),
            other => panic!("{other}: {answer}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one writer of version 1 wins");
    let (_, now) = servers[1].get(&path).await;
    assert_eq!(now["data"]["version"], 2);
    assert_eq!(now["data"]["description"], winners[0]);
}

#[tokio::test(flavor = "multi_thread")]
async fn claims_from_two_hubs_hand_each_task_out_once() {
    let (first, second) = two_hubs().await;
    for n in 0..24 {
        create(&first, &format!("job {n}")).await;
    }
    let servers = [Arc::new(first), Arc::new(second)];
    let mut claimers = Vec::new();
    for claimer in 0..16 {
        let server = servers[claimer % 2].clone();
        claimers.push(tokio::spawn(async move {
            let actor = json!({"kind": "agent", "id": format!("claimer-{claimer}")});
            let mut claimed = Vec::new();
            // WIP is one task per actor: each finishes what it holds before the next claim
            for _ in 0..3 {
                let (status, answer) = server
                    .post_json("/api/board/claim-next", json!({"actor": actor}))
                    .await;
                assert!(status == 200 || status == 503, "{status}: {answer}");
                let Some(id) = answer["data"]["task"]["id"].as_str().map(String::from) else {
                    continue;
                };
                let (status, answer) = server
                    .post_json(
                        &format!("/api/board/tasks/{id}/move"),
                        json!({"from": "in_progress", "to": "blocked", "actor": actor}),
                    )
                    .await;
                assert_eq!(status, 200, "{answer}");
                claimed.push(id);
            }
            claimed
        }));
    }
    let mut all = Vec::new();
    for claimer in claimers {
        all.extend(claimer.await.unwrap());
    }
    let unique: HashSet<&String> = all.iter().collect();
    assert_eq!(
        unique.len(),
        all.len(),
        "a task was handed out twice: {all:?}"
    );
    assert_eq!(all.len(), 24, "every ready task was claimed: {all:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_actors_claims_from_both_hubs_at_once_stay_within_its_wip_limit() {
    let (first, second) = two_hubs().await;
    for n in 0..8 {
        create(&first, &format!("job {n}")).await;
    }
    let servers = [Arc::new(first), Arc::new(second)];
    let mut claims = Vec::new();
    for claim in 0..8 {
        let server = servers[claim % 2].clone();
        claims.push(tokio::spawn(async move {
            // the board's default: one task in progress per actor
            server
                .post_json(
                    "/api/board/claim-next",
                    json!({"actor": {"kind": "agent", "id": "eager"}}),
                )
                .await
        }));
    }
    let mut claimed = 0;
    for claim in claims {
        let (status, answer) = claim.await.unwrap();
        if status == 200 {
            assert!(answer["data"]["task"]["id"].is_string(), "{answer}");
            claimed += 1;
        } else {
            assert_eq!(status, 409, "{answer}");
            assert_eq!(error_of(&answer)["code"], "E_WIP_LIMIT", "{answer}");
        }
    }
    assert_eq!(claimed, 1, "one claim within a WIP limit of one");
    let (_, board) = servers[1].get("/api/board/list").await;
    let in_progress = column(&board, "in_progress");
    let cards = in_progress["cards"].as_array().map(Vec::len);
    assert_eq!(cards, Some(1), "{in_progress}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cursor_and_an_idempotency_key_from_one_hub_work_on_the_other() {
    let (first, second) = two_hubs().await;
    for n in 0..5 {
        create(&first, &format!("page {n}")).await;
    }
    let (status, page) = first.get("/api/board/search?status=icebox&limit=2").await;
    assert_eq!(status, 200, "{page}");
    let cursor = page["data"]["next_cursor"]
        .as_str()
        .expect("a next cursor")
        .to_string();
    let (status, rest) = second
        .get(&format!(
            "/api/board/search?status=icebox&limit=10&cursor={cursor}"
        ))
        .await;
    assert_eq!(status, 200, "the cursor pages on the other hub: {rest}");
    let ids = |page: &Value| -> Vec<String> {
        page["data"]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|task| task["id"].as_str().unwrap().to_string())
            .collect()
    };
    let mut seen = ids(&page);
    seen.extend(ids(&rest));
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!((seen.len(), unique.len()), (5, 5), "{seen:?}");

    let send = |server: &TestServer| {
        server
            .client
            .post(server.url("/api/board/tasks"))
            .header("idempotency-key", "team-create-1")
            .json(&json!({"title": "Created once"}))
            .send()
    };
    let (status, created) = crate::common::decode(send(&first).await.unwrap()).await;
    assert_eq!(status, 201, "{created}");
    let again = send(&second).await.unwrap();
    assert_eq!(again.headers()["idempotency-replayed"], "true");
    let (status, replayed) = crate::common::decode(again).await;
    assert_eq!((status, &replayed), (201, &created));
    let (_, found) = second.get("/api/board/search?text=Created%20once").await;
    assert_eq!(found["data"]["results"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn one_hubs_change_stream_announces_the_others_writes() {
    let (first, second) = two_hubs().await;
    let mut stream = ChangeStream::open(&second).await;
    let before = stream.next("board").await;
    create(&first, "Announced elsewhere").await;
    let mut latest = before;
    while latest == before {
        latest = stream.next("board").await;
    }
    assert!(latest > before, "{before} → {latest}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lease_left_to_expire_on_one_hub_is_reclaimed_on_the_other() {
    let (first, second) = two_hubs().await;
    let id = create(&first, "Abandoned").await;
    async fn claim(server: &TestServer, name: &str) -> (u16, Value) {
        server
            .post_json(
                "/api/board/claim-next",
                json!({"actor": {"kind": "agent", "id": name}, "lease_seconds": 5}),
            )
            .await
    }
    let (status, taken) = claim(&first, "vanishes").await;
    assert_eq!(status, 200, "{taken}");
    assert_eq!(taken["data"]["task"]["id"], id.as_str());
    // under a live lease: the other hub hands it to no one
    let (_, nothing) = claim(&second, "waits").await;
    assert_eq!(nothing["data"]["task"], Value::Null, "{nothing}");
    tokio::time::sleep(std::time::Duration::from_millis(5_300)).await;
    let (status, reclaimed) = claim(&second, "waits").await;
    assert_eq!(status, 200, "{reclaimed}");
    assert_eq!(reclaimed["data"]["task"]["id"], id.as_str());
    assert_eq!(reclaimed["data"]["task"]["lease"]["holder"], "agent:waits");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_hub_obeys_the_teams_board_settings_not_its_own_file() {
    let (alice, build_box) = two_hubs().await;
    // alice's own file would allow five at once; the team's allows two
    std::fs::write(
        alice.state_dir().join("board.toml"),
        "[wip]\nin_progress_per_actor = 5\n",
    )
    .unwrap();
    build_box.set_board_config("[wip]\nin_progress_per_actor = 2\n");
    let url = build_box.database.clone().unwrap();

    for n in 0..3 {
        create(&build_box, &format!("job {n}")).await;
    }
    let claim = || {
        alice.post_json(
            "/api/board/claim-next",
            json!({"actor": {"kind": "agent", "id": "busy"}}),
        )
    };
    for _ in 0..2 {
        let (status, claimed) = claim().await;
        assert_eq!(status, 200, "{claimed}");
        assert!(claimed["data"]["task"].is_object(), "{claimed}");
    }
    let (status, refused) = claim().await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(error_of(&refused)["code"], "E_WIP_LIMIT");

    // a malformed file is refused before it reaches any hub
    let settings = build_box.repo().join("malformed.toml");
    std::fs::write(&settings, "[wip]\nin_progress_per_actor = \"many\"\n").unwrap();
    let bad = build_box.cos_board_config_set(&settings, &url);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("malformed.toml"));
    let (_, board) = alice.get("/api/board/list").await;
    let in_progress = column(&board, "in_progress");
    assert_eq!(in_progress["wip"]["limit"], 2, "{in_progress}");
}
