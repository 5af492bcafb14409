//! The `cos_graph_*` tools over the indexed graph.

use super::records;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::{HashSet, VecDeque};
use utoipa::{IntoParams, ToSchema};

use super::index::{self, IndexSummary};
use crate::envelope::{Category, Code, ErrorBody};
use crate::store::StoreError;
use crate::tools::cache::Shared;
use crate::tools::cursor::Offsets;
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

/// The spec of a graph tool (module graph, layer graph).
pub(super) const fn spec(name: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        module: crate::graph::MODULE,
        layer: "graph",
        description,
        effect: crate::tools::Effect::READ,
        list_hints: &[],
        agent_budget: None,
        upkeep: false,
    }
}

pub use super::records::GraphNode;

/// Words as an FTS5 prefix query; None when the text holds no word.
fn fts_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .take(8)
        .map(|w| format!("\"{w}\"*"))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// Adds when the graph was last updated and whether a re-index is under way
/// (`cos serve` re-indexes after saves) to an answer's meta.
pub fn add_freshness(
    meta: &mut Map<String, Value>,
    connection: &Connection,
    context: &ToolContext,
) -> Result<(), ToolError> {
    let updated =
        super::index::updated_at(connection).map_err(|error| StoreError::on(connection, error))?;
    meta.insert("graph_updated_at".into(), json!(updated));
    meta.insert(
        "graph_pending".into(),
        json!(context.hub.pending.is(super::PENDING)),
    );
    Ok(())
}

/// Adds `unresolved_calls_named`: the call sites resolution left unlinked
/// that name `label`, each of which could be a call to the symbol asked
/// about (an answer with no dependents is only as sure as this is small).
pub fn add_unresolved(
    meta: &mut Map<String, Value>,
    connection: &Connection,
    label: &str,
) -> Result<(), ToolError> {
    let unresolved = super::records::unresolved_calls_named(connection, &[label])
        .map_err(|error| StoreError::on(connection, error))?;
    meta.insert("unresolved_calls_named".into(), json!(unresolved));
    Ok(())
}

pub(super) use crate::tools::input::in_range;

/// A graph answer computed once per graph revision (and watcher state, which
/// its meta reports) and shared by every caller asking the same until the graph
/// changes. `compute` gets the revision it reads at, for cursors.
pub fn cached_graph_answer<T: Serialize>(
    context: &ToolContext,
    tool: &'static str,
    key: String,
    compute: impl FnOnce(&Connection, i64) -> Result<Answer<T>, ToolError>,
) -> Result<(Answer<Shared<T>>, i64), ToolError> {
    let pending = context.hub.pending.is(super::PENDING);
    context.hub.store.view(|c| {
        let revision = super::index::revision(c).map_err(|error| StoreError::on(c, error))?;
        let answer = context.hub.answers.get_or_compute(
            super::AREA.id,
            tool,
            format!("{pending}|{key}"),
            revision,
            || compute(c, revision),
        )?;
        Ok((answer, revision))
    })
}

/// Offsets into a graph listing, bound to the graph's revision.
pub fn graph_offsets(
    context: &ToolContext,
    connection: &Connection,
    tool: &str,
    query: impl std::fmt::Debug,
) -> Result<Offsets, ToolError> {
    let revision =
        super::index::revision(connection).map_err(|error| StoreError::on(connection, error))?;
    Ok(Offsets::new(&context.hub.cursors, tool, query, revision))
}

// ---------------------------------------------------------------- index

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexInput {}

pub struct GraphIndex;

impl Tool for GraphIndex {
    type Input = IndexInput;
    type Output = IndexSummary;
    const SPEC: ToolSpec = spec(
        "cos_graph_index",
        "Indexes new and changed files (Python, Rust, TypeScript, JavaScript, Go, Markdown) into the graph as git \
         sees them, resolving imports, calls, bases and links across files.",
    ).writing(false, true)
    // `cos serve` and `cos mcp` index at start and follow saves
    .for_upkeep();

    fn run(context: &ToolContext, _input: IndexInput) -> Result<Answer<IndexSummary>, ToolError> {
        let hub = context.hub;
        let progress = context.progress;
        let summary = index::index(
            &hub.store,
            &hub.config.repo_root,
            &|files| progress.total(files),
            &|| progress.advance(),
        )?;
        if summary.parsed + summary.removed > 0 {
            // an index run can write much of the database: let the log restart small
            hub.store.checkpoint()?;
        }
        Ok(Answer::from(summary))
    }
}

