//! People known by their tokens, on two hubs sharing a team database: once a
//! user exists every request needs a user's token on either hub, a read
//! token writes nothing, history records the user beside the acting agent,
//! and a removed user's token stops working.

use crate::common::{Board, TestServer, decode, error_of};
use crate::mcp::{call, envelope};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

fn cos(server: &TestServer, args: &[&str], token: Option<&str>) -> std::process::Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cos"));
    command
        .args(args)
        .arg("--repo")
        .arg(server.repo())
        .args(server.database_args())
        .env_remove("COS_STATE_DIR")
        .env_remove("COS_USER_TOKEN");
    if let Some(token) = token {
        command.env("COS_USER_TOKEN", token);
    }
    command.output().expect("cos runs")
}

fn add_user(server: &TestServer, name: &str, role: &str) -> String {
    let output = cos(server, &["user", "add", name, "--role", role], None);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

async fn send(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = server.client.request(method, server.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    decode(request.send().await.unwrap()).await
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_name_users_on_every_hub_and_roles_bound_what_they_do() {
    let first = TestServer::start_on(Board::Team).await;
    let second = first.beside().await;
    let (status, _) = send(&first, reqwest::Method::GET, "/api/board/list", None, None).await;
    assert_eq!(status, 200, "no users yet: open as before");

    let alice = add_user(&first, "alice", "write");
    let reader = add_user(&first, "reader", "read");
    assert!(alice.starts_with("cos_") && alice != reader);
    let listed = cos(&first, &["user", "list"], None);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains("alice") && listed.contains("reader"),
        "{listed}"
    );
    assert!(
        !listed.contains(&alice[4..]),
        "tokens are never shown again"
    );

    // wait out the door's memory of "no users"
    tokio::time::sleep(std::time::Duration::from_millis(5_200)).await;
    for server in [&first, &second] {
        let (status, refused) =
            send(server, reqwest::Method::GET, "/api/board/list", None, None).await;
        assert_eq!(status, 401, "{refused}");
        assert_eq!(error_of(&refused)["code"], "E_TOKEN");
        let (status, refused) = send(
            server,
            reqwest::Method::GET,
            "/api/board/list",
            Some("cos_not-a-token"),
            None,
        )
        .await;
        assert_eq!(status, 401, "{refused}");
    }

    // alice writes on one hub through an agent; history names both
    let (status, created) = send(
        &first,
        reqwest::Method::POST,
        "/api/board/tasks",
        Some(&alice),
        Some(json!({"title": "Written as alice", "actor": {"kind": "agent", "id": "claude-7"}})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["data"]["id"].as_str().unwrap().to_string();
    let (status, history) = send(
        &second,
        reqwest::Method::GET,
        &format!("/api/board/tasks/{id}/history"),
        Some(&reader),
        None,
    )
    .await;
    assert_eq!(status, 200, "{history}");
    let entry = &history["data"]["history"][0];
    assert_eq!(entry["actor"], "agent:claude-7");
    assert_eq!(entry["user"], "alice");

    // a read token reads, and writes nothing, on the other hub too
    let (status, refused) = send(
        &second,
        reqwest::Method::POST,
        "/api/board/tasks",
        Some(&reader),
        Some(json!({"title": "Not allowed"})),
    )
    .await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(error_of(&refused)["category"], "permission");
    assert_eq!(error_of(&refused)["details"]["user"], "reader");
    // only an admin switches modules
    let (status, refused) = send(
        &first,
        reqwest::Method::PUT,
        "/api/settings/modules/board",
        Some(&alice),
        Some(json!({"enabled": false})),
    )
    .await;
    assert_eq!(status, 403, "{refused}");

    // MCP over HTTP takes the same tokens and roles
    let anonymous = StreamableHttpClientTransport::from_uri(second.url("/mcp"));
    assert!(().serve(anonymous).await.is_err(), "no token, no session");
    let connect = |token: &str| {
        let config =
            StreamableHttpClientTransportConfig::with_uri(second.url("/mcp")).auth_header(token);
        ().serve(StreamableHttpClientTransport::from_config(config))
    };
    let reading = connect(&reader)
        .await
        .expect("a read token opens a session");
    let refused = envelope(&call(&reading, "cos_task_create", json!({"title": "over MCP"})).await);
    assert_eq!(refused["error"]["code"], "E_READ_ONLY", "{refused}");
    reading.cancel().await.unwrap();
    let writing = connect(&alice)
        .await
        .expect("alice's token opens a session");
    let created = envelope(
        &call(
            &writing,
            "cos_task_create",
            json!({"title": "over MCP", "actor": {"kind": "agent", "id": "mcp-agent"}}),
        )
        .await,
    );
    let id = created["data"]["id"].as_str().unwrap().to_string();
    writing.cancel().await.unwrap();
    let (_, history) = send(
        &first,
        reqwest::Method::GET,
        &format!("/api/board/tasks/{id}/history"),
        Some(&alice),
        None,
    )
    .await;
    assert_eq!(history["data"]["history"][0]["user"], "alice", "{history}");
    assert_eq!(history["data"]["history"][0]["actor"], "agent:mcp-agent");

    // the shell acts as the user its token names
    let output = cos(&second, &["task", "add", "From the shell"], Some(&alice));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = cos(&second, &["task", "add", "Refused"], Some(&reader));
    assert!(!output.status.success());
    let output = cos(&second, &["task", "list"], Some("cos_unknown"));
    assert_eq!(
        output.status.code(),
        Some(2),
        "an unknown configured token stops the shell"
    );

    // a removed user's token stops working
    let output = cos(&first, &["user", "remove", "reader"], None);
    assert!(output.status.success());
    tokio::time::sleep(std::time::Duration::from_millis(5_200)).await;
    let (status, _) = send(
        &second,
        reqwest::Method::GET,
        "/api/board/list",
        Some(&reader),
        None,
    )
    .await;
    assert_eq!(status, 401);
}
