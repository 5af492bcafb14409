//! The change feed: tells subscribers (the hub UI over `/api/stream`) when an
//! area's data changed, whichever process changed it.
//!
//! Owns one watcher task per served hub. It reads the revision counter of every
//! area the registry lists (bumped inside every writing transaction) a few
//! times a second, and only while someone listens. It reads counters through
//! each area's own reader and knows no area by name.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::sync::watch;
use utoipa::ToSchema;

use crate::tools::{Area, Hub};

/// How often the watcher looks for changes while someone listens.
pub const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// The revision of each area that keeps one (`board`, `graph`, ...); a change
/// of an area's number means "reload what you show of it".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(example = json!({"board": 12, "graph": 3}))]
pub struct Revisions(pub BTreeMap<String, i64>);

/// Subscribers' end of the feed.
#[derive(Clone)]
pub struct ChangeFeed {
    receiver: watch::Receiver<Revisions>,
}

impl ChangeFeed {
    pub fn subscribe(&self) -> watch::Receiver<Revisions> {
        self.receiver.clone()
    }
}

/// Starts the watcher for `hub`; it stops when the returned handle is aborted.
pub fn start(hub: Hub) -> (ChangeFeed, tokio::task::JoinHandle<()>) {
    let (sender, receiver) = watch::channel(Revisions::default());
    let task = tokio::spawn(async move {
        let mut ticker = tokio::time::interval(POLL_INTERVAL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            // The watcher holds one receiver itself; only real subscribers count.
            if sender.receiver_count() <= 1 && *sender.borrow() != Revisions::default() {
                continue;
            }
            let reader = hub.clone();
            let Ok(read) = tokio::task::spawn_blocking(move || read_revisions(&reader)).await
            else {
                tracing::warn!("the change feed's reader stopped");
                continue;
            };
            sender.send_if_modified(|current| {
                // an area whose counter could not be read keeps its last number
                let mut next = current.clone();
                next.0.extend(read);
                let changed = next != *current;
                *current = next;
                changed
            });
        }
    });
    (ChangeFeed { receiver }, task)
}

/// Every readable area revision; failures are logged and left out.
fn read_revisions(hub: &Hub) -> BTreeMap<String, i64> {
    let mut revisions = BTreeMap::new();
    for area in hub.registry().areas() {
        let Area {
            id,
            revision: Some(read),
            ..
        } = area
        else {
            continue;
        };
        match read(hub.state()) {
            Ok(revision) => {
                revisions.insert(id.to_string(), revision);
            }
            Err(error) => {
                tracing::warn!(area = id, %error, "the change feed could not read a revision")
            }
        }
    }
    revisions
}
