//! People known by their tokens: a user has a name, a role (`read`, `write`
//! or `admin`) and a token shown once when the user is added; the hub keeps
//! only the token's hash. Who calls rides with the call: the HTTP door sets
//! it for the request's task, the shell and stdio set it for the process.

use std::future::Future;

use serde::{Deserialize, Serialize};

use super::{ToolError, ToolSpec};
use crate::envelope::{Category, Code, ErrorBody};

/// What a user may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Read-only tools only.
    Read,
    /// Every tool but the hub's own settings.
    Write,
    /// Every tool.
    Admin,
}

impl Role {
    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "read" => Some(Role::Read),
            "write" => Some(Role::Write),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Write => "write",
            Role::Admin => "admin",
        }
    }
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub role: Role,
}

tokio::task_local! {
    static CALLER: User;
}

/// Runs `work` as `user` (when there is one): the calls it makes carry them.
pub async fn acting_as<F: Future>(user: Option<User>, work: F) -> F::Output {
    match user {
        Some(user) => CALLER.scope(user, work).await,
        None => work.await,
    }
}

/// The user the current task acts as, if the door that started it set one.
pub fn current() -> Option<User> {
    CALLER.try_with(Clone::clone).ok()
}

/// A new token: `cos_` and 43 characters of base64url (256 random bits).
pub fn new_token() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    bytes[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    bytes[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    format!(
        "cos_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// What the hub keeps of a token. Tokens are random and long, so a fast
/// hash suffices: there is nothing to guess that a slow one would protect.
pub fn token_hash(token: &str) -> String {
    blake3::hash(token.trim().as_bytes()).to_hex().to_string()
}

/// A user name: 1 to 64 letters, digits, `.`, `_` or `-`.
pub fn check_name(name: &str) -> Result<(), ToolError> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if valid {
        Ok(())
    } else {
        Err(ToolError::invalid(
            "name",
            "1 to 64 letters, digits, '.', '_' or '-'",
        ))
    }
}

/// Refuses `user` a tool its role does not reach: a read token writes
/// nothing, and only an admin changes the hub's own settings.
pub fn check_role(user: &User, spec: &ToolSpec) -> Result<(), ToolError> {
    let needs = if spec.effect.read_only {
        Role::Read
    } else if !spec.module.switchable() {
        Role::Admin
    } else {
        Role::Write
    };
    let reaches = match user.role {
        Role::Admin => true,
        Role::Write => needs != Role::Admin,
        Role::Read => needs == Role::Read,
    };
    if reaches {
        return Ok(());
    }
    Err(ToolError::from(
        ErrorBody::new(
            Category::Permission,
            Code::E_READ_ONLY,
            format!(
                "{} needs a {} token; {} has the {} role",
                spec.name,
                needs.as_str(),
                user.name,
                user.role.as_str()
            ),
        )
        .with_details(serde_json::json!({"user": user.name, "role": user.role.as_str(), "needs": needs.as_str()})),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_kept_only_as_hashes() {
        let (first, second) = (new_token(), new_token());
        assert_ne!(first, second);
        assert_eq!(first.len(), 4 + 43);
        assert_eq!(token_hash(&first), token_hash(&format!(" {first}\n")));
        assert_ne!(token_hash(&first), token_hash(&second));
        assert!(!token_hash(&first).contains(&first[4..]));
    }

    #[test]
    fn names_are_short_plain_words() {
        assert!(check_name("alice.smith-2").is_ok());
        for bad in ["", "a b", "x".repeat(65).as_str(), "ali:ce"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
