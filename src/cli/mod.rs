//! The `cos` command line. Every subcommand that acts on the hub goes through
//! the tool runtime, so the shell sees the same answers agents and browsers do.
//!
//! Here: running a parsed command (`run`) and the one-shot commands; beside
//! it `args.rs` (the commands as clap parses them), `serve.rs` (`cos serve`,
//! `cos mcp`), `index.rs` (`cos index`), `docs.rs` (`cos docs`),
//! `search.rs` (`cos search`), `task.rs` (`cos task`) and `setup.rs`
//! (`cos setup`).

mod args;
mod board_config;
mod changes;
mod database;
mod docs;
mod index;
mod search;
mod serve;
mod setup;
mod task;
mod user;

use crate::envelope::{self, Budget, Code, ErrorBody};
use crate::tools::{Hub, HubConfig, Source};
use crate::{hub, web};
use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};
use std::io::Read;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

pub use args::Cli;
use args::*;
use index::*;
use serve::*;

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
            // the HTTP door names its callers request by request
            with_hub_as(&hub, path, false, |opened| serve(opened, address, options))
        }
        Command::Mcp {
            path,
            toolsets,
            tools,
            read_only,
        } => with_hub(&hub, path, |opened| {
            let filter = crate::mcp::ToolFilter::parse(
                toolsets.as_deref(),
                tools.as_deref(),
                read_only,
                opened.registry(),
                ("--toolsets", "--tools"),
            );
            match filter {
                Ok(filter) => mcp(opened, filter),
                Err(message) => {
                    eprintln!("cos mcp: {message}");
                    2
                }
            }
        }),
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
        Command::Changes(args) => with_hub(&hub, None, |opened| changes::run(args, &opened)),
        Command::Setup(args) => setup::run(args, hub.repo.clone()),
        Command::Task { command } => with_hub(&hub, None, |opened| task::run(command, &opened)),
        Command::User { command } => with_hub(&hub, None, |opened| user::run(command, &opened)),
        Command::Database { command } => {
            with_hub(&hub, None, |opened| database::run(command, &opened))
        }
    }
}

/// Opens the hub `args` (or a positional repository) names and runs `command`
/// on it, acting as the configured user.
fn with_hub(args: &HubArgs, positional: Option<PathBuf>, command: impl FnOnce(Hub) -> i32) -> i32 {
    with_hub_as(args, positional, true, command)
}

/// [`with_hub`], acting as the configured user only when `acting` says so.
fn with_hub_as(
    args: &HubArgs,
    positional: Option<PathBuf>,
    acting: bool,
    command: impl FnOnce(Hub) -> i32,
) -> i32 {
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
    let hub = match open_hub(repo, args.state_dir.clone(), args.database.clone()) {
        Ok(hub) => hub,
        Err(code) => return code,
    };
    if !acting {
        return command(hub);
    }
    match user::configured_user(&hub) {
        Ok(acting) => command(hub.acting_as(acting)),
        Err(message) => {
            eprintln!("cos: {message}");
            2
        }
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

fn open_hub(
    repo: Option<PathBuf>,
    state_dir: Option<PathBuf>,
    database: Option<String>,
) -> Result<Hub, i32> {
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
        HubConfig::for_repo(&repo, state_dir).with_database(database),
        hub::default_registry(),
    )
    .map_err(|error| {
        eprintln!("cos: {error}");
        1
    })
}

/// `1 file`, `2 files`: a count with its noun agreeing.
fn counted(count: impl Into<u64>, noun: &str) -> String {
    let count = count.into();
    format!("{count} {noun}{}", if count == 1 { "" } else { "s" })
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
        eprintln!("cos: {}", refusal(&envelope["error"]));
        return Err(1);
    }
    Ok(envelope["data"].take())
}

/// A refusal in plain words: the message, and its code when it does not say it.
fn refusal(error: &Value) -> String {
    let message = error["message"].as_str().unwrap_or("the hub refused");
    match error["code"].as_str() {
        Some(code) if !message.contains(code) => format!("{message} ({code})"),
        _ => message.to_string(),
    }
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
        BoardCommand::Config { set } => return board_config::run(set.as_deref(), hub),
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
        BoardCommand::Config { .. } => {}
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_its_code_once() {
        let error = json!({"message": "TASK-9 changed since version 2", "code": "STALE_VERSION"});
        assert_eq!(
            refusal(&error),
            "TASK-9 changed since version 2 (STALE_VERSION)"
        );
        let error = json!({"message": "WIP_LIMIT: in_progress holds 1", "code": "WIP_LIMIT"});
        assert_eq!(refusal(&error), "WIP_LIMIT: in_progress holds 1");
    }
}
