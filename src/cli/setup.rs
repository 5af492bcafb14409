//! `cos setup CLIENT`: an agent client's MCP configuration for this
//! repository, written into the project file that client reads (or printed
//! with `--dry-run`), merged with the entries already there and idempotent;
//! `--remove` takes it out again. Each file is replaced whole through a
//! temporary file, so an interrupted run leaves the old one.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// The name the hub's server has in every client's configuration.
const SERVER: &str = "cos-hub";

/// A client whose MCP configuration `cos setup` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code: `.mcp.json` at the repository root.
    ClaudeCode,
    /// Codex: `.codex/config.toml` (read in trusted projects).
    Codex,
    /// Cursor: `.cursor/mcp.json`.
    Cursor,
    /// VS Code (Copilot agent mode): `.vscode/mcp.json`.
    Vscode,
}

#[derive(Debug, clap::Args)]
pub struct SetupArgs {
    /// The client to set up.
    client: Client,
    /// Print what would change, and the file as it would be, without writing.
    #[arg(long)]
    dry_run: bool,
    /// Take the hub's entry out again (other entries stay).
    #[arg(long)]
    remove: bool,
}

impl Client {
    fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "Claude Code",
            Client::Codex => "Codex",
            Client::Cursor => "Cursor",
            Client::Vscode => "VS Code",
        }
    }

    /// The project file the client reads, relative to the repository.
    fn file(self) -> &'static str {
        match self {
            Client::ClaudeCode => ".mcp.json",
            Client::Codex => ".codex/config.toml",
            Client::Cursor => ".cursor/mcp.json",
            Client::Vscode => ".vscode/mcp.json",
        }
    }

    /// The table the servers are listed under.
    fn servers_key(self) -> &'static str {
        match self {
            Client::Vscode => "servers",
            Client::Codex => "mcp_servers",
            _ => "mcpServers",
        }
    }

    /// The hub's entry. Files committed with the repository name it
    /// relatively: the clients start servers in the repository, and the
    /// editors expand `${workspaceFolder}` (Codex expands nothing).
    fn entry(self) -> Value {
        match self {
            Client::ClaudeCode | Client::Codex => json!({"command": "cos", "args": ["mcp", "."]}),
            Client::Cursor => json!({"command": "cos", "args": ["mcp", "${workspaceFolder}"]}),
            Client::Vscode => {
                json!({"type": "stdio", "command": "cos", "args": ["mcp", "${workspaceFolder}"]})
            }
        }
    }
}

/// What a run did to the hub's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Added,
    Updated,
    Unchanged,
    Removed,
    Absent,
}

/// Runs `cos setup`; `repo` is the repository (`--repo`, else the current
/// directory). Returns the exit code.
pub fn run(args: SetupArgs, repo: Option<PathBuf>) -> i32 {
    let repo = repo.unwrap_or_else(|| PathBuf::from("."));
    if !repo.is_dir() {
        eprintln!("cos setup: --repo {} is not a folder", repo.display());
        return 2;
    }
    let path = repo.join(args.client.file());
    match plan(args.client, &path, args.remove) {
        Ok((change, text)) => report(&args, &path, change, text.as_deref()),
        Err(message) => {
            eprintln!("cos setup: {message}; nothing was written");
            1
        }
    }
}

/// What `text` becomes, as the file's new text (`None`: the file goes).
fn plan(client: Client, path: &Path, remove: bool) -> Result<(Change, Option<String>), String> {
    let old = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(format!("{} could not be read: {error}", path.display())),
    };
    let edited = match client {
        Client::Codex => edit_toml(old.as_deref(), client, remove),
        _ => edit_json(old.as_deref(), client, remove),
    };
    edited.map_err(|expected| format!("{} {expected}", path.display()))
}

