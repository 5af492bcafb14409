//! The tool runtime: every `cos_*` tool is registered here once and reached from
//! every front door (REST, MCP, CLI) through the same guarded call.
//!
//! Owns tool registration (name, module, layer, typed input and output with
//! their JSON schemas, description), the module gate, and the guard that turns
//! every error and every panic into a fail envelope and a forensic log line
//! (and rings the writes bell after every writing call that succeeded).
//! Blocking tool bodies run on the blocking pool, never on the async runtime.
//! It must not know about HTTP or MCP wire details: front doors adapt to it.

pub mod answer;
pub mod area;
pub mod bell;
pub mod cache;
pub mod cursor;
mod error;
mod forensics;
pub mod input;
pub mod modules;
pub(crate) mod schema;
pub mod searchable;
pub mod text;

use crate::envelope::{self, Budget, Category, Code, ErrorBody};
use crate::store::Store;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use utoipa::ToSchema;

pub use answer::{Answer, Page};
pub use area::Area;
pub use error::ToolError;
pub use modules::{Module, ModuleState, Switches};

/// How long a read-only call may run before it is answered `E_TIMEOUT`. A
/// write is never cut short: it runs to its end and answers, so a client that
/// retries after a timeout can never make a write happen twice.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The time as the hub records it: RFC 3339 in UTC, to the millisecond.
pub fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// Which front door a call came through; recorded in history by tools that write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Rest,
    Mcp,
    Cli,
    /// The hub's own background work (the watchers, the search follower).
    Watcher,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Rest => "rest",
            Source::Mcp => "mcp",
            Source::Cli => "cli",
            Source::Watcher => "watcher",
        }
    }
}

/// What every tool knows about itself.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    /// `cos_*`
    pub name: &'static str,
    pub module: Module,
    /// The retrieval layer reported in `data.meta.layer`.
    pub layer: &'static str,
    pub description: &'static str,
    /// What calling the tool does to the hub's state (MCP annotations say it to agents).
    pub effect: Effect,
    /// Keys of the answer's lists the agent budget cuts before others of the
    /// same depth (beside the seed's registry: `results`, `references`, ...).
    pub list_hints: &'static [&'static str],
    /// A tighter agent budget than the default one, in token-normalised
    /// characters (the document tools answer within the seed's compact 16,384).
    pub agent_budget: Option<usize>,
}

/// What a tool does to the state it works on. Every tool works on this
/// repository's hub only, so none reaches an open world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effect {
    /// Changes nothing.
    pub read_only: bool,
    /// May overwrite or delete what is there (not only add to it).
    pub destructive: bool,
    /// Calling it again with the same arguments changes nothing more.
    pub idempotent: bool,
}

impl Effect {
    pub const READ: Effect = Effect {
        read_only: true,
        destructive: false,
        idempotent: true,
    };

    pub const fn writes(destructive: bool, idempotent: bool) -> Effect {
        Effect {
            read_only: false,
            destructive,
            idempotent,
        }
    }
}

impl ToolSpec {
    /// The same spec with lists to cut first.
    pub const fn cutting_first(self, list_hints: &'static [&'static str]) -> ToolSpec {
        ToolSpec { list_hints, ..self }
    }

    /// The same spec held to a tighter agent budget.
    pub const fn within_agent_budget(self, chars: usize) -> ToolSpec {
        ToolSpec {
            agent_budget: Some(chars),
            ..self
        }
    }

    /// The same spec for a tool that writes.
    pub const fn writing(self, destructive: bool, idempotent: bool) -> ToolSpec {
        ToolSpec {
            effect: Effect::writes(destructive, idempotent),
            ..self
        }
    }
}

/// A tool: a typed, blocking function over the hub's state.
pub trait Tool: Send + Sync + 'static {
    type Input: DeserializeOwned + ToSchema + Send + 'static;
    type Output: Serialize + ToSchema + Send + 'static;
    const SPEC: ToolSpec;
    /// The answer: its data, its diagnostics and the pages a cursor continues.
    fn run(context: &ToolContext, input: Self::Input) -> Result<Answer<Self::Output>, ToolError>;
}

