//! Crashes on a team board: writers and claimers on two `cos serve`
//! processes sharing one PostgreSQL cluster of the test's own, while one hub
//! is killed with SIGKILL and the database is stopped at once (as a crash
//! would) and started again, at random points. Afterwards every task whose
//! creation was acknowledged is there exactly once, every creation that got
//! no answer resolves by its request ID to committed (the task is there
//! once) or not (it is not there), and no task was handed to two claimants.

use crate::cli::{announced_address, serve_on_any_port_with};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/postgres-cluster.sh");

/// A cluster of this test's own (a restart must not touch other tests'
/// databases), stopped and removed when dropped.
struct Cluster(std::path::PathBuf);

impl Cluster {
    fn start() -> (Cluster, String) {
        // in the system's temporary folder: the server's user must reach it,
        // and a checkout may sit under a private folder
        let dir = std::env::temp_dir().join(format!("cos-crash-postgres-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let output = std::process::Command::new(SCRIPT)
            .arg("start")
            .arg(&dir)
            .output()
            .expect("the cluster script runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let url = String::from_utf8(output.stdout).unwrap().trim().to_string();
        (Cluster(dir), url)
    }

    fn crash_and_restart(&self) {
        let output = std::process::Command::new(SCRIPT)
            .arg("restart")
            .arg(&self.0)
            .output()
            .expect("the cluster script runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new(SCRIPT)
            .arg("stop")
            .arg(&self.0)
            .output();
    }
}

/// What the clients were told: task created (title → id), task claimed (id
/// → holders), and the creations that got no answer saying so (their titles,
/// which are their request IDs too).
#[derive(Default)]
struct Acknowledged {
    created: HashMap<String, String>,
    claimed: HashMap<String, Vec<String>>,
    unanswered: Vec<String>,
}

async fn post(
    client: &reqwest::Client,
    address: &str,
    path: &str,
    body: Value,
) -> Option<(u16, Value)> {
    post_as(client, address, path, body, None).await
}

async fn post_as(
    client: &reqwest::Client,
    address: &str,
    path: &str,
    body: Value,
    request_id: Option<&str>,
) -> Option<(u16, Value)> {
    let mut request = client.post(format!("http://{address}{path}")).json(&body);
    if let Some(id) = request_id {
        request = request.header("x-request-id", id);
    }
    let response = request.send().await.ok()?;
    let status = response.status().as_u16();
    Some((status, response.json().await.ok()?))
}

/// Creates tasks and claims them through `address` until `stop`, noting
/// every answer that said it was done.
async fn work(
    worker: usize,
    address: Arc<Mutex<String>>,
    seen: Arc<Mutex<Acknowledged>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let actor = json!({"kind": "agent", "id": format!("crash-{worker}")});
    let mut n = 0;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        n += 1;
        let at = address.lock().unwrap().clone();
        let title = format!("w{worker}-{n}");
        let answer = post_as(
            &client,
            &at,
            "/api/board/tasks",
            json!({"title": title}),
            Some(&title),
        )
        .await;
        match answer {
            Some((201, answer)) => {
                let id = answer["data"]["id"].as_str().unwrap().to_string();
                seen.lock().unwrap().created.insert(title, id);
            }
            _ => seen.lock().unwrap().unanswered.push(title),
        }
        if n % 3 == 0
            && let Some((200, answer)) = post(
                &client,
                &at,
                "/api/board/claim-next",
                json!({"actor": actor, "lease_seconds": 3600}),
            )
            .await
            && let Some(id) = answer["data"]["task"]["id"].as_str()
        {
            // a holder keeps its task: a second claim of it would be a double hand-out
            seen.lock()
                .unwrap()
                .claimed
                .entry(id.to_string())
                .or_default()
                .push(format!("agent:crash-{worker}"));
            // WIP is one task per actor: park it, still leased, to claim again
            let _ = post(
                &client,
                &at,
                &format!("/api/board/tasks/{id}/move"),
                json!({"from": "in_progress", "to": "blocked", "actor": actor}),
            )
            .await;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[test]
fn acknowledged_writes_survive_a_killed_hub_and_a_crashed_database_exactly_once() {
    let (cluster, server) = Cluster::start();
    let url = format!("{}/postgres", server.rsplit_once('/').unwrap().0);
    let repos = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut hubs: Vec<_> = repos
        .iter()
        .map(|repo| serve_on_any_port_with(repo.path(), Some(&url)))
        .collect();
    let addresses: Vec<Arc<Mutex<String>>> = hubs
        .iter_mut()
        .map(|hub| Arc::new(Mutex::new(announced_address(hub))))
        .collect();
    let seen = Arc::new(Mutex::new(Acknowledged::default()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let workers: Vec<_> = (0..6)
        .map(|worker| {
            runtime.spawn(work(
                worker,
                addresses[worker % 2].clone(),
                seen.clone(),
                stop.clone(),
            ))
        })
        .collect();

    let mut random = 0x9e37_79b9_7f4a_7c15_u64;
    let mut pause = || {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        Duration::from_millis(300 + random % 700)
    };
    for _ in 0..3 {
        std::thread::sleep(pause());
        // the first hub dies mid-request and comes back on a new port
        hubs[0].kill().unwrap();
        hubs[0].wait().unwrap();
        hubs[0] = serve_on_any_port_with(repos[0].path(), Some(&url));
        *addresses[0].lock().unwrap() = announced_address(&mut hubs[0]);
        std::thread::sleep(pause());
        cluster.crash_and_restart();
    }
    std::thread::sleep(pause());
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for worker in workers {
        runtime.block_on(worker).unwrap();
    }

    let seen = seen.lock().unwrap();
    assert!(
        seen.created.len() > 20,
        "writes were acknowledged: {}",
        seen.created.len()
    );
    let address = addresses[1].lock().unwrap().clone();
    let tasks: Vec<Value> = runtime.block_on(async {
        let client = reqwest::Client::new();
        let mut tasks = Vec::new();
        let mut cursor = String::new();
        loop {
            let page = format!("http://{address}/api/board/search?limit=500{cursor}");
            // the database may still be coming back from its last crash
            let mut answer = None;
            for _ in 0..50 {
                if let Ok(response) = client.get(&page).send().await
                    && response.status() == 200
                {
                    answer = Some(response.json::<Value>().await.unwrap());
                    break;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            let answer = answer.expect("the board answers after the crashes");
            tasks.extend(
                answer["data"]["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .cloned(),
            );
            match answer["data"]["next_cursor"].as_str() {
                Some(next) => cursor = format!("&cursor={next}"),
                None => return tasks,
            }
        }
    });
    let mut held: HashMap<&str, Vec<&str>> = HashMap::new();
    for task in &tasks {
        held.entry(task["title"].as_str().unwrap())
            .or_default()
            .push(task["id"].as_str().unwrap());
    }
    for (title, id) in &seen.created {
        assert_eq!(
            held.get(title.as_str()).map(Vec::as_slice),
            Some([id.as_str()].as_slice()),
            "{title}, acknowledged as {id}, is there exactly once"
        );
    }
    let client = reqwest::Client::new();
    for title in &seen.unanswered {
        let state = runtime.block_on(async {
            for _ in 0..50 {
                if let Ok(response) = client
                    .get(format!("http://{address}/api/receipts/{title}"))
                    .send()
                    .await
                    && response.status() == 200
                {
                    let receipt: Value = response.json().await.unwrap();
                    return receipt["data"]["state"].as_str().unwrap().to_string();
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            panic!("{title}: no receipt");
        });
        let copies = held.get(title.as_str()).map_or(0, Vec::len);
        match state.as_str() {
            "committed" => assert_eq!(copies, 1, "{title}: committed, so there once"),
            _ => assert_eq!(copies, 0, "{title}: not committed, so not there"),
        }
    }
    for (task, holders) in &seen.claimed {
        assert_eq!(holders.len(), 1, "{task} was handed out twice: {holders:?}");
    }
}
