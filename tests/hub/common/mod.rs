//! A hub served on 127.0.0.1:0 for the length of one test, plus test-only tools
//! registered through the public registry API.

use cos_hub::envelope::{Category, Code, ErrorBody};
use cos_hub::hub;
use cos_hub::store::StoreError;
use cos_hub::tools::{
    Answer, Hub, HubConfig, JsonObject, Registry, Tool, ToolContext, ToolError, ToolSpec,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::net::SocketAddr;
use utoipa::ToSchema;

pub mod postgres;

pub use postgres::Board;

pub struct TestServer {
    pub address: SocketAddr,
    pub hub: Hub,
    pub client: reqwest::Client,
    /// The team database the board lives in, if any.
    pub database: Option<String>,
    _repo: tempfile::TempDir,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_on(Board::Local).await
    }

    /// A server with the test tools whose board lives where `board` says.
    pub async fn start_on(board: Board) -> TestServer {
        let mut registry = hub::default_registry();
        registry
            .register::<EchoTool>()
            .register::<PanicTool>()
            .register::<FailTool>()
            .register::<BigTool>();
        registry
            .register::<SqlErrorTool>()
            .register::<SlowReadTool>()
            .register::<SlowWriteTool>();
        let database = postgres::database_for(board);
        TestServer::on_database(
            registry,
            cos_hub::web::ServeOptions::default(),
            database,
            |hub| hub,
        )
        .await
    }

    /// A second server on another checkout sharing this one's team database.
    pub async fn beside(&self) -> TestServer {
        TestServer::on_database(
            hub::default_registry(),
            cos_hub::web::ServeOptions::default(),
            self.database.clone(),
            |hub| hub,
        )
        .await
    }

    /// A server on a new checkout whose shared state is the team database `url`.
    pub async fn on_team_database(url: &str) -> TestServer {
        TestServer::on_database(
            hub::default_registry(),
            cos_hub::web::ServeOptions::default(),
            Some(url.to_string()),
            |hub| hub,
        )
        .await
    }

    /// `--database URL` for a `cos` process that shares this server's board.
    pub fn database_args(&self) -> Vec<String> {
        self.database
            .iter()
            .flat_map(|url| ["--database".to_string(), url.clone()])
            .collect()
    }

    pub async fn with_registry(registry: Registry) -> TestServer {
        TestServer::with_options(registry, cos_hub::web::ServeOptions::default()).await
    }

    pub async fn with_options(
        registry: Registry,
        options: cos_hub::web::ServeOptions,
    ) -> TestServer {
        TestServer::with_tuned_hub(registry, options, |hub| hub).await
    }

    /// A server whose hub `tune` adjusts before it serves (e.g. its read timeout).
    pub async fn with_tuned_hub(
        registry: Registry,
        options: cos_hub::web::ServeOptions,
        tune: impl FnOnce(Hub) -> Hub,
    ) -> TestServer {
        TestServer::on_database(registry, options, None, tune).await
    }

    async fn on_database(
        registry: Registry,
        options: cos_hub::web::ServeOptions,
        database: Option<String>,
        tune: impl FnOnce(Hub) -> Hub,
    ) -> TestServer {
        let repo = tempfile::tempdir().expect("temporary repository");
        let config = HubConfig::for_repo(repo.path(), None).with_database(database.clone());
        let hub = tune(Hub::open(config, registry).expect("hub opens"));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let address = listener.local_addr().expect("local address");
        let (sender, receiver) = tokio::sync::oneshot::channel::<()>();
        let served = hub.clone();
        tokio::spawn(async move {
            let _ = cos_hub::web::serve_with(listener, served, options, async {
                let _ = receiver.await;
            })
            .await;
        });
        TestServer {
            address,
            hub,
            client: reqwest::Client::new(),
            database,
            _repo: repo,
            shutdown: Some(sender),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.address, path)
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = self
            .client
            .get(self.url(path))
            .send()
            .await
            .expect("request");
        decode(response).await
    }

    pub async fn post_json(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .client
            .post(self.url(path))
            .json(&body)
            .send()
            .await
            .expect("request");
        decode(response).await
    }

    pub async fn put_json(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .client
            .put(self.url(path))
            .json(&body)
            .send()
            .await
            .expect("request");
        decode(response).await
    }

    pub async fn patch_json(
        &self,
        path: &str,
        body: Value,
        if_match: Option<&str>,
    ) -> (u16, Value) {
        let mut request = self.client.patch(self.url(path)).json(&body);
        if let Some(tag) = if_match {
            request = request.header("if-match", tag);
        }
        decode(request.send().await.expect("request")).await
    }

    pub fn repo(&self) -> &std::path::Path {
        self._repo.path()
    }

    pub fn state_dir(&self) -> std::path::PathBuf {
        self.hub.state().config.state_dir.clone()
    }

    /// Makes `text` the board's `board.toml`: the state folder's, or on a
    /// team database the team's (through `cos board config --set`).
    pub fn set_board_config(&self, text: &str) {
        let Some(url) = &self.database else {
            std::fs::write(self.state_dir().join("board.toml"), text).expect("board.toml written");
            return;
        };
        let file = self.repo().join("team-board.toml");
        std::fs::write(&file, text).expect("board.toml written");
        let output = self.cos_board_config_set(&file, url);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// `cos board config --set file` on this hub's checkout and team database `url`.
    pub fn cos_board_config_set(&self, file: &std::path::Path, url: &str) -> std::process::Output {
        std::process::Command::new(env!("CARGO_BIN_EXE_cos"))
            .args(["board", "config", "--set"])
            .arg(file)
            .args(["--database", url, "--repo"])
            .arg(self.repo())
            .env_remove("COS_STATE_DIR")
            .output()
            .expect("cos runs")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(sender) = self.shutdown.take() {
            let _ = sender.send(());
        }
    }
}

pub async fn decode(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("body");
    let value = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
        panic!(
            "status {status}: body is not JSON: {:?}",
            String::from_utf8_lossy(&bytes)
        )
    });
    (status, value)
}

