//! The change feed: tells subscribers (the hub UI over `/api/stream`) when an
//! area's data changed, whichever process changed it.
//!
//! Owns one watcher task per served hub. It reads each area's revision counter
//! (bumped by triggers inside every writing transaction) a few times a second,
//! and only while someone listens. It reads counters through the areas' own
//! functions and never touches their tables.

use serde::{Deserialize, Serialize};
use std::time::Duration;
use tokio::sync::watch;
use utoipa::ToSchema;

use crate::tools::Hub;

/// How often the watcher looks for changes while someone listens.
pub const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// The revision of each area; a change means "reload what you show".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Revisions {
    /// Bumped by every write to the board.
    pub board: i64,
}

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
            let read =
                tokio::task::spawn_blocking(move || crate::board::revision(&reader.state().store))
                    .await;
            match read {
                Ok(Ok(board)) => {
                    sender.send_if_modified(|current| {
                        let changed = current.board != board;
                        current.board = board;
                        changed
                    });
                }
                Ok(Err(error)) => {
                    tracing::warn!(%error, "the change feed could not read the board revision")
                }
                Err(error) => tracing::warn!(%error, "the change feed's reader stopped"),
            }
        }
    });
    (ChangeFeed { receiver }, task)
}
