//! JSON Schemas for tool inputs and outputs, generated from the same utoipa
//! types the OpenAPI spec uses, so REST and MCP can never disagree.

use serde_json::{Map, Value};
use utoipa::ToSchema;

/// A self-contained JSON Schema for `T`: the root schema inline, every type it
/// refers to under `$defs`.
pub fn json_schema<T: ToSchema>() -> Value {
    let mut referenced = Vec::new();
    T::schemas(&mut referenced);
    let mut root = serde_json::to_value(T::schema()).unwrap_or(Value::Null);
    if !referenced.is_empty() {
        let definitions: Map<String, Value> = referenced
            .into_iter()
            .map(|(name, schema)| (name, serde_json::to_value(schema).unwrap_or(Value::Null)))
            .collect();
        if let Value::Object(map) = &mut root {
            map.insert("$defs".to_string(), Value::Object(definitions));
        }
    }
    rewrite_refs(&mut root);
    root
}

fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if key == "$ref"
                    && let Value::String(target) = item
                    && let Some(name) = target.strip_prefix("#/components/schemas/")
                {
                    *target = format!("#/$defs/{name}");
                } else {
                    rewrite_refs(item);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}
