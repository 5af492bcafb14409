//! The documents as resources, `cos://docs/{mount}/{path}`: listed mount by
//! mount and read whole or by section, all through the documents tools, so
//! mounts, paths, the module switch and the agent budget rule as they do
//! for `cos_docs_list` and `cos_docs_read`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::envelope::ErrorBody;
use crate::tools::offers::{
    Caller, ResourceAddress, ResourceEntry, ResourceKind, ResourcePage, ResourceText,
    argument_error, cursor_error, resource_uri,
};

/// Documents per page of a listing.
const PAGE: u32 = 100;

pub const RESOURCES: &[ResourceKind] = &[ResourceKind {
    segment: "docs",
    template: Some("cos://docs/{mount}/{+path}{?section,rev}"),
    name: "document",
    description: "A Markdown document of a mount, whole or one section (?section= a heading path such as \
                  Setup/Install, or an anchor); ?rev= reads a past revision. _meta holds its {rev, hash}, \
                  the base for cos_docs_patch; a document longer than the agent budget comes cut, with \
                  _meta.next_cursor for cos_docs_read.",
    mime_type: "text/markdown",
    list,
    read,
}];

/// Where a listing stands: the mount it is in and that mount's own cursor.
#[derive(Serialize, Deserialize)]
struct Position {
    mount: String,
    cursor: Option<String>,
}

fn list(caller: &dyn Caller, cursor: Option<&str>) -> Result<ResourcePage, ErrorBody> {
    let mounts = listed_mounts(caller)?;
    let position = match cursor {
        Some(text) => serde_json::from_str::<Position>(text).map_err(|_| cursor_error())?,
        None => match mounts.first() {
            Some((first, _)) => Position {
                mount: first.clone(),
                cursor: None,
            },
            None => return Ok(ResourcePage::default()),
        },
    };
    let at = mounts
        .iter()
        .position(|(mount, _)| *mount == position.mount)
        .ok_or_else(cursor_error)?;
    let agents = &mounts[at].1;
    let listing = caller.call(
        "cos_docs_list",
        json!({"mount": position.mount, "cursor": position.cursor, "limit": PAGE}),
    )?;
    let entries = listing["documents"]
        .as_array()
        .map(|documents| {
            documents
                .iter()
                .map(|document| entry(&position.mount, agents, document))
                .collect()
        })
        .unwrap_or_default();
    let next = match listing["next_cursor"].as_str() {
        Some(cursor) => Some(Position {
            mount: position.mount.clone(),
            cursor: Some(cursor.to_string()),
        }),
        None => mounts.get(at + 1).map(|(mount, _)| Position {
            mount: mount.clone(),
            cursor: None,
        }),
    };
    Ok(ResourcePage {
        entries,
        next: next.and_then(|position| serde_json::to_string(&position).ok()),
    })
}

/// The mounts whose folders exist, in the order `cos_docs_mounts` lists
/// them, each with what agents may do there.
fn listed_mounts(caller: &dyn Caller) -> Result<Vec<(String, Value)>, ErrorBody> {
    let mounts = caller.call("cos_docs_mounts", json!({}))?;
    Ok(mounts["mounts"]
        .as_array()
        .map(|mounts| {
            mounts
                .iter()
                .filter(|mount| mount["exists"] == json!(true))
                .filter_map(|mount| {
                    Some((mount["key"].as_str()?.to_string(), mount["agents"].clone()))
                })
                .collect()
        })
        .unwrap_or_default())
}

fn entry(mount: &str, agents: &Value, document: &Value) -> ResourceEntry {
    let path = document["path"].as_str().unwrap_or_default();
    let title = document["title"].as_str().unwrap_or(path);
    let mut meta = Map::new();
    for field in ["rev", "hash", "updated_at"] {
        meta.insert(field.into(), document[field].clone());
    }
    // whether an agent's patch there is taken or refused
    meta.insert("agents".into(), agents.clone());
    ResourceEntry {
        uri: resource_uri("docs", &[mount, path]),
        name: format!("{mount}/{path}"),
        title: Some(title.to_string()),
        description: format!(
            "Markdown document in the {mount} mount, revision {}",
            document["rev"]
        ),
        size: document["size"].as_u64(),
        meta,
    }
}

fn read(caller: &dyn Caller, address: &ResourceAddress) -> Result<ResourceText, ErrorBody> {
    let (mount, path) = match address.segments.split_first() {
        Some((mount, path)) if !path.is_empty() => (mount, path.join("/")),
        _ => {
            return Err(argument_error(
                "uri",
                "cos://docs/{mount}/{path}, a mount's key and a document's path",
            ));
        }
    };
    let mut arguments = json!({"mount": mount, "path": path});
    for (key, value) in &address.query {
        match key.as_str() {
            "section" => arguments["section"] = json!(value),
            "rev" => {
                let rev: i64 = value
                    .parse()
                    .map_err(|_| argument_error("rev", "a revision number, 1 or more"))?;
                arguments["rev"] = json!(rev);
            }
            other => return Err(argument_error(other, "only section and rev in the query")),
        }
    }
    let page = caller.call("cos_docs_read", arguments)?;
    let mut meta = Map::new();
    for field in ["mount", "path", "rev", "hash"] {
        meta.insert(field.into(), page["document"][field].clone());
    }
    if let Some(section) = page["section"].as_str() {
        meta.insert("section".into(), json!(section));
    }
    let next = page["next_cursor"].clone();
    meta.insert("truncated".into(), json!(!next.is_null()));
    if !next.is_null() {
        // the rest is one cos_docs_read away, page by page
        meta.insert("next_cursor".into(), next);
    }
    Ok(ResourceText {
        text: page["content"].as_str().unwrap_or_default().to_string(),
        meta,
    })
}
