//! MCP `resources/*` over the kinds the areas declare (`tools::offers`):
//! a paginated list, the templates, and reads, each carried out by the
//! kind's own functions. The list's cursor names the kind it is in and
//! that kind's own cursor.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::model::{
    ErrorCode, ListResourceTemplatesResult, ListResourcesResult, MetaObject, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate,
};
use serde::{Deserialize, Serialize};

use super::caller::{protocol_error, with_caller};
use crate::envelope::{Category, ErrorBody};
use crate::tools::Hub;
use crate::tools::offers::{ResourceEntry, ResourceKind, cursor_error, parse_resource_uri};

/// Every kind of resource the hub's areas declare, in the registry's order.
pub fn kinds(hub: &Hub) -> Vec<&'static ResourceKind> {
    hub.registry()
        .areas()
        .iter()
        .flat_map(|area| area.resources.iter())
        .collect()
}

/// The area whose revision a resource follows, by its address.
pub fn area_of(hub: &Hub, uri: &str) -> Option<&'static str> {
    let (segment, _) = parse_resource_uri(uri).ok()?;
    hub.registry()
        .areas()
        .iter()
        .find(|area| area.resources.iter().any(|kind| kind.segment == segment))
        .map(|area| area.id)
}

/// Where a listing stands: which kind, and that kind's cursor.
#[derive(Serialize, Deserialize)]
struct Position {
    kind: usize,
    cursor: Option<String>,
}

fn encode(position: &Position) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(position).unwrap_or_default())
}

fn decode(cursor: &str) -> Result<Position, ErrorBody> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| cursor_error())?;
    serde_json::from_slice(&bytes).map_err(|_| cursor_error())
}

/// Resources a page gathers from one kind after another before it ends.
const PAGE_FILL: usize = 50;

/// One page of `resources/list`: kinds' pages in turn until it holds
/// `PAGE_FILL` resources or none are left, skipping kinds whose module is
/// switched off.
pub async fn list(hub: &Hub, cursor: Option<String>) -> Result<ListResourcesResult, ErrorBody> {
    let kinds = kinds(hub);
    let mut position = match cursor {
        Some(cursor) => decode(&cursor)?,
        None => Position {
            kind: 0,
            cursor: None,
        },
    };
    if position.kind >= kinds.len() && position.cursor.is_some() {
        return Err(cursor_error());
    }
    let mut found: Vec<Resource> = Vec::new();
    while let Some(kind) = kinds.get(position.kind).copied() {
        let asked = position.cursor.clone();
        let page = with_caller(hub, move |caller| (kind.list)(caller, asked.as_deref())).await;
        let page = match page {
            Ok(page) => page,
            Err(error) if error.category == Category::ModuleDisabled => Default::default(),
            Err(error) => return Err(error),
        };
        let next = match page.next {
            Some(cursor) => Some(Position {
                kind: position.kind,
                cursor: Some(cursor),
            }),
            None => (position.kind + 1 < kinds.len()).then_some(Position {
                kind: position.kind + 1,
                cursor: None,
            }),
        };
        found.extend(page.entries.into_iter().map(|e| resource(kind, e)));
        match next {
            Some(next) if found.len() < PAGE_FILL => position = next,
            next => {
                let mut result = ListResourcesResult::with_all_items(found);
                result.next_cursor = next.as_ref().map(encode);
                return Ok(result);
            }
        }
    }
    Ok(ListResourcesResult::with_all_items(found))
}

fn resource(kind: &ResourceKind, entry: ResourceEntry) -> Resource {
    let mut raw = Resource::new(entry.uri, entry.name)
        .with_description(entry.description)
        .with_mime_type(kind.mime_type);
    if let Some(title) = entry.title {
        raw = raw.with_title(title);
    }
    if let Some(size) = entry.size {
        raw = raw.with_size(size);
    }
    if !entry.meta.is_empty() {
        raw = raw.with_meta(MetaObject(entry.meta));
    }
    raw
}

/// Every kind that takes arguments, as a template.
pub fn templates(hub: &Hub) -> ListResourceTemplatesResult {
    let templates = kinds(hub)
        .into_iter()
        .filter_map(|kind| {
            let template = kind.template?;
            Some(
                ResourceTemplate::new(template, kind.name)
                    .with_description(kind.description)
                    .with_mime_type(kind.mime_type),
            )
        })
        .collect();
    ListResourceTemplatesResult::with_all_items(templates)
}

/// `resources/read`: the kind the address names reads it.
pub async fn read(hub: &Hub, uri: String) -> Result<ReadResourceResult, ErrorBody> {
    let (segment, address) = parse_resource_uri(&uri)?;
    let kind = kinds(hub)
        .into_iter()
        .find(|kind| kind.segment == segment)
        .ok_or_else(|| {
            ErrorBody::new(
                Category::NotFound,
                crate::envelope::Code::E_NOT_FOUND,
                format!("no resource at {uri}; resources/templates/list shows the addresses"),
            )
        })?;
    let read = with_caller(hub, move |caller| (kind.read)(caller, &address)).await?;
    let meta = MetaObject(read.meta);
    let contents = ResourceContents::text(read.text, uri)
        .with_mime_type(kind.mime_type)
        .with_meta(meta.clone());
    let mut result = ReadResourceResult::new(vec![contents]);
    result.meta = Some(meta);
    Ok(result)
}

/// A resource refusal as JSON-RPC: -32002 for one that does not exist.
pub fn refusal(error: &ErrorBody) -> rmcp::ErrorData {
    protocol_error(error, ErrorCode::RESOURCE_NOT_FOUND)
}
