//! Which tools an MCP session sees. A toolset is a module's tools (`board`,
//! `graph`, `docs`, `search`, `evidence`, `core`; `all` is every tool);
//! `tools` adds tools by name; read-only leaves out every tool whose effect
//! writes. `cos mcp --toolsets/--tools/--read-only` set them for stdio, and
//! on `/mcp` the headers `X-MCP-Toolsets`, `X-MCP-Tools` and
//! `X-MCP-Readonly` (as GitHub's MCP server names them) set them per
//! request. Without either a session sees the everyday tools: all but the
//! upkeep ones (export, audit, index runs, module switches, path finding).

use crate::tools::{RegisteredTool, Registry};

/// The toolset of every tool, upkeep included.
const ALL: &str = "all";

/// What a session's tool list holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// Module ids; `None` for the everyday tools.
    toolsets: Option<Vec<String>>,
    /// Tools by name, beside the toolsets.
    tools: Vec<String>,
    read_only: bool,
}

impl ToolFilter {
    /// From comma-separated toolsets and tools (`field` names where they came
    /// from in a refusal); every name must be known to `registry`.
    pub fn parse(
        toolsets: Option<&str>,
        tools: Option<&str>,
        read_only: bool,
        registry: &Registry,
        fields: (&str, &str),
    ) -> Result<ToolFilter, String> {
        let known: Vec<&str> = registry.modules().iter().map(|m| m.id()).collect();
        let toolsets = toolsets
            .map(|list| {
                names(list)
                    .map(|name| {
                        let id = if name == "evidence" {
                            "supervise"
                        } else {
                            name
                        };
                        if id == ALL || known.contains(&id) {
                            Ok(id.to_string())
                        } else {
                            Err(format!(
                                "{}: expected toolsets among {ALL}, {}, evidence; not `{name}`",
                                fields.0,
                                known.join(", ")
                            ))
                        }
                    })
                    .collect::<Result<Vec<String>, String>>()
            })
            .transpose()?;
        let tools = names(tools.unwrap_or(""))
            .map(|name| match registry.get(name) {
                Some(_) => Ok(name.to_string()),
                None => Err(format!(
                    "{}: expected tool names as tools/list shows them; `{name}` is none",
                    fields.1
                )),
            })
            .collect::<Result<Vec<String>, String>>()?;
        // tools named alone make the whole list
        let toolsets = match (toolsets, tools.is_empty()) {
            (None, false) => Some(Vec::new()),
            (toolsets, _) => toolsets,
        };
        Ok(ToolFilter {
            toolsets,
            tools,
            read_only,
        })
    }

    /// The filter a request's headers ask for, on top of `self` (the
    /// server's own): headers choose the toolsets and tools, and may make a
    /// session read-only, never writable again.
    pub fn with_request(
        &self,
        request: &axum::http::request::Parts,
        registry: &Registry,
    ) -> Result<ToolFilter, String> {
        let query = query_pairs(request.uri.query().unwrap_or(""));
        // a header, else the query parameter of the same meaning
        let asked = |header: &str, parameter: &str| {
            request
                .headers
                .get(header)
                .and_then(|value| value.to_str().ok())
                .map(String::from)
                .or_else(|| {
                    query
                        .iter()
                        .find(|(name, _)| name == parameter)
                        .map(|(_, value)| value.clone())
                })
        };
        let read_only = self.read_only
            || asked("x-mcp-readonly", "readonly")
                .is_some_and(|value| matches!(value.trim(), "true" | "1" | "yes" | "on"));
        let toolsets = asked("x-mcp-toolsets", "toolsets");
        let tools = asked("x-mcp-tools", "tools");
        if toolsets.is_none() && tools.is_none() {
            return Ok(ToolFilter {
                read_only,
                ..self.clone()
            });
        }
        ToolFilter::parse(
            toolsets.as_deref(),
            tools.as_deref(),
            read_only,
            registry,
            ("X-MCP-Toolsets (or ?toolsets=)", "X-MCP-Tools (or ?tools=)"),
        )
    }

    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// Whether `tool` is in the list, read-only aside.
    pub fn chooses(&self, tool: &RegisteredTool) -> bool {
        let spec = &tool.spec;
        let by_set = match &self.toolsets {
            None => !spec.upkeep,
            Some(sets) => sets.iter().any(|set| set == ALL || set == spec.module.id()),
        };
        by_set || self.tools.iter().any(|name| name == spec.name)
    }

    /// Whether the session lists and calls `tool`.
    pub fn allows(&self, tool: &RegisteredTool) -> bool {
        // a read-only session keeps only the tools that change nothing
        (tool.spec.effect.read_only || !self.read_only) && self.chooses(tool)
    }
}

