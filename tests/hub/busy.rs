//! What a serving hub does by itself (the graph's re-index after a save,
//! the documents' scan after an outside edit, the search index's catch-up
//! after a write) still gets done when it first found the database busy:
//! nothing else may come along to ask for it again.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use crate::common::ChangeStream;

/// Longer than the hub's own wait for the write lock (5 s) with its
/// watchers' debounce and look intervals, and a loaded machine's delays.
const FAILURE_DEADLINE: Duration = Duration::from_secs(30);
const RECOVERY_DEADLINE: Duration = Duration::from_secs(20);

#[test]
fn background_work_that_found_the_database_busy_is_done_once_it_is_free() {
    let repo = tempfile::tempdir().unwrap();
    write(repo.path(), "app/main.py", "def start():\n    return 1\n");
    // outside `docs/`, so only the repository's own mount holds it: a scan
    // of the other mount cannot record it by the way
    write(repo.path(), "notes/plan.md", "# Plan\n\nFirst words.\n");
    let mut server = crate::cli::serve_on_any_port(repo.path());
    let log = LogLines::follow(&mut server);
    let address = log.address();
    let hub = Hub::at(&address);
    hub.wait_until("the search index's first build", |r| area(r, "search") > 0);
    hub.wait_for_quiet();

    // a save and an outside edit while another process holds the write lock
    let before = hub.revisions();
    let held = hold_write_lock(&repo.path().join(".cos/cos.db"));
    write(
        repo.path(),
        "app/late.py",
        "def arrived_while_busy():\n    return 2\n",
    );
    write(
        repo.path(),
        "notes/plan.md",
        "# Plan\n\nEdited in an editor.\n",
    );
    log.wait_for_failures(&["cos_graph_index", "cos_docs_scan"]);
    drop(held);
    hub.wait_until("the graph's re-index and the documents' scan", |now| {
        area(now, "graph") > area(&before, "graph") && area(now, "docs") > area(&before, "docs")
    });

    // any write rings for a catch-up, a scan that found nothing too: none
    // is left to ring for the one that found the lock held
    hub.wait_for_quiet();

    // a write whose catch-up found the lock held; the catch-up waits 0.3 s
    // for quiet first, which a loaded machine may outlast before the lock
    // is taken: then the round is done again
    for round in 1..=3 {
        let before = hub.revisions();
        hub.create_task(&format!("Rotate the keys, round {round}"));
        let held = hold_write_lock(&repo.path().join(".cos/cos.db"));
        let failed = log.failure_within(&["cos_search_index"], Duration::from_secs(10));
        drop(held);
        if failed {
            hub.wait_until("the search index's catch-up", |now| {
                area(now, "search") > area(&before, "search")
            });
            return;
        }
    }
    panic!("in 3 rounds the search index's catch-up never met the held lock");
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn area(revisions: &Value, name: &str) -> i64 {
    revisions[name].as_i64().unwrap_or(0)
}

/// Another process's write transaction on the hub's database, open until dropped.
fn hold_write_lock(database: &Path) -> rusqlite::Connection {
    let connection = rusqlite::Connection::open(database).unwrap();
    connection.busy_timeout(Duration::from_secs(20)).unwrap();
    connection.execute_batch("BEGIN IMMEDIATE").unwrap();
    connection
}

/// The served hub's REST doors this test uses.
struct Hub {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    base: String,
}

impl Hub {
    fn at(address: &str) -> Hub {
        Hub {
            runtime: tokio::runtime::Runtime::new().unwrap(),
            client: reqwest::Client::new(),
            base: format!("http://{address}"),
        }
    }

    /// Every area's revision now: the first event of a new change stream.
    fn revisions(&self) -> Value {
        let url = format!("{}/api/stream", self.base);
        self.runtime.block_on(async {
            let mut stream = ChangeStream::open_at(&self.client, &url).await;
            stream.next_revisions().await
        })
    }

    fn wait_until(&self, what: &str, done: impl Fn(&Value) -> bool) {
        let deadline = Instant::now() + RECOVERY_DEADLINE;
        loop {
            let now = self.revisions();
            if done(&now) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "not done by itself: {what} ({now})"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until no revision moved for `QUIET`: the watchers' looks at
    /// what changed before (each `INTERVAL` of the documents' watcher, 2 s)
    /// are over.
    fn wait_for_quiet(&self) {
        const QUIET: Duration = Duration::from_secs(3);
        let deadline = Instant::now() + RECOVERY_DEADLINE;
        let (mut last, mut since) = (self.revisions(), Instant::now());
        while since.elapsed() < QUIET {
            assert!(
                Instant::now() < deadline,
                "the hub never went quiet ({last})"
            );
            std::thread::sleep(Duration::from_millis(250));
            let now = self.revisions();
            if now != last {
                (last, since) = (now, Instant::now());
            }
        }
    }

    fn create_task(&self, title: &str) {
        let status = self.runtime.block_on(async {
            let response = (self.client)
                .post(format!("{}/api/board/tasks", self.base))
                .json(&json!({ "title": title }))
                .send()
                .await
                .unwrap();
            response.status().as_u16()
        });
        assert_eq!(status, 201);
    }
}

/// The served hub's log, line by line as it comes.
struct LogLines(Receiver<String>);

impl LogLines {
    fn follow(server: &mut std::process::Child) -> LogLines {
        let stderr = BufReader::new(server.stderr.take().unwrap());
        let (lines, heard) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    return;
                }
            }
        });
        LogLines(heard)
    }

    fn address(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        while let Some(line) = self.next_before(deadline) {
            if let Some(address) = crate::cli::address_in(&line) {
                return address;
            }
        }
        panic!("serve did not announce its address")
    }

    fn next_before(&self, deadline: Instant) -> Option<String> {
        let left = deadline.saturating_duration_since(Instant::now());
        // a timeout and a log that ended alike: no line before the deadline
        self.0.recv_timeout(left).ok()
    }

    /// Whether each of `tools` logged a failure that may clear by itself
    /// within `wait`.
    fn failure_within(&self, tools: &[&str], wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        let mut waiting: Vec<&str> = tools.to_vec();
        while !waiting.is_empty() {
            let Some(line) = self.next_before(deadline) else {
                return false;
            };
            if line.contains("tool failed for now") {
                waiting.retain(|tool| !line.contains(&format!("\"{tool}\"")));
            }
        }
        true
    }

    fn wait_for_failures(&self, tools: &[&str]) {
        assert!(
            self.failure_within(tools, FAILURE_DEADLINE),
            "{tools:?} did not all find the database busy"
        );
    }
}