/// A free-form JSON object, for answers whose shape the tool's own schema describes.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, ToSchema)]
#[schema(value_type = Object)]
pub struct JsonObject(pub Map<String, Value>);

/// Where the hub lives on disk.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// The repository the hub serves.
    pub repo_root: PathBuf,
    /// `$COS_STATE_DIR`, by default `<repo>/.cos`.
    pub state_dir: PathBuf,
}

impl HubConfig {
    pub fn for_repo(repo_root: &Path, state_dir: Option<PathBuf>) -> HubConfig {
        let state_dir = state_dir.unwrap_or_else(|| repo_root.join(".cos"));
        HubConfig {
            repo_root: repo_root.to_path_buf(),
            state_dir,
        }
    }
}

/// The shared state a tool body runs against.
pub struct HubState {
    pub config: HubConfig,
    pub store: Store,
    pub modules: ModuleState,
    pub started: Instant,
    /// Answers shared between callers until the data they read changes.
    pub answers: cache::AnswerCache,
    /// Background work under way, by area (e.g. the graph re-indexing after a save).
    pub pending: Pending,
    /// Rung after every writing call that succeeded, for followers in this process.
    pub writes: bell::Bell,
    /// Seals and opens the cursors tools give out.
    pub cursors: cursor::Keyring,
    /// See [`READ_TIMEOUT`].
    pub read_timeout: Duration,
}

/// Who is calling and the budget its answer is held to.
#[derive(Debug, Clone, Copy)]
struct Call {
    source: Source,
    budget: Budget,
}

impl Call {
    fn unbudgeted(source: Source) -> Call {
        Call {
            source,
            budget: Budget::None,
        }
    }
}

/// The budget a tool's answer is held to: the agent budget becomes the
/// tool's own tighter one, or the plain agent tier for a graph-shaped answer
/// that asked for it.
fn effective_budget(spec: &ToolSpec, budget: Budget, agent_budget_only: bool) -> Budget {
    match (budget, spec.agent_budget) {
        (Budget::Agent, Some(chars)) => Budget::Chars(chars),
        (Budget::Agent, None) if agent_budget_only => Budget::Chars(envelope::AGENT_BUDGET_CHARS),
        (other, _) => other,
    }
}

/// Which areas have background work under way; answers report it in their meta.
#[derive(Default)]
pub struct Pending {
    areas: std::sync::Mutex<std::collections::BTreeSet<&'static str>>,
}

impl Pending {
    pub fn set(&self, area: &'static str, pending: bool) {
        let mut areas = self
            .areas
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if pending {
            areas.insert(area);
        } else {
            areas.remove(area);
        }
    }

    pub fn is(&self, area: &str) -> bool {
        self.areas
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .contains(area)
    }
}

/// One call's view of the hub.
pub struct ToolContext<'a> {
    pub hub: &'a HubState,
    pub source: Source,
    /// The registry, for tools that describe other tools.
    pub registry: &'a Registry,
    /// Where a long tool reports how far it got (the CLI draws a bar).
    pub progress: &'a dyn Progress,
    /// The budget the answer will be held to, for tools that size their own
    /// pages (a document read pages its text so no cut lands inside it).
    pub budget: Budget,
    /// The module switches as this call first read them (`switches`).
    switches: std::sync::OnceLock<Switches>,
}

