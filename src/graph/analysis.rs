//! Questions over the graph: impact, references, paths and exports (its
//! health is `doctor.rs`).

use super::records;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use utoipa::ToSchema;

use super::tools::{
    Direction, GraphNode, Neighbour, add_freshness, add_unresolved, cached_graph_answer,
    graph_offsets, in_range, resolve_node, spec, walk_neighbours, walk_with_ids,
};
use crate::envelope::{Category, Code, ErrorBody};
use crate::tools::cache::Shared;
use crate::tools::cursor::{named_pages, narrowing};
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

/// Every edge kind the graph records.
pub const EDGE_KINDS: &[&str] = &[
    "contains",
    "declares",
    "imports",
    "calls",
    "inherits_from",
    "implements",
    "uses_type",
    "links_to",
    "cites_heading",
];
/// Edges along which a change spreads to dependents (not the containment spine).
pub(super) const DEPENDENCY_KINDS: &[&str] = &[
    "calls",
    "imports",
    "inherits_from",
    "implements",
    "uses_type",
    "links_to",
    "cites_heading",
];

fn edge_kinds() -> utoipa::openapi::schema::Array {
    crate::tools::schema::list_of(
        EDGE_KINDS,
        "Edge kinds into the node; empty picks the node kind's defaults.",
    )
}

fn export_edge_kinds() -> utoipa::openapi::schema::Array {
    crate::tools::schema::list_of(EDGE_KINDS, "Edge kinds to follow out (default: contains).")
}

fn check_kinds<'a>(field: &str, kinds: &'a [String]) -> Result<Vec<&'a str>, ToolError> {
    kinds
        .iter()
        .map(|kind| {
            if EDGE_KINDS.contains(&kind.as_str()) {
                Ok(kind.as_str())
            } else {
                Err(ToolError::from(
                    ErrorBody::new(
                        Category::Validation,
                        Code::E_ARGUMENT,
                        format!(
                            "{field}: unknown edge kind {kind:?}; one of {}",
                            EDGE_KINDS.join(", ")
                        ),
                    )
                    .with_details(json!({"field": field, "allowed": EDGE_KINDS, "got": kind})),
                ))
            }
        })
        .collect()
}

pub(super) fn meta(entries: &[(&str, Value)]) -> Map<String, Value> {
    entries
        .iter()
        .map(|(key, value)| (key.to_string(), value.clone()))
        .collect()
}

