//! JSON Schemas for tool inputs and outputs, generated from the same utoipa
//! types the OpenAPI spec uses, so REST and MCP can never disagree.

use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{
    AdditionalProperties, Array, ArrayBuilder, ArrayItems, Object, ObjectBuilder, Schema,
    SchemaFormat, Type,
};

/// A self-contained JSON Schema for `T`: the root schema inline, every type it
/// refers to under `$defs`.
pub fn json_schema<T: ToSchema>() -> Value {
    let mut referenced = Vec::new();
    T::schemas(&mut referenced);
    let mut root = T::schema();
    spell_out_rules(&mut root);
    let mut root = serde_json::to_value(root).unwrap_or(Value::Null);
    if !referenced.is_empty() {
        let definitions: Map<String, Value> = referenced
            .into_iter()
            .map(|(name, mut schema)| {
                spell_out_rules(&mut schema);
                (name, serde_json::to_value(schema).unwrap_or(Value::Null))
            })
            .collect();
        if let Value::Object(map) = &mut root {
            map.insert("$defs".to_string(), Value::Object(definitions));
        }
    }
    rewrite_refs(&mut root);
    root
}

/// A string that is one of `values`, as a field's `schema_with` states a
/// closed list the code keeps.
pub fn one_of(values: &[&str], description: &str) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values.iter().copied()))
        .description(Some(description))
        .build()
}

/// Comma-separated entries, each one of `values`, as a query parameter
/// takes a list.
pub fn comma_list_of(values: &[&str], description: &str) -> Object {
    let one = format!(
        "(?:{})",
        values
            .iter()
            .map(|value| regex::escape(value))
            .collect::<Vec<_>>()
            .join("|")
    );
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!("^ *{one}(?: *, *{one})* *$")))
        .description(Some(description))
        .build()
}

/// A list whose entries are each one of `values`.
pub fn list_of(values: &[&str], description: &str) -> Array {
    ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(values.iter().copied())),
        )
        .description(Some(description))
        .build()
}

/// Replaces each text-rule marker (`format: "cos-name"` and the others of
/// `text::SCHEMA_RULES`) with the pattern that spells the rule, so every
/// published schema states it; closes the variants of tagged enums.
pub fn spell_out_rules(schema: &mut RefOr<Schema>) {
    let RefOr::T(schema) = schema else {
        return;
    };
    match schema {
        Schema::Object(object) => {
            apply_rule(object);
            object.properties.values_mut().for_each(spell_out_rules);
            if let Some(more) = object.additional_properties.as_deref_mut()
                && let AdditionalProperties::RefOr(more) = more
            {
                spell_out_rules(more);
            }
        }
        Schema::Array(array) => {
            if let ArrayItems::RefOrSchema(items) = &mut array.items {
                spell_out_rules(items);
            }
        }
        Schema::OneOf(one_of) => {
            one_of.items.iter_mut().for_each(close_tagged_variant);
            one_of.items.iter_mut().for_each(spell_out_rules);
        }
        Schema::AllOf(all_of) => all_of.items.iter_mut().for_each(spell_out_rules),
        Schema::AnyOf(any_of) => any_of.items.iter_mut().for_each(spell_out_rules),
        _ => {}
    }
}

/// utoipa does not carry `deny_unknown_fields` to the variants of a tagged
/// enum (docs::patch::Operation): a variant named by a one-value tag
/// property is closed, as every tagged enum of the hub is in serde.
fn close_tagged_variant(variant: &mut RefOr<Schema>) {
    let RefOr::T(Schema::Object(object)) = variant else {
        return;
    };
    let tagged = object.required.iter().any(|name| {
        matches!(
            object.properties.get(name),
            Some(RefOr::T(Schema::Object(tag)))
                if tag.enum_values.as_ref().is_some_and(|values| values.len() == 1)
        )
    });
    if tagged && object.additional_properties.is_none() {
        object.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(false)));
    }
}

fn apply_rule(object: &mut Object) {
    let Some(SchemaFormat::Custom(marker)) = &object.format else {
        return;
    };
    let Some(rule) = super::text::SCHEMA_RULES
        .iter()
        .find(|rule| rule.marker == marker)
    else {
        return;
    };
    object.format = None;
    object.pattern = Some((rule.pattern)());
    if let Some((min, max)) = rule.lengths {
        object.min_length = Some(min);
        object.max_length = Some(max);
    }
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
