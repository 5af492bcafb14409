//! Lean tool definitions: the schemas `tools/list` gives, cut to what a
//! model reads and a client checks. The registry's schemas (the REST spec,
//! the argument checks) stay whole; these leave out only what repeats or
//! what the hub checks again on every call.
//!
//! An input schema keeps every field, type, enum, bound and requirement: the
//! text rules' long patterns become a few words, an optional field is simply
//! optional (the hub still takes `null`), and a tagged union becomes one
//! object whose description says which fields each variant takes. An output
//! schema keeps the shape (types, required fields, enums, nesting) and drops
//! descriptions and bounds, so it only ever accepts more than the hub
//! answers: a client validating against it never refuses a real answer.

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

use crate::tools::text;

/// Keywords whose value maps names to schemas.
const SCHEMA_MAPS: [&str; 2] = ["properties", "$defs"];
/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: [&str; 3] = ["oneOf", "anyOf", "allOf"];
/// Keywords whose value is one schema.
const SCHEMA_ONE: [&str; 3] = ["items", "additionalProperties", "not"];
/// What an output schema drops: words for people and bounds on values,
/// none of which changes the shape an answer has.
const OUTPUT_DROPS: [&str; 14] = [
    "description",
    "title",
    "examples",
    "default",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];
/// A maximum this large is a guard against overflow, not a limit a caller
/// could meet.
const UNBOUNDED: u64 = 100_000_000;
/// Nor is a length this long, on a path or a query; the hub names it when
/// it refuses one.
const LONG_TEXT: u64 = 1_000;

/// The input schema a model reads for a tool.
pub fn input_schema(schema: &Value) -> Map<String, Value> {
    let mut schema = schema.clone();
    visit(&mut schema, &mut lean_input_node);
    // after the unions are merged (a closed variant is what tells one): the
    // hub refuses an unknown argument by name, a model needs no rule for it
    visit(&mut schema, &mut |node| {
        if node.get("additionalProperties") == Some(&json!(false)) {
            node.remove("additionalProperties");
        }
    });
    drop_unreferenced_definitions(&mut schema);
    inline_single_use_definitions(&mut schema);
    into_object(schema)
}

