//! What a tool body gives back: its data, its diagnostics and the lists a
//! cursor continues, as separate typed parts.
//!
//! Diagnostics (`resolved_from`, graph freshness, ...) become `data.meta` for
//! agents and the REST envelope's `meta` for browsers; nobody looks for them
//! inside the serialised data. Pages tell the runtime how to resume a list
//! that the agent budget cut, so every cut can be continued exactly.

use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// Makes the cursor that resumes a list after `kept` items, the last of them given.
pub type Resume = Arc<dyn Fn(usize, &Value) -> String + Send + Sync>;

/// A list of the answer that a cursor continues.
#[derive(Clone)]
pub struct Page {
    /// JSON pointer of the list in the answer: `/results`, `/columns/2/cards`.
    pub list: String,
    /// JSON pointer of the field that holds the cursor for the rest: `/next_cursor`.
    pub cursor_field: String,
    pub resume: Resume,
}

impl fmt::Debug for Page {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Page")
            .field("list", &self.list)
            .field("cursor_field", &self.cursor_field)
            .finish_non_exhaustive()
    }
}

/// A tool's answer.
#[derive(Debug, Clone)]
pub struct Answer<T> {
    pub data: T,
    /// The tool's diagnostics, keyed as they appear in `meta`.
    pub meta: Map<String, Value>,
    pub pages: Vec<Page>,
    /// A graph-shaped answer gets the graph tier under the agent budget unless
    /// this is set: then the agent budget itself applies (coherently trimmed).
    pub agent_budget_only: bool,
}

impl<T> Answer<T> {
    pub fn new(data: T) -> Answer<T> {
        Answer {
            data,
            meta: Map::new(),
            pages: Vec::new(),
            agent_budget_only: false,
        }
    }

    /// Holds a graph-shaped answer to the agent budget rather than the graph tier.
    pub fn within_agent_budget(mut self) -> Answer<T> {
        self.agent_budget_only = true;
        self
    }

    pub fn with_meta(mut self, meta: Map<String, Value>) -> Answer<T> {
        self.meta.extend(meta);
        self
    }

    pub fn with_page(mut self, page: Page) -> Answer<T> {
        self.pages.push(page);
        self
    }

    pub fn map<U>(self, change: impl FnOnce(T) -> U) -> Answer<U> {
        Answer {
            data: change(self.data),
            meta: self.meta,
            pages: self.pages,
            agent_budget_only: self.agent_budget_only,
        }
    }
}

impl<T> From<T> for Answer<T> {
    fn from(data: T) -> Answer<T> {
        Answer::new(data)
    }
}

/// Writes the resuming cursor of every page the budget cut into `data`, right
/// after what was kept.
pub fn resume_cut_pages(
    data: &mut Map<String, Value>,
    pages: &[Page],
    cuts: &[crate::envelope::Cut],
) {
    for page in pages {
        let Some(cut) = cuts.iter().find(|cut| cut.pointer == page.list) else {
            continue;
        };
        let Some(last) = pointer(data, &page.list)
            .and_then(Value::as_array)
            .and_then(|items| items.last())
        else {
            continue;
        };
        let cursor = Value::String((page.resume)(cut.to, last));
        if let Some(slot) = pointer_mut(data, &page.cursor_field) {
            *slot = cursor;
            continue;
        }
        // a cursor field that is not there yet (an empty map of cursors) is added to its parent
        let Some((parent, name)) = page.cursor_field.rsplit_once('/') else {
            continue;
        };
        let name = name.replace("~1", "/").replace("~0", "~");
        let parent = if parent.is_empty() {
            Some(&mut *data)
        } else {
            pointer_mut(data, parent).and_then(Value::as_object_mut)
        };
        if let Some(parent) = parent {
            parent.insert(name, cursor);
        }
    }
}

/// Room the resuming cursors may need beyond what the cursor fields hold now:
/// the cursor after a page's whole list, with slack for keys of other lengths.
pub fn cursor_room(data: &Map<String, Value>, pages: &[Page]) -> usize {
    const SLACK: usize = 32;
    pages
        .iter()
        .filter_map(|page| {
            let items = pointer(data, &page.list)?.as_array()?;
            let cursor = (page.resume)(items.len(), items.last()?);
            let held =
                pointer(data, &page.cursor_field).map_or(0, crate::envelope::measure::weight);
            Some((cursor.len() + 2 + SLACK).saturating_sub(held))
        })
        .sum()
}

fn split(pointer: &str) -> Option<(String, &str)> {
    let body = pointer.strip_prefix('/')?;
    let end = body.find('/').unwrap_or(body.len());
    Some((
        body[..end].replace("~1", "/").replace("~0", "~"),
        &body[end..],
    ))
}

fn pointer<'a>(data: &'a Map<String, Value>, pointer: &str) -> Option<&'a Value> {
    let (first, rest) = split(pointer)?;
    let root = data.get(&first)?;
    if rest.is_empty() {
        Some(root)
    } else {
        root.pointer(rest)
    }
}

fn pointer_mut<'a>(data: &'a mut Map<String, Value>, pointer: &str) -> Option<&'a mut Value> {
    let (first, rest) = split(pointer)?;
    let root = data.get_mut(&first)?;
    if rest.is_empty() {
        Some(root)
    } else {
        root.pointer_mut(rest)
    }
}
