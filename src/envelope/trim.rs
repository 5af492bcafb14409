//! The trim ladder: shrink an over-budget payload, widest signal first, and say
//! exactly what was cut.
//!
//! Any list at any depth and any string of 200+ characters can be cut; the
//! seed's key registry, the tool's hints and continuable pages only decide the
//! order. The payload is profiled once (`plan::Tree`), every plan is priced
//! with arithmetic, and only the chosen plan is carried out on the payload.
//!
//! The ladder, each rung tried only when the one before cannot fit:
//! 1. lists, group by group (pages, then deepest first, listed keys before
//!    others), every list cut so far sharing one common cap of at least one item;
//! 2. strings of 200+ characters, to one common length of at least 100: first
//!    with every list whole, then with every list at one item;
//! 3. every list that is not a page, emptied;
//! 4. nothing fits: `envelope_unshrinkable`, for the caller to refuse.
//!
//! Bodies shaped `{nodes, edges}` get the coherent subgraph trim first.

use super::measure::weight;
use super::plan::{
    self, Class, Group, Hints, MARKER_WRAPPERS, Plan, STRING_TRIM_FLOOR_CHARS, Segment,
    TRUNCATION_SUFFIX, Tree,
};
use super::report::Report;
use super::subgraph::{self, largest_fitting_cap};
use serde_json::{Map, Value};

/// A shortened string keeps at least this many characters.
const STRING_KEEP_MIN_CHARS: usize = 100;
/// Reserved in planning for `tokens_estimated`, whose digits are only known at the end.
pub const TOKENS_PLACEHOLDER: u64 = 99_999_999;

/// Trims `data` in place so that, with `outside` characters of weight around it
/// (the rest of the envelope, markers excluded), it fits `limit`.
pub fn apply(
    data: &mut Map<String, Value>,
    outside: usize,
    limit: usize,
    hints: Hints<'_>,
) -> Report {
    let mut report = Report::default();
    let outside = outside + hints.reserve;
    if plan::weight_within(data, limit.saturating_sub(outside)).is_some() {
        return report;
    }
    let outside = outside + MARKER_WRAPPERS;
    let mut frozen: Vec<&str> = hints.frozen.to_vec();
    if subgraph::is_graph_shaped(data) {
        subgraph::trim(data, outside, limit, &mut report);
        if weight(&*data) + outside + weight(report.markers()) <= limit {
            return report;
        }
        frozen.extend(["nodes", "edges"]);
    }
    let hints = Hints {
        frozen: &frozen,
        ..hints
    };
    let room = limit.saturating_sub(outside + weight(report.markers()));
    let (groups, plan, fits) = {
        let tree = Tree::of(data, hints);
        let (plan, fits) = choose(&tree, room);
        (tree.groups, plan, fits)
    };
    if plan != Plan::untouched(groups.len()) {
        let mut cutter = Cutter {
            hints,
            groups: &groups,
            plan: &plan,
            report: &mut report,
            path: Vec::new(),
        };
        cutter.object(data);
    }
    report.unshrinkable = !fits;
    report
}

/// The first plan of the ladder that fits `room`, or the last rung when none does.
fn choose(tree: &Tree, room: usize) -> (Plan, bool) {
    let count = tree.groups.len();
    let fits = |plan: &Plan| tree.weight(plan, room).is_some();
    if fits(&Plan::untouched(count)) {
        return (Plan::untouched(count), true);
    }
    let capped = |upto: usize, cap: usize| {
        let mut plan = Plan::untouched(count);
        plan.caps[..=upto].fill(cap);
        plan
    };
    for upto in 0..count {
        if !fits(&capped(upto, 1)) {
            continue;
        }
        let longest = tree.groups[..=upto]
            .iter()
            .map(|group| group.longest)
            .max()
            .unwrap_or(1);
        let cap = largest_fitting_cap(1, longest, |cap| fits(&capped(upto, cap)));
        return (capped(upto, cap), true);
    }
    if tree.longest_string > 0 {
        // long strings alone may be what is over: cut them and keep every list whole
        let strings_only = |cap: usize| Plan {
            string_cap: Some(cap),
            ..Plan::untouched(count)
        };
        if fits(&strings_only(STRING_KEEP_MIN_CHARS)) {
            let cap = largest_fitting_cap(STRING_KEEP_MIN_CHARS, tree.longest_string, |cap| {
                fits(&strings_only(cap))
            });
            return (strings_only(cap), true);
        }
    }
    let mut plan = if count == 0 {
        Plan::untouched(0)
    } else {
        capped(count - 1, 1)
    };
    if tree.longest_string > 0 {
        let with_strings = |cap: usize| Plan {
            string_cap: Some(cap),
            ..plan.clone()
        };
        if fits(&with_strings(STRING_KEEP_MIN_CHARS)) {
            let cap = largest_fitting_cap(STRING_KEEP_MIN_CHARS, tree.longest_string, |cap| {
                fits(&with_strings(cap))
            });
            return (with_strings(cap), true);
        }
        plan.string_cap = Some(STRING_KEEP_MIN_CHARS);
    }
    for (cap, group) in plan.caps.iter_mut().zip(&tree.groups) {
        if group.class != Class::Page {
            *cap = 0;
        }
    }
    let fits = fits(&plan);
    (plan, fits)
}

