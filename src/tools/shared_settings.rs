//! The settings files an area shares with a team (`Team::files`: the
//! board's `board.toml`): read from the team database when the hub shares
//! one, else from the state folder, inside the caller's transaction.

use std::path::Path;

use super::ToolError;
use crate::store::{Dialect, Session, shared_files};

/// A shared settings file's text as a hub obeys it.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedText {
    pub text: String,
    /// Where it came from, for messages: the file's path, or the team database.
    pub origin: String,
    /// Changes whenever the text may have (for answer caches).
    pub stamp: String,
}

/// The settings file `name` as the hub obeys it, read in `tx`: the team's
/// copy when `tx` is on a team database, else `state_dir/name`; `None`
/// when there is none (the area's defaults hold).
pub fn shared_text(
    tx: &Session,
    state_dir: &Path,
    name: &str,
) -> Result<Option<SharedText>, ToolError> {
    if tx.dialect() == Dialect::Postgres {
        let found = shared_files::read(tx, name)?;
        return Ok(found.map(|file| SharedText {
            stamp: format!("team:{}", blake3::hash(file.text.as_bytes()).to_hex()),
            text: file.text,
            origin: format!("{name} in the team database"),
        }));
    }
    let file = state_dir.join(name);
    let stamp = match std::fs::metadata(&file) {
        Ok(meta) => {
            let modified = meta
                .modified()
                .ok()
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |elapsed| elapsed.as_nanos());
            format!("{modified}:{}", meta.len())
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(ToolError::io(name, error)),
    };
    match std::fs::read_to_string(&file) {
        Ok(text) => Ok(Some(SharedText {
            text,
            origin: file.display().to_string(),
            stamp,
        })),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(ToolError::io(name, error)),
    }
}