/// The column of `status` in a board answer.
pub fn column(board: &Value, status: &str) -> Value {
    board["data"]["columns"]
        .as_array()
        .and_then(|columns| columns.iter().find(|column| column["status"] == status))
        .unwrap_or_else(|| panic!("no {status} column: {board}"))
        .clone()
}

/// Asserts `body` is an ErrorEnvelope and returns its error.
pub fn error_of(body: &Value) -> &Value {
    let error = body
        .get("error")
        .unwrap_or_else(|| panic!("not an ErrorEnvelope: {body}"));
    for field in ["category", "code", "retryable", "message"] {
        assert!(
            error.get(field).is_some(),
            "ErrorBody lacks {field}: {body}"
        );
    }
    assert_eq!(
        body.as_object().map(|o| o.len()),
        Some(1),
        "ErrorEnvelope has only `error`: {body}"
    );
    error
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct EchoInput {
    pub text: String,
}

/// Answers its input; lives in the board module so the gate can be tested.
pub struct EchoTool;
impl Tool for EchoTool {
    type Input = EchoInput;
    type Output = JsonObject;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_test_echo",
        module: cos_hub::board::MODULE,
        layer: "tasks",
        description: "test: echoes text",
        effect: cos_hub::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    };
    fn run(_: &ToolContext, input: EchoInput) -> Result<Answer<Self::Output>, ToolError> {
        let mut map = Map::new();
        map.insert("text".into(), Value::String(input.text));
        Ok(Answer::from(JsonObject(map)))
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, ToSchema)]
pub struct SlowInput {
    pub millis: u64,
    /// Counts this run under the mark (`slow_runs`), so a test can tell
    /// whether a retried write ran again.
    #[serde(default)]
    pub mark: Option<String>,
}

static SLOW_RUNS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// How many times a slow tool ran with `mark`.
pub fn slow_runs(mark: &str) -> usize {
    let runs = SLOW_RUNS.lock().unwrap_or_else(|p| p.into_inner());
    runs.iter().filter(|m| *m == mark).count()
}

fn slept(input: SlowInput) -> Result<Answer<JsonObject>, ToolError> {
    if let Some(mark) = &input.mark {
        SLOW_RUNS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(mark.clone());
    }
    std::thread::sleep(std::time::Duration::from_millis(input.millis));
    let mut map = Map::new();
    map.insert("slept_ms".into(), Value::from(input.millis));
    Ok(Answer::from(JsonObject(map)))
}

