//! Writers and readers of one document racing: through the tool runtime
//! that every front door calls, in-process so the interleavings are tight,
//! and through two `cos serve` processes on one repository, which share only
//! the database and the files. No write in flight may pass for an outside
//! edit, and no committed write may lose its receipt to someone else
//! finishing it.

use cos_hub::tools::{Hub, HubConfig, Source, Unwatched};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const ROUNDS: usize = 4;
const WRITERS: usize = 8;
const EDITS: usize = 12;

fn call(hub: &Hub, name: &str, arguments: Value) -> Result<Value, cos_hub::envelope::ErrorBody> {
    hub.call_named_here(name, arguments, Source::Rest, &Unwatched)
        .map(|answer| serde_json::to_value(&answer.data).expect("answers are JSON"))
}

fn append_until_it_lands(hub: &Hub, writer: usize, edit: usize) -> String {
    let marker = format!("w{writer}-{edit}");
    for attempt in 0..500 {
        let read = call(
            hub,
            "cos_docs_read",
            json!({"mount": "docs", "path": "race.md"}),
        )
        .expect("reads succeed");
        let request_id = format!("{marker}-{attempt}");
        let patched = call(
            hub,
            "cos_docs_patch",
            json!({"mount": "docs", "path": "race.md", "request_id": request_id,
                   "base": {"rev": read["document"]["rev"], "hash": read["document"]["hash"]},
                   "operations": [{"op": "append_to_section", "section": "Log", "content": marker}]}),
        );
        match patched {
            Ok(_) => return request_id,
            Err(error) => assert_eq!(error.code.to_string(), "STALE_REVISION", "{error:?}"),
        }
    }
    panic!("{marker} never landed in 500 attempts");
}

