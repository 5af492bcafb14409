//! Per-file extraction: one source file in, its nodes, its in-file edges and its
//! unresolved references (imports, calls, bases) out. Pure functions over text,
//! run in parallel by the indexer; resolution across files happens later in SQL.
//!
//! `walk` is the generic walk over a tree-sitter tree, driven by each
//! language's `grammar`; each language's import statements are read in a file
//! of their own; Markdown has its own walk; Vue and Svelte components are
//! their script blocks (`components`).

mod components;
mod go;
mod grammar;
mod kinds;
mod markdown;
mod names;
mod packages;
mod python;
mod receivers;
mod rust;
mod scopes;
mod script;
#[cfg(test)]
mod tests;
mod walk;

use super::bindings;
pub use super::facts::{
    Binding, EdgeRecord, Extraction, Language, NodeRecord, Reference, file_uid,
};
pub use markdown::slug;
pub use names::{IMPLICIT_SELF, TYPE_ITSELF, unmarked};

/// Extracts `text` (the file at repository-relative `path`).
pub fn extract(path: &str, language: Language, text: &str) -> Extraction {
    extract_in(path, language, text, None)
}

/// Extracts `text`, a file of the Rust package whose library is `library`
/// (its paths through that name are read as `crate::` paths).
pub fn extract_in(path: &str, language: Language, text: &str, library: Option<&str>) -> Extraction {
    let mut extraction = Extraction::default();
    let file = file_uid(path, language);
    let lines = text.lines().count().max(1) as u32;
    let kind = if language == Language::Markdown {
        "doc_file"
    } else {
        "file"
    };
    let label = path.rsplit('/').next().unwrap_or(path).to_string();
    extraction.nodes.push(NodeRecord {
        uid: file.clone(),
        kind,
        label,
        line_start: 1,
        line_end: lines,
    });
    // a C header that declares classes or namespaces is C++
    let mut grammar_language =
        if language == Language::C && path.ends_with(".h") && looks_like_cpp(text) {
            Language::Cpp
        } else {
            language
        };
    let component;
    let text = if components::is_component(path) {
        let (scripts, jsx) = components::script_blocks(text);
        if jsx {
            grammar_language = Language::Tsx;
        }
        component = scripts;
        component.as_str()
    } else {
        text
    };
    let grammar = grammar::of(grammar_language).and_then(|(tree_sitter, grammar)| {
        // keyed by the grammar read, which a header's language is not
        let kinds = kinds::Kinds::of(grammar_language, &tree_sitter, grammar)?;
        Some((tree_sitter, grammar, kinds))
    });
    match grammar {
        Some((tree_sitter, grammar, kinds)) => {
            let source = walk::Source {
                path,
                file: &file,
                text,
                language,
            };
            walk::code(&mut extraction, source, &tree_sitter, (grammar, kinds));
            if language == Language::Rust {
                rust::crate_paths(&mut extraction, library);
            }
            bindings::bind_references(&mut extraction.references, &extraction.bindings, language);
        }
        None if language == Language::Markdown => {
            markdown::extract(&mut extraction, path, &file, text)
        }
        // a file read as text only is its file node and nothing more
        None => {}
    }
    extraction
}

/// True when a header's text uses what only C++ has.
fn looks_like_cpp(text: &str) -> bool {
    const MARKERS: [&str; 6] = [
        "class ",
        "namespace ",
        "template<",
        "template <",
        "public:",
        "::",
    ];
    let head = &text.as_bytes()[..text.len().min(64 * 1024)];
    MARKERS
        .iter()
        .any(|marker| memchr::memmem::find(head, marker.as_bytes()).is_some())
}