// ---------------------------------------------------------------- impact

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImpactInput {
    /// A node uid, a repository path, or a symbol name.
    #[schema(format = "cos-not-blank")]
    pub uid: String,
    /// Hops of dependents to follow, 1 to 6 (default 3).
    #[schema(minimum = 1, maximum = 6)]
    pub depth: Option<u32>,
    /// Nodes to visit at most, 1 to 5,000 (default 500).
    #[schema(minimum = 1, maximum = 5000)]
    pub visit_limit: Option<u32>,
    /// A tier's `next_cursors` entry: that tier alone, after what was seen.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ImpactTiers {
    /// Direct dependents (one hop): they call, import or extend the node.
    pub will_break: Vec<Neighbour>,
    /// Two hops away.
    pub should_review: Vec<Neighbour>,
    /// Three hops or more.
    pub context: Vec<Neighbour>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Impact {
    pub node: GraphNode,
    pub tiers: ImpactTiers,
    pub count: u64,
    /// By tier, the cursor for the dependents a trimmed answer left out.
    pub next_cursors: BTreeMap<String, String>,
}

pub struct GraphImpact;

impl Tool for GraphImpact {
    type Input = ImpactInput;
    type Output = Impact;
    const SPEC: ToolSpec = spec(
        "cos_graph_impact",
        "What depends on a node, transitively (calls, imports, inheritance, links), in tiers will_break (1 hop), \
         should_review (2) and context (3+); meta.semantic_scope says the depth.",
    );

    fn run(context: &ToolContext, input: ImpactInput) -> Result<Answer<Impact>, ToolError> {
        let depth = in_range("depth", input.depth, 3, 1, 6)?;
        let limit = in_range("visit_limit", input.visit_limit, 500, 1, 5000)? as usize;
        context.hub.store.view(|c| {
            let root = resolve_node(c, &input.uid, "uid")?;
            let found = walk_neighbours(
                c,
                root.id,
                Direction::In,
                depth,
                limit,
                Some(DEPENDENCY_KINDS),
            )?;
            let count = found.len() as u64;
            let mut tiers = ImpactTiers {
                will_break: Vec::new(),
                should_review: Vec::new(),
                context: Vec::new(),
            };
            for neighbour in found {
                match neighbour.depth {
                    1 => tiers.will_break.push(neighbour),
                    2 => tiers.should_review.push(neighbour),
                    _ => tiers.context.push(neighbour),
                }
            }
            let offsets = graph_offsets(context, c, Self::SPEC.name, (&input.uid, depth, limit))?;
            let from = offsets.start_in("cursor", input.cursor.as_deref())?;
            let names = ["will_break", "should_review", "context"];
            let keep = narrowing("cursor", &names, from.as_ref())?;
            let starts = [
                keep[0].apply(&mut tiers.will_break),
                keep[1].apply(&mut tiers.should_review),
                keep[2].apply(&mut tiers.context),
            ];
            let pages = named_pages(&offsets, "tiers/", &names, &starts);
            let mut meta = meta(&[
                ("resolved_from", json!(root.resolved_from)),
                ("semantic_scope", json!(format!("transitive_depth_{depth}"))),
            ]);
            add_freshness(&mut meta, c, context)?;
            add_unresolved(&mut meta, c, &root.node.label)?;
            Ok(pages
                .into_iter()
                .fold(
                    Answer::new(Impact {
                        node: root.node,
                        tiers,
                        count,
                        next_cursors: BTreeMap::new(),
                    }),
                    Answer::with_page,
                )
                .with_meta(meta))
        })
    }
}

// ---------------------------------------------------------------- references

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReferencesInput {
    #[schema(format = "cos-not-blank")]
    pub uid: String,
    #[serde(default)]
    #[schema(schema_with = edge_kinds)]
    pub kinds: Vec<String>,
    /// 1 to 1,000 (default 100).
    #[schema(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    /// A previous answer's `next_cursor`: the references after it.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct References {
    pub node: GraphNode,
    pub references: Vec<Neighbour>,
    pub count: u64,
    /// References in all, before the limit.
    pub total_count: u64,
    /// Pass back as `cursor` for the references after these; null when none remain.
    pub next_cursor: Option<String>,
}

/// The edges that count as "references" to a node of this kind.
fn default_kinds(node_kind: &str) -> &'static [&'static str] {
    match node_kind {
        "function" | "method" => &["calls"],
        "class" | "interface" => &["inherits_from", "implements", "calls", "uses_type"],
        "file" | "module" | "external" => &["imports"],
        "doc_file" => &["links_to"],
        "doc_heading" => &["cites_heading"],
        _ => &["contains"],
    }
}

pub struct GraphReferences;

impl Tool for GraphReferences {
    type Input = ReferencesInput;
    type Output = References;
    const SPEC: ToolSpec = spec(
        "cos_graph_references",
        "Who refers to a node: incoming edges of the given kinds, or its kind's defaults (function: calls; class: \
         inherits_from, implements, calls; file: imports; doc: links_to, cites_heading).",
    );

    fn run(context: &ToolContext, input: ReferencesInput) -> Result<Answer<References>, ToolError> {
        let limit = in_range("limit", input.limit, 100, 1, 1000)? as usize;
        let asked = check_kinds("kinds", &input.kinds)?;
        context.hub.store.view(|c| {
            let root = resolve_node(c, &input.uid, "uid")?;
            let picked = asked.is_empty();
            let kinds: Vec<&str> = if picked {
                default_kinds(&root.node.kind).to_vec()
            } else {
                asked.clone()
            };
            let offsets = graph_offsets(context, c, Self::SPEC.name, (&input.uid, &kinds))?;
            let start = offsets.start("cursor", input.cursor.as_deref())?;
            let mut all = walk_neighbours(c, root.id, Direction::In, 1, usize::MAX, Some(&kinds))?;
            let total_count = all.len() as u64;
            all.truncate(start + limit);
            let all = all.split_off(start.min(all.len()));
            let more = start + all.len() < total_count as usize;
            let mut meta = meta(&[
                ("resolved_from", json!(root.resolved_from)),
                ("default_kinds_picked", json!(picked)),
                ("node_kind", json!(root.node.kind)),
                ("kinds", json!(kinds)),
            ]);
            add_freshness(&mut meta, c, context)?;
            add_unresolved(&mut meta, c, &root.node.label)?;
            Ok(Answer::new(References {
                node: root.node,
                count: all.len() as u64,
                next_cursor: offsets.next(start, all.len(), more),
                references: all,
                total_count,
            })
            .with_meta(meta)
            .with_page(offsets.page("/references", "/next_cursor", start)))
        })
    }
}

