//! The runtime: a hub opened on a repository, and the one guarded call
//! every front door makes (module gate, blocking pool, timeouts, panics
//! turned into fail envelopes, answers sized to their budget, the writes
//! bell rung after a write).

use super::*;

/// How long a read-only call may run before it is answered `E_TIMEOUT`. A
/// write is never cut short: it runs to its end and answers, so a client that
/// retries after a timeout can never make a write happen twice.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The time as the hub records it: RFC 3339 in UTC, to the millisecond.
pub fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// Who is calling and the budget its answer is held to.
#[derive(Debug, Clone, Copy)]
pub(super) struct Call {
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

/// The user the calling task acts as, taken before the call leaves it for
/// the blocking pool (the task's own value does not travel there).
fn caller() -> Option<users::User> {
    users::current()
}

/// The budget a tool's answer is held to: the agent budget becomes the
/// tool's own tighter one, or the plain agent tier for a graph-shaped answer
/// that asked for it.
pub(super) fn effective_budget(spec: &ToolSpec, budget: Budget, agent_budget_only: bool) -> Budget {
    match (budget, spec.agent_budget) {
        (Budget::Agent, Some(chars)) => Budget::Chars(chars),
        (Budget::Agent, None) if agent_budget_only => Budget::Chars(envelope::AGENT_BUDGET_CHARS),
        (other, _) => other,
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
    #[error("{0}")]
    Settings(String),
}

impl Hub {
    /// Opens the hub's state with the given tools.
    pub fn open(config: HubConfig, registry: Registry) -> Result<Hub, HubError> {
        let store = Store::open(&config.state_dir, &registry.schemas())?;
        let url = config
            .team_database()
            .map_err(|error| HubError::Settings(error.to_string()))?;
        let shared = match url {
            None => crate::store::SharedStore::Local(store.clone()),
            Some(url) => crate::store::SharedStore::Team(crate::store::pg::PgStore::open(
                &url,
                registry.team_schemas(),
            )?),
        };
        if shared.team().is_some() {
            for name in registry.shared_files() {
                if config.state_dir.join(name).exists() {
                    tracing::warn!(
                        file = %config.state_dir.join(name).display(),
                        "not used while the hub shares a team database: every hub obeys the team's copy, kept there"
                    );
                }
            }
        }
        let modules = ModuleState::new(&config.state_dir);
        let cursors = cursor::Keyring::load(&config.state_dir).shared_through(shared.team());
        let state = HubState {
            config,
            store,
            shared,
            modules,
            started: Instant::now(),
            answers: cache::AnswerCache::default(),
            pending: Pending::default(),
            writes: bell::Bell::default(),
            cursors,
            read_timeout: READ_TIMEOUT,
            acting_as: None,
        };
        Ok(Hub {
            state: Arc::new(state),
            registry: Arc::new(registry),
        })
    }

    pub fn state(&self) -> &HubState {
        &self.state
    }

    /// The same hub acting as `user` in every call that names no other (the
    /// shell, an agent over stdio); only before it is shared.
    pub fn acting_as(mut self, user: Option<users::User>) -> Hub {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.acting_as = user;
        }
        self
    }

    /// The user whose token is `token`, as this hub's shared store knows them.
    pub fn user_by_token(
        &self,
        token: &str,
    ) -> Result<Option<users::User>, crate::store::StoreError> {
        self.user_by_hash(&users::token_hash(token))
    }

    /// The user whose token hashes to `hash`.
    pub fn user_by_hash(
        &self,
        hash: &str,
    ) -> Result<Option<users::User>, crate::store::StoreError> {
        Ok(self.state.shared.user_by_token(hash)?.and_then(|row| {
            Some(users::User {
                role: users::Role::parse(&row.role)?,
                name: row.name,
            })
        }))
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
        let (user, request) = (caller(), requests::current());
        let task = tokio::task::spawn_blocking(move || {
            hub.guarded_as(
                (user, request),
                &T::SPEC,
                Call::unbudgeted(source),
                &Unwatched,
                |context| T::run(context, input),
            )
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
        let (user, request) = (caller(), requests::current());
        let task = tokio::task::spawn_blocking(move || {
            let call = Call { source, budget };
            let outcome = hub.guarded_as((user, request), &spec, call, &Unwatched, |context| {
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
        self.guarded_as((None, None), spec, call, progress, body)
    }

    /// [`Hub::guarded`] for `user` (else whom the process acts as), whose
    /// role must reach the tool, as the request `request` (else a new one).
    fn guarded_as<O>(
        &self,
        (user, request): (Option<users::User>, Option<String>),
        spec: &ToolSpec,
        call: Call,
        progress: &dyn Progress,
        body: impl FnOnce(&ToolContext) -> Result<O, ToolError>,
    ) -> Result<O, ErrorBody> {
        let mut context = ToolContext::new(
            &self.state,
            call.source,
            &self.registry,
            progress,
            call.budget,
        );
        if user.is_some() {
            context.user = user;
        }
        // the hub's own background work answers to no one's role
        if let Some(user) = &context.user
            && call.source != Source::Watcher
        {
            users::check_role(user, spec).map_err(|error| self.report(spec, error))?;
        }
        gate(spec, &context).map_err(|error| self.report(spec, error))?;
        let run = || catch_unwind(AssertUnwindSafe(|| body(&context)));
        let outcome = if spec.effect.read_only {
            run()
        } else {
            let request = request.unwrap_or_else(crate::store::requests::new_id);
            crate::store::requests::scope(&request, spec.name, run)
        };
        match outcome {
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
pub(super) fn gate(spec: &ToolSpec, context: &ToolContext) -> Result<(), ToolError> {
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

pub(super) fn unknown_tool(name: &str, registry: &Registry) -> ErrorBody {
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

pub(super) fn as_data(value: Value) -> Map<String, Value> {
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
pub(super) fn within_budget(
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
pub(super) fn over_budget(tool: &RegisteredTool, size: usize, limit: usize) -> ErrorBody {
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
pub(super) fn narrowing_arguments(input_schema: &Value) -> Vec<String> {
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

pub(super) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}