impl<'a> ToolContext<'a> {
    pub fn new(
        hub: &'a HubState,
        source: Source,
        registry: &'a Registry,
        progress: &'a dyn Progress,
        budget: Budget,
    ) -> ToolContext<'a> {
        ToolContext {
            hub,
            source,
            registry,
            progress,
            budget,
            switches: std::sync::OnceLock::new(),
        }
    }

    /// The module switches, read once a call: the gate and the tool's body
    /// see the same read of the switchboard, and it is stat'ed once.
    pub fn switches(&self) -> Result<&Switches, ToolError> {
        if let Some(switches) = self.switches.get() {
            return Ok(switches);
        }
        let read = self.hub.modules.switches()?;
        Ok(self.switches.get_or_init(|| read))
    }

    /// The most an answer of `spec` may weigh under this call's budget, or
    /// `None` when nothing is trimmed.
    pub fn answer_limit(&self, spec: &ToolSpec) -> Option<usize> {
        effective_budget(spec, self.budget, false).limit_for(false)
    }
}

/// Progress of a long call, for callers that show it.
pub trait Progress: Sync {
    /// The call found `total` units of work.
    fn total(&self, _total: u64) {}
    /// One more unit is done.
    fn advance(&self) {}
}

/// Progress nobody watches.
pub struct Unwatched;

impl Progress for Unwatched {}

type Handler = Arc<dyn Fn(&ToolContext, Value) -> Result<Answer<Value>, ToolError> + Send + Sync>;

/// A registered tool as the front doors see it.
#[derive(Clone)]
pub struct RegisteredTool {
    pub spec: ToolSpec,
    pub input_schema: Value,
    pub output_schema: Value,
    handler: Handler,
}

/// Every tool of the hub, by name, and the areas that brought them.
#[derive(Default, Clone)]
pub struct Registry {
    tools: BTreeMap<&'static str, RegisteredTool>,
    areas: Vec<Area>,
}

impl Registry {
    /// A registry of `areas` and every tool they register.
    pub fn of_areas(areas: &[Area]) -> Registry {
        let mut registry = Registry::default();
        for area in areas {
            registry.add_area(*area);
        }
        registry
    }

    /// Adds an area: its tools now, its tables and revision when a hub opens.
    pub fn add_area(&mut self, area: Area) -> &mut Registry {
        (area.register)(self);
        if let Some(offered) = area.search {
            searchable::declare(offered);
        }
        self.areas.push(area);
        self
    }

    pub fn areas(&self) -> &[Area] {
        &self.areas
    }

    /// What the areas offer search, each with its area.
    pub fn searchables(&self) -> Vec<(&Area, &'static searchable::Searchable)> {
        self.areas
            .iter()
            .filter_map(|area| area.search.map(|offered| (area, offered)))
            .collect()
    }

    /// Every area's module, in the order the areas were added.
    pub fn modules(&self) -> Vec<Module> {
        self.areas.iter().map(|area| area.module).collect()
    }

    /// The module called `id`, if an area brings it.
    pub fn module(&self, id: &str) -> Option<Module> {
        self.modules().into_iter().find(|module| module.id() == id)
    }

    /// Every area's schema, in the order the areas were added.
    pub fn schemas(&self) -> Vec<crate::store::Schema> {
        self.areas
            .iter()
            .map(|area| crate::store::Schema {
                area: area.id,
                migrations: area.migrations,
            })
            .collect()
    }

    /// Registers `T`. Names are unique: registering a name twice replaces the first.
    pub fn register<T: Tool>(&mut self) -> &mut Registry {
        let handler: Handler = Arc::new(|context, arguments| {
            let input: T::Input = input::parse(arguments)?;
            let answer = T::run(context, input)?;
            let data = serde_json::to_value(&answer.data)
                .map_err(|e| ToolError::internal("serialising the tool's answer", e))?;
            Ok(answer.map(|_| data))
        });
        self.tools.insert(
            T::SPEC.name,
            RegisteredTool {
                spec: T::SPEC,
                input_schema: schema::json_schema::<T::Input>(),
                output_schema: schema::json_schema::<T::Output>(),
                handler,
            },
        );
        self
    }

    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values()
    }

    pub fn names_in(&self, module: Module) -> Vec<&'static str> {
        self.tools
            .values()
            .filter(|tool| tool.spec.module == module)
            .map(|tool| tool.spec.name)
            .collect()
    }
}

