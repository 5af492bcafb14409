//! `GET /api/changes` (and `cos changes`) on a repository with commits: the
//! definitions a change touches with their dependents, tests, tasks and
//! documents; working tree, staged and ranges; and the bad inputs.

use crate::common::TestServer;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

fn git(repo: &Path, args: &[&str]) {
    let done = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "user.email=t@example.org", "-c", "user.name=t"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&done.stderr)
    );
}

fn write(repo: &Path, path: &str, text: &str) {
    let full = repo.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

/// A repository with one commit: a database module, its caller, a test of
/// the caller, a guide naming `connect`, a settings file.
async fn committed() -> TestServer {
    let server = TestServer::start().await;
    let repo = server.repo();
    git(repo, &["init", "-q"]);
    write(
        repo,
        "db.py",
        "def connect():\n    return 1\n\n\ndef old_name():\n    return 2\n\n\ndef gone():\n    return 3\n",
    );
    write(
        repo,
        "store.py",
        "from db import connect, gone\n\n\ndef save():\n    return connect() + gone()\n",
    );
    write(
        repo,
        "tests/test_store.py",
        "from store import save\n\n\ndef test_save():\n    assert save() == 4\n",
    );
    write(
        repo,
        "docs/guide.md",
        "# Guide\n\n## Connecting\n\nCall `connect` to open the database.\n",
    );
    write(repo, "settings.toml", "debug = true\n");
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "first"]);
    server
}

async fn changes(server: &TestServer, query: &str) -> (u16, Value) {
    server.get(&format!("/api/changes{query}")).await
}

