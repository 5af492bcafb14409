//! Reading documents: the mounts, a mount's listing, one document by page
//! (whole, by section, at a past revision), several at once, and history.
//! Every read first brings the record up to date with the files, so an edit
//! made in an editor is a revision before anyone reads past it.
//!
//! One file (about 740 lines): every read tool shares the same catch-up with
//! the files, paging and cursor checks, and each tool is short.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};

use super::{ready, spec};
use crate::docs::chain;
use crate::docs::disk;
use crate::docs::model::{DocHistoryEntry, Identity, require_counted};
use crate::docs::mounts::{Access, Mount};
use crate::docs::outlines;
use crate::docs::paging::{page_end, text_weight};
use crate::docs::paths::{self, DocPath};
use crate::docs::records;
use crate::docs::sections::{self, Section};
use crate::docs::sync;
use crate::docs::write::{as_text, identity};
use crate::envelope::{Category, Code, ErrorBody};
use crate::tools::cursor::{malformed, stale};
use crate::tools::{Answer, Page, Tool, ToolContext, ToolError, ToolSpec};

/// Most documents one `cos_docs_read_many` reads.
pub const MAX_READ_MANY: usize = 20;
const MAX_PAGE_BYTES: usize = 4 << 20;
/// Most documents one page of `cos_docs_list` holds: each page walks the
/// listed folder for outside edits, so a large mount is listed in few pages.
pub const MAX_LISTED: u32 = 1000;