#[test]
fn racing_writes_keep_every_edit_and_receipt_and_record_no_outside_edit() {
    for round in 0..ROUNDS {
        let repo = tempfile::tempdir().expect("temporary repository");
        let hub = Hub::open(
            HubConfig::for_repo(repo.path(), None),
            cos_hub::hub::default_registry(),
        )
        .expect("hub opens");
        call(
            &hub,
            "cos_docs_create",
            json!({"mount": "docs", "path": "race.md", "content": "# Race\n## Log\n", "request_id": "create"}),
        )
        .expect("create");
        let landed: Vec<String> = std::thread::scope(|scope| {
            let hub = &hub;
            let readers: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(move || {
                        for _ in 0..100 {
                            call(
                                hub,
                                "cos_docs_read",
                                json!({"mount": "docs", "path": "race.md"}),
                            )
                            .expect("read");
                            call(hub, "cos_docs_list", json!({"mount": "docs"})).expect("list");
                        }
                    })
                })
                .collect();
            let writers: Vec<_> = (0..WRITERS)
                .map(|writer| {
                    scope.spawn(move || {
                        (0..EDITS)
                            .map(|edit| append_until_it_lands(hub, writer, edit))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for reader in readers {
                reader.join().expect("reader");
            }
            writers
                .into_iter()
                .flat_map(|writer| writer.join().expect("writer"))
                .collect()
        });
        let history = call(
            &hub,
            "cos_docs_history",
            json!({"mount": "docs", "path": "race.md", "limit": 200}),
        )
        .expect("history");
        let ops: Vec<&str> = history["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|entry| entry["op"].as_str().unwrap_or("?"))
            .collect();
        assert_eq!(ops.len(), 1 + WRITERS * EDITS, "round {round}: {ops:?}");
        assert!(
            ops.iter().all(|op| *op != "external"),
            "round {round}: {ops:?}"
        );
        let text = std::fs::read_to_string(repo.path().join("docs/race.md")).expect("on disk");
        for writer in 0..WRITERS {
            for edit in 0..EDITS {
                let marker = format!("w{writer}-{edit}");
                assert_eq!(
                    text.lines().filter(|line| *line == marker).count(),
                    1,
                    "{marker}"
                );
            }
        }
        for request_id in landed {
            let receipt =
                call(&hub, "cos_docs_receipt", json!({"request_id": request_id})).expect("receipt");
            assert_eq!(receipt["state"], "committed", "{receipt}");
        }
    }
}

const HUBS: usize = 2;
const WRITERS_PER_HUB: usize = 4;
const EDITS_PER_WRITER: usize = 20;

/// One writer's edits through one hub's REST door: read, patch with the read
/// `{rev, hash}` as If-Match, reread and resend under a new key when stale.
/// Answers the keys that landed.
async fn edit_through(
    http: reqwest::Client,
    address: String,
    hub: usize,
    writer: usize,
) -> Vec<String> {
    let document = format!("http://{address}/api/docs/document?mount=docs&path=race.md");
    let mut landed = Vec::new();
    for edit in 0..EDITS_PER_WRITER {
        let marker = format!("h{hub}w{writer}-{edit}");
        let mut attempts = 0;
        loop {
            attempts += 1;
            assert!(attempts < 500, "{marker} never landed in 500 attempts");
            let read: Value = get_json(&http, &document).await;
            let identity = &read["data"]["document"];
            let key = format!("{marker}-{attempts}");
            let answer = http
                .patch(&document)
                .header("if-match", format!("\"{}-{}\"", identity["rev"], identity["hash"].as_str().unwrap()))
                .header("idempotency-key", &key)
                .json(&json!({"operations": [{"op": "append_to_section", "section": "Log", "content": marker}]}))
                .send()
                .await
                .unwrap();
            let status = answer.status().as_u16();
            let body: Value = answer.json().await.unwrap();
            if status == 200 {
                landed.push(key);
                break;
            }
            // stale, or (transient) a document that kept changing under the
            // write: nothing of it was written either way
            let code = body["error"]["code"].as_str();
            assert!(
                (status, code) == (412, Some("STALE_REVISION"))
                    || (status, code) == (503, Some("E_BUSY")),
                "{status} {body}"
            );
        }
    }
    landed
}

async fn get_json(http: &reqwest::Client, url: impl reqwest::IntoUrl) -> Value {
    http.get(url).send().await.unwrap().json().await.unwrap()
}

/// Reads and lists through one hub's REST door while `writing` holds: each
/// read compares the file with the record, as an outside edit would be found.
async fn read_while(http: reqwest::Client, address: String, writing: Arc<AtomicBool>) {
    while writing.load(Ordering::Relaxed) {
        for url in [
            "api/docs/document?mount=docs&path=race.md",
            "api/docs/list?mount=docs",
        ] {
            let answer = http
                .get(format!("http://{address}/{url}"))
                .send()
                .await
                .unwrap();
            let status = answer.status().as_u16();
            let body: Value = answer.json().await.unwrap();
            // a document changing throughout a read may ask for another
            // (E_BUSY, transient); anything else is a fault
            assert!(
                status == 200 || body["error"]["code"] == "E_BUSY",
                "{url}: {status} {body}"
            );
        }
    }
}

/// Two hubs on one repository (a person's `cos serve` beside an agent's
/// `cos mcp`, say) share only the database and the files: each one's writes
/// must land once whatever the other is doing, and neither may take the
/// other's writes, seen in the folder it watches, for outside edits.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hubs_on_one_repository_keep_every_edit_and_record_no_outside_edit() {
    let repo = tempfile::tempdir().expect("temporary repository");
    let mut servers: Vec<_> = (0..HUBS)
        .map(|_| crate::cli::serve_on_any_port(repo.path()))
        .collect();
    let addresses: Vec<String> = servers
        .iter_mut()
        .map(|server| crate::cli::announced_address(server))
        .collect();
    let http = reqwest::Client::new();
    let created = http
        .post(format!("http://{}/api/docs/documents", addresses[0]))
        .json(&json!({"mount": "docs", "path": "race.md", "content": "# Race\n## Log\n", "request_id": "create"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status().as_u16(), 201);
    let writers: Vec<_> = (0..HUBS * WRITERS_PER_HUB)
        .map(|writer| {
            let hub = writer % HUBS;
            tokio::spawn(edit_through(
                http.clone(),
                addresses[hub].clone(),
                hub,
                writer,
            ))
        })
        .collect();
    let writing = Arc::new(AtomicBool::new(true));
    let readers: Vec<_> = (0..HUBS * 3)
        .map(|reader| {
            read_while(
                http.clone(),
                addresses[reader % HUBS].clone(),
                writing.clone(),
            )
        })
        .map(tokio::spawn)
        .collect();
    let mut landed = Vec::new();
    for (writer, keys) in writers.into_iter().enumerate() {
        let hub = writer % HUBS;
        landed.extend(
            keys.await
                .expect("writer")
                .into_iter()
                .map(|key| (hub, key)),
        );
    }
    writing.store(false, Ordering::Relaxed);
    for reader in readers {
        reader.await.expect("reader");
    }
    let text = std::fs::read_to_string(repo.path().join("docs/race.md")).expect("on disk");
    for writer in 0..HUBS * WRITERS_PER_HUB {
        for edit in 0..EDITS_PER_WRITER {
            let marker = format!("h{}w{writer}-{edit}", writer % HUBS);
            assert_eq!(
                text.lines().filter(|line| *line == marker).count(),
                1,
                "{marker}"
            );
        }
    }
    let mut ops = Vec::new();
    let mut page = format!(
        "http://{}/api/docs/history?mount=docs&path=race.md",
        addresses[1]
    );
    loop {
        let history: Value = get_json(&http, &page).await;
        ops.extend(
            history["data"]["entries"]
                .as_array()
                .expect("entries")
                .iter()
                .map(|entry| entry["op"].as_str().unwrap_or("?").to_string()),
        );
        match history["data"]["next_cursor"].as_str() {
            Some(cursor) => {
                page = format!(
                    "http://{}/api/docs/history?mount=docs&path=race.md&cursor={cursor}",
                    addresses[1]
                )
            }
            None => break,
        }
    }
    assert_eq!(
        ops.len(),
        1 + HUBS * WRITERS_PER_HUB * EDITS_PER_WRITER,
        "{ops:?}"
    );
    assert!(ops.iter().all(|op| op != "external"), "{ops:?}");
    // each receipt through the hub that did not write it: they share one record
    for (hub, key) in &landed {
        let address = &addresses[(hub + 1) % HUBS];
        let receipt: Value =
            get_json(&http, format!("http://{address}/api/docs/receipts/{key}")).await;
        assert_eq!(receipt["data"]["state"], "committed", "{receipt}");
    }
    let audit: Value = get_json(&http, format!("http://{}/api/docs/audit", addresses[0])).await;
    assert_eq!(audit["data"]["verified"], true, "{audit}");
    for server in &mut servers {
        server.kill().unwrap();
        server.wait().unwrap();
    }
}
