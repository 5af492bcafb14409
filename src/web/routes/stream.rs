//! `/api/stream`: server-sent events telling the UI when data changed.

use super::RouterSpec;
use crate::events::ChangeFeed;
use crate::tools::Hub;
use axum::Extension;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use std::convert::Infallible;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::WatchStream;
use utoipa_axum::{router::OpenApiRouter, routes};

/// One server-sent event of the stream, field by field as it arrives (the
/// shape SSE clients and OpenAPI 3.2's event items read). Only described:
/// the events are written by axum's `Event`.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ChangeEvent {
    /// Always `change`.
    #[schema(pattern = "^change$")]
    event: String,
    /// The JSON text of a `Revisions` object: each area's revision.
    #[schema(content_media_type = "application/json")]
    data: String,
}

pub const SPEC: RouterSpec = RouterSpec {
    tag: "stream",
    extra_errors: &[],
    request_ids_under: None,
    router,
};

fn router() -> OpenApiRouter<Hub> {
    OpenApiRouter::new().routes(routes!(stream_changes))
}

/// A stream of `change` events, one now and one whenever an area's revision moves
/// (any writer: the UI, REST, MCP, the CLI). Reload what you show on each.
#[utoipa::path(get, path = "/api/stream", operation_id = "stream_changes", tag = "stream",
    responses((status = 200, description = "text/event-stream of `change` events whose data is the JSON text of a Revisions object",
               content_type = "text/event-stream", body = ChangeEvent)))]
async fn stream_changes(
    Extension(feed): Extension<ChangeFeed>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    // the feed holds no revision until its first read: nothing to announce yet
    let events = WatchStream::new(feed.subscribe())
        .filter(|revisions| !revisions.0.is_empty())
        .map(|revisions| {
            let data = serde_json::to_string(&revisions).unwrap_or_else(|_| "{}".into());
            Ok(Event::default().event("change").data(data))
        });
    Sse::new(events).keep_alive(KeepAlive::default())
}
