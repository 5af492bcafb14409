//! `$COS_STATE_DIR/docs.toml`: the mounts, named folders whose Markdown files
//! are documents.
//!
//! ```toml
//! [[mounts]]
//! key = "handbook"          # the exact key tools take; [a-z0-9_-]{1,64}
//! path = "handbook"         # relative to the repository, or absolute
//! name = "Team handbook"    # display name only
//! agents = "read_only"      # or "read_write" (default)
//! people = "read_write"     # or "read_only"
//! ```
//! With no file: `docs` (`<repo>/docs`) and `repo` (the repository's Markdown
//! as git sees it, read-only to agents). A malformed file is an error naming
//! the file and the fault, never a silent default.

use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::{Path, PathBuf};
use utoipa::ToSchema;

use crate::envelope::{Category, Code};
use crate::tools::{Source, ToolError};

pub const CONFIG_FILE: &str = "docs.toml";

/// Who may write through a mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    ReadWrite,
    ReadOnly,
}

fn read_write() -> Access {
    Access::ReadWrite
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct MountEntry {
    key: String,
    path: PathBuf,
    name: Option<String>,
    #[serde(default = "read_write")]
    agents: Access,
    #[serde(default = "read_write")]
    people: Access,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MountsFile {
    #[serde(default)]
    mounts: Vec<MountEntry>,
}

/// A mount as the tools use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub key: String,
    pub name: String,
    /// The folder, absolute.
    pub root: PathBuf,
    pub agents: Access,
    pub people: Access,
    /// Paths below the mount that are never documents (`.git`, the hub's state
    /// dir when it lies inside), as relative paths.
    pub excluded: Vec<PathBuf>,
}

impl Mount {
    fn new(
        key: &str,
        name: &str,
        root: PathBuf,
        agents: Access,
        people: Access,
        state_dir: &Path,
    ) -> Mount {
        let mut excluded = vec![PathBuf::from(".git")];
        if let Ok(inside) = state_dir.strip_prefix(&root) {
            excluded.push(inside.to_path_buf());
        }
        Mount {
            key: key.to_string(),
            name: name.to_string(),
            root,
            agents,
            people,
            excluded,
        }
    }

    /// A read-write mount `docs` over `root`, for tests.
    #[cfg(test)]
    pub(crate) fn for_tests(root: &Path) -> Mount {
        Mount {
            key: "docs".into(),
            name: "Docs".into(),
            root: root.to_path_buf(),
            agents: Access::ReadWrite,
            people: Access::ReadWrite,
            excluded: vec![PathBuf::from(".git")],
        }
    }

    /// Whether a caller coming through `source` may write here.
    pub fn check_writable(&self, source: Source) -> Result<(), ToolError> {
        let (access, message) = match source {
            Source::Mcp => (self.agents, "This mounted folder is read-only to agents"),
            Source::Rest | Source::Cli => {
                (self.people, "This mounted folder is read-only to people")
            }
            Source::Watcher => (Access::ReadWrite, ""),
        };
        if access == Access::ReadOnly {
            return Err(
                ToolError::fail(Category::Permission, Code::E_READ_ONLY, message)
                    .with_details(json!({"field": "mount", "mount": self.key})),
            );
        }
        Ok(())
    }
}

/// Every mount of the project.
#[derive(Debug, Clone)]
pub struct Mounts {
    pub mounts: Vec<Mount>,
}

impl Mounts {
    pub fn load(repo_root: &Path, state_dir: &Path) -> Result<Mounts, ToolError> {
        let path = state_dir.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Mounts::defaults(repo_root, state_dir));
            }
            Err(error) => return Err(ToolError::config(&path, &error.to_string())),
        };
        let file: MountsFile =
            toml::from_str(&text).map_err(|error| ToolError::config(&path, &error.to_string()))?;
        let mut mounts: Vec<Mount> = Vec::with_capacity(file.mounts.len());
        for entry in file.mounts {
            if !valid_key(&entry.key) {
                return Err(ToolError::config(
                    &path,
                    &format!(
                        "mount key {:?}: expected 1 to 64 of a-z, 0-9, _ and -",
                        entry.key
                    ),
                ));
            }
            if mounts.iter().any(|mount| mount.key == entry.key) {
                return Err(ToolError::config(
                    &path,
                    &format!("mount key {:?} is declared twice", entry.key),
                ));
            }
            let root = if entry.path.is_absolute() {
                entry.path.clone()
            } else {
                repo_root.join(&entry.path)
            };
            let name = entry.name.clone().unwrap_or_else(|| entry.key.clone());
            mounts.push(Mount::new(
                &entry.key,
                &name,
                root,
                entry.agents,
                entry.people,
                state_dir,
            ));
        }
        Ok(Mounts { mounts })
    }

    fn defaults(repo_root: &Path, state_dir: &Path) -> Mounts {
        Mounts {
            mounts: vec![
                Mount::new(
                    "docs",
                    "Documentation",
                    repo_root.join("docs"),
                    Access::ReadWrite,
                    Access::ReadWrite,
                    state_dir,
                ),
                Mount::new(
                    "repo",
                    "Repository Markdown",
                    repo_root.to_path_buf(),
                    Access::ReadOnly,
                    Access::ReadWrite,
                    state_dir,
                ),
            ],
        }
    }

    /// The mount with exactly this key. A display name given in its place, or
    /// an unknown key, is `E_PATH` listing the keys.
    pub fn get(&self, key: &str) -> Result<&Mount, ToolError> {
        if let Some(mount) = self.mounts.iter().find(|mount| mount.key == key) {
            return Ok(mount);
        }
        let keys: Vec<&str> = self.mounts.iter().map(|mount| mount.key.as_str()).collect();
        let by_name = self
            .mounts
            .iter()
            .find(|mount| mount.name.eq_ignore_ascii_case(key.trim()));
        let message = match by_name {
            Some(mount) => format!(
                "mount: {key:?} is the display name of mount {:?}; pass the exact mount key, never its display name",
                mount.key
            ),
            None => format!(
                "mount: no mount has the key {key:?}; use the exact mount key from cos_docs_mounts (one of {})",
                keys.join(", ")
            ),
        };
        Err(ToolError::fail(Category::Validation, Code::E_PATH, message)
            .with_details(json!({"field": "mount", "mounts": keys})))
    }
}

