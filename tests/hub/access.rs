//! Network safety: Host and Origin checks, the bearer token, refusing an open
//! bind without a token, and slow clients. Traffic stays on loopback.

use crate::common::{TestServer, error_of};
use cos_hub::web::ServeOptions;
use cos_hub::web::access::Access;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn foreign_hosts_are_refused_before_any_tool_runs() {
    let server = TestServer::start().await;
    for path in ["/api/health", "/mcp", "/api/board/list"] {
        let response = server
            .client
            .get(server.url(path))
            .header("host", "evil.example:9188")
            .send()
            .await
            .unwrap();
        let (status, body) = crate::common::decode(response).await;
        assert_eq!(status, 421, "{path}: {body}");
        assert_eq!(error_of(&body)["code"], "E_HOST");
    }
    // a write refused by Host leaves nothing behind
    let response = server
        .client
        .post(server.url("/api/board/tasks"))
        .header("host", "rebound.example")
        .json(&serde_json::json!({"title": "should not exist"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 421);
    let (_, board) = server.get("/api/board/list").await;
    assert_eq!(board["data"]["total_count"], 0);
    // loopback names pass
    for host in ["localhost", "127.0.0.1:9188", "[::1]:9188"] {
        let response = server
            .client
            .get(server.url("/api/health"))
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{host}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_hosts_and_origins_are_accepted() {
    let options = ServeOptions {
        access: Access {
            allowed_hosts: vec!["hub.internal".into()],
            allowed_origins: vec!["https://ui.internal".into()],
            token: None,
        },
        ..ServeOptions::default()
    };
    let server = TestServer::with_options(cos_hub::hub::default_registry(), options).await;
    let response = server
        .client
        .get(server.url("/api/health"))
        .header("host", "hub.internal:9188")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let response = server
        .client
        .get(server.url("/api/health"))
        .header("origin", "https://ui.internal")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn cross_site_origins_are_refused_and_the_own_origin_passes() {
    let server = TestServer::start().await;
    let response = server
        .client
        .put(server.url("/api/settings/modules/board"))
        .header("origin", "https://evil.example")
        .json(&serde_json::json!({"enabled": false}))
        .send()
        .await
        .unwrap();
    let (status, body) = crate::common::decode(response).await;
    assert_eq!(status, 403);
    assert_eq!(error_of(&body)["code"], "E_ORIGIN");
    let (_, modules) = server.get("/api/settings/modules").await;
    let board = modules["data"]["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "board")
        .unwrap()
        .clone();
    assert_eq!(
        board["enabled"], true,
        "the refused request changed nothing"
    );

    let own = format!("http://{}", server.address);
    let response = server
        .client
        .get(server.url("/api/health"))
        .header("origin", own)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_is_required_when_set() {
    let token = "correct-horse-battery-staple-42";
    let options = ServeOptions {
        access: Access {
            token: Some(token.into()),
            ..Access::default()
        },
        ..ServeOptions::default()
    };
    let server = TestServer::with_options(cos_hub::hub::default_registry(), options).await;

    let response = server
        .client
        .get(server.url("/api/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    let (status, body) = crate::common::decode(response).await;
    assert_eq!(status, 401);
    let error = error_of(&body);
    assert_eq!(error["category"], "unauthorized");
    assert!(!body.to_string().contains(token));

    let response = server
        .client
        .get(server.url("/api/health"))
        .bearer_auth("correct-horse-battery-staple-43")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401, "a wrong token");
    let response = server
        .client
        .post(server.url("/mcp"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401, "MCP is guarded too");

    let response = server
        .client
        .get(server.url("/api/health"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "the right token");
    let response = server
        .client
        .get(server.url("/docs/"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status().as_u16(),
        200,
        "the docs page itself carries no data"
    );
}

#[test]
fn an_open_bind_without_a_token_refuses_to_start() {
    let repo = tempfile::tempdir().unwrap();
    let run = |extra_env: Option<(&str, &str)>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cos"));
        command
            .args(["serve", "--bind", "0.0.0.0", "--port", "0"])
            .current_dir(repo.path())
            .env_remove("COS_HUB_TOKEN");
        if let Some((key, value)) = extra_env {
            command.env(key, value);
        }
        command.output().unwrap()
    };
    let output = run(None);
    assert_eq!(output.status.code(), Some(2));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains("refusing to listen on 0.0.0.0") && message.contains("COS_HUB_TOKEN"),
        "{message}"
    );
    let output = run(Some(("COS_HUB_TOKEN", "short")));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("at least 16"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_client_is_dropped_and_others_are_served_meanwhile() {
    let server = with_header_timeout(Duration::from_millis(400)).await;
    let address = server.address;
    let slow = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        stream
            .write_all(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let started = Instant::now();
        let mut buffer = [0u8; 512];
        let read = stream.read(&mut buffer).unwrap_or(0);
        (
            started.elapsed(),
            String::from_utf8_lossy(&buffer[..read]).to_string(),
        )
    });
    // while the slow client dawdles, the hub keeps answering
    let (status, _) = server.get("/api/health").await;
    assert_eq!(status, 200);
    let (elapsed, answer) = slow.await.unwrap();
    assert!(
        elapsed < Duration::from_secs(4),
        "the slow client was cut off after {elapsed:?}"
    );
    assert!(
        !answer.contains("200 OK"),
        "the unfinished request was not served: {answer}"
    );
}

async fn with_header_timeout(timeout: Duration) -> TestServer {
    let options = ServeOptions {
        header_read_timeout: timeout,
        ..ServeOptions::default()
    };
    TestServer::with_options(cos_hub::hub::default_registry(), options).await
}

/// A keep-alive connection that has been answered one request.
fn served_and_kept_open(address: std::net::SocketAddr) -> std::net::TcpStream {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .write_all(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buffer = [0u8; 4096];
    let read = stream.read(&mut buffer).unwrap();
    assert!(String::from_utf8_lossy(&buffer[..read]).contains("200 OK"));
    stream
}

/// Opens `count` connections that send nothing at all.
fn silent_sockets(address: std::net::SocketAddr, count: usize) -> Vec<std::net::TcpStream> {
    (0..count)
        .map(|_| std::net::TcpStream::connect(address).unwrap())
        .collect()
}

/// True once the server closed `stream`: a read reaches end of file (after
/// whatever the server said first, such as a 503) or fails.
fn closed_by_server(stream: &mut std::net::TcpStream) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut buffer = [0u8; 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(error) => {
                return !matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_that_send_nothing_are_closed_after_the_header_timeout() {
    let server = with_header_timeout(Duration::from_millis(400)).await;
    let address = server.address;
    let mut sockets = tokio::task::spawn_blocking(move || silent_sockets(address, 50))
        .await
        .unwrap();
    // the hub answers meanwhile
    let (status, _) = server.get("/api/health").await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let closed = tokio::task::spawn_blocking(move || {
        sockets
            .iter_mut()
            .map(closed_by_server)
            .filter(|&closed| closed)
            .count()
    })
    .await
    .unwrap();
    assert_eq!(closed, 50, "every silent socket was closed");
}

#[tokio::test(flavor = "multi_thread")]
async fn at_the_connection_ceiling_silent_sockets_make_room_and_health_answers() {
    let options = ServeOptions {
        max_connections: 16,
        ..ServeOptions::default()
    };
    let server = TestServer::with_options(cos_hub::hub::default_registry(), options).await;
    let address = server.address;
    // four times the ceiling, all silent: each newcomer evicts the oldest
    let mut sockets = tokio::task::spawn_blocking(move || silent_sockets(address, 64))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    for _ in 0..3 {
        let (status, body) = server.get("/api/health").await;
        assert_eq!(status, 200, "{body}");
    }
    let closed = tokio::task::spawn_blocking(move || {
        sockets
            .iter_mut()
            .map(closed_by_server)
            .filter(|&closed| closed)
            .count()
    })
    .await
    .unwrap();
    assert!(
        closed >= 64 - 16,
        "only the ceiling's worth stay open: {closed} closed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_every_place_busy_a_newcomer_gets_a_503_envelope() {
    let options = ServeOptions {
        max_connections: 2,
        ..ServeOptions::default()
    };
    let server = TestServer::with_options(cos_hub::hub::default_registry(), options).await;
    let address = server.address;
    let refused = tokio::task::spawn_blocking(move || {
        // two connections that have spoken hold every place (keep-alive)
        let mut busy: Vec<std::net::TcpStream> =
            (0..2).map(|_| served_and_kept_open(address)).collect();
        let mut newcomer = std::net::TcpStream::connect(address).unwrap();
        newcomer
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut answer = String::new();
        let _ = newcomer.read_to_string(&mut answer);
        busy.clear();
        answer
    })
    .await
    .unwrap();
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("retry-after: 1"), "{refused}");
    let body = refused.split("\r\n\r\n").nth(1).unwrap();
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["error"]["code"], "E_BUSY");
    assert_eq!(body["error"]["retryable"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_keep_alive_connection_is_closed_after_the_header_timeout() {
    let server = with_header_timeout(Duration::from_millis(400)).await;
    let address = server.address;
    let closed = tokio::task::spawn_blocking(move || {
        let mut stream = served_and_kept_open(address);
        std::thread::sleep(Duration::from_millis(1200));
        closed_by_server(&mut stream)
    })
    .await
    .unwrap();
    assert!(closed, "an idle keep-alive connection stays open");
}

/// Sends `request` as raw bytes and returns the status line and the body.
fn raw_exchange(address: std::net::SocketAddr, request: &str) -> (String, serde_json::Value) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer.lines().next().unwrap_or("").to_string();
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
    (
        status,
        serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn two_host_headers_and_a_foreign_absolute_target_are_refused() {
    let server = TestServer::start().await;
    let address = server.address;
    let (duplicate, absolute, own_absolute) = tokio::task::spawn_blocking(move || {
        (
            raw_exchange(
                address,
                "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
            ),
            raw_exchange(
                address,
                "GET http://evil.example/api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
            ),
            raw_exchange(
                address,
                "GET http://127.0.0.1/api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
            ),
        )
    })
    .await
    .unwrap();
    assert!(duplicate.0.contains(" 400 "), "{duplicate:?}");
    assert_eq!(duplicate.1["error"]["code"], "E_HOST");
    assert_eq!(duplicate.1["error"]["category"], "validation");
    assert!(absolute.0.contains(" 421 "), "{absolute:?}");
    assert_eq!(absolute.1["error"]["details"]["field"], "request target");
    assert!(own_absolute.0.contains(" 200 "), "{own_absolute:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_origin_must_match_by_scheme_host_and_port() {
    let server = TestServer::start().await;
    let own = format!("http://{}", server.address);
    for (origin, allowed) in [
        (own.clone(), true),
        (own.replace("http://", "https://"), false),
        (
            format!("http://127.0.0.1:{}", server.address.port() + 1),
            false,
        ),
    ] {
        let response = server
            .client
            .get(server.url("/api/health"))
            .header("Origin", &origin)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().is_success(), allowed, "{origin}");
    }
}