/// The schema of a tool's `structuredContent`: the success envelope, whose
/// `data` is the tool's output plus `meta`, or the fail envelope.
pub fn output_schema(output: &Value) -> Map<String, Value> {
    let mut data = output.clone();
    let definitions = match data.as_object_mut().and_then(|o| o.remove("$defs")) {
        Some(Value::Object(definitions)) => definitions,
        _ => Map::new(),
    };
    if let Some(properties) = data
        .as_object_mut()
        .map(|o| o.entry("properties").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
    {
        // what meta holds is the contract of the initialize instructions
        properties.insert("meta".into(), json!({"type": "object"}));
    }
    let mut schema = json!({
        "type": "object",
        "required": ["ok"],
        "oneOf": [
            {"required": ["data"], "properties": {"ok": {"const": true}, "data": data}},
            {"required": ["error"], "properties": {
                "ok": {"const": false},
                "error": error_schema()
            }}
        ],
        "$defs": definitions
    });
    visit(&mut schema, &mut |node| {
        OUTPUT_DROPS.iter().for_each(|keyword| {
            node.remove(*keyword);
        });
    });
    drop_unreferenced_definitions(&mut schema);
    inline_single_use_definitions(&mut schema);
    into_object(schema)
}

/// The error member's shape; its categories and closed list of codes are
/// the contract the initialize instructions state (the REST spec and
/// docs/errors.md list every code), not repeated in each tool's schema.
fn error_schema() -> Value {
    json!({"type": "object", "required": ["category", "code", "retryable", "message"]})
}

fn into_object(schema: Value) -> Map<String, Value> {
    match schema {
        Value::Object(map) => map,
        _ => Map::from_iter([("type".to_string(), json!("object"))]),
    }
}

/// Calls `lean` on every schema object inside `schema`, innermost first, so
/// a node is leaned after the schemas it holds.
fn visit(schema: &mut Value, lean: &mut impl FnMut(&mut Map<String, Value>)) {
    let Value::Object(node) = schema else {
        return;
    };
    for (keyword, value) in node.iter_mut() {
        let keyword = keyword.as_str();
        if SCHEMA_MAPS.contains(&keyword) {
            if let Value::Object(named) = value {
                named.values_mut().for_each(|inner| visit(inner, lean));
            }
        } else if SCHEMA_LISTS.contains(&keyword) {
            if let Value::Array(list) = value {
                list.iter_mut().for_each(|inner| visit(inner, lean));
            }
        } else if SCHEMA_ONE.contains(&keyword) {
            visit(value, lean);
        }
    }
    lean(node);
}

fn lean_input_node(node: &mut Map<String, Value>) {
    collapse_nullable(node);
    if matches!(node.get("format"), Some(Value::String(f)) if f.starts_with("int") || f.starts_with("uint"))
    {
        // `integer` with its bounds says it
        node.remove("format");
    }
    if let Some(Value::String(pattern)) = node.get("pattern")
        && let Some(rule) = text::rule_spelled_by(pattern)
    {
        node.remove("pattern");
        if let Some(phrase) = rule.phrase {
            node.entry("description").or_insert(json!(phrase));
        }
    }
    if node.get("minLength") == Some(&json!(1)) {
        // "not empty" goes without saying for a model; the hub says it if needed
        node.remove("minLength");
    }
    spell_out_comma_list(node);
    merge_tagged_union(node);
    if node.get("maximum").and_then(Value::as_u64) >= Some(UNBOUNDED) {
        node.remove("maximum");
    }
    if node.get("maxLength").and_then(Value::as_u64) >= Some(LONG_TEXT) {
        node.remove("maxLength");
    }
    if let Some(Value::String(description)) = node.get_mut("description") {
        *description = description.split_whitespace().collect::<Vec<_>>().join(" ");
    }
}

/// `^ *(?:a|b)(?: *, *(?:a|b))* *$` (tools::schema::comma_list_of) in words.
fn spell_out_comma_list(node: &mut Map<String, Value>) {
    let Some(Value::String(pattern)) = node.get("pattern") else {
        return;
    };
    let Some(values) = pattern
        .strip_prefix("^ *(?:")
        .and_then(|rest| rest.split_once(")(?: *, *(?:"))
        .filter(|(values, rest)| *rest == format!("{values}))* *$"))
        .map(|(values, _)| values.replace('|', ", "))
    else {
        return;
    };
    node.remove("pattern");
    let description = match node.get("description").and_then(Value::as_str) {
        Some(own) if own.contains("comma-separated") => {
            format!("{}: {values}.", own.trim_end_matches('.'))
        }
        Some(own) => format!("{own} Comma-separated, any of: {values}."),
        None => format!("Comma-separated, any of: {values}."),
    };
    node.insert("description".into(), json!(description));
}

/// `type: [T, "null"]` and `oneOf: [S, {type: null}]` as `T` and `S`: an
/// argument left out means the same as `null` to every tool.
fn collapse_nullable(node: &mut Map<String, Value>) {
    let null = json!("null");
    if let Some(Value::Array(types)) = node.get("type")
        && types.len() == 2
        && types.contains(&null)
        && let Some(other) = types.iter().find(|t| **t != null).cloned()
    {
        node.insert("type".into(), other);
    }
    let null_schema = json!({"type": "null"});
    let Some(Value::Array(variants)) = node.get("oneOf") else {
        return;
    };
    if variants.len() != 2 || !variants.contains(&null_schema) {
        return;
    }
    let Some(Value::Object(other)) = variants.iter().find(|v| **v != null_schema).cloned() else {
        return;
    };
    node.remove("oneOf");
    for (keyword, value) in other {
        node.entry(keyword).or_insert(value);
    }
}

/// A `oneOf` of closed objects told apart by one tag property, as one
/// object: the tag's values, every field, the fields all variants require,
/// and a description naming each variant's fields. It accepts every value
/// the union does; the hub refuses a field a variant does not take.
fn merge_tagged_union(node: &mut Map<String, Value>) {
    let Some(Value::Array(variants)) = node.get("oneOf") else {
        return;
    };
    let Some(tag) = common_tag(variants) else {
        return;
    };
    let mut values = Vec::new();
    let mut properties = Map::new();
    let mut required: Option<BTreeSet<String>> = None;
    let mut summaries = Vec::new();
    for variant in variants {
        let fields = variant["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let needs = required_of(variant);
        for (field, schema) in &fields {
            if field == &tag {
                continue;
            }
            match properties.get(field) {
                Some(seen) if !same_shape(seen, schema) => return,
                Some(_) => {}
                None => {
                    properties.insert(field.clone(), schema.clone());
                }
            }
        }
        let value = tag_value(&fields[&tag]).unwrap_or(Value::Null);
        summaries.push(variant_summary(&value, &tag, &fields, &needs, variant));
        values.push(value);
        required = Some(match required {
            None => needs,
            Some(all) => all.intersection(&needs).cloned().collect(),
        });
    }
    properties.insert(tag.clone(), json!({"type": "string", "enum": values}));
    let description = match node.get("description").and_then(Value::as_str) {
        Some(own) => format!("{own} By `{tag}`: {}", summaries.join(" | ")),
        None => format!("By `{tag}`: {}", summaries.join(" | ")),
    };
    node.remove("oneOf");
    node.insert("type".into(), json!("object"));
    node.insert(
        "required".into(),
        json!(required.unwrap_or_default().into_iter().collect::<Vec<_>>()),
    );
    node.insert("properties".into(), Value::Object(properties));
    node.insert("additionalProperties".into(), json!(false));
    node.insert("description".into(), json!(description));
}

/// The property every variant requires as a one-value enum or a const.
fn common_tag(variants: &[Value]) -> Option<String> {
    let first = variants.first()?;
    if variants.len() < 2 {
        return None;
    }
    let closed = |v: &Value| v["type"] == "object" && v["additionalProperties"] == json!(false);
    if !variants.iter().all(closed) {
        return None;
    }
    required_of(first).into_iter().find(|name| {
        variants.iter().all(|variant| {
            required_of(variant).contains(name)
                && tag_value(&variant["properties"][name.as_str()]).is_some()
        })
    })
}

fn required_of(schema: &Value) -> BTreeSet<String> {
    schema["required"]
        .as_array()
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

fn tag_value(schema: &Value) -> Option<Value> {
    if let Some(value) = schema.get("const") {
        return Some(value.clone());
    }
    match schema.get("enum") {
        Some(Value::Array(values)) if values.len() == 1 => values.first().cloned(),
        _ => None,
    }
}

/// Two field schemas that differ at most in their descriptions.
fn same_shape(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("description");
        }
        v
    };
    strip(a) == strip(b)
}

/// `replace_text (find, replace, expected_count?): Replaces ...`.
fn variant_summary(
    value: &Value,
    tag: &str,
    fields: &Map<String, Value>,
    needs: &BTreeSet<String>,
    variant: &Value,
) -> String {
    let mut listed: Vec<String> = fields
        .keys()
        .filter(|field| field.as_str() != tag && needs.contains(*field))
        .cloned()
        .collect();
    listed.extend(
        fields
            .keys()
            .filter(|field| field.as_str() != tag && !needs.contains(*field))
            .map(|field| format!("{field}?")),
    );
    let name = value
        .as_str()
        .map(String::from)
        .unwrap_or(value.to_string());
    let what = variant["description"].as_str().unwrap_or("");
    let what = what.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{name} ({}) {what}", listed.join(", "))
        .trim_end()
        .to_string()
}

/// Removes the `$defs` nothing refers to any more (a merged union's
/// variants, an error body replaced by the lean one).
fn drop_unreferenced_definitions(schema: &mut Value) {
    let Some(Value::Object(definitions)) = schema.as_object_mut().and_then(|o| o.remove("$defs"))
    else {
        return;
    };
    let mut used = BTreeSet::new();
    let mut pending = Vec::new();
    references(schema, &mut pending);
    while let Some(name) = pending.pop() {
        if used.insert(name.clone())
            && let Some(definition) = definitions.get(&name)
        {
            references(definition, &mut pending);
        }
    }
    let kept: Map<String, Value> = definitions
        .into_iter()
        .filter(|(name, _)| used.contains(name))
        .collect();
    if !kept.is_empty()
        && let Some(object) = schema.as_object_mut()
    {
        object.insert("$defs".into(), Value::Object(kept));
    }
}

/// Puts each definition referred to once, from outside itself, in place of
/// its reference: a name and a `$ref` cost more than they save there.
fn inline_single_use_definitions(schema: &mut Value) {
    let Some(Value::Object(mut definitions)) =
        schema.as_object_mut().and_then(|o| o.remove("$defs"))
    else {
        return;
    };
    let mut found = Vec::new();
    references(schema, &mut found);
    definitions.values().for_each(|d| references(d, &mut found));
    let once: BTreeSet<String> = definitions
        .iter()
        .filter(|(name, definition)| {
            let mut inside = Vec::new();
            references(definition, &mut inside);
            found.iter().filter(|n| n == name).count() == 1 && !inside.contains(name)
        })
        .map(|(name, _)| name.clone())
        .collect();
    let inlined: Map<String, Value> = once
        .iter()
        .filter_map(|name| definitions.remove(name).map(|d| (name.clone(), d)))
        .collect();
    let mut place = |value: &mut Value| replace_references(value, &inlined);
    place(schema);
    definitions.values_mut().for_each(&mut place);
    if !definitions.is_empty()
        && let Some(object) = schema.as_object_mut()
    {
        object.insert("$defs".into(), Value::Object(definitions));
    }
}

/// Replaces each `{"$ref": "#/$defs/N", ...}` whose N is in `inlined` by the
/// definition, keeping the referring node's own keywords (its description).
fn replace_references(value: &mut Value, inlined: &Map<String, Value>) {
    match value {
        Value::Object(map) => {
            let target = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|t| t.strip_prefix("#/$defs/"))
                .and_then(|name| inlined.get(name))
                .cloned();
            if let Some(Value::Object(definition)) = target {
                map.remove("$ref");
                for (keyword, inner) in definition {
                    map.entry(keyword).or_insert(inner);
                }
            }
            map.values_mut()
                .for_each(|inner| replace_references(inner, inlined));
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|inner| replace_references(inner, inlined)),
        _ => {}
    }
}

