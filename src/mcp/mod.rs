//! The agents' front door: every registered `cos_*` tool over MCP (rmcp), on
//! stdio (`cos mcp`) and as streamable HTTP mounted at `/mcp` on `cos serve`.
//!
//! Owns the MCP wire shape only: the tool list (lean schemas from the
//! registry), the call result (the envelope as `structuredContent`, once more
//! as text, `isError` for fail envelopes), and the resources, prompts and
//! change announcements the areas declare. It calls the same tool runtime as
//! REST, with the agent budget; it must not hold business rules or reach into
//! areas.

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    GetPromptRequestParams, GetPromptResponse, Implementation, InitializeResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ResourceUpdatedNotificationParam,
    ServerCapabilities, SubscribeRequestParams, SubscriptionFilter, Tool, ToolAnnotations,
    UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::service::SubscriptionContext;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

mod caller;
mod lean;
mod prompts;
mod resources;
mod screen;
pub mod sessions;
mod stdio;
mod subscriptions;
pub mod toolsets;

pub use stdio::serve as serve_stdio;
pub use toolsets::ToolFilter;

use crate::envelope::Budget;
use crate::events::ChangeFeed;
use crate::tools::{Hub, RegisteredTool, Registry, Source};

/// How long a client may keep a list that changes only with the hub's
/// version (tools, prompts, resource templates): a minute, for this client
/// alone, since a token or a header may have chosen what it holds.
const STEADY_LIST_TTL_MS: u64 = 60_000;

/// The rules an agent needs before any tool; the tools themselves are listed
/// from the registry, so a new area reaches agents by registration alone.
const CONTRACT: &str = "Every answer is an envelope: {ok: true, data: {..., meta}} or {ok: false, error: \
{category, code, retryable, message, details}}; code is one of a closed list (the REST spec at /api/openapi.json \
lists them). On error, act on category: validation -> fix the field named in \
details.field and retry; conflict -> re-read (details.current holds the fresh state) and re-apply; \
transient/unavailable -> retry later (retryable is true); module_disabled -> the message says how to enable the \
module; not_found -> check the id. Answers are trimmed to about 32,000 characters: when meta.truncated is true, \
truncated_* markers in meta say what was cut, and a cut list that a cursor continues gets its next_cursor; \
an answer that cannot fit at all is E_CONTEXT_BUDGET, whose details.narrow_with names the arguments that shrink it.";

/// What an agent is told when it connects: the contract, then every tool it
/// sees by module, and how to reach the rest.
pub fn instructions(registry: &Registry, filter: &ToolFilter) -> String {
    let mut modules: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut hidden = Vec::new();
    for tool in registry.iter() {
        if !filter.allows(tool) {
            hidden.push(tool.spec.name);
            continue;
        }
        let module = tool.spec.module.id();
        match modules.iter_mut().find(|(id, _)| *id == module) {
            Some((_, names)) => names.push(tool.spec.name),
            None => modules.push((module, vec![tool.spec.name])),
        }
    }
    let listing: Vec<String> = modules
        .iter()
        .map(|(module, names)| format!("{module}: {}", names.join(", ")))
        .collect();
    let rest = if hidden.is_empty() {
        String::new()
    } else {
        format!(
            " Not listed here: {} -- reach them with `cos mcp --toolsets all` (or the toolset named), or the header X-MCP-Toolsets: all on /mcp{}.",
            hidden.join(", "),
            if filter.read_only() {
                "; tools that write are left out (read-only)"
            } else {
                ""
            }
        )
    };
    let categories = crate::envelope::Category::ALL
        .map(|c| c.as_str())
        .join(", ");
    format!(
        "cos-hub: a local work hub for this repository. Tools by module -- {}.{rest} {CONTRACT} \
         The categories: {categories}.",
        listing.join("; ")
    )
}

/// One MCP session's handler; cheap to clone, every session shares the hub.
#[derive(Clone)]
pub struct McpServer {
    hub: Hub,
    /// The tools it lists and calls, before a request's headers narrow them.
    filter: ToolFilter,
    /// Every tool's lean definition, in the registry's order, made once.
    definitions: Arc<Vec<Tool>>,
    /// What tells watched resources' changes.
    feed: ChangeFeed,
    /// The resources this client asked to watch (`resources/subscribe`),
    /// and whether a follower announces their changes yet.
    watched: subscriptions::Watched,
    following: Arc<AtomicBool>,
}

impl McpServer {
    pub fn new(hub: Hub, filter: ToolFilter, feed: ChangeFeed) -> McpServer {
        let definitions = Arc::new(hub.registry().iter().map(describe).collect());
        McpServer {
            hub,
            filter,
            definitions,
            feed,
            watched: Default::default(),
            following: Default::default(),
        }
    }

