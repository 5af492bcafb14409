//! Settings files a team shares. An area's file in the state folder (the
//! board's `board.toml`) holds for one hub; with a team database its text is
//! kept there instead (`shared_files`), so every hub on the database obeys
//! the same one. These read and write that text inside a caller's
//! transaction, so a rule checked under the write lock sees the settings of
//! the same moment.

use super::{Session, StoreError};

/// A shared file's text and when it was last set (RFC 3339).
#[derive(Debug, Clone, PartialEq)]
pub struct SharedFile {
    pub text: String,
    pub updated_at: String,
}

/// The team's copy of the file `name`, if one was set.
pub fn read(tx: &Session, name: &str) -> Result<Option<SharedFile>, StoreError> {
    tx.query_opt(
        "SELECT text, updated_at FROM shared_files WHERE name = ?1",
        &[name.into()],
    )?
    .map(|row| {
        Ok(SharedFile {
            text: row.text(0)?,
            updated_at: row.text(1)?,
        })
    })
    .transpose()
}

/// Sets the team's copy of the file `name` to `text`.
pub fn write(tx: &Session, name: &str, text: &str, updated_at: &str) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO shared_files(name, text, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (name) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
        &[name.into(), text.into(), updated_at.into()],
    )
    .map(|_| ())
}

/// Every file the team shares, by name.
pub fn all(tx: &Session) -> Result<Vec<(String, SharedFile)>, StoreError> {
    tx.query(
        "SELECT name, text, updated_at FROM shared_files ORDER BY name",
        &[],
    )?
    .iter()
    .map(|row| {
        Ok((
            row.text(0)?,
            SharedFile {
                text: row.text(1)?,
                updated_at: row.text(2)?,
            },
        ))
    })
    .collect()
}