fn references(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner) {
                    ("$ref", Value::String(target)) => {
                        if let Some(name) = target.strip_prefix("#/$defs/") {
                            found.push(name.to_string());
                        }
                    }
                    _ => references(inner, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|inner| references(inner, found)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tagged() -> Value {
        json!({
            "type": "object",
            "properties": {"edit": {"$ref": "#/$defs/Edit"}},
            "$defs": {
                "Edit": {"description": "One edit.", "oneOf": [
                    {"type": "object", "description": "Puts text in.",
                     "required": ["op", "text"], "additionalProperties": false,
                     "properties": {"op": {"type": "string", "enum": ["put"]},
                                    "text": {"type": "string"}, "at": {"type": "integer"}}},
                    {"type": "object", "description": "Takes it out.",
                     "required": ["op"], "additionalProperties": false,
                     "properties": {"op": {"type": "string", "enum": ["cut"]},
                                    "at": {"type": "integer"}}}
                ]},
                "Unused": {"type": "string"}
            }
        })
    }

    #[test]
    fn a_tagged_union_becomes_one_object_naming_each_variants_fields() {
        let lean = Value::Object(input_schema(&tagged()));
        // referred to once, so put in place
        let edit = &lean["properties"]["edit"];
        assert_eq!(edit["properties"]["op"]["enum"], json!(["put", "cut"]));
        assert_eq!(edit["required"], json!(["op"]));
        assert!(edit.get("additionalProperties").is_none(), "{edit}");
        let description = edit["description"].as_str().unwrap();
        assert!(
            description.contains("put (text, at?) Puts text in.")
                && description.contains("cut (at?) Takes it out."),
            "{description}"
        );
        assert!(lean.get("$defs").is_none(), "{lean}");
    }

    #[test]
    fn the_lean_input_schema_accepts_every_value_the_union_accepts() {
        let full = jsonschema::validator_for(&tagged()).unwrap();
        let lean = jsonschema::validator_for(&Value::Object(input_schema(&tagged()))).unwrap();
        for edit in [
            json!({"op": "put", "text": "x"}),
            json!({"op": "put", "text": "x", "at": 3}),
            json!({"op": "cut"}),
            json!({"op": "cut", "at": 1}),
        ] {
            let value = json!({"edit": edit});
            assert!(full.is_valid(&value) && lean.is_valid(&value), "{value}");
        }
        assert!(!lean.is_valid(&json!({"edit": {"op": "paste"}})));
    }

    #[test]
    fn a_text_rule_pattern_becomes_its_phrase_and_optional_means_left_out() {
        let name = text::rule_spelled_by(&(text::SCHEMA_RULES[2].pattern)()).unwrap();
        let path = text::rule_spelled_by(&(text::SCHEMA_RULES[5].pattern)()).unwrap();
        let full = json!({"type": "object", "properties": {
            "title": {"type": ["string", "null"], "pattern": (name.pattern)(), "minLength": 1},
            "path": {"type": "string", "pattern": (path.pattern)()},
            "label": {"type": "string", "pattern": (name.pattern)(), "description": "A\n label."},
            "kind": {"oneOf": [{"$ref": "#/$defs/Kind"}, {"type": "null"}], "description": "Which."},
            "count": {"type": "integer", "format": "int64", "minimum": 1}
        }, "$defs": {"Kind": {"type": "string", "enum": ["a", "b"]}}});
        let lean = Value::Object(input_schema(&full));
        let properties = &lean["properties"];
        assert_eq!(properties["title"], json!({"type": "string"}));
        assert_eq!(
            properties["path"],
            json!({"type": "string", "description": path.phrase})
        );
        assert_eq!(
            properties["label"],
            json!({"type": "string", "description": "A label."})
        );
        assert_eq!(
            properties["kind"],
            json!({"type": "string", "enum": ["a", "b"], "description": "Which."})
        );
        assert_eq!(
            properties["count"],
            json!({"type": "integer", "minimum": 1})
        );
        assert!(lean.get("$defs").is_none(), "used once, so put in place");
    }

    #[test]
    fn an_output_schema_keeps_the_shape_and_takes_both_envelopes() {
        let output = json!({"type": "object", "required": ["task"], "properties": {
            "task": {"$ref": "#/$defs/Task"}
        }, "$defs": {"Task": {"type": "object", "description": "A task.", "required": ["id"],
            "properties": {"id": {"type": "string", "pattern": "^T-[0-9]+$"},
                           "rev": {"type": ["integer", "null"], "minimum": 1}}}}});
        let schema = Value::Object(output_schema(&output));
        let validator = jsonschema::validator_for(&schema).unwrap();
        let meta = json!({"layer": "tasks", "tokens_estimated": 3, "truncated": false});
        assert!(validator.is_valid(
            &json!({"ok": true, "data": {"task": {"id": "anything", "rev": null}, "meta": meta}})
        ));
        assert!(!validator.is_valid(&json!({"ok": true, "data": {"task": {}, "meta": meta}})));
        assert!(validator.is_valid(&json!({"ok": false, "error": {
            "category": "validation", "code": "E_ARGUMENT", "retryable": false, "message": "m",
            "details": {"field": "id"}}})));
        assert!(!validator.is_valid(&json!({"ok": false, "error": {
            "category": "validation", "retryable": false, "message": "m"}})));
        assert!(!schema.to_string().contains("description"), "{schema}");
    }
}
