//! The command line's words: the commands, their arguments and their help,
//! as clap parses them.

use super::*;

#[derive(Debug, Parser)]
#[command(
    name = "cos",
    version,
    about = "cos-hub: a local work hub for software projects: a task board, a knowledge graph of the code, Markdown documents with safe concurrent edits, and one search over them all"
)]
pub struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
    #[command(flatten)]
    pub(super) hub: HubArgs,
}

/// Which hub a command acts on; accepted before or after any subcommand.
#[derive(Debug, Args, Clone)]
pub(super) struct HubArgs {
    /// Repository the hub serves (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub(super) repo: Option<PathBuf>,
    /// Where the hub keeps its state (default: <repo>/.cos).
    #[arg(long, env = "COS_STATE_DIR", global = true, value_name = "DIR")]
    pub(super) state_dir: Option<PathBuf>,
    /// A team database shared by many hubs (postgres://user:password@host:port/db): the board
    /// lives there (default: [database] url in <state-dir>/config.toml, else the hub's own SQLite).
    #[arg(
        long,
        env = "COS_DATABASE_URL",
        global = true,
        value_name = "URL",
        hide_env_values = true
    )]
    pub(super) database: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(super) enum Command {
    /// Serve the hub over HTTP: REST under /api, Swagger UI at /docs.
    Serve {
        /// Repository to serve (the same as --repo; default: the current directory).
        path: Option<PathBuf>,
        /// TCP port to listen on (0: any free port, printed at start).
        #[arg(long, default_value_t = 9188)]
        port: u16,
        /// Address to listen on; anything but loopback also needs --token-file (or COS_HUB_TOKEN).
        #[arg(long, default_value = "127.0.0.1")]
        bind: IpAddr,
        /// Also answer requests for this Host (name or name:port); loopback names always work.
        #[arg(long = "allow-host", value_name = "HOST")]
        allowed_hosts: Vec<String>,
        /// Also accept browser requests from this origin (scheme://host[:port]).
        #[arg(long = "allow-origin", value_name = "ORIGIN")]
        allowed_origins: Vec<String>,
        /// File holding the bearer token every /api and /mcp request must send (or set COS_HUB_TOKEN).
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// Connections open at once at most (default: half the open-file limit, which serve raises to its maximum).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        max_connections: Option<u32>,
        /// MCP sessions at /mcp at most; the one idle longest makes room (default 256).
        #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
        mcp_sessions: u32,
        /// Seconds an MCP session may sit idle before it ends (default 600).
        #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
        mcp_idle_seconds: u64,
    },
    /// Serve the tools over MCP on stdin/stdout (for Claude Code, Codex and other agents).
    Mcp {
        /// Repository to serve (the same as --repo; default: the current directory).
        path: Option<PathBuf>,
        /// Only these toolsets (comma-separated: board, graph, docs, search, evidence, core, all); default: every everyday tool.
        #[arg(long, value_name = "LIST")]
        toolsets: Option<String>,
        /// Also these tools by name (comma-separated); alone, only these.
        #[arg(long, value_name = "LIST")]
        tools: Option<String>,
        /// Leave out every tool that writes.
        #[arg(long)]
        read_only: bool,
    },
    /// Index the repository's code and docs into the knowledge graph (only changed files are parsed again).
    Index {
        /// Repository to index (the same as --repo; default: the current directory).
        path: Option<PathBuf>,
    },
    /// Print the OpenAPI 3.1 spec (what openapi/openapi.json holds).
    Openapi,
    /// Preview what an agent receives for a payload.
    Envelope {
        #[command(subcommand)]
        command: EnvelopeCommand,
    },
    /// List, enable or disable the hub's modules.
    Module {
        #[command(subcommand)]
        command: ModuleCommand,
    },
    /// The board's tasks: list, show, add, edit, move, claim, renew, history, search.
    Task {
        #[command(subcommand)]
        command: task::TaskCommand,
    },
    /// The people the hub knows by their tokens: add (prints a token once), list, remove.
    User {
        #[command(subcommand)]
        command: user::UserCommand,
    },
    /// Move the shared state (board, evidence, receipts, users) to a team database or back.
    Database {
        #[command(subcommand)]
        command: database::DatabaseCommand,
    },
    /// Export the board to Markdown files, import them, or show and set its configuration.
    Board {
        #[command(subcommand)]
        command: BoardCommand,
    },
    /// Search code symbols, code text, documents and tasks in one ranked list.
    Search(search::SearchArgs),
    /// What the working tree's change affects: definitions, dependents, tests, tasks, documents.
    Changes(changes::ChangesArgs),
    /// Read, edit and audit the documents in the mounts.
    Docs {
        #[command(subcommand)]
        command: docs::DocsCommand,
    },
    /// Write an agent client's MCP configuration for this repository (Claude Code, Codex, Cursor, VS Code).
    Setup(setup::SetupArgs),
    /// List or call the hub's tools from the shell.
    Tool {
        #[command(subcommand)]
        command: ToolCommand,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum EnvelopeCommand {
    /// Read a JSON object on stdin and print the envelope an agent would receive.
    Wrap {
        /// agent, graph, none, or a number of characters.
        #[arg(long, default_value = "agent")]
        budget: Budget,
        /// Layer to report in meta.layer.
        #[arg(long)]
        layer: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum ModuleCommand {
    /// Show every module and whether it is on.
    List,
    /// Switch a module on.
    Enable {
        /// The module, as `cos module list` names it (board, graph, docs, supervise, search).
        id: String,
    },
    /// Switch a module off: its tools answer module_disabled everywhere.
    Disable {
        /// The module, as `cos module list` names it (core cannot be switched off).
        id: String,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum BoardCommand {
    /// Write one Markdown file per task into DIR (a board that can live in git).
    Export {
        /// Folder to write the task files into (made if missing).
        #[arg(long)]
        dir: PathBuf,
    },
    /// Read TASK-<n>-*.md files from DIR (ours or coding-os's) into the board; safe to repeat.
    Import {
        /// Folder holding the task files (e.g. docs/tasks).
        #[arg(long)]
        dir: PathBuf,
    },
    /// Print the swimlanes and WIP limits the board obeys, or set them from a file.
    Config {
        /// A board.toml to use from now on: the state folder's, or with a
        /// team database the one every hub obeys.
        #[arg(long, value_name = "FILE")]
        set: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum ToolCommand {
    /// Names and descriptions of every tool.
    List,
    /// Call a tool and print its envelope; exits 1 when the envelope is an error.
    Call {
        /// The tool's name, as `cos tool list` prints it (e.g. cos_task_board).
        name: String,
        /// The tool's arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        /// agent, graph, none, or a number of characters.
        #[arg(long, default_value = "agent")]
        budget: Budget,
    },
}

impl Cli {
    /// True for commands that talk over sockets for a long time (`serve`).
    pub fn serves_sockets(&self) -> bool {
        matches!(self.command, Command::Serve { .. })
    }

    /// True for the commands that run until stopped (`serve`, `mcp`): their
    /// log tells an operator what the hub does. A one-shot command's own
    /// output says that; its log shows warnings only, unless RUST_LOG asks.
    pub fn keeps_running(&self) -> bool {
        matches!(self.command, Command::Serve { .. } | Command::Mcp { .. })
    }
}
