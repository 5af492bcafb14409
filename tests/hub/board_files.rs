//! The board as files, through the `cos` binary: the reference system's 1,007
//! real task files import whole, import is idempotent, export round-trips, and
//! refusals name the file and the reason.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/coding-os-tasks")
}

fn cos(repo: &Path, args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_cos"))
        .current_dir(repo)
        .env_remove("COS_STATE_DIR")
        .env("RUST_LOG", "warn")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap_or(-1), text)
}

fn tool(repo: &Path, name: &str, args: &str) -> Value {
    let (code, text) = cos(
        repo,
        &["tool", "call", name, "--budget", "none", "--args", args],
    );
    assert_eq!(code, 0, "{text}");
    serde_json::from_str(&text).unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn the_reference_systems_tasks_import_whole_and_idempotently() {
    let repo = tempfile::tempdir().unwrap();
    let tasks = repo.path().join("reference-tasks");
    copy_dir(&corpus(), &tasks);

    let (code, text) = cos(
        repo.path(),
        &["board", "import", "--dir", "reference-tasks"],
    );
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("imported: 1007 created, 0 updated, 0 unchanged, 0 refused"),
        "{text}"
    );
    assert!(
        text.contains("swimlanes added"),
        "its swimlanes join the board: {text}"
    );

    let (code, text) = cos(
        repo.path(),
        &["board", "import", "--dir", "reference-tasks"],
    );
    assert_eq!(code, 0);
    assert!(
        text.contains("imported: 0 created, 0 updated, 1007 unchanged, 0 refused"),
        "{text}"
    );

    // the facts a person relies on survive: statuses, dependencies, labels, dates, the body
    let task = tool(repo.path(), "cos_task_show", r#"{"id": "TASK-089"}"#);
    let data = &task["data"];
    assert_eq!(data["status"], "archive");
    assert_eq!(data["priority"], "P1");
    assert_eq!(data["swimlane"], "infra");
    assert_eq!(
        data["labels"],
        serde_json::json!(["board", "concurrency", "wip", "multi-agent", "ready"])
    );
    assert_eq!(data["completed_at"], "2026-06-04");
    assert!(
        data["description"]
            .as_str()
            .unwrap()
            .starts_with("# TASK-089: Per-session WIP")
    );
    let board = tool(repo.path(), "cos_task_board", "{}");
    assert_eq!(board["data"]["total_count"], 1007);

    let with_dependencies = std::fs::read_dir(&tasks)
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
        .find(|text| text.contains("depends_on: [TASK-361]"))
        .expect("the corpus has dependencies");
    let id = with_dependencies
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .unwrap()
        .to_string();
    let shown = tool(
        repo.path(),
        "cos_task_show",
        &format!(r#"{{"id": "{id}"}}"#),
    );
    assert_eq!(shown["data"]["depends_on"], serde_json::json!(["TASK-361"]));

    // the over-long title is shortened, the full title kept in the description
    let long = tool(repo.path(), "cos_task_show", r#"{"id": "TASK-786"}"#);
    assert!(long["data"]["title"].as_str().unwrap().chars().count() <= 200);
    assert!(
        long["data"]["description"]
            .as_str()
            .unwrap()
            .contains("Marketplace top-nav (EM coming-soon)")
    );

    // export, then import into a fresh repository: the same board
    let (code, text) = cos(repo.path(), &["board", "export", "--dir", "board"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("1007 written"), "{text}");
    let (_, text) = cos(repo.path(), &["board", "export", "--dir", "board"]);
    assert!(
        text.contains("0 written, 1007 unchanged"),
        "export is stable: {text}"
    );
    let (_, text) = cos(repo.path(), &["board", "import", "--dir", "board"]);
    assert!(
        text.contains("0 created, 0 updated, 1007 unchanged"),
        "our own files read back unchanged: {text}"
    );

    let second = tempfile::tempdir().unwrap();
    copy_dir(&repo.path().join("board"), &second.path().join("board"));
    let (code, text) = cos(second.path(), &["board", "import", "--dir", "board"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("1007 created"), "{text}");
    let (_, _) = cos(second.path(), &["board", "export", "--dir", "again"]);
    for entry in std::fs::read_dir(repo.path().join("board")).unwrap() {
        let name = entry.unwrap().file_name();
        let first = std::fs::read(repo.path().join("board").join(&name)).unwrap();
        let again = std::fs::read(second.path().join("again").join(&name)).unwrap();
        assert!(first == again, "{name:?} differs after a round trip");
    }
}

#[test]
fn refusals_name_the_file_and_the_reason() {
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path().join("tasks");
    std::fs::create_dir_all(&dir).unwrap();
    let good = "---\nid: TASK-1\ntitle: Good\nstatus: icebox\nkind: bug\npriority: P1\n---\nbody\n";
    std::fs::write(dir.join("TASK-1-good.md"), good).unwrap();
    std::fs::write(dir.join("TASK-1-duplicate.md"), good).unwrap();
    std::fs::write(dir.join("TASK-2-no-front-matter.md"), "# just text\n").unwrap();
    std::fs::write(
        dir.join("TASK-3-bad-status.md"),
        "---\nid: TASK-3\ntitle: x\nstatus: doing\nkind: bug\npriority: P1\n---\n",
    )
    .unwrap();
    std::fs::write(dir.join("TASK-4-bad-yaml.md"), "---\nid: [TASK-4\n---\n").unwrap();
    std::fs::write(dir.join("TASK-5-bad-dep.md"), "---\nid: TASK-5\ntitle: y\nstatus: icebox\nkind: bug\npriority: P1\ndepends_on: [TASK-77]\n---\n").unwrap();

    let (code, text) = cos(repo.path(), &["board", "import", "--dir", "tasks"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("2 created"), "{text}");
    assert!(text.contains("4 refused"), "{text}");
    assert!(
        text.contains("refused: TASK-1-good.md: another file already holds TASK-001")
            || text.contains("refused: TASK-1-duplicate.md"),
        "{text}"
    );
    assert!(
        text.contains("refused: TASK-2-no-front-matter.md: no front matter"),
        "{text}"
    );
    assert!(
        text.contains("refused: TASK-3-bad-status.md: status: \"doing\" is not one of"),
        "{text}"
    );
    assert!(
        text.contains("refused: TASK-4-bad-yaml.md: front matter is not valid YAML"),
        "{text}"
    );
    assert!(
        text.contains("warning: TASK-5-bad-dep.md: dependency TASK-77 dropped"),
        "{text}"
    );
}