    /// The handler of a new session: the same hub and definitions, nothing
    /// watched yet.
    fn for_session(&self) -> McpServer {
        McpServer {
            watched: Default::default(),
            following: Default::default(),
            ..self.clone()
        }
    }

    /// Starts this client's follower once: it announces each watched
    /// resource's change until the client's transport closes.
    fn follow(&self, peer: rmcp::Peer<RoleServer>) {
        if self.following.swap(true, Ordering::SeqCst) {
            return;
        }
        let announcer = peer.clone();
        let announce = move |uri: String| {
            let peer = announcer.clone();
            async move {
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await
                    .is_ok()
            }
        };
        let closed = async move {
            while !peer.is_transport_closed() {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
        };
        tokio::spawn(subscriptions::follow(
            self.hub.clone(),
            self.feed.subscribe(),
            self.watched.clone(),
            announce,
            closed,
        ));
    }

    /// The filter of one request: the server's, narrowed by the HTTP
    /// headers or query parameters the request came with (stdio has none).
    fn filter_for(&self, context: &RequestContext<RoleServer>) -> Result<ToolFilter, ErrorData> {
        match context.extensions.get::<axum::http::request::Parts>() {
            Some(parts) => self
                .filter
                .with_request(parts, self.hub.registry())
                .map_err(|message| ErrorData::invalid_params(message, None)),
            None => Ok(self.filter.clone()),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("cos-hub", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions(self.hub.registry(), &self.filter))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let filter = self.filter_for(&context)?;
        let listed = ListToolsResult::with_all_items(
            self.hub
                .registry()
                .iter()
                .zip(self.definitions.iter())
                .filter(|(tool, _)| filter.allows(tool))
                .map(|(_, definition)| definition.clone())
                .collect(),
        );
        Ok(listed
            .with_ttl_ms(STEADY_LIST_TTL_MS)
            .with_cache_scope(CacheScope::Private))
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|request| request.cursor);
        // documents and tasks change at any moment: never fresh for long
        resources::list(&self.hub, cursor)
            .await
            .map(|listed| listed.with_ttl_ms(0).with_cache_scope(CacheScope::Private))
            .map_err(|error| resources::refusal(&error))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates(&self.hub)
            .with_ttl_ms(STEADY_LIST_TTL_MS)
            .with_cache_scope(CacheScope::Private))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&self.hub, request.uri)
            .await
            .map(ReadResourceResponse::from)
            .map_err(|error| resources::refusal(&error))
    }

    #[allow(deprecated)] // the 2025-11-25 way; listen below is 2026-07-28's
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let fingerprint = subscriptions::fingerprint(&self.hub, &request.uri)
            .await
            .map_err(|error| resources::refusal(&error))?;
        self.watched
            .add(request.uri, fingerprint)
            .map_err(|error| resources::refusal(&error))?;
        self.follow(context.peer);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.watched.remove(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let uris: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| resources::area_of(&self.hub, uri).is_some())
            .take(subscriptions::MAX_WATCHED)
            .cloned()
            .collect();
        let mut accepted = SubscriptionFilter::new();
        accepted.resource_subscriptions = Some(uris);
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let watched = subscriptions::Watched::default();
        for uri in context.accepted().resource_subscriptions.iter().flatten() {
            if let Ok(fingerprint) = subscriptions::fingerprint(&self.hub, uri).await {
                watched.add(uri.clone(), fingerprint).ok();
            }
        }
        let sink = context.sink();
        let announce = |uri: String| async move { sink.notify_resource_updated(uri).await.is_ok() };
        subscriptions::follow(
            self.hub.clone(),
            self.feed.subscribe(),
            watched,
            announce,
            context.cancelled(),
        )
        .await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(prompts::list(&self.hub)
            .with_ttl_ms(STEADY_LIST_TTL_MS)
            .with_cache_scope(CacheScope::Private))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::get(&self.hub, &request.name, request.arguments)
            .await
            .map(GetPromptResponse::from)
            .map_err(|error| prompts::refusal(&error))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // An unknown tool is a protocol error (the request cannot be routed);
        // everything a tool says, including bad arguments, is a tool result.
        let Some(tool) = self.hub.registry().get(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("no tool named {:?}; tools/list shows them", request.name),
                None,
            ));
        };
        let filter = self.filter_for(&context)?;
        if !filter.chooses(tool) {
            return Err(ErrorData::invalid_params(
                format!(
                    "{} is not among the toolsets this client asked for; ask for it with `cos mcp --toolsets all` or the header X-MCP-Toolsets: all",
                    request.name
                ),
                None,
            ));
        }
        if !filter.allows(tool) {
            return Ok(CallToolResponse::from(result_of(read_only_refusal(
                &request.name,
            ))));
        }
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        // the user the HTTP door authenticated; the session's task is not the request's
        let user = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<crate::tools::users::User>())
            .cloned();
        let call = self
            .hub
            .call_json(&request.name, arguments, Budget::Agent, Source::Mcp);
        let envelope = crate::tools::users::acting_as(user, call).await;
        Ok(CallToolResponse::from(result_of(envelope)))
    }
}

