//! Who may talk to the hub, checked before any route or tool runs, for REST
//! and MCP alike.
//!
//! - Host must be a loopback name or a configured host (421 otherwise): a page
//!   on another site that rebinds its DNS name to 127.0.0.1 still sends its own
//!   name as Host, so DNS rebinding is refused.
//! - A browser's Origin, when sent, must be the hub's own origin or a
//!   configured one (403 otherwise): cross-site requests are refused.
//! - With a token configured, every /api and /mcp request needs
//!   `Authorization: Bearer <token>` (401 otherwise), compared in constant time.

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;
use subtle::ConstantTimeEq;

use super::unwrap::ApiError;
use crate::envelope::{Category, Code, ErrorBody};

/// The hub's access rules.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// Host names (with or without port) accepted besides loopback names.
    pub allowed_hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`) accepted besides the hub's own.
    pub allowed_origins: Vec<String>,
    /// When set, /api and /mcp need this bearer token.
    pub token: Option<String>,
}

impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never prints the token itself.
        write!(
            f,
            "hosts: loopback{}; origins: own{}; token: {}",
            self.allowed_hosts
                .iter()
                .map(|h| format!(", {h}"))
                .collect::<String>(),
            self.allowed_origins
                .iter()
                .map(|o| format!(", {o}"))
                .collect::<String>(),
            if self.token.is_some() {
                "required"
            } else {
                "off"
            }
        )
    }
}

/// Splits `host[:port]` (IPv6 in brackets) into its host part, lowercased.
fn host_name(authority: &str) -> String {
    let authority = authority.trim().to_ascii_lowercase();
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default().to_string();
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host.to_string(),
        _ => authority,
    }
}

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl Access {
    fn host_allowed(&self, authority: &str) -> bool {
        let host = host_name(authority);
        is_loopback(&host)
            || self.allowed_hosts.iter().any(|allowed| {
                let allowed = allowed.to_ascii_lowercase();
                allowed == authority.to_ascii_lowercase() || allowed == host
            })
    }

    fn origin_allowed(&self, origin: &str, authority: &str) -> bool {
        let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        let own = [
            format!("http://{}", authority.to_ascii_lowercase()),
            format!("https://{}", authority.to_ascii_lowercase()),
        ];
        own.contains(&origin)
            || self
                .allowed_origins
                .iter()
                .any(|allowed| allowed.trim_end_matches('/').eq_ignore_ascii_case(&origin))
    }

    fn token_matches(&self, header: Option<&str>) -> bool {
        let Some(expected) = &self.token else {
            return true;
        };
        let Some(given) = header.and_then(|value| value.strip_prefix("Bearer ")) else {
            return false;
        };
        // Lengths may differ without leaking the token's bytes; contents compare in constant time.
        given.len() == expected.len() && bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
    }
}

fn refusal(
    status: StatusCode,
    category: Category,
    code: Code,
    message: String,
    details: serde_json::Value,
) -> Response {
    ApiError::with_status(
        ErrorBody::new(category, code, message).with_details(details),
        status,
    )
    .into_response()
}

/// The middleware: refuses before anything else runs.
pub async fn check(State(access): State<Arc<Access>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let authority = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()))
        .unwrap_or_default();
    if !access.host_allowed(&authority) {
        return refusal(
            StatusCode::MISDIRECTED_REQUEST,
            Category::Permission,
            Code::E_HOST,
            format!(
                "this hub does not answer for host {authority:?}; start it with --allow-host to add one"
            ),
            json!({"field": "Host", "got": authority}),
        );
    }
    if let Some(origin) = headers
        .get(header::ORIGIN)
        .and_then(|value| value.to_str().ok())
        && !access.origin_allowed(origin, &authority)
    {
        return refusal(
            StatusCode::FORBIDDEN,
            Category::Permission,
            Code::E_ORIGIN,
            format!(
                "requests from origin {origin:?} are not allowed; start the hub with --allow-origin to add one"
            ),
            json!({"field": "Origin", "got": origin}),
        );
    }
    let path = request.uri().path();
    let guarded = path.starts_with("/api") || path.starts_with("/mcp");
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    if guarded && !access.token_matches(authorization) {
        let mut response = refusal(
            StatusCode::UNAUTHORIZED,
            Category::Unauthorized,
            Code::E_TOKEN,
            "a valid token is required: send `Authorization: Bearer <token>`".to_string(),
            json!({"field": "Authorization"}),
        );
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        return response;
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        let access = Access {
            allowed_hosts: vec!["hub.example".into()],
            ..Access::default()
        };
        for ok in [
            "localhost:9188",
            "127.0.0.1:9188",
            "[::1]:9188",
            "127.0.0.2",
            "app.localhost",
            "hub.example:80",
            "LOCALHOST",
        ] {
            assert!(access.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:9188",
            "10.0.0.1:9188",
            "",
            "localhost.evil.example",
        ] {
            assert!(!access.host_allowed(bad), "{bad}");
        }
    }

    #[test]
    fn origins() {
        let access = Access {
            allowed_origins: vec!["https://ui.example".into()],
            ..Access::default()
        };
        assert!(access.origin_allowed("http://127.0.0.1:9188", "127.0.0.1:9188"));
        assert!(access.origin_allowed("https://ui.example/", "127.0.0.1:9188"));
        assert!(
            !access.origin_allowed("http://localhost:9188", "127.0.0.1:9188"),
            "same machine, other origin"
        );
        assert!(!access.origin_allowed("https://evil.example", "127.0.0.1:9188"));
        assert!(!access.origin_allowed("null", "127.0.0.1:9188"));
    }

    #[test]
    fn tokens() {
        let open = Access::default();
        assert!(open.token_matches(None));
        let locked = Access {
            token: Some("s3cret-token".into()),
            ..Access::default()
        };
        assert!(locked.token_matches(Some("Bearer s3cret-token")));
        assert!(!locked.token_matches(Some("Bearer s3cret-tokem")));
        assert!(!locked.token_matches(Some("s3cret-token")));
        assert!(!locked.token_matches(None));
        assert!(!locked.to_string().contains("s3cret"));
    }
}
