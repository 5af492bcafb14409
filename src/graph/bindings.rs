//! Import bindings: which local name an import introduces (`g` in
//! `from m import f as g`, `db` in `import m as db`, `h` in `use a::{f as h}`)
//! and what it stands for. The extractor reads them from import statements;
//! this module rewrites calls and bases made through them, so that resolution looks for the
//! right symbol in the right module instead of matching a name across the repository.

use std::collections::HashMap;

use super::extract::{IMPLICIT_SELF, TYPE_ITSELF, unmarked};
use super::facts::{Binding, Language, Reference};

/// The prefix of a module named by a dotted package path (Java, Kotlin, Scala,
/// C#, Swift, PHP namespaces): found by the folders and files it ends in.
pub const PACKAGE: &str = "pkg:";
/// The prefix of a module named by a path relative to the importing file
/// (`#include "x.h"`, `require_relative`, Dart's relative imports).
pub const RELATIVE: &str = "path:";
/// The prefix of a module named by a library path (`<stdio.h>`, `require
/// 'json'`): a file of the repository ending so, or else a library outside it.
pub const LIBRARY: &str = "lib:";

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
        if !matches!(
            reference.kind,
            "calls" | "inherits_from" | "implements" | "uses_type"
        ) {
            continue;
        }
        if language == Language::Kotlin && bind_extension_call(reference, &by_local) {
            continue;
        }
        match reference.receiver.as_mut() {
            // a bare name an import binds is that import's, not a member
            Some(receiver) if receiver.starts_with(IMPLICIT_SELF) => {
                bind_qualified(reference, &by_local, dotted_modules);
                if reference.module.is_some() {
                    reference.receiver = None;
                }
            }
            Some(receiver) if !receiver.is_empty() => {
                // the type itself binds as its objects' type does, its mark kept
                let itself = receiver.starts_with(TYPE_ITSELF);
                let mut type_name = receiver.trim_start_matches(TYPE_ITSELF).to_string();
                bind_receiver(
                    &mut type_name,
                    &mut reference.module,
                    &by_local,
                    dotted_modules,
                );
                *receiver = match itself {
                    true => format!("{TYPE_ITSELF}{type_name}"),
                    false => type_name,
                };
            }
            _ => {
                bind_qualified(reference, &by_local, dotted_modules);
                // an object whose type is unknown turned out to be a module
                if reference.module.is_some() {
                    reference.receiver = None;
                }
            }
        }
    }
}

/// Kotlin's `value.toHttpDateOrNull()` after `import okhttp3.internal.http.
/// toHttpDateOrNull`: a call on an object whose method name an import binds
/// is the imported extension function (a member is never imported by name).
/// True when it was one.
fn bind_extension_call(reference: &mut Reference, by_local: &HashMap<&str, &Binding>) -> bool {
    let on_an_object = reference
        .receiver
        .as_deref()
        .is_some_and(|receiver| unmarked(receiver) == receiver);
    if !on_an_object || reference.kind != "calls" {
        return false;
    }
    let Some(binding) = by_local.get(reference.name.as_str()) else {
        return false;
    };
    let Some(symbol) = &binding.symbol else {
        return false;
    };
    reference.module = Some(binding.module.clone());
    reference.name = symbol.clone();
    reference.receiver = None;
    reference.qualifier = None;
    true
}

/// A call or base through a bare or qualified name an import binds.
fn bind_qualified(
    reference: &mut Reference,
    by_local: &HashMap<&str, &Binding>,
    dotted_modules: bool,
) {
    let Some(qualifier) = reference.qualifier.take() else {
        return;
    };
    if qualifier.is_empty() {
        if let Some(binding) = by_local.get(reference.name.as_str())
            && let Some(symbol) = &binding.symbol
        {
            reference.module = Some(binding.module.clone());
            reference.name = symbol.clone();
        }
        return;
    }
    let (binding, rest) = match by_local.get(qualifier.as_str()) {
        Some(binding) => (*binding, ""),
        None => {
            let (first, rest) = qualifier.split_once('.').unwrap_or((&qualifier, ""));
            match by_local.get(first) {
                Some(binding) => (*binding, rest),
                None => return,
            }
        }
    };
    let base = match &binding.symbol {
        None => binding.module.clone(),
        // `from django.db import models; models.Model`: the symbol is a submodule or a class
        Some(symbol) if dotted_modules => join_module(&binding.module, symbol),
        Some(_) => return,
    };
    if !rest.is_empty() && !dotted_modules {
        return;
    }
    reference.module = Some(if rest.is_empty() {
        base
    } else {
        join_module(&base, rest)
    });
}

/// A receiver's type named through an import: the module it lives in, and
/// its own name (`M` after `import Money as M` is `Money`).
fn bind_receiver(
    receiver: &mut String,
    module: &mut Option<String>,
    by_local: &HashMap<&str, &Binding>,
    dotted_modules: bool,
) {
    let (first, rest) = receiver.split_once('.').unwrap_or((receiver.as_str(), ""));
    let Some(binding) = by_local.get(first) else {
        return;
    };
    let (bound_module, name) = match (&binding.symbol, rest.is_empty()) {
        // `from cart import Cart`, `import a.b.Cart`: the type itself
        (Some(symbol), true) => (binding.module.clone(), symbol.clone()),
        // `models.Cart` after `from app import models`
        (Some(symbol), false) if dotted_modules => {
            let (inner, name) = rest.rsplit_once('.').unwrap_or(("", rest));
            let module = join_module(&binding.module, symbol);
            let module = if inner.is_empty() {
                module
            } else {
                join_module(&module, inner)
            };
            (module, name.to_string())
        }
        (Some(_), false) => return,
        // `shop.Cart` after `import shop` or Go's `import "x/shop"`
        (None, _) => {
            let (inner, name) = rest.rsplit_once('.').unwrap_or(("", rest));
            if name.is_empty() {
                return;
            }
            let module = if inner.is_empty() || !dotted_modules {
                binding.module.clone()
            } else {
                join_module(&binding.module, inner)
            };
            (module, name.to_string())
        }
    };
    *module = Some(bound_module);
    *receiver = name;
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
            receiver: None,
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
