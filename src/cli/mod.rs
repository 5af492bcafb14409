//! The `cos` command line. Every subcommand that acts on the hub goes through
//! the tool runtime, so the shell sees the same answers agents and browsers do.

mod docs;
mod search;

use crate::envelope::{self, Budget, Code, ErrorBody};
use crate::tools::{Hub, HubConfig, Source};
use crate::{hub, web};
use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};
use std::io::Read;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "cos",
    version,
    about = "cos-hub: a local work hub for software projects: a task board, a knowledge graph of the code, Markdown documents with safe concurrent edits, and one search over them all"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    hub: HubArgs,
}

/// Which hub a command acts on; accepted before or after any subcommand.
#[derive(Debug, Args, Clone)]
struct HubArgs {
    /// Repository the hub serves (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// Where the hub keeps its state (default: <repo>/.cos).
    #[arg(long, env = "COS_STATE_DIR", global = true, value_name = "DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
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
    /// Serve every tool over MCP on stdin/stdout (for Claude Code, Codex and other agents).
    Mcp {
        /// Repository to serve (the same as --repo; default: the current directory).
        path: Option<PathBuf>,
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
    /// Export the board to Markdown files, or import them.
    Board {
        #[command(subcommand)]
        command: BoardCommand,
    },
    /// Search code symbols, code text, documents and tasks in one ranked list.
    Search(search::SearchArgs),
    /// Read, edit and audit the documents in the mounts.
    Docs {
        #[command(subcommand)]
        command: docs::DocsCommand,
    },
    /// List or call the hub's tools from the shell.
    Tool {
        #[command(subcommand)]
        command: ToolCommand,
    },
}

#[derive(Debug, Subcommand)]
enum EnvelopeCommand {
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
enum ModuleCommand {
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
enum BoardCommand {
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
}

#[derive(Debug, Subcommand)]
enum ToolCommand {
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

/// Runs the command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let hub = cli.hub;
    match cli.command {
        Command::Serve {
            path,
            port,
            bind,
            allowed_hosts,
            allowed_origins,
            token_file,
            max_connections,
            mcp_sessions,
            mcp_idle_seconds,
        } => {
            let address = SocketAddr::new(bind, port);
            let access = match access_rules(address, allowed_hosts, allowed_origins, token_file) {
                Ok(access) => access,
                Err(message) => {
                    eprintln!("cos: {message}");
                    return 2;
                }
            };
            let open_files = web::connections::raise_open_file_limit();
            let options = web::ServeOptions {
                access,
                max_connections: max_connections.map_or_else(
                    || web::connections::default_ceiling(open_files),
                    |n| n as usize,
                ),
                mcp_sessions: crate::mcp::sessions::SessionLimits {
                    max_sessions: mcp_sessions as usize,
                    idle: std::time::Duration::from_secs(mcp_idle_seconds),
                },
                ..web::ServeOptions::default()
            };
            with_hub(&hub, path, |opened| serve(opened, address, options))
        }
        Command::Mcp { path } => with_hub(&hub, path, mcp),
        Command::Index { path } => with_hub(&hub, path, index),
        Command::Openapi => {
            print!("{}", web::spec::openapi_json());
            0
        }
        Command::Envelope {
            command: EnvelopeCommand::Wrap { budget, layer },
        } => wrap(budget, layer.as_deref()),
        Command::Module { command } => with_hub(&hub, None, |opened| module(command, &opened)),
        Command::Board { command } => with_hub(&hub, None, |opened| board(command, &opened)),
        Command::Tool { command } => with_hub(&hub, None, |opened| tool(command, &opened)),
        Command::Docs { command } => with_hub(&hub, None, |opened| docs::run(command, &opened)),
        Command::Search(args) => with_hub(&hub, None, |opened| search::run(args, &opened)),
    }
}

/// Opens the hub `args` (or a positional repository) names and runs `command` on it.
fn with_hub(args: &HubArgs, positional: Option<PathBuf>, command: impl FnOnce(Hub) -> i32) -> i32 {
    let same = |a: &PathBuf, b: &PathBuf| {
        a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
    };
    let repo = match (positional, args.repo.clone()) {
        (Some(path), Some(repo)) if !same(&path, &repo) => {
            eprintln!(
                "cos: two repositories given ({} and --repo {}); give one",
                path.display(),
                repo.display()
            );
            return 2;
        }
        (Some(path), _) => Some(path),
        (None, repo) => repo,
    };
    match open_hub(repo, args.state_dir.clone()) {
        Ok(hub) => command(hub),
        Err(code) => code,
    }
}

/// The runtime for serving many clients at once (`cos serve`).
fn runtime() -> Result<tokio::runtime::Runtime, i32> {
    built(tokio::runtime::Builder::new_multi_thread())
}

/// The runtime for one client (`cos mcp`, a CLI call): its async work is
/// relaying lines, done on one thread, while tools run on the blocking pool
/// as everywhere. A second worker only stole the relay's tasks from the
/// first, a wake across cores each time.
fn single_client_runtime() -> Result<tokio::runtime::Runtime, i32> {
    built(tokio::runtime::Builder::new_current_thread())
}

fn built(mut builder: tokio::runtime::Builder) -> Result<tokio::runtime::Runtime, i32> {
    builder.enable_all().build().map_err(|error| {
        eprintln!("cos: could not start the async runtime: {error}");
        1
    })
}

fn open_hub(repo: Option<PathBuf>, state_dir: Option<PathBuf>) -> Result<Hub, i32> {
    let repo = match repo {
        Some(path) => path,
        None => std::env::current_dir().map_err(|error| {
            eprintln!("cos: cannot read the current directory: {error}");
            2
        })?,
    };
    let repo = repo.canonicalize().map_err(|error| {
        eprintln!("cos: repository {}: {error}", repo.display());
        2
    })?;
    Hub::open(
        HubConfig::for_repo(&repo, state_dir),
        hub::default_registry(),
    )
    .map_err(|error| {
        eprintln!("cos: {error}");
        1
    })
}

/// The access rules for `serve`: a token from COS_HUB_TOKEN or a file, and
/// never a non-loopback listener without one.
fn access_rules(
    address: SocketAddr,
    mut allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    token_file: Option<PathBuf>,
) -> Result<web::access::Access, String> {
    let token = match token_file {
        Some(path) => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("reading the token file {}: {e}", path.display()))?;
            Some(text.trim().to_string())
        }
        None => std::env::var("COS_HUB_TOKEN")
            .ok()
            .map(|t| t.trim().to_string()),
    };
    if token.as_deref() == Some("") {
        return Err(
            "the token is empty: put a long random string in COS_HUB_TOKEN or the token file"
                .into(),
        );
    }
    if let Some(token) = &token
        && token.len() < 16
    {
        return Err(format!(
            "the token is {} characters long; use at least 16",
            token.len()
        ));
    }
    if !address.ip().is_loopback() {
        if token.is_none() {
            return Err(format!(
                "refusing to listen on {address} without a token: anyone who can reach it could drive the hub. \
                 Set COS_HUB_TOKEN or pass --token-file FILE (requests then need `Authorization: Bearer <token>`), \
                 or bind 127.0.0.1"
            ));
        }
        if !address.ip().is_unspecified() {
            allowed_hosts.push(address.ip().to_string());
        }
    }
    Ok(web::access::Access {
        allowed_hosts,
        allowed_origins,
        token,
    })
}

/// Draws an index run's progress on a terminal.
struct Bar(indicatif::ProgressBar);

impl crate::tools::Progress for Bar {
    fn total(&self, total: u64) {
        self.0.set_length(total);
    }

