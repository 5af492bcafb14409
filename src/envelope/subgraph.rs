//! The graph tier: a `{nodes, edges}` body keeps its best-connected nodes and
//! only the edges between kept nodes, so what survives is a coherent subgraph.

use super::measure::weight;
use super::plan::{array_weight, digits};
use super::report::Report;
use serde_json::{Map, Value};
use std::cmp::Reverse;
use std::collections::HashMap;

/// True for `{nodes: [{uid, ..}], edges: [{source, target, ..}]}` bodies.
pub fn is_graph_shaped(data: &Map<String, Value>) -> bool {
    let (Some(Value::Array(nodes)), Some(Value::Array(edges))) =
        (data.get("nodes"), data.get("edges"))
    else {
        return false;
    };
    nodes
        .iter()
        .all(|node| node.get("uid").is_some_and(Value::is_string))
        && edges.iter().all(|edge| {
            edge.get("source").is_some_and(Value::is_string)
                && edge.get("target").is_some_and(Value::is_string)
        })
}

/// Weight of `,"<key>":<digits of n>`: one marker member inside a non-empty object.
fn member_weight(key: &str, value: usize) -> usize {
    1 + weight(key) + 1 + digits(value)
}

/// The largest cap in `floor..=max` for which `fits` holds (monotone: smaller caps fit
/// more easily); `floor` when none does.
pub fn largest_fitting_cap(floor: usize, max: usize, fits: impl Fn(usize) -> bool) -> usize {
    if max <= floor || fits(max) {
        return max.max(floor);
    }
    let (mut low, mut high) = (floor, max);
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if fits(mid) { low = mid } else { high = mid - 1 }
    }
    low
}

/// The graph tier: keep the top-K nodes by degree and only edges between kept nodes.
pub fn trim(data: &mut Map<String, Value>, outside: usize, limit: usize, report: &mut Report) {
    let plan = {
        let (Some(Value::Array(nodes)), Some(Value::Array(edges))) =
            (data.get("nodes"), data.get("edges"))
        else {
            return;
        };
        SubgraphPlan::of(data, nodes, edges)
    };
    let node_count = plan.node_weights_by_rank.len();
    let edge_count = plan.edge_need.len();
    let markers_weight = member_weight("truncated_subgraph", 0)
        + 3
        + member_weight("truncated_nodes_from", node_count)
        + member_weight("truncated_nodes_to", node_count)
        + member_weight("truncated_edges_from", edge_count)
        + member_weight("truncated_edges_to", edge_count);
    let base = plan.fixed + outside + markers_weight;
    if base - markers_weight + plan.weight_at(node_count) <= limit {
        return;
    }
    let keep = largest_fitting_cap(0, node_count, |k| base + plan.weight_at(k) <= limit);
    let kept_edges = plan.kept_edges(keep);
    if keep == node_count && kept_edges == edge_count {
        return;
    }
    if let Some(Value::Array(nodes)) = data.get_mut("nodes") {
        let mut index = 0;
        nodes.retain(|_| {
            let kept = plan.rank[index] < keep;
            index += 1;
            kept
        });
    }
    if let Some(Value::Array(edges)) = data.get_mut("edges") {
        let mut index = 0;
        edges.retain(|_| {
            let kept = plan.edge_need[index] <= keep;
            index += 1;
            kept
        });
    }
    if data.get("count").and_then(Value::as_u64) == Some(node_count as u64) {
        data.insert("count".to_string(), Value::from(keep));
    }
    report.mark("truncated_subgraph".to_string(), Value::Bool(true));
    report.mark_list("nodes", node_count, keep);
    report.mark_list("edges", edge_count, kept_edges);
}

/// Everything needed to price "keep the K best-connected nodes" for any K in O(1).
struct SubgraphPlan {
    fixed: usize,
    /// rank of each node in original order (0 = highest degree)
    rank: Vec<usize>,
    node_weights_by_rank: Vec<usize>,
    node_prefix: Vec<usize>,
    /// smallest K that keeps each edge (usize::MAX for an edge to an unknown node)
    edge_need: Vec<usize>,
    /// total weight and count of edges kept at each K
    edge_prefix: Vec<(usize, usize)>,
}

impl SubgraphPlan {
    fn of(data: &Map<String, Value>, nodes: &[Value], edges: &[Value]) -> SubgraphPlan {
        let mut fixed = 2 + data.len().saturating_sub(1);
        for (key, value) in data {
            fixed += weight(key.as_str()) + 1;
            if key != "nodes" && key != "edges" {
                fixed += weight(value);
            }
        }
        let index: HashMap<&str, usize> = nodes
            .iter()
            .enumerate()
            .filter_map(|(i, node)| node.get("uid").and_then(Value::as_str).map(|uid| (uid, i)))
            .collect();
        let endpoint = |edge: &Value, end: &str| {
            edge.get(end)
                .and_then(Value::as_str)
                .and_then(|uid| index.get(uid).copied())
        };
        let ends: Vec<Option<(usize, usize)>> = edges
            .iter()
            .map(|edge| Some((endpoint(edge, "source")?, endpoint(edge, "target")?)))
            .collect();
        let mut degree = vec![0usize; nodes.len()];
        for (source, target) in ends.iter().flatten() {
            degree[*source] += 1;
            degree[*target] += 1;
        }
        let mut order: Vec<usize> = (0..nodes.len()).collect();
        order.sort_by_key(|&i| (Reverse(degree[i]), i));
        let mut rank = vec![0usize; nodes.len()];
        for (position, &node) in order.iter().enumerate() {
            rank[node] = position;
        }
        let node_weights_by_rank: Vec<usize> = order.iter().map(|&i| weight(&nodes[i])).collect();
        let mut node_prefix = vec![0usize];
        for w in &node_weights_by_rank {
            node_prefix.push(node_prefix.last().copied().unwrap_or(0) + w);
        }
        let edge_need: Vec<usize> = ends
            .iter()
            .map(|end| end.map_or(usize::MAX, |(s, t)| rank[s].max(rank[t]) + 1))
            .collect();
        let mut by_need = vec![(0usize, 0usize); nodes.len() + 1];
        for (edge, need) in edges.iter().zip(&edge_need) {
            if let Some(slot) = by_need.get_mut(*need) {
                slot.0 += weight(edge);
                slot.1 += 1;
            }
        }
        let mut edge_prefix = Vec::with_capacity(by_need.len());
        let mut running = (0usize, 0usize);
        for (w, count) in by_need {
            running = (running.0 + w, running.1 + count);
            edge_prefix.push(running);
        }
        SubgraphPlan {
            fixed,
            rank,
            node_weights_by_rank,
            node_prefix,
            edge_need,
            edge_prefix,
        }
    }

    fn kept_edges(&self, keep: usize) -> usize {
        self.edge_prefix[keep].1
    }

    /// Weight of the `nodes` and `edges` arrays when the top `keep` nodes stay.
    fn weight_at(&self, keep: usize) -> usize {
        let (edges_weight, edges_kept) = self.edge_prefix[keep];
        array_weight(keep, self.node_prefix[keep]) + array_weight(edges_kept, edges_weight)
    }
}
