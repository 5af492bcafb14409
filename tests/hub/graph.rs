//! The knowledge graph on small fixture repositories, through HTTP and the library's store.

use crate::common::{ChangeStream, TestServer, error_of};
use cos_hub::envelope::Budget;
use cos_hub::tools::Source;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

fn fixture(root: &Path) {
    write(root, ".gitignore", "ignored/\n");
    write(root, "ignored/skip.py", "def never():\n    pass\n");
    write(root, "app/__init__.py", "");
    write(
        root,
        "app/db.py",
        "def connect():\n    return 1\n\ndef reconnect():\n    return connect()\n\nclass Base:\n    pass\n",
    );
    write(
        root,
        "app/models.py",
        "from app.db import connect\nimport os\n\nclass Store(Base):\n    def save(self):\n        return connect()\n\ndef helper():\n    pass\n",
    );
    write(root, "tools/helper.py", "def helper():\n    pass\n");
    write(
        root,
        "src/lib.rs",
        "pub trait Shape { fn area(&self) -> f64; }\npub struct Square;\nimpl Shape for Square {\n    fn area(&self) -> f64 { side() }\n}\nfn side() -> f64 { 2.0 }\n",
    );
    write(
        root,
        "docs/guide.md",
        "# Guide\n\nSee [the database](../app/db.py) and [setup](setup.md#install).\n",
    );
    write(root, "docs/setup.md", "# Setup\n\n## Install\n\nRun it.\n");
}

/// (uid, kind)
type Nodes = BTreeSet<(String, String)>;
/// (source uid, target uid, kind, confidence)
type Edges = BTreeSet<(String, String, String, String)>;

/// Every node (uid, kind) and edge (source, target, kind, confidence) of a hub's graph.
/// The names and definitions of a store's indexes.
fn index_definitions(store: &cos_hub::store::Store) -> Vec<(String, Option<String>)> {
    store
        .read(|c| {
            let mut statement = c.prepare(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name",
            )?;
            let rows = statement.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })
        .unwrap()
}

fn hub_store(state_dir: &Path) -> cos_hub::store::Store {
    let schemas = cos_hub::hub::default_registry().schemas();
    cos_hub::store::Store::open(state_dir, &schemas).unwrap()
}

fn dump(state_dir: &Path) -> (Nodes, Edges) {
    let store = hub_store(state_dir);
    // an index run leaves every index the schema defines (a cold index drops and rebuilds some)
    let fresh = tempfile::tempdir().unwrap();
    let schema = hub_store(fresh.path());
    assert_eq!(index_definitions(&store), index_definitions(&schema));
    store
        .read(|c| {
            let integrity: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
            assert_eq!(integrity, "ok");
            // the full-text index matches the nodes (fails on a stale or doubled entry)
            c.execute(
                "INSERT INTO graph_nodes_fts(graph_nodes_fts, rank) VALUES ('integrity-check', 1)",
                [],
            )?;
            let mut nodes = c.prepare("SELECT uid, kind FROM graph_nodes")?;
            let nodes = nodes
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let mut edges = c.prepare(
                "SELECT s.uid, t.uid, e.kind, e.confidence FROM graph_edges e
                 JOIN graph_nodes s ON s.id = e.source JOIN graph_nodes t ON t.id = e.target",
            )?;
            let edges = edges
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect::<rusqlite::Result<_>>()?;
            Ok((nodes, edges))
        })
        .unwrap()
}

/// The graph a cold index gives for `entries` copied from `root` into a fresh repository.
async fn cold_index_of(root: &Path, entries: &[&str]) -> (Nodes, Edges) {
    let cold = tempfile::tempdir().unwrap();
    for entry in entries {
        write(
            cold.path(),
            entry,
            &std::fs::read_to_string(root.join(entry)).unwrap(),
        );
    }
    let fresh = cos_hub::tools::Hub::open(
        cos_hub::tools::HubConfig::for_repo(cold.path(), None),
        cos_hub::hub::default_registry(),
    )
    .unwrap();
    crate::common::index_graph(&fresh).await;
    dump(&cold.path().join(".cos"))
}

fn has_edge(edges: &Edges, source: &str, target: &str, kind: &str) -> bool {
    edges
        .iter()
        .any(|(s, t, k, _)| s == source && t == target && k == kind)
}

