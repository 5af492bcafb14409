//! The trim ladder: shrink an over-budget payload, widest signal first, and say
//! exactly what was cut.
//!
//! The payload is profiled once (every trimmable element is measured exactly
//! once), every cut is then planned with arithmetic over those weights, and only
//! the final, already-small answer is serialised to confirm it fits. Planning
//! counts marker bytes at their largest, so a plan that fits really fits.
//!
//! Steps, in order: nested member lists inside list items; dict-of-list buckets;
//! top-level lists from the registry (one common cap, so no list is emptied while
//! another keeps many); `edges_by_type` buckets; long strings; and finally the
//! `envelope_unshrinkable` flag. Bodies shaped `{nodes, edges}` get a coherent
//! subgraph trim instead of the list steps.

use super::measure::{self, Size, truncated_string_weight, weight};
use serde_json::{Map, Value};
use std::cmp::Reverse;
use std::collections::HashMap;

/// Keys whose list values may be tail-trimmed, at the top of a payload or inside its list items.
pub const LIST_KEYS: &[&str] = &[
    // the seed's registry
    "results",
    "neighbours",
    "references",
    "edges",
    "nodes",
    "processes",
    "call_sites",
    "import_sites",
    "doc_references",
    "test_references",
    "string_literals",
    "external_targets",
    "branches",
    "steps",
    "http_routes",
    "mcp_tools",
    "grpc_endpoints",
    "event_handlers",
    "websocket",
    "nodes_top",
    "samples",
    "rows",
    "entries",
    "cycles",
    "untested",
    "dead",
    // cos-hub's own
    "members",
    "columns",
    "cards",
    "tasks",
    "hits",
    "documents",
    "history",
    "items",
    "issues",
    "candidates",
    "matches",
    "dependencies",
    "dependents",
    "receipts",
    "sites",
];

/// Strings shorter than this are never touched: cutting them saves little and destroys signal.
pub const STRING_TRIM_FLOOR_CHARS: usize = 200;
/// A shortened string keeps at least this many characters.
const STRING_KEEP_MIN_CHARS: usize = 100;
pub const TRUNCATION_SUFFIX: &str = "…[truncated]";
/// Nested member lists keep at least this many items before the outer list is cut.
const NESTED_FLOOR: usize = 3;
/// Dict-of-list buckets keep at least one item each before top-level lists are cut.
const BUCKET_FLOOR: usize = 1;
/// Top-level lists keep their head while a later step (`edges_by_type`, strings) can still be cut.
const TOP_LIST_FLOOR: usize = 1;
const EDGES_BY_TYPE: &str = "edges_by_type";
/// Reserved in planning for `tokens_estimated`, whose digits are only known at the end.
const TOKENS_PLACEHOLDER: u64 = 99_999_999;

fn is_list_key(key: &str) -> bool {
    LIST_KEYS.contains(&key)
}

/// What the ladder did, written into `data.meta`.
#[derive(Debug, Default)]
pub struct Report {
    markers: Map<String, Value>,
    unshrinkable: bool,
}

impl Report {
    pub fn write_into(self, meta: &mut Map<String, Value>) {
        meta.insert(
            "truncated".to_string(),
            Value::Bool(!self.markers.is_empty()),
        );
        meta.extend(self.markers);
        if self.unshrinkable {
            meta.insert("envelope_unshrinkable".to_string(), Value::Bool(true));
        }
    }

    fn mark(&mut self, key: String, value: Value) {
        self.markers.insert(key, value);
    }

    fn mark_list(&mut self, key: &str, from: usize, to: usize) {
        self.mark(format!("truncated_{key}_from"), Value::from(from));
        self.mark(format!("truncated_{key}_to"), Value::from(to));
    }
}

/// Exact size of `{"ok":true,"data":{<data>,"meta":<meta>}}`.
pub fn envelope_size(data: &Map<String, Value>, meta: &Map<String, Value>) -> Size {
    let data_size = measure::measure(data);
    let meta_size = measure::measure(meta);
    let punctuation = envelope_punctuation(data.is_empty());
    Size {
        ascii: data_size.ascii + meta_size.ascii + punctuation,
        non_ascii: data_size.non_ascii + meta_size.non_ascii,
    }
}

/// Characters the envelope adds around the data object's own fields and the meta object.
fn envelope_punctuation(data_is_empty: bool) -> usize {
    // `{"ok":true,"data":` + `}` around data, and `"meta":` plus a comma when data has fields.
    let wrapper = r#"{"ok":true,"data":"#.len() + 1;
    let meta_key = r#""meta":"#.len() + usize::from(!data_is_empty);
    wrapper + meta_key
}