// ---------------------------------------------------------------- path

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PathInput {
    #[schema(format = "cos-not-blank")]
    pub source: String,
    #[schema(format = "cos-not-blank")]
    pub target: String,
    /// 1 to 10 (default 5).
    #[schema(minimum = 1, maximum = 10)]
    pub max_hops: Option<u32>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PathStep {
    pub node: GraphNode,
    /// The edge that led here from the previous step, and whether it was followed forwards.
    pub edge: Option<String>,
    pub forward: Option<bool>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PathAnswer {
    pub found: bool,
    pub hops: Option<u32>,
    pub path: Vec<PathStep>,
}

pub struct GraphPath;

impl Tool for GraphPath {
    type Input = PathInput;
    type Output = PathAnswer;
    const SPEC: ToolSpec = spec(
        "cos_graph_path",
        "The shortest path between two nodes over any edges (followed either way), up to max_hops.",
    )
    // a rare question beside context, impact and trace, which answer the everyday ones
    .for_upkeep();

    fn run(context: &ToolContext, input: PathInput) -> Result<Answer<PathAnswer>, ToolError> {
        let max_hops = in_range("max_hops", input.max_hops, 5, 1, 10)?;
        context.hub.store.view(|c| {
            let source = resolve_node(c, &input.source, "source")?;
            let target = resolve_node(c, &input.target, "target")?;
            let mut meta = meta(&[
                ("source_resolved_from", json!(source.resolved_from)),
                ("target_resolved_from", json!(target.resolved_from)),
            ]);
            add_freshness(&mut meta, c, context)?;
            let Some(chain) = shortest_path(c, source.id, target.id, max_hops)? else {
                return Ok(Answer::new(PathAnswer {
                    found: false,
                    hops: None,
                    path: Vec::new(),
                })
                .with_meta(meta));
            };
            let mut path = vec![PathStep {
                node: source.node,
                edge: None,
                forward: None,
            }];
            for (id, edge, forward) in chain {
                path.push(PathStep {
                    node: records::node_by_id(c, id)?,
                    edge: Some(edge),
                    forward: Some(forward),
                });
            }
            Ok(Answer::new(PathAnswer {
                found: true,
                hops: Some(path.len() as u32 - 1),
                path,
            })
            .with_meta(meta))
        })
    }
}

/// (node reached, edge kind, followed forwards)
type Step = (i64, String, bool);

/// Breadth-first over edges in both directions; the steps after `from`, each with its edge.
fn shortest_path(
    connection: &Connection,
    from: i64,
    to: i64,
    max_hops: u32,
) -> Result<Option<Vec<Step>>, ToolError> {
    if from == to {
        return Ok(Some(Vec::new()));
    }
    let mut previous: HashMap<i64, Step> = HashMap::new();
    let mut frontier: VecDeque<(i64, u32)> = VecDeque::from([(from, 0)]);
    let mut seen = HashSet::from([from]);
    while let Some((id, hops)) = frontier.pop_front() {
        if hops >= max_hops {
            continue;
        }
        for forward in [true, false] {
            for (next, kind) in records::edge_ends(connection, id, forward)? {
                if !seen.insert(next) {
                    continue;
                }
                previous.insert(next, (id, kind, forward));
                if next == to {
                    let mut chain = Vec::new();
                    let mut at = to;
                    while at != from {
                        let (before, kind, forward) = previous[&at].clone();
                        chain.push((at, kind, forward));
                        at = before;
                    }
                    chain.reverse();
                    return Ok(Some(chain));
                }
                frontier.push_back((next, hops + 1));
            }
        }
    }
    Ok(None)
}

// ---------------------------------------------------------------- export

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportInput {
    /// Where to start (default: the repository's root folder).
    #[schema(format = "cos-not-blank")]
    pub root: Option<String>,
    #[serde(default)]
    #[schema(schema_with = export_edge_kinds)]
    pub edge_types: Vec<String>,
    /// 1 to 10 (default 3).
    #[schema(minimum = 1, maximum = 10)]
    pub max_hops: Option<u32>,
    /// 1 to 2,000 (default 500). Left out, an agent gets the best-connected
    /// nodes that fit its budget.
    #[schema(minimum = 1, maximum = 2000)]
    pub max_nodes: Option<u32>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ExportEdge {
    pub source: String,
    pub target: String,
    pub kind: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Export {
    pub root: String,
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<ExportEdge>,
}

pub struct GraphExport;

impl Tool for GraphExport {
    type Input = ExportInput;
    type Output = Shared<Export>;
    const SPEC: ToolSpec = spec(
        "cos_graph_export",
        "A subgraph as {nodes, edges}: from root, outwards along edge_types (default contains), up to max_hops and \
         max_nodes (hard cap 2,000). Every edge joins two exported nodes.",
    )
    // a bulk export for drawing the graph: a coding agent asks context or impact
    .for_upkeep();

    fn run(context: &ToolContext, input: ExportInput) -> Result<Answer<Shared<Export>>, ToolError> {
        let max_hops = in_range("max_hops", input.max_hops, 3, 1, 10)?;
        let max_nodes = in_range("max_nodes", input.max_nodes, 500, 1, 2000)? as usize;
        let asked = check_kinds("edge_types", &input.edge_types)?;
        let kinds: Vec<&str> = if asked.is_empty() {
            vec!["contains"]
        } else {
            asked
        };
        let cached =
            cached_graph_answer(context, Self::SPEC.name, format!("{input:?}"), |c, _| {
                let root = resolve_node(c, input.root.as_deref().unwrap_or("folder:"), "root")?;
                let found = walk_with_ids(
                    c,
                    root.id,
                    Direction::Out,
                    max_hops,
                    max_nodes.saturating_sub(1),
                    Some(&kinds),
                )?;
                let mut members = vec![(root.id, root.node.clone())];
                members.extend(found.into_iter().map(|(id, n)| (id, n.node)));
                let edges = edges_among(c, &members, &kinds)?;
                let nodes = members.into_iter().map(|(_, node)| node).collect();
                let mut meta = meta(&[
                    ("resolved_from", json!(root.resolved_from)),
                    ("edge_types", json!(kinds)),
                ]);
                add_freshness(&mut meta, c, context)?;
                Ok(Answer::new(Export {
                    root: root.node.uid,
                    nodes,
                    edges,
                })
                .with_meta(meta))
            })?;
        // an agent that asks for a size keeps the graph tier; by default the
        // answer must fit an agent's context (Claude Code refuses over 25,000 tokens)
        Ok(if input.max_nodes.is_some() {
            cached.0
        } else {
            cached.0.within_agent_budget()
        })
    }
}

/// Edges of `kinds` whose both ends are among `members` (row id, node).
fn edges_among(
    connection: &Connection,
    members: &[(i64, GraphNode)],
    kinds: &[&str],
) -> Result<Vec<ExportEdge>, ToolError> {
    let uids: HashMap<i64, &str> = members
        .iter()
        .map(|(id, n)| (*id, n.uid.as_str()))
        .collect();
    let mut edges = Vec::new();
    for (id, node) in members {
        // by source id: a prefix of the edges' primary key, no join
        for (target, kind) in records::edge_ends(connection, *id, true)? {
            if let Some(target) = uids.get(&target)
                && kinds.contains(&kind.as_str())
            {
                edges.push(ExportEdge {
                    source: node.uid.clone(),
                    target: target.to_string(),
                    kind,
                });
            }
        }
    }
    Ok(edges)
}
