//! What the graph offers search: each indexed file is a unit (fingerprinted
//! by its content hash) holding its symbols as items of the `symbols` corpus
//! (found by name, path and the words of their doc comments) and its text
//! for the code text search.

use crate::tools::searchable::{
    self, Corpus, FileText, LeftOut, Opens, SearchItem, SearchUnit, Searchable, UnitVersion,
};
use crate::tools::{ToolContext, ToolError};

/// A file's text is kept for substring and regex search up to this size.
const MAX_TEXT_BYTES: u64 = 2 << 20;
/// What a file's items hold, as a version beside its content hash: a new
/// one has every file's items made again, once.
const ITEM_RULES: u32 = 4;
/// Lines of a doc comment taken at most.
const MAX_DOC_LINES: usize = 20;

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
    revision: |_, connection| super::revision_in(connection),
    prepare: None,
    units,
    load,
    load_batch: None,
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
            fingerprint: format!("{hash}/{ITEM_RULES}"),
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
            // a question in plain words finds a symbol by what its comment says
            let doc = node
                .line
                .map(|line| doc_comment(&lines, line as usize, lang, &node.kind))
                .unwrap_or_default();
            SearchItem {
                corpus: SYMBOLS.name,
                words_from: [
                    node.label.clone(),
                    path.to_string(),
                    format!("{qualified} {doc}"),
                ],
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

/// The doc comment of the definition of `kind` on 1-based `line`: a
/// Python docstring below it, or the comment lines right above it
/// (decorators and attributes between are passed over) in the other
/// languages; for a file or module, what opens the file.
fn doc_comment(lines: &[&str], line: usize, lang: &str, kind: &str) -> String {
    let Some(at) = line.checked_sub(1).filter(|at| *at < lines.len()) else {
        return String::new();
    };
    let whole_file = kind == "file" || kind == "module";
    let (marks, attributes) = comment_syntax(lang);
    let is_comment = |l: &&str| marks.iter().any(|mark| l.starts_with(mark));
    let taken: Vec<&str> = match (lang == "python", whole_file) {
        (true, true) => docstring_from(lines, 0),
        (true, false) => docstring_from(lines, at + 1),
        (false, true) => lines
            .iter()
            .map(|l| l.trim())
            .take_while(is_comment)
            .take(MAX_DOC_LINES)
            .collect(),
        (false, false) => lines[..at]
            .iter()
            .rev()
            .map(|l| l.trim())
            .skip_while(|l| attributes.iter().any(|mark| l.starts_with(mark)))
            .take_while(is_comment)
            .take(MAX_DOC_LINES)
            .collect(),
    };
    taken.join(" ")
}

/// How a language opens a comment line, and the attributes, annotations
/// and decorators that may stand between a doc comment and its definition.
fn comment_syntax(lang: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match lang {
        "ruby" => (&["#"], &[]),
        "c#" => (&["//", "/*", "*"], &["["]),
        "php" => (&["//", "/*", "*"], &["#["]),
        _ => (&["//", "/*", "*"], &["#", "@"]),
    }
}

/// The Python string that opens the lines from `start` on, blank ones aside.
fn docstring_from<'a>(lines: &[&'a str], start: usize) -> Vec<&'a str> {
    let mut below = lines[start.min(lines.len())..]
        .iter()
        .map(|l| l.trim())
        .skip_while(|l| l.is_empty())
        .take(MAX_DOC_LINES);
    let Some(first) = below.next() else {
        return Vec::new();
    };
    let opened = first.trim_start_matches(['r', 'u', 'b', 'R', 'U', 'B']);
    let Some(quote) = ["\"\"\"", "'''"]
        .into_iter()
        .find(|q| opened.starts_with(q))
    else {
        return Vec::new();
    };
    let mut taken = vec![first];
    if opened[3..].contains(quote) {
        return taken;
    }
    for next in below {
        taken.push(next);
        if next.contains(quote) {
            break;
        }
    }
    taken
}

/// A file's text when it is small enough to keep and not binary; bytes
/// that are not UTF-8 (a Latin-1 comment) read as U+FFFD, as ripgrep
/// shows them, so the rest of the file is still found.
fn read_text(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_TEXT_BYTES + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_TEXT_BYTES || bytes.contains(&0) {
        return None;
    }
    Some(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    })
}

fn left_out(c: &rusqlite::Connection) -> Result<LeftOut, crate::store::StoreError> {
    let now = super::left_out_in(c)?;
    Ok(searchable::LeftOut {
        count: now.count,
        first: now.first.into_iter().map(|f| (f.path, f.why)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::doc_comment;

    #[test]
    fn a_definitions_doc_comment_is_its_docstring_or_the_comment_above_it() {
        let python = [
            "class GZipMiddleware:",
            "    \"\"\"",
            "    Compresses responses",
            "    for browsers that accept gzip.",
            "    \"\"\"",
            "def one():",
            "    '''On one line.'''",
            "def bare():",
            "    return 1",
        ];
        let doc = doc_comment(&python, 1, "python", "class");
        assert!(
            doc.contains("Compresses responses") && doc.contains("accept gzip"),
            "{doc}"
        );
        assert_eq!(
            doc_comment(&python, 6, "python", "function"),
            "'''On one line.'''"
        );
        assert_eq!(doc_comment(&python, 8, "python", "function"), "");
        // a file's doc is what opens it, not its first class's
        assert_eq!(doc_comment(&python, 1, "python", "file"), "");
        let module = ["\"\"\"Sessions.\"\"\"", "import os"];
        assert_eq!(
            doc_comment(&module, 1, "python", "file"),
            "\"\"\"Sessions.\"\"\""
        );
        let rust = [
            "use std::io;",
            "/// Hashes a password",
            "/// before it is kept.",
            "#[inline]",
            "pub fn hash() {}",
            "fn plain() {}",
        ];
        assert_eq!(
            doc_comment(&rust, 5, "rust", "function"),
            "/// before it is kept. /// Hashes a password"
        );
        assert_eq!(doc_comment(&rust, 6, "rust", "function"), "");
        assert_eq!(doc_comment(&rust, 99, "rust", "function"), "");
        let ruby = ["# Totals the cart", "# in cents.", "def total", "end"];
        assert_eq!(
            doc_comment(&ruby, 3, "ruby", "method"),
            "# in cents. # Totals the cart"
        );
        let csharp = [
            "/// <summary>Pays.</summary>",
            "[HttpPost]",
            "public int Pay() {}",
        ];
        assert_eq!(
            doc_comment(&csharp, 3, "c#", "method"),
            "/// <summary>Pays.</summary>"
        );
        let file = ["//! The board's tables.", "use std::io;"];
        assert_eq!(
            doc_comment(&file, 1, "rust", "file"),
            "//! The board's tables."
        );
    }
}