fn envelope_weight(data_weight: usize, data_is_empty: bool, meta_weight: usize) -> usize {
    data_weight + meta_weight + envelope_punctuation(data_is_empty)
}

/// Weight of a JSON array whose kept elements weigh `elements_weight` in all.
fn array_weight(kept: usize, elements_weight: usize) -> usize {
    2 + elements_weight + kept.saturating_sub(1)
}

/// Weight of `,"<key>":<digits of n>`: one marker pair member inside a non-empty object.
fn member_weight(key: &str, value: usize) -> usize {
    1 + weight(key) + 1 + digits(value)
}

fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

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

/// Trims `data` in place so the envelope around it fits `limit`, and reports what was cut.
pub fn apply(data: &mut Map<String, Value>, meta: &Map<String, Value>, limit: usize) -> Report {
    let mut report = Report::default();
    let mut planner = Planner::new(meta);
    if is_graph_shaped(data) {
        trim_subgraph(data, &mut planner, limit, &mut report);
    } else {
        let profile = Profile::of(data);
        if planner.total(&profile) <= limit {
            return report;
        }
        trim_lists(data, profile, &mut planner, limit, &mut report);
    }
    let fits = |data: &Map<String, Value>, report: &Report| {
        let mut final_meta = meta.clone();
        final_meta.insert("truncated".to_string(), Value::Bool(true));
        final_meta.extend(report.markers.clone());
        final_meta.insert(
            "tokens_estimated".to_string(),
            Value::from(TOKENS_PLACEHOLDER),
        );
        envelope_size(data, &final_meta).weight() <= limit
    };
    if fits(data, &report) {
        return report;
    }
    trim_strings(data, meta, limit, &mut report);
    if !fits(data, &report) {
        report.unshrinkable = true;
    }
    report
}

/// Weight of the meta block as planned, with markers at their largest.
struct Planner {
    meta: Map<String, Value>,
}

impl Planner {
    fn new(base: &Map<String, Value>) -> Planner {
        let mut meta = base.clone();
        meta.insert("truncated".to_string(), Value::Bool(true));
        meta.insert(
            "tokens_estimated".to_string(),
            Value::from(TOKENS_PLACEHOLDER),
        );
        Planner { meta }
    }

    fn meta_weight(&self) -> usize {
        weight(&self.meta)
    }

    fn total(&self, profile: &Profile) -> usize {
        envelope_weight(
            profile.data_weight(),
            profile.data_is_empty,
            self.meta_weight(),
        )
    }

    /// Commits the markers a step wrote so later steps plan with them.
    fn commit(&mut self, report: &Report) {
        self.meta.extend(report.markers.clone());
    }
}

/// A list whose elements have been measured one by one.
#[derive(Debug)]
struct MeasuredList {
    weights: Vec<usize>,
    kept: usize,
}

impl MeasuredList {
    fn of(items: &[Value]) -> MeasuredList {
        MeasuredList {
            weights: items.iter().map(weight).collect(),
            kept: items.len(),
        }
    }

    fn len(&self) -> usize {
        self.weights.len()
    }

    fn weight_at(&self, kept: usize) -> usize {
        array_weight(kept, self.weights[..kept].iter().sum())
    }
}

/// A list under a trimmable key inside an item of a top-level list.
#[derive(Debug)]
struct NestedList {
    item: usize,
    key: String,
    list: MeasuredList,
}

/// A top-level list under a registry key. Item weights exclude nested lists,
/// which are tracked on their own so each can be cut separately.
#[derive(Debug)]
struct TopList {
    key: String,
    own_weights: Vec<usize>,
    nested: Vec<NestedList>,
    kept: usize,
}

/// A top-level object whose every member is a list.
#[derive(Debug)]
struct BucketDict {
    key: String,
    buckets: Vec<(String, MeasuredList)>,
}

/// The payload's weight split into what the ladder can cut and what it cannot.
#[derive(Debug)]
struct Profile {
    /// Everything the steps never cut: keys, punctuation and untracked values.
    fixed: usize,
    data_is_empty: bool,
    lists: Vec<TopList>,
    dicts: Vec<BucketDict>,
}