// ---------------------------------------------------------------- search

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct GraphSearchInput {
    /// Words of a symbol, file or heading name (prefix match).
    #[schema(format = "cos-not-blank")]
    #[param(format = "cos-not-blank")]
    pub query: String,
    #[schema(schema_with = node_kind)]
    #[param(schema_with = node_kind)]
    pub kind: Option<String>,
    /// 1 to 200, default 20.
    #[schema(minimum = 1, maximum = 200)]
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
    /// A previous answer's `next_cursor`: the results after it.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SearchResults {
    pub results: Vec<GraphNode>,
    pub count: u64,
    /// Pass back as `cursor` for the results after these; null when none remain.
    pub next_cursor: Option<String>,
}

pub struct GraphSearch;

impl Tool for GraphSearch {
    type Input = GraphSearchInput;
    type Output = SearchResults;
    const SPEC: ToolSpec = spec(
        "cos_graph_search",
        "Finds graph nodes (symbols, files, folders, headings) by name.",
    );

    fn run(
        context: &ToolContext,
        input: GraphSearchInput,
    ) -> Result<Answer<SearchResults>, ToolError> {
        let limit = in_range("limit", input.limit, 20, 1, 200)?;
        if let Some(kind) = input.kind.as_deref() {
            check_node_kind("kind", kind)?;
        }
        if crate::tools::text::is_blank(&input.query) {
            return Err(ToolError::invalid(
                "query",
                "text with at least one visible character",
            ));
        }
        let wanted = input.query.trim();
        // no words to index (`->`, `==`): names holding it as written instead
        let words = fts_query(wanted).map_or(records::NameMatch::Holding(wanted), |query| {
            records::NameMatch::Words(query)
        });
        context.hub.store.view(|c| {
            let offsets = graph_offsets(context, c, Self::SPEC.name, (&input.query, &input.kind))?;
            let start = offsets.start("cursor", input.cursor.as_deref())?;
            let mut results =
                records::search_nodes(c, &words, input.kind.as_deref(), wanted, limit + 1, start)?;
            let more = results.len() > limit as usize;
            results.truncate(limit as usize);
            let mut meta = Map::new();
            add_freshness(&mut meta, c, context)?;
            Ok(Answer::new(SearchResults {
                count: results.len() as u64,
                next_cursor: offsets.next(start, results.len(), more),
                results,
            })
            .with_meta(meta)
            .with_page(offsets.page("/results", "/next_cursor", start)))
        })
    }
}

/// Every node kind the graph records.
pub const NODE_KINDS: &[&str] = &[
    "folder",
    "file",
    "module",
    "class",
    "interface",
    "function",
    "method",
    "variable",
    "doc_file",
    "doc_heading",
    "external",
];

fn node_kind() -> utoipa::openapi::schema::Object {
    crate::tools::schema::one_of(NODE_KINDS, "Only nodes of this kind.")
}

/// Refuses a kind the graph never records, naming the ones it does.
pub fn check_node_kind(field: &str, kind: &str) -> Result<(), ToolError> {
    if NODE_KINDS.contains(&kind) {
        return Ok(());
    }
    Err(ToolError::invalid(
        field,
        format!("one of {}, got {kind:?}", NODE_KINDS.join(", ")),
    )
    .with_details(
        json!({"field": field, "expected": "a node kind", "allowed": NODE_KINDS, "got": kind}),
    ))
}

// ---------------------------------------------------------------- resolving a node

/// How an input named a node: `direct`, `path_prefix` or `fuzzy_fts5`.
pub struct Resolved {
    pub id: i64,
    pub node: GraphNode,
    pub resolved_from: &'static str,
}

