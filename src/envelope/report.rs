//! What the trim ladder did: each cut list and string, and the markers that
//! say so in `data.meta` (`truncated`, `truncated_<key>_from/_to`,
//! `truncated_lists`, `truncated_edges_by_type`, `truncated_string_fields`).

use super::plan::{self, Placement, Segment};
use serde_json::{Map, Value};

/// One list the ladder cut: where it is, how long it was, how many items stayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub pointer: String,
    pub from: usize,
    pub to: usize,
}

/// What the ladder did, written into `data.meta`.
#[derive(Debug, Default)]
pub struct Report {
    markers: Map<String, Value>,
    pub unshrinkable: bool,
    /// Every cut list, in payload order.
    pub cuts: Vec<Cut>,
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

    pub fn markers(&self) -> &Map<String, Value> {
        &self.markers
    }

    pub(super) fn mark(&mut self, key: String, value: Value) {
        self.markers.insert(key, value);
    }

    pub(super) fn mark_list(&mut self, key: &str, from: usize, to: usize) {
        self.mark(format!("truncated_{key}_from"), Value::from(from));
        self.mark(format!("truncated_{key}_to"), Value::from(to));
        self.cuts.push(Cut {
            pointer: plan::pointer(&[Segment::Key(key)]),
            from,
            to,
        });
    }

    pub(super) fn mark_cut(&mut self, path: &[Segment], from: usize, to: usize) {
        match plan::placement(path) {
            Placement::Top(key) => return self.mark_list(&key, from, to),
            Placement::Bucket(bucket) => record_in(
                &mut self.markers,
                "truncated_edges_by_type",
                bucket,
                from,
                to,
            ),
            Placement::Nested => record_in(
                &mut self.markers,
                "truncated_lists",
                plan::pointer(path),
                from,
                to,
            ),
        }
        self.cuts.push(Cut {
            pointer: plan::pointer(path),
            from,
            to,
        });
    }

    pub(super) fn mark_string(&mut self, path: &[Segment]) {
        let fields = self
            .markers
            .entry("truncated_string_fields")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(fields) = fields {
            fields.push(Value::String(plan::pointer(path)));
        }
    }
}

fn record_in(markers: &mut Map<String, Value>, marker: &str, name: String, from: usize, to: usize) {
    let records = markers
        .entry(marker)
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(records) = records {
        records.insert(name, serde_json::json!({"from": from, "to": to}));
    }
}
