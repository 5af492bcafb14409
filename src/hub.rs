//! The hub itself: the list of its areas, its own tables (`hub_meta`,
//! request receipts, users) and its own tools, health, write receipts and
//! module settings (module `core`).
//!
//! Plain tool bodies over the runtime's state; they must not reach into other
//! areas' tables or into HTTP/MCP concerns.

mod receipt;

pub use receipt::{WriteReceipt, WriteReceiptInput, WriteReceiptTool, WriteState};

use crate::store::Migration;
use crate::tools::{
    Answer, Area, Module, Registry, Tool, ToolContext, ToolError, ToolSpec,
    modules::ModuleStateError,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Every area of the hub, in the order their tables are built. A new area is
/// one line here (and its module, and its router file under `web/routes`).
pub const AREAS: &[Area] = &[
    AREA,
    crate::board::AREA,
    crate::graph::AREA,
    crate::docs::AREA,
    crate::supervise::AREA,
    crate::search::AREA,
];

/// A module id where a schema states it: one of the areas' modules.
pub struct ModuleId;

impl utoipa::PartialSchema for ModuleId {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        module_ids().into()
    }
}

fn module_ids() -> utoipa::openapi::schema::Object {
    let ids: Vec<&str> = AREAS.iter().map(|area| area.module.id()).collect();
    crate::tools::schema::one_of(&ids, "A module id, as GET /api/settings/modules lists them")
}

impl ToSchema for ModuleId {}

/// The hub's own module: health and settings, always on.
pub const MODULE: Module = Module::always_on(
    "core",
    "health and settings of the hub itself (cannot be switched off)",
);

/// The hub's own area: its table and the core tools.
pub const AREA: Area = Area {
    id: "hub",
    module: MODULE,
    migrations: MIGRATIONS,
    team: Some(&TEAM),
    revision: None,
    register,
    search: None,
    resources: &[],
    prompts: &[],
    health: None,
};

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "hub_meta",
        sql: "CREATE TABLE hub_meta (
                  key   TEXT PRIMARY KEY,
                  value TEXT NOT NULL
              ) STRICT;
              INSERT INTO hub_meta(key, value) VALUES ('created_at', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));",
        legacy_version: Some(1),
    },
    Migration {
        version: 2,
        name: "graph_rules_move_to_the_graph",
        sql: "DELETE FROM hub_meta WHERE key = 'graph_rules';",
        legacy_version: None,
    },
    Migration {
        version: 3,
        name: "request_receipts",
        // what a write sent with an Idempotency-Key answered, kept 24 hours
        sql: "CREATE TABLE request_receipts (
                  key         TEXT PRIMARY KEY,
                  fingerprint TEXT NOT NULL,
                  status      INTEGER,
                  headers     TEXT,
                  body        BLOB,
                  created_at  INTEGER NOT NULL
              ) WITHOUT ROWID;
              CREATE INDEX request_receipts_by_age ON request_receipts(created_at);",
        legacy_version: None,
    },
    Migration {
        version: 4,
        name: "hub_users",
        sql: USERS,
        legacy_version: None,
    },
    Migration {
        version: 5,
        name: "write_requests",
        // one b-tree: every write adds a row, and the hourly purge may scan
        sql: "CREATE TABLE write_requests (
                  request_id   TEXT PRIMARY KEY,
                  tool         TEXT NOT NULL,
                  committed_at INTEGER NOT NULL
              ) WITHOUT ROWID;",
        legacy_version: None,
    },
];

/// People known by their tokens (only a hash of each is kept); the same
/// table in a team database.
const USERS: &str = "CREATE TABLE hub_users (
    name       TEXT PRIMARY KEY,
    role       TEXT NOT NULL CHECK (role IN ('read', 'write', 'admin')),
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);";

