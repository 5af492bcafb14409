//! `cos task ...`: the board from a shell, for people and scripts. Each
//! subcommand calls the same `cos_task_*` tool agents and browsers call and
//! prints what it answers for a person (aligned columns, colour only on a
//! terminal and never with `NO_COLOR`), or the tool's envelope with `--json`.
//! A refusal prints the contract's message in plain words and exits 1.

use std::io::IsTerminal;

use clap::{Args, Subcommand};
use serde_json::{Map, Value, json};

use super::{call, call_for_data, print_envelope, refusal};
use crate::envelope::Budget;
use crate::tools::Hub;

#[derive(Debug, Subcommand)]
pub enum TaskCommand {
    /// Tasks one a line (id, status, priority, kind, title), by status and position.
    List {
        #[command(flatten)]
        filters: Filters,
        /// Only tasks in this status (icebox, emergency, in_progress, testing, complete, blocked, archive).
        #[arg(long)]
        status: Option<String>,
        /// Tasks at most (1 to 500).
        #[arg(long, default_value_t = 100)]
        limit: u32,
        #[command(flatten)]
        output: Output,
    },
    /// One task: its fields, dependencies and description.
    Show {
        /// TASK-<n>
        id: String,
        #[command(flatten)]
        output: Output,
    },
    /// Create a task; prints it.
    Add {
        /// 1 to 200 characters.
        title: String,
        /// Markdown (`-` reads it from stdin).
        #[arg(long, default_value = "")]
        description: String,
        /// feature, bug, chore, spike, docs, refactor, test or security.
        #[arg(long, default_value = "feature")]
        kind: String,
        /// P0 (highest) to P3.
        #[arg(long, default_value = "P2")]
        priority: String,
        /// A label (repeat for more).
        #[arg(long = "label")]
        labels: Vec<String>,
        #[arg(long)]
        swimlane: Option<String>,
        #[arg(long)]
        epic: Option<String>,
        /// A task this one waits for (repeat for more).
        #[arg(long = "depends-on")]
        depends_on: Vec<String>,
        /// The starting status (default icebox).
        #[arg(long)]
        status: Option<String>,
        #[command(flatten)]
        actor: ActorArg,
        #[command(flatten)]
        output: Output,
    },
    /// Change a task's fields; refused when it changed since `--version`.
    Edit {
        /// TASK-<n>
        id: String,
        /// The version you read (default: the task's version now, read just before).
        #[arg(long)]
        version: Option<i64>,
        #[arg(long)]
        title: Option<String>,
        /// Markdown (`-` reads it from stdin).
        #[arg(long)]
        description: Option<String>,
        #[arg(long)]
        kind: Option<String>,
        #[arg(long)]
        priority: Option<String>,
        /// The labels, all of them (repeat; replaces the task's labels).
        #[arg(long = "label")]
        labels: Vec<String>,
        #[command(flatten)]
        actor: ActorArg,
        #[command(flatten)]
        output: Output,
    },
    /// Move a task to another status (WIP limits and dependencies apply).
    Move {
        /// TASK-<n>
        id: String,
        /// The status to move to.
        to: String,
        /// The status you expect it in (default: its status now, read just before).
        #[arg(long)]
        from: Option<String>,
        #[command(flatten)]
        actor: ActorArg,
        #[command(flatten)]
        output: Output,
    },
    /// Take the highest-priority ready task into progress for the actor, under a lease.
    Claim {
        #[command(flatten)]
        filters: Filters,
        /// How long the claim holds the task unless renewed (5 to 86400; default 900).
        #[arg(long, value_name = "SECONDS")]
        lease_seconds: Option<u32>,
        #[command(flatten)]
        actor: ActorArg,
        #[command(flatten)]
        output: Output,
    },
    /// Extend the actor's lease on a task it claimed.
    Renew {
        /// TASK-<n>
        id: String,
        /// The lease's new length from now (5 to 86400; default 900).
        #[arg(long, value_name = "SECONDS")]
        lease_seconds: Option<u32>,
        #[command(flatten)]
        actor: ActorArg,
        #[command(flatten)]
        output: Output,
    },
    /// Whether a board write committed, by the request ID a COMMIT_UNKNOWN
    /// named (or a script's X-Request-Id); waits for writes under way.
    Receipt {
        /// The request ID.
        request_id: String,
        #[command(flatten)]
        output: Output,
    },
    /// A task's changes, newest first: when, who, what.
    History {
        /// TASK-<n>
        id: String,
        /// Entries at most (1 to 1000).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[command(flatten)]
        output: Output,
    },
    /// Tasks whose title or description hold every word.
    Search {
        /// The words.
        text: String,
        #[arg(long)]
        status: Option<String>,
        #[command(flatten)]
        filters: Filters,
        /// Tasks at most (1 to 500).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[command(flatten)]
        output: Output,
    },
}