/// Resolves a uid, a path or a name: exact uid, then the file/doc/folder uid of
/// a path, then a full-text match on names. An ambiguous name returns the
/// candidates instead of guessing.
pub fn resolve_node(
    connection: &Connection,
    input: &str,
    field: &str,
) -> Result<Resolved, ToolError> {
    let lookup = |uid: &str| records::node_by_uid(connection, uid);
    if crate::tools::text::is_blank(input) {
        return Err(ToolError::invalid(field, "a node uid, a path or a name"));
    }
    let input = input.trim();
    if let Some((id, node)) = lookup(input)? {
        return Ok(Resolved {
            id,
            node,
            resolved_from: "direct",
        });
    }
    let path = input.trim_start_matches("./").trim_end_matches('/');
    for prefix in ["code:file:", "doc:file:", "folder:"] {
        if let Some((id, node)) = lookup(&format!("{prefix}{path}"))? {
            return Ok(Resolved {
                id,
                node,
                resolved_from: "path_prefix",
            });
        }
    }
    let candidates: Vec<(i64, GraphNode)> = match fts_query(input) {
        Some(query) => records::nodes_matching(connection, &query, input)?,
        None => Vec::new(),
    };
    let exact: Vec<&(i64, GraphNode)> = candidates
        .iter()
        .filter(|(_, n)| n.label == input)
        .collect();
    let listed = |nodes: &[&(i64, GraphNode)]| {
        json!(nodes.iter().map(|(_, n)| n.uid.clone()).collect::<Vec<_>>())
    };
    match exact.as_slice() {
        [only] => Ok(Resolved { id: only.0, node: only.1.clone(), resolved_from: "fuzzy_fts5" }),
        [] if candidates.len() == 1 => {
            let (id, node) = candidates[0].clone();
            Ok(Resolved { id, node, resolved_from: "fuzzy_fts5" })
        }
        [] => Err(ToolError::from(
            ErrorBody::new(Category::NotFound, Code::E_NOT_FOUND, format!("no graph node matches {input:?}"))
                .with_details(json!({"field": field, "candidates": listed(&candidates.iter().collect::<Vec<_>>())})),
        )),
        several => {
            let total = records::count_named(connection, input)?.max(several.len());
            Err(ToolError::from(
                ErrorBody::new(
                    Category::Validation,
                    Code::E_AMBIGUOUS,
                    format!(
                        "{input:?} names {total} nodes; pass one of their uids ({} listed in details.candidates)",
                        several.len()
                    ),
                )
                .with_details(json!({"field": field, "count": total, "candidates": listed(several)})),
            ))
        }
    }
}

