//! The committed spec is what the code produces, and every operation is typed.

use serde_json::Value;

fn generated() -> Value {
    serde_json::from_str(&cos_hub::web::spec::openapi_json()).expect("spec is JSON")
}

#[test]
fn committed_spec_matches_the_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/openapi.json");
    let committed = std::fs::read_to_string(path).expect("openapi/openapi.json is committed");
    assert!(
        committed == cos_hub::web::spec::openapi_json(),
        "openapi/openapi.json is stale: run `cargo run -- openapi > openapi/openapi.json` and commit it"
    );
}

fn operations(spec: &Value) -> Vec<(String, String, &Value)> {
    let mut found = Vec::new();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            found.push((path.clone(), method.clone(), operation));
        }
    }
    found
}

#[test]
fn every_api_operation_declares_error_envelopes() {
    let spec = generated();
    let operations = operations(&spec);
    assert!(operations.len() >= 5);
    for (path, method, operation) in operations
        .iter()
        .filter(|(path, ..)| path.starts_with("/api"))
    {
        for status in ["400", "404", "500", "503"] {
            let schema =
                &operation["responses"][status]["content"]["application/json"]["schema"]["$ref"];
            assert_eq!(
                schema, "#/components/schemas/ErrorEnvelope",
                "{method} {path} lacks {status}"
            );
        }
        for (status, response) in operation["responses"].as_object().unwrap() {
            if !status.starts_with('2') {
                let schema = &response["content"]["application/json"]["schema"]["$ref"];
                assert_eq!(
                    schema, "#/components/schemas/ErrorEnvelope",
                    "{method} {path} {status}"
                );
            }
        }
    }
    assert!(spec["components"]["schemas"]["ErrorEnvelope"].is_object());
    assert!(spec["components"]["schemas"]["ErrorBody"].is_object());
}

#[test]
fn every_api_operation_has_a_typed_success_body_and_a_unique_id() {
    let spec = generated();
    let mut ids = std::collections::HashSet::new();
    for (path, method, operation) in operations(&spec) {
        let id = operation["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        assert!(ids.insert(id.to_string()), "operationId {id} is used twice");
        assert!(
            !operation["tags"]
                .as_array()
                .map(Vec::is_empty)
                .unwrap_or(true),
            "{id} has a tag"
        );
        let success = operation["responses"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(status, _)| status.starts_with('2'))
            .unwrap_or_else(|| panic!("{id} has no success response"));
        let content = &success.1["content"];
        if let Some(events) = content.get("text/event-stream") {
            // a stream's events are typed too
            let reference = events["schema"]["$ref"].as_str().unwrap_or("");
            assert!(
                reference.starts_with("#/components/schemas/"),
                "{id}: event type, got {reference:?}"
            );
            continue;
        }
        let reference = content["application/json"]["schema"]["$ref"]
            .as_str()
            .unwrap_or("");
        assert!(
            reference.starts_with("#/components/schemas/ApiOk_"),
            "{id}: success body is typed, got {reference:?}"
        );
        let name = reference.trim_start_matches("#/components/schemas/");
        let schema = &spec["components"]["schemas"][name];
        assert!(
            schema["properties"]["data"].is_object() && schema["properties"]["meta"].is_object(),
            "{name}"
        );
    }
}

#[test]
fn every_schema_reference_resolves() {
    let spec = generated();
    let names = spec["components"]["schemas"].as_object().unwrap();
    let mut dangling = Vec::new();
    let mut stack = vec![(String::new(), &spec)];
    while let Some((path, value)) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref")
                    && let Some(name) = target.strip_prefix("#/components/schemas/")
                    && !names.contains_key(name)
                {
                    dangling.push(format!("{path} -> {target}"));
                }
                stack.extend(
                    map.iter()
                        .map(|(key, item)| (format!("{path}/{key}"), item)),
                );
            }
            Value::Array(items) => stack.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| (format!("{path}/{i}"), item)),
            ),
            _ => {}
        }
    }
    assert!(
        dangling.is_empty(),
        "references to schemas the spec does not define: {dangling:?}"
    );
}