/// Filters the listing, search and claim take alike.
#[derive(Debug, Args)]
pub struct Filters {
    #[arg(long)]
    kind: Option<String>,
    #[arg(long)]
    priority: Option<String>,
    #[arg(long)]
    label: Option<String>,
    #[arg(long)]
    swimlane: Option<String>,
    #[arg(long)]
    epic: Option<String>,
}

#[derive(Debug, Args)]
pub struct ActorArg {
    /// Who acts, as `kind:id` (human:alice, agent:session-7); a bare name is a human.
    #[arg(long)]
    actor: Option<String>,
}

#[derive(Debug, Args)]
pub struct Output {
    /// Print the tool's envelope instead of lines for a person.
    #[arg(long)]
    json: bool,
}

/// Runs one `cos task` subcommand; returns the exit code.
pub fn run(command: TaskCommand, hub: &Hub) -> i32 {
    let (tool, arguments, json, shape) = match request(command, hub) {
        Ok(request) => request,
        Err(code) => return code,
    };
    let envelope = match call(hub, tool, arguments, Budget::None) {
        Ok(envelope) => envelope,
        Err(code) => return code,
    };
    if json {
        return print_envelope(&envelope);
    }
    if envelope["ok"] != Value::Bool(true) {
        eprintln!("cos task: {}", refusal(&envelope["error"]));
        return 1;
    }
    let painter = Painter::for_stdout();
    print!("{}", shape(&envelope["data"], &painter));
    0
}

/// What a line of output is made from.
type Shape = fn(&Value, &Painter) -> String;