    fn advance(&self) {
        self.0.inc(1);
    }
}

/// `cos index`: the index tool through the runtime, like every other caller,
/// with a progress bar when stderr is a terminal.
fn index(hub: Hub) -> i32 {
    match index_with_progress(&hub) {
        Ok(summary) => {
            print_index_summary(&summary);
            0
        }
        Err(error) => {
            eprintln!("cos: indexing failed: {}", error.message);
            1
        }
    }
}

/// Brings the graph up to date (only new and changed files are parsed),
/// with a progress bar on stderr when it is a terminal.
fn index_with_progress(
    hub: &Hub,
) -> Result<crate::graph::index::IndexSummary, crate::envelope::ErrorBody> {
    use std::io::IsTerminal;
    let bar = if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(0)
    } else {
        indicatif::ProgressBar::hidden()
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} {bar:40} {pos}/{len} files {elapsed_precise}",
    ) {
        bar.set_style(style);
    }
    let bar = Bar(bar);
    let result = hub.call_here::<crate::graph::tools::GraphIndex>(
        crate::graph::tools::IndexInput::default(),
        Source::Cli,
        &bar,
    );
    bar.0.finish_and_clear();
    result.map(|answer| answer.data)
}

/// Before a one-shot command reads the code: a shell has no watcher, so the
/// graph is brought up to date first, as `cos serve` keeps it. Says on
/// stderr what it parsed; with the graph module off it does nothing.
fn refresh_code(hub: &Hub) {
    match index_with_progress(hub) {
        Ok(summary) if summary.parsed + summary.removed > 0 => eprintln!(
            "cos: indexed the code first ({} parsed, {} removed, {} ms)",
            counted(summary.parsed, "new or changed file"),
            summary.removed,
            summary.milliseconds
        ),
        Ok(_) => {}
        Err(error) if error.code == crate::envelope::Code::E_MODULE_DISABLED => {}
        Err(error) => eprintln!(
            "cos: the code could not be indexed first ({}); searching what the index holds",
            error.message
        ),
    }
}

