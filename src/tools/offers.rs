//! What an area offers agents besides tools: resources to read (documents,
//! tasks, the board) and prompts for its workflows. An area declares them
//! as data with plain functions; a front door (MCP) lists, reads and fills
//! them through these declarations alone, so it names no area.
//!
//! A declared function reads only through `Caller`: the same tool functions,
//! runtime, module switches and budget as any client's call, never around
//! them.

use crate::envelope::{Category, Code, ErrorBody};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Calls a tool by name the way the front door calls it.
pub trait Caller {
    /// The tool's answer data, or the error its envelope carried.
    fn call(&self, tool: &str, arguments: Value) -> Result<Value, ErrorBody>;
}

/// The data of an envelope, or its error.
pub fn answer_of(envelope: Value) -> Result<Value, ErrorBody> {
    let Value::Object(mut envelope) = envelope else {
        return Err(malformed());
    };
    if envelope.get("ok") == Some(&Value::Bool(true)) {
        return Ok(envelope.remove("data").unwrap_or(Value::Null));
    }
    match envelope.remove("error") {
        Some(error) => match serde_json::from_value::<ErrorBody>(error) {
            Ok(error) => Err(error),
            Err(_) => Err(malformed()),
        },
        None => Err(malformed()),
    }
}

fn malformed() -> ErrorBody {
    ErrorBody::new(
        Category::Internal,
        Code::E_INTERNAL,
        "a tool answered with something that is not an envelope",
    )
}

/// A kind of resource under `cos://<segment>/...`.
pub struct ResourceKind {
    /// The first segment after `cos://`: `docs` for `cos://docs/...`.
    pub segment: &'static str,
    /// RFC 6570 template of its addresses; `None` for a single fixed resource.
    pub template: Option<&'static str>,
    pub name: &'static str,
    pub description: &'static str,
    pub mime_type: &'static str,
    /// One page of this kind's resources, after `cursor` (this kind's own).
    pub list: fn(&dyn Caller, Option<&str>) -> Result<ResourcePage, ErrorBody>,
    /// The resource at an address of this kind.
    pub read: fn(&dyn Caller, &ResourceAddress) -> Result<ResourceText, ErrorBody>,
}

/// A listed resource.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceEntry {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub size: Option<u64>,
    /// Identity an agent can compare later (`rev`, `hash`, `version`).
    pub meta: Map<String, Value>,
}

#[derive(Debug, Default)]
pub struct ResourcePage {
    pub entries: Vec<ResourceEntry>,
    /// This kind's cursor for the next page, if any.
    pub next: Option<String>,
}

/// A resource's text and what identifies it (`rev`, `hash`; `truncated` and
/// how to read on when the budget cut it).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceText {
    pub text: String,
    pub meta: Map<String, Value>,
}

/// An address under a kind: its path segments (decoded) and query.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourceAddress {
    pub segments: Vec<String>,
    pub query: BTreeMap<String, String>,
}

/// The characters an address segment keeps as they are (RFC 3986 unreserved).
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `cos://<segment>/<part>/<part>...`, each part percent-encoded; a part
/// holding `/` (a document's path) keeps its slashes as separators.
pub fn resource_uri(segment: &str, parts: &[&str]) -> String {
    let mut uri = format!("cos://{segment}");
    for part in parts {
        for piece in part.split('/') {
            uri.push('/');
            uri.extend(percent_encoding::utf8_percent_encode(piece, SEGMENT));
        }
    }
    uri
}

/// The kind segment and address of a `cos://` URI, or why it is not one.
pub fn parse_resource_uri(uri: &str) -> Result<(String, ResourceAddress), ErrorBody> {
    let invalid = |expected: &str| {
        ErrorBody::new(
            Category::Validation,
            Code::E_ARGUMENT,
            format!("uri: expected {expected}"),
        )
        .with_details(serde_json::json!({"field": "uri", "uri": uri}))
    };
    let rest = uri
        .strip_prefix("cos://")
        .ok_or_else(|| invalid("a cos:// address (resources/templates/list shows them)"))?;
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let path = path.split_once('#').map_or(path, |(path, _)| path);
    let mut pieces = path.split('/');
    let segment = pieces.next().unwrap_or("").to_string();
    let mut segments = Vec::new();
    for piece in pieces {
        let decoded = percent_encoding::percent_decode_str(piece)
            .decode_utf8()
            .map_err(|_| invalid("percent-encoded UTF-8"))?;
        segments.push(decoded.into_owned());
    }
    let mut parsed = BTreeMap::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |text: &str| {
            percent_encoding::percent_decode_str(text)
                .decode_utf8()
                .map(|text| text.into_owned())
                .map_err(|_| invalid("a percent-encoded UTF-8 query"))
        };
        parsed.insert(decode(key)?, decode(value)?);
    }
    Ok((
        segment,
        ResourceAddress {
            segments,
            query: parsed,
        },
    ))
}

/// A prompt's arguments by name, every one a string as MCP sends them.
pub type PromptArguments = BTreeMap<String, String>;

/// A prompt for one of the area's workflows.
pub struct PromptSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub arguments: &'static [PromptArgument],
    /// The prompt's text, made from live data; arguments are checked
    /// against `arguments` before it runs.
    pub build: fn(&dyn Caller, &PromptArguments) -> Result<String, ErrorBody>,
}

pub struct PromptArgument {
    pub name: &'static str,
    pub description: &'static str,
    pub required: bool,
}