/// The hub: its state plus its tools. Cheap to clone; every front door holds one.
#[derive(Clone)]
pub struct Hub {
    state: Arc<HubState>,
    registry: Arc<Registry>,
}

#[derive(Debug, thiserror::Error)]
pub enum HubError {
    #[error("opening the hub's database: {0}")]
    Store(#[from] crate::store::StoreError),
}

impl Hub {
    /// Opens the hub's state with the given tools.
    pub fn open(config: HubConfig, registry: Registry) -> Result<Hub, HubError> {
        let store = Store::open(&config.state_dir, &registry.schemas())?;
        let modules = ModuleState::new(&config.state_dir);
        let cursors = cursor::Keyring::load(&config.state_dir);
        let state = HubState {
            config,
            store,
            modules,
            started: Instant::now(),
            answers: cache::AnswerCache::default(),
            pending: Pending::default(),
            writes: bell::Bell::default(),
            cursors,
            read_timeout: READ_TIMEOUT,
        };
        Ok(Hub {
            state: Arc::new(state),
            registry: Arc::new(registry),
        })
    }

    pub fn state(&self) -> &HubState {
        &self.state
    }

    /// The same hub with another read timeout; only before it is shared.
    pub fn with_read_timeout(mut self, timeout: Duration) -> Hub {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.read_timeout = timeout;
        }
        self
    }