fn report(args: &SetupArgs, path: &Path, change: Change, text: Option<&str>) -> i32 {
    let (client, shown) = (args.client.name(), path.display());
    let (add, update, remove, nothing) = if args.dry_run {
        (
            "would add",
            "would update",
            "would remove",
            "nothing would change",
        )
    } else {
        ("added", "updated", "removed", "nothing changed")
    };
    let said = match change {
        Change::Added => format!("{add} the {SERVER} server to {shown} for {client}"),
        Change::Updated => format!("{update} the {SERVER} server in {shown} for {client}"),
        Change::Unchanged => {
            format!("{shown} already has the {SERVER} server for {client}: {nothing}")
        }
        Change::Removed => format!("{remove} the {SERVER} server from {shown}"),
        Change::Absent => format!("{shown} has no {SERVER} server: {nothing}"),
    };
    let changes = !matches!(change, Change::Unchanged | Change::Absent);
    if args.dry_run {
        println!("{said} (--dry-run: nothing written)");
        if changes {
            match text {
                Some(text) => print!("{text}"),
                None => println!("(the file would be deleted: nothing else is in it)"),
            }
        }
        return 0;
    }
    if changes && let Err(error) = write(path, text) {
        eprintln!(
            "cos setup: {} could not be written: {error}; it is as it was",
            path.display()
        );
        return 1;
    }
    println!("{said}");
    if changes && !args.remove && !on_path("cos") {
        println!(
            "note: `cos` is not on the PATH, so {client} cannot start it yet: `cargo install --locked --path .` in the cos-hub checkout puts it there"
        );
    }
    0
}

/// Writes `text` to `path` through a temporary file beside it, or removes
/// the file when `text` is `None`.
fn write(path: &Path, text: Option<&str>) -> std::io::Result<()> {
    let Some(text) = text else {
        return std::fs::remove_file(path);
    };
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let temporary = path.with_extension("cos-setup.tmp");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)
}

/// Whether an executable named `program` is on the PATH.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|folder| folder.join(program).is_file())
    })
}

/// A JSON file with the hub's entry added, replaced or removed; an `Err`
/// says what the file should have been.
fn edit_json(
    old: Option<&str>,
    client: Client,
    remove: bool,
) -> Result<(Change, Option<String>), String> {
    let mut root = match old {
        None => Map::new(),
        Some(text) if text.trim().is_empty() => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(root)) => root,
            Ok(_) => return Err("should hold a JSON object at its top".to_string()),
            Err(error) => {
                return Err(format!(
                    "is not plain JSON ({error}); comments are kept by no JSON writer, so add the entry by hand: \"{SERVER}\": {}",
                    client.entry()
                ));
            }
        },
    };
    let key = client.servers_key();
    let servers = match root.get_mut(key) {
        None => None,
        Some(Value::Object(servers)) => Some(servers),
        Some(_) => return Err(format!("should hold an object under \"{key}\"")),
    };
    let wanted = client.entry();
    let change = match (servers, remove) {
        (Some(servers), true) => match servers.remove(SERVER) {
            Some(_) => Change::Removed,
            None => Change::Absent,
        },
        (None, true) => Change::Absent,
        (Some(servers), false) => match servers.insert(SERVER.to_string(), wanted.clone()) {
            None => Change::Added,
            Some(previous) if previous == wanted => Change::Unchanged,
            Some(_) => Change::Updated,
        },
        (None, false) => {
            root.insert(key.to_string(), json!({ SERVER: wanted }));
            Change::Added
        }
    };
    if change == Change::Removed
        && root
            .get(key)
            .is_some_and(|s| s.as_object().is_some_and(Map::is_empty))
    {
        root.remove(key);
    }
    if root.is_empty() {
        return Ok((change, None));
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(root)).unwrap_or_default();
    text.push('\n');
    Ok((change, Some(text)))
}

