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
fn the_closed_code_list_is_published_in_the_spec_and_the_error_guide() {
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
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/errors.md"))
        .expect("docs/errors.md");
    let section = guide
        .split("## Error codes")
        .nth(1)
        .and_then(|rest| rest.split("\n#").next())
        .expect("docs/errors.md has an Error codes section");
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
        "docs/errors.md's error-code table differs from the code"
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

/// What the hub refuses of names and prose is stated as patterns, so a
/// generated client refuses it too; the patterns mean what the hub checks.
#[test]
fn the_spec_states_the_text_rules_the_server_enforces() {
    let spec = generated();
    assert!(
        !spec.to_string().contains("\"format\":\"cos-"),
        "every text-rule marker is spelled out as a pattern"
    );
    let schemas = &spec["components"]["schemas"];
    let pattern = |schema: &str, property: &str| -> String {
        schemas[schema]["properties"][property]["pattern"]
            .as_str()
            .unwrap_or_else(|| panic!("{schema}.{property} states a pattern"))
            .to_string()
    };
    let visible = pattern("CreateInput", "title");
    for (schema, property) in [
        ("TaskChanges", "title"),
        ("Actor", "id"),
        ("RecordOutputInput", "task_marker"),
        ("DiscoveryBody", "kind"),
    ] {
        assert_eq!(pattern(schema, property), visible, "{schema}.{property}");
    }
    let label = &schemas["CreateInput"]["properties"]["labels"]["items"];
    assert_eq!(label["pattern"], visible.as_str());
    assert_eq!(
        (label["minLength"].as_u64(), label["maxLength"].as_u64()),
        (Some(1), Some(500))
    );
    let prose = pattern("BacktrackBody", "reason");
    assert_eq!(pattern("DiscoveryBody", "summary"), prose);

    let visible = regex::Regex::new(&visible).expect("an RE2-compatible pattern");
    assert!(visible.is_match("Fix the board — ünïcödé 🚀"));
    for refused in [
        "",
        "   ",
        "\u{200B}",
        "red\u{1B}[31m",
        "two\nlines",
        "evil\u{202E}txt",
    ] {
        assert!(!visible.is_match(refused), "{refused:?}");
    }
    let prose = regex::Regex::new(&prose).expect("an RE2-compatible pattern");
    assert!(prose.is_match("first line\r\nsecond line"));
    assert!(!prose.is_match("a\u{0}b") && !prose.is_match("\n\n"));

    // a patch's text to replace is never empty (found by Schemathesis: the
    // server refused what the spec allowed)
    let replace_text = (schemas["Operation"]["oneOf"].as_array().unwrap().iter())
        .find(|variant| variant["properties"]["op"]["enum"][0] == "replace_text")
        .expect("a replace_text variant");
    assert_eq!(replace_text["properties"]["find"]["minLength"], 1);
}

/// Closed lists are enums, optional headers are strings (never null), and the
/// variants of a tagged union refuse unknown fields as serde does.
#[test]
fn closed_lists_headers_and_tagged_unions_are_stated() {
    let spec = generated();
    let parameter = |path: &str, method: &str, name: &str| -> Value {
        spec["paths"][path][method]["parameters"]
            .as_array()
            .and_then(|all| all.iter().find(|p| p["name"] == name))
            .unwrap_or_else(|| panic!("{method} {path} takes {name}"))["schema"]
            .clone()
    };
    let modules: Vec<&str> = cos_hub::hub::AREAS
        .iter()
        .map(|area| area.module.id())
        .collect();
    assert_eq!(
        parameter("/api/settings/modules/{module}", "put", "module")["enum"],
        serde_json::json!(modules)
    );
    assert!(
        parameter("/api/graph/search", "get", "kind")["enum"]
            .as_array()
            .is_some_and(|kinds| kinds.contains(&"function".into()))
    );
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for header in operation["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "header")
            {
                assert_eq!(
                    header["schema"]["type"], "string",
                    "{method} {path} {}",
                    header["name"]
                );
                if header["name"] == "If-Match" {
                    assert!(header["schema"]["pattern"].is_string(), "{method} {path}");
                }
            }
        }
    }
    let variants = spec["components"]["schemas"]["Operation"]["oneOf"]
        .as_array()
        .expect("Operation is a tagged union");
    assert!(variants.len() >= 9);
    for variant in variants {
        assert_eq!(variant["additionalProperties"], false, "{variant}");
    }
}

/// Agents get the same rules: the tools' input schemas (MCP's, and
/// GET /api/tools) carry the patterns the REST spec states.
#[tokio::test(flavor = "multi_thread")]
async fn tool_input_schemas_state_the_same_text_rules() {
    let server = crate::common::TestServer::start().await;
    let (status, tools) = server.get("/api/tools").await;
    assert_eq!(status, 200, "{tools}");
    let input = |name: &str| -> Value {
        tools["data"]["tools"]
            .as_array()
            .and_then(|all| all.iter().find(|tool| tool["name"] == name))
            .unwrap_or_else(|| panic!("{name} is listed"))["input_schema"]
            .clone()
    };
    let spec = generated();
    let schemas = &spec["components"]["schemas"];
    assert_eq!(
        input("cos_supervise_record_backtrack")["properties"]["reason"]["pattern"],
        schemas["BacktrackBody"]["properties"]["reason"]["pattern"]
    );
    assert_eq!(
        input("cos_task_create")["properties"]["title"]["pattern"],
        schemas["CreateInput"]["properties"]["title"]["pattern"]
    );
}
