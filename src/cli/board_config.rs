//! `cos board config`: the board's swimlanes and WIP limits as this hub
//! obeys them, and `--set FILE` to change them: in the state folder's
//! `board.toml`, or, with a team database, in the team's copy every hub
//! obeys.

use std::path::Path;

use crate::board::config::{BoardConfig, CONFIG_FILE};
use crate::tools::Hub;

pub(super) fn run(set: Option<&Path>, hub: &Hub) -> i32 {
    match set {
        Some(file) => set_from(file, hub),
        None => show(hub),
    }
}

fn show(hub: &Hub) -> i32 {
    let state = hub.state();
    let state_dir = &state.config.state_dir;
    let found = state.shared.view(|tx| BoardConfig::text_in(tx, state_dir));
    match found {
        Ok(Some(found)) => {
            eprintln!("# {}", found.origin);
            print!("{}", found.text);
        }
        Ok(None) => {
            eprintln!("# no {CONFIG_FILE} is set: the defaults hold");
            match toml::to_string(&BoardConfig::default()) {
                Ok(text) => print!("{text}"),
                Err(error) => {
                    eprintln!("cos board config: {error}");
                    return 1;
                }
            }
        }
        Err(error) => {
            eprintln!("cos board config: {error}");
            return 1;
        }
    }
    if state.shared.team().is_some() && state_dir.join(CONFIG_FILE).exists() {
        eprintln!(
            "# {} is not used while the hub shares a team database",
            state_dir.join(CONFIG_FILE).display()
        );
    }
    0
}

fn set_from(file: &Path, hub: &Hub) -> i32 {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("cos board config: {}: {error}", file.display());
            return 2;
        }
    };
    if let Err(error) = BoardConfig::parse(&text, &file.display().to_string()) {
        eprintln!("cos board config: {error}");
        return 2;
    }
    let state = hub.state();
    let written = match state.shared.team() {
        Some(_) => state
            .shared
            .write_unrecorded(|tx| BoardConfig::set_for_team(tx, &text))
            .map_err(|error| error.to_string()),
        None => write_file(&state.config.state_dir.join(CONFIG_FILE), &text),
    };
    match written {
        Ok(()) => {
            eprintln!("set {CONFIG_FILE} in {}", state.shared.describe());
            0
        }
        Err(error) => {
            eprintln!("cos board config: {error}");
            1
        }
    }
}

/// Writes `text` to `path` whole: a reader sees the old file or the new one.
fn write_file(path: &Path, text: &str) -> Result<(), String> {
    let temporary = path.with_extension("toml.tmp");
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|error| format!("{}: {error}", path.display()))
}