/// What a subcommand asks of which tool.
fn request(command: TaskCommand, hub: &Hub) -> Result<Request, i32> {
    Ok(match command {
        TaskCommand::List {
            filters,
            status,
            limit,
            output,
        } => listing(filters, None, status, limit, &output),
        TaskCommand::Search {
            text,
            status,
            filters,
            limit,
            output,
        } => listing(filters, Some(text), status, limit, &output),
        TaskCommand::Show { id, output } => {
            let mut arguments = Map::new();
            arguments.insert("id".into(), json!(id));
            ask("cos_task_show", arguments, &output, task_text)
        }
        TaskCommand::Add {
            title,
            description,
            kind,
            priority,
            labels,
            swimlane,
            epic,
            depends_on,
            status,
            actor,
            output,
        } => {
            let mut arguments = Map::new();
            arguments.insert("title".into(), json!(title));
            arguments.insert("description".into(), json!(text_or_stdin(description)?));
            arguments.insert("kind".into(), json!(kind));
            arguments.insert("priority".into(), json!(priority));
            arguments.insert("labels".into(), json!(labels));
            arguments.insert("depends_on".into(), json!(depends_on));
            arguments.insert("references".into(), json!([]));
            put(&mut arguments, "swimlane", swimlane);
            put(&mut arguments, "epic", epic);
            put(&mut arguments, "status", status);
            actor.put(&mut arguments)?;
            ask("cos_task_create", arguments, &output, task_text)
        }
        TaskCommand::Edit {
            id,
            version,
            title,
            description,
            kind,
            priority,
            labels,
            actor,
            output,
        } => {
            let mut changes = Map::new();
            put(&mut changes, "title", title);
            put(
                &mut changes,
                "description",
                description.map(text_or_stdin).transpose()?,
            );
            put(&mut changes, "kind", kind);
            put(&mut changes, "priority", priority);
            if !labels.is_empty() {
                changes.insert("labels".into(), json!(labels));
            }
            let version = match version {
                Some(version) => version,
                None => current(hub, &id)?["version"].as_i64().unwrap_or(0),
            };
            let mut arguments = Map::new();
            arguments.insert("id".into(), json!(id));
            arguments.insert("version".into(), json!(version));
            arguments.insert("changes".into(), Value::Object(changes));
            actor.put(&mut arguments)?;
            ask("cos_task_edit", arguments, &output, task_text)
        }
        TaskCommand::Move {
            id,
            to,
            from,
            actor,
            output,
        } => {
            let from = match from {
                Some(from) => from,
                None => current(hub, &id)?["status"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            };
            let mut arguments = Map::new();
            arguments.insert("id".into(), json!(id));
            arguments.insert("from".into(), json!(from));
            arguments.insert("to".into(), json!(to));
            actor.put(&mut arguments)?;
            ask("cos_task_move", arguments, &output, task_text)
        }
        TaskCommand::Claim {
            filters,
            lease_seconds,
            actor,
            output,
        } => {
            let mut arguments = filters.arguments();
            if let Some(seconds) = lease_seconds {
                arguments.insert("lease_seconds".into(), json!(seconds));
            }
            actor.put(&mut arguments)?;
            ask("cos_task_claim_next", arguments, &output, claim_text)
        }
        TaskCommand::Renew {
            id,
            lease_seconds,
            actor,
            output,
        } => {
            let mut arguments = Map::new();
            arguments.insert("id".into(), json!(id));
            if let Some(seconds) = lease_seconds {
                arguments.insert("lease_seconds".into(), json!(seconds));
            }
            actor.put(&mut arguments)?;
            ask("cos_task_renew_lease", arguments, &output, task_text)
        }
        TaskCommand::Receipt { request_id, output } => ask(
            "cos_write_receipt",
            Map::from_iter([("request_id".to_string(), json!(request_id))]),
            &output,
            receipt_text,
        ),
        TaskCommand::History { id, limit, output } => {
            let mut arguments = Map::new();
            arguments.insert("id".into(), json!(id));
            arguments.insert("limit".into(), json!(limit));
            ask("cos_task_history", arguments, &output, history_lines)
        }
    })
}

/// A tool call of a subcommand: the tool, its arguments, whether to print
/// the envelope, and how to show its data.
type Request = (&'static str, Value, bool, Shape);

fn ask(
    tool: &'static str,
    arguments: Map<String, Value>,
    output: &Output,
    shape: Shape,
) -> Request {
    (tool, Value::Object(arguments), output.json, shape)
}

/// A search of the board's tasks: every task (by status and position) when
/// `text` is `None`.
fn listing(
    filters: Filters,
    text: Option<String>,
    status: Option<String>,
    limit: u32,
    output: &Output,
) -> Request {
    let mut arguments = filters.arguments();
    put(&mut arguments, "text", text);
    put(&mut arguments, "status", status);
    arguments.insert("limit".into(), json!(limit));
    ask("cos_task_search", arguments, output, card_lines)
}

impl Filters {
    fn arguments(self) -> Map<String, Value> {
        let mut arguments = Map::new();
        put(&mut arguments, "kind", self.kind);
        put(&mut arguments, "priority", self.priority);
        put(&mut arguments, "label", self.label);
        put(&mut arguments, "swimlane", self.swimlane);
        put(&mut arguments, "epic", self.epic);
        arguments
    }
}

impl ActorArg {
    /// Puts `actor` as the tools take it; a malformed one is refused here.
    fn put(self, arguments: &mut Map<String, Value>) -> Result<(), i32> {
        let Some(actor) = self.actor else {
            return Ok(());
        };
        let (kind, id) = actor.split_once(':').unwrap_or(("human", actor.as_str()));
        if !matches!(kind, "human" | "agent" | "system") || id.trim().is_empty() {
            eprintln!(
                "cos task: --actor: expected kind:id with kind human, agent or system (human:alice), not `{actor}`"
            );
            return Err(2);
        }
        arguments.insert("actor".into(), json!({"kind": kind, "id": id}));
        Ok(())
    }
}

fn put(arguments: &mut Map<String, Value>, key: &str, value: Option<String>) {
    if let Some(value) = value {
        arguments.insert(key.into(), json!(value));
    }
}

/// `text`, or stdin when it is `-`.
fn text_or_stdin(text: String) -> Result<String, i32> {
    if text != "-" {
        return Ok(text);
    }
    let mut read = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut read).map_err(|error| {
        eprintln!("cos task: reading the description from stdin: {error}");
        2
    })?;
    Ok(read)
}

/// The task as it is now, for a default `--version` or `--from`.
fn current(hub: &Hub, id: &str) -> Result<Value, i32> {
    call_for_data(hub, "cos_task_show", json!({"id": id}))
}

/// ANSI colour when stdout is a terminal and `NO_COLOR` is unset.
pub struct Painter {
    colour: bool,
}

impl Painter {
    fn for_stdout() -> Painter {
        Painter {
            colour: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    fn paint(&self, text: &str, code: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn status(&self, status: &str, width: usize) -> String {
        let code = match status {
            "emergency" => "31",
            "blocked" => "33",
            "in_progress" => "36",
            "testing" => "35",
            "complete" => "32",
            _ => "2",
        };
        self.paint(&format!("{status:<width$}"), code)
    }
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

/// One line a card, its columns aligned, then how many there are in all.
fn card_lines(data: &Value, painter: &Painter) -> String {
    let cards: Vec<&Value> = data["results"].as_array().into_iter().flatten().collect();
    let width = |key: &str| {
        cards
            .iter()
            .map(|c| text(&c[key]).chars().count())
            .max()
            .unwrap_or(0)
    };
    let (id_w, status_w, kind_w) = (width("id"), width("status"), width("kind"));
    let mut out = String::new();
    for card in &cards {
        out.push_str(&format!(
            "{:<id_w$}  {}  {}  {:<kind_w$}  {}{}\n",
            text(&card["id"]),
            painter.status(text(&card["status"]), status_w),
            text(&card["priority"]),
            text(&card["kind"]),
            text(&card["title"]),
            card["assignee"]
                .as_str()
                .map(|who| format!("  ({who})"))
                .unwrap_or_default(),
        ));
    }
    let total = data["total_count"].as_u64().unwrap_or(cards.len() as u64);
    out.push_str(&match (cards.len() as u64, total) {
        (0, _) => "no task matches\n".to_string(),
        (shown, total) if shown < total => {
            format!("{shown} of {total} tasks (--limit shows more)\n")
        }
        (shown, _) => format!("{shown} task{}\n", if shown == 1 { "" } else { "s" }),
    });
    out
}

/// A task's fields, then its description.
fn task_text(task: &Value, painter: &Painter) -> String {
    let list = |key: &str| {
        task[key]
            .as_array()
            .map(|items| items.iter().map(text).collect::<Vec<_>>().join(", "))
            .filter(|joined| !joined.is_empty())
    };
    let mut out = format!(
        "{}  {}\n",
        painter.paint(text(&task["id"]), "1"),
        painter.paint(text(&task["title"]), "1")
    );
    let mut field = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            out.push_str(&format!("  {name:<11} {value}\n"));
        }
    };
    let status = text(&task["status"]);
    field("status", Some(painter.status(status, status.len())));
    field("priority", task["priority"].as_str().map(str::to_string));
    field("kind", task["kind"].as_str().map(str::to_string));
    field("swimlane", task["swimlane"].as_str().map(str::to_string));
    field("epic", task["epic"].as_str().map(str::to_string));
    field("labels", list("labels"));
    field("assignee", task["assignee"].as_str().map(str::to_string));
    field(
        "lease",
        task["lease"]["holder"]
            .as_str()
            .map(|holder| format!("{holder} until {}", text(&task["lease"]["expires_at"]))),
    );
    field("depends on", list("depends_on"));
    field("appetite", task["appetite"].as_str().map(str::to_string));
    field("version", task["version"].as_i64().map(|v| v.to_string()));
    field("updated", task["updated_at"].as_str().map(str::to_string));
    let description = text(&task["description"]).trim_end();
    if !description.is_empty() {
        out.push('\n');
        out.push_str(description);
        out.push('\n');
    }
    out
}

fn claim_text(claim: &Value, painter: &Painter) -> String {
    match &claim["task"] {
        Value::Object(_) => format!("claimed {}", task_text(&claim["task"], painter)),
        _ => format!(
            "nothing claimed: {}\n",
            claim["reason"].as_str().unwrap_or("no task is ready")
        ),
    }
}

fn receipt_text(receipt: &Value, _: &Painter) -> String {
    match receipt["state"].as_str() {
        Some("committed") => format!(
            "{}: committed ({} at {})\n",
            text(&receipt["request_id"]),
            text(&receipt["tool"]),
            text(&receipt["committed_at"])
        ),
        _ => format!("{}: not committed\n", text(&receipt["request_id"])),
    }
}

/// One line a change: when, who, the field and its old and new values.
fn history_lines(history: &Value, _: &Painter) -> String {
    let shown = |value: &Value| match value {
        Value::Null => "-".to_string(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let mut out = String::new();
    for entry in history["history"].as_array().into_iter().flatten() {
        let change = match text(&entry["field"]) {
            "created" => "created".to_string(),
            field => format!(
                "{field}: {} -> {}",
                shown(&entry["old"]),
                shown(&entry["new"])
            ),
        };
        out.push_str(&format!(
            "{}  {:<20}  {}\n",
            text(&entry["at"]),
            text(&entry["actor"]),
            change
        ));
    }
    let total = history["total"].as_u64().unwrap_or(0);
    out.push_str(&format!(
        "{total} change{} in all\n",
        if total == 1 { "" } else { "s" }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Painter = Painter { colour: false };

    #[test]
    fn cards_line_up_and_say_how_many_there_are() {
        let data = json!({"results": [
            {"id": "TASK-1", "status": "icebox", "priority": "P2", "kind": "feature", "title": "One"},
            {"id": "TASK-12", "status": "in_progress", "priority": "P0", "kind": "bug", "title": "Two", "assignee": "human:ann"}
        ], "total_count": 3});
        assert_eq!(
            card_lines(&data, &PLAIN),
            "TASK-1   icebox       P2  feature  One\n\
             TASK-12  in_progress  P0  bug      Two  (human:ann)\n\
             2 of 3 tasks (--limit shows more)\n"
        );
        assert_eq!(
            card_lines(&json!({"results": [], "total_count": 0}), &PLAIN),
            "no task matches\n"
        );
    }

    #[test]
    fn colour_wraps_the_status_only_when_asked() {
        let painter = Painter { colour: true };
        assert_eq!(painter.status("blocked", 8), "\x1b[33mblocked \x1b[0m");
        assert_eq!(PLAIN.status("blocked", 8), "blocked ");
    }
}
