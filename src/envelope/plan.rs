//! The cost model behind the trim ladder: a payload profiled once into a tree
//! of what can be cut (every non-empty list at any depth, every string of 200+
//! characters) and what cannot, so the weight of any plan of cuts is computed
//! with arithmetic instead of re-serialising.
//!
//! Lists fall into groups by (class, depth): continuable pages first, then the
//! deepest lists, lists under the seed's registry keys or the tool's hints before
//! other lists of the same depth. A plan gives each group a
//! cap and strings one common length.

use super::measure::{Json, truncated_string_weight, weight};
use serde_json::{Map, Value};
use std::cmp::Reverse;

pub const TRUNCATION_SUFFIX: &str = "…[truncated]";
/// Strings shorter than this are never touched: cutting them saves little and destroys signal.
pub const STRING_TRIM_FLOOR_CHARS: usize = 200;
/// The seed's bucket dictionary, whose cut buckets get their own marker.
pub const EDGES_BY_TYPE: &str = "edges_by_type";

/// Which lists are cut first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// A list the tool can continue with a cursor: cutting it loses nothing.
    Page,
    /// Under a key of the seed's registry or of the tool's hints.
    Listed,
    /// Any other list.
    Other,
}

/// What the caller says about the payload's lists.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hints<'h> {
    /// JSON pointers of lists the tool can continue (`/results`, `/columns/2/cards`).
    pub pages: &'h [String],
    /// Keys whose lists the tool wants cut before others.
    pub keys: &'h [&'h str],
    /// Top-level keys that must not be cut (already trimmed another way).
    pub frozen: &'h [&'h str],
    /// Room the caller needs after trimming (cursors it writes for cut pages).
    pub reserve: usize,
}

/// A step on the way from the payload's root to a value.
#[derive(Debug, Clone, Copy)]
pub enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// Where a cut list's marker is written in `meta`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// `truncated_<key>_from` / `_to`: a list at the top of the payload.
    Top(String),
    /// `truncated_edges_by_type.<bucket>`: a bucket of the seed's dictionary.
    Bucket(String),
    /// `truncated_lists["<pointer>"]`: any other list.
    Nested,
}

pub fn placement(path: &[Segment]) -> Placement {
    match path {
        [Segment::Key(key)] => Placement::Top((*key).to_string()),
        [Segment::Key(EDGES_BY_TYPE), Segment::Key(bucket)] => {
            Placement::Bucket((*bucket).to_string())
        }
        _ => Placement::Nested,
    }
}

pub fn pointer(path: &[Segment]) -> String {
    let mut text = String::new();
    for segment in path {
        text.push('/');
        match segment {
            Segment::Key(key) => text.push_str(&key.replace('~', "~0").replace('/', "~1")),
            Segment::Index(index) => text.push_str(&index.to_string()),
        }
    }
    text
}

impl Hints<'_> {
    /// The class of the list at `path`, or None when it must not be cut.
    pub fn class(&self, path: &[Segment]) -> Option<Class> {
        if let [Segment::Key(key)] = path
            && self.frozen.contains(key)
        {
            return None;
        }
        if !self.pages.is_empty() && self.pages.iter().any(|page| *page == pointer(path)) {
            return Some(Class::Page);
        }
        match path.last() {
            Some(Segment::Key(key)) if is_listed(key) || self.keys.contains(key) => {
                Some(Class::Listed)
            }
            _ => Some(Class::Other),
        }
    }
}

/// The seed's registry of trimmable list keys: they are cut before other lists.
pub const SEED_LIST_KEYS: &[&str] = &[
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
];

fn is_listed(key: &str) -> bool {
    SEED_LIST_KEYS.contains(&key)
}

pub fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Weight of a JSON array whose kept elements weigh `elements` in all.
pub fn array_weight(kept: usize, elements: usize) -> usize {
    2 + elements + kept.saturating_sub(1)
}

/// Weight of one cut list's marker at its largest (`to` counted with `from`'s digits).
fn marker_weight(placement: &Placement, pointer_weight: usize, from: usize) -> usize {
    // `{"from":N,"to":N}`
    let record = r#"{"from":,"to":}"#.len() + 2 * digits(from);
    match placement {
        Placement::Top(key) => {
            let from_key = weight(format!("truncated_{key}_from").as_str());
            let to_key = weight(format!("truncated_{key}_to").as_str());
            (1 + from_key + 1 + digits(from)) + (1 + to_key + 1 + digits(from))
        }
        Placement::Bucket(bucket) => 1 + weight(bucket.as_str()) + 1 + record,
        Placement::Nested => 1 + 2 + pointer_weight + 1 + record,
    }
}

/// Room kept for the marker objects themselves (`,"truncated_lists":{}` and the like).
pub const MARKER_WRAPPERS: usize = r#","truncated_lists":{}"#.len()
    + r#","truncated_edges_by_type":{}"#.len()
    + r#","truncated_string_fields":[]"#.len()
    + r#","truncated":true"#.len();