    /// What a front door does when it stops serving cleanly: the write-ahead
    /// log is checkpointed and emptied, so a stopped hub leaves one file.
    pub async fn close(&self) {
        let hub = self.clone();
        let closed = tokio::task::spawn_blocking(move || hub.state.store.truncate_wal()).await;
        if let Ok(Err(error)) = closed {
            tracing::warn!(%error, "the write-ahead log could not be emptied at shutdown");
        }
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Calls `T` with typed input, off the async runtime, behind the gate and the guard.
    pub async fn call<T: Tool>(
        &self,
        input: T::Input,
        source: Source,
    ) -> Result<Answer<T::Output>, ErrorBody> {
        let hub = self.clone();
        let task = tokio::task::spawn_blocking(move || {
            hub.guarded(&T::SPEC, Call::unbudgeted(source), &Unwatched, |context| {
                T::run(context, input)
            })
        });
        self.in_time(&T::SPEC, task).await
    }

    /// Calls `T` on this thread, behind the gate and the guard: for callers
    /// that are already off the async runtime (the CLI, the file watcher).
    pub fn call_here<T: Tool>(
        &self,
        input: T::Input,
        source: Source,
        progress: &dyn Progress,
    ) -> Result<Answer<T::Output>, ErrorBody> {
        self.guarded(&T::SPEC, Call::unbudgeted(source), progress, |context| {
            T::run(context, input)
        })
    }

    /// Calls the tool registered as `name` on this thread, behind the gate and
    /// the guard, with its answer as JSON: for background callers that find a
    /// tool by name (the file watcher), so whatever the registry holds under
    /// that name is what runs.
    pub fn call_named_here(
        &self,
        name: &str,
        arguments: Value,
        source: Source,
        progress: &dyn Progress,
    ) -> Result<Answer<Value>, ErrorBody> {
        let Some(tool) = self.registry.get(name) else {
            return Err(unknown_tool(name, &self.registry));
        };
        self.guarded(&tool.spec, Call::unbudgeted(source), progress, |context| {
            (tool.handler)(context, arguments)
        })
    }

    /// Calls a tool by name with JSON arguments and returns the whole envelope.
    pub async fn call_json(
        &self,
        name: &str,
        arguments: Value,
        budget: Budget,
        source: Source,
    ) -> Value {
        let Some(tool) = self.registry.get(name).cloned() else {
            return envelope::fail_within(&unknown_tool(name, &self.registry), budget);
        };
        let hub = self.clone();
        let spec = tool.spec;
        let task = tokio::task::spawn_blocking(move || {
            let outcome = hub.guarded(&spec, Call { source, budget }, &Unwatched, |context| {
                (tool.handler)(context, arguments)
            });
            outcome.and_then(|value| within_budget(&tool, value, budget))
        });
        let outcome = self.in_time(&spec, task).await;
        outcome.unwrap_or_else(|error| envelope::fail_within(&error, budget))
    }

    /// The outcome of a call running on the blocking pool: a read-only call
    /// that outlives the read timeout is answered `E_TIMEOUT` (it changed
    /// nothing, so a retry is safe; it finishes unseen), a write is awaited
    /// to its end.
    async fn in_time<O>(
        &self,
        spec: &ToolSpec,
        task: tokio::task::JoinHandle<Result<O, ErrorBody>>,
    ) -> Result<O, ErrorBody> {
        let joined = if spec.effect.read_only {
            let limit = self.state.read_timeout;
            match tokio::time::timeout(limit, task).await {
                Ok(joined) => joined,
                Err(_) => {
                    return Err(ErrorBody::new(
                        Category::Transient,
                        Code::E_TIMEOUT,
                        format!(
                            "{} took longer than {limit:?}; it changed nothing, so asking again is safe",
                            spec.name
                        ),
                    )
                    .with_details(serde_json::json!({"retry_after_seconds": 1})));
                }
            }
        } else {
            task.await
        };
        joined.unwrap_or_else(|join_error| {
            Err(self.report(spec, ToolError::Panic(join_error.to_string())))
        })
    }

    /// Runs a tool body behind the module gate, turning errors and panics into error bodies.
    fn guarded<O>(
        &self,
        spec: &ToolSpec,
        call: Call,
        progress: &dyn Progress,
        body: impl FnOnce(&ToolContext) -> Result<O, ToolError>,
    ) -> Result<O, ErrorBody> {
        let context = ToolContext::new(
            &self.state,
            call.source,
            &self.registry,
            progress,
            call.budget,
        );
        gate(spec, &context).map_err(|error| self.report(spec, error))?;
        match catch_unwind(AssertUnwindSafe(|| body(&context))) {
            Ok(Ok(output)) => {
                if !spec.effect.read_only {
                    self.state.writes.ring();
                }
                Ok(output)
            }
            Ok(Err(error)) => Err(self.report(spec, error)),
            Err(panic) => Err(self.report(spec, ToolError::Panic(panic_message(&*panic)))),
        }
    }

    /// Logs one forensic line for the failure and returns what the caller may see.
    fn report(&self, spec: &ToolSpec, error: ToolError) -> ErrorBody {
        let error_id = forensics::new_error_id();
        forensics::record(&self.state.config.state_dir, spec.name, &error_id, &error);
        let mut body = error.to_body(&error_id);
        if !error.is_system() {
            body.error_id = None;
        }
        body
    }
}

/// Refuses a call whose tool's module is switched off.
fn gate(spec: &ToolSpec, context: &ToolContext) -> Result<(), ToolError> {
    if !spec.module.switchable() || context.switches()?.is_on(spec.module) {
        Ok(())
    } else {
        Err(module_disabled(spec.module))
    }
}

/// The error every front door gives for a switched-off module.
pub fn module_disabled(module: Module) -> ToolError {
    ToolError::from(
        ErrorBody::new(
            Category::ModuleDisabled,
            Code::E_MODULE_DISABLED,
            format!("the {0} module is disabled in this project; run `cos module enable {0}`", module.id()),
        )
        .with_details(serde_json::json!({"module": module.id(), "enable_with": format!("cos module enable {}", module.id())})),
    )
}

fn unknown_tool(name: &str, registry: &Registry) -> ErrorBody {
    let known: Vec<&str> = registry.iter().map(|tool| tool.spec.name).collect();
    ErrorBody::new(
        Category::NotFound,
        Code::E_UNKNOWN_TOOL,
        format!("no tool named {name:?}; `cos tool list` shows them"),
    )
    .with_details(serde_json::json!({"tool": name, "known": known}))
}

/// Builds the success envelope for a tool's JSON answer.
pub fn wrap_success(value: Value, layer: &str, budget: Budget) -> Value {
    envelope::ok(as_data(value), Some(layer), budget)
}

fn as_data(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => {
            let mut map = Map::new();
            map.insert("value".to_string(), other);
            map
        }
    }
}

