//! The documents area through its public doors: REST under /api/docs and
//! MCP at /mcp on a served hub, on a temporary repository.

use crate::common::{TestServer, decode, error_of};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

const GUIDE: &str = "# Guide\nintro\n## Setup\nold steps\n## Use\nuse it\n";

/// An MCP client of the server's `/mcp` with every tool (the checks, such as
/// the audit, are upkeep tools outside the everyday list).
async fn mcp(server: &TestServer) -> Client {
    let headers = [(
        reqwest::header::HeaderName::from_static("x-mcp-toolsets"),
        reqwest::header::HeaderValue::from_static("all"),
    )]
    .into_iter()
    .collect();
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            server.url("/mcp"),
        )
        .custom_headers(headers);
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("initialize over HTTP")
}

/// The envelope of an MCP call, with the size of its text.
async fn call(client: &Client, name: &'static str, args: Value) -> (Value, usize) {
    let Value::Object(arguments) = args else {
        panic!("arguments are an object")
    };
    let result = client
        .call_tool(CallToolRequestParams::new(name).with_arguments(arguments))
        .await
        .unwrap_or_else(|error| panic!("{name}: {error}"));
    let text = result
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|t| t.text.clone())
        .expect("text content");
    (serde_json::from_str(&text).expect("JSON text"), text.len())
}

fn write(server: &TestServer, path: &str, text: &str) {
    let file = server.repo().join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
}

