//! Import bindings: which local name an import introduces (`g` in
//! `from m import f as g`, `db` in `import m as db`, `h` in `use a::{f as h}`)
//! and what it stands for. The extractor reads them from import statements and
//! rewrites calls and bases made through them, so that resolution looks for the
//! right symbol in the right module instead of matching a name across the repository.

use std::collections::HashMap;

use super::extract::{Language, Reference};

/// `local` stands for `symbol` of `module` (a module path as the language writes
/// it: dotted for Python and Rust, a specifier for scripts, `go:<path>` for Go),
/// or for the module itself when `symbol` is None.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub local: String,
    pub module: String,
    pub symbol: Option<String>,
}

/// `module` + `.` + `member`, where a Python relative module may end in dots (`from . import x`).
pub fn join_module(module: &str, member: &str) -> String {
    if module.is_empty() || module.ends_with('.') {
        format!("{module}{member}")
    } else {
        format!("{module}.{member}")
    }
}

/// Splits a callee or base as written (`db.connect`, `fmt::Display`, `Vec::<T>::new`)
/// into its qualifier and last name. The qualifier is `Some("")` for a bare name and
/// None when it is an expression (`a().b`, `x[0].y`) no import can bind.
pub fn split_callee(text: &str) -> Option<(Option<String>, String)> {
    let mut plain = String::with_capacity(text.len());
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 && !c.is_whitespace() => plain.push(c),
            _ => {}
        }
    }
    let mut plain = plain.replace("::", ".");
    while plain.contains("..") {
        plain = plain.replace("..", ".");
    }
    let plain = plain.trim_matches('.');
    let (qualifier, name) = match plain.rsplit_once('.') {
        Some((qualifier, name)) => (qualifier, name),
        None => ("", plain),
    };
    let word = |s: &str| {
        s.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    if name.is_empty() || !word(name) {
        return None;
    }
    let qualifier = qualifier
        .split('.')
        .all(|segment| !segment.is_empty() && word(segment))
        .then(|| qualifier.to_string())
        .or_else(|| qualifier.is_empty().then(String::new));
    Some((qualifier, name.to_string()))
}

/// Points calls and bases made through an import binding at the bound module:
/// `g()` after `from m import f as g` becomes `f` in `m`, `db.f()` after
/// `import m as db` becomes `f` in `m`.
pub fn bind_references(references: &mut [Reference], bindings: &[Binding], language: Language) {
    if bindings.is_empty() {
        return;
    }
    let mut by_local: HashMap<&str, &Binding> = HashMap::new();
    for binding in bindings {
        by_local.entry(binding.local.as_str()).or_insert(binding);
    }
    let dotted_modules = matches!(language, Language::Python | Language::Rust);
    for reference in references.iter_mut() {
        if !matches!(reference.kind, "calls" | "inherits_from" | "implements") {
            continue;
        }
        let Some(qualifier) = reference.qualifier.take() else {
            continue;
        };
        if qualifier.is_empty() {
            if let Some(binding) = by_local.get(reference.name.as_str())
                && let Some(symbol) = &binding.symbol
            {
                reference.module = Some(binding.module.clone());
                reference.name = symbol.clone();
            }
            continue;
        }
        let (binding, rest) = match by_local.get(qualifier.as_str()) {
            Some(binding) => (*binding, ""),
            None => {
                let (first, rest) = qualifier.split_once('.').unwrap_or((&qualifier, ""));
                match by_local.get(first) {
                    Some(binding) => (*binding, rest),
                    None => continue,
                }
            }
        };
        let base = match &binding.symbol {
            None => binding.module.clone(),
            // `from django.db import models; models.Model`: the symbol is a submodule or a class
            Some(symbol) if dotted_modules => join_module(&binding.module, symbol),
            Some(_) => continue,
        };
        if !rest.is_empty() && !dotted_modules {
            continue;
        }
        reference.module = Some(if rest.is_empty() {
            base
        } else {
            join_module(&base, rest)
        });
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
    fn callees_split_into_qualifier_and_name() {
        assert_eq!(
            split_callee("connect"),
            Some((Some(String::new()), "connect".into()))
        );
        assert_eq!(
            split_callee("db.connect"),
            Some((Some("db".into()), "connect".into()))
        );
        assert_eq!(
            split_callee("Vec::<u8>::with_capacity"),
            Some((Some("Vec".into()), "with_capacity".into()))
        );
        assert_eq!(split_callee("a().b"), Some((None, "b".into())));
        assert_eq!(split_callee("x[0]"), None);
    }

    #[test]
    fn references_through_bindings_name_the_bound_module() {
        let reference = |name: &str, qualifier: &str| Reference {
            source: "f".into(),
            kind: "calls",
            name: name.into(),
            qualifier: Some(qualifier.into()),
            module: None,
        };
        let mut references = vec![
            reference("g", ""),
            reference("connect", "db"),
            reference("Model", "models"),
            reference("save", "self"),
        ];
        let bindings = [
            binding("g", "app.util", Some("f")),
            binding("db", "app.db", None),
            binding("models", "django.db", Some("models")),
        ];
        bind_references(&mut references, &bindings, Language::Python);
        let bound: Vec<(Option<&str>, &str)> = references
            .iter()
            .map(|r| (r.module.as_deref(), r.name.as_str()))
            .collect();
        assert_eq!(
            bound,
            [
                (Some("app.util"), "f"),
                (Some("app.db"), "connect"),
                (Some("django.db.models"), "Model"),
                (None, "save"),
            ]
        );
    }
}