/// A TOML file with the hub's `[mcp_servers.cos-hub]` table added, replaced
/// or removed, its comments and the rest of its layout kept.
fn edit_toml(
    old: Option<&str>,
    client: Client,
    remove: bool,
) -> Result<(Change, Option<String>), String> {
    use toml_edit::{Array, DocumentMut, Item, Table, value};
    let mut document: DocumentMut = old
        .unwrap_or("")
        .parse()
        .map_err(|error| format!("is not valid TOML ({error})"))?;
    let key = client.servers_key();
    let wanted = client.entry();
    let mut table = Table::new();
    table.insert(
        "command",
        value(wanted["command"].as_str().unwrap_or("cos")),
    );
    let mut args = Array::new();
    for arg in wanted["args"].as_array().into_iter().flatten() {
        args.push(arg.as_str().unwrap_or_default());
    }
    table.insert("args", value(args));
    if document.get(key).is_none() {
        if remove {
            return Ok((Change::Absent, old.map(str::to_string)));
        }
        let mut servers = Table::new();
        servers.set_implicit(true);
        document.insert(key, Item::Table(servers));
    }
    let Some(servers) = document.get_mut(key).and_then(Item::as_table_mut) else {
        return Err(format!("should hold a table under [{key}]"));
    };
    let change = if remove {
        match servers.remove(SERVER) {
            Some(_) => Change::Removed,
            None => Change::Absent,
        }
    } else {
        let same = servers
            .get(SERVER)
            .and_then(Item::as_table)
            .is_some_and(|current| {
                current.get("command").and_then(Item::as_str) == Some("cos")
                    && current
                        .get("args")
                        .and_then(Item::as_array)
                        .is_some_and(|have| {
                            have.iter().map(|a| a.as_str()).eq(wanted["args"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .map(Value::as_str))
                        })
            });
        if same {
            Change::Unchanged
        } else {
            match servers.insert(SERVER, Item::Table(table)) {
                None => Change::Added,
                Some(_) => Change::Updated,
            }
        }
    };
    if change == Change::Removed && servers.is_empty() {
        document.remove(key);
    }
    let text = document.to_string();
    Ok((change, (!text.trim().is_empty()).then_some(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_entries_of_others_stay_and_a_second_run_changes_nothing() {
        let old = r#"{"mcpServers": {"other": {"command": "x"}}, "keep": 1}"#;
        let (change, text) = edit_json(Some(old), Client::ClaudeCode, false).unwrap();
        assert_eq!(change, Change::Added);
        let text = text.unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["mcpServers"]["other"]["command"], "x");
        assert_eq!(value["mcpServers"]["cos-hub"]["args"], json!(["mcp", "."]));
        assert_eq!(value["keep"], 1);
        let (again, same) = edit_json(Some(&text), Client::ClaudeCode, false).unwrap();
        assert_eq!(
            (again, same.as_deref()),
            (Change::Unchanged, Some(text.as_str()))
        );
        let (removed, left) = edit_json(Some(&text), Client::ClaudeCode, true).unwrap();
        assert_eq!(removed, Change::Removed);
        let left: Value = serde_json::from_str(&left.unwrap()).unwrap();
        assert_eq!(left, serde_json::from_str::<Value>(old).unwrap());
    }

    #[test]
    fn a_file_holding_only_the_hub_goes_when_it_is_removed() {
        let (_, text) = edit_json(None, Client::Vscode, false).unwrap();
        let text = text.unwrap();
        assert!(text.contains("\"servers\""), "{text}");
        assert!(text.contains("${workspaceFolder}"), "{text}");
        assert_eq!(
            edit_json(Some(&text), Client::Vscode, true).unwrap(),
            (Change::Removed, None)
        );
    }

    #[test]
    fn json_that_is_not_an_object_or_not_json_is_refused_naming_why() {
        let refusal = edit_json(Some("[1]"), Client::Cursor, false).unwrap_err();
        assert!(refusal.contains("JSON object"), "{refusal}");
        let refusal = edit_json(Some("{\"mcpServers\": 3}"), Client::Cursor, false).unwrap_err();
        assert!(refusal.contains("\"mcpServers\""), "{refusal}");
        let refusal = edit_json(Some("{ // a comment\n}"), Client::Cursor, false).unwrap_err();
        assert!(refusal.contains("by hand"), "{refusal}");
    }

    #[test]
    fn toml_keeps_comments_and_other_servers() {
        let old = "# my settings\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\" # mine\n";
        let (change, text) = edit_toml(Some(old), Client::Codex, false).unwrap();
        assert_eq!(change, Change::Added);
        let text = text.unwrap();
        assert!(
            text.starts_with("# my settings\nmodel = \"o3\"\n"),
            "{text}"
        );
        assert!(text.contains("command = \"x\" # mine"), "{text}");
        assert!(text.contains("[mcp_servers.cos-hub]"), "{text}");
        assert!(text.contains("args = [\"mcp\", \".\"]"), "{text}");
        assert_eq!(
            edit_toml(Some(&text), Client::Codex, false).unwrap(),
            (Change::Unchanged, Some(text.clone()))
        );
        let (removed, left) = edit_toml(Some(&text), Client::Codex, true).unwrap();
        assert_eq!(removed, Change::Removed);
        assert_eq!(left.unwrap(), old);
    }

    #[test]
    fn toml_that_does_not_parse_is_refused() {
        let refusal = edit_toml(Some("[mcp_servers\n"), Client::Codex, false).unwrap_err();
        assert!(refusal.contains("not valid TOML"), "{refusal}");
        let refusal = edit_toml(Some("mcp_servers = 3\n"), Client::Codex, false).unwrap_err();
        assert!(refusal.contains("[mcp_servers]"), "{refusal}");
    }
}