/// The success envelope of a tool's answer, or `E_CONTEXT_BUDGET` when even the
/// last rung of the trim ladder leaves it over `budget`: nothing over budget
/// reaches an agent.
fn within_budget(
    tool: &RegisteredTool,
    answer: Answer<Value>,
    budget: Budget,
) -> Result<Value, ErrorBody> {
    let Answer {
        data,
        meta,
        pages,
        agent_budget_only,
    } = answer;
    let budget = effective_budget(&tool.spec, budget, agent_budget_only);
    let data = as_data(data);
    let page_lists: Vec<String> = pages.iter().map(|page| page.list.clone()).collect();
    // room for resuming cursors matters only where something can be cut
    let reserve = if budget == Budget::None {
        0
    } else {
        answer::cursor_room(&data, &pages)
    };
    let hints = envelope::Hints {
        pages: &page_lists,
        keys: tool.spec.list_hints,
        reserve,
        ..envelope::Hints::default()
    };
    let finished = envelope::finish_with(
        data,
        meta,
        Some(tool.spec.layer),
        budget,
        hints,
        |data, cuts| answer::resume_cut_pages(data, &pages, cuts),
    );
    if !finished.unshrinkable {
        return Ok(finished.into_envelope());
    }
    let envelope = finished.into_envelope();
    let size = envelope::measure::weight(&envelope);
    let limit = budget.limit_for(false).unwrap_or(size);
    tracing::warn!(
        tool = tool.spec.name,
        size,
        limit,
        "envelope_unshrinkable: the answer stays over budget after every trim"
    );
    Err(over_budget(tool, size, limit))
}

/// `E_CONTEXT_BUDGET`: the answer's size, the budget, and the arguments that narrow it.
fn over_budget(tool: &RegisteredTool, size: usize, limit: usize) -> ErrorBody {
    let narrowing = narrowing_arguments(&tool.input_schema);
    let advice = if narrowing.is_empty() {
        "this tool takes no argument that narrows it".to_string()
    } else {
        format!("narrow it with {}", narrowing.join(", "))
    };
    ErrorBody::new(
        Category::Validation,
        Code::E_CONTEXT_BUDGET,
        format!(
            "the answer of {} is {size} characters even after trimming, over the budget of {limit}; {advice}",
            tool.spec.name
        ),
    )
    .with_details(serde_json::json!({
        "size": size,
        "budget": limit,
        "narrow_with": narrowing,
    }))
}

/// The optional arguments of a tool: filters, limits and cursors that shrink its answer.
fn narrowing_arguments(input_schema: &Value) -> Vec<String> {
    let required: Vec<&str> = input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    input_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .keys()
                // a cursor continues an answer; it does not make one smaller
                .filter(|name| !required.contains(&name.as_str()) && !name.ends_with("cursor"))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTES: Module = Module::new("notes", "a module for tests");

    #[test]
    fn a_call_reads_the_switchboard_once_and_keeps_that_read() {
        let repo = tempfile::tempdir().unwrap();
        let hub = Hub::open(
            HubConfig::for_repo(repo.path(), None),
            Registry::of_areas(&[]),
        )
        .unwrap();
        let call = || {
            ToolContext::new(
                hub.state(),
                Source::Cli,
                hub.registry(),
                &Unwatched,
                Budget::None,
            )
        };
        let context = call();
        assert!(context.switches().unwrap().is_on(NOTES));
        hub.state().modules.set(NOTES, false).unwrap();
        // the call goes on with the read its gate made
        assert!(context.switches().unwrap().is_on(NOTES));
        assert!(!call().switches().unwrap().is_on(NOTES));
    }
}