fn valid_key(key: &str) -> bool {
    (1..=64).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_file_gives_the_docs_and_repo_mounts() {
        let repo = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let state = repo.path().join(".cos");
        let mounts = Mounts::load(repo.path(), &state).unwrap_or_else(|e| panic!("{e}"));
        let keys: Vec<&str> = mounts.mounts.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["docs", "repo"]);
        let repo_mount = &mounts.mounts[1];
        assert_eq!(repo_mount.agents, Access::ReadOnly);
        assert!(repo_mount.excluded.contains(&PathBuf::from(".cos")));
        assert!(repo_mount.check_writable(Source::Mcp).is_err());
        assert!(repo_mount.check_writable(Source::Rest).is_ok());
    }

    #[test]
    fn a_display_name_is_refused_in_place_of_the_key() {
        let repo = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let state = repo.path().join(".cos");
        std::fs::create_dir_all(&state).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            state.join(CONFIG_FILE),
            "[[mounts]]\nkey = \"handbook\"\npath = \"hb\"\nname = \"Team handbook\"\nagents = \"read_only\"\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mounts = Mounts::load(repo.path(), &state).unwrap_or_else(|e| panic!("{e}"));
        assert!(mounts.get("handbook").is_ok());
        let refused = mounts.get("Team handbook").err().map(|e| e.to_string());
        assert!(
            refused
                .as_deref()
                .is_some_and(|m| m.contains("display name")),
            "{refused:?}"
        );
    }

    #[test]
    fn a_bad_key_or_a_malformed_file_names_the_file() {
        let repo = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let state = repo.path().join(".cos");
        std::fs::create_dir_all(&state).unwrap_or_else(|e| panic!("{e}"));
        for text in [
            "[[mounts]]\nkey = \"Hand Book\"\npath = \"x\"\n",
            "[[mounts]]\nkey = \"a\"\npath = \"x\"\n[[mounts]]\nkey = \"a\"\npath = \"y\"\n",
            "mounts = 3",
        ] {
            std::fs::write(state.join(CONFIG_FILE), text).unwrap_or_else(|e| panic!("{e}"));
            let error = Mounts::load(repo.path(), &state)
                .err()
                .map(|e| e.to_string());
            assert!(
                error.as_deref().is_some_and(|m| m.contains("docs.toml")),
                "{text}: {error:?}"
            );
        }
    }
}