/// An owned step of the path, so the payload can be changed while it is walked.
enum Step {
    Key(String),
    Index(usize),
}

fn segments(path: &[Step]) -> Vec<Segment<'_>> {
    path.iter()
        .map(|step| match step {
            Step::Key(key) => Segment::Key(key),
            Step::Index(index) => Segment::Index(*index),
        })
        .collect()
}

/// Carries a plan out on the payload, recording every cut.
struct Cutter<'p, 'h> {
    hints: Hints<'h>,
    groups: &'p [Group],
    plan: &'p Plan,
    report: &'p mut Report,
    path: Vec<Step>,
}

impl Cutter<'_, '_> {
    fn cap_here(&self) -> Option<usize> {
        let segments = segments(&self.path);
        let class = self.hints.class(&segments)?;
        let depth = segments.len();
        let group = self
            .groups
            .iter()
            .position(|group| group.class == class && group.depth == depth)?;
        Some(self.plan.caps[group])
    }

    /// Cuts what the plan says below `value`; returns the list's original length when it was cut.
    fn value(&mut self, value: &mut Value) -> Option<usize> {
        match value {
            Value::String(text) => {
                self.string(text);
                None
            }
            Value::Array(items) if !items.is_empty() => self.list(items),
            Value::Object(fields) => {
                self.object(fields);
                None
            }
            _ => None,
        }
    }

    fn string(&mut self, text: &mut String) {
        let Some(cap) = self.plan.string_cap else {
            return;
        };
        if text.len() <= cap || text.len() < STRING_TRIM_FLOOR_CHARS {
            return;
        }
        let chars = text.chars().count();
        if chars < STRING_TRIM_FLOOR_CHARS || chars <= cap {
            return;
        }
        let cut = super::measure::char_boundary(text, cap);
        text.truncate(cut);
        text.push_str(TRUNCATION_SUFFIX);
        let segments = segments(&self.path);
        self.report.mark_string(&segments);
    }

    fn list(&mut self, items: &mut Vec<Value>) -> Option<usize> {
        let cap = self.cap_here()?;
        let from = items.len();
        if from > cap {
            release(items.split_off(cap));
            let segments = segments(&self.path);
            self.report.mark_cut(&segments, from, cap);
        }
        for (index, item) in items.iter_mut().enumerate() {
            self.path.push(Step::Index(index));
            self.value(item);
            self.path.pop();
        }
        (from > cap).then_some(from)
    }

    fn object(&mut self, fields: &mut Map<String, Value>) {
        let mut cut_lengths: Vec<(usize, usize)> = Vec::new();
        for (key, value) in fields.iter_mut() {
            self.path.push(Step::Key(key.clone()));
            if let Some(from) = self.value(value) {
                cut_lengths.push((from, value.as_array().map_or(0, Vec::len)));
            }
            self.path.pop();
        }
        follow_count(fields, &cut_lengths);
    }
}

/// A `count` beside exactly one cut list whose original length it equalled follows it down.
fn follow_count(fields: &mut Map<String, Value>, cuts: &[(usize, usize)]) {
    let Some(count) = fields.get("count").and_then(Value::as_u64) else {
        return;
    };
    let mut matching = cuts.iter().filter(|(from, _)| *from as u64 == count);
    if let (Some((_, kept)), None) = (matching.next(), matching.next()) {
        fields.insert("count".to_string(), Value::from(*kept));
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