impl Profile {
    fn of(data: &Map<String, Value>) -> Profile {
        let mut profile = Profile {
            fixed: 2 + data.len().saturating_sub(1),
            data_is_empty: data.is_empty(),
            lists: Vec::new(),
            dicts: Vec::new(),
        };
        for (key, value) in data {
            profile.fixed += weight(key.as_str()) + 1;
            match value {
                Value::Array(items) if is_list_key(key) => {
                    profile.lists.push(TopList::of(key, items));
                }
                Value::Object(members) if is_bucket_dict(members) => {
                    profile.dicts.push(BucketDict {
                        key: key.clone(),
                        buckets: members
                            .iter()
                            .filter_map(|(name, bucket)| {
                                bucket
                                    .as_array()
                                    .map(|items| (name.clone(), MeasuredList::of(items)))
                            })
                            .collect(),
                    });
                    profile.fixed += 2
                        + members.len().saturating_sub(1)
                        + members
                            .keys()
                            .map(|name| weight(name.as_str()) + 1)
                            .sum::<usize>();
                }
                other => profile.fixed += weight(other),
            }
        }
        profile
    }

    fn data_weight(&self) -> usize {
        let lists: usize = self.lists.iter().map(TopList::weight).sum();
        let dicts: usize = self
            .dicts
            .iter()
            .flat_map(|dict| dict.buckets.iter())
            .map(|(_, list)| list.weight_at(list.kept))
            .sum();
        self.fixed + lists + dicts
    }
}

fn is_bucket_dict(members: &Map<String, Value>) -> bool {
    !members.is_empty()
        && members.values().all(Value::is_array)
        && members
            .values()
            .any(|bucket| bucket.as_array().is_some_and(|items| !items.is_empty()))
}

impl TopList {
    fn of(key: &str, items: &[Value]) -> TopList {
        let mut own_weights = Vec::with_capacity(items.len());
        let mut nested = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let Value::Object(fields) = item else {
                own_weights.push(weight(item));
                continue;
            };
            let has_nested = fields.iter().any(|(field, value)| {
                is_list_key(field) && value.as_array().is_some_and(|inner| !inner.is_empty())
            });
            if !has_nested {
                own_weights.push(weight(item));
                continue;
            }
            let mut own = 2 + fields.len().saturating_sub(1);
            for (field, value) in fields {
                own += weight(field.as_str()) + 1;
                match value {
                    Value::Array(inner) if is_list_key(field) && !inner.is_empty() => {
                        nested.push(NestedList {
                            item: index,
                            key: field.clone(),
                            list: MeasuredList::of(inner),
                        });
                    }
                    other => own += weight(other),
                }
            }
            own_weights.push(own);
        }
        TopList {
            key: key.to_string(),
            kept: own_weights.len(),
            own_weights,
            nested,
        }
    }

    /// Weight of each item with its nested lists at their current cut, markers included.
    fn item_weights(&self) -> Vec<usize> {
        let mut weights = self.own_weights.clone();
        for nested in &self.nested {
            weights[nested.item] += nested_weight(nested, nested.list.kept);
        }
        weights
    }

    fn weight(&self) -> usize {
        let items = self.item_weights();
        array_weight(self.kept, items[..self.kept].iter().sum())
    }
}

/// A nested list's weight inside its item when `kept` items stay, with its in-item markers.
fn nested_weight(nested: &NestedList, kept: usize) -> usize {
    let cut_markers = if kept < nested.list.len() {
        let from = nested.list.len();
        member_weight(&format!("truncated_{}_from", nested.key), from)
            + member_weight(&format!("truncated_{}_to", nested.key), from)
    } else {
        0
    };
    nested.list.weight_at(kept) + cut_markers
}

