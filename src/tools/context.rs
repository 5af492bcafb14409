//! What a tool body sees: the hub's configuration and state (store,
//! caches, cursors, bells, the areas with background work under way), and
//! the context of one call (its front door, budget, registry, progress).

use super::*;

/// Where the hub lives on disk.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// The repository the hub serves.
    pub repo_root: PathBuf,
    /// `$COS_STATE_DIR`, by default `<repo>/.cos`.
    pub state_dir: PathBuf,
    /// A team database (`--database`, `COS_DATABASE_URL`); when None, the
    /// settings file's `[database] url`, else the hub's own database.
    pub database_url: Option<String>,
}

impl HubConfig {
    pub fn for_repo(repo_root: &Path, state_dir: Option<PathBuf>) -> HubConfig {
        let state_dir = state_dir.unwrap_or_else(|| repo_root.join(".cos"));
        HubConfig {
            repo_root: repo_root.to_path_buf(),
            state_dir,
            database_url: None,
        }
    }

    /// The same configuration with a team database.
    pub fn with_database(mut self, url: Option<String>) -> HubConfig {
        self.database_url = url;
        self
    }

    /// The team database's URL: the one given, else `[database] url` of the
    /// settings file; None for the hub's own database.
    pub fn team_database(&self) -> Result<Option<String>, ToolError> {
        if let Some(url) = &self.database_url {
            return Ok(Some(url.clone()));
        }
        let section = settings::section(&self.state_dir, "database")?;
        match section.get("url") {
            None => Ok(None),
            Some(toml::Value::String(url)) => Ok(Some(url.clone())),
            Some(_) => Err(ToolError::config(
                &settings::path(&self.state_dir),
                "[database] url must be a string such as \"postgres://user@host/db\"",
            )),
        }
    }
}

/// The shared state a tool body runs against.
pub struct HubState {
    pub config: HubConfig,
    pub store: Store,
    /// Where the state a team shares lives (the board, ...): `store` itself,
    /// or a team database.
    pub shared: crate::store::SharedStore,
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
    /// Who the shell or an agent over stdio acts as (the settings file's
    /// `[user] token`, or `COS_USER_TOKEN`); the HTTP door names its callers
    /// request by request.
    pub acting_as: Option<users::User>,
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
    /// The authenticated user the call acts for, when the hub has users.
    pub user: Option<users::User>,
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
            user: hub.acting_as.clone(),
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

    /// Another tool's answer data, called by name within this call: its
    /// module's switch holds as at any front door, and nothing is trimmed
    /// (the calling tool answers within its own budget). For a tool that
    /// draws on another area without naming its code.
    pub fn call(
        &self,
        name: &str,
        arguments: serde_json::Value,
    ) -> Result<serde_json::Value, ToolError> {
        let Some(tool) = self.registry.get(name) else {
            return Err(ToolError::from(super::runtime::unknown_tool(
                name,
                self.registry,
            )));
        };
        let module = tool.spec.module;
        if module.switchable() && !self.switches()?.is_on(module) {
            return Err(super::runtime::module_disabled(module));
        }
        let inner = ToolContext::new(
            self.hub,
            self.source,
            self.registry,
            self.progress,
            Budget::None,
        );
        (tool.handler)(&inner, arguments).map(|answer| answer.data)
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
