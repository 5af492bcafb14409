//! A team database out of reach: the board answers E_UNAVAILABLE naming the
//! database's host (never its password), the hub's own areas keep working,
//! health says what is wrong, and once the database is back the hub uses it
//! again by itself. The database is reached through a forwarder this test
//! stops and starts.

use crate::common::{TestServer, error_of, postgres::fresh_database};
use serde_json::json;
use std::net::SocketAddr;
use tokio::net::{TcpListener, TcpStream};

/// Forwards `listener`'s connections to `to` until the task is aborted
/// (which drops every forwarded connection with it).
fn forward(listener: TcpListener, to: SocketAddr) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut links = tokio::task::JoinSet::new();
        while let Ok((mut inbound, _)) = listener.accept().await {
            links.spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_team_database_is_unavailable_and_the_hub_reconnects_by_itself() {
    let direct = fresh_database();
    let server_at = direct
        .split('@')
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .parse::<SocketAddr>()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let relay = listener.local_addr().unwrap();
    let database = direct.rsplit('/').next().unwrap().to_string();
    let url = format!("postgres://postgres:sw0rdfish@{relay}/{database}");
    let forwarder = forward(listener, server_at);
    let server = TestServer::on_team_database(&url).await;
    let (status, created) = server
        .post_json("/api/board/tasks", json!({"title": "before the outage"}))
        .await;
    assert_eq!(status, 201, "{created}");

    forwarder.abort();
    let _ = forwarder.await;
    let (status, refused) = server.get("/api/board/list").await;
    assert_eq!(status, 503, "{refused}");
    let error = error_of(&refused);
    assert_eq!(error["code"], "E_UNAVAILABLE");
    assert_eq!(error["retryable"], true);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&relay.to_string()),
        "names the host: {message}"
    );
    assert!(
        !refused.to_string().contains("sw0rdfish"),
        "never the password"
    );
    // the hub's own areas answer meanwhile
    let (status, mounts) = server.get("/api/docs/mounts").await;
    assert_eq!(status, 200, "{mounts}");
    let (status, found) = server.get("/api/search?q=anything%20area:code").await;
    assert_eq!(status, 200, "{found}");
    let (_, health) = server.get("/api/health").await;
    assert_eq!(health["data"]["status"], "degraded", "{health}");
    assert!(!health.to_string().contains("sw0rdfish"));

    // the database comes back on the same address
    let listener = TcpListener::bind(relay).await.unwrap();
    let _forwarder = forward(listener, server_at);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let (status, board) = server.get("/api/board/list").await;
        if status == 200 {
            assert_eq!(board["data"]["total_count"], 1);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the hub did not reconnect: {board}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}