#[derive(Debug, Clone, Copy)]
enum Item {
    Fixed(usize),
    Node(u32),
}

#[derive(Debug)]
enum Node<'a> {
    Text {
        text: &'a str,
        chars: usize,
        full: usize,
        marker: usize,
    },
    List {
        items: Vec<Item>,
        /// Prefix sums of item weights when no item holds anything cuttable.
        prefix: Option<Vec<usize>>,
        group: usize,
        marker: usize,
    },
    Object {
        fixed: usize,
        members: Vec<Item>,
    },
}

/// The order groups are cut in: continuable pages first (cutting them loses
/// nothing), then deepest first (an answer keeps its breadth), listed keys
/// before others at the same depth.
fn group_order(class: Class, depth: usize) -> (bool, Reverse<usize>, Class) {
    (class != Class::Page, Reverse(depth), class)
}

/// One group of lists and its longest member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    pub class: Class,
    pub depth: usize,
    pub longest: usize,
}

/// A payload profiled for planning.
pub struct Tree<'a> {
    nodes: Vec<Node<'a>>,
    root: Item,
    pub groups: Vec<Group>,
    pub longest_string: usize,
}

/// The cuts a plan makes: a cap per group, one string length, or none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub caps: Vec<usize>,
    pub string_cap: Option<usize>,
}

impl Plan {
    pub fn untouched(groups: usize) -> Plan {
        Plan {
            caps: vec![usize::MAX; groups],
            string_cap: None,
        }
    }
}

struct Builder<'a, 'h> {
    hints: Hints<'h>,
    nodes: Vec<Node<'a>>,
    /// (class, depth) of each list node, resolved to groups at the end.
    list_keys: Vec<(u32, Class, usize, usize)>,
    path: Vec<Segment<'a>>,
    pointer_weights: Vec<usize>,
    longest_string: usize,
}

impl<'a> Tree<'a> {
    pub fn of(data: &'a Map<String, Value>, hints: Hints<'_>) -> Tree<'a> {
        let mut builder = Builder {
            hints,
            nodes: Vec::new(),
            list_keys: Vec::new(),
            path: Vec::new(),
            pointer_weights: vec![0],
            longest_string: 0,
        };
        let root = builder.object(data);
        let mut keys: Vec<(Class, usize)> = builder
            .list_keys
            .iter()
            .map(|(_, class, depth, _)| (*class, *depth))
            .collect();
        keys.sort_by_key(|(class, depth)| group_order(*class, *depth));
        keys.dedup();
        let mut groups: Vec<Group> = keys
            .iter()
            .map(|(class, depth)| Group {
                class: *class,
                depth: *depth,
                longest: 0,
            })
            .collect();
        for (id, class, depth, len) in &builder.list_keys {
            let Ok(group) = keys
                .binary_search_by_key(&group_order(*class, *depth), |(c, d)| group_order(*c, *d))
            else {
                continue;
            };
            groups[group].longest = groups[group].longest.max(*len);
            if let Some(Node::List { group: slot, .. }) = builder.nodes.get_mut(*id as usize) {
                *slot = group;
            }
        }
        Tree {
            nodes: builder.nodes,
            root,
            groups,
            longest_string: builder.longest_string,
        }
    }

    /// Weight of the payload under `plan` (markers included), or None once it passes `limit`.
    pub fn weight(&self, plan: &Plan, limit: usize) -> Option<usize> {
        self.item(self.root, plan, limit)
    }

    fn item(&self, item: Item, plan: &Plan, left: usize) -> Option<usize> {
        match item {
            Item::Fixed(weight) => (weight <= left).then_some(weight),
            Item::Node(id) => self.node(id, plan, left),
        }
    }

    fn node(&self, id: u32, plan: &Plan, left: usize) -> Option<usize> {
        let weight = match &self.nodes[id as usize] {
            Node::Text {
                text,
                chars,
                full,
                marker,
            } => match plan.string_cap {
                Some(cap) if *chars > cap => {
                    truncated_string_weight(text, cap, TRUNCATION_SUFFIX) + marker
                }
                _ => *full,
            },
            Node::List {
                items,
                prefix,
                group,
                marker,
            } => {
                let kept = items.len().min(plan.caps[*group]);
                let cut = if kept < items.len() { *marker } else { 0 };
                let elements = match prefix {
                    Some(prefix) => prefix[kept],
                    None => {
                        let mut sum = 0;
                        for item in &items[..kept] {
                            sum += self.item(*item, plan, left.checked_sub(sum)?)?;
                        }
                        sum
                    }
                };
                array_weight(kept, elements) + cut
            }
            Node::Object { fixed, members } => {
                let mut sum = *fixed;
                for member in members {
                    sum += self.item(*member, plan, left.checked_sub(sum)?)?;
                }
                sum
            }
        };
        (weight <= left).then_some(weight)
    }
}

