//! What the documents offer search: each live document is a unit
//! (fingerprinted by its content hash) whose sections are items of the
//! `docs` corpus, each heading with its text up to the next heading.

use crate::tools::searchable::{Corpus, Opens, SearchItem, SearchUnit, Searchable, UnitVersion};
use crate::tools::{ToolContext, ToolError};

const DOCS: Corpus = Corpus {
    name: "docs",
    kinds: &["heading"],
    opens: Opens::Section,
    definitions: false,
    paths: true,
    statuses: false,
};

pub static SEARCHABLE: Searchable = Searchable {
    source: "docs",
    corpora: &[DOCS],
    files: false,
    revision: |_, connection| super::revision_in(connection),
    prepare: Some(super::feed::scan_once),
    units,
    load,
    load_batch: None,
    languages: markdown,
    statuses: Vec::new,
    left_out: None,
};

fn markdown() -> Vec<&'static str> {
    vec!["markdown"]
}

/// Every live document, keyed `mount:path`; its mount is the detail.
fn units(context: &ToolContext) -> Result<Vec<UnitVersion>, ToolError> {
    let mounts = super::feed::mounts(context)?;
    let documents = super::feed::live_documents(context, &mounts)?;
    Ok(documents
        .into_iter()
        .map(|document| UnitVersion {
            key: format!("{}:{}", document.mount, document.path),
            fingerprint: document.hash,
            detail: document.mount,
        })
        .collect())
}

fn load(context: &ToolContext, unit: &UnitVersion) -> Result<Option<SearchUnit>, ToolError> {
    let mount = unit.detail.as_str();
    let Some(path) = unit
        .key
        .strip_prefix(mount)
        .and_then(|p| p.strip_prefix(':'))
    else {
        return Ok(None);
    };
    // a revision kept as bytes that are not UTF-8 is found by its title alone
    let text = super::feed::text_of(context, &unit.fingerprint)?.unwrap_or_default();
    let file_name = path.rsplit('/').next().unwrap_or(path);
    let document = Document {
        mount,
        path,
        title: super::sections::title_of(&text, file_name),
    };
    Ok(Some(SearchUnit {
        items: section_items(&document, &text),
        file: None,
    }))
}

struct Document<'a> {
    mount: &'a str,
    path: &'a str,
    title: String,
}

/// A document's sections as items: each heading with its text up to the next
/// heading; a document without headings is one item under its title. The
/// text before the first heading (front matter, say) is an item without a
/// name: the title is its first heading's, and a query for the title's
/// words finds that heading once rather than twice.
fn section_items(document: &Document, text: &str) -> Vec<SearchItem> {
    let outline = super::sections::outline(text);
    let mut items = Vec::new();
    let first_start = outline.first().map_or(text.len(), |s| s.start);
    // bodies keep their first lines (a section's starts with its heading), so
    // line i of a body is line `line + i` of the document
    let preamble = text[..first_start].trim_end();
    if outline.is_empty() {
        items.push(section_item(document, &document.title, "", 1, preamble));
    } else if !preamble.trim_start().is_empty() {
        items.push(section_item(document, "", "", 1, preamble));
    }
    for (at, section) in outline.iter().enumerate() {
        let end = outline.get(at + 1).map_or(text.len(), |next| next.start);
        let body = text
            .get(section.start.min(end)..end)
            .unwrap_or_default()
            .trim_end();
        items.push(section_item(
            document,
            &section.path,
            &section.anchor,
            section.line,
            body,
        ));
    }
    items
}

fn section_item(
    document: &Document,
    heading_path: &str,
    anchor: &str,
    line: usize,
    body: &str,
) -> SearchItem {
    let name = heading_path
        .rsplit_once('/')
        .map_or(heading_path, |(_, last)| last)
        .to_string();
    SearchItem {
        corpus: DOCS.name,
        kind: "heading".to_string(),
        words_from: [
            heading_path.to_string(),
            document.path.to_string(),
            body.to_string(),
        ],
        name,
        target: format!("{}/{}#{}", document.mount, document.path, anchor),
        path: Some(document.path.to_string()),
        line: u32::try_from(line).ok(),
        lang: Some("markdown".to_string()),
        status: None,
        body: body.to_string(),
        test: false,
    }
}