/// A write asked of a read-only session: refused as the tool's own answer,
/// so the agent reads why in the contract's terms.
fn read_only_refusal(tool: &str) -> Value {
    use crate::envelope::{Category, Code, ErrorBody};
    crate::envelope::fail(
        &ErrorBody::new(
            Category::Permission,
            Code::E_READ_ONLY,
            format!("{tool} writes, and this client asked for read-only tools (cos mcp --read-only or the header X-MCP-Readonly)"),
        )
        .with_details(json!({"tool": tool})),
    )
}

/// The envelope as structured content, and the same JSON once as text.
fn result_of(envelope: Value) -> CallToolResult {
    let failed = envelope.get("ok") != Some(&Value::Bool(true));
    let text = serde_json::to_string(&envelope).unwrap_or_default();
    let mut result = if failed {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(envelope);
    result
}

fn describe(tool: &RegisteredTool) -> Tool {
    let effect = tool.spec.effect;
    let annotations = ToolAnnotations::new()
        .read_only(effect.read_only)
        .destructive(effect.destructive)
        .idempotent(effect.idempotent)
        .open_world(false);
    Tool::new(
        tool.spec.name,
        tool.spec.description,
        Arc::new(lean::input_schema(&tool.input_schema)),
    )
    .with_raw_output_schema(Arc::new(lean::output_schema(&tool.output_schema)))
    .with_annotations(annotations)
}

/// The streamable HTTP service mounted at `/mcp`, behind the JSON-RPC screen,
/// taking request bodies of at most `body_limit` bytes. Host, Origin and token
/// checks run in the hub's own middleware before this service, for REST and
/// MCP alike.
pub fn http_service(
    hub: Hub,
    feed: ChangeFeed,
    body_limit: usize,
    limits: sessions::SessionLimits,
) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(body_limit);
    let server = McpServer::new(hub, ToolFilter::default(), feed);
    let service = StreamableHttpService::new(
        move || Ok(server.for_session()),
        sessions::BoundedSessions::new(limits).into(),
        config,
    );
    axum::Router::new()
        .fallback_service(service)
        .layer(axum::middleware::from_fn_with_state(
            BodyLimit(body_limit),
            screen_http,
        ))
}

#[derive(Clone, Copy)]
struct BodyLimit(usize);

/// Answers malformed JSON-RPC itself, gives rmcp's plain-text refusals
/// (a missing or expired session, a wrong content type) JSON-RPC error
/// bodies, and answers a closed session's DELETE 204 instead of rmcp's 202.
async fn screen_http(
    axum::extract::State(BodyLimit(body_limit)): axum::extract::State<BodyLimit>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{Method, StatusCode};
    let closing = request.method() == Method::DELETE;
    let request = if request.method() == Method::POST {
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, body_limit).await else {
            return json_rpc_reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                screen::error_response(
                    Value::Null,
                    screen::INVALID_REQUEST,
                    "Invalid Request: the body is larger than the hub accepts",
                ),
            );
        };
        if let Some(refusal) = screen::screen(&bytes) {
            let status = if refusal.has_id {
                StatusCode::OK
            } else {
                StatusCode::BAD_REQUEST
            };
            return json_rpc_reply(status, refusal.body);
        }
        axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes))
    } else {
        request
    };
    let mut response = next.run(request).await;
    let status = response.status();
    if closing && status == StatusCode::ACCEPTED {
        // a session closed: nothing is left to accept later, and the
        // official Python SDK takes any answer but 200 or 204 for a failure
        *response.status_mut() = StatusCode::NO_CONTENT;
        return response;
    }
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let text = axum::body::to_bytes(response.into_body(), 4096)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let code = if status == StatusCode::NOT_FOUND {
        screen::SESSION_NOT_FOUND
    } else {
        screen::INVALID_REQUEST
    };
    let message = if status == StatusCode::NOT_FOUND {
        format!("{text}: the session expired or was closed; send initialize to start a new one")
    } else {
        text
    };
    json_rpc_reply(status, screen::error_response(Value::Null, code, &message))
}

fn json_rpc_reply(status: axum::http::StatusCode, body: Value) -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
