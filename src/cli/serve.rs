//! The long-running commands: `cos serve` (REST, MCP over HTTP and the UI,
//! with the watchers and search's indexer beside it) and `cos mcp` (MCP over
//! stdio), and the access rules a served hub applies.

use super::*;

/// The access rules for `serve`: a token from COS_HUB_TOKEN or a file, and
/// never a non-loopback listener without one.
pub(super) fn access_rules(
    address: SocketAddr,
    mut allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    token_file: Option<PathBuf>,
) -> Result<web::access::Access, String> {
    let token = match token_file {
        Some(path) => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("reading the token file {}: {e}", path.display()))?;
            Some(text.trim().to_string())
        }
        None => std::env::var("COS_HUB_TOKEN")
            .ok()
            .map(|t| t.trim().to_string()),
    };
    if token.as_deref() == Some("") {
        return Err(
            "the token is empty: put a long random string in COS_HUB_TOKEN or the token file"
                .into(),
        );
    }
    if let Some(token) = &token
        && token.len() < 16
    {
        return Err(format!(
            "the token is {} characters long; use at least 16",
            token.len()
        ));
    }
    if !address.ip().is_loopback() {
        if token.is_none() {
            return Err(format!(
                "refusing to listen on {address} without a token: anyone who can reach it could drive the hub. \
                 Set COS_HUB_TOKEN or pass --token-file FILE (requests then need `Authorization: Bearer <token>`), \
                 or bind 127.0.0.1"
            ));
        }
        if !address.ip().is_unspecified() {
            allowed_hosts.push(address.ip().to_string());
        }
    }
    Ok(web::access::Access {
        allowed_hosts,
        allowed_origins,
        token,
    })
}

pub(super) fn mcp(hub: Hub, filter: crate::mcp::ToolFilter) -> i32 {
    let runtime = match single_client_runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(announce_shared_state(&hub));
    // an agent's session over stdio sees saved files as `cos serve` does
    let _following = follow_the_repository(&hub);
    // a line over stdio may be as long as a body over HTTP
    match runtime.block_on(crate::mcp::serve_stdio(
        hub,
        crate::web::BODY_LIMIT_BYTES,
        filter,
    )) {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("cos: MCP over stdio stopped: {error}");
            1
        }
    }
}

/// Says on stderr where the shared state (the board, ...) lives when it is
/// a team database, and whether it answers: a hub starts while it is down
/// and reconnects by itself, so this is a note, never a refusal.
async fn announce_shared_state(hub: &Hub) {
    let Some(team) = hub.state().shared.team().cloned() else {
        return;
    };
    let name = team.name().to_string();
    match tokio::task::spawn_blocking(move || team.check()).await {
        Ok(Ok(())) => note(format_args!("team database: postgres {name}")),
        Ok(Err(error)) => note(format_args!(
            "team database postgres {name} does not answer yet ({error}); the board answers unavailable until it does"
        )),
        Err(error) => note(format_args!("team database postgres {name}: {error}")),
    }
}

/// While a hub serves (over HTTP or an agent's stdio), the graph follows
/// saved files, documents edited outside the hub become revisions, and the
/// search index takes in what they and every other write of this process
/// changed once writes quieten. All stop when the returned followers are
/// dropped.
pub(super) fn follow_the_repository(
    hub: &Hub,
) -> (
    Option<crate::graph::watch::Watcher>,
    Option<crate::docs::watch::Watcher>,
    Option<crate::search::indexer::Follower>,
) {
    (
        crate::graph::watch::start(hub.clone()),
        crate::docs::watch::start(hub.clone()),
        crate::search::indexer::start(hub.clone()),
    )
}

pub(super) fn serve(hub: Hub, address: SocketAddr, options: web::ServeOptions) -> i32 {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(address).await {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("cos: cannot listen on {address}: {error}");
                return 1;
            }
        };
        let local = listener.local_addr().unwrap_or(address);
        tracing::info!(
            repo = %hub.state().config.repo_root.display(),
            state_dir = %hub.state().config.state_dir.display(),
            "cos-hub serving on http://{local} (Swagger UI at /docs)"
        );
        note(format_args!(
            "cos-hub serving {} on http://{local}",
            hub.state().config.repo_root.display()
        ));
        announce_shared_state(&hub).await;
        note(format_args!(
            "access: {}; at most {} connections at once",
            options.access, options.max_connections
        ));
        let _following = follow_the_repository(&hub);
        match web::serve_with(listener, hub, options, shutdown_signal()).await {
            Ok(()) => 0,
            Err(error) => {
                note(format_args!("cos: server stopped: {error}"));
                1
            }
        }
    })
}

/// A line on stderr for whoever watches a running server; a closed stderr
/// (`cos serve 2>&1 | head -1`) must not stop the server, as `eprintln!` would.
pub(super) fn note(line: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Resolves on SIGINT or SIGTERM.
pub(super) async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}
