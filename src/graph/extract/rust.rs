//! Rust imports: `use` trees (`crate::a::{b, c::d as e, self}`), with module
//! paths dotted and `super`/`self` made relative to the file's folder.

use tree_sitter::Node;

use super::bindings;
use super::walk::Walk;
use super::{Binding, Extraction};

impl Walk<'_> {
    /// `use a::{b, c as d}`: one module reference per leaf, the leaves' bindings.
    pub(super) fn rust_use(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let tree = node
            .child_by_field_name("argument")
            .map(|argument| self.text_of(argument))
            .unwrap_or("");
        let bindings = rust_use_bindings(self.path, tree);
        let mut modules: Vec<String> = bindings
            .iter()
            .map(|b| match &b.symbol {
                Some(symbol) => bindings::join_module(&b.module, symbol),
                None => b.module.clone(),
            })
            .collect();
        if modules.is_empty() {
            // `use a::*`: the module itself
            let path = tree.trim_end_matches("::*").trim_end_matches('*');
            modules.push(path.trim_end_matches("::").replace("::", "."));
        }
        (modules, bindings)
    }
}

/// The bindings of a Rust `use` tree (`crate::a::{b, c::d as e, self}`), with
/// module paths dotted; `super` and `self` become Python-style leading dots
/// relative to `path`'s folder.
pub fn rust_use_bindings(path: &str, tree: &str) -> Vec<Binding> {
    let mut bindings = Vec::new();
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    use_tree(&[], tree.trim(), &mut bindings);
    let is_module_root = ["mod.rs", "lib.rs", "main.rs"]
        .iter()
        .any(|root| path.rsplit('/').next() == Some(*root));
    for binding in &mut bindings {
        binding.module = rust_module(&binding.module, is_module_root);
    }
    bindings
}

fn rust_module(module: &str, is_module_root: bool) -> String {
    let mut segments: Vec<&str> = module.split('.').filter(|s| !s.is_empty()).collect();
    let supers = segments.iter().take_while(|s| **s == "super").count();
    if supers > 0 {
        segments.drain(..supers);
        let dots = ".".repeat(supers + usize::from(is_module_root));
        return format!("{dots}{}", segments.join("."));
    }
    if segments.first() == Some(&"self") && is_module_root {
        segments.remove(0);
        return format!(".{}", segments.join("."));
    }
    segments.join(".")
}

fn use_tree(prefix: &[String], tree: &str, out: &mut Vec<Binding>) {
    let tree = tree.trim().trim_start_matches("::");
    if let Some(open) = tree.find('{')
        && tree.ends_with('}')
    {
        let mut next = prefix.to_vec();
        next.extend(path_segments(tree[..open].trim_end_matches("::")));
        for part in top_level_parts(&tree[open + 1..tree.len() - 1]) {
            use_tree(&next, part, out);
        }
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((path, alias)) => (path.trim(), Some(alias.trim())),
        None => (tree, None),
    };
    let mut segments = prefix.to_vec();
    segments.extend(path_segments(path));
    let Some(last) = segments.pop() else {
        return;
    };
    if last == "*" || alias == Some("_") {
        return;
    }
    let (module, symbol) = if last == "self" {
        let Some(named) = segments.pop() else {
            return;
        };
        (segments, named)
    } else {
        (segments, last)
    };
    out.push(Binding {
        local: alias.unwrap_or(&symbol).to_string(),
        module: module.join("."),
        symbol: Some(symbol),
    });
}

fn path_segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Splits `a, b::{c, d}, e` at the commas outside braces.
fn top_level_parts(list: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (index, c) in list.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&list[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// Paths from the crate root: the package's own library name stands for
/// `crate` (a binary, test or bench calling `my_lib::a::f`), and a call or
/// base qualified by a `crate::` path names its module directly.
pub(super) fn crate_paths(extraction: &mut Extraction, library: Option<&str>) {
    let from_root = |path: &str| -> String {
        match (library, path.split_once('.')) {
            (Some(library), Some((first, rest))) if first == library => format!("crate.{rest}"),
            (Some(library), None) if path == library => "crate".to_string(),
            _ => path.to_string(),
        }
    };
    for binding in &mut extraction.bindings {
        binding.module = from_root(&binding.module);
    }
    for reference in &mut extraction.references {
        if reference.kind == "imports" {
            reference.name = from_root(&reference.name);
            continue;
        }
        let Some(qualifier) = reference.qualifier.as_deref().map(from_root) else {
            continue;
        };
        if qualifier == "crate" || qualifier.starts_with("crate.") {
            reference.module = Some(qualifier);
            reference.qualifier = None;
        } else {
            reference.qualifier = Some(qualifier);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(local: &str, module: &str, symbol: Option<&str>) -> Binding {
        Binding {
            local: local.into(),
            module: module.into(),
            symbol: symbol.map(str::to_string),
        }
    }

    #[test]
    fn rust_use_trees_bind_each_leaf_under_its_alias() {
        assert_eq!(
            rust_use_bindings(
                "src/a/b.rs",
                "crate::store::{Store, records::{load as load_cards, self}, *}"
            ),
            [
                binding("Store", "crate.store", Some("Store")),
                binding("load_cards", "crate.store.records", Some("load")),
                binding("records", "crate.store", Some("records")),
            ]
        );
        assert_eq!(
            rust_use_bindings("src/a/b.rs", "super::shape::Square as Sq"),
            [binding("Sq", ".shape", Some("Square"))]
        );
        assert_eq!(
            rust_use_bindings("src/a/mod.rs", "super::util"),
            [binding("util", "..", Some("util"))]
        );
    }

    #[test]
    fn the_own_library_name_reads_as_crate() {
        let text = "use my_lib::store::{Store, open as open_store};\n\
                    fn main() {\n    my_lib::cli::run();\n    crate::util::help();\n    open_store();\n    other::f();\n}\n";
        let extraction = super::super::extract_in(
            "src/main.rs",
            super::super::Language::Rust,
            text,
            Some("my_lib"),
        );
        let calls: Vec<(Option<&str>, &str)> = extraction
            .references
            .iter()
            .filter(|r| r.kind == "calls")
            .map(|r| (r.module.as_deref(), r.name.as_str()))
            .collect();
        assert!(calls.contains(&(Some("crate.cli"), "run")), "{calls:?}");
        assert!(calls.contains(&(Some("crate.util"), "help")), "{calls:?}");
        assert!(calls.contains(&(Some("crate.store"), "open")), "{calls:?}");
        assert!(
            calls.contains(&(None, "f")),
            "another crate stays unbound: {calls:?}"
        );
        let imports: Vec<&str> = extraction
            .references
            .iter()
            .filter(|r| r.kind == "imports")
            .map(|r| r.name.as_str())
            .collect();
        assert!(imports.contains(&"crate.store.Store"), "{imports:?}");
    }
}
