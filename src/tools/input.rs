//! Tool arguments from JSON: deserialised with the path of the field at fault,
//! and serde's wording turned into plain words an agent can act on (the field,
//! what was expected, what came), never passed through.

use super::ToolError;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// Deserialises tool arguments, naming the field at fault in plain words.
pub fn parse<T: DeserializeOwned>(arguments: Value) -> Result<T, ToolError> {
    let arguments = if arguments.is_null() {
        Value::Object(Map::new())
    } else {
        arguments
    };
    if !arguments.is_object() {
        return Err(ToolError::invalid(
            "arguments",
            format!("an object of named arguments, got {}", kind_of(&arguments)),
        ));
    }
    deserialize(arguments)
}

/// Deserialises any JSON value as `T`, naming the field at fault in plain words.
pub fn deserialize<T: DeserializeOwned>(mut value: Value) -> Result<T, ToolError> {
    integral_numbers(&mut value);
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let wording = error.into_inner().to_string();
        refusal(&path, &wording)
    })
}

/// Rewrites numbers with a zero fraction (`2.0`) as integers: JSON Schema
/// counts them as integers, so a client may send one where an integer is
/// asked for. Beyond 2^53 a float no longer names one integer, and stays.
fn integral_numbers(value: &mut Value) {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    match value {
        Value::Number(number) if number.is_f64() => {
            if let Some(float) = number.as_f64()
                && float.fract() == 0.0
                && float.abs() <= EXACT
            {
                // within 2^53 the conversion is exact
                *value = Value::from(float as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        Value::Object(map) => map.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// The refusal for serde's `wording` about the value at `path` (`.` or empty
/// for the root), as front doors that parse on their own (REST bodies, query
/// strings) report it too.
pub fn refusal(path: &str, wording: &str) -> ToolError {
    let path = if path.is_empty() { "." } else { path };
    let parent = if path == "." { None } else { Some(path) };
    // serde_path_to_error's path already ends at an unknown field, not at a missing one
    let join = |field: &str| match parent {
        Some(parent) if parent == field || parent.ends_with(&format!(".{field}")) => {
            parent.to_string()
        }
        Some(parent) => format!("{parent}.{field}"),
        None => field.to_string(),
    };
    if let Some(field) = between(wording, "missing field `", "`") {
        let field = join(field);
        return ToolError::invalid(&field, "a value (this argument is required)");
    }
    if let Some(field) = between(wording, "unknown field `", "`") {
        let allowed = backticked(wording.split_once("expected").map_or("", |(_, rest)| rest));
        let field = join(field);
        let expected = if allowed.is_empty() {
            "no such argument".to_string()
        } else {
            format!("no such argument; the arguments are {}", allowed.join(", "))
        };
        return ToolError::invalid(&field, expected).with_details(json!({
            "field": field, "expected": "one of the tool's arguments", "allowed": allowed,
        }));
    }
    let field = parent.unwrap_or("arguments");
    if let Some(variant) = between(wording, "unknown variant `", "`") {
        let allowed = backticked(wording.split_once("expected").map_or("", |(_, rest)| rest));
        return ToolError::invalid(
            field,
            format!("one of {}, got {variant:?}", allowed.join(", ")),
        )
        .with_details(json!({"field": field, "expected": "one of the allowed values", "allowed": allowed, "got": variant}));
    }
    let mismatch = wording
        .strip_prefix("invalid type: ")
        .or_else(|| wording.strip_prefix("invalid value: "));
    if let Some(rest) = mismatch {
        let (found, expected) = rest
            .split_once(", expected ")
            .unwrap_or((rest, "another value"));
        return ToolError::invalid(
            field,
            format!("{}, got {}", plain_expected(expected), plain_found(found)),
        );
    }
    if let Some(rest) = wording.strip_prefix("invalid length ") {
        let expected = rest
            .split_once(", expected ")
            .map_or("another length", |(_, e)| e);
        return ToolError::invalid(field, format!("a list of {expected}"));
    }
    if wording.contains("invalid digit") || wording.contains("empty string") {
        return ToolError::invalid(field, "a whole number");
    }
    if wording.contains("too large") || wording.contains("too small") {
        return ToolError::invalid(field, "a whole number in the documented range");
    }
    ToolError::invalid(
        field,
        "a value of the documented type (see the input schema)",
    )
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    let to = text[from..].find(end)? + from;
    Some(&text[from..to])
}

/// Every `word` in backticks, in order.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// serde's name for an expected type, in plain words.
fn plain_expected(expected: &str) -> String {
    let expected = expected.trim();
    let bounds = |low: &str, high: &str| format!("a whole number from {low} to {high}");
    match expected {
        "u8" => bounds("0", "255"),
        "u16" => bounds("0", "65535"),
        "u32" => bounds("0", "4294967295"),
        "u64" | "usize" => "a whole number of 0 or more".to_string(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" | "bool" => "true or false".to_string(),
        "a string" | "a borrowed string" | "string" => "text (a JSON string)".to_string(),
        "a sequence" => "a list".to_string(),
        "a map" => "an object".to_string(),
        "a character" | "char" => "a single character".to_string(),
        other if other.starts_with("struct ") => "an object".to_string(),
        other if other.starts_with("a sequence") || other.starts_with("an array") => {
            "a list".to_string()
        }
        other if other.starts_with("enum ") => "one of the allowed values".to_string(),
        other if other.starts_with("one of ") => other.replace('`', ""),
        other => other.replace('`', ""),
    }
}

/// serde's description of what came, in plain words.
fn plain_found(found: &str) -> String {
    let found = found.trim();
    let value = || between(found, "`", "`").map(str::to_string);
    if found == "sequence" {
        return "a list".to_string();
    }
    if found == "map" {
        return "an object".to_string();
    }
    if found == "null" || found == "unit value" {
        return "null".to_string();
    }
    if found.starts_with("string ") {
        return format!("the text {}", found.trim_start_matches("string "));
    }
    if found.starts_with("integer") || found.starts_with("floating point") {
        return value().map_or("a number".to_string(), |n| format!("the number {n}"));
    }
    if found.starts_with("boolean") {
        return value().unwrap_or_else(|| "a boolean".to_string());
    }
    found.replace('`', "")
}

/// The JSON kind of a value, in plain words.
pub fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A bounded count or depth: `default` when absent, else within `low..=high`.
pub fn in_range(
    field: &str,
    value: Option<u32>,
    default: u32,
    low: u32,
    high: u32,
) -> Result<u32, ToolError> {
    match value {
        None => Ok(default),
        Some(n) if (low..=high).contains(&n) => Ok(n),
        Some(n) => Err(ToolError::invalid(
            field,
            format!("{low} to {high}, got {n}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Sample {
        id: u32,
        kind: Option<Kind>,
        labels: Option<Vec<String>>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Feature,
        Bug,
    }

    fn refused(arguments: Value) -> (String, String) {
        let Err(ToolError::Fail(body)) = parse::<Sample>(arguments) else {
            panic!("accepted");
        };
        let field = body
            .details
            .as_ref()
            .map(|d| d["field"].as_str().unwrap_or("").to_string());
        (field.unwrap_or_default(), body.message)
    }

    #[test]
    fn a_number_with_a_zero_fraction_is_taken_as_an_integer() {
        let sample: Sample = parse(json!({"id": 2.0})).expect("2.0 is the integer 2");
        assert_eq!(sample.id, 2);
        let (field, message) = refused(json!({"id": 2.5}));
        assert_eq!(field, "id");
        assert!(message.contains("2.5"), "{message}");
        let (field, _) = refused(json!({"id": 1e300}));
        assert_eq!(field, "id", "too large to be one integer");
    }

    #[test]
    fn messages_name_the_real_field_in_plain_words() {
        let (field, message) = refused(json!({}));
        assert_eq!(field, "id");
        assert!(message.contains("required"), "{message}");

        let (field, message) = refused(json!({"id": [1]}));
        assert_eq!(field, "id");
        assert_eq!(
            message,
            "id: a whole number from 0 to 4294967295, got a list"
        );

        let (field, message) = refused(json!({"id": -1}));
        assert_eq!(field, "id");
        assert!(message.ends_with("got the number -1"), "{message}");

        let (field, message) = refused(json!({"id": 1, "kind": "nonsense"}));
        assert_eq!(field, "kind");
        assert_eq!(message, "kind: one of feature, bug, got \"nonsense\"");

        let (field, message) = refused(json!({"id": 1, "labels": "x"}));
        assert_eq!(field, "labels");
        assert!(message.contains("a list"), "{message}");

        let (field, message) = refused(json!({"id": 1, "colour": "red"}));
        assert_eq!(field, "colour");
        assert!(message.contains("id, kind, labels"), "{message}");

        let (field, message) = refused(json!([1, 2]));
        assert_eq!(field, "arguments");
        assert!(message.contains("got a list"), "{message}");
    }

    #[test]
    fn no_parser_wording_reaches_the_caller() {
        for arguments in [
            json!({}),
            json!({"id": "7"}),
            json!({"id": 1.5}),
            json!({"id": true}),
            json!({"id": null}),
            json!({"id": {"a": 1}}),
            json!({"id": 1, "kind": 3}),
            json!({"id": 1, "labels": [1]}),
            json!("text"),
        ] {
            let (_, message) = refused(arguments.clone());
            for serde_word in [
                "invalid type",
                "expected u32",
                "sequence",
                "`",
                "struct Sample",
            ] {
                assert!(!message.contains(serde_word), "{arguments} -> {message}");
            }
        }
    }
}
