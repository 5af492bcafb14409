//! Announcing changes to the resources a client watches, as each protocol
//! revision says: `resources/subscribe` then `notifications/resources/updated`
//! (2025-11-25), or the same notification on a `subscriptions/listen`
//! stream (2026-07-28). One follower serves both: it waits on the hub's
//! change feed, and when an area's revision moves it reads that area's
//! watched resources again and announces those whose text or identity
//! changed.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::watch;

use super::resources;
use crate::envelope::{Category, Code, ErrorBody};
use crate::events::Revisions;
use crate::tools::Hub;

/// Resources one session may watch at once.
pub const MAX_WATCHED: usize = 64;

/// A session's watched resources, each with what its last read looked like.
#[derive(Clone, Default)]
pub struct Watched(Arc<Mutex<BTreeMap<String, u64>>>);

impl Watched {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, u64>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts watching `uri`, read now as `fingerprint`; refused past the bound.
    pub fn add(&self, uri: String, fingerprint: u64) -> Result<(), ErrorBody> {
        let mut watched = self.lock();
        if !watched.contains_key(&uri) && watched.len() >= MAX_WATCHED {
            return Err(ErrorBody::new(
                Category::Validation,
                Code::E_ARGUMENT,
                format!(
                    "uri: a session watches at most {MAX_WATCHED} resources; unsubscribe from one first"
                ),
            )
            .with_details(serde_json::json!({"field": "uri", "limit": MAX_WATCHED})));
        }
        watched.insert(uri, fingerprint);
        Ok(())
    }

    pub fn remove(&self, uri: &str) {
        self.lock().remove(uri);
    }

    fn uris(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// Records `fingerprint` for `uri`: true when it differs from the last.
    fn changed(&self, uri: &str, fingerprint: u64) -> bool {
        match self.lock().get_mut(uri) {
            Some(last) if *last != fingerprint => {
                *last = fingerprint;
                true
            }
            _ => false,
        }
    }
}

/// What a resource reads as now, in one number: its text and `_meta`, or
/// the refusal it gets (a deleted document reads differently from a live one).
pub async fn fingerprint(hub: &Hub, uri: &str) -> Result<u64, ErrorBody> {
    let read = resources::read(hub, uri.to_string()).await?;
    Ok(digest(&read))
}

fn digest(value: &impl serde::Serialize) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(value)
        .unwrap_or_default()
        .hash(&mut hasher);
    hasher.finish()
}

/// Follows the change feed until `stop` ends or `announce` reports the
/// client gone, announcing each watched resource that changed.
pub async fn follow<A, F>(
    hub: Hub,
    mut feed: watch::Receiver<Revisions>,
    watched: Watched,
    announce: A,
    stop: impl Future<Output = ()>,
) where
    A: Fn(String) -> F,
    F: Future<Output = bool>,
{
    tokio::pin!(stop);
    let mut last = feed.borrow_and_update().clone();
    loop {
        tokio::select! {
            () = &mut stop => return,
            changed = feed.changed() => if changed.is_err() { return },
        }
        let now = feed.borrow_and_update().clone();
        let moved: BTreeSet<String> = now
            .0
            .iter()
            .filter(|(area, revision)| last.0.get(*area) != Some(*revision))
            .map(|(area, _)| area.clone())
            .collect();
        last = now;
        for uri in watched.uris() {
            if !resources::area_of(&hub, &uri).is_some_and(|area| moved.contains(area)) {
                continue;
            }
            let now = match fingerprint(&hub, &uri).await {
                Ok(fingerprint) => fingerprint,
                // a busy hub says nothing about the resource: read it next time
                Err(refusal) if refusal.retryable => continue,
                Err(refusal) => digest(&refusal),
            };
            if watched.changed(&uri, now) && !announce(uri).await {
                return;
            }
        }
    }
}