fn check_limit(
    field: &str,
    given: Option<u32>,
    default: u32,
    max: u32,
) -> Result<usize, ToolError> {
    match given {
        None => Ok(default as usize),
        Some(limit) if (1..=max).contains(&limit) => Ok(limit as usize),
        Some(_) => Err(ToolError::invalid(
            field,
            format!("a number from 1 to {max}"),
        )),
    }
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DocsNoInput {}

#[derive(Debug, Serialize, ToSchema)]
pub struct MountInfo {
    /// The exact key every documents tool takes.
    pub key: String,
    /// Display name only: never accepted in place of the key.
    pub name: String,
    pub root: String,
    pub agents: Access,
    pub people: Access,
    /// False when the folder does not exist yet (a create makes it).
    pub exists: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MountList {
    pub mounts: Vec<MountInfo>,
}

pub struct DocsMounts;

impl Tool for DocsMounts {
    type Input = DocsNoInput;
    type Output = MountList;
    const SPEC: ToolSpec = spec(
        "cos_docs_mounts",
        "Lists the mounts (named folders of Markdown): the key each documents tool takes, a display name, and who may write there.",
    );

    fn run(context: &ToolContext, _: DocsNoInput) -> Result<Answer<MountList>, ToolError> {
        let mounts = ready(context)?;
        Ok(Answer::new(MountList {
            mounts: mounts
                .mounts
                .iter()
                .map(|mount| MountInfo {
                    key: mount.key.clone(),
                    name: mount.name.clone(),
                    root: mount.root.display().to_string(),
                    agents: mount.agents,
                    people: mount.people,
                    exists: mount.root.is_dir(),
                })
                .collect(),
        }))
    }
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListInput {
    /// The mount's exact key (cos_docs_mounts).
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    #[param(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: String,
    /// Only documents in this folder (relative to the mount).
    #[schema(format = "cos-folder-prefix")]
    #[param(format = "cos-folder-prefix")]
    pub prefix: Option<String>,
    /// A previous answer's `next_cursor`.
    pub cursor: Option<String>,
    /// 1 to 1000, default 50.
    #[schema(minimum = 1, maximum = 1000)]
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DocEntry {
    pub path: String,
    /// Its first heading, else its file name.
    pub title: String,
    pub rev: i64,
    pub hash: String,
    pub size: i64,
    /// The last change: when, by whom, through which door.
    pub updated_at: String,
    pub updated_by: String,
    pub source: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DocListing {
    pub mount: String,
    pub prefix: String,
    /// By path.
    pub documents: Vec<DocEntry>,
    /// Documents under the prefix in all.
    pub total: i64,
    /// Pass back as `cursor` for the documents after these; null when none remain.
    pub next_cursor: Option<String>,
}

pub struct DocsList;

const LIST_MOVED: &str = "The documents changed since this cursor; list again";

impl Tool for DocsList {
    type Input = ListInput;
    type Output = DocListing;
    const SPEC: ToolSpec = spec(
        "cos_docs_list",
        "Lists a mount's documents by path, each with its {rev, hash}, size and last change; continue with next_cursor.",
    )
    .cutting_first(&["documents"]);

    fn run(context: &ToolContext, input: ListInput) -> Result<Answer<DocListing>, ToolError> {
        let mounts = ready(context)?;
        let mount = mounts.get(&input.mount)?;
        let prefix = paths::prefix("prefix", input.prefix.as_deref().unwrap_or(""), mount)?;
        let limit = check_limit("limit", input.limit, 50, MAX_LISTED)?;
        let store = &context.hub.store;
        let dir = disk::open(mount, false)?;
        sync::scan_within(store, mount, dir.as_ref(), &prefix)?;
        let scope = format!("cos_docs_list|{}|{prefix}", mount.key);
        let keyring = context.hub.cursors.clone();
        store.view(|connection| {
            let scope_now = records::listed_scope(connection, &mount.key, &prefix)?;
            let version = scope_now.version;
            let after = match &input.cursor {
                None => String::new(),
                Some(cursor) => {
                    let at = keyring.open("cursor", &scope, cursor)?;
                    if at["v"].as_i64() != Some(version) {
                        return Err(stale("cursor", LIST_MOVED));
                    }
                    at["a"]
                        .as_str()
                        .ok_or_else(|| malformed("cursor"))?
                        .to_string()
                }
            };
            let rows = records::listing(connection, &mount.key, &prefix, &after, limit + 1)?;
            let more = rows.len() > limit;
            let documents: Vec<DocEntry> = rows
                .into_iter()
                .take(limit)
                .map(|listed| DocEntry {
                    path: listed.path,
                    title: listed.row.title.clone(),
                    rev: listed.row.rev,
                    hash: listed.row.hash,
                    size: listed.row.size,
                    updated_at: listed.at,
                    updated_by: listed.actor,
                    source: listed.source,
                })
                .collect();
            let seal = {
                let keyring = keyring.clone();
                let scope = scope.clone();
                move |after: &str| keyring.seal(&scope, &json!({"a": after, "v": version}))
            };
            let next_cursor = more
                .then(|| documents.last().map(|d| seal(&d.path)))
                .flatten();
            let resume =
                Arc::new(move |_: usize, last: &Value| seal(last["path"].as_str().unwrap_or("")));
            Ok(Answer::new(DocListing {
                mount: mount.key.clone(),
                prefix: prefix.clone(),
                documents,
                total: scope_now.total,
                next_cursor,
            })
            .with_page(Page {
                list: "/documents".into(),
                cursor_field: "/next_cursor".into(),
                resume,
            }))
        })
    }
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ReadInput {
    /// The mount's exact key (cos_docs_mounts).
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    #[param(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: String,
    /// Relative to the mount, e.g. guides/setup.md.
    #[schema(format = "cos-markdown-path")]
    #[param(format = "cos-markdown-path")]
    pub path: String,
    /// Only this section: a heading path (Setup/Install) or an anchor.
    pub section: Option<String>,
    /// A past revision instead of the current one.
    #[schema(minimum = 1)]
    #[param(minimum = 1)]
    pub rev: Option<i64>,
    /// A previous page's `next_cursor`: the next page of the same read.
    pub cursor: Option<String>,
    /// Largest page in characters (default: what fits the budget).
    #[schema(minimum = 256, maximum = 4194304)]
    #[param(minimum = 256, maximum = 4194304)]
    pub page_bytes: Option<u32>,
}

/// Where a page lies in what is read.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PageRange {
    /// Byte offsets in the document, end exclusive.
    pub start: usize,
    pub end: usize,
    /// Bytes of the document.
    pub total: usize,
    /// 1-based lines the page covers.
    pub first_line: usize,
    pub last_line: usize,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DocPage {
    pub document: Identity,
    /// The section read, as its heading path.
    pub section: Option<String>,
    /// Every heading with its anchor, line and byte range (the first page only).
    pub outline: Vec<Section>,
    /// False when the outline was cut to fit the answer (read by section to see more).
    pub outline_complete: bool,
    /// This page's text; the pages joined are the document (or section) byte for byte.
    pub content: String,
    pub range: PageRange,
    /// Pass back as `cursor` (with the same mount, path, section and rev) for the next page.
    pub next_cursor: Option<String>,
    /// True when `rev` named a past revision.
    pub historical: bool,
}

pub struct DocsRead;

const OTHER_READ: &str = "The cursor belongs to another document, revision or section";

impl Tool for DocsRead {
    type Input = ReadInput;
    type Output = DocPage;
    const SPEC: ToolSpec = spec(
        "cos_docs_read",
        "Reads a document: its identity {mount, path, rev, hash} (a patch's base), heading outline and content by page (next_cursor continues; pages join byte for byte). Narrow with section or read a past rev.",
    );

    fn run(context: &ToolContext, input: ReadInput) -> Result<Answer<DocPage>, ToolError> {
        let mounts = ready(context)?;
        let mount = mounts.get(&input.mount)?;
        let path = paths::document("path", &input.path, mount)?;
        let limit = page_limit(context.answer_limit(&Self::SPEC), input.page_bytes, 1)?;
        read_page(context, mount, &path, &input, limit, true).map(Answer::new)
    }
}

/// The content weight of a page: most of the budget, the rest for the
/// identity, the outline and the envelope.
fn page_limit(
    answer_limit: Option<usize>,
    page_bytes: Option<u32>,
    share: usize,
) -> Result<Option<usize>, ToolError> {
    let asked = match page_bytes {
        None => None,
        Some(bytes) if (256..=MAX_PAGE_BYTES as u32).contains(&bytes) => Some(bytes as usize),
        Some(_) => {
            return Err(ToolError::invalid(
                "page_bytes",
                "a number from 256 to 4194304",
            ));
        }
    };
    let fits = answer_limit.map(|limit| (limit * 5 / 8 / share.max(1)).max(256));
    Ok(match (fits, asked) {
        (Some(fits), Some(asked)) => Some(fits.min(asked)),
        (fits, asked) => fits.or(asked),
    })
}

/// What is read: the text, its identity, and whether it is a past revision.
struct Loaded {
    text: String,
    identity: Identity,
    historical: bool,
}

fn load(
    context: &ToolContext,
    mount: &Mount,
    path: &DocPath,
    rev: Option<i64>,
) -> Result<Loaded, ToolError> {
    let store = &context.hub.store;
    let not_found = |what: String| {
        ToolError::not_found(Code::E_NOT_FOUND, what)
            .with_details(json!({"field": "path", "mount": mount.key}))
    };
    match rev {
        None => {
            let dir = disk::open(mount, false)?;
            let current = sync::observe(store, mount, dir.as_ref(), path)?;
            let (Some(row), Some(bytes)) = (current.row, current.bytes) else {
                return Err(not_found(format!(
                    "path: no document {:?} in mount {:?}; cos_docs_list shows them",
                    path.as_str(),
                    mount.key
                )));
            };
            let text = as_text(path.as_str(), &bytes)?.to_string();
            Ok(Loaded {
                identity: identity(mount, path.as_str(), &row),
                text,
                historical: false,
            })
        }
        Some(rev) => {
            require_counted("rev", rev, "a revision number")?;
            let entry = store
                .view(|c| records::entry_at(c, &mount.key, path.as_str(), rev))?
                .filter(|entry| !entry.hash.is_empty())
                .ok_or_else(|| {
                    not_found(format!(
                        "rev: document {:?} has no revision {rev} with content; cos_docs_history lists its revisions",
                        path.as_str()
                    ))
                    .with_details(json!({"field": "rev"}))
                })?;
            let bytes = stored_content(store, &entry.hash)?;
            Ok(Loaded {
                text: as_text(path.as_str(), &bytes)?.to_string(),
                identity: Identity {
                    mount: mount.key.clone(),
                    path: path.as_str().to_string(),
                    rev,
                    hash: entry.hash,
                },
                historical: true,
            })
        }
    }
}

fn stored_content(store: &crate::store::Store, hash: &str) -> Result<Vec<u8>, ToolError> {
    let (deflated, size) = store.view(|c| records::content(c, hash))?.ok_or_else(|| {
        ToolError::fail(
            Category::Internal,
            Code::E_INTERNAL,
            format!("the content {hash} is missing; run cos docs audit"),
        )
    })?;
    chain::inflate(&deflated, usize::try_from(size).unwrap_or(0))
        .map_err(|error| ToolError::io("decompressing a revision", error))
}

fn read_page(
    context: &ToolContext,
    mount: &Mount,
    path: &DocPath,
    input: &ReadInput,
    limit: Option<usize>,
    with_outline: bool,
) -> Result<DocPage, ToolError> {
    let source = load(context, mount, path, input.rev)?;
    let text = &source.text;
    let outline = outlines::outline(&source.identity.hash, text);
    let (scope_start, scope_end, section) = match &input.section {
        None => (0, text.len(), None),
        Some(wanted) => {
            let found = sections::find(&outline, "section", wanted)?;
            (found.start, found.end, Some(found.path.clone()))
        }
    };
    let scope = format!("cos_docs_read|{}|{}", mount.key, path.as_str());
    let keyring = &context.hub.cursors;
    let start = match &input.cursor {
        None => scope_start,
        Some(cursor) => {
            let at = keyring.open("cursor", &scope, cursor)?;
            let offset = at["o"].as_u64().ok_or_else(|| malformed("cursor"))? as usize;
            let same_section = at["s"].as_str() == section.as_deref();
            let same_kind = at["x"].as_bool() == Some(source.historical);
            if !same_section
                || !same_kind
                || (source.historical && at["r"].as_i64() != Some(source.identity.rev))
            {
                return Err(stale("cursor", OTHER_READ));
            }
            if at["r"].as_i64() != Some(source.identity.rev)
                || at["h"].as_str() != Some(source.identity.hash.as_str())
            {
                let message = if source.historical {
                    "The document was replaced while it was read"
                } else {
                    "The document changed while it was read; read again"
                };
                return Err(ToolError::from(
                    ErrorBody::new(Category::Conflict, Code::STALE_READ, message)
                        .with_details(json!({"field": "cursor", "current": source.identity})),
                ));
            }
            if offset < scope_start || offset >= scope_end || !text.is_char_boundary(offset) {
                return Err(malformed("cursor"));
            }
            offset
        }
    };
    let first = input.cursor.is_none();
    let (outline_kept, outline_complete, outline_weight) = if first && with_outline {
        fit_outline(&outline, limit)
    } else {
        (Vec::new(), !with_outline || outline.is_empty(), 0)
    };
    let content_limit = limit.map(|limit| limit.saturating_sub(outline_weight).max(256));
    let headings: Vec<usize> = outline.iter().map(|s| s.start).collect();
    let end = match content_limit {
        None => scope_end,
        Some(limit) => {
            start
                + page_end(
                    &text[start..scope_end],
                    0,
                    limit,
                    &shifted(&headings, start),
                )
        }
    };
    let next_cursor = (end < scope_end).then(|| {
        keyring.seal(
            &scope,
            &json!({"o": end, "s": section, "r": source.identity.rev, "h": source.identity.hash, "x": source.historical}),
        )
    });
    let first_line = crate::text_lines::line_breaks(text, 0, start) + 1;
    let body_end = start + text[start..end].trim_end_matches(['\n', '\r']).len();
    let last_line = first_line + crate::text_lines::line_breaks(text, start, body_end);
    Ok(DocPage {
        document: source.identity.clone(),
        section,
        outline: outline_kept,
        outline_complete,
        content: text[start..end].to_string(),
        range: PageRange {
            start,
            end,
            total: text.len(),
            first_line,
            last_line,
        },
        next_cursor,
        historical: source.historical,
    })
}

fn shifted(headings: &[usize], start: usize) -> Vec<usize> {
    headings
        .iter()
        .filter(|&&h| h >= start)
        .map(|h| h - start)
        .collect()
}

/// The outline within two fifths of the page's budget, and its weight (all of it without one).
fn fit_outline(outline: &[Section], limit: Option<usize>) -> (Vec<Section>, bool, usize) {
    let Some(limit) = limit else {
        return (outline.to_vec(), true, 0);
    };
    let room = limit * 2 / 5;
    let mut spent = 0;
    let mut kept = Vec::new();
    for section in outline {
        spent += text_weight(&section.path)
            + text_weight(&section.anchor)
            + text_weight(&section.title)
            + 90;
        if spent > room {
            return (kept, false, room);
        }
        kept.push(section.clone());
    }
    (kept, true, spent)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadManyInput {
    /// The mount's exact key (cos_docs_mounts).
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: String,
    /// 1 to 20 paths in the mount.
    #[schema(min_items = 1, max_items = 20)]
    #[schema(format = "cos-markdown-path")]
    pub paths: Vec<String>,
}

/// One document of a `cos_docs_read_many`: its first page, or why not.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ManyItem {
    pub path: String,
    pub page: Option<DocPage>,
    pub error: Option<ErrorBody>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ManyPages {
    pub documents: Vec<ManyItem>,
}

pub struct DocsReadMany;

impl Tool for DocsReadMany {
    type Input = ReadManyInput;
    type Output = ManyPages;
    const SPEC: ToolSpec = spec(
        "cos_docs_read_many",
        "Reads the first page of up to 20 documents of one mount at once (each with its identity and next_cursor for cos_docs_read); a document that cannot be read carries its error.",
    );

    fn run(context: &ToolContext, input: ReadManyInput) -> Result<Answer<ManyPages>, ToolError> {
        if input.paths.len() > MAX_READ_MANY {
            return Err(ToolError::fail(
                Category::Validation,
                Code::E_TOO_MANY_DOCUMENTS,
                format!("paths: at most {MAX_READ_MANY} documents in one call, got {}; split the request", input.paths.len()),
            )
            .with_details(json!({"field": "paths", "max": MAX_READ_MANY})));
        }
        if input.paths.is_empty() {
            return Err(ToolError::invalid("paths", "1 to 20 document paths"));
        }
        let mounts = ready(context)?;
        let mount = mounts.get(&input.mount)?;
        let limit = page_limit(context.answer_limit(&Self::SPEC), None, input.paths.len())?;
        let documents = input
            .paths
            .iter()
            .map(|raw| {
                let read = paths::document("path", raw, mount).and_then(|path| {
                    let single = ReadInput {
                        mount: mount.key.clone(),
                        path: raw.clone(),
                        section: None,
                        rev: None,
                        cursor: None,
                        page_bytes: None,
                    };
                    read_page(
                        context,
                        mount,
                        &path,
                        &single,
                        limit.map(|l| l.saturating_sub(150)),
                        false,
                    )
                });
                match read {
                    Ok(page) => ManyItem {
                        path: raw.clone(),
                        page: Some(page),
                        error: None,
                    },
                    Err(ToolError::Fail(body)) => ManyItem {
                        path: raw.clone(),
                        page: None,
                        error: Some(*body),
                    },
                    Err(other) => ManyItem {
                        path: raw.clone(),
                        page: None,
                        error: Some(other.to_body("")),
                    },
                }
            })
            .collect();
        Ok(Answer::new(ManyPages { documents }))
    }
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DocHistoryInput {
    /// Only this mount's changes.
    #[schema(pattern = "^[a-z0-9_-]{1,64}$")]
    #[param(pattern = "^[a-z0-9_-]{1,64}$")]
    pub mount: Option<String>,
    /// Only this document's changes (needs mount); a move counts for both paths.
    #[schema(format = "cos-markdown-path")]
    #[param(format = "cos-markdown-path")]
    pub path: Option<String>,
    /// A previous answer's `next_cursor`.
    pub cursor: Option<String>,
    /// 1 to 200, default 50.
    #[schema(minimum = 1, maximum = 200)]
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryPage {
    /// Newest first.
    pub entries: Vec<DocHistoryEntry>,
    pub next_cursor: Option<String>,
}

pub struct DocsHistory;

impl Tool for DocsHistory {
    type Input = DocHistoryInput;
    type Output = HistoryPage;
    const SPEC: ToolSpec = spec(
        "cos_docs_history",
        "The documents' hash-chained history, newest first: every create, patch, move, delete and outside edit with its rev, hash, actor, source and time; filter by mount and path.",
    )
    .cutting_first(&["entries"]);

    fn run(
        context: &ToolContext,
        input: DocHistoryInput,
    ) -> Result<Answer<HistoryPage>, ToolError> {
        let mounts = ready(context)?;
        let limit = check_limit("limit", input.limit, 50, 200)?;
        let (mount, path) = match (&input.mount, &input.path) {
            (None, Some(_)) => {
                return Err(ToolError::invalid_pair(
                    "mount",
                    "path",
                    "the key of the mount the path is in, given with path",
                ));
            }
            (None, None) => (None, None),
            (Some(key), path) => {
                let mount = mounts.get(key)?;
                let path = path
                    .as_deref()
                    .map(|raw| paths::document("path", raw, mount))
                    .transpose()?;
                (
                    Some(mount.key.clone()),
                    path.map(|p| p.as_str().to_string()),
                )
            }
        };
        // outside edits become history before it is read
        if let Some(key) = &mount {
            let mount = mounts.get(key)?;
            let dir = disk::open(mount, false)?;
            match &path {
                Some(path) => {
                    sync::observe(
                        &context.hub.store,
                        mount,
                        dir.as_ref(),
                        &DocPath::trusted(path),
                    )?;
                }
                None => {
                    sync::scan(&context.hub.store, mount, dir.as_ref())?;
                }
            }
        }
        let scope = format!("cos_docs_history|{mount:?}|{path:?}");
        let keyring = context.hub.cursors.clone();
        let before = match &input.cursor {
            None => i64::MAX,
            Some(cursor) => keyring.open("cursor", &scope, cursor)?["b"]
                .as_i64()
                .ok_or_else(|| malformed("cursor"))?,
        };
        let rows = context
            .hub
            .store
            .view(|c| records::history(c, mount.as_deref(), path.as_deref(), before, limit + 1))?;
        let more = rows.len() > limit;
        let entries: Vec<DocHistoryEntry> = rows.into_iter().take(limit).collect();
        let seal = move |seq: i64| keyring.seal(&scope, &json!({"b": seq}));
        let next_cursor = more.then(|| entries.last().map(|e| seal(e.seq))).flatten();
        let resume =
            Arc::new(move |_: usize, last: &Value| seal(last["seq"].as_i64().unwrap_or(0)));
        Ok(Answer::new(HistoryPage {
            entries,
            next_cursor,
        })
        .with_page(Page {
            list: "/entries".into(),
            cursor_field: "/next_cursor".into(),
            resume,
        }))
    }
}
