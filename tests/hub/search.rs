//! Search over a fixture repository through REST (and the tool runtime):
//! identifier-aware matching, text operators, filters, ranking, cursors,
//! explanations of empty answers, freshness, modes and bad input.

use crate::common::{TestServer, error_of, index_graph};
use serde_json::{Value, json};
use std::path::Path;

pub(crate) fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

fn fixture(root: &Path) {
    write(
        root,
        "app/http.py",
        "def parse_http_request(raw):\n    return raw\n\nclass Parser:\n    pass\n\nparser = Parser()\n\ndef select_related(qs):\n    # select related rows\n    return qs\n",
    );
    write(
        root,
        "src/lib.rs",
        "pub fn parseHttpRequest() -> u32 {\n    auth_token() + 1\n}\nfn auth_token() -> u32 { 2 }\nfn authenticate() {}\n",
    );
    write(
        root,
        "web/request.ts",
        "export class ParseHTTPRequest {\n  run(): number { return 1; }\n}\nexport const parser = 3;\n",
    );
    write(
        root,
        "tests/test_http.py",
        "from app.http import parse_http_request\n\ndef test_parse():\n    assert parse_http_request(1) == 1\n",
    );
}

async fn indexed_server() -> TestServer {
    let server = TestServer::start().await;
    fixture(server.repo());
    index_graph(&server.hub).await;
    server
}

pub(crate) fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn search(server: &TestServer, query: &str, extra: &str) -> (u16, Value) {
    server
        .get(&format!("/api/search?q={}{extra}", encode(query)))
        .await
}

async fn hits(server: &TestServer, query: &str) -> Vec<Value> {
    let (status, body) = search(server, query, "&limit=200").await;
    assert_eq!(status, 200, "{query}: {body}");
    body["data"]["hits"].as_array().cloned().unwrap_or_default()
}

/// `area kind title path:line` of each hit.
fn described(hits: &[Value]) -> Vec<String> {
    hits.iter()
        .map(|h| {
            format!(
                "{} {} {} {}:{}",
                h["area"].as_str().unwrap(),
                h["kind"].as_str().unwrap(),
                h["title"].as_str().unwrap(),
                h["path"].as_str().unwrap_or("-"),
                h["line"]
            )
        })
        .collect()
}