fn query(mount: &str, path: &str) -> String {
    format!("mount={mount}&path={}", urlencode(path))
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// GET a document: (status, body, ETag).
async fn read(server: &TestServer, mount: &str, path: &str) -> (u16, Value, Option<String>) {
    let response = server
        .client
        .get(server.url(&format!("/api/docs/document?{}", query(mount, path))))
        .send()
        .await
        .unwrap();
    let etag = response
        .headers()
        .get("etag")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let (status, body) = decode(response).await;
    (status, body, etag)
}

async fn patch(
    server: &TestServer,
    path: &str,
    if_match: Option<&str>,
    key: Option<&str>,
    body: Value,
) -> (u16, Value) {
    let mut request = server
        .client
        .patch(server.url(&format!("/api/docs/document?{}", query("docs", path))))
        .json(&body);
    if let Some(tag) = if_match {
        request = request.header("if-match", tag);
    }
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    decode(request.send().await.unwrap()).await
}

async fn create(server: &TestServer, path: &str, content: &str, request_id: &str) -> (u16, Value) {
    server
        .post_json(
            "/api/docs/documents",
            json!({"mount": "docs", "path": path, "content": content, "request_id": request_id}),
        )
        .await
}

fn on_disk(server: &TestServer, path: &str) -> String {
    std::fs::read_to_string(server.repo().join("docs").join(path)).unwrap()
}

async fn history_ops(server: &TestServer, path: &str) -> Vec<String> {
    let (_, body) = server
        .get(&format!("/api/docs/history?{}", query("docs", path)))
        .await;
    body["data"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}:{}:{}",
                e["rev"],
                e["op"].as_str().unwrap(),
                e["source"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn rest_writes_are_compare_and_set_on_the_etag_and_idempotent_by_key() {
    let server = TestServer::start().await;
    let (status, created) = create(&server, "guide.md", GUIDE, "c-1").await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["data"]["state"], "committed");
    assert_eq!(
        created["data"]["durable"],
        json!({"file": true, "directory": true, "database": true})
    );
    assert_eq!(on_disk(&server, "guide.md"), GUIDE);

    let (status, page, etag) = read(&server, "docs", "guide.md").await;
    assert_eq!(status, 200);
    let document = &page["data"]["document"];
    let etag = etag.expect("an ETag");
    assert_eq!(
        etag,
        format!(
            "\"{}-{}\"",
            document["rev"],
            document["hash"].as_str().unwrap()
        )
    );
    assert_eq!(page["data"]["content"], GUIDE);

    let edit = json!({"operations": [{"op": "replace_section", "section": "Guide/Setup", "content": "new steps"}]});
    let (status, first) = patch(
        &server,
        "guide.md",
        Some(&etag),
        Some("edit-1"),
        edit.clone(),
    )
    .await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["data"]["document"]["rev"], 2);
    // the same key and request: the stored receipt, nothing written again
    let (status, again) = patch(
        &server,
        "guide.md",
        Some(&etag),
        Some("edit-1"),
        edit.clone(),
    )
    .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["data"]["seq"], first["data"]["seq"]);
    assert_eq!(again["meta"]["replayed"], true);
    assert_eq!(history_ops(&server, "guide.md").await.len(), 2);
    assert_eq!(
        on_disk(&server, "guide.md"),
        "# Guide\nintro\n## Setup\nnew steps\n## Use\nuse it\n"
    );

    // the same key for another intent
    let other = json!({"operations": [{"op": "append", "content": "x"}]});
    let (status, reuse) = patch(
        &server,
        "guide.md",
        Some(&etag),
        Some("edit-1"),
        other.clone(),
    )
    .await;
    assert_eq!(status, 409, "{reuse}");
    assert_eq!(error_of(&reuse)["code"], "E_REQUEST_REUSE");
    assert_eq!(
        error_of(&reuse)["message"],
        "request_id belongs to another intent"
    );
    assert_eq!(
        error_of(&reuse)["details"]["receipt"]["seq"],
        first["data"]["seq"]
    );

    // a stale If-Match: 412 with the current identity and what changed
    let (status, stale) = patch(&server, "guide.md", Some(&etag), Some("edit-2"), other).await;
    assert_eq!(status, 412, "{stale}");
    assert_eq!(error_of(&stale)["code"], "STALE_REVISION");
    assert_eq!(error_of(&stale)["details"]["current"]["rev"], 2);
    assert_eq!(
        error_of(&stale)["details"]["changed_sections"],
        json!(["Guide/Setup"])
    );
    // a weak tag never matches
    let weak = format!("W/{}", etag);
    let (status, weak_answer) = patch(&server, "guide.md", Some(&weak), Some("edit-3"), edit).await;
    assert_eq!(status, 412, "{weak_answer}");
    // a body base that If-Match does not name: no revision can be both, 412
    let now = error_of(&stale)["details"]["current"].clone();
    let now_tag = format!("\"{}-{}\"", now["rev"], now["hash"].as_str().unwrap());
    let torn = json!({"base": {"rev": 1, "hash": document["hash"]},
                      "operations": [{"op": "append", "content": "torn"}]});
    let (status, answer) = patch(&server, "guide.md", Some(&now_tag), Some("edit-4"), torn).await;
    assert_eq!(status, 412, "{answer}");
    assert_eq!(error_of(&answer)["code"], "STALE_REVISION");
    assert_eq!(error_of(&answer)["details"]["current"]["rev"], 2);
    assert!(!on_disk(&server, "guide.md").contains("torn"));

    // receipts
    let (status, receipt) = server.get("/api/docs/receipts/edit-1").await;
    assert_eq!(status, 200);
    assert_eq!(receipt["data"]["state"], "committed");
    assert_eq!(receipt["data"]["previous"]["rev"], 1);
    let (_, unknown) = server.get("/api/docs/receipts/never-sent").await;
    assert_eq!(unknown["data"]["state"], "not_committed");
    assert_eq!(unknown["data"]["known"], false);
    let (status, bad) = server.get("/api/docs/receipts/has%20space").await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&bad)["code"], "E_REQUEST_ID");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_seeds_safe_cas_sequence_over_mcp() {
    let server = TestServer::start().await;
    create(&server, "runbook.md", GUIDE, "seed").await;
    let client = mcp(&server).await;
    // 1. read the identity
    let (read, _) = call(
        &client,
        "cos_docs_read",
        json!({"mount": "docs", "path": "runbook.md"}),
    )
    .await;
    let base =
        json!({"rev": read["data"]["document"]["rev"], "hash": read["data"]["document"]["hash"]});
    // 2. one patch with that base and a unique request ID
    let intent = json!({"mount": "docs", "path": "runbook.md", "base": base, "request_id": "agent-1",
        "operations": [{"op": "append_to_section", "section": "use", "content": "step two"}]});
    let (first, _) = call(&client, "cos_docs_patch", intent.clone()).await;
    assert_eq!(first["ok"], true, "{first}");
    // 3. the outcome looked uncertain: the receipt, or the identical resend
    let (receipt, _) = call(
        &client,
        "cos_docs_receipt",
        json!({"request_id": "agent-1"}),
    )
    .await;
    assert_eq!(receipt["data"]["state"], "committed");
    let (resent, _) = call(&client, "cos_docs_patch", intent).await;
    assert_eq!(resent["data"]["seq"], first["data"]["seq"]);
    assert_eq!(resent["data"]["meta"]["replayed"], true);
    assert_eq!(
        on_disk(&server, "runbook.md").matches("step two").count(),
        1
    );
    // someone else writes; our next patch on the old base is stale
    let new_base =
        json!({"rev": first["data"]["document"]["rev"], "hash": first["data"]["document"]["hash"]});
    let (status, _) = patch(
        &server,
        "runbook.md",
        None,
        Some("person-1"),
        json!({"base": new_base, "operations": [{"op": "prepend", "content": "Owner: ops"}]}),
    )
    .await;
    assert_eq!(status, 200);
    let (stale, _) = call(&client, "cos_docs_patch", json!({"mount": "docs", "path": "runbook.md", "base": new_base,
        "request_id": "agent-2", "operations": [{"op": "replace_text", "find": "intro", "replace": "Intro"}]})).await;
    assert_eq!(stale["ok"], false);
    assert_eq!(stale["error"]["code"], "STALE_REVISION");
    // 4. reread, rebase, a new request ID
    let current = stale["error"]["details"]["current"].clone();
    let (rebased, _) = call(
        &client,
        "cos_docs_patch",
        json!({"mount": "docs", "path": "runbook.md",
        "base": {"rev": current["rev"], "hash": current["hash"]}, "request_id": "agent-3",
        "operations": [{"op": "replace_text", "find": "intro", "replace": "Intro"}]}),
    )
    .await;
    assert_eq!(rebased["ok"], true, "{rebased}");
    let text = on_disk(&server, "runbook.md");
    assert!(text.starts_with("Owner: ops\n# Guide\nIntro\n"), "{text}");
    assert!(text.contains("use it\nstep two\n"), "{text}");
    // never reuse an ID for changed operations
    let (reuse, _) = call(
        &client,
        "cos_docs_patch",
        json!({"mount": "docs", "path": "runbook.md",
        "base": {"rev": current["rev"], "hash": current["hash"]}, "request_id": "agent-3",
        "operations": [{"op": "append", "content": "other"}]}),
    )
    .await;
    assert_eq!(reuse["error"]["code"], "E_REQUEST_REUSE");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn every_path_that_leaves_the_mount_is_refused() {
    let server = TestServer::start().await;
    write(&server, "docs/inside.md", "# In\n");
    write(&server, "docs-evil/x.md", "# Evil sibling\n");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "# Secret\n").unwrap();
    let docs = server.repo().join("docs");
    std::os::unix::fs::symlink(outside.path().join("secret.md"), docs.join("link.md")).unwrap();
    std::os::unix::fs::symlink(outside.path(), docs.join("linked-folder")).unwrap();
    std::os::unix::fs::symlink("/etc", docs.join("etc")).unwrap();
    for path in [
        "../README.md",
        "../docs-evil/x.md",
        "a/../../x.md",
        "/etc/passwd.md",
        "..\\x.md",
        "C:/x.md",
        "%2e%2e/x.md",
        "a%2Fb.md",
        "x\u{0}.md",
        ".git/config.md",
        "link.md",
        "linked-folder/secret.md",
        "etc/x.md",
        "notes.txt",
    ] {
        let (status, body, _) = read(&server, "docs", path).await;
        assert_eq!(status, 400, "{path:?}: {body}");
        assert_eq!(error_of(&body)["code"], "E_PATH", "{path:?}");
        let (status, body) = create(
            &server,
            path,
            "# New\n",
            &format!("escape-{}", urlencode(path).len()),
        )
        .await;
        assert!(status == 400 || status == 409, "{path:?}: {status} {body}");
        assert_ne!(error_of(&body)["code"], "E_INTERNAL", "{path:?}");
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.md")).unwrap(),
        "# Secret\n"
    );
    assert!(!outside.path().join("x.md").exists());
    // the state dir is never a document folder, even through the repo mount
    let (status, body, _) = read(&server, "repo", ".cos/notes.md").await;
    assert_eq!(status, 400, "{body}");
    // a display name is not a key
    let (status, body, _) = read(&server, "Documentation", "inside.md").await;
    assert_eq!(status, 400);
    assert!(
        error_of(&body)["message"]
            .as_str()
            .unwrap()
            .contains("display name"),
        "{body}"
    );
    // and what is inside reads fine
    let (status, _, _) = read(&server, "docs", "inside.md").await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_mounts_refuse_agents_or_people_with_the_seeds_message() {
    let server = TestServer::start().await;
    write(&server, "README.md", "# Readme\n");
    let client = mcp(&server).await;
    let (refused, _) = call(
        &client,
        "cos_docs_create",
        json!({"mount": "repo", "path": "NEW.md", "content": "x", "request_id": "ro-1"}),
    )
    .await;
    assert_eq!(refused["error"]["code"], "E_READ_ONLY");
    assert_eq!(refused["error"]["category"], "permission");
    assert_eq!(
        refused["error"]["message"],
        "This mounted folder is read-only to agents"
    );
    let (readable, _) = call(
        &client,
        "cos_docs_read",
        json!({"mount": "repo", "path": "README.md"}),
    )
    .await;
    assert_eq!(readable["data"]["content"], "# Readme\n");
    // people may write there through REST
    let (status, _) = server
        .post_json(
            "/api/docs/documents",
            json!({"mount": "repo", "path": "NEW.md", "content": "x", "request_id": "ro-2"}),
        )
        .await;
    assert_eq!(status, 201);
    // a mount read-only to people
    std::fs::write(
        server.state_dir().join("docs.toml"),
        "[[mounts]]\nkey = \"handbook\"\npath = \"handbook\"\nname = \"Team handbook\"\npeople = \"read_only\"\n",
    )
    .unwrap();
    let (status, body) = server
        .post_json(
            "/api/docs/documents",
            json!({"mount": "handbook", "path": "a.md", "content": "x", "request_id": "ro-3"}),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        error_of(&body)["message"],
        "This mounted folder is read-only to people"
    );
    let (written, _) = call(
        &client,
        "cos_docs_create",
        json!({"mount": "handbook", "path": "a.md", "content": "x", "request_id": "ro-4"}),
    )
    .await;
    assert_eq!(written["ok"], true, "{written}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_outside_the_hub_is_a_revision_and_makes_older_bases_stale() {
    let server = TestServer::start().await;
    create(&server, "notes.md", GUIDE, "n-1").await;
    let (_, page, etag) = read(&server, "docs", "notes.md").await;
    assert_eq!(page["data"]["document"]["rev"], 1);
    // an editor saves the file
    write(&server, "docs/notes.md", "# Guide\nedited in an editor\n");
    let (status, stale) = patch(
        &server,
        "notes.md",
        etag.as_deref(),
        Some("n-2"),
        json!({"operations": [{"op": "append", "content": "agent line"}]}),
    )
    .await;
    assert_eq!(status, 412, "{stale}");
    assert_eq!(error_of(&stale)["details"]["current"]["rev"], 2);
    assert_eq!(
        on_disk(&server, "notes.md"),
        "# Guide\nedited in an editor\n",
        "never clobbered"
    );
    assert_eq!(
        history_ops(&server, "notes.md").await,
        ["2:external:external", "1:create:person"]
    );
    // deleted outside: a deletion in history, and the old revision still readable
    std::fs::remove_file(server.repo().join("docs/notes.md")).unwrap();
    let (status, _, _) = read(&server, "docs", "notes.md").await;
    assert_eq!(status, 404);
    let (status, old) = server
        .get(&format!(
            "/api/docs/document?{}&rev=1",
            query("docs", "notes.md")
        ))
        .await;
    assert_eq!(status, 200);
    assert_eq!(old["data"]["content"], GUIDE);
    assert_eq!(old["data"]["historical"], true);
    // and the scan notices a file nobody read
    write(&server, "docs/fresh.md", "# Fresh\n");
    let (_, scanned) = server
        .post_json("/api/docs/scan", json!({"mount": "docs"}))
        .await;
    assert!(
        scanned["data"]["changed"].as_u64().unwrap() >= 1,
        "{scanned}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tampered_history_refuses_writes_while_reads_go_on() {
    let server = TestServer::start().await;
    create(&server, "a.md", "# A\n", "t-1").await;
    create(&server, "b.md", "# B\n", "t-2").await;
    let (_, audit) = server.get("/api/docs/audit").await;
    assert_eq!(audit["data"]["verified"], true, "{audit}");
    let head = audit["data"]["head"].clone();
    assert_eq!(head["seq"], 2);
    create(&server, "c.md", "# C\n", "t-3").await;
    // an older checkpoint holds: the history since was only appended to
    let (_, later) = server
        .get(&format!(
            "/api/docs/audit?seq={}&entry_hash={}",
            head["seq"],
            head["entry_hash"].as_str().unwrap()
        ))
        .await;
    assert_eq!(later["data"]["checkpoint_holds"], true);
    assert_eq!(later["data"]["verified"], true);
    let (_, forged) = server
        .get(&format!(
            "/api/docs/audit?seq=2&entry_hash={}",
            "0".repeat(64)
        ))
        .await;
    assert_eq!(forged["data"]["checkpoint_holds"], false);
    assert_eq!(
        forged["data"]["writes_refused"], false,
        "a caller's wrong checkpoint locks nobody out"
    );

    // someone edits an entry in the database
    let database = rusqlite::Connection::open(server.state_dir().join("cos.db")).unwrap();
    database
        .execute(
            "UPDATE docs_history SET actor = 'mallory' WHERE seq = 2",
            [],
        )
        .unwrap();
    drop(database);
    let (_, audit) = server.get("/api/docs/audit").await;
    assert_eq!(audit["data"]["verified"], false);
    assert_eq!(audit["data"]["first_bad"]["seq"], 2);
    assert_eq!(audit["data"]["writes_refused"], true);
    let (status, refused) = create(&server, "d.md", "# D\n", "t-4").await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(error_of(&refused)["code"], "E_INTEGRITY");
    assert_eq!(error_of(&refused)["details"]["first_bad"]["seq"], 2);
    assert!(!server.repo().join("docs/d.md").exists());
    let (status, _, _) = read(&server, "docs", "a.md").await;
    assert_eq!(status, 200, "reads go on");
    // put back as it was, the audit passes and writes resume
    let database = rusqlite::Connection::open(server.state_dir().join("cos.db")).unwrap();
    database
        .execute("UPDATE docs_history SET actor = 'web' WHERE seq = 2", [])
        .unwrap();
    drop(database);
    let (_, audit) = server.get("/api/docs/audit").await;
    assert_eq!(audit["data"]["verified"], true, "{audit}");
    let (status, _) = create(&server, "d.md", "# D\n", "t-5").await;
    assert_eq!(status, 201);
}

/// Follows `cos_docs_read` cursors over MCP; every answer within the compact budget.
async fn read_all(client: &Client, path: &str) -> (String, usize) {
    let mut arguments = json!({"mount": "docs", "path": path});
    let mut text = String::new();
    let mut pages = 0;
    loop {
        let (page, size) = call(client, "cos_docs_read", arguments.clone()).await;
        assert_eq!(page["ok"], true, "{page}");
        assert!(size <= 16_384, "page {pages} of {path} is {size} bytes");
        assert_eq!(
            page["data"]["meta"]["truncated"], false,
            "no cut inside a page"
        );
        text.push_str(page["data"]["content"].as_str().unwrap());
        pages += 1;
        match page["data"]["next_cursor"].as_str() {
            Some(cursor) => arguments["cursor"] = json!(cursor),
            None => return (text, pages),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_document_is_rebuilt_byte_for_byte_from_pages_under_the_budget() {
    let server = TestServer::start().await;
    let mut big = String::from("---\ntitle: big\n---\n");
    for section in 0..300 {
        big.push_str(&format!("## Section {section} \"quoted\"\n"));
        for line in 0..12 {
            big.push_str(&format!(
                "line {line} of {section}: ünïcödé \\ tabs\there ノート\n"
            ));
        }
    }
    let flat: String = (0..3000)
        .map(|n| format!("no heading at all, line {n}\r\n"))
        .collect();
    let one_line = "x".repeat(70_000);
    write(&server, "docs/big.md", &big);
    write(&server, "docs/flat.md", &flat);
    write(&server, "docs/one-line.md", &one_line);
    let client = mcp(&server).await;
    for (path, expected) in [
        ("big.md", &big),
        ("flat.md", &flat),
        ("one-line.md", &one_line),
    ] {
        let (text, pages) = read_all(&client, path).await;
        assert!(pages > 3, "{path}: {pages} pages");
        assert_eq!(&text, expected, "{path}");
    }
    // a section alone, paged the same way
    let (first, _) = call(
        &client,
        "cos_docs_read",
        json!({"mount": "docs", "path": "big.md", "section": "section-7-quoted"}),
    )
    .await;
    assert_eq!(first["data"]["section"], "Section 7 \"quoted\"");
    assert!(
        first["data"]["content"]
            .as_str()
            .unwrap()
            .starts_with("## Section 7")
    );
    // a cursor belongs to its document, section and revision
    let (page, _) = call(
        &client,
        "cos_docs_read",
        json!({"mount": "docs", "path": "big.md"}),
    )
    .await;
    let cursor = page["data"]["next_cursor"].as_str().unwrap().to_string();
    let (other, _) = call(
        &client,
        "cos_docs_read",
        json!({"mount": "docs", "path": "flat.md", "cursor": cursor}),
    )
    .await;
    assert_eq!(other["error"]["code"], "STALE_CURSOR");
    let (section, _) = call(
        &client,
        "cos_docs_read",
        json!({"mount": "docs", "path": "big.md", "section": "section-7-quoted", "cursor": cursor}),
    )
    .await;
    assert_eq!(section["error"]["code"], "STALE_CURSOR");
    assert_eq!(
        section["error"]["message"],
        "The cursor belongs to another document, revision or section"
    );
    let (forged, _) = call(
        &client,
        "cos_docs_read",
        json!({"mount": "docs", "path": "big.md", "cursor": "abc.def"}),
    )
    .await;
    assert_eq!(forged["error"]["code"], "E_CURSOR");
    write(&server, "docs/big.md", &format!("{big}\nmore\n"));
    let (moved, _) = call(
        &client,
        "cos_docs_read",
        json!({"mount": "docs", "path": "big.md", "cursor": cursor}),
    )
    .await;
    assert_eq!(moved["error"]["code"], "STALE_READ");
    assert_eq!(
        moved["error"]["message"],
        "The document changed while it was read; read again"
    );
    // many at once, within the budget; more than 20 refused
    let paths: Vec<String> = (0..20)
        .map(|n| {
            if n % 2 == 0 {
                "big.md".into()
            } else {
                "flat.md".into()
            }
        })
        .collect();
    let (many, size) = call(
        &client,
        "cos_docs_read_many",
        json!({"mount": "docs", "paths": paths}),
    )
    .await;
    assert_eq!(many["ok"], true, "{many}");
    assert!(size <= 16_384, "{size}");
    let too_many: Vec<String> = (0..21).map(|n| format!("d{n}.md")).collect();
    let (refused, _) = call(
        &client,
        "cos_docs_read_many",
        json!({"mount": "docs", "paths": too_many}),
    )
    .await;
    assert_eq!(refused["error"]["code"], "E_TOO_MANY_DOCUMENTS");
    client.cancel().await.unwrap();
}

/// Past 256 KiB a document's outline is kept by its hash, and a patch parses
/// the new text's outline ahead: every read after a patch must still be the
/// file, whole and by section.
#[tokio::test(flavor = "multi_thread")]
async fn a_large_document_patched_twice_reads_back_whole_and_by_section() {
    let server = TestServer::start().await;
    let mut large = String::new();
    for section in 0..300 {
        large.push_str(&format!("## Section {section}\n"));
        for line in 0..20 {
            large.push_str(&format!(
                "line {line} of section {section}, long enough to weigh a little\n"
            ));
        }
    }
    assert!(large.len() > 256 << 10, "{} bytes", large.len());
    write(&server, "docs/large.md", &large);
    let client = mcp(&server).await;
    let (first, _) = call(
        &client,
        "cos_docs_read",
        json!({"mount": "docs", "path": "large.md"}),
    )
    .await;
    let mut document = first["data"]["document"].clone();
    for (n, section) in [(1, 150), (2, 299)] {
        let marker = format!("added by patch {n}");
        let (answer, _) = call(
            &client,
            "cos_docs_patch",
            json!({"mount": "docs", "path": "large.md", "request_id": format!("large-{n}"),
                   "base": {"rev": document["rev"], "hash": document["hash"]},
                   "operations": [{"op": "append_to_section", "section": format!("Section {section}"), "content": marker}]}),
        )
        .await;
        assert_eq!(answer["ok"], true, "{answer}");
        document = answer["data"]["document"].clone();
        assert_eq!(document["rev"], n + 1);
        let (text, pages) = read_all(&client, "large.md").await;
        assert!(pages > 10, "{pages} pages");
        assert_eq!(text, on_disk(&server, "large.md"), "after patch {n}");
        let (part, _) = call(
            &client,
            "cos_docs_read",
            json!({"mount": "docs", "path": "large.md", "section": format!("section-{section}")}),
        )
        .await;
        let content = part["data"]["content"].as_str().unwrap_or_default();
        assert!(
            content.starts_with(&format!("## Section {section}\n")),
            "{part}"
        );
        assert!(content.trim_end().ends_with(&marker), "{part}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn moves_and_deletes_carry_receipts_and_keep_history() {
    let server = TestServer::start().await;
    create(&server, "old/name.md", "# Name\n", "m-1").await;
    let (_, _, etag) = read(&server, "docs", "old/name.md").await;
    let response = server
        .client
        .post(server.url("/api/docs/move"))
        .header("if-match", etag.clone().unwrap())
        .header("idempotency-key", "m-2")
        .json(&json!({"mount": "docs", "path": "old/name.md", "to": "new/name.md"}))
        .send()
        .await
        .unwrap();
    let (status, moved) = decode(response).await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved["data"]["document"]["path"], "new/name.md");
    assert!(!server.repo().join("docs/old/name.md").exists());
    assert_eq!(on_disk(&server, "new/name.md"), "# Name\n");
    let (_, _, etag) = read(&server, "docs", "new/name.md").await;
    let response = server
        .client
        .delete(server.url(&format!(
            "/api/docs/document?{}",
            query("docs", "new/name.md")
        )))
        .header("if-match", etag.unwrap())
        .header("idempotency-key", "m-3")
        .send()
        .await
        .unwrap();
    let (status, deleted) = decode(response).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted["data"]["op"], "delete");
    assert!(!server.repo().join("docs/new/name.md").exists());
    let ops = history_ops(&server, "new/name.md").await;
    assert_eq!(ops, ["3:delete:person", "2:move:person"]);
    let (_, listing) = server.get("/api/docs/list?mount=docs").await;
    assert_eq!(listing["data"]["total"], 0, "{listing}");
    // a create on a path that exists is refused
    create(&server, "here.md", "# Here\n", "m-4").await;
    let (status, body) = create(&server, "here.md", "# Again\n", "m-5").await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(error_of(&body)["code"], "STALE_REVISION");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_base_or_checkpoint_no_revision_can_have_is_bad_input_not_a_conflict() {
    let server = TestServer::start().await;
    let (status, _) = create(&server, "guide.md", GUIDE, "c-1").await;
    assert_eq!(status, 201);
    let (_, page, _) = read(&server, "docs", "guide.md").await;
    let hash = page["data"]["document"]["hash"]
        .as_str()
        .unwrap()
        .to_string();
    let client = mcp(&server).await;
    let refused = |envelope: &Value, field: &str| {
        assert_eq!(envelope["ok"], false, "{envelope}");
        assert_eq!(envelope["error"]["category"], "validation", "{envelope}");
        assert_eq!(envelope["error"]["code"], "E_ARGUMENT", "{envelope}");
        assert_eq!(envelope["error"]["details"]["field"], field, "{envelope}");
        let message = envelope["error"]["message"].as_str().unwrap();
        let expected = envelope["error"]["details"]["expected"].as_str().unwrap();
        assert_eq!(message, format!("{field}: {expected}"));
        assert!(
            expected.contains("1 or more") || expected.contains("64 lowercase hex digits"),
            "{expected}"
        );
    };
    // a cut hash, an uppercase one, a revision 0: typos, not stale reads
    for (base, field) in [
        (json!({"rev": 1, "hash": &hash[..12]}), "base.hash"),
        (json!({"rev": 1, "hash": hash.to_uppercase()}), "base.hash"),
        (json!({"rev": 0, "hash": &hash}), "base.rev"),
    ] {
        let (patched, _) = call(
            &client,
            "cos_docs_patch",
            json!({"mount": "docs", "path": "guide.md",
            "base": base, "request_id": "p-1", "operations": [{"op": "append", "content": "x"}]}),
        )
        .await;
        refused(&patched, field);
    }
    // a past revision 0 is asked for the same way
    let (page, _) = call(
        &client,
        "cos_docs_read",
        json!({"mount": "docs", "path": "guide.md", "rev": 0}),
    )
    .await;
    refused(&page, "rev");
    let short = json!({"rev": 1, "hash": &hash[..12]});
    let (moved, _) = call(
        &client,
        "cos_docs_move",
        json!({"mount": "docs", "path": "guide.md",
        "to": "moved.md", "base": short, "request_id": "m-1"}),
    )
    .await;
    refused(&moved, "base.hash");
    let (deleted, _) = call(
        &client,
        "cos_docs_delete",
        json!({"mount": "docs", "path": "guide.md",
        "base": short, "request_id": "d-1"}),
    )
    .await;
    refused(&deleted, "base.hash");
    let (status, body) = patch(
        &server,
        "guide.md",
        None,
        Some("p-2"),
        json!({"base": short, "operations": [{"op": "append", "content": "x"}]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(error_of(&body)["details"]["field"], "base.hash");
    // If-Match naming no revision never matches: 412 with the current identity
    let (status, body) = patch(
        &server,
        "guide.md",
        Some(&format!("\"1-{}\"", &hash[..12])),
        Some("p-3"),
        json!({"operations": [{"op": "append", "content": "x"}]}),
    )
    .await;
    assert_eq!(status, 412, "{body}");
    assert_eq!(error_of(&body)["details"]["current"]["hash"], hash.as_str());
    // a cut checkpoint is a typo, never a rewritten history
    let (audit, _) = call(
        &client,
        "cos_docs_audit",
        json!({"checkpoint": {"seq": 1, "entry_hash": &hash[..12]}}),
    )
    .await;
    refused(&audit, "checkpoint.entry_hash");
    let (audit, _) = call(
        &client,
        "cos_docs_audit",
        json!({"checkpoint": {"seq": 0, "entry_hash": &hash}}),
    )
    .await;
    refused(&audit, "checkpoint.seq");
    let (status, body) = server
        .get(&format!("/api/docs/audit?seq=1&entry_hash={}", &hash[..12]))
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(error_of(&body)["details"]["field"], "checkpoint.entry_hash");
    let (audit, _) = call(&client, "cos_docs_audit", json!({})).await;
    assert_eq!(audit["data"]["verified"], true, "{audit}");
    assert_eq!(audit["data"]["writes_refused"], false, "{audit}");
    // nothing was written
    assert_eq!(history_ops(&server, "guide.md").await, ["1:create:person"]);
    assert_eq!(on_disk(&server, "guide.md"), GUIDE);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_patches_are_refused_whole_naming_the_operation() {
    let server = TestServer::start().await;
    create(&server, "p.md", GUIDE, "p-1").await;
    let (_, _, etag) = read(&server, "docs", "p.md").await;
    let (status, body) = patch(
        &server,
        "p.md",
        etag.as_deref(),
        None,
        json!({"operations": [
            {"op": "append", "content": "fine"},
            {"op": "replace_text", "find": "e", "replace": "E", "expected_count": 1}
        ]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        error_of(&body)["message"]
            .as_str()
            .unwrap()
            .starts_with("operations[1]:"),
        "{body}"
    );
    assert_eq!(on_disk(&server, "p.md"), GUIDE, "all or nothing");
    let (status, body) = patch(
        &server,
        "p.md",
        etag.as_deref(),
        None,
        json!({"operations": []}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = patch(
        &server,
        "p.md",
        etag.as_deref(),
        None,
        json!({"operations": [{"op": "delete_section", "section": "Nowhere"}]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = patch(
        &server,
        "p.md",
        etag.as_deref(),
        None,
        json!({"operations": [{"op": "explode"}]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    // an empty text to find, as the spec states (minLength 1)
    let (status, body) = patch(
        &server,
        "p.md",
        etag.as_deref(),
        None,
        json!({"operations": [{"op": "replace_text", "find": "", "replace": "x"}]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        error_of(&body)["message"],
        "operations[0]: find: at least one character"
    );
    let (status, body) = patch(
        &server,
        "p.md",
        etag.as_deref(),
        Some("has space"),
        json!({"operations": [{"op": "append", "content": "x"}]}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(error_of(&body)["code"], "E_REQUEST_ID");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_section_is_named_title_by_title_and_a_patch_leaves_the_headings_around_it() {
    let server = TestServer::start().await;
    let text =
        "# Input/Output\nintro\n## Read / Write\none\n## Read / Write\ntwo\n\nNext\n====\nlast\n";
    create(&server, "seams.md", text, "seams-1").await;
    let outline = |body: &Value| -> Vec<String> {
        let sections = body["data"]["outline"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        sections
            .iter()
            .map(|s| s["title"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, body, etag) = read(&server, "docs", "seams.md").await;
    assert_eq!(
        outline(&body),
        ["Input/Output", "Read / Write", "Read / Write", "Next"]
    );
    let append_to = |section: &str| json!({"operations": [{"op": "append_to_section", "section": section, "content": "added"}]});

    // half a title names nothing; a path two sections share names neither
    let (status, body) = patch(
        &server,
        "seams.md",
        etag.as_deref(),
        None,
        append_to("Output"),
    )
    .await;
    assert_eq!(
        (status, error_of(&body)["code"].as_str()),
        (400, Some("E_ARGUMENT")),
        "{body}"
    );
    let (status, body) = patch(
        &server,
        "seams.md",
        etag.as_deref(),
        None,
        append_to("Input/Output/Read / Write"),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let error = error_of(&body);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("read--write, read--write-1"),
        "{body}"
    );
    assert_eq!(error["details"]["index"], 0, "{body}");
    assert_eq!(
        error["details"]["candidates"][1]["anchor"], "read--write-1",
        "{body}"
    );
    assert_eq!(on_disk(&server, "seams.md"), text, "nothing written");

    // the second one by its anchor: the line lands above "Next", which keeps its title
    let (status, body) = patch(
        &server,
        "seams.md",
        etag.as_deref(),
        Some("seams-2"),
        append_to("read--write-1"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, body, etag) = read(&server, "docs", "seams.md").await;
    assert_eq!(
        outline(&body),
        ["Input/Output", "Read / Write", "Read / Write", "Next"]
    );
    assert!(on_disk(&server, "seams.md").contains("two\n\nadded\n\nNext\n===="));

    // a fence opened and left open would swallow "Next": refused, naming the operation
    let fence = json!({"operations": [
        {"op": "append", "content": "fine"},
        {"op": "append_to_section", "section": "read--write", "content": "```\ncode"}
    ]});
    let (status, body) = patch(&server, "seams.md", etag.as_deref(), None, fence).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        error_of(&body)["message"]
            .as_str()
            .unwrap()
            .starts_with("operations[1]: content:"),
        "{body}"
    );
    // and naming the first heading it would swallow: the second "Read / Write",
    // on its line in the text the first operation made
    assert!(
        error_of(&body)["message"].as_str().unwrap().contains(
            "would make the heading \"## Read / Write\" on line 5 of the text as \
             operations[0] left it plain text"
        ),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_committed_write_whose_file_the_disk_no_longer_explains_is_unknown() {
    let server = TestServer::start().await;
    create(&server, "a.md", "# A\n", "u-1").await;
    // what a crash between the commit and the rename leaves, after someone
    // also removed the temporary file: the history says committed, the
    // files cannot say whether it landed
    let database = rusqlite::Connection::open(server.state_dir().join("cos.db")).unwrap();
    let receipt = json!({"request_id": "ghost", "state": "committed", "document": null, "previous": null,
        "seq": null, "durable": null, "op": "patch", "known": true, "advice": "Committed"});
    database
        .execute(
            "INSERT INTO docs_receipts (request_id, intent, state, receipt, at) VALUES ('ghost', 'x', 'committed', ?1, 'now')",
            [receipt.to_string()],
        )
        .unwrap();
    database
        .execute(
            "INSERT INTO docs_publishing (request_id, mount, path, from_path, temp, hash) VALUES ('ghost', 'docs', 'a.md', NULL, '.a.md.gone.cos-tmp', ?1)",
            ["f".repeat(64)],
        )
        .unwrap();
    drop(database);
    let (status, answer) = server.get("/api/docs/receipts/ghost").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["data"]["state"], "unknown", "{answer}");
    assert!(
        answer["data"]["advice"]
            .as_str()
            .unwrap()
            .contains("do not claim success"),
        "{answer}"
    );
    assert_eq!(
        on_disk(&server, "a.md"),
        "# A\n",
        "nothing was guessed into the file"
    );
    // the document itself reads and writes on
    let (_, _, etag) = read(&server, "docs", "a.md").await;
    let (status, _) = patch(
        &server,
        "a.md",
        etag.as_deref(),
        Some("u-2"),
        json!({"operations": [{"op": "append", "content": "more"}]}),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn listings_page_exactly_and_a_cursor_goes_stale_when_documents_change() {
    let server = TestServer::start().await;
    for name in ["a", "b", "c", "guides/d", "guides/e"] {
        create(
            &server,
            &format!("{name}.md"),
            "# x\n",
            &format!("l-{name}"),
        )
        .await;
    }
    let mut seen = Vec::new();
    let mut url = "/api/docs/list?mount=docs&limit=2".to_string();
    loop {
        let (status, page) = server.get(&url).await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["data"]["total"], 5);
        for document in page["data"]["documents"].as_array().unwrap() {
            seen.push(document["path"].as_str().unwrap().to_string());
        }
        match page["data"]["next_cursor"].as_str() {
            Some(cursor) => url = format!("/api/docs/list?mount=docs&limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(
        seen,
        ["a.md", "b.md", "c.md", "guides/d.md", "guides/e.md"],
        "nothing skipped or repeated"
    );
    let (status, wide) = server.get("/api/docs/list?mount=docs&limit=1000").await;
    assert_eq!(status, 200, "{wide}");
    assert_eq!(wide["data"]["documents"].as_array().unwrap().len(), 5);
    let (status, over) = server.get("/api/docs/list?mount=docs&limit=1001").await;
    assert_eq!(status, 400, "{over}");
    assert_eq!(error_of(&over)["details"]["field"], "limit");
    assert!(
        error_of(&over)["message"]
            .as_str()
            .unwrap()
            .contains("1 to 1000"),
        "{over}"
    );
    let (_, guides) = server.get("/api/docs/list?mount=docs&prefix=guides").await;
    assert_eq!(guides["data"]["total"], 2);
    assert_eq!(
        guides["data"]["documents"][0]["title"], "x",
        "the first heading"
    );
    write(&server, "docs/guides/plain.md", "no heading here\n");
    let (_, guides) = server.get("/api/docs/list?mount=docs&prefix=guides").await;
    assert_eq!(
        guides["data"]["documents"][2]["title"], "plain",
        "else the file name"
    );
    std::fs::remove_file(server.repo().join("docs/guides/plain.md")).unwrap();
    let (top, in_guides) = ("mount=docs&limit=2", "mount=docs&prefix=guides&limit=1");
    let after = |query: &str, cursor: &str| format!("/api/docs/list?{query}&cursor={cursor}");
    let cursor_of = |page: &Value| page["data"]["next_cursor"].as_str().unwrap().to_string();
    let cursor = cursor_of(&server.get(&format!("/api/docs/list?{top}")).await.1);
    let guides_cursor = cursor_of(&server.get(&format!("/api/docs/list?{in_guides}")).await.1);
    write(&server, "NOTES.md", "# Notes kept at the top\n");
    let (status, _) = server.get("/api/docs/list?mount=repo").await;
    assert_eq!(status, 200);
    let (status, next) = server.get(&after(top, &cursor)).await;
    assert_eq!(status, 200, "a change in another mount leaves it: {next}");
    assert_eq!(next["data"]["documents"][0]["path"], "c.md");
    create(&server, "b2.md", "# outside guides\n", "l-b2").await;
    let (status, next) = server.get(&after(in_guides, &guides_cursor)).await;
    assert_eq!(status, 200, "a change outside the prefix leaves it: {next}");
    assert_eq!(next["data"]["documents"][0]["path"], "guides/e.md");
    std::fs::remove_file(server.repo().join("docs/guides/d.md")).unwrap();
    let (status, gone) = server.get(&after(in_guides, &guides_cursor)).await;
    assert_eq!(status, 409, "a document leaving the listing: {gone}");
    assert_eq!(error_of(&gone)["code"], "STALE_CURSOR");
    create(&server, "aa.md", "# new\n", "l-aa").await;
    let (status, stale) = server.get(&after(top, &cursor)).await;
    assert_eq!(status, 409, "{stale}");
    assert_eq!(error_of(&stale)["code"], "STALE_CURSOR");
    assert_eq!(
        error_of(&stale)["message"],
        "The documents changed since this cursor; list again"
    );
    let (status, other) = server
        .get(&format!("/api/docs/list?mount=repo&cursor={cursor}"))
        .await;
    assert_eq!(status, 409, "{other}");
    assert_eq!(
        error_of(&other)["code"],
        "STALE_CURSOR",
        "a cursor of another listing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn readers_racing_writers_never_mistake_a_write_in_flight_for_an_outside_edit() {
    let server = std::sync::Arc::new(TestServer::start().await);
    create(&server, "race.md", "# Race\n## Log\n", "race-0").await;
    let mut tasks = Vec::new();
    for writer in 0..8 {
        let server = server.clone();
        tasks.push(tokio::spawn(async move {
            for n in 0..12 {
                let marker = format!("w{writer}-{n}");
                for attempt in 0..100 {
                    let (_, _, etag) = read(&server, "docs", "race.md").await;
                    let (status, body) = patch(&server, "race.md", etag.as_deref(), Some(&format!("{marker}-{attempt}")),
                        json!({"operations": [{"op": "append_to_section", "section": "Log", "content": marker}]})).await;
                    if status == 200 {
                        break;
                    }
                    assert_eq!(status, 412, "{body}");
                }
            }
        }));
    }
    for _ in 0..4 {
        let server = server.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..60 {
                let (status, _, _) = read(&server, "docs", "race.md").await;
                assert_eq!(status, 200);
                let (status, _) = server.get("/api/docs/list?mount=docs").await;
                assert_eq!(status, 200);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let text = on_disk(&server, "race.md");
    for writer in 0..8 {
        for n in 0..12 {
            let marker = format!("w{writer}-{n}");
            assert_eq!(text.lines().filter(|l| *l == marker).count(), 1, "{marker}");
        }
    }
    let mut ops = Vec::new();
    let mut url = format!("/api/docs/history?{}&limit=200", query("docs", "race.md"));
    loop {
        let (_, page) = server.get(&url).await;
        for entry in page["data"]["entries"].as_array().unwrap() {
            ops.push(entry["op"].as_str().unwrap().to_string());
        }
        match page["data"]["next_cursor"].as_str() {
            Some(cursor) => {
                url = format!(
                    "/api/docs/history?{}&limit=200&cursor={cursor}",
                    query("docs", "race.md")
                )
            }
            None => break,
        }
    }
    assert_eq!(ops.len(), 97, "one create and 96 patches: {ops:?}");
    assert!(ops.iter().all(|op| op != "external"), "{ops:?}");
}

#[test]
fn cos_serve_notices_an_edit_outside_the_hub_without_anyone_reading() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join("docs")).unwrap();
    std::fs::write(repo.path().join("docs/watched.md"), "# Watched\n").unwrap();
    // one mount, so every move of the revision is this file's
    std::fs::create_dir_all(repo.path().join(".cos")).unwrap();
    std::fs::write(
        repo.path().join(".cos/docs.toml"),
        "[[mounts]]\nkey = \"docs\"\npath = \"docs\"\n",
    )
    .unwrap();
    let mut server = crate::cli::serve_on_any_port(repo.path());
    let address = crate::cli::announced_address(&mut server);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = reqwest::Client::new();
    let outcome = runtime.block_on(async {
        // the first scan records the file as it is
        let url = format!("http://{address}/api/stream");
        let mut stream = crate::common::ChangeStream::open_at(&client, &url).await;
        let mut before = stream.next("docs").await;
        while before == 0 {
            before = stream.next("docs").await;
        }
        std::fs::write(
            repo.path().join("docs/watched.md"),
            "# Watched\nsaved in an editor\n",
        )
        .unwrap();
        // the watcher's scan, not a read, moves the documents' revision
        // (other areas' changes, such as the graph's first index, come too)
        let mut after = stream.next("docs").await;
        for _ in 0..10 {
            if after != before {
                break;
            }
            after = stream.next("docs").await;
        }
        let history: Value = client
            .get(format!(
                "http://{address}/api/docs/history?mount=docs&path=watched.md"
            ))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        (before, after, history)
    });
    server.kill().unwrap();
    let _ = server.wait();
    let (before, after, history) = outcome;
    assert_eq!(after, before + 1, "{before} -> {after}");
    let entries = history["data"]["entries"].as_array().unwrap();
    assert_eq!(entries[0]["rev"], 2, "{history}");
    assert_eq!(entries[0]["source"], "external");
}

/// The inotify instances a process holds, each as the inodes it watches.
fn kernel_watches_of(pid: u32) -> Vec<Vec<u64>> {
    let mut instances = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
    {
        let is_inotify = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy() == "anon_inode:inotify");
        if !is_inotify {
            continue;
        }
        let info = std::fs::read_to_string(format!(
            "/proc/{pid}/fdinfo/{}",
            entry.file_name().to_string_lossy()
        ))
        .unwrap_or_default();
        let inodes = info
            .lines()
            .filter_map(|line| line.strip_prefix("inotify "))
            .filter_map(|watch| {
                watch
                    .split(' ')
                    .find_map(|field| field.strip_prefix("ino:"))
            })
            .map(|hex| u64::from_str_radix(hex, 16).unwrap())
            .collect();
        instances.push(inodes);
    }
    instances
}

#[test]
fn cos_serve_watches_each_folder_once_and_lets_deleted_ones_go_quietly() {
    use std::os::unix::fs::MetadataExt;
    let repo = tempfile::tempdir().unwrap();
    for folder in ["docs/guides", "src"] {
        std::fs::create_dir_all(repo.path().join(folder)).unwrap();
    }
    std::fs::write(repo.path().join("docs/guides/setup.md"), "# Setup\n").unwrap();
    std::fs::write(repo.path().join("src/app.py"), "def run():\n    pass\n").unwrap();
    let mut server = crate::cli::serve_on_any_port(repo.path());
    let (address, log) = crate::cli::announced_address_and_log(&mut server);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = reqwest::Client::new();
    let url = format!("http://{address}/api/stream");
    // the first revisions of both after `since`, within 20 change events
    let both_past = |since: (i64, i64)| {
        let (client, url) = (&client, &url);
        async move {
            let mut stream = crate::common::ChangeStream::open_at(client, url).await;
            for _ in 0..20 {
                let revisions = stream.next_revisions().await;
                let now = (
                    revisions["graph"].as_i64().unwrap_or(0),
                    revisions["docs"].as_i64().unwrap_or(0),
                );
                if now.0 > since.0 && now.1 > since.1 {
                    return now;
                }
            }
            panic!("the graph and the documents did not both move past {since:?}");
        }
    };
    // the graph's first index and the documents' first scan: both watchers
    // have set up their watches by then
    let first = runtime.block_on(both_past((0, 0)));
    let instances = kernel_watches_of(server.id());
    let inodes: Vec<(&str, u64)> = ["", "docs", "docs/guides", "src"]
        .into_iter()
        .map(|folder| {
            (
                folder,
                std::fs::metadata(repo.path().join(folder)).unwrap().ino(),
            )
        })
        .collect();
    // folders deleted under both watchers: each notices, and the log stays
    // quiet (the kernel drops a deleted folder's watch by itself)
    std::fs::remove_dir_all(repo.path().join("docs/guides")).unwrap();
    std::fs::remove_dir_all(repo.path().join("src")).unwrap();
    runtime.block_on(both_past(first));
    server.kill().unwrap();
    let _ = server.wait();
    let log = log.join().unwrap();
    assert_eq!(instances.len(), 1, "inotify instances: {instances:?}");
    let watched = &instances[0];
    for (folder, inode) in inodes {
        let times = watched.iter().filter(|&&watched| watched == inode).count();
        assert_eq!(times, 1, "{folder:?} watched {times} times: {watched:?}");
    }
    assert!(!log.contains("WARN"), "{log}");
}

/// A document's history once it holds an entry (polled for at most 10 s).
async fn history_once_recorded(server: &TestServer, mount: &str, path: &str) -> Value {
    let url = &format!("/api/docs/history?{}", query(mount, path));
    let history = || async move {
        let (status, body) = server.get(url).await;
        assert_eq!(status, 200, "{body}");
        body
    };
    crate::common::within_ten_seconds(url, || async move {
        let body = history().await;
        match body["data"]["entries"].as_array() {
            Some(entries) if !entries.is_empty() => Ok(()),
            _ => Err(body.to_string()),
        }
    })
    .await;
    // entries are only ever appended: the one awaited is still there
    history().await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_watcher_takes_up_a_mount_folder_made_later_and_a_folder_moved_in_whole() {
    let server = TestServer::start().await;
    std::fs::create_dir_all(server.repo().join(".cos")).unwrap();
    std::fs::write(
        server.repo().join(".cos/docs.toml"),
        "[[mounts]]\nkey = \"notes\"\npath = \"notes\"\n",
    )
    .unwrap();
    let _watcher = cos_hub::docs::watch::start(server.hub.clone()).expect("the watcher starts");
    // the mount's folder does not exist when watching starts
    write(&server, "notes/first.md", "# First\n");
    let history = history_once_recorded(&server, "notes", "first.md").await;
    assert_eq!(
        history["data"]["entries"][0]["source"], "external",
        "{history}"
    );

    // a folder made outside the mount and renamed into it brings no event
    // for its files: the folder's own event has to be enough
    write(&server, "elsewhere/ops/runbook.md", "# Runbook\n");
    std::fs::rename(
        server.repo().join("elsewhere/ops"),
        server.repo().join("notes/ops"),
    )
    .unwrap();
    let history = history_once_recorded(&server, "notes", "ops/runbook.md").await;
    assert_eq!(history["data"]["entries"][0]["rev"], 1, "{history}");
}
