//! The settings files an area shares with a team (`Team::files`): read from
//! the team database when the hub shares one, else from the state folder,
//! inside the caller's transaction. On a team database whoever sets a file
//! bumps its area's revision in the same transaction, so an answer cached
//! by that revision follows the file too.

use std::path::Path;

use super::ToolError;
use crate::store::{Dialect, Session, shared_files};

/// A shared settings file's text as a hub obeys it.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedText {
    pub text: String,
    /// Where it came from, for messages: the file's path, or the team database.
    pub origin: String,
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
            text: file.text,
            origin: format!("{name} in the team database"),
        }));
    }
    let file = state_dir.join(name);
    match std::fs::read_to_string(&file) {
        Ok(text) => Ok(Some(SharedText {
            text,
            origin: file.display().to_string(),
        })),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(ToolError::io(name, error)),
    }
}

/// What changes whenever the file `name` may have, beside its area's
/// revision (for answer caches): the state folder's file by its time and
/// size; on a team database nothing, as the revision moves with it.
pub fn stamp(tx: &Session, state_dir: &Path, name: &str) -> String {
    if tx.dialect() == Dialect::Postgres {
        return "team".to_string();
    }
    match std::fs::metadata(state_dir.join(name)) {
        Ok(meta) => {
            let modified = meta
                .modified()
                .ok()
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |elapsed| elapsed.as_nanos());
            format!("{modified}:{}", meta.len())
        }
        Err(_) => "default".to_string(),
    }
}
