//! What the graph offers search: each indexed file is a unit (fingerprinted
//! by its content hash) holding its symbols as items of the `symbols` corpus
//! and its text for the code text search.

use crate::tools::searchable::{
    self, Corpus, FileText, LeftOut, Opens, SearchItem, SearchUnit, Searchable, UnitVersion,
};
use crate::tools::{ToolContext, ToolError};

/// A file's text is kept for substring and regex search up to this size.
const MAX_TEXT_BYTES: u64 = 2 << 20;

/// The kinds of node search finds by name.
const SYMBOL_KINDS: &[&str] = &[
    "class",
    "interface",
    "function",
    "method",
    "module",
    "variable",
    "file",
];

const SYMBOLS: Corpus = Corpus {
    name: "symbols",
    kinds: SYMBOL_KINDS,
    opens: Opens::Node,
    definitions: true,
    paths: true,
    statuses: false,
};

pub static SEARCHABLE: Searchable = Searchable {
    source: "graph",
    corpora: &[SYMBOLS],
    files: true,
    revision: super::revision_in,
    prepare: None,
    units,
    load,
    languages: super::language_names,
    statuses: Vec::new,
    left_out: Some(left_out),
};

fn units(context: &ToolContext) -> Result<Vec<UnitVersion>, ToolError> {
    let files = context.hub.store.view(super::files_with_hashes)?;
    Ok(files
        .into_iter()
        .map(|(path, hash, lang)| UnitVersion {
            key: path,
            fingerprint: hash,
            detail: lang,
        })
        .collect())
}

/// A file's symbols, each with its defining line, and its text.
fn load(context: &ToolContext, unit: &UnitVersion) -> Result<Option<SearchUnit>, ToolError> {
    let hub = context.hub;
    let (path, lang) = (unit.key.as_str(), unit.detail.as_str());
    let nodes = hub.store.view(|c| super::nodes_in_file(c, path))?;
    // Markdown is searched as documents, by section, not line by line
    let text = if lang == "markdown" {
        None
    } else {
        read_text(&hub.config.repo_root.join(path))
    };
    let lines: Vec<&str> = text
        .as_deref()
        .map_or_else(Vec::new, |t| t.lines().collect());
    let test = super::is_test_path(path);
    let items = nodes
        .into_iter()
        .filter(|node| SYMBOL_KINDS.contains(&node.kind.as_str()))
        .map(|node| {
            let qualified = node
                .uid
                .rsplit_once("::")
                .map_or(node.label.as_str(), |(_, q)| q)
                .to_string();
            // the definition's line is the hit's snippet: kept in the index,
            // a query never reads the file's text to show it
            let body = node
                .line
                .and_then(|line| lines.get(line.saturating_sub(1) as usize))
                .map_or_else(|| qualified.clone(), |line| line.to_string());
            SearchItem {
                corpus: SYMBOLS.name,
                words_from: [node.label.clone(), path.to_string(), qualified],
                kind: node.kind,
                name: node.label,
                target: node.uid,
                path: Some(path.to_string()),
                line: node.line,
                lang: Some(lang.to_string()),
                status: None,
                body,
                test,
            }
        })
        .collect();
    Ok(Some(SearchUnit {
        items,
        file: Some(FileText {
            path: path.to_string(),
            lang: lang.to_string(),
            text,
            test,
        }),
    }))
}

/// A file's text when it is UTF-8 and small enough to keep.
fn read_text(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_TEXT_BYTES + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_TEXT_BYTES || bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

fn left_out(c: &rusqlite::Connection) -> Result<LeftOut, crate::store::StoreError> {
    let now = super::left_out_in(c)?;
    Ok(searchable::LeftOut {
        count: now.count,
        first: now.first.into_iter().map(|f| (f.path, f.why)).collect(),
    })
}
