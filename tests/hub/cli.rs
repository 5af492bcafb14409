//! The `cos` binary as a person runs it.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) fn cos(repo: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cos"));
    command
        .current_dir(repo)
        .env_remove("COS_STATE_DIR")
        .env("RUST_LOG", "warn");
    command
}

/// The `host:port` in a line announcing `... on http://host:port ...`.
pub(crate) fn address_in(line: &str) -> Option<String> {
    let (_, rest) = line.split_once("on http://")?;
    let address: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '[' | ']'))
        .collect();
    (!address.is_empty()).then_some(address)
}

/// `cos index` of `repo`, which must succeed.
fn index(repo: &std::path::Path) {
    let output = cos(repo).arg("index").output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `cos serve` of `repo` on a free port, its stderr piped for the address.
pub(crate) fn serve_on_any_port(repo: &std::path::Path) -> Served {
    serve_on_any_port_with(repo, None)
}

/// `cos serve` as above, its shared state in the team database `database` when given.
pub(crate) fn serve_on_any_port_with(repo: &std::path::Path, database: Option<&str>) -> Served {
    let mut command = cos(repo);
    if let Some(url) = database {
        command.env("COS_DATABASE_URL", url);
    }
    Served(
        command
            .args(["serve", "--port", "0"])
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// A `cos serve` child that is killed when dropped, so that a test failing
/// halfway leaves no server running after it.
pub(crate) struct Served(std::process::Child);

impl std::ops::Deref for Served {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Served {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The address a starting `cos serve` announces on stderr (within 20 s). The
/// rest of its stderr is drained on a thread, as a terminal would read it.
pub(crate) fn announced_address(child: &mut std::process::Child) -> String {
    announced_address_and_log(child).0
}

/// Like [`announced_address`], with the rest of stderr as the thread read it
/// until the process ended.
pub(crate) fn announced_address_and_log(
    child: &mut std::process::Child,
) -> (String, std::thread::JoinHandle<String>) {
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut line = String::new();
    while Instant::now() < deadline {
        line.clear();
        if stderr.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(address) = address_in(&line) {
            let rest = std::thread::spawn(move || {
                let mut rest = String::new();
                let _ = stderr.read_to_string(&mut rest);
                rest
            });
            return (address, rest);
        }
    }
    panic!("serve did not announce its address")
}

/// `GET /api/health` of the hub at `address`.
fn health_of(address: &str) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        reqwest::get(format!("http://{address}/api/health"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    })
}

fn run_with_stdin(repo: &std::path::Path, args: &[&str], stdin: &str) -> (i32, Value) {
    let mut child = cos(repo)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    (
        output.status.code().unwrap_or(-1),
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}")),
    )
}

#[test]
fn the_state_folder_stays_out_of_git() {
    let repo = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(repo.path())
            .output()
            .unwrap()
    };
    assert!(git(&["init", "-q"]).status.success());
    std::fs::write(repo.path().join("app.py"), "def main():\n    pass\n").unwrap();
    index(repo.path());
    assert!(repo.path().join(".cos/cos.db").exists());
    let status =
        String::from_utf8(git(&["status", "--porcelain", "--untracked-files=all"]).stdout).unwrap();
    assert_eq!(
        status.trim(),
        "?? app.py",
        "only the repository's own file: {status}"
    );
}

#[test]
fn two_processes_indexing_one_new_repository_at_once_both_succeed() {
    // a `cos serve` and an agent's `cos mcp` both index at start, say
    let repo = tempfile::tempdir().unwrap();
    for n in 0..400 {
        std::fs::write(
            repo.path().join(format!("module_{n}.py")),
            format!("def handler_{n}():\n    return {n}\n"),
        )
        .unwrap();
    }
    // the database exists before both start, as when one hub already runs
    assert!(
        cos(repo.path())
            .args(["module", "list"])
            .output()
            .unwrap()
            .status
            .success()
    );
    let runs: Vec<std::process::Child> = (0..2)
        .map(|_| {
            cos(repo.path())
                .arg("index")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let output = run.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let (_, summary) = run_with_stdin(
        repo.path(),
        &["tool", "call", "cos_graph_index", "--budget", "none"],
        "",
    );
    assert_eq!(summary["data"]["files"], 400, "{summary}");
    assert_eq!(summary["data"]["parsed"], 0, "{summary}");
}

#[test]
fn envelope_wrap_previews_the_agent_answer() {
    let repo = tempfile::tempdir().unwrap();
    let results: Vec<Value> = (0..3000)
        .map(|i| json!({"id": i, "name": format!("symbol_{i}")}))
        .collect();
    let payload = json!({"results": results, "count": 3000, "meta": {"truncated": false, "tokens_estimated": 3}});
    let (code, envelope) = run_with_stdin(
        repo.path(),
        &["envelope", "wrap", "--layer", "search"],
        &payload.to_string(),
    );
    assert_eq!(code, 0);
    assert_eq!(envelope["ok"], true);
    let meta = &envelope["data"]["meta"];
    assert_eq!(meta["layer"], "search");
    assert_eq!(meta["truncated"], true);
    assert_eq!(meta["truncated_results_from"], 3000);
    assert!(serde_json::to_string(&envelope).unwrap().len() <= 32_000);

    let (code, envelope) = run_with_stdin(
        repo.path(),
        &["envelope", "wrap", "--budget", "none"],
        &payload.to_string(),
    );
    assert_eq!(code, 0);
    assert_eq!(envelope["data"]["results"].as_array().unwrap().len(), 3000);

    let (code, envelope) = run_with_stdin(repo.path(), &["envelope", "wrap"], "[1,2]");
    assert_eq!(code, 1);
    assert_eq!(envelope["error"]["category"], "validation");
}

#[test]
fn module_switches_and_tool_calls_from_the_shell() {
    let repo = tempfile::tempdir().unwrap();
    let output = cos(repo.path())
        .args(["module", "disable", "graph"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = cos(repo.path()).args(["module", "list"]).output().unwrap();
    let listing = String::from_utf8_lossy(&output.stdout);
    let graph_line = listing
        .lines()
        .find(|l| l.starts_with("graph"))
        .expect("graph listed");
    assert!(graph_line.contains("disabled"), "{listing}");
    assert!(
        repo.path().join(".cos/subsystems-state.json").exists(),
        "state defaults to <repo>/.cos"
    );

    let output = cos(repo.path())
        .args(["module", "disable", "kitchen"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("board"),
        "lists allowed modules"
    );

    let output = cos(repo.path())
        .args(["tool", "call", "cos_hub_health", "--budget", "none"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let envelope: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(envelope["ok"], true);
    assert_eq!(envelope["data"]["meta"]["layer"], "health");
    let graph = envelope["data"]["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "graph")
        .cloned()
        .unwrap();
    assert_eq!(graph["enabled"], false);

    let output = cos(repo.path())
        .args([
            "tool",
            "call",
            "cos_module_set",
            "--args",
            r#"{"module": 3}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let envelope: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(envelope["error"]["details"]["field"], "module");

    let output = cos(repo.path()).args(["tool", "list"]).output().unwrap();
    let listing = String::from_utf8_lossy(&output.stdout);
    for name in ["cos_hub_health", "cos_module_list", "cos_module_set"] {
        assert!(listing.contains(name), "{listing}");
    }
}

#[test]
fn openapi_command_prints_the_committed_spec() {
    let repo = tempfile::tempdir().unwrap();
    let output = cos(repo.path()).arg("openapi").output().unwrap();
    let committed =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json")).unwrap();
    assert_eq!(output.stdout, committed);
}

#[test]
fn serve_answers_then_stops_cleanly_on_sigterm() {
    let repo = tempfile::tempdir().unwrap();
    let mut child = serve_on_any_port(repo.path());
    let address = announced_address(&mut child);
    let body = health_of(&address);
    assert_eq!(body["data"]["status"], "ok");
    assert_eq!(
        std::path::Path::new(body["data"]["repo_root"].as_str().unwrap()),
        repo.path().canonicalize().unwrap(),
        "serves the current directory"
    );
    // some writes, so the write-ahead log holds something
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = reqwest::Client::new();
        for n in 0..20 {
            let created = client
                .post(format!("http://{address}/api/board/tasks"))
                .json(&json!({"title": format!("task {n}")}))
                .send()
                .await
                .unwrap();
            assert_eq!(created.status().as_u16(), 201);
        }
    });
    let wal = repo.path().join(".cos/cos.db-wal");
    assert!(std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0) > 0);
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "graceful shutdown exits 0, got {status}");
            let left = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
            assert_eq!(left, 0, "a clean shutdown empties the write-ahead log");
            break;
        }
        assert!(Instant::now() < deadline, "serve did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn minified_bundles_are_left_out_of_the_graph_and_search_and_their_sources_kept() {
    let repo = tempfile::tempdir().unwrap();
    let source =
        "export function renderBoard(cards) {\n  return cards.map((card) => card.title);\n}\n";
    std::fs::create_dir_all(repo.path().join("ui")).unwrap();
    std::fs::write(repo.path().join("ui/board.js"), source).unwrap();
    // what a bundler makes of it: a few very long lines of short names
    let bundle = format!(
        "function Ev(e){{return e.map(t=>t.title)}}{}\nexport{{Ev as renderBoardBundled}};\n",
        ";var wv=1".repeat(600)
    );
    std::fs::create_dir_all(repo.path().join("static/assets")).unwrap();
    std::fs::write(repo.path().join("static/assets/index-3f2a.js"), bundle).unwrap();
    std::fs::write(
        repo.path().join("static/vendor.min.js"),
        "function vendorThing(){}\n",
    )
    .unwrap();
    let output = cos(repo.path()).arg("index").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let summary = String::from_utf8(output.stdout).unwrap();
    assert!(
        summary.contains("indexed 1 file in ") && summary.contains(", 2 skipped,"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "left out: static/assets/index-3f2a.js (minified), static/vendor.min.js (minified)\n"
        ),
        "which files, and why: {summary}"
    );
    let answer_to = |query: &str| -> Value {
        let output = cos(repo.path())
            .args(["search", query, "--json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let paths_found = |query: &str| -> Vec<String> {
        let mut paths: Vec<String> = answer_to(query)["data"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|hit| hit["path"].as_str().map(str::to_string))
            .collect();
        paths.dedup();
        paths
    };
    assert_eq!(
        paths_found("renderBoard"),
        ["ui/board.js"],
        "the source is found"
    );
    assert!(paths_found("Ev").is_empty(), "the bundle's names are not");
    assert!(paths_found("renderBoardBundled").is_empty());
    assert!(
        paths_found("vendorThing").is_empty(),
        "nor what a file named .min.js holds"
    );
    assert_eq!(
        answer_to("renderBoardBundled")["data"]["notes"],
        json!([
            "no symbol, section, task or evidence holds `renderBoardBundled`",
            "2 files of the repository are not indexed, so not searched: static/assets/index-3f2a.js (minified), static/vendor.min.js (minified) (`cos index` lists them)"
        ]),
        "an empty answer says what it could not search, since a left-out file holds the word"
    );
    assert_eq!(
        answer_to("nowhereAtAll")["data"]["notes"],
        json!(["no symbol, section, task or evidence holds `nowhereAtAll`"]),
        "left-out files that could not have held a hit go unmentioned"
    );
    let tasks_only = answer_to("renderBoardBundled area:tasks");
    assert!(
        !tasks_only["data"]["notes"]
            .to_string()
            .contains("not indexed"),
        "a query of the tasks alone is not told about code files: {tasks_only}"
    );
    // many left out: the first 20 named in the tool's summary, all counted
    for n in 0..23 {
        std::fs::write(
            repo.path().join(format!("static/plugin{n:02}.min.js")),
            "var a=1;\n",
        )
        .unwrap();
    }
    let output = cos(repo.path())
        .args(["tool", "call", "cos_graph_index", "--budget", "none"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["data"]["skipped"], 25, "{summary}");
    let named = summary["data"]["left_out"].as_array().unwrap();
    assert_eq!(named.len(), 20, "{summary}");
    assert_eq!(
        named[0],
        json!({"path": "static/assets/index-3f2a.js", "why": "minified"}),
        "in path order"
    );
    let output = cos(repo.path()).arg("index").output().unwrap();
    let printed = String::from_utf8(output.stdout).unwrap();
    assert!(
        printed.contains("static/plugin03.min.js (minified) and 20 more\n"),
        "five named, the rest counted: {printed}"
    );
}

#[test]
fn index_ends_with_a_summary_of_files_kinds_and_parse_errors() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("db.py"),
        "def connect():\n    pass\n\ndef reconnect():\n    connect()\n",
    )
    .unwrap();
    // an unclosed call: tree-sitter recovers, the file counts as one with parse errors
    std::fs::write(repo.path().join("broken.py"), "def oops(:\n    call(\n").unwrap();
    let output = cos(repo.path()).arg("index").output().unwrap();
    assert!(output.status.success());
    let summary = String::from_utf8(output.stdout).unwrap();
    assert!(
        summary.contains("indexed 2 files in ")
            && summary
                .contains(": 2 parsed, 0 unchanged, 0 removed, 0 skipped, 1 with parse errors"),
        "{summary}"
    );
    assert!(summary.contains("function 3"), "nodes by kind: {summary}");
    assert!(summary.contains("calls 1"), "edges by kind: {summary}");
    // a second run reads nothing again
    let again = cos(repo.path()).arg("index").output().unwrap();
    assert!(
        String::from_utf8(again.stdout)
            .unwrap()
            .contains(": 0 parsed, 2 unchanged")
    );
}

#[test]
fn search_prints_a_readable_list_or_the_envelope() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("db.py"),
        "def open_connection():\n    pass\n\ndef reconnect():\n    open_connection()\n",
    )
    .unwrap();
    index(repo.path());
    let output = cos(repo.path())
        .args(["search", "openConnection"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let list = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = list.lines().collect();
    assert!(
        lines[0].starts_with("3 hits (code 2, docs 0, evidence 0, symbols 1, tasks 0)"),
        "{list}"
    );
    // another spelling of the name: a name match, not the exact definition
    assert!(
        lines[1].contains("symbols") && lines[1].contains("db.py:1") && lines[1].contains("[name]"),
        "{list}"
    );
    assert_eq!(lines[2].trim(), "def open_connection():");
    // --json: the envelope, for scripts
    let output = cos(repo.path())
        .args(["search", "reconnect", "--json", "--limit", "1"])
        .output()
        .unwrap();
    let envelope: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(envelope["ok"], true);
    assert_eq!(
        envelope["data"]["hits"][0]["opens"]["uid"],
        "code:function:db.py::reconnect"
    );
    assert!(envelope["data"]["next_cursor"].is_string());
    // a refusal goes to stderr with its message, exit 1
    let output = cos(repo.path())
        .args(["search", "kind:banana x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("kind: one of class"));
}

#[test]
fn search_reads_the_code_as_it_is_now_without_an_index_command() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("db.py"),
        "def open_connection():\n    pass\n",
    )
    .unwrap();
    // never indexed: the first search indexes the code first, and says so
    // in one line, with no log lines beside it unless RUST_LOG asks (a
    // one-shot command logs warnings only)
    let output = cos(repo.path())
        .env_remove("RUST_LOG")
        .args(["search", "open_connection"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let list = String::from_utf8(output.stdout).unwrap();
    assert!(list.contains("symbols 1"), "{list}");
    assert!(!list.contains("not indexed"), "{list}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.starts_with("cos: indexed the code first (1 new or changed file parsed"),
        "{said}"
    );
    // a file saved since: found by the next search, and only it parsed
    std::fs::write(repo.path().join("pool.py"), "def drain_pool():\n    pass\n").unwrap();
    let output = cos(repo.path())
        .args(["search", "drain_pool", "--json"])
        .output()
        .unwrap();
    let envelope: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        envelope["data"]["hits"][0]["opens"]["uid"], "code:function:pool.py::drain_pool",
        "{envelope}"
    );
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("(1 new or changed file parsed, 0 removed"),
        "{said}"
    );
    // nothing changed: nothing said
    let output = cos(repo.path())
        .env_remove("RUST_LOG")
        .args(["search", "drain_pool"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{output:?}");
    // a query may start with an exclusion, not taken for an option
    let output = cos(repo.path())
        .args(["search", "-open_connection drain_pool", "--limit", "5"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let list = String::from_utf8(output.stdout).unwrap();
    assert!(
        list.contains("pool.py") && !list.contains("db.py"),
        "{list}"
    );
}

/// Runs `cos` from a folder that is not the repository, with `args`.
fn cos_elsewhere(args: &[&str]) -> std::process::Output {
    let elsewhere = tempfile::tempdir().unwrap();
    cos(elsewhere.path()).args(args).output().unwrap()
}

#[test]
fn every_subcommand_that_touches_a_repository_takes_repo_and_state_dir() {
    let repo = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("m.py"), "def f():\n    pass\n").unwrap();
    let repo_arg = repo.path().to_str().unwrap();
    let state_arg = state.path().to_str().unwrap();
    let hub = ["--repo", repo_arg, "--state-dir", state_arg];

    let index = cos_elsewhere(&[&["index"], &hub[..]].concat());
    assert!(index.status.success(), "{index:?}");
    assert!(String::from_utf8_lossy(&index.stdout).contains("indexed 1 file in"));
    assert!(
        state.path().join("cos.db").exists(),
        "the state goes where --state-dir says"
    );
    assert!(!repo.path().join(".cos").exists());

    // before the subcommand as well as after it
    let modules = cos_elsewhere(&[&hub[..], &["module", "list"]].concat());
    assert!(modules.status.success(), "{modules:?}");
    assert!(String::from_utf8_lossy(&modules.stdout).contains("graph"));

    let health = cos_elsewhere(&[&["tool", "call", "cos_hub_health"], &hub[..]].concat());
    assert!(health.status.success(), "{health:?}");
    let health: Value = serde_json::from_slice(&health.stdout).unwrap();
    assert_eq!(
        std::path::Path::new(health["data"]["repo_root"].as_str().unwrap()),
        repo.path().canonicalize().unwrap()
    );
    assert_eq!(health["data"]["state_dir"], state_arg);

    let export = tempfile::tempdir().unwrap();
    let board = cos_elsewhere(
        &[
            &["board", "export", "--dir", export.path().to_str().unwrap()],
            &hub[..],
        ]
        .concat(),
    );
    assert!(board.status.success(), "{board:?}");

    // the MCP server serves the repository --repo names
    let mut mcp = cos(tempfile::tempdir().unwrap().path())
        .args([&["mcp"], &hub[..]].concat())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = mcp.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "cli-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "cos_graph_search", "arguments": {"query": "f"}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut stdout = BufReader::new(mcp.stdout.take().unwrap());
    let mut answer = Value::Null;
    let mut line = String::new();
    while answer.is_null() {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the MCP server stopped"
        );
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            answer = message;
        }
    }
    drop(stdin);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("code:function:m.py::f"), "{text}");
    assert!(mcp.wait().unwrap().success());

    // two different repositories are refused, not guessed between
    let other = tempfile::tempdir().unwrap();
    let both = cos_elsewhere(&["index", other.path().to_str().unwrap(), "--repo", repo_arg]);
    assert_eq!(both.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&both.stderr).contains("two repositories"));
    // the same one written twice, two ways, is one
    let same = cos(repo.path())
        .args(["index", ".", "--repo", repo_arg, "--state-dir", state_arg])
        .output()
        .unwrap();
    assert!(same.status.success(), "{same:?}");
}

#[test]
fn serve_takes_repo_and_state_dir() {
    let repo = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut child = cos(tempfile::tempdir().unwrap().path())
        .args(["serve", "--port", "0", "--repo"])
        .arg(repo.path())
        .arg("--state-dir")
        .arg(state.path())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let body = health_of(&announced_address(&mut child));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        std::path::Path::new(body["data"]["repo_root"].as_str().unwrap()),
        repo.path().canonicalize().unwrap()
    );
    assert_eq!(
        std::path::Path::new(body["data"]["state_dir"].as_str().unwrap()),
        state.path()
    );
}

#[test]
fn serve_keeps_serving_when_its_stderr_is_closed() {
    let repo = tempfile::tempdir().unwrap();
    // a free port, known before the server starts: its stderr is never read
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = cos(repo.path())
        .args(["serve", "--port", &port.to_string()])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // hang up before the server says anything, as `cos serve 2>&1 | true` does:
    // every line it writes to stderr from now on meets a closed pipe
    drop(child.stderr.take());
    let address = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let body = loop {
        if let Ok(stream) = std::net::TcpStream::connect(&address) {
            drop(stream);
            break health_of(&address);
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "serve died once its stderr was closed"
        );
        assert!(Instant::now() < deadline, "serve never listened");
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(body["data"]["status"], "ok");
}

#[test]
fn no_secret_reaches_the_logs_at_any_level() {
    let repo = tempfile::tempdir().unwrap();
    let token = "bearer-secret-4f1c9a7e2b";
    let in_url = "url-secret-93d0be41";
    let mut child = cos(repo.path())
        .args(["serve", "--port", "0"])
        .env("RUST_LOG", "trace")
        .env("COS_HUB_TOKEN", token)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let mut logged = String::new();
    while !line.contains("on http://") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "serve stopped");
        logged.push_str(&line);
    }
    let address = address_in(&line).unwrap();
    let drain = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
        rest
    });
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = reqwest::Client::new();
        for path in [
            format!("/api/health?token={in_url}"),
            format!("/api/board/tasks/TASK-9?access_token={in_url}"),
            format!("/api/nowhere?token={in_url}"),
        ] {
            for authorization in [format!("Bearer {token}"), format!("Bearer {token}x")] {
                let _ = client
                    .get(format!("http://{address}{path}"))
                    .header("Authorization", &authorization)
                    .send()
                    .await
                    .unwrap();
            }
        }
    });
    let _ = child.kill();
    let _ = child.wait();
    logged.push_str(&drain.join().unwrap());
    assert!(logged.contains("request"), "trace logging was on: {logged}");
    let forensic = std::fs::read_to_string(repo.path().join(".cos/.mcp.log")).unwrap_or_default();
    for secret in [token, in_url] {
        assert!(!logged.contains(secret), "{secret} in the server log");
        assert!(!forensic.contains(secret), "{secret} in .mcp.log");
    }
}

#[test]
fn cos_docs_lists_mounts_documents_and_history_one_line_each() {
    let repo = tempfile::tempdir().unwrap();
    let folder = repo.path().join("docs/notes");
    std::fs::create_dir_all(&folder).unwrap();
    // more than one page (1000) of documents
    for n in 0..1005 {
        std::fs::write(folder.join(format!("n{n:04}.md")), format!("# Note {n}\n")).unwrap();
    }
    let lines = |args: &[&str]| -> Vec<String> {
        let output = cos(repo.path()).args(args).output().unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let mounts = lines(&["docs", "mounts"]);
    assert_eq!(mounts.len(), 2, "{mounts:?}");
    assert!(mounts[0].starts_with("docs\t"), "{mounts:?}");
    assert!(
        mounts[0].ends_with("agents read_write, people read_write"),
        "{mounts:?}"
    );
    assert!(mounts[1].contains("agents read_only"), "{mounts:?}");

    let listed = lines(&["docs", "list", "docs", "--prefix", "notes/"]);
    assert_eq!(listed.len(), 1005, "every page followed");
    assert!(
        listed[0].starts_with("notes/n0000.md\trev 1\t"),
        "{listed:?}"
    );
    assert!(listed[0].ends_with("\t9 bytes\tNote 0"), "{listed:?}");
    assert!(listed[1004].starts_with("notes/n1004.md\t"), "{listed:?}");
    // --json: one page's envelope, continued by --cursor
    let page = cos(repo.path())
        .args(["docs", "list", "docs", "--json"])
        .output()
        .unwrap();
    let page: Value = serde_json::from_slice(&page.stdout).unwrap();
    assert_eq!(page["data"]["documents"].as_array().unwrap().len(), 1000);
    let cursor = page["data"]["next_cursor"].as_str().unwrap();
    let rest = cos(repo.path())
        .args(["docs", "list", "docs", "--json", "--cursor", cursor])
        .output()
        .unwrap();
    let rest: Value = serde_json::from_slice(&rest.stdout).unwrap();
    assert_eq!(rest["data"]["documents"].as_array().unwrap().len(), 5);

    let history = lines(&["docs", "history", "--mount", "docs", "--limit", "2"]);
    assert_eq!(
        history.len(),
        3,
        "two entries and how to go on: {history:?}"
    );
    let fields: Vec<&str> = history[0].split('\t').collect();
    assert_eq!(fields[0], "1005", "{history:?}");
    assert_eq!(fields[2], "external", "{history:?}");
    assert!(
        fields[3].starts_with("docs/notes/n") && fields[3].ends_with(" rev 1"),
        "{history:?}"
    );
    assert_eq!(fields[4].len(), 12, "a short hash: {history:?}");
    assert!(history[2].starts_with("more: --cursor "), "{history:?}");
    let cursor = history[2].trim_start_matches("more: --cursor ");
    let next = lines(&[
        "docs", "history", "--mount", "docs", "--limit", "2", "--cursor", cursor,
    ]);
    assert!(next[0].starts_with("1003\t"), "{next:?}");
}

#[test]
fn cos_docs_creates_reads_patches_and_audits_from_the_shell() {
    let repo = tempfile::tempdir().unwrap();
    let text = "# Runbook\n## Restart\nsystemctl restart app\n";
    let (code, created) = run_with_stdin(
        repo.path(),
        &[
            "docs",
            "create",
            "docs",
            "ops/runbook.md",
            "--request-id",
            "shell-1",
        ],
        text,
    );
    assert_eq!(code, 0, "{created}");
    assert_eq!(created["data"]["state"], "committed");
    let read = cos(repo.path())
        .args(["docs", "read", "docs", "ops/runbook.md"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&read.stdout),
        text,
        "the Markdown itself"
    );
    let document = &created["data"]["document"];
    let (rev, hash) = (
        document["rev"].to_string(),
        document["hash"].as_str().unwrap().to_string(),
    );
    let (code, patched) = run_with_stdin(
        repo.path(),
        &[
            "docs",
            "patch",
            "docs",
            "ops/runbook.md",
            "--rev",
            &rev,
            "--hash",
            &hash,
            "--request-id",
            "shell-2",
            "--operations",
            "-",
        ],
        r#"[{"op": "append_to_section", "section": "Restart", "content": "check /health"}]"#,
    );
    assert_eq!(code, 0, "{patched}");
    let section = cos(repo.path())
        .args([
            "docs",
            "read",
            "docs",
            "ops/runbook.md",
            "--section",
            "restart",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&section.stdout),
        "## Restart\nsystemctl restart app\ncheck /health\n"
    );
    let (code, receipt) = run_with_stdin(repo.path(), &["docs", "receipt", "shell-2"], "");
    assert_eq!(
        (code, receipt["data"]["state"].as_str()),
        (0, Some("committed"))
    );
    let audit = cos(repo.path()).args(["docs", "audit"]).output().unwrap();
    assert!(audit.status.success());
    let stderr = String::from_utf8_lossy(&audit.stderr);
    assert!(stderr.starts_with("checkpoint: 2:"), "{stderr}");
    // a stale base from the shell is refused, exit 1
    let (code, stale) = run_with_stdin(
        repo.path(),
        &[
            "docs",
            "patch",
            "docs",
            "ops/runbook.md",
            "--rev",
            &rev,
            "--hash",
            &hash,
            "--request-id",
            "shell-3",
            "--operations",
            "[{\"op\": \"append\", \"content\": \"x\"}]",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert_eq!(stale["error"]["code"], "STALE_REVISION");
}

#[test]
fn cos_docs_takes_the_short_hash_the_listing_prints_and_checks_it() {
    let repo = tempfile::tempdir().unwrap();
    let (code, created) = run_with_stdin(
        repo.path(),
        &["docs", "create", "docs", "notes.md", "--request-id", "s-1"],
        "# Notes\n",
    );
    assert_eq!(code, 0, "{created}");
    let listed = cos(repo.path())
        .args(["docs", "list", "docs"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).to_string();
    let short = listed.split('\t').nth(2).unwrap().to_string();
    assert_eq!(short.len(), 12, "{listed}");
    let full = created["data"]["document"]["hash"].as_str().unwrap();
    assert!(full.starts_with(&short));
    let patch = |rev: &str, hash: &str, id: &str| {
        let output = cos(repo.path())
            .args([
                "docs", "patch", "docs", "notes.md", "--rev", rev, "--hash", hash,
            ])
            .args(["--request-id", id, "--operations"])
            .arg(r#"[{"op": "append", "content": "more"}]"#)
            .output()
            .unwrap();
        let envelope: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        (output.status.code(), envelope, stderr)
    };
    // the listing's 12 digits stand for the whole hash of that revision
    let (code, patched, _) = patch("1", &short, "s-2");
    assert_eq!(code, Some(0), "{patched}");
    assert_eq!(patched["data"]["previous"]["hash"], full);
    // the same short base again is stale, with what changed, as a whole one is
    let (code, stale, _) = patch("1", &short, "s-3");
    assert_eq!(code, Some(1));
    assert_eq!(stale["error"]["code"], "STALE_REVISION", "{stale}");
    // digits that are not that revision's: refused before anything is sent
    let (code, _, stderr) = patch("2", "000000000000", "s-4");
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("rev 2 of notes.md has the hash")
            && stderr.contains("does not start with 000000000000"),
        "{stderr}"
    );
    // fewer digits than the listing prints: the tool names the field
    let (code, refused, _) = patch("2", &short[..6], "s-5");
    assert_eq!(code, Some(1));
    assert_eq!(refused["error"]["code"], "E_ARGUMENT", "{refused}");
    assert_eq!(refused["error"]["details"]["field"], "base.hash");
    let history = cos(repo.path())
        .args(["docs", "history", "--mount", "docs"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&history.stdout).lines().count(),
        2,
        "the create and one patch: nothing else was written"
    );
}

#[test]
fn cos_docs_moves_and_deletes_from_the_shell_and_names_the_request_it_made_up() {
    let repo = tempfile::tempdir().unwrap();
    let created = cos(repo.path())
        .args(["docs", "create", "docs", "drafts/plan.md"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(b"# Plan\n")?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(created.status.success(), "{created:?}");
    let receipt: Value = serde_json::from_slice(&created.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&created.stderr);
    let request_id = receipt["data"]["request_id"].as_str().unwrap();
    assert!(request_id.starts_with("cli-"), "{receipt}");
    assert_eq!(
        stderr.trim(),
        format!("request_id: {request_id}"),
        "the made-up ID is said, so the write can be checked later"
    );
    let (code, checked) = run_with_stdin(repo.path(), &["docs", "receipt", request_id], "");
    assert_eq!(
        (code, checked["data"]["state"].as_str()),
        (0, Some("committed"))
    );

    let base = |receipt: &Value| {
        let document = &receipt["data"]["document"];
        (
            document["rev"].to_string(),
            document["hash"].as_str().unwrap().to_string(),
        )
    };
    let (rev, hash) = base(&receipt);
    let moving = [
        "docs",
        "move",
        "docs",
        "drafts/plan.md",
        "plans/2027.md",
        "--rev",
        &rev,
        "--hash",
        &hash,
        "--request-id",
        "move-1",
    ];
    let (code, moved) = run_with_stdin(repo.path(), &moving, "");
    assert_eq!(code, 0, "{moved}");
    assert_eq!(moved["data"]["document"]["path"], "plans/2027.md");
    assert_eq!(moved["data"]["previous"]["path"], "drafts/plan.md");
    assert!(!repo.path().join("docs/drafts/plan.md").exists());
    assert_eq!(
        std::fs::read_to_string(repo.path().join("docs/plans/2027.md")).unwrap(),
        "# Plan\n"
    );
    let (code, again) = run_with_stdin(repo.path(), &moving, "");
    assert_eq!(
        code, 0,
        "the same request answered from its receipt: {again}"
    );
    assert_eq!(again["data"]["seq"], moved["data"]["seq"]);

    let delete = |rev: &str, hash: &str, request_id: &str| {
        let deleting = [
            "docs",
            "delete",
            "docs",
            "plans/2027.md",
            "--rev",
            rev,
            "--hash",
            hash,
            "--request-id",
            request_id,
        ];
        run_with_stdin(repo.path(), &deleting, "")
    };
    let (code, stale) = delete(&rev, &hash, "delete-1");
    assert_eq!(code, 1, "a base from before the move: {stale}");
    assert_eq!(stale["error"]["code"], "STALE_REVISION");
    let (rev, hash) = base(&moved);
    let (code, deleted) = delete(&rev, &hash, "delete-2");
    assert_eq!(code, 0, "{deleted}");
    assert!(!repo.path().join("docs/plans/2027.md").exists());
    let listed = cos(repo.path())
        .args(["docs", "list", "docs"])
        .output()
        .unwrap();
    assert!(listed.status.success());
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "", "nothing left");
    let history = cos(repo.path()).args(["docs", "history"]).output().unwrap();
    let ops: Vec<String> = String::from_utf8_lossy(&history.stdout)
        .lines()
        .filter_map(|line| line.split('\t').nth(2).map(str::to_string))
        .collect();
    assert_eq!(ops, ["delete", "move", "create"], "newest first");
}

/// `cos ARGS` in `repo`: its exit code, stdout and stderr.
fn exit_out_err(repo: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = cos(repo).args(args).output().unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn cos_setup_writes_each_clients_file_merged_idempotent_and_removable() {
    let repo = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| exit_out_err(repo.path(), args);
    // Claude Code: a project file that already lists another server
    std::fs::write(
        repo.path().join(".mcp.json"),
        r#"{"mcpServers": {"other": {"command": "other-server"}}}"#,
    )
    .unwrap();
    let (code, out, _) = run(&["setup", "claude-code"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("added the cos-hub server to ./.mcp.json"),
        "{out}"
    );
    let written = std::fs::read_to_string(repo.path().join(".mcp.json")).unwrap();
    let value: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(value["mcpServers"]["other"]["command"], "other-server");
    assert_eq!(
        value["mcpServers"]["cos-hub"],
        json!({"command": "cos", "args": ["mcp", "."]})
    );
    let (code, out, _) = run(&["setup", "claude-code"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("nothing changed"), "{out}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".mcp.json")).unwrap(),
        written
    );

    // every client's file, in its own place and shape
    for (client, file, key) in [
        ("codex", ".codex/config.toml", "[mcp_servers.cos-hub]"),
        ("cursor", ".cursor/mcp.json", "\"mcpServers\""),
        ("vscode", ".vscode/mcp.json", "\"servers\""),
    ] {
        let (code, out, _) = run(&["setup", client, "--dry-run"]);
        assert_eq!(code, Some(0), "{out}");
        assert!(
            out.contains("--dry-run: nothing written") && out.contains(key),
            "{out}"
        );
        assert!(!repo.path().join(file).exists(), "a dry run writes nothing");
        let (code, _, _) = run(&["setup", client]);
        assert_eq!(code, Some(0));
        let text = std::fs::read_to_string(repo.path().join(file)).unwrap();
        assert!(text.contains(key) && text.contains("cos"), "{text}");
        let (code, out, _) = run(&["setup", client, "--remove"]);
        assert_eq!(code, Some(0));
        assert!(out.contains("removed the cos-hub server"), "{out}");
        assert!(!repo.path().join(file).exists(), "it held nothing else");
    }

    // removal keeps the others; a broken file is refused and left as it was
    let (code, _, _) = run(&["setup", "claude-code", "--remove"]);
    assert_eq!(code, Some(0));
    let left: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.path().join(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(
        left,
        json!({"mcpServers": {"other": {"command": "other-server"}}})
    );
    std::fs::create_dir_all(repo.path().join(".cursor")).unwrap();
    std::fs::write(repo.path().join(".cursor/mcp.json"), "{ not json").unwrap();
    let (code, _, err) = run(&["setup", "cursor"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains(".cursor/mcp.json is not plain JSON") && err.contains("nothing was written"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".cursor/mcp.json")).unwrap(),
        "{ not json"
    );
}

#[test]
fn cos_task_lists_shows_adds_edits_moves_claims_and_refuses_in_plain_words() {
    let repo = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| exit_out_err(repo.path(), args);
    let (code, out, err) = run(&[
        "task",
        "add",
        "Parse the release notes",
        "--kind",
        "bug",
        "--priority",
        "P1",
        "--label",
        "docs",
        "--description",
        "Read CHANGELOG.md",
        "--actor",
        "human:ann",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.starts_with("TASK-001  Parse the release notes\n"),
        "{out}"
    );
    assert!(
        out.contains("  status      icebox\n") && out.contains("Read CHANGELOG.md"),
        "{out}"
    );
    let (code, _, _) = run(&["task", "add", "Ship it", "--depends-on", "TASK-001"]);
    assert_eq!(code, Some(0));

    // a request ID nothing committed under
    let (code, out, _) = run(&["task", "receipt", "never-sent"]);
    assert_eq!(
        (code, out.as_str()),
        (Some(0), "never-sent: not committed\n")
    );

    // aligned columns, no colour into a pipe
    let (code, out, _) = run(&["task", "list"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "TASK-001  icebox  P1  bug      Parse the release notes\n\
         TASK-002  icebox  P2  feature  Ship it\n\
         2 tasks\n"
    );
    assert!(!out.contains('\x1b'));
    let (_, out, _) = run(&["task", "search", "release"]);
    assert!(
        out.starts_with("TASK-001 ") && out.ends_with("1 task\n"),
        "{out}"
    );

    // edits and moves read the version and status they expect when not given
    let (code, out, err) = run(&["task", "edit", "TASK-001", "--priority", "P0"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("  priority    P0\n"), "{out}");
    let (code, out, _) = run(&["task", "move", "TASK-001", "in_progress", "--actor", "ann"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("  status      in_progress\n"), "{out}");
    let (_, out, _) = run(&["task", "history", "TASK-001"]);
    assert!(
        out.contains("priority: P1 -> P0") && out.contains("status: icebox -> in_progress"),
        "{out}"
    );
    assert!(out.ends_with("4 changes in all\n"), "{out}");

    // the contract's refusals, in plain words and a non-zero status
    let (code, _, err) = run(&[
        "task",
        "edit",
        "TASK-001",
        "--version",
        "1",
        "--title",
        "Late",
    ]);
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("cos task: ") && err.contains("version"),
        "{err}"
    );
    let (code, _, err) = run(&["task", "move", "TASK-002", "in_progress"]);
    assert_eq!(code, Some(1), "TASK-002 waits for TASK-001");
    assert!(err.contains("TASK-001"), "{err}");
    let (code, _, err) = run(&["task", "show", "TASK-099"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("TASK-099"), "{err}");
    // a move reads the task first: its refusal names the code as the others do
    let (code, _, err) = run(&["task", "move", "TASK-099", "done"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no task TASK-099 (E_NOT_FOUND)"), "{err}");
    let (code, _, err) = run(&["task", "list", "--status", "someday"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("status"), "{err}");
    let (code, _, err) = run(&["task", "claim", "--actor", "robot:x"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--actor: expected kind:id"), "{err}");

    // claim, and the envelope for scripts
    let (code, out, _) = run(&["task", "claim", "--actor", "agent:s-1", "--json"]);
    assert_eq!(code, Some(0));
    let envelope: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(envelope["ok"], true);
    let (code, out, _) = run(&["task", "show", "TASK-099", "--json"]);
    assert_eq!(code, Some(1));
    let envelope: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(envelope["ok"], false);
}
