//! `$COS_STATE_DIR/board.toml`: swimlanes and WIP limits.
//!
//! ```toml
//! swimlanes = ["backend", "frontend", "docs", "infra"]
//! [wip]
//! in_progress_per_actor = 1
//! testing = 3
//! emergency = 2
//! ```
//! A limit of 0 is none.
//! A missing file means the defaults; a malformed one is an error naming the file.
//! With a team database the team's copy, kept there, is the one every hub
//! obeys (`cos board config`).

use serde::{Deserialize, Serialize};
use std::path::Path;
use utoipa::ToSchema;

use super::model::Status;
use crate::envelope::{Category, Code};
use crate::store::{Session, shared_files};
use crate::tools::ToolError;
use crate::tools::shared_settings::{self, SharedText};

pub const CONFIG_FILE: &str = "board.toml";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WipLimits {
    /// Tasks one actor may hold in progress at once. Here and for each
    /// column, 0 is no limit.
    #[serde(default = "default_in_progress")]
    pub in_progress_per_actor: u32,
    #[serde(default = "default_testing")]
    pub testing: u32,
    #[serde(default = "default_emergency")]
    pub emergency: u32,
}

fn default_in_progress() -> u32 {
    1
}
fn default_testing() -> u32 {
    3
}
fn default_emergency() -> u32 {
    2
}

impl Default for WipLimits {
    fn default() -> WipLimits {
        WipLimits {
            in_progress_per_actor: 1,
            testing: 3,
            emergency: 2,
        }
    }
}

impl WipLimits {
    /// The limit of tasks one actor may hold in progress, if there is one.
    pub fn per_actor_limit(&self) -> Option<u32> {
        Some(self.in_progress_per_actor).filter(|&limit| limit > 0)
    }

    /// The column-wide limit for `status`, if it has one (in_progress is per actor).
    pub fn column_limit(&self, status: Status) -> Option<u32> {
        match status {
            Status::Testing => Some(self.testing),
            Status::Emergency => Some(self.emergency),
            _ => None,
        }
        .filter(|&limit| limit > 0)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardConfig {
    #[serde(default = "default_swimlanes")]
    pub swimlanes: Vec<String>,
    #[serde(default)]
    pub wip: WipLimits,
}

fn default_swimlanes() -> Vec<String> {
    ["backend", "frontend", "docs", "infra"]
        .map(String::from)
        .to_vec()
}

impl Default for BoardConfig {
    fn default() -> BoardConfig {
        BoardConfig {
            swimlanes: default_swimlanes(),
            wip: WipLimits::default(),
        }
    }
}

impl BoardConfig {
    /// The configuration the board obeys, read in `tx`: the team's
    /// `board.toml` on a team database, else the state folder's; the
    /// defaults when there is none.
    pub fn load_in(tx: &Session, state_dir: &Path) -> Result<BoardConfig, ToolError> {
        match BoardConfig::text_in(tx, state_dir)? {
            Some(found) => BoardConfig::parse(&found.text, &found.origin),
            None => Ok(BoardConfig::default()),
        }
    }

    /// The `board.toml` the board obeys, as text, read in `tx`.
    pub fn text_in(tx: &Session, state_dir: &Path) -> Result<Option<SharedText>, ToolError> {
        shared_settings::shared_text(tx, state_dir, CONFIG_FILE)
    }

    /// What changes, beside the board's revision, whenever the
    /// configuration `load_in` reads may have.
    pub fn stamp_in(tx: &Session, state_dir: &Path) -> String {
        shared_settings::stamp(tx, state_dir, CONFIG_FILE)
    }

    /// Makes `text` the team's `board.toml` (on a team database), moving the
    /// board's revision so every hub's answers follow it.
    pub fn set_for_team(tx: &Session, text: &str) -> Result<(), ToolError> {
        BoardConfig::parse(text, CONFIG_FILE)?;
        shared_files::write(tx, CONFIG_FILE, text, &crate::tools::now())?;
        super::records::bump_revision(tx)?;
        Ok(())
    }

    /// The state folder's own `board.toml` (or the defaults).
    pub fn load(state_dir: &Path) -> Result<BoardConfig, ToolError> {
        let path = state_dir.join(CONFIG_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => BoardConfig::parse(&text, &path.display().to_string()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                Ok(BoardConfig::default())
            }
            Err(error) => Err(ToolError::io("board.toml", error)),
        }
    }

    /// `text` as a configuration; `origin` names it in the error.
    pub fn parse(text: &str, origin: &str) -> Result<BoardConfig, ToolError> {
        toml::from_str(text).map_err(|error| {
            ToolError::fail(
                Category::Unavailable,
                Code::E_CONFIG,
                format!(
                    "{origin} is not a valid board configuration: {}",
                    error.message()
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_partial_files() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            BoardConfig::load(dir.path()).unwrap(),
            BoardConfig::default()
        );
        std::fs::write(dir.path().join(CONFIG_FILE), "[wip]\ntesting = 5\n").unwrap();
        let config = BoardConfig::load(dir.path()).unwrap();
        assert_eq!(config.wip.testing, 5);
        assert_eq!(config.wip.emergency, 2);
        assert_eq!(config.swimlanes.len(), 4);
        std::fs::write(dir.path().join(CONFIG_FILE), "wip = 3").unwrap();
        let error = BoardConfig::load(dir.path()).unwrap_err();
        assert!(error.to_string().contains("board.toml"), "{error}");
    }

    #[test]
    fn a_limit_of_zero_is_none() {
        let config =
            BoardConfig::parse("[wip]\nin_progress_per_actor = 0\ntesting = 0\n", "t").unwrap();
        assert_eq!(config.wip.per_actor_limit(), None);
        assert_eq!(config.wip.column_limit(Status::Testing), None);
        assert_eq!(config.wip.column_limit(Status::Emergency), Some(2));
        assert_eq!(WipLimits::default().per_actor_limit(), Some(1));
    }
}
