//! Keeping the index level ahead of queries while a hub serves: the
//! `cos_search_index` tool catches it up now, and a thread calls it through
//! the tool runtime once writes in this process (a saved file the graph took
//! in, a task, a patched document) have quietened, and again after a
//! catch-up that found the database busy. A query still catches up
//! whatever moved since (another process's writes ring nothing here), so
//! this only moves the work off the query's path: the first search after a
//! cold index would otherwise build the search index while its caller waits.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use utoipa::ToSchema;

use crate::background::Retry;
use crate::search::query::reach::Reach;
use crate::search::{index::catch_up, index::records, semantic, tools};
use crate::tools::{Answer, Hub, Source, Tool, ToolContext, ToolError, ToolSpec, Unwatched};

/// Quiet time after the last write before the index is caught up, so a burst
/// of writes (an agent's patches, a checkout) is taken in once, after it.
const QUIET: Duration = Duration::from_millis(300);
/// Longest a catch-up waits for quiet while writes keep coming.
const MOST_DELAY: Duration = Duration::from_secs(3);
/// How often the thread checks whether it should stop.
const STOP_CHECK: Duration = Duration::from_millis(500);

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchIndexInput {}

#[derive(Debug, Serialize, ToSchema)]
pub struct SearchIndexReport {
    /// Units taken in (files, tasks, documents, sessions re-indexed or
    /// removed), by the source that had moved (`graph`, `board`, `docs`,
    /// `supervise`); empty when the index was level.
    pub caught_up: BTreeMap<String, usize>,
    /// When the index last took in a change.
    pub index_updated_at: Option<String>,
    /// Items given a vector of the embedding model, when one is set.
    pub embedded: usize,
}

pub struct SearchIndex;

impl Tool for SearchIndex {
    type Input = SearchIndexInput;
    type Output = SearchIndexReport;
    const SPEC: ToolSpec = tools::spec(
        "cos_search_index",
        "Brings the search index level with the areas it follows now (cos_search does so first), then embeds new items when a model is set. Answers what it took in.",
        &[],
    )
    .for_upkeep();

    fn run(
        context: &ToolContext,
        _: SearchIndexInput,
    ) -> Result<Answer<SearchIndexReport>, ToolError> {
        let (reach, _) = Reach::everything(context)?;
        catch_up::first_scan(context, &reach.sources)?;
        let caught_up = catch_up::catch_up(context, &reach.sources)?
            .into_iter()
            .map(|(source, units)| (source.to_string(), units))
            .collect();
        let index_updated_at = context
            .hub
            .store
            .view(|c| records::Sources::read(c).map(|sources| sources.updated_at()))?;
        // what an index run leaves without a vector gets one now, off every
        // request's path (the follower's thread, or `cos search` in a shell);
        // a model folder that cannot be used is said at start and in health,
        // and does not fail the catch-up that was made
        let embedded = match semantic::model(&context.hub.config) {
            Ok(Some(embedder)) => semantic::pass::embed_pending(&context.hub.store, &embedder)?,
            _ => 0,
        };
        Ok(Answer::new(SearchIndexReport {
            caught_up,
            index_updated_at,
            embedded,
        }))
    }
}

/// Following stops when this is dropped.
pub type Follower = crate::background::Background;

/// Starts following the writes of this process on a thread of its own;
/// `None` when no thread can be had (queries then catch up as before).
pub fn start(hub: Hub) -> Option<Follower> {
    // counted here, not on the thread: a write that rings before the thread
    // first looks (the graph watcher's first index, started just before) is
    // still followed
    let seen = hub.state().writes.rings();
    // a model set but unusable is said at start (and in health); one that
    // opens has what is already indexed embedded without waiting for a write
    let embedding = match semantic::model(&hub.state().config) {
        Ok(model) => model.is_some(),
        Err(error) => {
            eprintln!("cos: semantic search is off: {error}");
            tracing::warn!("semantic search is off: {error}");
            false
        }
    };
    crate::background::start(
        "cos-search-follow",
        "the search index catches up at each query only",
        move |stopping| follow(&hub, seen, embedding, &stopping),
    )
}

fn follow(hub: &Hub, mut seen: u64, mut at_start: bool, stop: &AtomicBool) {
    let bell = &hub.state().writes;
    // a catch-up that found the database busy is tried again even when no
    // write rings after it: the writes it missed already rang
    let mut retry = Retry::default();
    while !stop.load(Ordering::Relaxed) {
        let rung = if at_start {
            seen
        } else {
            bell.wait_past(seen, STOP_CHECK)
        };
        if rung != seen {
            seen = quiet_after(hub, rung, stop);
        } else if !std::mem::take(&mut at_start) && !retry.is_due() {
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let caught_up = hub.call_named_here(
            SearchIndex::SPEC.name,
            serde_json::json!({}),
            Source::Watcher,
            &Unwatched,
        );
        retry.record(&caught_up);
        if let Err(error) = caught_up {
            tracing::debug!(code = %error.code, "search index follower: {}", error.message);
        }
    }
}

/// Waits until no write rang for `QUIET` (or `MOST_DELAY` has passed since
/// the first); answers the rings then. It sleeps rather than waits on the
/// bell, so a burst of writes wakes it once a `QUIET`, not once a write.
fn quiet_after(hub: &Hub, mut seen: u64, stop: &AtomicBool) -> u64 {
    let bell = &hub.state().writes;
    let until = Instant::now() + MOST_DELAY;
    while !stop.load(Ordering::Relaxed) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(QUIET.min(left));
        let rung = bell.rings();
        if rung == seen {
            break;
        }
        seen = rung;
    }
    bell.rings()
}