/// A read that takes as long as it is told.
pub struct SlowReadTool;
impl Tool for SlowReadTool {
    type Input = SlowInput;
    type Output = JsonObject;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_test_slow_read",
        module: cos_hub::hub::MODULE,
        layer: "health",
        description: "test: a slow read",
        effect: cos_hub::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    };
    fn run(_: &ToolContext, input: SlowInput) -> Result<Answer<Self::Output>, ToolError> {
        slept(input)
    }
}

/// A write that takes as long as it is told.
pub struct SlowWriteTool;
impl Tool for SlowWriteTool {
    type Input = SlowInput;
    type Output = JsonObject;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_test_slow_write",
        description: "test: a slow write",
        ..SlowReadTool::SPEC.writing(false, false)
    };
    fn run(_: &ToolContext, input: SlowInput) -> Result<Answer<Self::Output>, ToolError> {
        slept(input)
    }
}

pub struct PanicTool;
impl Tool for PanicTool {
    type Input = NoArgs;
    type Output = JsonObject;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_test_panic",
        module: cos_hub::hub::MODULE,
        layer: "health",
        description: "test: panics",
        effect: cos_hub::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    };
    fn run(_: &ToolContext, _: NoArgs) -> Result<Answer<Self::Output>, ToolError> {
        panic!("deliberate test panic at /secret/internal/path.rs")
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct FailInput {
    pub category: Category,
}

/// Fails with the category it is given.
pub struct FailTool;
impl Tool for FailTool {
    type Input = FailInput;
    type Output = JsonObject;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_test_fail",
        module: cos_hub::hub::MODULE,
        layer: "health",
        description: "test: fails as asked",
        effect: cos_hub::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    };
    fn run(_: &ToolContext, input: FailInput) -> Result<Answer<Self::Output>, ToolError> {
        Err(ToolError::from(ErrorBody::new(
            input.category,
            Code::E_ARGUMENT,
            format!("failing as {}", input.category),
        )))
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct BigInput {
    pub count: usize,
    /// Adds this many small top-level fields: an answer no trim can shrink.
    pub wide: Option<usize>,
}

/// Returns `count` results, for trimming over the wire.
pub struct BigTool;
impl Tool for BigTool {
    type Input = BigInput;
    type Output = JsonObject;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_test_big",
        module: cos_hub::hub::MODULE,
        layer: "search",
        description: "test: many results",
        effect: cos_hub::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    };
    fn run(_: &ToolContext, input: BigInput) -> Result<Answer<Self::Output>, ToolError> {
        let results: Vec<Value> = (0..input.count)
            .map(|i| json!({"id": i, "title": format!("result number {i}")}))
            .collect();
        let mut map = Map::new();
        map.insert("count".into(), json!(input.count));
        map.insert("results".into(), Value::Array(results));
        for i in 0..input.wide.unwrap_or(0) {
            map.insert(format!("field_{i}"), json!(i));
        }
        Ok(Answer::from(JsonObject(map)))
    }
}

/// Runs broken SQL, to see the SQLite forensics.
pub struct SqlErrorTool;
impl Tool for SqlErrorTool {
    type Input = NoArgs;
    type Output = JsonObject;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_test_sql",
        module: cos_hub::hub::MODULE,
        layer: "health",
        description: "test: bad SQL",
        effect: cos_hub::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    };
    fn run(context: &ToolContext, _: NoArgs) -> Result<Answer<Self::Output>, ToolError> {
        context
            .hub
            .store
            .read(|c| c.execute("SELECT * FROM missing_table", []).map(|_| ()))?;
        Ok(Answer::from(JsonObject::default()))
    }
}

#[allow(unused)]
fn _store_error_is_public(_: StoreError) {}

/// Follows a tool's cursor under the agent budget until the list ends: every
/// page must fit the budget, and the items of every page are returned in order.
/// `list` and `next` are JSON pointers into `data`; `cursor_argument` is the
/// argument the cursor goes back in.
pub async fn walk_under_agent_budget(
    server: &TestServer,
    tool: &str,
    arguments: Value,
    list: &str,
    next: &str,
    cursor_argument: &str,
) -> (Vec<Value>, usize) {
    walk(
        server,
        tool,
        "?budget=agent",
        arguments,
        list,
        next,
        cursor_argument,
    )
    .await
}

