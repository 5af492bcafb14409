//! The envelope contract: the one shape every `cos_*` tool answers in.
//!
//! Owns the success and error shapes, the error categories and their retry
//! defaults, the diagnostics block `data.meta` (which only this module writes),
//! and the token budgets with their trimming ladder. It knows nothing about
//! HTTP, MCP, SQLite or any area of the hub: callers hand it JSON and get JSON.

mod code;
pub mod measure;
mod plan;
#[cfg(test)]
mod properties;
mod report;
mod subgraph;
#[cfg(test)]
mod tests;
mod trim;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;
use utoipa::ToSchema;

pub use code::Code;
pub use plan::{Hints, SEED_LIST_KEYS, STRING_TRIM_FLOOR_CHARS, TRUNCATION_SUFFIX};
pub use report::Cut;

/// Agent context budget in token-normalised characters.
pub const AGENT_BUDGET_CHARS: usize = 32_000;
/// Ceiling for `{nodes, edges}` bodies: an out-of-memory safety net, not a context limit.
pub const GRAPH_BUDGET_CHARS: usize = 5_000_000;

/// Why a call failed, which tells the caller how to recover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Timeouts, a busy database, a flaky dependency: try again.
    Transient,
    /// The input is wrong; change it before trying again.
    Validation,
    /// The caller may not do this (read-only store, locked resource).
    Permission,
    /// The named thing does not exist.
    NotFound,
    /// An optional capability is missing; install or enable it, then retry.
    Unavailable,
    /// Anything unexpected; details are in the server log under `error_id`.
    Internal,
    /// The tool's module is switched off in this project.
    ModuleDisabled,
    /// A stale revision, cursor or state, or a reused request ID.
    Conflict,
    /// A missing or wrong token.
    Unauthorized,
}

impl Category {
    pub const ALL: [Category; 9] = [
        Category::Transient,
        Category::Validation,
        Category::Permission,
        Category::NotFound,
        Category::Unavailable,
        Category::Internal,
        Category::ModuleDisabled,
        Category::Conflict,
        Category::Unauthorized,
    ];

    pub fn default_retryable(self) -> bool {
        matches!(self, Category::Transient | Category::Unavailable)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Transient => "transient",
            Category::Validation => "validation",
            Category::Permission => "permission",
            Category::NotFound => "not_found",
            Category::Unavailable => "unavailable",
            Category::Internal => "internal",
            Category::ModuleDisabled => "module_disabled",
            Category::Conflict => "conflict",
            Category::Unauthorized => "unauthorized",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `error` member of a failed envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    pub category: Category,
    /// A code from the one closed list (see docs/errors.md).
    pub code: Code,
    pub retryable: bool,
    /// For people. Never carries paths, SQL or library internals for internal errors.
    pub message: String,
    /// Structured facts for recovery: the field at fault, allowed values, current state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// For internal errors: the id of the matching line in the server log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_id: Option<String>,
    /// Present only when `details` were trimmed to the agent budget: `truncated`
    /// and the same `truncated_*` markers a success's `data.meta` carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub meta: Option<Map<String, Value>>,
}

impl ErrorBody {
    pub fn new(category: Category, code: Code, message: impl Into<String>) -> ErrorBody {
        ErrorBody {
            category,
            code,
            retryable: category.default_retryable(),
            message: message.into(),
            details: None,
            error_id: None,
            meta: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> ErrorBody {
        self.details = Some(details);
        self
    }

    pub fn with_retryable(mut self, retryable: bool) -> ErrorBody {
        self.retryable = retryable;
        self
    }
}

/// The error body of every REST answer that is not a success.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorEnvelope {
    pub error: ErrorBody,
}

/// The diagnostics block. Only the envelope writes `tokens_estimated`, `truncated`
/// and the `truncated_*` markers; other keys come from the tool (e.g. `resolved_from`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Meta {
    /// Which layer answered (`health`, `tasks`, `graph`, `docs`, ...).
    pub layer: String,
    /// Script-aware token estimate of the serialised answer.
    pub tokens_estimated: u64,
    /// True only when something was really cut; markers then say what.
    pub truncated: bool,
    /// Trim markers (`truncated_<key>_from` / `_to`, ...) and tool diagnostics.
    #[serde(flatten)]
    #[schema(additional_properties)]
    pub extra: Map<String, Value>,
}

/// How much an answer may weigh before it is trimmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// Agent context: 32,000 token-normalised characters; graph-shaped bodies get the graph tier.
    Agent,
    /// The graph tier (5,000,000) whatever the shape.
    Graph,
    /// A caller-chosen limit in token-normalised characters.
    Chars(usize),
    /// Browsers and scripts: nothing is trimmed.
    None,
}

impl Budget {
    /// The limit that applies to a body of this shape, or `None` when nothing is trimmed.
    pub fn limit_for(self, graph_shaped: bool) -> Option<usize> {
        match self {
            Budget::Agent if graph_shaped => Some(GRAPH_BUDGET_CHARS),
            Budget::Agent => Some(AGENT_BUDGET_CHARS),
            Budget::Graph => Some(GRAPH_BUDGET_CHARS),
            Budget::Chars(limit) => Some(limit),
            Budget::None => None,
        }
    }
}