// ---------------------------------------------------------------- resolve

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ResolveInput {
    /// A node uid, a repository path, or a symbol name.
    #[schema(format = "cos-not-blank")]
    #[param(format = "cos-not-blank")]
    pub query: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ResolveAnswer {
    pub node: GraphNode,
}

pub struct GraphResolve;

impl Tool for GraphResolve {
    type Input = ResolveInput;
    type Output = ResolveAnswer;
    const SPEC: ToolSpec = spec(
        "cos_graph_resolve",
        "Turns a uid, path or name into one node (exact uid, then path, then full-text on names). An ambiguous \
         name answers E_AMBIGUOUS with candidates; none found, NOT_FOUND with the closest.",
    );

    fn run(context: &ToolContext, input: ResolveInput) -> Result<Answer<ResolveAnswer>, ToolError> {
        context.hub.store.view(|c| {
            let found = resolve_node(c, &input.query, "query")?;
            let mut meta = Map::new();
            meta.insert("resolved_from".into(), json!(found.resolved_from));
            add_freshness(&mut meta, c, context)?;
            Ok(Answer::new(ResolveAnswer { node: found.node }).with_meta(meta))
        })
    }
}

// ---------------------------------------------------------------- context

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Edges into the node (who calls, imports, contains it).
    In,
    /// Edges out of the node (what it calls, imports, contains).
    Out,
    #[default]
    Both,
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ContextInput {
    /// A node uid, a repository path, or a symbol name.
    #[schema(format = "cos-not-blank")]
    #[param(format = "cos-not-blank")]
    pub uid: String,
    #[param(inline)]
    pub direction: Option<Direction>,
    /// Hops to follow, 1 to 3 (default 1).
    #[schema(minimum = 1, maximum = 3)]
    #[param(minimum = 1, maximum = 3)]
    pub depth: Option<u32>,
    /// Neighbours to return at most, 1 to 2,000 (default 200).
    #[schema(minimum = 1, maximum = 2000)]
    #[param(minimum = 1, maximum = 2000)]
    pub limit: Option<u32>,
    /// A previous answer's `next_cursor`: the neighbours after it.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Neighbour {
    pub node: GraphNode,
    /// The edge's kind: contains, imports, calls, inherits_from, implements, links_to, cites_heading.
    pub edge: String,
    /// `in` when the edge points at the node nearer the root, `out` otherwise.
    pub direction: String,
    pub depth: u32,
    /// `resolved` (by file, import, path or the object's type), `dispatch` (an override a call
    /// through a base type may run), `name` (by name only), `external` (outside modules).
    pub confidence: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Context {
    pub node: GraphNode,
    pub neighbours: Vec<Neighbour>,
    pub count: u64,
    /// Pass back as `cursor` for the neighbours after these; null when none remain.
    pub next_cursor: Option<String>,
}

pub struct GraphContext;

impl Tool for GraphContext {
    type Input = ContextInput;
    type Output = Shared<Context>;
    const SPEC: ToolSpec = spec(
        "cos_graph_context",
        "A node and its neighbours by direction and depth: what contains, imports, calls or links to it, and what it does. \
         Accepts a uid, a path or a name (meta.resolved_from says which matched).",
    );

    fn run(
        context: &ToolContext,
        input: ContextInput,
    ) -> Result<Answer<Shared<Context>>, ToolError> {
        let depth = in_range("depth", input.depth, 1, 1, 3)?;
        let limit = in_range("limit", input.limit, 200, 1, 2000)? as usize;
        let direction = input.direction.unwrap_or_default();
        let key = format!("{input:?}");
        let listing = (&input.uid, direction, depth);
        let offsets =
            |revision| Offsets::new(&context.hub.cursors, Self::SPEC.name, listing, revision);
        let (answer, revision) =
            cached_graph_answer(context, Self::SPEC.name, key, |c, revision| {
                let start = offsets(revision).start("cursor", input.cursor.as_deref())?;
                let root = resolve_node(c, &input.uid, "uid")?;
                let mut neighbours =
                    walk_neighbours(c, root.id, direction, depth, start + limit + 1, None)?;
                let more = neighbours.len() > start + limit;
                neighbours.truncate(start + limit);
                let neighbours = neighbours.split_off(start.min(neighbours.len()));
                let mut meta = Map::new();
                meta.insert("resolved_from".into(), json!(root.resolved_from));
                add_freshness(&mut meta, c, context)?;
                Ok(Answer::new(Context {
                    node: root.node,
                    count: neighbours.len() as u64,
                    next_cursor: offsets(revision).next(start, neighbours.len(), more),
                    neighbours,
                })
                .with_meta(meta))
            })?;
        // opened again for the page: a cached hit computed nothing (opening is one hash)
        let start = offsets(revision).start("cursor", input.cursor.as_deref())?;
        Ok(answer.with_page(offsets(revision).page("/neighbours", "/next_cursor", start)))
    }
}

/// Breadth-first from `root` along edges in `direction` (only of `kinds` when given),
/// up to `depth` hops and `limit` nodes; each node once, at its nearest depth.
pub fn walk_neighbours(
    connection: &Connection,
    root: i64,
    direction: Direction,
    depth: u32,
    limit: usize,
    kinds: Option<&[&str]>,
) -> Result<Vec<Neighbour>, ToolError> {
    Ok(
        walk_with_ids(connection, root, direction, depth, limit, kinds)?
            .into_iter()
            .map(|(_, neighbour)| neighbour)
            .collect(),
    )
}

/// [`walk_neighbours`], each neighbour with its node's row id.
pub fn walk_with_ids(
    connection: &Connection,
    root: i64,
    direction: Direction,
    depth: u32,
    limit: usize,
    kinds: Option<&[&str]>,
) -> Result<Vec<(i64, Neighbour)>, ToolError> {
    let mut seen: HashSet<i64> = HashSet::from([root]);
    let mut frontier: VecDeque<(i64, u32)> = VecDeque::from([(root, 0)]);
    let mut found = Vec::new();
    while let Some((id, level)) = frontier.pop_front() {
        if level >= depth {
            continue;
        }
        let mut sides = Vec::new();
        if direction != Direction::In {
            sides.push(("out", true));
        }
        if direction != Direction::Out {
            sides.push(("in", false));
        }
        for (side, outgoing) in sides {
            for (next, node, edge, confidence) in records::neighbours(connection, id, outgoing)? {
                if kinds.is_some_and(|kinds| !kinds.contains(&edge.as_str())) {
                    continue;
                }
                if !seen.insert(next) {
                    continue;
                }
                if found.len() >= limit {
                    return Ok(found);
                }
                found.push((
                    next,
                    Neighbour {
                        node,
                        edge,
                        direction: side.to_string(),
                        depth: level + 1,
                        confidence,
                    },
                ));
                frontier.push_back((next, level + 1));
            }
        }
    }
    Ok(found)
}
