//! The hub UI: the built app in static/, embedded in the binary so `cos serve`
//! needs no npm and works from any directory. Unknown paths outside /api and
//! /mcp load the app (deep links); /api keeps answering ErrorEnvelopes.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

#[derive(rust_embed::RustEmbed)]
#[folder = "static/"]
#[exclude = "README.md"]
struct Assets;

/// The file at `path`, or the app's index page for client-side routes.
pub fn page(path: &str) -> Response {
    let file = path.trim_start_matches('/');
    if let Some(asset) = Assets::get(file).filter(|_| !file.is_empty()) {
        let mime = asset.metadata.mimetype().to_string();
        let cache = if file.starts_with("assets/") {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        };
        return (
            [
                (header::CONTENT_TYPE, mime),
                (header::CACHE_CONTROL, cache.to_string()),
            ],
            asset.data.into_owned(),
        )
            .into_response();
    }
    match Assets::get("index.html") {
        Some(index) => (
            [
                (header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8")),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            ],
            index.data.into_owned(),
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            "The hub UI is not built into this binary: run `npm run build` in ui/ and rebuild. The API is at /api, its docs at /docs.",
        )
            .into_response(),
    }
}