impl FromStr for Budget {
    type Err = String;

    fn from_str(text: &str) -> Result<Budget, String> {
        match text {
            "agent" => Ok(Budget::Agent),
            "graph" => Ok(Budget::Graph),
            "none" => Ok(Budget::None),
            other => match other.parse::<usize>() {
                Ok(chars) if chars > 0 => Ok(Budget::Chars(chars)),
                _ => Err(format!(
                    "budget must be agent, graph, none or a positive number of characters, got {other:?}"
                )),
            },
        }
    }
}

/// Keys of `data.meta` that only the envelope may write.
fn is_reserved_meta_key(key: &str) -> bool {
    key == "tokens_estimated"
        || key == "truncated"
        || key == "envelope_unshrinkable"
        || key.starts_with("truncated_")
}

/// A success payload after the budget: what stays, its meta, and what was cut.
#[derive(Debug)]
pub struct Finished {
    pub data: Map<String, Value>,
    pub meta: Map<String, Value>,
    /// Every list the ladder cut, by JSON pointer below `data`.
    pub cuts: Vec<Cut>,
    /// True when even the last rung of the ladder left the answer over budget.
    pub unshrinkable: bool,
}

impl Finished {
    /// `{"ok": true, "data": {..., "meta": {...}}}`.
    pub fn into_envelope(self) -> Value {
        let mut data = self.data;
        data.insert("meta".to_string(), Value::Object(self.meta));
        let mut envelope = Map::with_capacity(2);
        envelope.insert("ok".to_string(), Value::Bool(true));
        envelope.insert("data".to_string(), Value::Object(data));
        Value::Object(envelope)
    }
}

/// Builds a success envelope `{"ok": true, "data": {..., "meta": {...}}}`.
///
/// `data` must be a JSON object (the meta block lives inside it). Any `meta`
/// the payload carries keeps its tool diagnostics but loses every key the
/// envelope owns; `layer` comes from `layer` when given, else from the payload.
pub fn ok(data: Map<String, Value>, layer: Option<&str>, budget: Budget) -> Value {
    finish_with(data, Map::new(), layer, budget, Hints::default(), |_, _| {}).into_envelope()
}

/// Builds an error envelope `{"ok": false, "error": {...}}` with nothing trimmed.
pub fn fail(error: &ErrorBody) -> Value {
    serde_json::json!({"ok": false, "error": error})
}

/// Applies the budget to a tool's payload whose diagnostics come apart in
/// `diagnostics`; `hints` say which lists are continuable or cut first, and
/// `after_cuts` may write into the payload (within `hints.reserve`) once the
/// cuts are known, before its size is estimated.
pub fn finish_with(
    mut data: Map<String, Value>,
    diagnostics: Map<String, Value>,
    layer: Option<&str>,
    budget: Budget,
    hints: Hints<'_>,
    after_cuts: impl FnOnce(&mut Map<String, Value>, &[Cut]),
) -> Finished {
    let mut meta = match data.shift_remove("meta") {
        Some(Value::Object(caller_meta)) => caller_meta,
        _ => Map::new(),
    };
    meta.extend(diagnostics);
    meta.retain(|key, _| !is_reserved_meta_key(key));
    if let Some(layer) = layer {
        meta.insert("layer".to_string(), Value::String(layer.to_string()));
    }
    if !meta.contains_key("layer") {
        meta.insert("layer".to_string(), Value::String("unknown".to_string()));
    }
    let limit = budget.limit_for(subgraph::is_graph_shaped(&data));
    let report = match limit {
        Some(limit) => trim::apply(&mut data, planned_outside(&meta), limit, hints),
        None => report::Report::default(),
    };
    after_cuts(&mut data, &report.cuts);
    let cuts = report.cuts.clone();
    let unshrinkable = report.unshrinkable;
    report.write_into(&mut meta);
    meta.insert("tokens_estimated".to_string(), Value::from(0u64));
    let tokens = estimate_tokens(&data, &meta);
    meta.insert("tokens_estimated".to_string(), Value::from(tokens));
    Finished {
        data,
        meta,
        cuts,
        unshrinkable,
    }
}

/// Weight of the success envelope around the data's fields, before any marker.
fn planned_outside(meta: &Map<String, Value>) -> usize {
    let mut planned = meta.clone();
    planned.insert("truncated".to_string(), Value::Bool(false));
    planned.insert(
        "tokens_estimated".to_string(),
        Value::from(trim::TOKENS_PLACEHOLDER),
    );
    envelope_punctuation(false) + measure::weight(&planned)
}

/// Characters the envelope adds around the data object's own fields and the meta object.
fn envelope_punctuation(data_is_empty: bool) -> usize {
    // `{"ok":true,"data":` + `}` around data, and `"meta":` plus a comma when data has fields.
    let wrapper = r#"{"ok":true,"data":"#.len() + 1;
    let meta_key = r#""meta":"#.len() + usize::from(!data_is_empty);
    wrapper + meta_key
}