#[test]
fn the_closed_code_list_is_published_in_the_spec_and_the_readme() {
    use cos_hub::envelope::Code;
    let spec = generated();
    let published: Vec<&str> = spec["components"]["schemas"]["Code"]["enum"]
        .as_array()
        .expect("the spec publishes Code as an enum")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(published, Code::names());
    assert_eq!(
        spec["components"]["schemas"]["ErrorBody"]["properties"]["code"]["$ref"],
        "#/components/schemas/Code"
    );
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let section = readme
        .split("### Error codes")
        .nth(1)
        .and_then(|rest| rest.split("\n#").next())
        .expect("the README has an Error codes section");
    let rows: Vec<String> = section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(str::to_string)
        .collect();
    let expected: Vec<String> = Code::ALL
        .iter()
        .map(|code| format!("| `{}` | {} |", code.as_str(), code.meaning()))
        .collect();
    assert_eq!(
        rows, expected,
        "the README's error-code table differs from the code"
    );
}

/// Every integer that sizes or bounds an answer (limits, page sizes, depths,
/// hops), in bodies and in query strings, states the range the server
/// enforces, so a generated client refuses what the server would.
#[test]
fn every_size_and_depth_states_its_range() {
    let spec = generated();
    let sized = |name: &str| {
        name.contains("limit") || name == "page_size" || name == "depth" || name.starts_with("max_")
    };
    let mut unbounded = Vec::new();
    let mut check = |place: String, schema: &Value| {
        let integer = schema["type"] == "integer"
            || schema["type"]
                .as_array()
                .is_some_and(|types| types.iter().any(|t| t == "integer"));
        if integer && (schema["minimum"].is_null() || schema["maximum"].is_null()) {
            unbounded.push(place);
        }
    };
    // what a client sends: the tools' inputs and the REST bodies
    let sent = |name: &str| name.ends_with("Input") || name.ends_with("Body");
    for (name, schema) in spec["components"]["schemas"].as_object().unwrap() {
        if !sent(name) {
            continue;
        }
        for (field, property) in schema["properties"].as_object().into_iter().flatten() {
            if sized(field) {
                check(format!("{name}.{field}"), property);
            }
        }
    }
    for (method, path, operation) in operations(&spec) {
        for parameter in operation["parameters"].as_array().into_iter().flatten() {
            let name = parameter["name"].as_str().unwrap_or("");
            if sized(name) {
                check(format!("{method} {path} ?{name}"), &parameter["schema"]);
            }
        }
    }
    assert!(unbounded.is_empty(), "no stated range: {unbounded:#?}");
}

/// utoipa names a component after its Rust type, so two types of one name
/// (say a board and a documents `HistoryEntry`) would silently share one
/// schema in the spec and the generated clients: every schema type's name is
/// unique across the crate.
#[test]
fn every_schema_type_has_a_name_of_its_own() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut seen: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut stack = vec![src.clone()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for (at, line) in lines.iter().enumerate() {
                if !(line.contains("derive(") && line.contains("ToSchema")) {
                    continue;
                }
                let named = lines[at + 1..].iter().take(6).find_map(|next| {
                    let next = next.trim();
                    ["pub struct ", "pub enum ", "struct ", "enum "]
                        .iter()
                        .find_map(|head| next.strip_prefix(head))
                        .map(|rest| {
                            rest.split(|c: char| !c.is_alphanumeric() && c != '_')
                                .next()
                                .unwrap_or("")
                                .to_string()
                        })
                });
                if let Some(name) = named {
                    let relative = path.strip_prefix(&src).unwrap().display().to_string();
                    seen.entry(name).or_default().push(relative);
                }
            }
        }
    }
    let shared: Vec<_> = seen.iter().filter(|(_, files)| files.len() > 1).collect();
    assert!(
        shared.is_empty(),
        "schema type names used twice: {shared:?}"
    );
    assert!(
        seen.len() > 50,
        "the scan found the schema types ({})",
        seen.len()
    );
}