/// The largest cap in `floor..=max` for which `fits` holds (monotone: smaller caps fit
/// more easily); `floor` when none does.
fn largest_fitting_cap(floor: usize, max: usize, fits: impl Fn(usize) -> bool) -> usize {
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

fn trim_lists(
    data: &mut Map<String, Value>,
    mut profile: Profile,
    planner: &mut Planner,
    limit: usize,
    report: &mut Report,
) {
    cap_nested_lists(&mut profile, planner, limit, report);
    cap_buckets(&mut profile, planner, limit, report, false);
    cap_top_lists(&mut profile, planner, limit, report);
    cap_buckets(&mut profile, planner, limit, report, true);
    apply_profile(data, &profile);
    follow_count(data, &profile);
}

/// Step 1: shorten lists inside list items (to a floor) before any item is dropped.
fn cap_nested_lists(
    profile: &mut Profile,
    planner: &mut Planner,
    limit: usize,
    report: &mut Report,
) {
    let longest = profile
        .lists
        .iter()
        .flat_map(|list| list.nested.iter())
        .map(|nested| nested.list.len())
        .max()
        .unwrap_or(0);
    if longest <= NESTED_FLOOR {
        return;
    }
    let mut aggregate = Map::new();
    for list in &profile.lists {
        for nested in &list.nested {
            let name = format!("{}.{}", list.key, nested.key);
            let total: usize = list
                .nested
                .iter()
                .filter(|n| n.key == nested.key)
                .map(|n| n.list.len())
                .sum();
            let lists = list.nested.iter().filter(|n| n.key == nested.key).count();
            aggregate.insert(
                name,
                serde_json::json!({"lists": lists, "from": total, "to": total}),
            );
        }
    }
    let marker_weight = member_weight("truncated_nested", 0) - 1 + weight(&aggregate);
    let base = planner.total(profile) + marker_weight;
    let full: usize = nested_total(profile, usize::MAX);
    let fits = |cap: usize| base - full + nested_total(profile, cap) <= limit;
    let cap = largest_fitting_cap(NESTED_FLOOR, longest, fits);
    if cap >= longest {
        return;
    }
    let mut summary: Map<String, Value> = Map::new();
    for list in &mut profile.lists {
        for nested in &mut list.nested {
            let from = nested.list.len();
            nested.list.kept = from.min(cap);
            let entry = summary
                .entry(format!("{}.{}", list.key, nested.key))
                .or_insert_with(|| serde_json::json!({"lists": 0, "from": 0, "to": 0}));
            if from > cap {
                entry["lists"] = Value::from(entry["lists"].as_u64().unwrap_or(0) + 1);
            }
            entry["from"] = Value::from(entry["from"].as_u64().unwrap_or(0) + from as u64);
            entry["to"] = Value::from(entry["to"].as_u64().unwrap_or(0) + nested.list.kept as u64);
        }
    }
    summary.retain(|_, entry| entry["lists"].as_u64() != Some(0));
    report.mark("truncated_nested".to_string(), Value::Object(summary));
    planner.commit(report);
}

/// Weight of every nested list if each kept at most `cap` items.
fn nested_total(profile: &Profile, cap: usize) -> usize {
    profile
        .lists
        .iter()
        .flat_map(|list| list.nested.iter())
        .map(|nested| nested_weight(nested, nested.list.len().min(cap)))
        .sum()
}

/// Steps 2 and 4: buckets of dict-of-lists (`edges_by_type` only when `edges_by_type` is set).
fn cap_buckets(
    profile: &mut Profile,
    planner: &mut Planner,
    limit: usize,
    report: &mut Report,
    edges_by_type: bool,
) {
    let floor = if edges_by_type { 0 } else { BUCKET_FLOOR };
    let selected = |dict: &BucketDict| (dict.key == EDGES_BY_TYPE) == edges_by_type;
    let longest = profile
        .dicts
        .iter()
        .filter(|dict| selected(dict))
        .flat_map(|dict| dict.buckets.iter())
        .map(|(_, list)| list.kept)
        .max()
        .unwrap_or(0);
    if longest <= floor {
        return;
    }
    let mut markers_weight = 0;
    for dict in profile.dicts.iter().filter(|dict| selected(dict)) {
        let worst: Map<String, Value> = dict
            .buckets
            .iter()
            .map(|(name, list)| {
                (
                    name.clone(),
                    serde_json::json!({"from": list.len(), "to": list.len()}),
                )
            })
            .collect();
        markers_weight += member_weight(&format!("truncated_{}", dict.key), 0) - 1 + weight(&worst);
    }
    let bucket_total = |profile: &Profile, cap: usize| -> usize {
        profile
            .dicts
            .iter()
            .filter(|dict| selected(dict))
            .flat_map(|dict| dict.buckets.iter())
            .map(|(_, list)| list.weight_at(list.kept.min(cap)))
            .sum()
    };
    let base = planner.total(profile) + markers_weight - bucket_total(profile, usize::MAX);
    let cap = largest_fitting_cap(floor, longest, |cap| {
        base + bucket_total(profile, cap) <= limit
    });
    if cap >= longest {
        return;
    }
    for dict in profile.dicts.iter_mut().filter(|dict| selected(dict)) {
        let mut cuts = Map::new();
        for (name, list) in &mut dict.buckets {
            if list.kept > cap {
                cuts.insert(
                    name.clone(),
                    serde_json::json!({"from": list.len(), "to": cap}),
                );
                list.kept = cap;
            }
        }
        if !cuts.is_empty() {
            report.mark(format!("truncated_{}", dict.key), Value::Object(cuts));
        }
    }
    planner.commit(report);
}

/// Step 3: one common cap across every top-level list, so competing lists shrink together.
fn cap_top_lists(profile: &mut Profile, planner: &mut Planner, limit: usize, report: &mut Report) {
    let longest = profile
        .lists
        .iter()
        .map(|list| list.kept)
        .max()
        .unwrap_or(0);
    if longest == 0 {
        return;
    }
    let prefixes: Vec<Vec<usize>> = profile
        .lists
        .iter()
        .map(|list| {
            let mut prefix = Vec::with_capacity(list.kept + 1);
            prefix.push(0);
            for item in &list.item_weights()[..list.kept] {
                prefix.push(prefix.last().copied().unwrap_or(0) + item);
            }
            prefix
        })
        .collect();
    let markers_weight: usize = profile
        .lists
        .iter()
        .map(|list| {
            member_weight(
                &format!("truncated_{}_from", list.key),
                list.own_weights.len(),
            ) + member_weight(
                &format!("truncated_{}_to", list.key),
                list.own_weights.len(),
            )
        })
        .sum();
    let lists_at = |cap: usize| -> usize {
        profile
            .lists
            .iter()
            .zip(&prefixes)
            .map(|(list, prefix)| {
                let kept = list.kept.min(cap);
                array_weight(kept, prefix[kept])
            })
            .sum()
    };
    let base = planner.total(profile) + markers_weight - lists_at(usize::MAX);
    let cap = largest_fitting_cap(TOP_LIST_FLOOR.min(longest), longest, |cap| {
        base + lists_at(cap) <= limit
    });
    if cap >= longest {
        return;
    }
    for list in &mut profile.lists {
        if list.kept > cap {
            list.kept = cap;
            report.mark_list(&list.key, list.own_weights.len(), cap);
        }
    }
    planner.commit(report);
}

/// Carries the planned cuts out on the payload.
fn apply_profile(data: &mut Map<String, Value>, profile: &Profile) {
    for list in &profile.lists {
        let Some(Value::Array(items)) = data.get_mut(&list.key) else {
            continue;
        };
        for nested in list
            .nested
            .iter()
            .filter(|n| n.item < list.kept && n.list.kept < n.list.len())
        {
            let Some(Value::Object(fields)) = items.get_mut(nested.item) else {
                continue;
            };
            if let Some(Value::Array(inner)) = fields.get_mut(&nested.key) {
                inner.truncate(nested.list.kept);
            }
            fields.insert(
                format!("truncated_{}_from", nested.key),
                Value::from(nested.list.len()),
            );
            fields.insert(
                format!("truncated_{}_to", nested.key),
                Value::from(nested.list.kept),
            );
        }
        release(items.split_off(list.kept));
    }
    for dict in &profile.dicts {
        let Some(Value::Object(members)) = data.get_mut(&dict.key) else {
            continue;
        };
        for (name, list) in &dict.buckets {
            if let Some(Value::Array(items)) = members.get_mut(name) {
                items.truncate(list.kept);
            }
        }
    }
}

/// Frees a cut tail. Freeing a hundred thousand JSON objects takes as long as
/// serialising them, and the caller is waiting for the small answer, so large
/// tails are freed on a short-lived thread of their own.
fn release(tail: Vec<Value>) {
    const FREE_INLINE_BELOW: usize = 4_096;
    if tail.len() < FREE_INLINE_BELOW {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("cos-envelope-free".to_string())
        .spawn(move || drop(tail));
    // If no thread can be had, the tail was moved into the failed closure and is freed here.
    drop(spawned);
}

/// A sibling `count` that equalled a cut list's original length follows it down.
fn follow_count(data: &mut Map<String, Value>, profile: &Profile) {
    let Some(count) = data.get("count").and_then(Value::as_u64) else {
        return;
    };
    let mut matching = profile
        .lists
        .iter()
        .filter(|list| list.own_weights.len() as u64 == count);
    if let (Some(list), None) = (matching.next(), matching.next())
        && list.kept < list.own_weights.len()
    {
        data.insert("count".to_string(), Value::from(list.kept));
    }
}

/// The graph tier: keep the top-K nodes by degree and only edges between kept nodes.
fn trim_subgraph(
    data: &mut Map<String, Value>,
    planner: &mut Planner,
    limit: usize,
    report: &mut Report,
) {
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
    let base = envelope_weight(plan.fixed, false, planner.meta_weight() + markers_weight);
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
    planner.commit(report);
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

/// A long string somewhere in the payload, addressed by JSON pointer.
struct LongString {
    pointer: String,
    chars: usize,
    full_weight: usize,
}

/// Step 5: shorten strings of 200+ characters to one common length.
fn trim_strings(
    data: &mut Map<String, Value>,
    meta: &Map<String, Value>,
    limit: usize,
    report: &mut Report,
) {
    let mut long = Vec::new();
    for (key, value) in data.iter() {
        collect_long_strings(value, &mut format!("/{}", escape_pointer(key)), &mut long);
    }
    if long.is_empty() {
        return;
    }
    let pointers: Vec<&str> = long.iter().map(|s| s.pointer.as_str()).collect();
    let mut planned_meta = meta.clone();
    planned_meta.insert("truncated".to_string(), Value::Bool(true));
    planned_meta.extend(report.markers.clone());
    planned_meta.insert(
        "truncated_string_fields".to_string(),
        serde_json::json!(pointers),
    );
    planned_meta.insert(
        "tokens_estimated".to_string(),
        Value::from(TOKENS_PLACEHOLDER),
    );
    let base = envelope_size(data, &planned_meta).weight();
    let full: usize = long.iter().map(|s| s.full_weight).sum();
    let longest = long.iter().map(|s| s.chars).max().unwrap_or(0);
    let texts: Vec<String> = long
        .iter()
        .map(|s| {
            data_pointer(data, &s.pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let shortened_total = |cap: usize| -> usize {
        long.iter()
            .zip(&texts)
            .map(|(s, text)| {
                if s.chars > cap {
                    truncated_string_weight(text, cap, TRUNCATION_SUFFIX)
                } else {
                    s.full_weight
                }
            })
            .sum()
    };
    let cap = largest_fitting_cap(STRING_KEEP_MIN_CHARS, longest, |cap| {
        base - full + shortened_total(cap) <= limit
    });
    let mut shortened = Vec::new();
    for (s, text) in long.iter().zip(&texts) {
        if s.chars <= cap {
            continue;
        }
        if let Some(slot) = data_pointer_mut(data, &s.pointer) {
            let cut = measure::char_boundary(text, cap);
            *slot = Value::String(format!("{}{TRUNCATION_SUFFIX}", &text[..cut]));
            shortened.push(Value::String(s.pointer.clone()));
        }
    }
    if !shortened.is_empty() {
        report.mark(
            "truncated_string_fields".to_string(),
            Value::Array(shortened),
        );
    }
}

fn collect_long_strings(value: &Value, pointer: &mut String, found: &mut Vec<LongString>) {
    match value {
        Value::String(text) => {
            let chars = text.chars().count();
            if chars >= STRING_TRIM_FLOOR_CHARS {
                found.push(LongString {
                    pointer: pointer.clone(),
                    chars,
                    full_weight: weight(text.as_str()),
                });
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let length = pointer.len();
                pointer.push_str(&format!("/{index}"));
                collect_long_strings(item, pointer, found);
                pointer.truncate(length);
            }
        }
        Value::Object(fields) => {
            for (key, item) in fields {
                let length = pointer.len();
                pointer.push('/');
                pointer.push_str(&escape_pointer(key));
                collect_long_strings(item, pointer, found);
                pointer.truncate(length);
            }
        }
        _ => {}
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn data_pointer<'a>(data: &'a Map<String, Value>, pointer: &str) -> Option<&'a Value> {
    let (first, rest) = split_pointer(pointer)?;
    let root = data.get(&first)?;
    if rest.is_empty() {
        Some(root)
    } else {
        root.pointer(rest)
    }
}

fn data_pointer_mut<'a>(data: &'a mut Map<String, Value>, pointer: &str) -> Option<&'a mut Value> {
    let (first, rest) = split_pointer(pointer)?;
    let root = data.get_mut(&first)?;
    if rest.is_empty() {
        Some(root)
    } else {
        root.pointer_mut(rest)
    }
}

/// Splits `/key/rest...` into the unescaped first key and the remaining pointer.
fn split_pointer(pointer: &str) -> Option<(String, &str)> {
    let body = pointer.strip_prefix('/')?;
    let end = body.find('/').unwrap_or(body.len());
    let first = body[..end].replace("~1", "/").replace("~0", "~");
    Some((first, &body[end..]))
}