/// `1 file`, `2 files`: a count with its noun agreeing.
fn counted(count: impl Into<u64>, noun: &str) -> String {
    let count = count.into();
    format!("{count} {noun}{}", if count == 1 { "" } else { "s" })
}

/// `left out: a.min.js (minified), b.js (binary) and 3 more`
fn left_out_line(summary: &crate::graph::index::IndexSummary) -> String {
    const SHOWN: usize = 5;
    let named: Vec<String> = summary
        .left_out
        .iter()
        .take(SHOWN)
        .map(|file| format!("{} ({})", file.path, file.why))
        .collect();
    let more = summary.skipped.saturating_sub(named.len() as u64);
    let mut line = format!("left out: {}", named.join(", "));
    if more > 0 {
        line.push_str(&format!(" and {more} more"));
    }
    line
}

fn print_index_summary(summary: &crate::graph::index::IndexSummary) {
    println!(
        "indexed {} in {} ms: {} parsed, {} unchanged, {} removed, {} skipped, {} with parse errors",
        counted(summary.files, "file"),
        summary.milliseconds,
        summary.parsed,
        summary.unchanged,
        summary.removed,
        summary.skipped,
        summary.files_with_parse_errors
    );
    if !summary.left_out.is_empty() {
        println!("{}", left_out_line(summary));
    }
    let list = |counts: &std::collections::BTreeMap<String, u64>| {
        counts
            .iter()
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "nodes: {} ({})",
        summary.nodes_by_kind.values().sum::<u64>(),
        list(&summary.nodes_by_kind)
    );
    println!(
        "edges: {} ({})",
        summary.edges_by_kind.values().sum::<u64>(),
        list(&summary.edges_by_kind)
    );
}

fn mcp(hub: Hub) -> i32 {
    let runtime = match single_client_runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    // an agent's session over stdio sees saved files as `cos serve` does
    let _following = follow_the_repository(&hub);
    // a line over stdio may be as long as a body over HTTP
    match runtime.block_on(crate::mcp::serve_stdio(hub, crate::web::BODY_LIMIT_BYTES)) {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("cos: MCP over stdio stopped: {error}");
            1
        }
    }
}

/// While a hub serves (over HTTP or an agent's stdio), the graph follows
/// saved files, documents edited outside the hub become revisions, and the
/// search index takes in what they and every other write of this process
/// changed once writes quieten. All stop when the returned followers are
/// dropped.
fn follow_the_repository(
    hub: &Hub,
) -> (
    Option<crate::graph::watch::Watcher>,
    Option<crate::docs::watch::Watcher>,
    Option<crate::search::follow::Follower>,
) {
    (
        crate::graph::watch::start(hub.clone()),
        crate::docs::watch::start(hub.clone()),
        crate::search::follow::start(hub.clone()),
    )
}

fn serve(hub: Hub, address: SocketAddr, options: web::ServeOptions) -> i32 {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(address).await {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("cos: cannot listen on {address}: {error}");
                return 1;
            }
        };
        let local = listener.local_addr().unwrap_or(address);
        tracing::info!(
            repo = %hub.state().config.repo_root.display(),
            state_dir = %hub.state().config.state_dir.display(),
            "cos-hub serving on http://{local} (Swagger UI at /docs)"
        );
        note(format_args!(
            "cos-hub serving {} on http://{local}",
            hub.state().config.repo_root.display()
        ));
        note(format_args!(
            "access: {}; at most {} connections at once",
            options.access, options.max_connections
        ));
        let _following = follow_the_repository(&hub);
        match web::serve_with(listener, hub, options, shutdown_signal()).await {
            Ok(()) => 0,
            Err(error) => {
                note(format_args!("cos: server stopped: {error}"));
                1
            }
        }
    })
}

/// A line on stderr for whoever watches a running server; a closed stderr
/// (`cos serve 2>&1 | head -1`) must not stop the server, as `eprintln!` would.
fn note(line: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}

fn wrap(budget: Budget, layer: Option<&str>) -> i32 {
    let mut input = String::new();
    if let Err(error) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("cos: reading stdin: {error}");
        return 2;
    }
    let envelope = match serde_json::from_str::<Value>(&input) {
        Ok(Value::Object(data)) => envelope::ok(data, layer, budget),
        Ok(_) => envelope::fail(&argument_error(
            "stdin",
            "a JSON object (the envelope puts meta inside it)",
        )),
        Err(error) => envelope::fail(&argument_error("stdin", &format!("valid JSON ({error})"))),
    };
    print_envelope(&envelope)
}

fn argument_error(field: &str, expected: &str) -> ErrorBody {
    ErrorBody::new(
        envelope::Category::Validation,
        Code::E_ARGUMENT,
        format!("{field}: expected {expected}"),
    )
    .with_details(json!({"field": field, "expected": expected}))
}

