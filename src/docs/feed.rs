//! The documents as search reads them (through `searchable.rs`): every live
//! document's identity and current text. Read-only: nothing here writes a
//! document or its history.

use super::{chain, records, sync, tools};
use crate::tools::{ToolContext, ToolError};

/// A live document as recorded now.
#[derive(Debug, Clone)]
pub struct LiveDocument {
    pub mount: String,
    pub path: String,
    pub hash: String,
}

/// Every live document of `mounts` (from [`mounts`], after [`scan_once`]), by mount and
/// path; a file two mounts reach (`docs/` inside the repository's own mount)
/// is listed once, under the first mount declared.
pub fn live_documents(
    context: &ToolContext,
    mounts: &super::mounts::Mounts,
) -> Result<Vec<LiveDocument>, ToolError> {
    let store = &context.hub.store;
    let mut found = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for mount in &mounts.mounts {
        for (path, row) in store.view(|c| records::documents_in(c, &mount.key))? {
            if !seen.insert(mount.root.join(&path)) {
                continue;
            }
            found.push(LiveDocument {
                mount: mount.key.clone(),
                path,
                hash: row.hash,
            });
        }
    }
    Ok(found)
}

/// Scans the mounts once in this process: later changes arrive through the
/// documents' tools and watcher, each bumping their revision.
pub fn scan_once(context: &ToolContext) -> Result<(), ToolError> {
    let store = &context.hub.store;
    crate::tools::area::once_per_database(store, "documents first scan", || {
        let mounts = tools::ready(context)?;
        for mount in &mounts.mounts {
            let dir = super::disk::open(mount, false)?;
            sync::scan(store, mount, dir.as_ref())?;
        }
        Ok::<(), ToolError>(())
    })
}

/// The mounts, once this process has made the record whole.
pub fn mounts(context: &ToolContext) -> Result<super::mounts::Mounts, ToolError> {
    tools::ready(context)
}

/// The text of the revision with this content hash, when it is kept and is UTF-8.
pub fn text_of(context: &ToolContext, hash: &str) -> Result<Option<String>, ToolError> {
    let Some((deflated, size)) = context.hub.store.view(|c| records::content(c, hash))? else {
        return Ok(None);
    };
    let bytes = chain::inflate(&deflated, usize::try_from(size).unwrap_or(0))
        .map_err(|error| ToolError::io("reading a stored document revision", error))?;
    Ok(String::from_utf8(bytes).ok())
}