/// What a team database keeps for every hub that shares it: the receipts of
/// requests sent with an `Idempotency-Key`, the request IDs of committed
/// writes, and the key that seals cursors (so a cursor one hub gave out
/// pages on another).
/// The hub's part of a team database, and what a copy moves of it (the
/// cursor key stays: each database seals its own cursors).
const TEAM: crate::tools::area::Team = crate::tools::area::Team {
    migrations: TEAM_MIGRATIONS,
    tables: &[
        crate::store::copy::SharedTable {
            name: "request_receipts",
            counter: false,
        },
        crate::store::copy::SharedTable {
            name: "hub_users",
            counter: false,
        },
        crate::store::copy::SharedTable {
            name: "write_requests",
            counter: false,
        },
    ],
    files: &[],
};

const TEAM_MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "request_receipts_and_keys",
        sql: "CREATE TABLE request_receipts (
              key         TEXT PRIMARY KEY,
              fingerprint TEXT NOT NULL,
              status      BIGINT,
              headers     TEXT,
              body        BYTEA,
              created_at  BIGINT NOT NULL
          );
          CREATE INDEX request_receipts_by_age ON request_receipts(created_at);
          CREATE TABLE hub_keys (
              name TEXT PRIMARY KEY,
              key  BYTEA NOT NULL
          );",
        legacy_version: None,
    },
    Migration {
        version: 2,
        name: "hub_users",
        sql: USERS,
        legacy_version: None,
    },
    Migration {
        version: 3,
        name: "write_requests",
        // the request ID of every shared write that committed, kept a day
        // (store::requests); the hourly purge may scan
        sql: "CREATE TABLE write_requests (
                  request_id   TEXT PRIMARY KEY,
                  tool         TEXT NOT NULL,
                  committed_at BIGINT NOT NULL
              );",
        legacy_version: None,
    },
    Migration {
        version: 4,
        name: "shared_files",
        // an area's settings file as the team shares it (store::shared_files)
        sql: "CREATE TABLE shared_files (
                  name       TEXT PRIMARY KEY,
                  text       TEXT NOT NULL,
                  updated_at TEXT NOT NULL
              );",
        legacy_version: None,
    },
];

/// Registers the core tools.
pub fn register(registry: &mut Registry) {
    registry
        .register::<HubHealth>()
        .register::<WriteReceiptTool>()
        .register::<ModuleList>()
        .register::<ModuleSet>();
}

/// The hub's standard registry: every area and its tools.
pub fn default_registry() -> Registry {
    Registry::of_areas(AREAS)
}

