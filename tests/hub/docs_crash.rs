//! Crashes at random points while 16 writers (8 over REST, 8 over MCP) edit
//! shared documents: `cos serve` is killed with SIGKILL several times and
//! started again on the same state. Every write carries a unique marker
//! (basic-memory's benchmark design): afterwards every marker a client saw
//! committed is in its document exactly once, every request ID resolves to
//! committed or not_committed, every committed one is in the history, the
//! chain verifies and each file equals its last committed revision.

use crate::cli::{announced_address, serve_on_any_port};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const DOCUMENTS: usize = 4;
const SECTIONS: usize = 6;
const WRITERS: usize = 16;
const ROUNDS: usize = 5;
/// Writes a round sees committed before its kill may land.
const COMMITS_BEFORE_KILL: usize = 5;

/// What the clients saw: markers acknowledged as committed, and request IDs
/// whose outcome they could not see (the hub died first).
#[derive(Default)]
struct Seen {
    committed: BTreeMap<String, String>,
    uncertain: BTreeMap<String, String>,
}

fn document_text(index: usize) -> String {
    let mut text = format!("# Document {index}\n");
    for section in 0..SECTIONS {
        text.push_str(&format!("## Part {section}\nstart\n"));
    }
    text
}

/// One writer's attempt: read, then patch one section with a fresh marker.
async fn attempt(
    http: &reqwest::Client,
    mcp: Option<&rmcp::service::RunningService<rmcp::service::RoleClient, ()>>,
    address: &str,
    writer: usize,
    n: usize,
    seen: &Mutex<Seen>,
) -> Result<(), ()> {
    let path = format!("shared-{}.md", (writer + n) % DOCUMENTS);
    let marker = format!("marker-{writer}-{n}");
    let read_url =
        format!("http://{address}/api/docs/document?mount=docs&path={path}&page_bytes=256");
    let page: Value = http
        .get(&read_url)
        .send()
        .await
        .map_err(|_| ())?
        .json()
        .await
        .map_err(|_| ())?;
    let document = &page["data"]["document"];
    let arguments = json!({
        "mount": "docs", "path": path, "request_id": marker,
        "base": {"rev": document["rev"], "hash": document["hash"]},
        "operations": [{"op": "append_to_section", "section": format!("Part {}", n % SECTIONS), "content": marker}],
    });
    seen.lock()
        .unwrap()
        .uncertain
        .insert(marker.clone(), path.clone());
    let answer: Option<Value> = match mcp {
        Some(client) => {
            let Value::Object(map) = arguments else {
                unreachable!()
            };
            match client
                .call_tool(CallToolRequestParams::new("cos_docs_patch").with_arguments(map))
                .await
            {
                Ok(result) => result
                    .content
                    .first()
                    .and_then(|b| b.as_text())
                    .and_then(|t| serde_json::from_str::<Value>(&t.text).ok()),
                Err(_) => None,
            }
        }
        None => {
            let url = format!("http://{address}/api/docs/document?mount=docs&path={path}");
            let sent = http
                .patch(url)
                .header(
                    "if-match",
                    format!(
                        "\"{}-{}\"",
                        document["rev"],
                        document["hash"].as_str().unwrap_or("")
                    ),
                )
                .header("idempotency-key", &marker)
                .json(&json!({"operations": arguments["operations"]}))
                .send()
                .await;
            match sent {
                Ok(response) => response.json::<Value>().await.ok().map(|mut body| {
                    // REST bodies carry no `ok`: a data body is a success
                    body["ok"] = json!(body.get("data").is_some());
                    body
                }),
                Err(_) => None,
            }
        }
    };
    let Some(answer) = answer else {
        return Err(());
    };
    let mut seen = seen.lock().unwrap();
    if answer["ok"] == true && answer["data"]["state"] == "committed" {
        seen.uncertain.remove(&marker);
        seen.committed.insert(marker, path);
    } else if answer["ok"] == false {
        let code = answer["error"]["code"].as_str().unwrap_or("");
        assert_ne!(code, "E_INTERNAL", "{answer}");
        assert_ne!(code, "E_REQUEST_REUSE", "{answer}");
        if matches!(code, "STALE_REVISION" | "E_BUSY") {
            // refused as a whole: nothing of it is in the history
            seen.uncertain.remove(&marker);
        }
    }
    Ok(())
}

async fn write_until_killed(address: String, seen: Arc<Mutex<Seen>>, round: usize) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut writers = Vec::new();
    for writer in 0..WRITERS {
        let http = http.clone();
        let address = address.clone();
        let seen = seen.clone();
        writers.push(tokio::spawn(async move {
            let mcp = if writer % 2 == 1 {
                let transport =
                    StreamableHttpClientTransport::from_uri(format!("http://{address}/mcp"));
                match ().serve(transport).await {
                    Ok(client) => Some(client),
                    Err(_) => return,
                }
            } else {
                None
            };
            let deadline = Instant::now() + Duration::from_secs(20);
            for n in 0..10_000 {
                if Instant::now() > deadline {
                    break;
                }
                let n = round * 10_000 + n;
                if attempt(
                    &http,
                    mcp.as_ref(),
                    &address,
                    writer + 100 * round,
                    n,
                    &seen,
                )
                .await
                .is_err()
                {
                    break;
                }
            }
        }));
    }
    for writer in writers {
        let _ = writer.await;
    }
}