/// The same walk with the budget off: the listing as the tool pages it itself.
pub async fn walk_whole(
    server: &TestServer,
    tool: &str,
    arguments: Value,
    list: &str,
    next: &str,
) -> Vec<Value> {
    walk(server, tool, "", arguments, list, next, "cursor")
        .await
        .0
}

async fn walk(
    server: &TestServer,
    tool: &str,
    budget: &str,
    arguments: Value,
    list: &str,
    next: &str,
    cursor_argument: &str,
) -> (Vec<Value>, usize) {
    let mut items = Vec::new();
    let mut arguments = arguments;
    let mut pages = 0;
    loop {
        pages += 1;
        assert!(pages < 2_000, "{tool}: the cursor never ends");
        let (status, body) = server
            .post_json(&format!("/api/tools/{tool}{budget}"), arguments.clone())
            .await;
        assert_eq!(status, 200, "{tool}: {body}");
        let size = serde_json::to_string(&body).unwrap().len();
        assert!(
            budget.is_empty() || size <= 33_000,
            "{tool}: a page of {size} characters"
        );
        let page = body["data"]
            .pointer(list)
            .and_then(Value::as_array)
            .expect("the list");
        assert!(
            !page.is_empty(),
            "{tool}: an empty page before the end: {body}"
        );
        items.extend(page.iter().cloned());
        match body["data"].pointer(next).and_then(Value::as_str) {
            Some(cursor) => arguments[cursor_argument] = json!(cursor),
            None => return (items, pages),
        }
    }
}

/// `/api/stream` as a browser reads it.
pub struct ChangeStream {
    response: reqwest::Response,
    buffer: String,
}

impl ChangeStream {
    pub async fn open(server: &TestServer) -> ChangeStream {
        ChangeStream::open_at(&server.client, &server.url("/api/stream")).await
    }

    /// The stream at `url`, of a hub served elsewhere (a `cos serve` child).
    pub async fn open_at(client: &reqwest::Client, url: &str) -> ChangeStream {
        let response = client.get(url).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 200);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        ChangeStream {
            response,
            buffer: String::new(),
        }
    }

    /// The revision of `area` in the next `change` event, which must come within 5 s.
    pub async fn next(&mut self, area: &str) -> i64 {
        let revisions = self.next_revisions().await;
        revisions[area]
            .as_i64()
            .unwrap_or_else(|| panic!("no {area} revision in {revisions}"))
    }

    /// Every area's revision in the next `change` event, which must come within 5 s.
    pub async fn next_revisions(&mut self) -> Value {
        let wait = std::time::Duration::from_secs(5);
        tokio::time::timeout(wait, next_change(&mut self.response, &mut self.buffer))
            .await
            .expect("a change event within 5 s")
    }
}

/// Reads `/api/stream` events until one `change` event arrives; returns its
/// revisions.
async fn next_change(response: &mut reqwest::Response, buffer: &mut String) -> Value {
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            if event.contains("event: change")
                && let Some(data) = event.lines().find_map(|line| line.strip_prefix("data: "))
            {
                return serde_json::from_str(data).unwrap();
            }
            continue;
        }
        let chunk = response
            .chunk()
            .await
            .unwrap()
            .expect("the stream stays open");
        buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
}

/// Runs the graph's index tool on `hub`, as `cos index` (or the watcher of
/// `cos serve`) does, and checks that it succeeded.
pub async fn index_graph(hub: &Hub) {
    let envelope = hub
        .call_json(
            "cos_graph_index",
            Value::Null,
            cos_hub::envelope::Budget::None,
            cos_hub::tools::Source::Cli,
        )
        .await;
    assert_eq!(envelope["ok"], true, "{envelope}");
}

/// Calls `attempt` every 50 ms until it answers `Ok`, for at most 10 s (the
/// watchers' debounce and least time between runs are well under that);
/// answers how long it took. `Err` carries what was seen, for the failure.
pub async fn within_ten_seconds<F, Fut>(what: &str, mut attempt: F) -> std::time::Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let started = std::time::Instant::now();
    loop {
        let seen = match attempt().await {
            Ok(()) => return started.elapsed(),
            Err(seen) => seen,
        };
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{what} never came: {seen}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
