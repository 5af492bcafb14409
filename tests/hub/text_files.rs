//! Every text file is searched, whatever its language: a repository of
//! Java, YAML, SQL, a shell script, a Dockerfile, a binary, a minified
//! bundle, a lock file and a 5 MB file, through REST, MCP (a real client of
//! `cos mcp`) and the CLI; what is left out is said, with why; a served
//! hub follows a new file of a language it does not parse.

use crate::cli::cos;
use crate::common::{TestServer, index_graph, within_ten_seconds};
use crate::search::{encode, write};
use serde_json::{Value, json};
use std::path::Path;

const JAVA: &str = "package com.acme;

/** Reads JSON tokens from a stream. */
public class JsonReader {
    public JsonReader(java.io.Reader in) {}
    public String nextName() { return peekToken(); }
}
";

fn mixed_repository(root: &Path) {
    write(root, "src/main/java/com/acme/JsonReader.java", JAVA);
    write(
        root,
        "deploy/compose.yaml",
        "services:\n  api:\n    image: acme/json-reader:1.2\n    ports: [\"8080:8080\"]\n",
    );
    write(
        root,
        "db/schema.sql",
        "CREATE TABLE invoices (\n  id INTEGER PRIMARY KEY,\n  total_cents INTEGER NOT NULL\n);\n",
    );
    write(
        root,
        "scripts/release",
        "#!/bin/sh\nset -eu\necho \"deploying the json reader\"\n",
    );
    write(
        root,
        "Dockerfile",
        "FROM debian:bookworm\nRUN apt-get install -y openjdk-17-jre\n",
    );
    write(root, "app/main.py", "def start():\n    return 1\n");
    write(
        root,
        "package-lock.json",
        "{\n  \"name\": \"lockedpackagename\"\n}\n",
    );
    std::fs::write(
        root.join("assets-logo.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
    )
    .unwrap();
    write(
        root,
        "web/site.css",
        &".quietlybundledrule{color:red}".repeat(400),
    );
    let big: String = (0..250_000)
        .map(|n| format!("row{n},hugefileonlyword\n"))
        .collect();
    assert!(big.len() > 5_000_000);
    write(root, "data/huge.csv", &big);
}

async fn mixed_server() -> TestServer {
    let server = TestServer::start().await;
    mixed_repository(server.repo());
    index_graph(&server.hub).await;
    server
}

async fn search(server: &TestServer, query: &str) -> Value {
    let (status, body) = server
        .get(&format!("/api/search?q={}", encode(query)))
        .await;
    assert_eq!(status, 200, "{query}: {body}");
    body["data"].clone()
}

/// `path:line` of each hit.
fn places(answer: &Value) -> Vec<String> {
    answer["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| format!("{}:{}", hit["path"].as_str().unwrap_or(""), hit["line"]))
        .collect()
}

#[tokio::test]
async fn every_text_file_is_searched_by_identifier_phrase_regex_prefix_words_and_filters() {
    let server = mixed_server().await;
    let java = "src/main/java/com/acme/JsonReader.java";

    let identifier = search(&server, "JsonReader").await;
    let found = places(&identifier);
    assert!(found.contains(&format!("{java}:4")), "{found:?}");
    assert!(found.contains(&format!("{java}:5")), "{found:?}");
    // every hit is in the one Java file: its symbols and its lines
    assert_eq!(
        identifier["languages"]["java"], identifier["total"],
        "{identifier}"
    );
    let notes = identifier["notes"].to_string();
    assert!(!notes.contains("holds no code"), "{notes}");

    let regex = search(&server, "/JsonReader\\(/").await;
    assert_eq!(places(&regex), vec![format!("{java}:5")]);

    let phrase = search(&server, "\"deploying the json reader\"").await;
    assert_eq!(places(&phrase), vec!["scripts/release:3"]);
    assert_eq!(phrase["languages"], json!({"shell": 1}));

    let prefix = search(&server, "total_ce*").await;
    assert_eq!(places(&prefix), vec!["db/schema.sql:3"]);

    // plain words over YAML and the script, each hit in its own language
    let words = search(&server, "json reader lang:yaml,shell").await;
    let found = places(&words);
    assert!(
        found.contains(&"deploy/compose.yaml:3".to_string()),
        "{found:?}"
    );
    assert!(
        found.contains(&"scripts/release:3".to_string()),
        "{found:?}"
    );
    assert_eq!(words["languages"], json!({"shell": 1, "yaml": 1}));

    // the filters narrow files of unparsed languages as parsed ones
    let sql = search(&server, "INTEGER lang:sql").await;
    assert_eq!(places(&sql), vec!["db/schema.sql:2", "db/schema.sql:3"]);
    let (status, by_parameter) = server.get("/api/search?q=INTEGER&lang=sql&limit=1").await;
    assert_eq!(status, 200);
    assert_eq!(places(&by_parameter["data"]), vec!["db/schema.sql:2"]);
    let cursor = by_parameter["data"]["next_cursor"].as_str().unwrap();
    let (status, next) = server
        .get(&format!(
            "/api/search?q=INTEGER&lang=sql&limit=1&cursor={}",
            encode(cursor)
        ))
        .await;
    assert_eq!(status, 200);
    assert_eq!(places(&next["data"]), vec!["db/schema.sql:3"]);
    let docker = search(&server, "openjdk path:Dockerfile").await;
    assert_eq!(places(&docker), vec!["Dockerfile:2"]);
    assert_eq!(docker["languages"], json!({"dockerfile": 1}));
    assert!(
        search(&server, "INTEGER lang:java").await["hits"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // symbols stay the graph's: a file of a language it does not parse
    // gives its name and nothing more
    let symbols = search(&server, "invoices area:symbols").await;
    assert!(symbols["hits"].as_array().unwrap().is_empty(), "{symbols}");
    let file = search(&server, "schema area:symbols").await;
    assert_eq!(file["hits"][0]["kind"], "file", "{file}");

    // a language no file can have finds nothing, and says which it may be
    let (status, unknown) = server.get("/api/search?q=INTEGER&lang=sqll").await;
    assert_eq!(status, 200, "{unknown}");
    assert!(unknown["data"]["hits"].as_array().unwrap().is_empty());
    let notes = unknown["data"]["notes"].to_string();
    assert!(
        notes.contains("lang:sqll is no language the hub knows")
            && notes.contains("did you mean sql"),
        "{notes}"
    );
    let (status, refused) = server.get("/api/search?q=INTEGER&lang=SQL").await;
    assert_eq!(status, 400, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("in lower case"), "{message}");
}

#[tokio::test]
async fn binary_minified_generated_and_large_files_are_left_out_and_said_so() {
    let server = mixed_server().await;
    for (word, file) in [
        ("hugefileonlyword", "data/huge.csv (larger than 1 MiB)"),
        ("quietlybundledrule", "web/site.css (minified)"),
        ("lockedpackagename", "package-lock.json (generated)"),
    ] {
        let answer = search(&server, word).await;
        assert!(answer["hits"].as_array().unwrap().is_empty(), "{answer}");
        let notes = answer["notes"].to_string();
        assert!(notes.contains(file), "{word}: {notes}");
    }
    let (status, health) = server.get("/api/health").await;
    assert_eq!(status, 200);
    let files = &health["data"]["areas"]["graph"]["files"];
    assert_eq!(
        files["left_out"]["by_reason"],
        json!({"binary": 1, "generated": 1, "larger than 1 MiB": 1, "minified": 1}),
        "{files}"
    );
    for language in ["java", "yaml", "sql", "shell", "dockerfile", "python"] {
        assert_eq!(
            files["by_language"][language]["files"], 1,
            "{language}: {files}"
        );
    }
    assert_eq!(files["by_language"]["java"]["bytes"], JAVA.len(), "{files}");
}

#[tokio::test]
async fn an_index_of_files_that_were_all_left_out_says_which_and_why() {
    let server = TestServer::start().await;
    std::fs::write(server.repo().join("logo.png"), b"\x89PNG\0\0\0").unwrap();
    write(
        server.repo(),
        "dump.sql",
        &"INSERT INTO t VALUES (1);\n".repeat(60_000),
    );
    index_graph(&server.hub).await;
    let answer = search(&server, "anything").await;
    let notes = answer["notes"].to_string();
    assert!(
        notes.contains("nothing is indexed: 2 files the repository holds were all left out")
            && notes.contains("dump.sql (larger than 1 MiB)")
            && notes.contains("logo.png (binary)"),
        "{notes}"
    );
    assert!(!notes.contains("holds no"), "{notes}");
}

#[tokio::test]
async fn an_agent_searches_yaml_and_sql_over_mcp() {
    let repo = tempfile::tempdir().unwrap();
    mixed_repository(repo.path());
    let client = crate::mcp::stdio_client(repo.path()).await;
    let index = crate::mcp::call(&client, "cos_graph_index", json!({})).await;
    assert_eq!(crate::mcp::envelope(&index)["ok"], true);
    let result = crate::mcp::call(
        &client,
        "cos_search",
        json!({"q": "total_cents", "lang": "sql"}),
    )
    .await;
    let envelope = crate::mcp::envelope(&result);
    assert_eq!(envelope["ok"], true, "{envelope}");
    let hit = &envelope["data"]["hits"][0];
    assert_eq!(hit["path"], "db/schema.sql", "{envelope}");
    assert_eq!(hit["line"], 3);
    assert_eq!(envelope["data"]["languages"], json!({"sql": 1}));
    client.cancel().await.unwrap();
}

#[test]
fn cos_index_reports_what_is_searchable_by_language_and_what_was_left_out() {
    let repo = tempfile::tempdir().unwrap();
    mixed_repository(repo.path());
    write(
        repo.path(),
        "notes/readings.weirdext",
        "a file no table knows\n",
    );
    let output = cos(repo.path()).arg("index").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    // an extension no table knows is `text`, and said nowhere else
    let warned = String::from_utf8_lossy(&output.stderr);
    assert!(!warned.contains("WARN"), "{warned}");
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        printed
            .contains("left out by reason: binary 1, generated 1, larger than 1 MiB 1, minified 1"),
        "{printed}"
    );
    let languages = printed
        .lines()
        .find(|line| line.starts_with("searchable by language: "))
        .unwrap_or_else(|| panic!("{printed}"));
    for language in [
        "java 1 file (",
        "yaml 1 file (",
        "sql 1 file (",
        "shell 1 file (",
    ] {
        assert!(languages.contains(language), "{language}: {languages}");
    }
    // the search index is built with the graph, not by the first query
    assert!(
        printed
            .lines()
            .any(|line| line.starts_with("search index: took in graph 7 in ")),
        "{printed}"
    );
    let found = cos(repo.path())
        .args(["search", "image lang:yaml"])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&found.stdout);
    assert!(printed.contains("deploy/compose.yaml:3"), "{printed}");
}

#[tokio::test]
async fn a_served_hub_finds_a_new_file_of_a_language_it_does_not_parse() {
    let repo = tempfile::tempdir().unwrap();
    write(repo.path(), "app/main.py", "def start():\n    return 1\n");
    let mut served = crate::cli::serve_on_any_port(repo.path());
    let address = crate::cli::announced_address(&mut served);
    let client = reqwest::Client::new();
    let url = format!(
        "http://{address}/api/search?q={}",
        encode("replicaswanted lang:yaml")
    );
    // the first index is done once the Python file is found
    within_ten_seconds("the first index", || async {
        let answer = get(&client, &format!("http://{address}/api/search?q=start")).await;
        (answer["total"].as_u64() > Some(0))
            .then_some(())
            .ok_or_else(|| answer.to_string())
    })
    .await;
    write(
        repo.path(),
        "deploy/chart/values.yaml",
        "replicaswanted: 3\n",
    );
    within_ten_seconds("the new YAML file in search", || async {
        let answer = get(&client, &url).await;
        (places(&answer) == vec!["deploy/chart/values.yaml:1"])
            .then_some(())
            .ok_or_else(|| answer.to_string())
    })
    .await;
}

async fn get(client: &reqwest::Client, url: &str) -> Value {
    let response = client.get(url).send().await.unwrap();
    response.json::<Value>().await.unwrap()["data"].clone()
}
