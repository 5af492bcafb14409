//! Who is calling over HTTP. Once the hub has users, every /api and /mcp
//! request needs a user's bearer token (the single `COS_HUB_TOKEN` serves
//! only a hub without users). Lookups are kept a few seconds, so a request
//! costs no database visit, and kept longer when the database is out of
//! reach, so the areas that do not need it keep answering.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::tools::Hub;
use crate::tools::users::{User, token_hash};

/// How long a lookup stands while the database answers.
const FRESH: Duration = Duration::from_secs(5);
/// How long it stands while the database cannot be reached.
const STALE: Duration = Duration::from_secs(300);
/// Tokens remembered at most.
const REMEMBERED: usize = 1024;

/// What the HTTP door knows of the hub's users.
#[derive(Default)]
pub struct Users {
    any: Mutex<Option<(Instant, bool)>>,
    tokens: Mutex<HashMap<String, (Instant, Option<User>)>>,
}

/// Whom a request's token names.
#[derive(Debug, PartialEq)]
pub enum Caller {
    /// The hub has no users: the hub token, if any, decides.
    NoUsers,
    User(User),
    /// No user has this token (or none was sent).
    Unknown,
    /// The users cannot be read just now.
    Unavailable(String),
}

impl Users {
    /// The caller `authorization` (an `Authorization` header) names.
    pub async fn caller(&self, hub: &Hub, authorization: Option<&str>) -> Caller {
        match self.any_user(hub).await {
            Err(reason) => return Caller::Unavailable(reason),
            Ok(false) => return Caller::NoUsers,
            Ok(true) => {}
        }
        let Some(token) = authorization.and_then(|value| value.strip_prefix("Bearer ")) else {
            return Caller::Unknown;
        };
        let hash = token_hash(token);
        match self.user(hub, hash).await {
            Ok(Some(user)) => Caller::User(user),
            Ok(None) => Caller::Unknown,
            Err(reason) => Caller::Unavailable(reason),
        }
    }

    async fn any_user(&self, hub: &Hub) -> Result<bool, String> {
        let kept = *self
            .any
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((at, any)) = kept
            && at.elapsed() < FRESH
        {
            return Ok(any);
        }
        let reader = hub.clone();
        let read = tokio::task::spawn_blocking(move || reader.state().shared.has_users()).await;
        match read {
            Ok(Ok(any)) => {
                *self
                    .any
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some((Instant::now(), any));
                Ok(any)
            }
            Ok(Err(error)) => match kept {
                Some((at, any)) if at.elapsed() < STALE => Ok(any),
                _ => Err(error.to_string()),
            },
            Err(error) => Err(error.to_string()),
        }
    }

    async fn user(&self, hub: &Hub, hash: String) -> Result<Option<User>, String> {
        let kept = self
            .tokens
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&hash)
            .cloned();
        if let Some((at, user)) = &kept
            && at.elapsed() < FRESH
        {
            return Ok(user.clone());
        }
        let reader = hub.clone();
        let key = hash.clone();
        let read = tokio::task::spawn_blocking(move || reader.user_by_hash(&key)).await;
        match read {
            Ok(Ok(user)) => {
                let mut tokens = self
                    .tokens
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                if tokens.len() >= REMEMBERED {
                    tokens.retain(|_, (at, _)| at.elapsed() < FRESH);
                }
                if tokens.len() < REMEMBERED {
                    tokens.insert(hash, (Instant::now(), user.clone()));
                }
                Ok(user)
            }
            Ok(Err(error)) => match kept {
                Some((at, user)) if at.elapsed() < STALE => Ok(user),
                _ => Err(error.to_string()),
            },
            Err(error) => Err(error.to_string()),
        }
    }
}