/// Exact size of `{"ok":true,"data":{<data>,"meta":<meta>}}`.
fn envelope_size(data: &Map<String, Value>, meta: &Map<String, Value>) -> measure::Size {
    let data_size = measure::measure(data);
    let meta_size = measure::measure(meta);
    measure::Size {
        ascii: data_size.ascii + meta_size.ascii + envelope_punctuation(data.is_empty()),
        non_ascii: data_size.non_ascii + meta_size.non_ascii,
    }
}

/// Builds an error envelope whose `details` are trimmed to `budget` like any
/// payload, with the markers in `error.meta`. When even that cannot fit, the
/// details are dropped and `error.meta.truncated_details` says so.
pub fn fail_within(error: &ErrorBody, budget: Budget) -> Value {
    let envelope = fail(error);
    let Some(limit) = budget.limit_for(false) else {
        return envelope;
    };
    if measure::weight(&envelope) <= limit || error.details.is_none() {
        return envelope;
    }
    let mut error = error.clone();
    let mut holder = Map::new();
    holder.insert(
        "details".to_string(),
        error.details.take().unwrap_or(Value::Null),
    );
    let outside = measure::weight(&fail(&error)) + r#","meta":{}"#.len();
    let report = trim::apply(&mut holder, outside, limit, Hints::default());
    let mut meta = Map::new();
    if report.unshrinkable {
        meta.insert("truncated".to_string(), Value::Bool(true));
        meta.insert(
            "truncated_details".to_string(),
            Value::String("removed: over the budget even when trimmed".to_string()),
        );
    } else {
        error.details = holder.shift_remove("details");
        report.write_into(&mut meta);
    }
    error.meta = Some(meta);
    fail(&error)
}

/// Tokens of the whole success envelope as it will be serialised.
fn estimate_tokens(data: &Map<String, Value>, meta: &Map<String, Value>) -> u64 {
    // Measured with a one-digit placeholder; the real figure's extra digits are
    // ASCII, so the fixed point is found with arithmetic, not re-serialisation.
    let size = envelope_size(data, meta);
    let mut tokens = size.tokens();
    loop {
        let ascii = size.ascii + tokens.to_string().len() - 1;
        let next = measure::Size {
            ascii,
            non_ascii: size.non_ascii,
        }
        .tokens();
        if next == tokens {
            return tokens as u64;
        }
        tokens = next;
    }
}

#[cfg(test)]
mod contract_tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn spoofed_meta_is_stripped_and_recomputed() {
        let data = object(json!({
            "answer": 42,
            "meta": {"layer": "tasks", "truncated": true, "tokens_estimated": 1,
                     "truncated_results_from": 9, "envelope_unshrinkable": true,
                     "resolved_from": "direct"}
        }));
        let envelope = ok(data, None, Budget::Agent);
        let meta = &envelope["data"]["meta"];
        assert_eq!(meta["truncated"], json!(false));
        assert_eq!(meta["layer"], json!("tasks"));
        assert_eq!(meta["resolved_from"], json!("direct"));
        assert!(meta.get("truncated_results_from").is_none());
        assert!(meta.get("envelope_unshrinkable").is_none());
        assert!(meta["tokens_estimated"].as_u64().unwrap() > 1);
    }

    #[test]
    fn tokens_estimated_matches_the_wire() {
        let data = object(json!({"text": "x".repeat(4000), "name": "日本"}));
        let envelope = ok(data, Some("health"), Budget::Agent);
        let wire = serde_json::to_vec(&envelope).unwrap();
        let actual = measure::Size::of_bytes(&wire).tokens() as u64;
        assert_eq!(
            envelope["data"]["meta"]["tokens_estimated"].as_u64(),
            Some(actual)
        );
    }

    #[test]
    fn categories_default_retryable_as_the_seed_says() {
        for category in Category::ALL {
            let expected = matches!(category, Category::Transient | Category::Unavailable);
            assert_eq!(category.default_retryable(), expected, "{category}");
        }
        let body =
            ErrorBody::new(Category::Conflict, Code::STALE_READ, "changed").with_retryable(true);
        assert!(body.retryable);
        let envelope = fail(&body);
        assert_eq!(envelope["ok"], json!(false));
        assert_eq!(envelope["error"]["category"], json!("conflict"));
        assert_eq!(envelope["error"]["code"], json!("STALE_READ"));
    }

    #[test]
    fn budget_parses() {
        assert_eq!("agent".parse::<Budget>(), Ok(Budget::Agent));
        assert_eq!("none".parse::<Budget>(), Ok(Budget::None));
        assert_eq!("graph".parse::<Budget>(), Ok(Budget::Graph));
        assert_eq!("1200".parse::<Budget>(), Ok(Budget::Chars(1200)));
        assert!("0".parse::<Budget>().is_err());
        assert!("lots".parse::<Budget>().is_err());
    }
}