fn names(list: &str) -> impl Iterator<Item = &str> {
    list.split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
}

/// A query string's name and value pairs, percent-decoded (`+` is a space).
fn query_pairs(query: &str) -> Vec<(String, String)> {
    let decode = |text: &str| {
        percent_encoding::percent_decode_str(&text.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(name), decode(value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(filter: &ToolFilter) -> Vec<&'static str> {
        let registry = crate::hub::default_registry();
        registry
            .iter()
            .filter(|tool| filter.allows(tool))
            .map(|tool| tool.spec.name)
            .collect()
    }

    fn parsed(toolsets: Option<&str>, tools: Option<&str>, read_only: bool) -> ToolFilter {
        let registry = crate::hub::default_registry();
        ToolFilter::parse(toolsets, tools, read_only, &registry, ("toolsets", "tools")).unwrap()
    }

    #[test]
    fn the_everyday_list_leaves_the_upkeep_tools_one_flag_away() {
        let everyday = listed(&ToolFilter::default());
        assert!(everyday.len() <= 40, "{} tools", everyday.len());
        assert!(everyday.contains(&"cos_search") && !everyday.contains(&"cos_board_export"));
        let all = listed(&parsed(Some("all"), None, false));
        assert_eq!(all.len(), crate::hub::default_registry().iter().count());
    }

    #[test]
    fn toolsets_tools_and_read_only_combine() {
        let graph = listed(&parsed(Some("graph"), None, false));
        assert!(
            graph
                .iter()
                .all(|name| name.starts_with("cos_graph_") || *name == "cos_changes"),
            "{graph:?}"
        );
        assert!(
            graph.contains(&"cos_graph_index"),
            "a toolset holds its upkeep tools"
        );
        let evidence = listed(&parsed(Some("evidence"), Some("cos_search"), false));
        assert!(evidence.contains(&"cos_search") && evidence.contains(&"cos_supervise_bundle"));
        assert_eq!(
            listed(&parsed(None, Some("cos_task_show"), false)),
            ["cos_task_show"]
        );
        let reading = listed(&parsed(Some("board"), None, true));
        assert!(reading.contains(&"cos_task_show") && !reading.contains(&"cos_task_move"));
    }

    #[test]
    fn unknown_names_are_refused_naming_the_known_ones() {
        let registry = crate::hub::default_registry();
        let refusal =
            ToolFilter::parse(Some("graph,nope"), None, false, &registry, ("t", "n")).unwrap_err();
        assert!(
            refusal.contains("not `nope`") && refusal.contains("board"),
            "{refusal}"
        );
        let refusal =
            ToolFilter::parse(None, Some("cos_nope"), false, &registry, ("t", "n")).unwrap_err();
        assert!(refusal.contains("`cos_nope` is none"), "{refusal}");
    }

    fn request(uri: &str, headers: &[(&'static str, &str)]) -> axum::http::request::Parts {
        let mut builder = axum::http::Request::builder().uri(uri);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(()).unwrap().into_parts().0
    }

    #[test]
    fn headers_choose_per_request_and_never_lift_read_only() {
        let registry = crate::hub::default_registry();
        let server = parsed(None, None, true);
        let asked = request(
            "/mcp",
            &[("x-mcp-toolsets", "all"), ("x-mcp-readonly", "false")],
        );
        let session = server.with_request(&asked, &registry).unwrap();
        assert!(session.read_only());
        assert!(
            !listed(&session).contains(&"cos_graph_doctor"),
            "doctor writes"
        );
        assert!(listed(&session).contains(&"cos_docs_audit"));
    }

    #[test]
    fn query_parameters_ask_as_the_headers_do_and_a_header_wins() {
        let registry = crate::hub::default_registry();
        let server = parsed(None, None, false);
        let asked = request("/mcp?toolsets=graph&tools=cos_search&readonly=1", &[]);
        let session = server.with_request(&asked, &registry).unwrap();
        let names = listed(&session);
        assert!(names.contains(&"cos_search") && names.contains(&"cos_graph_context"));
        assert!(!names.contains(&"cos_graph_index"), "read-only: {names:?}");
        assert!(!names.contains(&"cos_task_board"), "{names:?}");
        let both = request("/mcp?toolsets=graph", &[("x-mcp-toolsets", "board")]);
        let session = server.with_request(&both, &registry).unwrap();
        assert!(listed(&session).contains(&"cos_task_board"));
        assert!(!listed(&session).contains(&"cos_graph_context"));
        let wrong = request("/mcp?toolsets=nowhere%20near", &[]);
        let refusal = server.with_request(&wrong, &registry).unwrap_err();
        assert!(refusal.contains("?toolsets="), "{refusal}");
    }
}