impl PromptSpec {
    /// The arguments if they are the ones this prompt takes: every required
    /// one given and not blank, none it does not know.
    pub fn check(&self, given: &BTreeMap<String, String>) -> Result<(), ErrorBody> {
        for name in given.keys() {
            if !self.arguments.iter().any(|argument| argument.name == name) {
                let known: Vec<&str> = self.arguments.iter().map(|a| a.name).collect();
                return Err(argument_error(
                    name,
                    &format!("one of the prompt's arguments ({})", known.join(", ")),
                ));
            }
        }
        for argument in self.arguments.iter().filter(|argument| argument.required) {
            if given
                .get(argument.name)
                .is_none_or(|value| super::text::is_blank(value))
            {
                return Err(argument_error(
                    argument.name,
                    &format!("a value: {}", argument.description),
                ));
            }
        }
        Ok(())
    }
}

/// A prompt argument that is missing or not one the prompt takes.
pub fn argument_error(name: &str, expected: &str) -> ErrorBody {
    ErrorBody::new(
        Category::Validation,
        Code::E_ARGUMENT,
        format!("{name}: expected {expected}"),
    )
    .with_details(serde_json::json!({"field": name}))
}

/// `cos_search`'s hits as lines a prompt shows, leaving out those `skip`
/// picks (the thing the prompt is about).
pub fn search_lines(found: &Value, skip: impl Fn(&Value) -> bool) -> Vec<String> {
    let hits = found["hits"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    hits.iter()
        .filter(|hit| !skip(hit))
        .map(|hit| {
            let place = match (hit["path"].as_str(), hit["line"].as_u64()) {
                (Some(path), Some(line)) => format!(" at {path}:{line}"),
                (Some(path), None) => format!(" at {path}"),
                _ => String::new(),
            };
            format!(
                "- {} {}: {}{place}",
                hit["area"].as_str().unwrap_or_default(),
                hit["kind"].as_str().unwrap_or_default(),
                hit["title"].as_str().unwrap_or_default(),
            )
        })
        .collect()
}

/// A listing cursor this hub did not give, or one a change made stale.
pub fn cursor_error() -> ErrorBody {
    ErrorBody::new(
        Category::Validation,
        Code::E_CURSOR,
        "cursor: expected a nextCursor from resources/list; list again from the start",
    )
    .with_details(serde_json::json!({"field": "cursor"}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_resource_uri_reads_back_as_the_parts_it_was_made_of(
            parts in proptest::collection::vec("[^/]{1,12}", 1..4),
        ) {
            let borrowed: Vec<&str> = parts.iter().map(String::as_str).collect();
            let uri = resource_uri("docs", &borrowed);
            let (segment, address) = parse_resource_uri(&uri).unwrap();
            prop_assert_eq!(segment, "docs");
            prop_assert_eq!(address.segments, parts);
        }
    }

    #[test]
    fn an_envelope_gives_its_data_or_its_error() {
        let ok = serde_json::json!({"ok": true, "data": {"id": "TASK-1"}});
        assert_eq!(answer_of(ok).unwrap()["id"], "TASK-1");
        let failed = serde_json::json!({"ok": false, "error": {
            "category": "not_found", "code": "E_NOT_FOUND", "retryable": false,
            "message": "no task TASK-9", "details": {"id": "TASK-9"}}});
        let error = answer_of(failed).unwrap_err();
        assert_eq!(
            (error.category, error.code),
            (Category::NotFound, Code::E_NOT_FOUND)
        );
        assert_eq!(
            answer_of(serde_json::json!([1])).unwrap_err().code,
            Code::E_INTERNAL
        );
    }

    #[test]
    fn a_documents_path_keeps_its_slashes_and_a_query_is_decoded() {
        let uri = resource_uri("docs", &["handbook", "guides/set up.md"]);
        assert_eq!(uri, "cos://docs/handbook/guides/set%20up.md");
        let (_, address) =
            parse_resource_uri(&format!("{uri}?section=Setup%2FInstall&rev=3")).unwrap();
        assert_eq!(address.segments, ["handbook", "guides", "set up.md"]);
        assert_eq!(address.query["section"], "Setup/Install");
        assert_eq!(address.query["rev"], "3");
    }

    #[test]
    fn an_address_that_is_not_ours_is_refused_naming_the_field() {
        for uri in ["file:///etc/passwd", "cos://docs/%ff", "cos://x?a=%c3"] {
            let error = parse_resource_uri(uri).unwrap_err();
            assert_eq!(error.code, Code::E_ARGUMENT, "{uri}");
            assert!(error.message.starts_with("uri:"), "{}", error.message);
        }
    }

    #[test]
    fn a_prompt_takes_its_own_arguments_and_needs_the_required_ones() {
        const ARGUMENTS: &[PromptArgument] = &[
            PromptArgument {
                name: "task",
                description: "a task id",
                required: true,
            },
            PromptArgument {
                name: "note",
                description: "anything",
                required: false,
            },
        ];
        let prompt = PromptSpec {
            name: "p",
            title: "P",
            description: "d",
            arguments: ARGUMENTS,
            build: |_, _| Ok(String::new()),
        };
        let given = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        assert!(prompt.check(&given(&[("task", "TASK-1")])).is_ok());
        let missing = prompt.check(&given(&[("note", "x")])).unwrap_err();
        assert_eq!(missing.details.unwrap()["field"], "task");
        let blank = prompt.check(&given(&[("task", "  ")])).unwrap_err();
        assert_eq!(blank.code, Code::E_ARGUMENT);
        let unknown = prompt
            .check(&given(&[("task", "TASK-1"), ("colour", "red")]))
            .unwrap_err();
        assert!(unknown.message.contains("colour"), "{}", unknown.message);
    }
}
