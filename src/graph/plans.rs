//! Tools that plan work over the graph: where a call chain leads and which
//! symbols look alike (the rename plan has a file of its own).

use super::records;
use serde::{Deserialize, Serialize};
use serde_json::{Map, json};
use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use utoipa::ToSchema;

use super::tools::{GraphNode, add_freshness, graph_offsets, in_range, resolve_node, spec};
use crate::tools::cursor::{named_pages, narrowing};
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

// ---------------------------------------------------------------- trace

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceInput {
    /// Where the chain starts: a function or method uid, a path or a name.
    #[schema(format = "cos-not-blank")]
    pub uid: String,
    /// Calls to follow, 1 to 8 (default 4).
    #[schema(minimum = 1, maximum = 8)]
    pub depth: Option<u32>,
    /// Steps to return at most, 1 to 1,000 (default 200).
    #[schema(minimum = 1, maximum = 1000)]
    pub max_steps: Option<u32>,
    /// A list's `next_cursors` entry: that list alone, after what was seen.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TraceStep {
    pub node: GraphNode,
    /// Calls from the start to here.
    pub depth: u32,
    /// The caller that led here.
    pub from: String,
    /// `resolved`, `name` or `external`.
    pub confidence: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TraceBranch {
    pub uid: String,
    /// Distinct callees: where the chain forks.
    pub callees: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Trace {
    pub node: GraphNode,
    pub steps: Vec<TraceStep>,
    pub branches: Vec<TraceBranch>,
    /// Modules outside the repository the chain calls into.
    pub external_targets: Vec<String>,
    pub count: u64,
    /// By list, the cursor for what a trimmed answer left out.
    pub next_cursors: BTreeMap<String, String>,
}

pub struct GraphTrace;

impl Tool for GraphTrace {
    type Input = TraceInput;
    type Output = Trace;
    const SPEC: ToolSpec = spec(
        "cos_graph_trace",
        "The forward call chain from a function: each step with its caller and depth, the points where it branches, and \
         the external modules it reaches.",
    );

    fn run(context: &ToolContext, input: TraceInput) -> Result<Answer<Trace>, ToolError> {
        let depth = in_range("depth", input.depth, 4, 1, 8)?;
        let max_steps = in_range("max_steps", input.max_steps, 200, 1, 1000)? as usize;
        context.hub.store.view(|c| {
            let start = resolve_node(c, &input.uid, "uid")?;
            let mut seen = HashSet::from([start.id]);
            let mut frontier = VecDeque::from([(start.id, start.node.uid.clone(), 0u32)]);
            let mut steps = Vec::new();
            let mut branches = Vec::new();
            let mut external_targets = BTreeSet::new();
            let mut truncated = false;
            while let Some((id, uid, level)) = frontier.pop_front() {
                if level >= depth {
                    continue;
                }
                let callees = records::callees(c, id)?;
                if callees.len() > 1 {
                    branches.push(TraceBranch {
                        uid: uid.clone(),
                        callees: callees.iter().map(|(_, n, _)| n.uid.clone()).collect(),
                    });
                }
                for (next, node, confidence) in callees {
                    if node.kind == "external" {
                        external_targets.insert(node.label.clone());
                    }
                    if !seen.insert(next) {
                        continue;
                    }
                    if steps.len() >= max_steps {
                        truncated = true;
                        break;
                    }
                    if node.kind != "external" {
                        frontier.push_back((next, node.uid.clone(), level + 1));
                    }
                    steps.push(TraceStep {
                        node,
                        depth: level + 1,
                        from: uid.clone(),
                        confidence,
                    });
                }
            }
            let mut meta = Map::new();
            meta.insert("resolved_from".into(), json!(start.resolved_from));
            meta.insert(
                "semantic_scope".into(),
                json!(format!("forward_calls_depth_{depth}")),
            );
            meta.insert("steps_capped".into(), json!(truncated));
            add_freshness(&mut meta, c, context)?;
            let offsets =
                graph_offsets(context, c, Self::SPEC.name, (&input.uid, depth, max_steps))?;
            let from = offsets.start_in("cursor", input.cursor.as_deref())?;
            let names = ["steps", "branches", "external_targets"];
            let keep = narrowing("cursor", &names, from.as_ref())?;
            let mut external_targets: Vec<String> = external_targets.into_iter().collect();
            let count = steps.len() as u64;
            let starts = [
                keep[0].apply(&mut steps),
                keep[1].apply(&mut branches),
                keep[2].apply(&mut external_targets),
            ];
            let answer = Answer::new(Trace {
                node: start.node,
                count,
                steps,
                branches,
                external_targets,
                next_cursors: BTreeMap::new(),
            });
            let pages = named_pages(&offsets, "", &names, &starts);
            Ok(pages
                .into_iter()
                .fold(answer, Answer::with_page)
                .with_meta(meta))
        })
    }
}

// ---------------------------------------------------------------- similar

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SimilarInput {
    #[schema(format = "cos-not-blank")]
    pub uid: String,
    /// 1 to 50 (default 10).
    #[schema(minimum = 1, maximum = 50)]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SimilarSymbol {
    pub node: GraphNode,
    /// 0 to 1: the mean of the two scores below.
    pub score: f64,
    /// Jaccard overlap of what both call, are called by, extend or contain.
    pub structural: f64,
    /// Jaccard overlap of the words in both names (snake_case and camelCase split).
    pub lexical: f64,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Similar {
    pub node: GraphNode,
    pub results: Vec<SimilarSymbol>,
    pub count: u64,
}

/// The words of an identifier: `parse_HTTPRequest2` → parse, http, request2.
pub fn name_words(name: &str) -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (index, c) in chars.iter().enumerate() {
        let next_is_lower = chars.get(index + 1).is_some_and(|n| n.is_lowercase());
        let boundary = c.is_uppercase()
            && !current.is_empty()
            && (current
                .chars()
                .last()
                .is_some_and(|p| p.is_lowercase() || p.is_ascii_digit())
                || next_is_lower);
        if !c.is_alphanumeric() || boundary {
            if !current.is_empty() {
                words.insert(current.to_lowercase());
                current.clear();
            }
            if !c.is_alphanumeric() {
                continue;
            }
        }
        current.push(*c);
    }
    if !current.is_empty() {
        words.insert(current.to_lowercase());
    }
    words
}

fn jaccard<T: Ord>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    a.intersection(b).count() as f64 / a.union(b).count() as f64
}

pub struct GraphSimilar;

impl Tool for GraphSimilar {
    type Input = SimilarInput;
    type Output = Similar;
    const SPEC: ToolSpec = spec(
        "cos_graph_similar",
        "Symbols like this one, by structure (they call, are called by or extend the same things) and by \
         name (shared words), best first.",
    );

    fn run(context: &ToolContext, input: SimilarInput) -> Result<Answer<Similar>, ToolError> {
        let limit = in_range("limit", input.limit, 10, 1, 50)? as usize;
        context.hub.store.view(|c| {
            let target = resolve_node(c, &input.uid, "uid")?;
            let family = kind_family(&target.node.kind);
            let own = records::neighbour_keys(c, target.id)?;
            let own_words = name_words(&target.node.label);
            let mut candidates: BTreeMap<i64, GraphNode> = BTreeMap::new();
            for (id, node) in records::structural_candidates(c, target.id)?
                .into_iter()
                .chain(records::lexical_candidates(c, &own_words)?)
            {
                if id != target.id && kind_family(&node.kind) == family {
                    candidates.insert(id, node);
                }
            }
            let mut results = Vec::new();
            for (id, node) in candidates {
                let structural = jaccard(&own, &records::neighbour_keys(c, id)?);
                let lexical = jaccard(&own_words, &name_words(&node.label));
                let score = (structural + lexical) / 2.0;
                if score > 0.0 {
                    let round = |x: f64| (x * 1000.0).round() / 1000.0;
                    results.push(SimilarSymbol {
                        node,
                        score: round(score),
                        structural: round(structural),
                        lexical: round(lexical),
                    });
                }
            }
            results.sort_by(|a, b| {
                b.score
                    .total_cmp(&a.score)
                    .then_with(|| a.node.uid.cmp(&b.node.uid))
            });
            results.truncate(limit);
            let mut meta = Map::new();
            meta.insert("resolved_from".into(), json!(target.resolved_from));
            meta.insert(
                "method".into(),
                json!("jaccard(neighbours) + jaccard(name words), no model"),
            );
            add_freshness(&mut meta, c, context)?;
            Ok(Answer::new(Similar {
                node: target.node,
                count: results.len() as u64,
                results,
            })
            .with_meta(meta))
        })
    }
}

fn kind_family(kind: &str) -> &str {
    match kind {
        "function" | "method" => "callable",
        "class" | "interface" => "type",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_snake_and_camel_case() {
        let words = |s: &str| name_words(s).into_iter().collect::<Vec<_>>();
        assert_eq!(words("parse_HTTPRequest"), ["http", "parse", "request"]);
        assert_eq!(words("loadTasks"), ["load", "tasks"]);
        assert_eq!(words("__init__"), ["init"]);
    }
}
