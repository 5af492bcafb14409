//! What a tool is: its spec (name, module, layer, description, effect,
//! trim hints, budget), the `Tool` trait its typed input and output come
//! through, and the front door a call arrived by.

use super::*;

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
    /// Upkeep rather than everyday work (export, audit, index runs, module
    /// switches): left out of an MCP session's default tool list, one
    /// toolset flag away.
    pub upkeep: bool,
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

    /// The same spec for an upkeep tool, outside the default MCP tool list.
    pub const fn for_upkeep(self) -> ToolSpec {
        ToolSpec {
            upkeep: true,
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
