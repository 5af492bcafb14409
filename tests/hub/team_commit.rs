//! A team database connection that drops inside a write's commit: the
//! write answers `COMMIT_UNKNOWN` naming its request ID, and the receipt
//! then says whether it committed, matching what the board holds. The
//! database is reached through a forwarder that cuts the connection at a
//! write's `COMMIT`, either after passing it on (the server commits) or
//! before (the server rolls back).

use crate::common::{TestServer, decode, error_of, postgres::fresh_database};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Where the next write's commit is cut.
#[derive(Debug, Clone, Copy)]
enum Cut {
    /// The server gets the COMMIT; its answer never comes back.
    AfterSending,
    /// The server never gets it.
    BeforeSending,
}

/// The cut to make, after letting this many writes' commits through.
type Plan = Arc<Mutex<Option<(usize, Cut)>>>;

/// The end of the simple-query message that commits a write: `COMMIT`
/// alone, or after the write's last statement (`...; COMMIT`).
const COMMIT: &[u8] = b"COMMIT\0";

fn holds(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

fn forward(listener: TcpListener, to: SocketAddr, plan: Plan) {
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            tokio::spawn(link(inbound, to, plan.clone()));
        }
    });
}

/// One forwarded connection, cut at a write's COMMIT when the plan says so.
async fn link(inbound: TcpStream, to: SocketAddr, plan: Plan) {
    let Ok(outbound) = TcpStream::connect(to).await else {
        return;
    };
    let (mut from_client, mut to_client) = inbound.into_split();
    let (mut from_server, mut to_server) = outbound.into_split();
    let back = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
    });
    let mut buffer = vec![0u8; 64 * 1024];
    // a write's transaction takes the hub's write lock first
    let mut writing = false;
    loop {
        let read = match from_client.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let chunk = &buffer[..read];
        if holds(chunk, b"START TRANSACTION") {
            writing = false;
        }
        writing |= holds(chunk, b"pg_advisory_xact_lock");
        if writing && holds(chunk, COMMIT) {
            writing = false;
            let cut = {
                let mut plan = plan.lock().unwrap();
                match plan.as_mut() {
                    Some((0, cut)) => Some(*cut),
                    Some((skip, _)) => {
                        *skip -= 1;
                        None
                    }
                    None => None,
                }
                .inspect(|_| *plan = None)
            };
            if let Some(cut) = cut {
                if let Cut::AfterSending = cut {
                    let _ = to_server.write_all(chunk).await;
                }
                back.abort();
                return;
            }
        }
        if to_server.write_all(chunk).await.is_err() {
            break;
        }
    }
    back.abort();
}

async fn create(server: &TestServer, title: &str, header: (&str, &str)) -> (u16, Value) {
    let response = server
        .client
        .post(server.url("/api/board/tasks"))
        .header(header.0, header.1)
        .json(&json!({"title": title}))
        .send()
        .await
        .unwrap();
    decode(response).await
}

/// The receipt of `id`, once the hub reaches its database again.
async fn receipt(server: &TestServer, id: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let (status, answer) = server.get(&format!("/api/receipts/{id}")).await;
        if status == 200 {
            return answer["data"].clone();
        }
        assert!(std::time::Instant::now() < deadline, "no receipt: {answer}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn titles(server: &TestServer) -> Vec<String> {
    let (status, found) = server.get("/api/board/search?limit=100").await;
    assert_eq!(status, 200, "{found}");
    found["data"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["title"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_cut_short_answers_commit_unknown_and_its_receipt_says_which_way_it_went() {
    let direct = fresh_database();
    let server_at: SocketAddr = direct
        .split('@')
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .parse()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let relay = listener.local_addr().unwrap();
    let database = direct.rsplit('/').next().unwrap();
    let plan: Plan = Arc::default();
    forward(listener, server_at, plan.clone());
    let server =
        TestServer::on_team_database(&format!("postgres://postgres@{relay}/{database}")).await;

    // the hub builds its tables in the database at its first request
    let (status, first) = create(&server, "first", ("x-request-id", "first")).await;
    assert_eq!(status, 201, "{first}");

    for (cut, id, header, committed) in [
        (Cut::AfterSending, "sent-then-cut", "x-request-id", true),
        (
            Cut::BeforeSending,
            "cut-before-sending",
            "x-request-id",
            false,
        ),
        (Cut::AfterSending, "keyed-then-cut", "idempotency-key", true),
    ] {
        // a key's claim commits first, then the write itself
        let skip = usize::from(header == "idempotency-key");
        *plan.lock().unwrap() = Some((skip, cut));
        let (status, answer) = create(&server, id, (header, id)).await;
        assert_eq!(status, 503, "{answer}");
        let error = error_of(&answer);
        assert_eq!(error["code"], "COMMIT_UNKNOWN", "{id}: {answer}");
        assert_eq!(error["details"]["request_id"], id, "{answer}");
        assert!(plan.lock().unwrap().is_none(), "the cut was made");

        let receipt = receipt(&server, id).await;
        let state = if committed {
            "committed"
        } else {
            "not_committed"
        };
        assert_eq!(receipt["state"], state, "{id}: {receipt}");
        assert_eq!(
            titles(&server).await.contains(&id.to_string()),
            committed,
            "{id}: the board agrees with the receipt"
        );
        if committed {
            assert_eq!(receipt["tool"], "cos_task_create");
        }
        if header == "idempotency-key" {
            // the unconfirmed answer is kept: the retry is not run a second time
            let (status, again) = create(&server, id, (header, id)).await;
            assert_eq!(status, 503, "{again}");
            assert_eq!(error_of(&again)["code"], "COMMIT_UNKNOWN");
            let held = titles(&server).await;
            assert_eq!(held.iter().filter(|title| *title == id).count(), 1);
        }
    }
}