#[tokio::test(flavor = "multi_thread")]
async fn indexes_code_and_docs_with_the_expected_nodes_and_edges() {
    let server = TestServer::start().await;
    fixture(server.repo());
    let (status, summary) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{summary}");
    assert_eq!(
        summary["data"]["files"], 7,
        "gitignored files stay out: {summary}"
    );
    assert_eq!(summary["data"]["parsed"], 7);

    let (nodes, edges) = dump(&server.state_dir());
    for (uid, kind) in [
        ("folder:", "folder"),
        ("folder:app", "folder"),
        ("code:file:app/db.py", "file"),
        ("code:function:app/db.py::connect", "function"),
        ("code:class:app/db.py::Base", "class"),
        ("code:class:app/models.py::Store", "class"),
        ("code:method:app/models.py::Store.save", "method"),
        ("code:interface:src/lib.rs::Shape", "interface"),
        ("code:class:src/lib.rs::Square", "class"),
        ("code:method:src/lib.rs::Square.area", "method"),
        ("doc:file:docs/guide.md", "doc_file"),
        ("doc:heading:docs/setup.md#install", "doc_heading"),
        ("code:external:os", "external"),
    ] {
        assert!(
            nodes.contains(&(uid.to_string(), kind.to_string())),
            "missing {uid} ({kind})"
        );
    }
    assert!(!nodes.iter().any(|(uid, _)| uid.contains("ignored/")));
    assert!(has_edge(&edges, "folder:", "folder:app", "contains"));
    assert!(has_edge(
        &edges,
        "folder:app",
        "code:file:app/db.py",
        "contains"
    ));
    assert!(has_edge(
        &edges,
        "code:class:app/models.py::Store",
        "code:method:app/models.py::Store.save",
        "contains"
    ));
    // imports resolved across files, unknown modules as external nodes
    assert!(has_edge(
        &edges,
        "code:file:app/models.py",
        "code:file:app/db.py",
        "imports"
    ));
    assert!(has_edge(
        &edges,
        "code:file:app/models.py",
        "code:external:os",
        "imports"
    ));
    // calls: same file, and across files by a unique name
    assert!(has_edge(
        &edges,
        "code:function:app/db.py::reconnect",
        "code:function:app/db.py::connect",
        "calls"
    ));
    assert!(has_edge(
        &edges,
        "code:method:app/models.py::Store.save",
        "code:function:app/db.py::connect",
        "calls"
    ));
    assert!(has_edge(
        &edges,
        "code:method:src/lib.rs::Square.area",
        "code:function:src/lib.rs::side",
        "calls"
    ));
    assert!(has_edge(
        &edges,
        "code:class:app/models.py::Store",
        "code:class:app/db.py::Base",
        "inherits_from"
    ));
    assert!(has_edge(
        &edges,
        "code:class:src/lib.rs::Square",
        "code:interface:src/lib.rs::Shape",
        "implements"
    ));
    // docs: links to files and cited headings
    assert!(has_edge(
        &edges,
        "doc:file:docs/guide.md",
        "code:file:app/db.py",
        "links_to"
    ));
    assert!(has_edge(
        &edges,
        "doc:file:docs/guide.md",
        "doc:heading:docs/setup.md#install",
        "cites_heading"
    ));
    // each edge records its extractor's confidence
    let confidence = edges
        .iter()
        .find(|(s, t, k, _)| {
            s == "code:method:app/models.py::Store.save"
                && t == "code:function:app/db.py::connect"
                && k == "calls"
        })
        .map(|(_, _, _, c)| c.clone());
    assert_eq!(
        confidence.as_deref(),
        Some("resolved"),
        "`from app.db import connect` binds the call"
    );
    let base = edges
        .iter()
        .find(|(s, _, k, _)| s == "code:class:app/models.py::Store" && k == "inherits_from")
        .map(|(_, _, _, c)| c.clone());
    assert_eq!(
        base.as_deref(),
        Some("name"),
        "Base is not imported: matched by its unique name"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn search_and_context_resolve_uids_paths_and_names() {
    let server = TestServer::start().await;
    fixture(server.repo());
    write(server.repo(), "docs/flow.md", "# Request -> response\n");
    server.post_json("/api/graph/index", json!({})).await;

    // a query without words is looked for as written in names
    let (status, found) = server.get("/api/graph/search?query=-%3E").await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(
        found["data"]["results"][0]["label"], "Request -> response",
        "{found}"
    );
    let (status, blank) = server.get("/api/graph/search?query=%20").await;
    assert_eq!(status, 400, "{blank}");
    assert_eq!(error_of(&blank)["details"]["field"], "query");

    let (status, found) = server.get("/api/graph/search?query=reconn").await;
    assert_eq!(status, 200);
    assert_eq!(
        found["data"]["results"][0]["uid"],
        "code:function:app/db.py::reconnect"
    );
    assert_eq!(found["data"]["results"][0]["line"], 4);

    let (status, context) = server
        .get("/api/graph/context?uid=code:function:app/db.py::connect&direction=in")
        .await;
    assert_eq!(status, 200, "{context}");
    assert_eq!(context["meta"]["resolved_from"], "direct");
    let callers: BTreeSet<&str> = context["data"]["neighbours"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["edge"] == "calls")
        .map(|n| n["node"]["uid"].as_str().unwrap())
        .collect();
    assert_eq!(
        callers,
        BTreeSet::from([
            "code:function:app/db.py::reconnect",
            "code:method:app/models.py::Store.save"
        ])
    );

    let (_, by_path) = server
        .get("/api/graph/context?uid=app/models.py&direction=out")
        .await;
    assert_eq!(by_path["meta"]["resolved_from"], "path_prefix");
    assert_eq!(by_path["data"]["node"]["uid"], "code:file:app/models.py");

    let (_, by_name) = server.get("/api/graph/context?uid=reconnect").await;
    assert_eq!(by_name["meta"]["resolved_from"], "fuzzy_fts5");

    let (_, deep) = server
        .get("/api/graph/context?uid=folder:&direction=out&depth=3")
        .await;
    assert!(
        deep["data"]["neighbours"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["depth"] == 3)
    );

    // ambiguous names return the candidates instead of guessing
    let (status, body) = server.get("/api/graph/context?uid=helper").await;
    assert_eq!(status, 400, "{body}");
    let error = error_of(&body);
    assert_eq!(error["code"], "E_AMBIGUOUS");
    assert_eq!(error["details"]["candidates"].as_array().unwrap().len(), 2);

    let (status, body) = server
        .get("/api/graph/context?uid=code:function:nowhere.py::gone")
        .await;
    assert_eq!(status, 404);
    assert_eq!(error_of(&body)["category"], "not_found");
    let (status, body) = server.get("/api/graph/context?uid=connect&depth=9").await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&body)["details"]["field"], "depth");
    let (status, _) = server
        .get("/api/graph/context?uid=connect&direction=sideways")
        .await;
    assert_eq!(status, 400);

    // the graph module can be switched off like any other
    server
        .put_json("/api/settings/modules/graph", json!({"enabled": false}))
        .await;
    let (status, body) = server.get("/api/graph/search?query=connect").await;
    assert_eq!(status, 403);
    assert_eq!(error_of(&body)["category"], "module_disabled");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_incremental_index_equals_a_cold_index_of_the_new_tree() {
    let server = TestServer::start().await;
    fixture(server.repo());
    server.post_json("/api/graph/index", json!({})).await;

    // edit, rename and delete, then index again
    let root = server.repo();
    write(
        root,
        "app/db.py",
        "def connect():\n    return 2\n\ndef ping():\n    return connect()\n\nclass Base:\n    pass\n",
    );
    std::fs::rename(root.join("app/models.py"), root.join("app/store.py")).unwrap();
    std::fs::remove_file(root.join("docs/setup.md")).unwrap();
    let (_, summary) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(
        summary["data"]["parsed"], 2,
        "only the edited and the renamed file: {summary}"
    );
    assert_eq!(summary["data"]["removed"], 2);
    let (status, again) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(again["data"]["parsed"], 0, "nothing changed since");
    let incremental = dump(&server.state_dir());

    let cold_graph = cold_index_of(
        root,
        &[
            "app/__init__.py",
            "app/db.py",
            "app/store.py",
            "tools/helper.py",
            "src/lib.rs",
            "docs/guide.md",
            ".gitignore",
            "ignored/skip.py",
        ],
    )
    .await;
    assert_eq!(incremental.0, cold_graph.0, "nodes differ");
    assert_eq!(incremental.1, cold_graph.1, "edges differ");
    assert!(
        incremental
            .0
            .contains(&("code:function:app/db.py::ping".into(), "function".into()))
    );
    assert!(
        !incremental
            .0
            .iter()
            .any(|(uid, _)| uid.contains("app/models.py") || uid.contains("setup.md"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_change_stream_announces_graph_changes_beside_the_board() {
    let server = TestServer::start().await;
    let mut stream = ChangeStream::open(&server).await;
    let first = stream.next("graph").await;
    fixture(server.repo());
    let (status, body) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{body}");
    let mut latest = first;
    while latest == first {
        latest = stream.next("graph").await;
    }
    assert!(latest > first, "{first} → {latest}");
}

#[tokio::test(flavor = "multi_thread")]
async fn board_writes_keep_the_cached_graph_answers() {
    let server = TestServer::start().await;
    fixture(server.repo());
    let (status, body) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = server
        .get("/api/graph/context?uid=code:file:app/models.py")
        .await;
    assert_eq!(status, 200, "{body}");
    let answers = &server.hub.state().answers;
    assert_eq!(answers.entries_in("graph"), 1);
    // more board revisions than the cache holds answers, each with a board read cached
    for n in 0..300 {
        let created = server
            .hub
            .call_json(
                "cos_task_create",
                json!({"title": format!("task {n}")}),
                Budget::None,
                Source::Cli,
            )
            .await;
        assert_eq!(created["ok"], true, "{created}");
        let board = server
            .hub
            .call_json("cos_task_board", json!({}), Budget::None, Source::Cli)
            .await;
        assert_eq!(board["ok"], true, "{board}");
    }
    assert_eq!(
        answers.entries_in("graph"),
        1,
        "a board write evicted a graph answer"
    );
    assert_eq!(
        answers.entries_in("board"),
        1,
        "stale board answers are dropped"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_graph_built_under_other_rules_is_rebuilt_from_scratch() {
    let server = TestServer::start().await;
    fixture(server.repo());
    let (status, first) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{first}");
    let cold = dump(&server.state_dir());

    // what an older cos could have left: a call its rules resolved and ours do not
    let database = rusqlite::Connection::open(server.state_dir().join("cos.db")).unwrap();
    database
        .execute_batch(
            "INSERT INTO graph_edges(source, target, kind, extractor, confidence)
               SELECT s.id, t.id, 'calls', 'resolver', 'name' FROM graph_nodes s, graph_nodes t
               WHERE s.uid = 'code:method:app/models.py::Store.save'
                 AND t.uid = 'code:function:tools/helper.py::helper';
             UPDATE graph_meta SET value = 'older rules' WHERE key = 'rules';",
        )
        .unwrap();
    drop(database);

    let (status, rebuilt) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{rebuilt}");
    assert_eq!(
        rebuilt["data"]["parsed"], 7,
        "no file changed, yet every file is read again: {rebuilt}"
    );
    assert_eq!(
        dump(&server.state_dir()),
        cold,
        "the old rules' call is gone"
    );
    let (_, again) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(again["data"]["parsed"], 0, "{again}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_only_reindex_equals_a_cold_index() {
    let server = TestServer::start().await;
    fixture(server.repo());
    server.post_json("/api/graph/index", json!({})).await;
    let root = server.repo();
    let callees = || async {
        let (_, context) = server
            .get("/api/graph/context?uid=code:function:app/db.py::reconnect&direction=out")
            .await;
        context["data"]["neighbours"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["node"]["label"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    // asked twice: the second answer comes from the cache
    assert_eq!(callees().await, ["connect"]);
    assert_eq!(callees().await, ["connect"]);
    // connect is renamed (its callers lose their edge), reconnect becomes the name
    // tools/helper.py also declares (so it is no longer unique), and a new import appears
    write(
        root,
        "app/db.py",
        "import json\n\ndef open_connection():\n    return 1\n\ndef reconnect():\n    return open_connection()\n\nclass Base:\n    pass\n",
    );
    write(
        root,
        "tools/helper.py",
        "from app.models import Store\n\ndef helper():\n    pass\n\ndef reconnect():\n    return helper()\n",
    );
    let (_, summary) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(summary["data"]["parsed"], 2, "{summary}");
    assert_eq!(summary["data"]["removed"], 0);
    assert_eq!(
        callees().await,
        ["open_connection"],
        "the re-index moved the graph's revision, so the cached context is not served"
    );
    let incremental = dump(&server.state_dir());

    let cold_graph = cold_index_of(
        root,
        &[
            "app/__init__.py",
            "app/db.py",
            "app/models.py",
            "tools/helper.py",
            "src/lib.rs",
            "docs/guide.md",
            "docs/setup.md",
            ".gitignore",
        ],
    )
    .await;
    assert_same_graph(
        "after edits, a rename and a delete",
        &incremental,
        &cold_graph,
    );
    assert!(has_edge(
        &incremental.1,
        "code:file:tools/helper.py",
        "code:file:app/models.py",
        "imports"
    ));
    assert!(has_edge(
        &incremental.1,
        "code:file:app/db.py",
        "code:external:json",
        "imports"
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn impact_references_path_export_and_doctor() {
    let server = TestServer::start().await;
    fixture(server.repo());
    server.post_json("/api/graph/index", json!({})).await;

    // impact: reconnect and Store.save call connect (1 hop); nothing calls them
    let (status, impact) = server
        .post_json("/api/graph/impact", json!({"uid": "connect", "depth": 2}))
        .await;
    assert_eq!(status, 200, "{impact}");
    let data = &impact["data"];
    assert_eq!(impact["meta"]["semantic_scope"], "transitive_depth_2");
    assert!(data.get("meta").is_none(), "diagnostics are not data");
    let direct: BTreeSet<&str> = data["tiers"]["will_break"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["node"]["uid"].as_str().unwrap())
        .collect();
    assert_eq!(
        direct,
        BTreeSet::from([
            "code:function:app/db.py::reconnect",
            "code:method:app/models.py::Store.save"
        ])
    );
    // the file app/db.py: imported by app/models.py
    let (_, file_impact) = server
        .post_json("/api/graph/impact", json!({"uid": "app/db.py"}))
        .await;
    assert_eq!(
        file_impact["data"]["tiers"]["will_break"][0]["node"]["uid"],
        "code:file:app/models.py"
    );

    // references pick per-kind defaults and say so
    let (_, references) = server
        .post_json(
            "/api/graph/references",
            json!({"uid": "code:class:app/db.py::Base"}),
        )
        .await;
    let data = &references["data"];
    assert_eq!(references["meta"]["default_kinds_picked"], true);
    assert_eq!(references["meta"]["node_kind"], "class");
    assert_eq!(
        data["references"][0]["node"]["uid"],
        "code:class:app/models.py::Store"
    );
    assert_eq!(data["references"][0]["edge"], "inherits_from");
    let (status, body) = server
        .post_json(
            "/api/graph/references",
            json!({"uid": "connect", "kinds": ["teleports"]}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        error_of(&body)["details"]["allowed"]
            .as_array()
            .unwrap()
            .contains(&json!("calls"))
    );

    // path from the guide to a function, through links and containment
    let (_, path) = server
        .post_json(
            "/api/graph/path",
            json!({"source": "docs/guide.md", "target": "code:function:app/db.py::connect"}),
        )
        .await;
    let data = &path["data"];
    assert_eq!(data["found"], true, "{data}");
    assert_eq!(data["hops"], 2);
    assert_eq!(data["path"][1]["node"]["uid"], "code:file:app/db.py");
    assert_eq!(path["meta"]["source_resolved_from"], "path_prefix");
    let (_, none) = server.post_json("/api/graph/path", json!({"source": "code:external:os", "target": "doc:heading:docs/setup.md#install", "max_hops": 1})).await;
    assert_eq!(none["data"]["found"], false);

    // export: a coherent subgraph, capped
    let (_, export) = server
        .post_json("/api/graph/export", json!({"max_hops": 2}))
        .await;
    let data = &export["data"];
    let uids: BTreeSet<&str> = data["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["uid"].as_str().unwrap())
        .collect();
    assert!(uids.contains("folder:") && uids.contains("code:file:app/db.py"));
    assert!(
        !uids.contains("code:function:app/db.py::connect"),
        "three hops away"
    );
    for edge in data["edges"].as_array().unwrap() {
        assert!(
            uids.contains(edge["source"].as_str().unwrap())
                && uids.contains(edge["target"].as_str().unwrap())
        );
    }
    let (status, body) = server
        .post_json("/api/graph/export", json!({"max_nodes": 2001}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&body)["details"]["field"], "max_nodes");
    let (_, small) = server
        .post_json("/api/graph/export", json!({"max_nodes": 3, "max_hops": 5}))
        .await;
    assert_eq!(small["data"]["nodes"].as_array().unwrap().len(), 3);

    // doctor: healthy, then a file vanishes without a reindex: stale_paths, fixable
    let (_, doctor) = server.post_json("/api/graph/doctor", json!({})).await;
    assert_eq!(doctor["data"]["healthy"], true, "{doctor}");
    assert!(
        doctor["meta"]["fixable_categories"]
            .as_array()
            .unwrap()
            .contains(&json!("stale_paths"))
    );
    std::fs::remove_file(server.repo().join("tools/helper.py")).unwrap();
    let (_, doctor) = server.post_json("/api/graph/doctor", json!({})).await;
    assert_eq!(doctor["data"]["healthy"], false);
    let stale = doctor["data"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["category"] == "stale_paths")
        .unwrap()
        .clone();
    assert_eq!(stale["sample"], json!(["tools/helper.py"]));
    assert_eq!(stale["fixable"], true);
    // fixing only another category leaves the stale path alone; an unfixable one is refused
    let (_, other) = server
        .post_json(
            "/api/graph/doctor",
            json!({"fix": true, "categories": ["orphaned_external_unresolved"]}),
        )
        .await;
    assert_eq!(other["data"]["stats"]["fixed"], 0, "{other}");
    let (status, refused) = server
        .post_json(
            "/api/graph/doctor",
            json!({"fix": true, "categories": ["self_loops"]}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_of(&refused)["details"]["field"], "categories");
    let (_, fixed) = server
        .post_json("/api/graph/doctor", json!({"fix": true}))
        .await;
    assert!(fixed["data"]["stats"]["fixed"].as_u64().unwrap() >= 2);
    let (_, after) = server.post_json("/api/graph/doctor", json!({})).await;
    assert_eq!(after["data"]["healthy"], true, "{after}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_graph_follows_saved_files_while_the_hub_runs() {
    let server = TestServer::start().await;
    fixture(server.repo());
    let _watcher = cos_hub::graph::watch::start(server.hub.clone()).expect("watching starts");
    // Wait for the watcher's own first index, so the new file below can only
    // reach the graph through a file event, not through that first index.
    let started = std::time::Instant::now();
    loop {
        let (_, body) = server.get("/api/graph/search?query=reconnect").await;
        if body["data"]["count"].as_u64().unwrap_or(0) > 0 {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the first index never ran"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let found = |body: &Value| {
        body["data"]["results"]
            .as_array()
            .is_some_and(|r| r.iter().any(|n| n["label"] == "freshly_saved_function"))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);

    write(
        server.repo(),
        "app/fresh.py",
        "def freshly_saved_function():\n    return connect()\n",
    );
    let saved_at = std::time::Instant::now();
    loop {
        let (status, body) = server
            .get("/api/graph/search?query=freshly_saved_function")
            .await;
        assert_eq!(status, 200);
        if found(&body) {
            assert!(body["meta"]["graph_updated_at"].is_string(), "{body}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the saved file never reached the graph"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let elapsed = saved_at.elapsed();
    eprintln!("a saved file reached the graph after {elapsed:?}");

    std::fs::remove_file(server.repo().join("app/fresh.py")).unwrap();
    loop {
        let (_, body) = server
            .get("/api/graph/search?query=freshly_saved_function")
            .await;
        if !found(&body) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the deleted file stayed in the graph"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // the delete may come as more than one batch of events, and so more
    // than one run: once they are done, nothing is pending
    loop {
        let (_, context) = server.get("/api/graph/context?uid=app/db.py").await;
        if context["meta"]["graph_pending"] == false {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the graph stayed pending: {context}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn graph_updated_at_is_the_time_of_the_last_change_and_never_goes_back() {
    let server = TestServer::start().await;
    fixture(server.repo());
    let updated_at = |body: &Value| {
        body["meta"]["graph_updated_at"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (status, _) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    let (_, body) = server.get("/api/graph/search?query=helper").await;
    let first = updated_at(&body);
    // a file indexed later, then removed: the graph changed twice since
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    write(server.repo(), "late.py", "def late(): pass\n");
    server.post_json("/api/graph/index", json!({})).await;
    let (_, body) = server.get("/api/graph/search?query=helper").await;
    let added = updated_at(&body);
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    std::fs::remove_file(server.repo().join("late.py")).unwrap();
    let (_, removal) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(removal["data"]["removed"], 1, "{removal}");
    let (_, body) = server.get("/api/graph/search?query=helper").await;
    let removed = updated_at(&body);
    assert!(
        first < added && added < removed,
        "{first} {added} {removed}"
    );
    // an index that changes nothing leaves the time alone
    server.post_json("/api/graph/index", json!({})).await;
    let (_, body) = server.get("/api/graph/search?query=helper").await;
    assert_eq!(updated_at(&body), removed);
}

/// A tool registered under the index tool's name that panics, so the watcher's runs do.
struct PanickingIndex;

impl cos_hub::tools::Tool for PanickingIndex {
    type Input = cos_hub::hub::NoInput;
    type Output = cos_hub::tools::JsonObject;
    const SPEC: cos_hub::tools::ToolSpec = cos_hub::tools::ToolSpec {
        name: "cos_graph_index",
        ..<cos_hub::graph::tools::GraphIndex as cos_hub::tools::Tool>::SPEC
    };
    fn run(
        _: &cos_hub::tools::ToolContext,
        _: Self::Input,
    ) -> Result<cos_hub::tools::Answer<Self::Output>, cos_hub::tools::ToolError> {
        panic!("deliberate panic inside a watcher run")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_watcher_run_is_contained_logged_once_and_leaves_the_graph_not_pending() {
    let mut registry = cos_hub::hub::default_registry();
    registry.register::<PanickingIndex>();
    let server = TestServer::with_registry(registry).await;
    fixture(server.repo());
    let log = server.state_dir().join(".mcp.log");
    let watcher = cos_hub::graph::watch::start(server.hub.clone()).expect("a watcher thread");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let lines = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<String> = text
            .lines()
            .filter(|line| line.contains("cos_graph_index"))
            .map(str::to_string)
            .collect();
        if !lines.is_empty() {
            break lines;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the watcher's run never reached the log"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    // the watcher's first run panicked once; nothing changed since, so no second run
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text.lines()
            .filter(|line| line.contains("cos_graph_index"))
            .count(),
        1,
        "{text}"
    );
    assert!(lines[0].contains("panic"), "{}", lines[0]);
    assert!(!server.hub.state().pending.is("graph"));
    let (status, context) = server.get("/api/graph/search?query=anything").await;
    assert_eq!(status, 200, "{context}");
    assert_eq!(context["meta"]["graph_pending"], false, "{context}");
    drop(watcher);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_package_calling_its_own_library_by_name_resolves_like_crate_paths() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"my-tool\"\nversion = \"0.1.0\"\n\n[lib]\nname = \"my_tool\"\n",
    );
    write(root, "src/lib.rs", "pub mod cli;\npub mod store;\n");
    write(root, "src/cli.rs", "pub fn run() -> i32 { 0 }\n");
    write(root, "src/store.rs", "pub fn open() {}\n");
    write(
        root,
        "src/main.rs",
        "fn main() {\n    std::process::exit(my_tool::cli::run());\n}\n",
    );
    write(
        root,
        "tests/cli_test.rs",
        "use my_tool::cli;\n\n#[test]\nfn runs() {\n    let code = cli::run();\n    assert_eq!(code, 0);\n}\n",
    );
    write(
        root,
        "benches/open.rs",
        "use my_tool::store::open as open_store;\n\nfn bench() {\n    open_store();\n    crate::helper();\n}\nfn helper() {}\n",
    );
    let (status, body) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{body}");
    let (_, edges) = dump(&server.state_dir());
    let resolved_call = |from: &str, to: &str| {
        edges.contains(&(from.into(), to.into(), "calls".into(), "resolved".into()))
    };
    assert!(
        resolved_call(
            "code:function:src/main.rs::main",
            "code:function:src/cli.rs::run"
        ),
        "a binary's call through the library name: {edges:?}"
    );
    assert!(
        resolved_call(
            "code:function:tests/cli_test.rs::runs",
            "code:function:src/cli.rs::run"
        ),
        "a test's call through a `use` of the library: {edges:?}"
    );
    assert!(
        resolved_call(
            "code:function:benches/open.rs::bench",
            "code:function:src/store.rs::open"
        ),
        "a bench's call through an aliased `use`: {edges:?}"
    );
    let imports = |from: &str, to: &str| {
        edges
            .iter()
            .any(|(s, t, kind, _)| s == from && t == to && kind == "imports")
    };
    assert!(
        imports("code:file:tests/cli_test.rs", "code:file:src/cli.rs"),
        "{edges:?}"
    );
    let (status, references) = server
        .post_json(
            "/api/graph/references",
            json!({"uid": "code:function:src/cli.rs::run"}),
        )
        .await;
    assert_eq!(status, 200, "{references}");
    let callers: Vec<&str> = references["data"]["references"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["node"]["uid"].as_str().or(r["source"].as_str()))
        .collect();
    assert!(callers.len() >= 2, "{references}");
}

#[tokio::test(flavor = "multi_thread")]
async fn typescript_javascript_and_go_imports_resolve_across_files() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(
        root,
        "web/db.ts",
        "export function query(sql: string) { return sql; }\n",
    );
    write(root, "web/index.ts", "export const VERSION = '1';\n");
    write(
        root,
        "web/app.tsx",
        "import { query } from './db';\nimport { VERSION } from '.';\nimport React from 'react';\nexport function App() { return query(VERSION); }\n",
    );
    write(
        root,
        "web/legacy.js",
        "const db = require('./db');\nclass Old extends Base {}\n",
    );
    write(
        root,
        "db/db.go",
        "package db\n\nfunc Write(s string) error { return nil }\n",
    );
    write(
        root,
        "store/store.go",
        "package store\n\nimport (\n  \"fmt\"\n  \"example.com/app/db\"\n)\n\nfunc Save() error { return db.Write(fmt.Sprint(1)) }\n",
    );
    let (status, summary) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{summary}");
    let (_, edges) = dump(&server.state_dir());
    assert!(
        has_edge(
            &edges,
            "code:file:web/app.tsx",
            "code:file:web/db.ts",
            "imports"
        ),
        "relative import with extension lookup"
    );
    assert!(
        has_edge(
            &edges,
            "code:file:web/app.tsx",
            "code:file:web/index.ts",
            "imports"
        ),
        "a folder import finds its index file"
    );
    assert!(has_edge(
        &edges,
        "code:file:web/app.tsx",
        "code:external:react",
        "imports"
    ));
    assert!(has_edge(
        &edges,
        "code:function:web/app.tsx::App",
        "code:function:web/db.ts::query",
        "calls"
    ));
    assert!(
        has_edge(&edges, "code:file:store/store.go", "folder:db", "imports"),
        "a Go import names its package folder"
    );
    assert!(has_edge(
        &edges,
        "code:file:store/store.go",
        "code:external:fmt",
        "imports"
    ));
    assert!(has_edge(
        &edges,
        "code:function:store/store.go::Save",
        "code:function:db/db.go::Write",
        "calls"
    ));
}

/// One small repository per language where calls and bases go through import
/// aliases, module aliases and re-exports, with names that also exist elsewhere
/// (so matching by name alone would pick the wrong one or none).
fn alias_fixture(root: &Path) {
    write(root, "pkg/__init__.py", "from pkg.base import Model\n");
    write(
        root,
        "pkg/base.py",
        "class Model:\n    def save(self):\n        pass\n\ndef helper():\n    pass\n",
    );
    write(
        root,
        "pkg/util.py",
        "def connect():\n    pass\n\ndef helper():\n    pass\n",
    );
    write(
        root,
        "app/views.py",
        "import pkg.util as u\nfrom pkg.util import helper as h\nfrom pkg import Model\nfrom pkg import util\nimport json\n\nLIMIT = 10\n\nclass Page(Model):\n    title = 'x'\n\n    def render(self):\n        u.connect()\n        h()\n        util.helper()\n        json.dumps({})\n        return LIMIT\n\ndef connect():\n    pass\n",
    );
    write(root, "src/lib.rs", "mod geometry;\nmod shapes;\n");
    write(
        root,
        "src/shapes.rs",
        "pub const SIDES: u32 = 4;\npub fn area() -> u32 { 1 }\npub struct Square;\nimpl Square {\n    pub fn new() -> Square { Square }\n}\n",
    );
    write(
        root,
        "src/geometry.rs",
        "use crate::shapes::{area as surface, Square};\nuse crate::shapes;\n\npub fn total() -> u32 {\n    let _square = Square::new();\n    surface() + shapes::area()\n}\n\npub fn area() -> u32 { 0 }\n",
    );
    write(
        root,
        "web/api.ts",
        "export function fetchTasks() { return 1; }\nexport class Client {}\n",
    );
    write(
        root,
        "web/app.ts",
        "import { fetchTasks as load } from './api';\nimport * as api from './api';\nexport function main() { load(); api.fetchTasks(); return new api.Client(); }\nexport function fetchTasks() { return 0; }\n",
    );
    write(
        root,
        "store/store.go",
        "package store\n\nfunc Open() int { return 1 }\n",
    );
    write(
        root,
        "cmd/main.go",
        "package main\n\nimport db \"example.com/m/store\"\n\nfunc main() { db.Open() }\n\nfunc Open() int { return 0 }\n",
    );
}

const ALIAS_FILES: &[&str] = &[
    "pkg/__init__.py",
    "pkg/base.py",
    "pkg/util.py",
    "app/views.py",
    "src/lib.rs",
    "src/shapes.rs",
    "src/geometry.rs",
    "web/api.ts",
    "web/app.ts",
    "store/store.go",
    "cmd/main.go",
];

/// The calls and bases out of `sources`, as (source, target, kind, confidence).
fn calls_and_bases(edges: &Edges, sources: &[&str]) -> Vec<(String, String, String, String)> {
    edges
        .iter()
        .filter(|(s, _, k, _)| {
            sources.contains(&s.as_str()) && matches!(k.as_str(), "calls" | "inherits_from")
        })
        .cloned()
        .collect()
}

fn edge(
    source: &str,
    target: &str,
    kind: &str,
    confidence: &str,
) -> (String, String, String, String) {
    (source.into(), target.into(), kind.into(), confidence.into())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_relative_import_that_finds_no_file_names_no_external_package() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(root, "pkg/__init__.py", "");
    write(
        root,
        "pkg/jobs.py",
        "from .gone import thing\nfrom ..elsewhere import other\nimport json\n\ndef run():\n    thing()\n    other()\n    json.dumps(1)\n",
    );
    let (status, summary) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{summary}");
    let (nodes, edges) = dump(&server.state_dir());

    let externals: Vec<&str> = nodes
        .iter()
        .filter(|(_, kind)| kind == "external")
        .map(|(uid, _)| uid.as_str())
        .collect();
    assert_eq!(externals, ["code:external:json"], "only the real package");
    let out_of_jobs: Vec<_> = edges
        .iter()
        .filter(|(s, _, k, _)| {
            s.starts_with("code:")
                && s.contains("pkg/jobs.py")
                && matches!(k.as_str(), "imports" | "calls")
        })
        .cloned()
        .collect();
    assert_eq!(
        out_of_jobs,
        [
            edge(
                "code:file:pkg/jobs.py",
                "code:external:json",
                "imports",
                "external"
            ),
            edge(
                "code:function:pkg/jobs.py::run",
                "code:external:json",
                "calls",
                "external"
            ),
        ],
        "the broken relative imports lead nowhere, on the import side and the call side alike"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_through_import_aliases_resolve_by_binding() {
    let server = TestServer::start().await;
    alias_fixture(server.repo());
    let (status, summary) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{summary}");
    let (nodes, edges) = dump(&server.state_dir());

    let render = "code:method:app/views.py::Page.render";
    let page = "code:class:app/views.py::Page";
    assert_eq!(
        calls_and_bases(&edges, &[render, page]),
        [
            edge(
                page,
                "code:class:pkg/base.py::Model",
                "inherits_from",
                "resolved"
            ),
            edge(render, "code:external:json", "calls", "external"),
            edge(
                render,
                "code:function:pkg/util.py::connect",
                "calls",
                "resolved"
            ),
            edge(
                render,
                "code:function:pkg/util.py::helper",
                "calls",
                "resolved"
            ),
        ],
        "module alias, symbol alias, submodule import, re-export through __init__, external module"
    );
    let total = "code:function:src/geometry.rs::total";
    assert_eq!(
        calls_and_bases(&edges, &[total]),
        [
            edge(
                total,
                "code:function:src/shapes.rs::area",
                "calls",
                "resolved"
            ),
            edge(
                total,
                "code:method:src/shapes.rs::Square.new",
                "calls",
                "resolved"
            ),
        ],
        "`use … as`, a module path and a type path; never the same-file `area`"
    );
    let main_ts = "code:function:web/app.ts::main";
    assert_eq!(
        calls_and_bases(&edges, &[main_ts]),
        [
            edge(
                main_ts,
                "code:class:web/api.ts::Client",
                "calls",
                "resolved"
            ),
            edge(
                main_ts,
                "code:function:web/api.ts::fetchTasks",
                "calls",
                "resolved"
            ),
        ],
        "named import alias and namespace import"
    );
    let main_go = "code:function:cmd/main.go::main";
    assert_eq!(
        calls_and_bases(&edges, &[main_go]),
        [edge(
            main_go,
            "code:function:store/store.go::Open",
            "calls",
            "resolved"
        )],
        "an aliased Go package"
    );
    // module- and class-level variables, declared by their container
    for (uid, parent) in [
        (
            "code:variable:app/views.py::LIMIT",
            "code:file:app/views.py",
        ),
        ("code:variable:app/views.py::Page.title", page),
        (
            "code:variable:src/shapes.rs::SIDES",
            "code:file:src/shapes.rs",
        ),
    ] {
        assert!(
            nodes.contains(&(uid.to_string(), "variable".to_string())),
            "missing {uid}"
        );
        assert!(
            has_edge(&edges, parent, uid, "declares"),
            "{parent} declares {uid}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_behind_import_bindings_reindex_like_a_cold_index() {
    let server = TestServer::start().await;
    alias_fixture(server.repo());
    server.post_json("/api/graph/index", json!({})).await;
    let root = server.repo();
    // the re-export now comes from util, connect moves out of util into base,
    // and the Rust module renames the aliased function
    write(
        root,
        "pkg/__init__.py",
        "from pkg.util import helper as Model\n",
    );
    write(root, "pkg/util.py", "def helper():\n    pass\n");
    write(
        root,
        "pkg/base.py",
        "class Model:\n    pass\n\ndef connect():\n    pass\n",
    );
    write(
        root,
        "src/shapes.rs",
        "pub fn surface_area() -> u32 { 1 }\npub struct Square;\nimpl Square {\n    pub fn new() -> Square { Square }\n}\n",
    );
    let (_, summary) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(summary["data"]["parsed"], 4, "{summary}");
    let incremental = dump(&server.state_dir());
    let cold = cold_index_of(root, ALIAS_FILES).await;
    assert_same_graph("after edits behind bindings", &incremental, &cold);
    assert!(
        !has_edge(
            &incremental.1,
            "code:method:app/views.py::Page.render",
            "code:function:pkg/util.py::connect",
            "calls"
        ),
        "connect left util"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rename_plan_trace_similar_and_resolve() {
    let server = TestServer::start().await;
    let root = server.repo();
    alias_fixture(root);
    write(
        root,
        "tests/test_util.py",
        "from pkg.util import connect\n\ndef test_connect():\n    connect()\n",
    );
    write(
        root,
        "docs/api.md",
        "Call `connect` to open the database.\n",
    );
    write(root, "app/registry.py", "HANDLERS = {'connect': None}\n");
    server.post_json("/api/graph/index", json!({})).await;

    // rename plan: graph sites and text sites, each saying which found it
    let (status, plan) = server
        .post_json(
            "/api/graph/rename-plan",
            json!({"uid": "code:function:pkg/util.py::connect", "new_name": "open_db"}),
        )
        .await;
    assert_eq!(status, 200, "{plan}");
    let sites = |key: &str| -> Vec<(String, u64, String)> {
        plan["data"][key]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["path"].as_str().unwrap().to_string(),
                    s["line"].as_u64().unwrap(),
                    s["found_by"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let site = |path: &str, line: u64, by: &str| (path.to_string(), line, by.to_string());
    assert_eq!(sites("call_sites"), [site("app/views.py", 13, "graph")]);
    assert_eq!(
        sites("import_sites"),
        [site("tests/test_util.py", 1, "graph")]
    );
    assert_eq!(
        sites("test_references"),
        [site("tests/test_util.py", 4, "graph")]
    );
    assert_eq!(sites("doc_references"), [site("docs/api.md", 1, "text")]);
    assert_eq!(
        sites("string_literals"),
        [site("app/registry.py", 1, "text")]
    );
    assert_eq!(plan["data"]["definition"]["line"], 1);
    assert_eq!(plan["data"]["risk"], "medium");
    assert_eq!(
        plan["data"]["order"],
        json!([
            "pkg/util.py",
            "tests/test_util.py",
            "app/views.py",
            "docs/api.md",
            "app/registry.py"
        ])
    );
    // REST carries the tool's diagnostics in the envelope's meta
    assert_eq!(plan["meta"]["resolved_from"], "direct", "{plan}");
    assert!(plan["meta"]["graph_updated_at"].is_string());
    let (status, bad) = server
        .post_json(
            "/api/graph/rename-plan",
            json!({"uid": "code:function:pkg/util.py::connect", "new_name": "2fast"}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        error_of(&bad)["message"]
            .as_str()
            .unwrap()
            .contains("new_name")
    );

    // trace: steps, branches and the external module reached
    let (status, trace) = server
        .post_json(
            "/api/graph/trace",
            json!({"uid": "code:method:app/views.py::Page.render", "depth": 2}),
        )
        .await;
    assert_eq!(status, 200, "{trace}");
    let steps: Vec<&str> = trace["data"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["node"]["uid"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "code:external:json",
            "code:function:pkg/util.py::connect",
            "code:function:pkg/util.py::helper"
        ]
    );
    assert_eq!(trace["data"]["external_targets"], json!(["json"]));
    assert_eq!(
        trace["data"]["branches"][0]["uid"],
        "code:method:app/views.py::Page.render"
    );
    assert_eq!(trace["meta"]["semantic_scope"], "forward_calls_depth_2");
    let (status, _) = server
        .post_json("/api/graph/trace", json!({"uid": "render", "depth": 9}))
        .await;
    assert_eq!(status, 400, "depth out of range");

    // similar: the other `helper` shares every word of the name
    let (status, similar) = server
        .post_json(
            "/api/graph/similar",
            json!({"uid": "code:function:pkg/util.py::helper"}),
        )
        .await;
    assert_eq!(status, 200, "{similar}");
    assert_eq!(
        similar["data"]["results"][0]["node"]["uid"],
        "code:function:pkg/base.py::helper"
    );
    assert_eq!(similar["data"]["results"][0]["lexical"], 1.0);

    // resolve: a path, and an ambiguous name answered with its candidates
    let (status, resolved) = server.get("/api/graph/resolve?query=pkg/util.py").await;
    assert_eq!(status, 200, "{resolved}");
    assert_eq!(resolved["data"]["node"]["uid"], "code:file:pkg/util.py");
    assert_eq!(resolved["meta"]["resolved_from"], "path_prefix");
    let (status, ambiguous) = server.get("/api/graph/resolve?query=helper").await;
    assert_eq!(status, 400, "{ambiguous}");
    assert_eq!(error_of(&ambiguous)["code"], "E_AMBIGUOUS");
    let candidates = error_of(&ambiguous)["details"]["candidates"].to_string();
    assert!(
        candidates.contains("pkg/util.py::helper") && candidates.contains("pkg/base.py::helper")
    );
}

/// The repository's files (not the hub's state), relative to `root`.
fn files_in(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|name| name == ".cos") {
                continue;
            }
            if path.is_dir() {
                folders.push(path);
            } else {
                let relative = path.strip_prefix(root).unwrap().to_string_lossy();
                found.push(relative.replace('\\', "/"));
            }
        }
    }
    found.sort();
    found
}

/// Re-indexes and checks the graph equals a cold index of the same tree.
async fn assert_reindex_equals_cold(server: &TestServer, step: &str) {
    let (_, summary) = server.post_json("/api/graph/index", json!({})).await;
    assert!(summary["data"]["files"].is_u64(), "{step}: {summary}");
    let incremental = dump(&server.state_dir());
    let files = files_in(server.repo());
    let entries: Vec<&str> = files.iter().map(String::as_str).collect();
    let cold = cold_index_of(server.repo(), &entries).await;
    assert_same_graph(step, &incremental, &cold);
}

/// The two graphs hold the same nodes and edges; a failure lists what differs.
fn assert_same_graph(step: &str, incremental: &(Nodes, Edges), cold: &(Nodes, Edges)) {
    let missing_nodes: Vec<_> = cold.0.difference(&incremental.0).collect();
    let extra_nodes: Vec<_> = incremental.0.difference(&cold.0).collect();
    assert!(
        missing_nodes.is_empty() && extra_nodes.is_empty(),
        "{step}: missing nodes {missing_nodes:?}\nextra nodes {extra_nodes:?}"
    );
    let missing: Vec<_> = cold.1.difference(&incremental.1).collect();
    let extra: Vec<_> = incremental.1.difference(&cold.1).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{step}: missing {missing:?}\nextra {extra:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn files_that_appear_or_disappear_reindex_like_a_cold_index() {
    let server = TestServer::start().await;
    let root = server.repo();
    alias_fixture(root);
    // imports that lead nowhere yet, or to a fallback, until files appear
    write(
        root,
        "app/jobs.py",
        "import pkg.tasks.run\nfrom pkg.tasks import schedule\n\ndef start():\n    schedule()\n",
    );
    write(
        root,
        "cmd/worker.go",
        "package main\n\nimport q \"example.com/m/queue\"\n\nfunc work() { q.Push() }\n",
    );
    write(
        root,
        "web/boot.ts",
        "import { mount } from './widgets';\nexport function boot() { mount(); }\n",
    );
    write(
        root,
        "docs/readme.md",
        "# Read me\n\nSee [the guide](guide.md#setup).\n",
    );
    server.post_json("/api/graph/index", json!({})).await;

    write(root, "pkg/tasks.py", "def schedule():\n    pass\n");
    write(root, "queue/queue.go", "package queue\n\nfunc Push() {}\n");
    write(
        root,
        "web/widgets/index.ts",
        "export function mount() { return 1; }\n",
    );
    write(root, "docs/guide.md", "# Guide\n\n## Setup\n\nRun it.\n");
    assert_reindex_equals_cold(&server, "files added").await;
    let (_, edges) = dump(&server.state_dir());
    assert!(has_edge(
        &edges,
        "code:function:app/jobs.py::start",
        "code:function:pkg/tasks.py::schedule",
        "calls"
    ));
    assert!(has_edge(
        &edges,
        "code:file:cmd/worker.go",
        "folder:queue",
        "imports"
    ));
    assert!(has_edge(
        &edges,
        "code:function:web/boot.ts::boot",
        "code:function:web/widgets/index.ts::mount",
        "calls"
    ));
    assert!(has_edge(
        &edges,
        "doc:file:docs/readme.md",
        "doc:heading:docs/guide.md#setup",
        "cites_heading"
    ));

    // the re-export of Model goes, a Go package and a folder of its own go
    std::fs::remove_file(root.join("pkg/__init__.py")).unwrap();
    std::fs::remove_dir_all(root.join("store")).unwrap();
    std::fs::remove_dir_all(root.join("web/widgets")).unwrap();
    assert_reindex_equals_cold(&server, "files removed").await;

    // a module is renamed: its importers follow or fall back
    std::fs::rename(root.join("pkg/tasks.py"), root.join("pkg/jobs.py")).unwrap();
    std::fs::rename(root.join("pkg/base.py"), root.join("pkg/models.py")).unwrap();
    assert_reindex_equals_cold(&server, "files renamed").await;
}

/// A symbol with 400 callers in 40 files, one function calling all of them,
/// and 30 files that do not parse: long lists for every continuable graph tool.
fn crowd_fixture(root: &Path) {
    write(root, "lib/target.py", "def target():\n    pass\n");
    let mut fan_out = String::from("def fan_out():\n");
    for file in 0..40 {
        let mut text = String::from("from lib.target import target\n\n");
        for function in 0..10 {
            let name = format!("caller_{file}_{function}_with_a_rather_descriptive_name");
            text.push_str(&format!("def {name}():\n    target()\n\n"));
            fan_out.push_str(&format!("    {name}()\n"));
        }
        write(root, &format!("callers/mod_{file}.py"), &text);
        let imports: Vec<String> = (0..10)
            .map(|function| format!("from callers.mod_{file} import caller_{file}_{function}_with_a_rather_descriptive_name"))
            .collect();
        fan_out = format!("{}\n{fan_out}", imports.join("\n"));
    }
    write(root, "hub.py", &fan_out);
    for broken in 0..30 {
        write(
            root,
            &format!("broken/bad_{broken}.py"),
            "def broken(:\n    pass\n",
        );
    }
}

fn uids(items: &[Value], pointer: &str) -> Vec<String> {
    items
        .iter()
        .map(|item| {
            item.pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_cut_graph_list_is_walked_exactly_once_under_the_agent_budget() {
    let server = TestServer::start().await;
    crowd_fixture(server.repo());
    let (status, _) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    let target = "code:function:lib/target.py::target";
    // (tool, arguments, list, cursor field, item id) — each walked against the untrimmed answer
    let cases = [
        (
            "cos_graph_references",
            json!({"uid": target, "limit": 1000}),
            "/references",
            "/next_cursor",
            "/node/uid",
        ),
        (
            "cos_graph_context",
            json!({"uid": target, "direction": "in", "limit": 2000}),
            "/neighbours",
            "/next_cursor",
            "/node/uid",
        ),
        (
            "cos_graph_search",
            json!({"query": "caller", "limit": 200}),
            "/results",
            "/next_cursor",
            "/uid",
        ),
        (
            "cos_graph_impact",
            json!({"uid": target, "depth": 1}),
            "/tiers/will_break",
            "/next_cursors/will_break",
            "/node/uid",
        ),
        (
            "cos_graph_rename_plan",
            json!({"uid": target, "new_name": "aim"}),
            "/call_sites",
            "/next_cursors/call_sites",
            "/path",
        ),
        (
            "cos_graph_trace",
            json!({"uid": "code:function:hub.py::fan_out", "depth": 1, "max_steps": 1000}),
            "/steps",
            "/next_cursors/steps",
            "/node/uid",
        ),
    ];
    for (tool, arguments, list, next, id) in cases {
        let expected =
            crate::common::walk_whole(&server, tool, arguments.clone(), list, next).await;
        assert!(
            expected.len() >= 200,
            "{tool}: only {} items",
            expected.len()
        );
        let (walked, pages) =
            crate::common::walk_under_agent_budget(&server, tool, arguments, list, next, "cursor")
                .await;
        assert!(pages > 1, "{tool}: the first answer was not cut");
        assert_eq!(walked.len(), expected.len(), "{tool}: every item once");
        assert_eq!(uids(&walked, id), uids(&expected, id), "{tool}: in order");
        assert_eq!(walked, expected, "{tool}: the same items");
    }

    // doctor samples: 30 files that do not parse, ten a page, continued per issue
    let (_, doctor) = server
        .post_json("/api/tools/cos_graph_doctor", json!({}))
        .await;
    let issues = doctor["data"]["issues"].as_array().unwrap();
    let at = issues
        .iter()
        .position(|i| i["category"] == "files_with_parse_errors")
        .unwrap();
    assert_eq!(issues[at]["count"], 30);
    let list = format!("/issues/{at}/sample");
    let (samples, pages) = crate::common::walk_under_agent_budget(
        &server,
        "cos_graph_doctor",
        json!({}),
        &list,
        &format!("/issues/{at}/next_cursor"),
        "cursor",
    )
    .await;
    assert_eq!(pages, 3);
    let unique: std::collections::BTreeSet<&str> =
        samples.iter().filter_map(Value::as_str).collect();
    assert_eq!(
        (samples.len(), unique.len()),
        (30, 30),
        "every broken file once"
    );

    // a cursor outlives nothing: after the graph changes it is stale
    let (_, first) = server
        .post_json(
            "/api/tools/cos_graph_references?budget=agent",
            json!({"uid": target, "limit": 1000}),
        )
        .await;
    let cursor = first["data"]["next_cursor"].as_str().unwrap().to_string();
    write(
        server.repo(),
        "lib/extra.py",
        "from lib.target import target\n\ndef one_more():\n    target()\n",
    );
    server.post_json("/api/graph/index", json!({})).await;
    let (status, refused) = server
        .post_json(
            "/api/tools/cos_graph_references",
            json!({"uid": target, "limit": 1000, "cursor": cursor}),
        )
        .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "STALE_CURSOR");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agents_default_export_fits_its_context_and_an_explicit_size_keeps_the_graph_tier() {
    let server = TestServer::start().await;
    crowd_fixture(server.repo());
    server.post_json("/api/graph/index", json!({})).await;
    let (status, whole) = server
        .post_json("/api/tools/cos_graph_export", json!({}))
        .await;
    assert_eq!(status, 200);
    let all_nodes = whole["data"]["nodes"].as_array().unwrap().len();
    assert!(
        serde_json::to_string(&whole).unwrap().len() > 40_000,
        "the fixture is over the budget"
    );

    let (status, agent) = server
        .post_json("/api/tools/cos_graph_export?budget=agent", json!({}))
        .await;
    assert_eq!(status, 200);
    let size = serde_json::to_string(&agent).unwrap().len();
    assert!(size <= 33_000, "{size} characters");
    assert!(agent["meta"]["tokens_estimated"].as_u64().unwrap() < 25_000);
    assert_eq!(agent["meta"]["truncated_subgraph"], true);
    assert_eq!(agent["meta"]["truncated_nodes_from"], all_nodes);
    let kept: std::collections::HashSet<&str> = agent["data"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| node["uid"].as_str().unwrap())
        .collect();
    assert!(
        kept.len() > 50,
        "a coherent subgraph, not a sliver: {}",
        kept.len()
    );
    for edge in agent["data"]["edges"].as_array().unwrap() {
        assert!(
            kept.contains(edge["source"].as_str().unwrap())
                && kept.contains(edge["target"].as_str().unwrap())
        );
    }

    let (_, asked) = server
        .post_json(
            "/api/tools/cos_graph_export?budget=agent",
            json!({"max_nodes": 500}),
        )
        .await;
    assert_eq!(
        asked["meta"]["truncated"], false,
        "an explicit size keeps the graph tier"
    );
    assert_eq!(asked["data"]["nodes"].as_array().unwrap().len(), all_nodes);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_through_an_alias_is_sited_at_the_call_not_the_enclosing_def() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(root, "i18n.py", "def gettext(text):\n    return text\n");
    write(
        root,
        "views.py",
        "from i18n import gettext as _\n\n\ndef greet(name):\n    prefix = 'Dear '\n    return _('hello') + prefix + name\n",
    );
    server.post_json("/api/graph/index", json!({})).await;
    let (status, plan) = server
        .post_json(
            "/api/graph/rename-plan",
            json!({"uid": "code:function:i18n.py::gettext", "new_name": "translate"}),
        )
        .await;
    assert_eq!(status, 200, "{plan}");
    let sites = plan["data"]["call_sites"].as_array().unwrap();
    assert_eq!(sites.len(), 1, "{plan}");
    assert_eq!(sites[0]["path"], "views.py");
    assert_eq!(
        sites[0]["line"], 6,
        "the line of `_('hello')`, not of `def greet`"
    );
    assert!(sites[0]["text"].as_str().unwrap().contains("_('hello')"));
}