/// Prints an envelope as pretty JSON; 0 for success, 1 for an error envelope.
pub(crate) fn print_envelope(envelope: &Value) -> i32 {
    println!(
        "{}",
        serde_json::to_string_pretty(envelope).unwrap_or_default()
    );
    if envelope["ok"] == Value::Bool(true) {
        0
    } else {
        1
    }
}

pub(crate) fn call(hub: &Hub, name: &str, arguments: Value, budget: Budget) -> Result<Value, i32> {
    let runtime = single_client_runtime()?;
    Ok(runtime.block_on(hub.call_json(name, arguments, budget, Source::Cli)))
}

/// Calls a tool unbudgeted for a human-readable command: its `data`, or exit 1
/// after printing the error's message.
pub(crate) fn call_for_data(hub: &Hub, name: &str, arguments: Value) -> Result<Value, i32> {
    let mut envelope = call(hub, name, arguments, Budget::None)?;
    if envelope["ok"] != Value::Bool(true) {
        eprintln!(
            "cos: {}",
            envelope["error"]["message"].as_str().unwrap_or("failed")
        );
        return Err(1);
    }
    Ok(envelope["data"].take())
}

fn module(command: ModuleCommand, hub: &Hub) -> i32 {
    let (tool, arguments) = match &command {
        ModuleCommand::List => ("cos_module_list", json!({})),
        ModuleCommand::Enable { id } => ("cos_module_set", json!({"module": id, "enabled": true})),
        ModuleCommand::Disable { id } => {
            ("cos_module_set", json!({"module": id, "enabled": false}))
        }
    };
    let data = match call_for_data(hub, tool, arguments) {
        Ok(data) => data,
        Err(code) => return code,
    };
    let data = &data;
    let rows: Vec<&Value> = match command {
        ModuleCommand::List => data["modules"]
            .as_array()
            .map(|m| m.iter().collect())
            .unwrap_or_default(),
        _ => vec![data],
    };
    for row in rows {
        println!(
            "{:<8} {:<9} {}",
            row["id"].as_str().unwrap_or("?"),
            if row["enabled"] == Value::Bool(true) {
                "enabled"
            } else {
                "disabled"
            },
            row["description"].as_str().unwrap_or("")
        );
    }
    0
}

fn board(command: BoardCommand, hub: &Hub) -> i32 {
    let (tool, dir) = match &command {
        BoardCommand::Export { dir } => ("cos_board_export", dir),
        BoardCommand::Import { dir } => ("cos_board_import", dir),
    };
    // The shell resolves relative folders from where it stands, as people expect.
    let dir = std::env::current_dir()
        .map(|cwd| cwd.join(dir))
        .unwrap_or_else(|_| dir.clone());
    let data = match call_for_data(hub, tool, json!({"dir": dir.display().to_string()})) {
        Ok(data) => data,
        Err(code) => return code,
    };
    let data = &data;
    let count = |key: &str| data[key].as_array().map_or(0, Vec::len);
    match command {
        BoardCommand::Export { .. } => {
            println!(
                "exported to {}: {} written, {} unchanged, {} stale files removed",
                data["dir"].as_str().unwrap_or(""),
                data["written"],
                data["unchanged"],
                count("removed")
            );
        }
        BoardCommand::Import { .. } => {
            println!(
                "imported: {} created, {} updated, {} unchanged, {} refused, {} warnings",
                count("created"),
                count("updated"),
                data["unchanged"],
                count("refused"),
                count("warnings")
            );
            if count("swimlanes_added") > 0 {
                println!("swimlanes added: {}", data["swimlanes_added"]);
            }
            for (label, key) in [("refused", "refused"), ("warning", "warnings")] {
                for entry in data[key].as_array().into_iter().flatten() {
                    println!(
                        "{label}: {}: {}",
                        entry["file"].as_str().unwrap_or(""),
                        entry["reason"].as_str().unwrap_or("")
                    );
                }
            }
        }
    }
    0
}

fn tool(command: ToolCommand, hub: &Hub) -> i32 {
    match command {
        ToolCommand::List => {
            for tool in hub.registry().iter() {
                println!(
                    "{:<24} {:<7} {}",
                    tool.spec.name,
                    tool.spec.module.id(),
                    tool.spec.description
                );
            }
            0
        }
        ToolCommand::Call { name, args, budget } => {
            let arguments = match serde_json::from_str::<Value>(&args) {
                Ok(value) => value,
                Err(error) => {
                    return print_envelope(&envelope::fail(&argument_error(
                        "--args",
                        &format!("a JSON object ({error})"),
                    )));
                }
            };
            match call(hub, &name, arguments, budget) {
                Ok(envelope) => print_envelope(&envelope),
                Err(code) => code,
            }
        }
    }
}
