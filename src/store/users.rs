//! The hub's users (`hub_users`, in the hub's migrations), kept where the
//! shared state is: with a team database every hub knows the same people.
//! Only a hash of each token is kept.

use super::{SharedStore, StoreError};

/// A user as listed: name, role, when added (the token's hash stays in the table).
#[derive(Debug, Clone, PartialEq)]
pub struct UserRow {
    pub name: String,
    pub role: String,
    pub created_at: String,
}

/// A row of `SELECT name, role, created_at`.
fn user_row(row: &super::Row) -> Result<UserRow, StoreError> {
    Ok(UserRow {
        name: row.text(0)?,
        role: row.text(1)?,
        created_at: row.text(2)?,
    })
}

impl SharedStore {
    /// Adds a user; false when the name is taken.
    pub fn add_user(&self, row: &UserRow, token_hash: &str) -> Result<bool, StoreError> {
        self.write(|tx| {
            Ok(tx.execute(
                "INSERT INTO hub_users(name, role, token_hash, created_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT DO NOTHING",
                &[
                    (&row.name).into(),
                    (&row.role).into(),
                    token_hash.into(),
                    (&row.created_at).into(),
                ],
            )? > 0)
        })
    }

    /// Every user, by name.
    pub fn users(&self) -> Result<Vec<UserRow>, StoreError> {
        self.view(|tx| {
            tx.query(
                "SELECT name, role, created_at FROM hub_users ORDER BY name",
                &[],
            )?
            .iter()
            .map(user_row)
            .collect()
        })
    }

    /// Removes a user; false when there was none of that name.
    pub fn remove_user(&self, name: &str) -> Result<bool, StoreError> {
        self.write(|tx| {
            Ok(tx.execute("DELETE FROM hub_users WHERE name = ?1", &[name.into()])? > 0)
        })
    }

    /// The user whose token hashes to `token_hash`.
    pub fn user_by_token(&self, token_hash: &str) -> Result<Option<UserRow>, StoreError> {
        self.view(|tx| {
            tx.query_opt(
                "SELECT name, role, created_at FROM hub_users WHERE token_hash = ?1",
                &[token_hash.into()],
            )?
            .as_ref()
            .map(user_row)
            .transpose()
        })
    }

    /// Whether any user exists: then every request to the HTTP doors needs a user's token.
    pub fn has_users(&self) -> Result<bool, StoreError> {
        self.view(|tx| {
            Ok(tx
                .query_opt("SELECT 1 FROM hub_users LIMIT 1", &[])?
                .is_some())
        })
    }
}