#[test]
fn writes_survive_kill_9_at_random_points() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join("docs")).unwrap();
    for index in 0..DOCUMENTS {
        std::fs::write(
            repo.path().join(format!("docs/shared-{index}.md")),
            document_text(index),
        )
        .unwrap();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let mut random = 0x9e37_79b9_7f4a_7c15_u64;
    for round in 0..ROUNDS {
        let mut server = serve_on_any_port(repo.path());
        let address = announced_address(&mut server);
        let committed_before = seen.lock().unwrap().committed.len();
        let writing = runtime.spawn(write_until_killed(address.clone(), seen.clone(), round));
        // the kill lands among writes however slow the machine: wait (bounded)
        // for this round's first commits, then a random while longer
        let started = Instant::now();
        while seen.lock().unwrap().committed.len() < committed_before + COMMITS_BEFORE_KILL
            && started.elapsed() < Duration::from_secs(15)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        let delay = Duration::from_millis(random % 900);
        std::thread::sleep(delay);
        server.kill().unwrap();
        server.wait().unwrap();
        // writers cut off mid-call leave their request IDs uncertain,
        // resolved by receipt below
        let abort = writing.abort_handle();
        runtime.block_on(async {
            let _ = tokio::time::timeout(Duration::from_secs(2), writing).await;
        });
        abort.abort();
    }
    let mut server = serve_on_any_port(repo.path());
    let address = announced_address(&mut server);
    let http = reqwest::Client::new();
    let get = |path: &str| -> Value {
        runtime.block_on(async {
            http.get(format!("http://{address}{path}"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap()
        })
    };
    let mut seen = seen.lock().unwrap();
    // every request ID the clients could not see resolves now
    let uncertain: Vec<(String, String)> = seen
        .uncertain
        .iter()
        .map(|(m, p)| (m.clone(), p.clone()))
        .collect();
    let (mut resolved_committed, mut resolved_not) = (0, 0);
    for (marker, path) in uncertain {
        let receipt = get(&format!("/api/docs/receipts/{marker}"));
        match receipt["data"]["state"].as_str() {
            Some("committed") => {
                resolved_committed += 1;
                seen.committed.insert(marker, path);
            }
            Some("not_committed") => resolved_not += 1,
            other => panic!("{marker}: {other:?} {receipt}"),
        }
    }
    assert!(
        seen.committed.len() > 20,
        "only {} writes committed",
        seen.committed.len()
    );
    eprintln!(
        "{} writes committed over {ROUNDS} kills; of the outcomes no client saw, {resolved_committed} committed and {resolved_not} did not",
        seen.committed.len()
    );
    let audit = get("/api/docs/audit");
    assert_eq!(audit["data"]["verified"], true, "{audit}");
    let mut committed_ids = BTreeSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut url = "/api/docs/history?mount=docs&limit=200".to_string();
        if let Some(cursor) = &cursor {
            url.push_str(&format!("&cursor={cursor}"));
        }
        let page = get(&url);
        for entry in page["data"]["entries"].as_array().unwrap() {
            if let Some(id) = entry["request_id"].as_str() {
                committed_ids.insert(id.to_string());
            }
        }
        match page["data"]["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    let mut texts = BTreeMap::new();
    for index in 0..DOCUMENTS {
        let path = format!("shared-{index}.md");
        let page = get(&format!("/api/docs/document?mount=docs&path={path}"));
        let text = std::fs::read_to_string(repo.path().join("docs").join(&path)).unwrap();
        assert_eq!(
            page["data"]["content"].as_str(),
            Some(text.as_str()),
            "{path}: the file is the last committed revision"
        );
        assert_eq!(
            page["data"]["document"]["hash"].as_str(),
            Some(blake3::hash(text.as_bytes()).to_hex().as_str())
        );
        let history = get(&format!("/api/docs/history?mount=docs&path={path}&limit=1"));
        assert_eq!(
            history["data"]["entries"][0]["hash"],
            page["data"]["document"]["hash"]
        );
        assert_ne!(
            history["data"]["entries"][0]["source"], "external",
            "{path}: no write was taken for an outside edit"
        );
        texts.insert(path, text);
    }
    for (marker, path) in &seen.committed {
        assert!(
            committed_ids.contains(marker),
            "{marker} acknowledged but not in the history"
        );
        let count = texts[path].lines().filter(|line| *line == marker).count();
        assert_eq!(count, 1, "{marker} is in {path} {count} times");
    }
    for text in texts.values() {
        for line in text.lines().filter(|l| l.starts_with("marker-")) {
            assert!(
                seen.committed.contains_key(line),
                "{line} is in a file but was never committed"
            );
        }
    }
    server.kill().unwrap();
    let _ = server.wait();
}
