//! The knowledge graph on small fixture repositories, through HTTP and the library's store.

mod common;

use common::{TestServer, error_of};
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
fn dump(state_dir: &Path) -> (Nodes, Edges) {
    let store = cos_hub::store::Store::open(state_dir).unwrap();
    store
        .read(|c| {
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
        Some("name"),
        "matched by a unique name, not by import binding"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn search_and_context_resolve_uids_paths_and_names() {
    let server = TestServer::start().await;
    fixture(server.repo());
    server.post_json("/api/graph/index", json!({})).await;

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
    assert_eq!(context["data"]["meta"]["resolved_from"], "direct");
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
    assert_eq!(by_path["data"]["meta"]["resolved_from"], "path_prefix");
    assert_eq!(by_path["data"]["node"]["uid"], "code:file:app/models.py");

    let (_, by_name) = server.get("/api/graph/context?uid=reconnect").await;
    assert_eq!(by_name["data"]["meta"]["resolved_from"], "fuzzy_fts5");

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

    let cold = tempfile::tempdir().unwrap();
    for entry in [
        "app/__init__.py",
        "app/db.py",
        "app/store.py",
        "tools/helper.py",
        "src/lib.rs",
        "docs/guide.md",
        ".gitignore",
        "ignored/skip.py",
    ] {
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
    let envelope = fresh
        .call_json(
            "cos_graph_index",
            Value::Null,
            cos_hub::envelope::Budget::None,
            cos_hub::tools::Source::Cli,
        )
        .await;
    assert_eq!(envelope["ok"], true, "{envelope}");
    let cold_graph = dump(&cold.path().join(".cos"));
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
async fn an_edit_only_reindex_equals_a_cold_index() {
    let server = TestServer::start().await;
    fixture(server.repo());
    server.post_json("/api/graph/index", json!({})).await;
    let root = server.repo();
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
    let incremental = dump(&server.state_dir());

    let cold = tempfile::tempdir().unwrap();
    for entry in [
        "app/__init__.py",
        "app/db.py",
        "app/models.py",
        "tools/helper.py",
        "src/lib.rs",
        "docs/guide.md",
        "docs/setup.md",
        ".gitignore",
    ] {
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
    let envelope = fresh
        .call_json(
            "cos_graph_index",
            Value::Null,
            cos_hub::envelope::Budget::None,
            cos_hub::tools::Source::Cli,
        )
        .await;
    assert_eq!(envelope["ok"], true, "{envelope}");
    let cold_graph = dump(&cold.path().join(".cos"));
    assert_eq!(incremental.0, cold_graph.0, "nodes differ");
    let missing: Vec<_> = cold_graph.1.difference(&incremental.1).collect();
    let extra: Vec<_> = incremental.1.difference(&cold_graph.1).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}\nextra {extra:?}"
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