fn symbol<'a>(answer: &'a Value, name: &str) -> &'a Value {
    answer["data"]["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} among the changed symbols: {answer}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_lists_each_definition_with_its_dependents_tests_tasks_and_documents() {
    let server = committed().await;
    let repo = server.repo();
    let (status, task) = server
        .post_json("/api/board/tasks", json!({"title": "Make connect retry", "description": "Read the retry count from settings.toml."}))
        .await;
    assert_eq!(status, 201, "{task}");
    // connect modified, old_name renamed to new_name, gone removed (store still calls it)
    write(
        repo,
        "db.py",
        "def connect():\n    return 10\n\n\ndef new_name():\n    return 2\n",
    );
    write(repo, "settings.toml", "debug = false\n");
    let (status, answer) = changes(&server, "").await;
    assert_eq!(status, 200, "{answer}");
    let data = &answer["data"];
    assert_eq!(data["against"], "the working tree against HEAD");
    assert_eq!(data["summary"]["symbols"], 3);

    let connect = symbol(&answer, "connect");
    assert_eq!(connect["change"], "modified");
    let dependents: Vec<&str> = connect["dependents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["node"]["label"].as_str().unwrap())
        .collect();
    assert!(dependents.contains(&"save"), "{dependents:?}");
    assert_eq!(connect["tests"][0]["label"], "test_save");
    assert_eq!(connect["tasks"][0]["title"], "Make connect retry");
    assert_eq!(connect["documents"][0]["path"], "guide.md");

    let gone = symbol(&answer, "gone");
    assert_eq!(
        (gone["change"].as_str(), gone["risk"].as_str()),
        (Some("removed"), Some("high")),
        "callers remain: {gone}"
    );
    assert!(
        gone["risk_reason"]
            .as_str()
            .unwrap()
            .contains("still refer to it")
    );
    // the riskiest first
    assert_eq!(data["symbols"][0]["name"], "gone");

    let renamed = symbol(&answer, "new_name");
    assert_eq!(renamed["change"], "renamed");
    assert_eq!(renamed["renamed_from"], "code:function:db.py::old_name");
    assert!(data["summary"]["untested"].to_string().contains("new_name"));

    // a file the graph does not read, with the task that names it
    let settings = data["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "settings.toml")
        .unwrap();
    assert_eq!(
        (settings["change"].as_str(), settings["symbols"].as_u64()),
        (Some("modified"), Some(0))
    );
    assert_eq!(settings["tasks"][0]["title"], "Make connect retry");
}

#[tokio::test(flavor = "multi_thread")]
async fn staged_working_tree_and_a_range_each_compare_what_they_say() {
    let server = committed().await;
    let repo = server.repo();
    write(
        repo,
        "db.py",
        "def connect():\n    return 10\n\n\ndef old_name():\n    return 2\n\n\ndef gone():\n    return 3\n",
    );
    git(repo, &["add", "db.py"]);
    write(
        repo,
        "store.py",
        "from db import connect, gone\n\n\ndef save():\n    return connect() - gone()\n",
    );
    write(repo, "extra.py", "def brand_new():\n    return 0\n");
    let names = |answer: &Value| -> Vec<String> {
        let mut names: Vec<String> = answer["data"]["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    let (_, staged) = changes(&server, "?staged=true").await;
    assert_eq!(names(&staged), ["connect"], "{staged}");
    let (_, tree) = changes(&server, "").await;
    // untracked files are changes of the working tree too
    assert_eq!(names(&tree), ["brand_new", "connect", "save"], "{tree}");
    assert_eq!(symbol(&tree, "brand_new")["change"], "added");

    git(repo, &["commit", "-q", "-m", "second"]);
    let (status, range) = changes(&server, "?range=HEAD~1..HEAD").await;
    assert_eq!(status, 200, "{range}");
    assert_eq!(names(&range), ["connect"]);
    assert_eq!(range["data"]["against"], "HEAD against HEAD~1");
    let (_, quiet) = changes(&server, "?range=HEAD..HEAD").await;
    assert_eq!(
        quiet["data"]["summary"]["files"], 0,
        "a range with no changes is an empty answer: {quiet}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_refused_naming_the_argument() {
    let server = committed().await;
    for (query, wanted, field) in [
        ("?range=--output%3D%2Ftmp%2Fx", 400, "range"),
        ("?range=a%20b", 400, "range"),
        ("?range=", 400, "range"),
        // a ref that names no commit is not found, as any named thing
        ("?range=no-such-branch", 404, "range"),
        ("?range=HEAD..no-such-branch", 404, "range"),
        ("?range=HEAD&staged=true", 400, "range"),
        ("?depth=9", 400, "depth"),
    ] {
        let (status, answer) = changes(&server, query).await;
        assert_eq!(status, wanted, "{query}: {answer}");
        assert_eq!(
            answer["error"]["details"]["field"], field,
            "{query}: {answer}"
        );
    }
    // a binary file and a deleted one are changed files, never a fault
    std::fs::write(server.repo().join("logo.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();
    git(server.repo(), &["add", "logo.bin"]);
    git(server.repo(), &["commit", "-q", "-m", "logo"]);
    std::fs::write(server.repo().join("logo.bin"), [1u8, 0, 0, 2]).unwrap();
    std::fs::remove_file(server.repo().join("store.py")).unwrap();
    let (status, answer) = changes(&server, "").await;
    assert_eq!(status, 200, "{answer}");
    let files = answer["data"]["files"].to_string();
    assert!(
        files.contains("\"binary\":true") && files.contains("\"deleted\""),
        "{files}"
    );
    assert_eq!(symbol(&answer, "save")["change"], "removed");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repository_without_git_says_so() {
    let server = TestServer::start().await;
    let (status, answer) = changes(&server, "").await;
    assert_eq!(status, 503, "{answer}");
    assert_eq!(answer["error"]["code"], "E_UNAVAILABLE");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a git work tree")
    );
}

#[test]
fn an_answer_cut_to_the_agent_budget_continues_each_list_exactly() {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q"]);
    write(repo.path(), "base.py", "def base():\n    return 0\n");
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "first"]);
    let functions: String = (0..150)
        .map(|n| format!("def a_rather_long_function_name_number_{n:03}():\n    return {n}\n\n\n"))
        .collect();
    write(repo.path(), "many.py", &functions);
    let ask = |arguments: Value| -> Value {
        let output = Command::new(env!("CARGO_BIN_EXE_cos"))
            .arg("--repo")
            .arg(repo.path())
            .args(["tool", "call", "cos_changes", "--budget", "agent", "--args"])
            .arg(arguments.to_string())
            .env_remove("COS_STATE_DIR")
            .env("RUST_LOG", "warn")
            .output()
            .unwrap();
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let mut seen: Vec<String> = Vec::new();
    let mut pages = 0;
    let mut answer = ask(json!({}));
    assert_eq!(answer["data"]["summary"]["symbols"], 150, "{answer}");
    for _ in 0..40 {
        assert_eq!(answer["ok"], true, "{answer}");
        pages += 1;
        seen.extend(
            answer["data"]["symbols"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["name"].as_str().unwrap().to_string()),
        );
        let Some(cursor) = answer["data"]["next_cursors"]["symbols"].as_str() else {
            break;
        };
        assert_eq!(answer["data"]["meta"]["truncated"], true);
        answer = ask(json!({"cursor": cursor}));
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        (seen.len(), unique.len()),
        (150, 150),
        "every symbol once, in pages"
    );
    assert!(pages > 1, "the answer came in pages");
    // a cursor does not outlive the change it was made for
    let first = ask(json!({}));
    let cursor = first["data"]["next_cursors"]["symbols"]
        .as_str()
        .unwrap()
        .to_string();
    write(repo.path(), "base.py", "def base():\n    return 1\n");
    let stale = ask(json!({"cursor": cursor}));
    assert_eq!(stale["error"]["code"], "STALE_CURSOR", "{stale}");
}
