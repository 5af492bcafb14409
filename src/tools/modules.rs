//! Which of the hub's modules are switched on in this project.
//!
//! The state lives in `$COS_STATE_DIR/subsystems-state.json` so that the CLI, a
//! running server and an MCP process all see the same switch. The file is small
//! and re-read only when its modification time or size changes.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

pub const STATE_FILE: &str = "subsystems-state.json";

/// A part of the hub that can be switched off as a whole: each area declares
/// its own (`Area::module`), and its tools name it in their spec. The runtime
/// learns the modules from the registry's areas and names none itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Module {
    id: &'static str,
    description: &'static str,
    /// False for the hub's own module, which cannot be switched off.
    switchable: bool,
}

impl Module {
    /// A module that can be switched off.
    pub const fn new(id: &'static str, description: &'static str) -> Module {
        Module {
            id,
            description,
            switchable: true,
        }
    }

    /// A module that is always on.
    pub const fn always_on(id: &'static str, description: &'static str) -> Module {
        Module {
            id,
            description,
            switchable: false,
        }
    }

    pub fn id(self) -> &'static str {
        self.id
    }

    pub fn description(self) -> &'static str {
        self.description
    }

    pub fn switchable(self) -> bool {
        self.switchable
    }
}

impl Serialize for Module {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ModuleStateError {
    #[error("reading {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} is not valid module state ({source}); fix it or delete it to enable every module"
    )]
    Corrupt {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("writing {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What every front door answers when the switchboard cannot be read or written.
impl From<ModuleStateError> for super::ToolError {
    fn from(error: ModuleStateError) -> super::ToolError {
        super::ToolError::fail(
            crate::envelope::Category::Unavailable,
            crate::envelope::Code::E_MODULE_STATE,
            error.to_string(),
        )
    }
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct StateFile {
    #[serde(default)]
    modules: BTreeMap<String, bool>,
}

/// The on/off switches, shared by every front door of one hub.
pub struct ModuleState {
    path: PathBuf,
    cache: Mutex<Option<Cached>>,
}

struct Cached {
    stamp: Option<(SystemTime, u64)>,
    /// Shared with every caller that read it: most calls only look.
    state: Arc<StateFile>,
}

/// The switches as one read of the switchboard found them.
#[derive(Debug, Clone)]
pub struct Switches(Arc<StateFile>);

impl Switches {
    /// Whether `module` is on: unless switched off (the core module cannot be).
    pub fn is_on(&self, module: Module) -> bool {
        switched_on(&self.0, module)
    }
}

/// A module's switch in a read of the switchboard: on unless switched off
/// (the core module cannot be).
fn switched_on(state: &StateFile, module: Module) -> bool {
    !module.switchable() || state.modules.get(module.id()).copied().unwrap_or(true)
}

impl ModuleState {
    pub fn new(state_dir: &Path) -> ModuleState {
        ModuleState {
            path: state_dir.join(STATE_FILE),
            cache: Mutex::new(None),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every switch, from one read of the switchboard.
    pub fn switches(&self) -> Result<Switches, ModuleStateError> {
        Ok(Switches(self.load()?))
    }

    /// Switches a module; written atomically (temporary file, then rename).
    pub fn set(&self, module: Module, enabled: bool) -> Result<(), ModuleStateError> {
        let mut state = StateFile::clone(self.load()?.as_ref());
        state.modules.insert(module.id().to_string(), enabled);
        let write_error = |source| ModuleStateError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(write_error)?;
        }
        let text =
            serde_json::to_vec_pretty(&state).map_err(|e| write_error(std::io::Error::other(e)))?;
        let temporary = self
            .path
            .with_extension(format!("json.{}.tmp", std::process::id()));
        std::fs::write(&temporary, text).map_err(write_error)?;
        std::fs::rename(&temporary, &self.path).map_err(write_error)?;
        if let Ok(mut cache) = self.cache.lock() {
            *cache = None;
        }
        Ok(())
    }

    fn load(&self) -> Result<Arc<StateFile>, ModuleStateError> {
        let stamp = std::fs::metadata(&self.path).ok().map(|meta| {
            (
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                meta.len(),
            )
        });
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(cached) = cache.as_ref()
            && cached.stamp == stamp
        {
            return Ok(cached.state.clone());
        }
        let state = Arc::new(match stamp {
            None => StateFile::default(),
            Some(_) => {
                let text = std::fs::read(&self.path).map_err(|source| ModuleStateError::Read {
                    path: self.path.clone(),
                    source,
                })?;
                serde_json::from_slice(&text).map_err(|source| ModuleStateError::Corrupt {
                    path: self.path.clone(),
                    source,
                })?
            }
        });
        *cache = Some(Cached {
            stamp,
            state: state.clone(),
        });
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORE: Module = Module::always_on("core", "the hub");
    const NOTES: Module = Module::new("notes", "notes");
    const TAGS: Module = Module::new("tags", "tags");

    #[test]
    fn switches_persist_across_handles_and_an_always_on_module_stays_on() {
        let dir = tempfile::tempdir().unwrap();
        let first = ModuleState::new(dir.path());
        assert!(first.switches().unwrap().is_on(NOTES));
        first.set(NOTES, false).unwrap();
        let second = ModuleState::new(dir.path()).switches().unwrap();
        assert!(!second.is_on(NOTES));
        assert!(second.is_on(TAGS));
        let third = ModuleState::new(dir.path());
        third.set(CORE, false).unwrap();
        assert!(third.switches().unwrap().is_on(CORE));
    }

    #[test]
    fn a_corrupt_file_is_reported_not_ignored() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(STATE_FILE), "{not json").unwrap();
        let state = ModuleState::new(dir.path());
        let error = state.switches().unwrap_err();
        assert!(error.to_string().contains("delete it"), "{error}");
    }
}