fn symbol_titles(hits: &[Value]) -> Vec<String> {
    hits.iter()
        .filter(|h| h["area"] == "symbols")
        .map(|h| h["title"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn spellings_of_an_identifier_find_each_other_and_the_exact_one_ranks_first() {
    let server = indexed_server().await;
    for query in [
        "parseHttpRequest",
        "parse_http_request",
        "ParseHTTPRequest",
        "parse http request",
    ] {
        let found = hits(&server, query).await;
        let symbols = symbol_titles(&found);
        for name in ["parse_http_request", "parseHttpRequest", "ParseHTTPRequest"] {
            assert!(
                symbols.contains(&name.to_string()),
                "{query} misses {name}: {symbols:?}"
            );
        }
        if !query.contains(' ') {
            assert_eq!(found[0]["title"], query, "{query}: {:?}", described(&found));
            assert_eq!(found[0]["why"], "exact definition");
            assert!(
                found[0]["opens"]["uid"]
                    .as_str()
                    .unwrap()
                    .starts_with("code:")
            );
        }
        // code text finds the call sites of every spelling too
        let lines: Vec<&Value> = found.iter().filter(|h| h["area"] == "code").collect();
        assert!(
            lines.iter().any(|h| h["path"] == "tests/test_http.py"),
            "{query}: {:?}",
            described(&found)
        );
    }
    // the class definition's snippet is its line, highlighted where it matched
    let found = hits(&server, "ParseHTTPRequest").await;
    let first = &found[0];
    assert_eq!(first["snippet"], "export class ParseHTTPRequest {");
    let highlight = &first["highlights"][0];
    assert_eq!(
        (highlight["start"].as_u64(), highlight["end"].as_u64()),
        (Some(13), Some(29))
    );
    assert_eq!(first["opens"]["location"], "web/request.ts:1");
}

#[tokio::test(flavor = "multi_thread")]
async fn phrases_prefixes_exclusions_substrings_and_regexes() {
    let server = indexed_server().await;
    // prefix: auth* finds auth_token and authenticate, not parse
    let names = symbol_titles(&hits(&server, "auth*").await);
    assert!(
        names.contains(&"auth_token".into()) && names.contains(&"authenticate".into()),
        "{names:?}"
    );
    // a phrase matches adjacent words, in an identifier or in a comment
    let found = hits(&server, "\"select related\"").await;
    assert!(symbol_titles(&found).contains(&"select_related".into()));
    assert!(found.iter().any(|h| {
        h["area"] == "code"
            && h["snippet"]
                .as_str()
                .unwrap()
                .contains("# select related rows")
    }));
    // exclusion drops every hit with the word
    let found = hits(&server, "parse_http_request -test").await;
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|h| !h["snippet"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("test")),
        "{:?}",
        described(&found)
    );
    // substring in code text: part of a word
    let found = hits(&server, "thentic area:code").await;
    assert_eq!(described(&found), vec!["code line src/lib.rs src/lib.rs:5"]);
    assert_eq!(found[0]["why"], "text (partial)");
    // regex over code text, verified line by line
    let found = hits(&server, r"/fn \w+_token\(\)/").await;
    assert_eq!(described(&found), vec!["code line src/lib.rs src/lib.rs:4"]);
    // FTS syntax in user text is plain text
    for query in [
        "foo(bar",
        "a-b",
        "std::vec",
        "x AND",
        "\"unbalanced",
        "NEAR(a b)",
        "*",
        "parse OR",
    ] {
        let (status, body) = search(&server, query, "").await;
        assert!(status == 200 || status == 400, "{query}: {status} {body}");
        if status == 400 {
            assert_eq!(error_of(&body)["code"], "E_ARGUMENT", "{query}: {body}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn filters_narrow_and_bad_filters_are_refused_naming_the_allowed_ones() {
    let server = indexed_server().await;
    let only_python = hits(&server, "parser lang:python").await;
    assert!(!only_python.is_empty());
    assert!(
        only_python
            .iter()
            .all(|h| h["path"].as_str().unwrap().ends_with(".py"))
    );
    let classes = hits(&server, "parser kind:class").await;
    assert_eq!(symbol_titles(&classes), vec!["Parser"]);
    assert!(classes.iter().all(|h| h["kind"] == "class"));
    let under_web = hits(&server, "parser path:web/**").await;
    assert!(!under_web.is_empty());
    assert!(
        under_web
            .iter()
            .all(|h| h["path"].as_str().unwrap().starts_with("web/"))
    );
    // the same filters as separate parameters
    let (status, body) = search(&server, "parser", "&area=symbols&lang=typescript").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        symbol_titles(body["data"]["hits"].as_array().unwrap()),
        vec!["parser"]
    );
    for (query, expected) in [
        ("parser path:^web/.*$", "not a regular expression"),
        (
            "parser area:nowhere",
            "one of symbols, code, tasks, docs, evidence",
        ),
        ("parser lang:Python", "a language's name in lower case"),
        ("parser status:someday", "one of emergency"),
        (
            "parser color:red",
            "filters are area, kind, path, lang, status",
        ),
        ("/x(/", "a valid regular expression at character"),
        ("/parse/ area:tasks", "at least one area"),
    ] {
        let (status, body) = search(&server, query, "").await;
        assert_eq!(status, 400, "{query}: {body}");
        let error = error_of(&body);
        assert_eq!(error["code"], "E_ARGUMENT");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.starts_with("q: ") && message.contains(expected),
            "{query}: {message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ranking_puts_classes_above_variables_and_breaks_ties_by_path() {
    let server = indexed_server().await;
    let found = hits(&server, "Parser").await;
    let symbols: Vec<String> = described(&found)
        .into_iter()
        .filter(|d| d.starts_with("symbols"))
        .collect();
    assert_eq!(
        symbols,
        vec![
            "symbols class Parser app/http.py:4",
            "symbols variable parser app/http.py:7",
            "symbols variable parser web/request.ts:4",
        ],
        "{:?}",
        described(&found)
    );
    assert_eq!(found[0]["why"], "exact definition");
    assert_eq!(found[1]["why"], "name");
    // the same query twice ranks the same
    assert_eq!(described(&hits(&server, "Parser").await), described(&found));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_documents_title_is_found_once_at_its_heading_not_again_in_its_front_matter() {
    let server = TestServer::start().await;
    write(
        server.repo(),
        "docs/adr/0007-retries.md",
        "---\ntitle: Retry budget\nstatus: accepted\n---\n\n# Retry budget\n\nHow many retries a call gets.\n",
    );
    write(server.repo(), "docs/plain.md", "retry budget notes\n");
    let found: Vec<Value> = hits(&server, "retry budget area:docs")
        .await
        .into_iter()
        .filter(|h| h["opens"]["document"]["mount"] == "docs" && h["path"] != "plain.md")
        .collect();
    assert_eq!(
        described(&found),
        vec![
            "docs heading Retry budget adr/0007-retries.md:6",
            "docs heading 0007-retries.md adr/0007-retries.md:2",
        ],
        "the heading first; the front matter, named by its file, after it"
    );
    assert_eq!(found[0]["why"], "name");
    assert_eq!(found[1]["why"], "text (whole word)");
    assert_eq!(found[1]["opens"]["document"]["section"], "");
    // a document without headings is still one section under its title
    let plain: Vec<Value> = hits(&server, "retry budget area:docs")
        .await
        .into_iter()
        .filter(|h| h["path"] == "plain.md")
        .collect();
    assert_eq!(plain.len(), 1, "{plain:?}");
    assert_eq!(plain[0]["title"], "plain");
}

#[tokio::test(flavor = "multi_thread")]
async fn cursors_continue_exactly_and_go_stale_when_the_index_moves() {
    let server = indexed_server().await;
    let whole = hits(&server, "parse").await;
    assert!(whole.len() >= 6, "{:?}", described(&whole));
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let extra = match &cursor {
            Some(c) => format!("&limit=2&cursor={c}"),
            None => "&limit=2".to_string(),
        };
        let (status, body) = search(&server, "parse", &extra).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["data"]["total"].as_u64(), Some(whole.len() as u64));
        paged.extend(body["data"]["hits"].as_array().unwrap().iter().cloned());
        match body["data"]["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(described(&paged), described(&whole));
    // a cursor for another query is refused
    let (_, first) = search(&server, "parse", "&limit=2").await;
    let cursor = first["data"]["next_cursor"].as_str().unwrap().to_string();
    let (status, body) = search(&server, "parser", &format!("&cursor={cursor}")).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(error_of(&body)["code"], "STALE_CURSOR");
    // a change the index takes in makes the old cursor stale
    let (status, _) = server
        .post_json("/api/board/tasks", json!({"title": "Parse the config"}))
        .await;
    assert_eq!(status, 201);
    let (status, body) = search(&server, "parse", &format!("&limit=2&cursor={cursor}")).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(error_of(&body)["code"], "STALE_CURSOR");
}

#[tokio::test(flavor = "multi_thread")]
async fn filters_choose_among_every_match_not_only_the_best_ranked_of_a_capped_word() {
    let server = TestServer::start().await;
    // more functions named for the word than a query ranks, each a better
    // match than the long-named class and the long section that hold it too
    let functions: String = (0..2_100)
        .map(|n| format!("def gizmo_{n}():\n    pass\n\n"))
        .collect();
    write(server.repo(), "app/gizmos.py", &functions);
    write(
        server.repo(),
        "app/holder.py",
        "class GizmoHolderForTheLongAndWindingRoadAheadOfUs:\n    pass\n",
    );
    let filler = "words that say nothing in particular about anything at all ".repeat(40);
    write(
        server.repo(),
        "docs/notes.md",
        &format!("# Notes on storage and the things we keep\n\n{filler}and one gizmo.\n"),
    );
    index_graph(&server.hub).await;

    let (status, body) = search(&server, "gizmo", "").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["data"]["notes"].to_string().contains("more than 2000"),
        "the word alone is capped: {body}"
    );
    for (query, title) in [
        (
            "gizmo kind:class",
            "GizmoHolderForTheLongAndWindingRoadAheadOfUs",
        ),
        (
            "gizmo path:app/holder.py",
            "GizmoHolderForTheLongAndWindingRoadAheadOfUs",
        ),
        ("gizmo area:docs", "Notes on storage and the things we keep"),
    ] {
        let (status, body) = search(&server, query, "").await;
        assert_eq!(status, 200, "{query}: {body}");
        let titles: Vec<&str> = body["data"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|hit| hit["area"] != "code")
            .map(|hit| hit["title"].as_str().unwrap())
            .collect();
        assert_eq!(titles, [title], "{query}: {body}");
        assert!(
            !body["data"]["notes"].to_string().contains("more than 2000"),
            "{query}: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_answer_says_why() {
    let server = indexed_server().await;
    let (status, body) = search(&server, "parser path:nowhere/**", "").await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["total"], 0);
    let notes = body["data"]["notes"].to_string();
    assert!(
        notes.contains("path:nowhere/** matches no indexed file"),
        "{notes}"
    );
    assert!(
        !notes.contains("not indexed, so not searched"),
        "every file is indexed: {notes}"
    );

    let (_, body) = search(&server, "ab area:code", "").await;
    let notes = body["data"]["notes"].to_string();
    assert!(notes.contains("3 or more characters"), "{notes}");

    let (_, body) = search(&server, "authetnicate", "").await;
    assert_eq!(body["data"]["total"], 0, "{body}");
    assert_eq!(body["data"]["did_you_mean"], json!(["authenticate"]));
    // offered only where it finds something through the same filters:
    // authenticate is a Rust function
    let (_, body) = search(&server, "authetnicate lang:rust", "").await;
    assert_eq!(
        body["data"]["did_you_mean"],
        json!(["authenticate"]),
        "{body}"
    );
    for filtered in [
        "authetnicate lang:python",
        "authetnicate kind:class",
        "authetnicate path:app/**",
        "authetnicate area:docs",
    ] {
        let (_, body) = search(&server, filtered, "").await;
        assert_eq!(body["data"]["total"], 0, "{filtered}: {body}");
        assert_eq!(
            body["data"]["did_you_mean"],
            json!([]),
            "{filtered}: {body}"
        );
    }
    let (_, body) = search(&server, "authetnicate area:code", "").await;
    assert_eq!(
        body["data"]["did_you_mean"],
        json!(["authenticate"]),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn did_you_mean_offers_names_of_the_areas_searched_once_whatever_their_case() {
    let server = indexed_server().await;
    write(server.repo(), "app/net.py", "def ip():\n    pass\n");
    index_graph(&server.hub).await;
    for (query, suggested, why) in [
        (
            "parsre",
            json!(["Parser"]),
            "the class Parser and the variables parser are one suggestion",
        ),
        ("parsre area:tasks", json!([]), "no task is called so"),
        (
            "parsre area:code",
            json!(["Parser"]),
            "code text holds the symbols' names",
        ),
        (
            "urn area:symbols",
            json!(["run"]),
            "two letters swapped are one slip",
        ),
        (
            "wip",
            json!([]),
            "a 2-letter name (ip) is no suggestion for wip",
        ),
    ] {
        let (_, body) = search(&server, query, "").await;
        assert_eq!(body["data"]["total"], 0, "{query}: {body}");
        assert_eq!(body["data"]["did_you_mean"], suggested, "{query}: {why}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_before_the_code_is_indexed_says_so() {
    let server = TestServer::start().await;
    fixture(server.repo());
    // documents are in the index already, the code is not
    write(
        server.repo(),
        "docs/guide.md",
        "# Guide\n\n## Setup\nsteps to parse_http_request\n",
    );
    let (status, body) = search(&server, "parse_http_request area:code", "").await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["total"], 0, "{body}");
    let notes = body["data"]["notes"].to_string();
    assert!(notes.contains("the code is not indexed yet"), "{notes}");
    // found in a document, and still told the code was not searched
    let (_, body) = search(&server, "parse_http_request", "").await;
    assert_ne!(body["data"]["facets"]["docs"], 0, "{body}");
    let notes = body["data"]["notes"].to_string();
    assert!(notes.contains("the code is not indexed yet"), "{notes}");
    // a question the code could not answer anyway is not told about it
    let (_, body) = search(&server, "parse_http_request area:docs", "").await;
    let notes = body["data"]["notes"].to_string();
    assert!(!notes.contains("not indexed"), "{notes}");

    index_graph(&server.hub).await;
    let (_, body) = search(&server, "parse_http_request", "").await;
    assert_ne!(body["data"]["facets"]["symbols"], 0, "{body}");
    let notes = body["data"]["notes"].to_string();
    assert!(!notes.contains("not indexed"), "{notes}");
    let (_, body) = search(&server, "nothing_is_named_like_this", "").await;
    assert_eq!(body["data"]["total"], 0, "{body}");
    let notes = body["data"]["notes"].to_string();
    assert!(!notes.contains("not indexed"), "{notes}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tasks_documents_and_saved_files_are_searchable_at_once() {
    let server = indexed_server().await;
    // a new task
    let (status, task) = server
        .post_json(
            "/api/board/tasks",
            json!({"title": "Rotate the webhookSecret", "description": "The signing key expires in March.", "labels": ["security"]}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let id = task["data"]["id"].as_str().unwrap().to_string();
    let found = hits(&server, "webhook secret").await;
    assert_eq!(found[0]["area"], "tasks", "{:?}", described(&found));
    assert_eq!(found[0]["opens"]["task_id"], id.as_str());
    let found = hits(&server, "signing key status:icebox").await;
    assert_eq!(found[0]["opens"]["task_id"], id.as_str());
    assert!(
        found[0]["matched"]
            .as_array()
            .unwrap()
            .contains(&json!("body"))
    );
    let (status, body) = search(&server, "signing key status:complete", "").await;
    assert_eq!((status, &body["data"]["total"]), (200, &json!(0)));

    // a new document, then a patch to it
    let (status, created) = server
        .post_json(
            "/api/docs/documents",
            json!({"mount": "docs", "path": "runbook.md", "request_id": "search-1",
                   "content": "# Runbook\n\nIntro.\n\n## Failover\n\nPromote the replica first.\n"}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let found = hits(&server, "promote replica").await;
    assert_eq!(found[0]["area"], "docs", "{:?}", described(&found));
    assert_eq!(
        found[0]["opens"]["document"],
        json!({"mount": "docs", "path": "runbook.md", "section": "failover"})
    );
    assert_eq!(found[0]["line"], 7);
    let document = &created["data"]["document"];
    let (status, patched) = server
        .patch_json(
            "/api/docs/document?mount=docs&path=runbook.md",
            json!({"request_id": "search-2",
                   "base": {"rev": document["rev"], "hash": document["hash"]},
                   "operations": [{"op": "append_to_section", "section": "Runbook/Failover", "content": "Then drain the queue."}]}),
            None,
        )
        .await;
    assert_eq!(status, 200, "{patched}");
    let found = hits(&server, "drain queue").await;
    assert_eq!(
        found[0]["opens"]["document"]["section"],
        "failover",
        "{:?}",
        described(&found)
    );

    // a saved file, once the graph has indexed it (here by the index tool; `cos serve` runs it on save)
    write(
        server.repo(),
        "app/fresh.py",
        "def freshly_saved_helper():\n    return 1\n",
    );
    index_graph(&server.hub).await;
    let (status, body) = search(&server, "freshlySavedHelper", "").await;
    assert_eq!(status, 200);
    assert_eq!(
        body["data"]["hits"][0]["title"], "freshly_saved_helper",
        "{body}"
    );
    assert!(body["meta"]["index_updated_at"].is_string(), "{body}");
    assert_eq!(body["meta"]["pending"], false);
    // and a removed one is gone
    std::fs::remove_file(server.repo().join("app/fresh.py")).unwrap();
    index_graph(&server.hub).await;
    let (_, body) = search(&server, "freshly_saved_helper", "").await;
    assert_eq!(body["data"]["total"], 0, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn modes_say_which_ran_and_semantic_is_unavailable() {
    let server = indexed_server().await;
    for extra in ["", "&mode=auto", "&mode=lexical"] {
        let (status, body) = search(&server, "parser", extra).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["meta"]["mode"], "lexical");
        assert!(body["meta"]["mode_reason"].is_string());
    }
    let (status, body) = search(&server, "parser", "&mode=semantic").await;
    assert_eq!(status, 503, "{body}");
    let error = error_of(&body);
    assert_eq!(error["code"], "E_UNAVAILABLE");
    assert_eq!(error["category"], "unavailable");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("embedding model")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_a_validation_error_naming_the_field() {
    let server = indexed_server().await;
    let long = "a".repeat(1001);
    for (query, extra, field) in [
        ("", "", "q"),
        ("   ", "", "q"),
        ("!!", "", "q"),
        (long.as_str(), "", "q"),
        ("/a[/", "", "q"),
        ("parser", "&limit=0", "limit"),
        ("parser", "&limit=201", "limit"),
        ("parser", "&mode=fuzzy", "mode"),
    ] {
        let (status, body) = search(&server, query, extra).await;
        assert_eq!(status, 400, "{query:?}{extra}: {body}");
        let error = error_of(&body);
        assert_eq!(error["category"], "validation", "{body}");
        assert!(
            error["message"].as_str().unwrap().contains(field),
            "{query:?}{extra}: {body}"
        );
    }
}

/// Polls a search until `found` holds, for at most 10 s; answers how long it took.
async fn until_found(
    server: &TestServer,
    query: &str,
    found: impl Fn(&Value) -> bool,
) -> std::time::Duration {
    let found = &found;
    crate::common::within_ten_seconds(query, || async move {
        let (status, body) = search(server, query, "").await;
        assert_eq!(status, 200, "{body}");
        if found(&body) {
            Ok(())
        } else {
            Err(body.to_string())
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn files_saved_and_documents_edited_on_disk_while_serving_are_found() {
    let server = indexed_server().await;
    let _graph =
        cos_hub::graph::watch::start(server.hub.clone()).expect("the graph watcher starts");
    let _docs =
        cos_hub::docs::watch::start(server.hub.clone()).expect("the documents watcher starts");
    // the watchers' own first runs settle before anything is saved
    until_found(&server, "parse_http_request", |b| {
        b["data"]["total"].as_u64() > Some(0)
    })
    .await;

    write(
        server.repo(),
        "app/saved.py",
        "def watcher_saved_function():\n    return 1\n",
    );
    let took = until_found(&server, "watcherSavedFunction", |b| {
        b["data"]["hits"][0]["title"] == "watcher_saved_function"
    })
    .await;
    eprintln!(
        "a saved file was found {} ms after the save",
        took.as_millis()
    );

    write(
        server.repo(),
        "docs/ops.md",
        "# Ops\n\n## Paging\n\nEscalate to the storage rota.\n",
    );
    until_found(&server, "storage rota", |b| {
        b["data"]["hits"][0]["opens"]["document"]["section"] == "paging"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn areas_of_modules_switched_off_are_left_out_and_said_so() {
    let server = indexed_server().await;
    let (status, _) = server
        .post_json(
            "/api/board/tasks",
            json!({"title": "Parse the release notes"}),
        )
        .await;
    assert_eq!(status, 201);
    let (_, body) = search(&server, "parse", "").await;
    assert!(body["data"]["facets"]["tasks"].as_u64() > Some(0), "{body}");

    let (status, _) = server
        .put_json("/api/settings/modules/board", json!({"enabled": false}))
        .await;
    assert_eq!(status, 200);
    let (status, body) = search(&server, "parse", "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["data"]["facets"]["tasks"], 0);
    assert!(body["data"]["facets"]["symbols"].as_u64() > Some(0));
    let notes = body["data"]["notes"].to_string();
    assert!(
        notes.contains("tasks were not searched: the board module is switched off"),
        "{notes}"
    );

    // and search itself switched off answers module_disabled
    server
        .put_json("/api/settings/modules/search", json!({"enabled": false}))
        .await;
    let (status, body) = search(&server, "parse", "").await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(error_of(&body)["code"], "E_MODULE_DISABLED");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_index_is_brought_level_on_request_and_says_what_it_took_in() {
    let server = indexed_server().await;
    let caught_up = |body: &Value| body["data"]["caught_up"].clone();
    let (status, first) = server.post_json("/api/search/index", json!({})).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(
        caught_up(&first)["graph"],
        4,
        "the fixture's four files: {first}"
    );
    assert!(first["data"]["index_updated_at"].is_string(), "{first}");
    let (_, again) = server.post_json("/api/search/index", json!({})).await;
    assert_eq!(caught_up(&again), json!({}), "level already: {again}");
    let (status, _) = server
        .post_json("/api/board/tasks", json!({"title": "Rotate the keys"}))
        .await;
    assert_eq!(status, 201);
    let (_, task) = server.post_json("/api/search/index", json!({})).await;
    assert_eq!(caught_up(&task), json!({"board": 1}), "{task}");
    let (status, refused) = server
        .post_json("/api/search/index", json!({"areas": "code"}))
        .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(error_of(&refused)["code"], "E_ARGUMENT");
}

#[tokio::test(flavor = "multi_thread")]
async fn while_a_hub_serves_the_index_takes_in_writes_before_any_query_asks() {
    let server = indexed_server().await;
    let _follower =
        cos_hub::search::indexer::start(server.hub.clone()).expect("the follower starts");
    let mut stream = crate::common::ChangeStream::open(&server).await;
    let search_revision = |revisions: &Value| revisions["search"].as_i64().unwrap_or(0);
    let before = search_revision(&stream.next_revisions().await);
    // a write through a front door; no search is asked for from here on
    let (status, _) = server
        .post_json(
            "/api/board/tasks",
            json!({"title": "Renew the certificates"}),
        )
        .await;
    assert_eq!(status, 201);
    let mut moved = false;
    for _ in 0..20 {
        if search_revision(&stream.next_revisions().await) > before {
            moved = true;
            break;
        }
    }
    assert!(moved, "the search index did not move after the write");
    // it took in the graph's files and the task: nothing is left to do
    let (_, level) = server.post_json("/api/search/index", json!({})).await;
    assert_eq!(level["data"]["caught_up"], json!({}), "{level}");
    let found = hits(&server, "renew certificates").await;
    assert_eq!(found[0]["title"], "Renew the certificates", "{found:?}");
}

#[test]
fn cos_serve_builds_the_search_index_after_its_first_graph_index_unasked() {
    let repo = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let mut server = crate::cli::serve_on_any_port(repo.path());
    let address = crate::cli::announced_address(&mut server);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = reqwest::Client::new();
    let url = format!("http://{address}/api/stream");
    let built = runtime.block_on(async {
        let mut stream = crate::common::ChangeStream::open_at(&client, &url).await;
        for _ in 0..20 {
            let revisions = stream.next_revisions().await;
            if revisions["search"].as_i64() > Some(0) {
                return true;
            }
        }
        false
    });
    let level = runtime.block_on(async {
        let response = client
            .post(format!("http://{address}/api/search/index"))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        response.json::<Value>().await.unwrap()
    });
    server.kill().unwrap();
    let _ = server.wait();
    assert!(built, "no search index was built while no query asked");
    assert_eq!(level["data"]["caught_up"], json!({}), "{level}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_in_plain_words_ranks_what_holds_most_of_its_words_first() {
    let server = indexed_server().await;
    write(
        server.repo(),
        "app/gzip.py",
        "class GZipMiddleware:\n    \"\"\"Compresses the content of responses for browsers that accept gzip.\"\"\"\n\ndef compress_string(text):\n    return text\n",
    );
    write(
        server.repo(),
        "docs/passwords.md",
        "# Passwords\n\nHow the hub hashes a password before it keeps it.\n",
    );
    write(
        server.repo(),
        "app/notes.py",
        "BODY = compress(responses)  # not zipped\n",
    );
    write(
        server.repo(),
        "app/files.py",
        "def get_valid_filename(name):\n    return name\n\ndef get_name(obj):\n    return obj\n",
    );
    index_graph(&server.hub).await;
    let (status, body) = search(
        &server,
        "how do I compress responses with gzip",
        "&limit=50",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let found = body["data"]["hits"].as_array().unwrap().clone();
    assert!(!found.is_empty(), "a question is answered: {body}");
    // the middleware holds every word (`compresses`, `responses` by their stem)
    assert_eq!(
        found[0]["title"],
        "GZipMiddleware",
        "{:?}",
        described(&found)
    );
    assert_eq!(found[0]["words"], json!(["compress", "responses", "gzip"]));
    // every hit names words of the query, and fewer words never rank above more
    let counts: Vec<usize> = found
        .iter()
        .map(|h| h["words"].as_array().map_or(0, Vec::len))
        .collect();
    assert!(counts.iter().all(|n| *n >= 1), "{counts:?}");
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    let notes = body["data"]["notes"].to_string();
    assert!(notes.contains("how, do, I, with"), "{notes}");
    // a line of code holding some of the words takes part, saying which
    let line = found
        .iter()
        .find(|h| h["path"] == "app/notes.py")
        .unwrap_or_else(|| panic!("the line is found: {:?}", described(&found)));
    assert_eq!(line["words"], json!(["compress", "responses"]), "{line}");

    // a stem finds its inflections; a document's heading ranks for them
    let found = hits(&server, "hash passwords").await;
    assert_eq!(found[0]["title"], "Passwords", "{:?}", described(&found));
    assert_eq!(found[0]["words"], json!(["hash", "passwords"]));

    // two words may be one in the code: `file name` is held by `filename`
    let found = hits(&server, "a valid file name").await;
    assert_eq!(
        found[0]["title"],
        "get_valid_filename",
        "{:?}",
        described(&found)
    );
    assert_eq!(found[0]["words"], json!(["valid", "file", "name"]));

    // the precise forms keep their meaning: +word is required, -word excludes
    let found = hits(&server, "+gzip compress").await;
    assert!(
        found
            .iter()
            .all(|h| h["words"].to_string().contains("gzip")),
        "{:?}",
        described(&found)
    );
    let found = hits(&server, "compress responses -gzip").await;
    assert!(
        found.iter().all(|h| h["path"] != "app/gzip.py"),
        "{:?}",
        described(&found)
    );
    // one identifier is still found exactly, first
    let found = hits(&server, "parse_http_request").await;
    assert_eq!(
        found[0]["why"],
        "exact definition",
        "{:?}",
        described(&found)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_answer_names_the_words_nothing_holds_and_what_a_filter_or_word_hides() {
    let server = indexed_server().await;
    let (_, body) = search(&server, "frobnicate zzqxv", "").await;
    assert_eq!(body["data"]["total"], 0, "{body}");
    let notes = body["data"]["notes"].to_string();
    assert!(
        notes.contains("no symbol, section, task or evidence holds `frobnicate`, `zzqxv`"),
        "{notes}"
    );
    let (_, body) = search(&server, "authenticate kind:class", "").await;
    assert_eq!(body["data"]["total"], 0, "{body}");
    let notes = body["data"]["notes"].to_string();
    assert!(
        notes.contains("without kind:class: 1 symbols, sections, tasks or evidence match"),
        "{notes}"
    );
    let (_, body) = search(&server, "+authenticate +frobnicate", "").await;
    let notes = body["data"]["notes"].to_string();
    assert!(
        notes.contains("without `frobnicate`: 1 symbols") && notes.contains("holds `frobnicate`"),
        "{notes}"
    );
}
