//! `cos database copy`: a hub's board moves to a team database and back
//! with ids, positions, versions, history, revision and its `board.toml`
//! intact, and never into a database that holds something already.

use crate::common::{Board, TestServer, column, postgres::fresh_database};
use serde_json::{Value, json};

fn cos(repo: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_cos"))
        .args(args)
        .arg("--repo")
        .arg(repo)
        .env_remove("COS_STATE_DIR")
        .env_remove("COS_DATABASE_URL")
        .output()
        .expect("cos runs")
}

/// Everything a copy must keep: every task as shown, each one's history, the revision.
async fn snapshot(server: &TestServer) -> Value {
    let (_, board) = server.get("/api/board/list").await;
    let mut tasks = Vec::new();
    for column in board["data"]["columns"].as_array().unwrap() {
        for card in column["cards"].as_array().unwrap() {
            let id = card["id"].as_str().unwrap();
            let (_, task) = server.get(&format!("/api/board/tasks/{id}")).await;
            let (_, history) = server.get(&format!("/api/board/tasks/{id}/history")).await;
            tasks.push(json!({"task": task["data"], "history": history["data"]["history"]}));
        }
    }
    tasks.sort_by_key(|entry| entry["task"]["id"].as_str().unwrap().to_string());
    assert!(board["data"]["revision"].as_i64().unwrap() > 0);
    json!({"tasks": tasks, "revision": board["data"]["revision"]})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_board_moves_to_a_team_database_and_back_intact() {
    let local = TestServer::start_on(Board::Local).await;
    for (title, depends_on) in [("first", json!([])), ("second", json!(["TASK-1"]))] {
        let (status, answer) = local
            .post_json(
                "/api/board/tasks",
                json!({"title": title, "depends_on": depends_on}),
            )
            .await;
        assert_eq!(status, 201, "{answer}");
    }
    let (status, _) = local
        .post_json(
            "/api/board/claim-next",
            json!({"actor": {"kind": "agent", "id": "mover"}}),
        )
        .await;
    assert_eq!(status, 200);
    let before = snapshot(&local).await;
    let settings = "swimlanes = [\"backend\", \"core\"]\n\n[wip]\ntesting = 1\n";
    std::fs::write(local.state_dir().join("board.toml"), settings).unwrap();

    let url = fresh_database();
    let output = cos(local.repo(), &["database", "copy", "--to", &url]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let again = cos(local.repo(), &["database", "copy", "--to", &url]);
    assert!(
        !again.status.success(),
        "a second copy into the same database is refused"
    );
    assert!(String::from_utf8_lossy(&again.stderr).contains("empty database"));

    let team = TestServer::on_team_database(&url).await;
    assert_eq!(
        snapshot(&team).await,
        before,
        "the team database holds the board as it was"
    );
    // the board's settings came along, and the team's hubs obey them
    let (_, board) = team.get("/api/board/list").await;
    let testing = column(&board, "testing");
    assert_eq!(testing["wip"]["limit"], 1, "{testing}");
    let elsewhere = tempfile::tempdir().unwrap();
    let shown = cos(
        elsewhere.path(),
        &["board", "config", "--database", url.as_str()],
    );
    assert_eq!(String::from_utf8_lossy(&shown.stdout), settings);
    // numbers go on from the highest copied
    let (_, third) = team
        .post_json("/api/board/tasks", json!({"title": "third"}))
        .await;
    assert_eq!(third["data"]["id"], "TASK-003");

    let back = tempfile::tempdir().unwrap();
    let output = cos(back.path(), &["database", "copy", "--from", &url]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(back.path().join(".cos/board.toml")).unwrap(),
        settings,
        "the settings came back to the state folder"
    );
    let listed = cos(back.path(), &["task", "list"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains("TASK-003") && listed.contains("TASK-001  in_progress"),
        "{listed}"
    );
}
