//! Who may talk to the hub, checked before any route or tool runs, for REST
//! and MCP alike.
//!
//! - Host must be a loopback name or a configured host (421 otherwise): a page
//!   on another site that rebinds its DNS name to 127.0.0.1 still sends its own
//!   name as Host, so DNS rebinding is refused. A request with two Host
//!   headers is refused (400), and an absolute-form request line
//!   (`GET http://host/...`) is held to the same rule as Host.
//! - A browser's Origin, when sent, must be the hub's own origin or a
//!   configured one, compared by scheme, host and port (403 otherwise):
//!   cross-site requests are refused.
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

/// An origin as RFC 6454 compares them: scheme, host and port (the
/// scheme's default port when none is written).
#[derive(Debug, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    fn parse(text: &str) -> Option<Origin> {
        let text = text.trim().trim_end_matches('/').to_ascii_lowercase();
        let (scheme, authority) = text.split_once("://")?;
        let default_port = match scheme {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        if authority.is_empty() || authority.contains(['/', '@', '?', '#']) {
            return None;
        }
        let host = host_name(authority);
        let port = match authority
            .strip_prefix(&format!("[{host}]"))
            .unwrap_or_else(|| authority.strip_prefix(host.as_str()).unwrap_or(""))
        {
            "" => default_port,
            rest => rest.strip_prefix(':')?.parse().ok()?,
        };
        Some(Origin {
            scheme: scheme.to_string(),
            host,
            port,
        })
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
        let Some(origin) = Origin::parse(origin) else {
            return false;
        };
        // the hub serves plain HTTP: its own origin is http://<the Host it was asked as>
        let own = Origin::parse(&format!("http://{}", authority.trim()));
        own.as_ref() == Some(&origin)
            || self
                .allowed_origins
                .iter()
                .any(|allowed| Origin::parse(allowed).as_ref() == Some(&origin))
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

/// What the middleware holds: the rules, and the hub whose users it knows.
pub struct Guard {
    access: Access,
    hub: crate::tools::Hub,
    users: super::users::Users,
}

impl Guard {
    pub fn new(access: Access, hub: crate::tools::Hub) -> Guard {
        Guard {
            access,
            hub,
            users: super::users::Users::default(),
        }
    }
}

fn unauthorized(message: &str) -> Response {
    let mut response = refusal(
        StatusCode::UNAUTHORIZED,
        Category::Unauthorized,
        Code::E_TOKEN,
        message.to_string(),
        json!({"field": "Authorization"}),
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

/// The middleware: refuses before anything else runs.
pub async fn check(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    let access = &guard.access;
    let headers = request.headers();
    if headers.get_all(header::HOST).iter().count() > 1 {
        return refusal(
            StatusCode::BAD_REQUEST,
            Category::Validation,
            Code::E_HOST,
            "the request has more than one Host header; send exactly one".to_string(),
            json!({"field": "Host"}),
        );
    }
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string);
    // an absolute-form request line (or HTTP/2's :authority) names a host too,
    // and it is the one a proxy would act on
    let target = request.uri().authority().map(|a| a.to_string());
    for (field, named) in [("Host", &host), ("request target", &target)] {
        if let Some(named) = named
            && !access.host_allowed(named)
        {
            return refusal(
                StatusCode::MISDIRECTED_REQUEST,
                Category::Permission,
                Code::E_HOST,
                format!(
                    "this hub does not answer for host {named:?}; start it with --allow-host to add one"
                ),
                json!({"field": field, "got": named}),
            );
        }
    }
    let authority = host.or(target).unwrap_or_default();
    if !access.host_allowed(&authority) {
        return refusal(
            StatusCode::MISDIRECTED_REQUEST,
            Category::Permission,
            Code::E_HOST,
            "the request names no host; send a Host header".to_string(),
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
    if !guarded {
        return next.run(request).await;
    }
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    use super::users::Caller;
    match guard.users.caller(&guard.hub, authorization).await {
        Caller::NoUsers if access.token_matches(authorization) => next.run(request).await,
        Caller::NoUsers => {
            unauthorized("a valid token is required: send `Authorization: Bearer <token>`")
        }
        Caller::Unknown => unauthorized(
            "this hub has users: send `Authorization: Bearer <token>` with a token `cos user add` printed",
        ),
        Caller::User(user) => {
            request.extensions_mut().insert(user.clone());
            crate::tools::users::acting_as(Some(user), next.run(request)).await
        }
        Caller::Unavailable(reason) => refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            Category::Unavailable,
            Code::E_UNAVAILABLE,
            format!("the hub's users cannot be read just now ({reason}); retry shortly"),
            json!({"field": "Authorization", "retry_after_seconds": 1}),
        ),
    }
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
        // scheme, host and port all count
        assert!(
            !access.origin_allowed("https://127.0.0.1:9188", "127.0.0.1:9188"),
            "the hub serves http, not https"
        );
        assert!(!access.origin_allowed("http://127.0.0.1:9189", "127.0.0.1:9188"));
        assert!(!access.origin_allowed("http://ui.example", "127.0.0.1:9188"));
        assert!(access.origin_allowed("https://ui.example:443", "127.0.0.1:9188"));
        assert!(access.origin_allowed("http://localhost", "localhost:80"));
        assert!(access.origin_allowed("http://[::1]:9188", "[::1]:9188"));
        assert!(!access.origin_allowed("http://127.0.0.1:9188@evil.example", "127.0.0.1:9188"));
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