impl<'a> Builder<'a, '_> {
    fn push(&mut self, segment: Segment<'a>) {
        let segment_weight = match segment {
            Segment::Key(key) => {
                weight(key) - 2 + key.bytes().filter(|b| *b == b'~' || *b == b'/').count()
            }
            Segment::Index(index) => digits(index),
        };
        let parent = self.pointer_weights.last().copied().unwrap_or(0);
        self.pointer_weights.push(parent + 1 + segment_weight);
        self.path.push(segment);
    }

    fn pop(&mut self) {
        self.path.pop();
        self.pointer_weights.pop();
    }

    fn pointer_weight(&self) -> usize {
        self.pointer_weights.last().copied().unwrap_or(0)
    }

    fn add(&mut self, node: Node<'a>) -> Item {
        self.nodes.push(node);
        Item::Node((self.nodes.len() - 1) as u32)
    }

    fn value(&mut self, value: &'a Value) -> Item {
        // most of a large payload is records with nothing to cut: measured in one pass
        if !holds_cuttable(value) {
            return Item::Fixed(weight(value));
        }
        match value {
            Value::String(text) => self.text(text),
            Value::Array(items) if !items.is_empty() => self.list(value, items),
            Value::Object(fields) => self.object(fields),
            other => Item::Fixed(weight(other)),
        }
    }

    fn text(&mut self, text: &'a str) -> Item {
        let full = text.json_size().weight();
        // fewer bytes than the floor means fewer characters too
        if text.len() < STRING_TRIM_FLOOR_CHARS {
            return Item::Fixed(full);
        }
        let chars = text.chars().count();
        if chars < STRING_TRIM_FLOOR_CHARS {
            return Item::Fixed(full);
        }
        self.longest_string = self.longest_string.max(chars);
        let marker = 1 + 2 + self.pointer_weight();
        self.add(Node::Text {
            text,
            chars,
            full,
            marker,
        })
    }

    fn list(&mut self, whole: &'a Value, values: &'a [Value]) -> Item {
        let Some(class) = self.hints.class(&self.path) else {
            return Item::Fixed(weight(whole));
        };
        let mut items = Vec::with_capacity(values.len());
        for (index, value) in values.iter().enumerate() {
            self.push(Segment::Index(index));
            items.push(self.value(value));
            self.pop();
        }
        let prefix = items
            .iter()
            .all(|item| matches!(item, Item::Fixed(_)))
            .then(|| {
                let mut sums = Vec::with_capacity(items.len() + 1);
                sums.push(0);
                let mut running = 0;
                for item in &items {
                    if let Item::Fixed(weight) = item {
                        running += weight;
                    }
                    sums.push(running);
                }
                sums
            });
        let marker = marker_weight(&placement(&self.path), self.pointer_weight(), values.len());
        let len = values.len();
        let depth = self.path.len();
        let item = self.add(Node::List {
            items,
            prefix,
            group: 0,
            marker,
        });
        if let Item::Node(id) = item {
            self.list_keys.push((id, class, depth, len));
        }
        item
    }

    fn object(&mut self, fields: &'a Map<String, Value>) -> Item {
        let mut fixed = 2 + fields.len().saturating_sub(1);
        let mut members = Vec::new();
        for (key, value) in fields {
            fixed += weight(key.as_str()) + 1;
            self.push(Segment::Key(key));
            match self.value(value) {
                Item::Fixed(weight) => fixed += weight,
                node => members.push(node),
            }
            self.pop();
        }
        if members.is_empty() {
            return Item::Fixed(fixed);
        }
        self.add(Node::Object { fixed, members })
    }
}

/// True when `value` holds a non-empty list or a string that may be long
/// enough to cut; a byte count under the floor rules a string out at once.
fn holds_cuttable(value: &Value) -> bool {
    match value {
        Value::Array(items) => !items.is_empty(),
        Value::String(text) => text.len() >= STRING_TRIM_FLOOR_CHARS,
        Value::Object(fields) => fields.values().any(holds_cuttable),
        _ => false,
    }
}

/// The weight of `value`, or None as soon as it passes `limit` (a large payload
/// is not measured to its end only to learn it is over budget).
pub fn weight_within(value: &Map<String, Value>, limit: usize) -> Option<usize> {
    let mut total = 2 + value.len().saturating_sub(1);
    for (key, member) in value {
        total +=
            weight(key.as_str()) + 1 + member_weight_within(member, limit.checked_sub(total)?)?;
        if total > limit {
            return None;
        }
    }
    Some(total)
}

fn member_weight_within(value: &Value, limit: usize) -> Option<usize> {
    match value {
        Value::Array(items) => {
            let mut total = 2 + items.len().saturating_sub(1);
            for item in items {
                total += member_weight_within(item, limit.checked_sub(total)?)?;
            }
            (total <= limit).then_some(total)
        }
        Value::Object(fields) => weight_within(fields, limit),
        other => {
            let total = weight(other);
            (total <= limit).then_some(total)
        }
    }
}