/// The hub with every area on the repository at `repo` (its state in
/// `repo/.cos`), for the unit tests that call tools end to end.
#[cfg(test)]
pub fn on_repo_for_tests(repo: &std::path::Path) -> crate::tools::Hub {
    crate::tools::Hub::open(
        crate::tools::HubConfig::for_repo(repo, None),
        default_registry(),
    )
    .expect("a hub on a temporary repository")
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok`, or `degraded` when a part of the hub cannot be read.
    pub status: String,
    /// cos-hub version.
    pub version: String,
    pub uptime_seconds: u64,
    pub repo_root: String,
    pub state_dir: String,
    /// Where the state a team shares (board, evidence, receipts, users)
    /// lives: `sqlite <file>`, or `postgres <user@host:port/database>`.
    pub shared_state: String,
    /// Schema version of each area's tables in the hub's database.
    pub schema_versions: std::collections::BTreeMap<String, i64>,
    pub modules: Vec<ModuleInfo>,
    /// What areas report of themselves, by area (search: its embedding
    /// model and how far it embedded).
    pub areas: std::collections::BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
    /// Problems found while answering (e.g. unreadable module state, a
    /// model folder that cannot be used).
    pub problems: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ModuleInfo {
    #[schema(schema_with = module_ids)]
    pub id: String,
    pub enabled: bool,
    pub description: String,
    /// Tools this module contributes.
    pub tools: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ModuleListing {
    pub modules: Vec<ModuleInfo>,
    /// The file the switches live in.
    pub state_file: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModuleSetInput {
    /// A module id, as `cos_module_list` lists them (`board`, `graph`, ...).
    pub module: String,
    pub enabled: bool,
}

fn module_info(context: &ToolContext, module: Module, enabled: bool) -> ModuleInfo {
    ModuleInfo {
        id: module.id().to_string(),
        enabled,
        description: module.description().to_string(),
        tools: context
            .registry
            .names_in(module)
            .into_iter()
            .map(String::from)
            .collect(),
    }
}

fn module_infos(context: &ToolContext) -> Result<Vec<ModuleInfo>, ModuleStateError> {
    let switches = context.hub.modules.switches()?;
    Ok(context
        .registry
        .modules()
        .into_iter()
        .map(|module| module_info(context, module, switches.is_on(module)))
        .collect())
}

pub struct HubHealth;

impl Tool for HubHealth {
    type Input = NoInput;
    type Output = Health;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_hub_health",
        module: MODULE,
        layer: "health",
        description: "Health of the hub: version, uptime, repository, state directory, schema version and which modules are on.",
        effect: crate::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    };

    fn run(context: &ToolContext, _input: NoInput) -> Result<Answer<Health>, ToolError> {
        let mut problems = Vec::new();
        let modules = module_infos(context).unwrap_or_else(|error| {
            problems.push(error.to_string());
            Vec::new()
        });
        let schema_versions = context.hub.store.schema_versions()?;
        if let Some(team) = context.hub.shared.team()
            && let Err(error) = team.check()
        {
            problems.push(format!("the team database does not answer: {error}"));
        }
        let mut areas = std::collections::BTreeMap::new();
        for area in context.registry.areas() {
            if let Some(check) = area.health {
                let health = check(context);
                problems.extend(health.problems);
                areas.insert(area.id.to_string(), health.report);
            }
        }
        Ok(Answer::from(Health {
            status: if problems.is_empty() {
                "ok"
            } else {
                "degraded"
            }
            .to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            uptime_seconds: context.hub.started.elapsed().as_secs(),
            repo_root: context.hub.config.repo_root.display().to_string(),
            state_dir: context.hub.config.state_dir.display().to_string(),
            shared_state: context.hub.shared.describe(),
            schema_versions,
            modules,
            areas,
            problems,
        }))
    }
}

pub struct ModuleList;

impl Tool for ModuleList {
    type Input = NoInput;
    type Output = ModuleListing;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_module_list",
        module: MODULE,
        layer: "settings",
        description: "Lists the hub's modules, whether each is enabled, and the tools each contributes.",
        effect: crate::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        // with cos_module_set: an agent meets a switched-off module in its refusal
        upkeep: true,
    };

    fn run(context: &ToolContext, _input: NoInput) -> Result<Answer<ModuleListing>, ToolError> {
        Ok(Answer::from(ModuleListing {
            modules: module_infos(context)?,
            state_file: context.hub.modules.path().display().to_string(),
        }))
    }
}

pub struct ModuleSet;

impl Tool for ModuleSet {
    type Input = ModuleSetInput;
    type Output = ModuleInfo;
    const SPEC: ToolSpec = ToolSpec {
        name: "cos_module_set",
        module: MODULE,
        layer: "settings",
        description: "Enables or disables a module. A disabled module's tools answer module_disabled on every front door.",
        effect: crate::tools::Effect::writes(false, true),
        list_hints: &[],
        agent_budget: None,
        upkeep: true,
    };

    fn run(context: &ToolContext, input: ModuleSetInput) -> Result<Answer<ModuleInfo>, ToolError> {
        let ids: Vec<&str> = context.registry.modules().iter().map(|m| m.id()).collect();
        let module = context.registry.module(&input.module).ok_or_else(|| {
            ToolError::invalid("module", format!("one of {}", ids.join(", "))).with_details(
                serde_json::json!({"field": "module", "allowed": ids, "got": input.module}),
            )
        })?;
        if !module.switchable() && !input.enabled {
            return Err(ToolError::invalid_pair(
                "enabled",
                "module",
                "true: the core module cannot be switched off",
            ));
        }
        context.hub.modules.set(module, input.enabled)?;
        Ok(Answer::from(module_info(context, module, input.enabled)))
    }
}
