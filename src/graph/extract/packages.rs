//! Imports of Java, C#, Kotlin, Scala, Swift, Dart, PHP and Ruby, and C and
//! C++ includes. Each becomes a module name with a prefix saying how to find
//! it (`bindings::PACKAGE`, `bindings::RELATIVE`, `bindings::LIBRARY`).

use tree_sitter::Node;

use super::bindings::{LIBRARY, PACKAGE, RELATIVE};
use super::names;
use super::walk::{Callee, Walk};
use super::{Binding, Language, Reference};

impl Walk<'_> {
    /// An import statement of one of these languages: the modules it names
    /// and the local names it binds.
    pub(super) fn package_import(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        match node.kind() {
            "preproc_include" => self.include(node),
            "require_expression"
            | "require_once_expression"
            | "include_expression"
            | "include_once_expression" => {
                let mut cursor = node.walk();
                let path = node
                    .named_children(&mut cursor)
                    .find(|c| c.kind().contains("string"));
                match path.map(|p| self.unquoted(p)) {
                    Some(path) if !path.is_empty() => (vec![format!("{RELATIVE}{path}")], vec![]),
                    _ => (Vec::new(), Vec::new()),
                }
            }
            "import_specification" | "library_export" | "part_directive" => self.dart_import(node),
            "namespace_use_declaration" => self.php_use(node),
            _ => self.dotted_import(node),
        }
    }

    /// `#include "cart.h"` (beside the including file first) or `<stdio.h>`.
    fn include(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let Some(path) = node.child_by_field_name("path") else {
            return (Vec::new(), Vec::new());
        };
        let text = self.text_of(path).trim();
        let module = match text.strip_prefix('<') {
            Some(system) => format!("{LIBRARY}{}", system.trim_end_matches('>')),
            None => format!("{RELATIVE}{}", self.unquoted(path)),
        };
        (vec![module], Vec::new())
    }

    /// Java, Kotlin, Scala, Swift and C#: a dotted package path, perhaps
    /// ending in a type, a `*`, a `{A, B => C}` selector or under an alias.
    fn dotted_import(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let mut cursor = node.walk();
        let mut path = String::new();
        let mut alias = node
            .child_by_field_name("alias")
            .map(|a| self.text_of(a).to_string());
        let mut selectors = Vec::new();
        let mut whole_package = false;
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "scoped_identifier"
                | "qualified_name"
                | "qualified_identifier"
                | "identifier"
                | "simple_identifier"
                    if path.is_empty() || node.kind() == "import_declaration" =>
                {
                    let text = names::normalized(self.text_of(child));
                    if node.kind() == "using_directive"
                        && child.kind() == "identifier"
                        && alias.is_none()
                        && node.child_by_field_name("name") == Some(child)
                    {
                        alias = Some(text);
                        continue;
                    }
                    path = if path.is_empty() {
                        text
                    } else {
                        format!("{path}.{text}")
                    };
                }
                "asterisk" | "wildcard" => whole_package = true,
                "namespace_selectors" => {
                    let mut inner = child.walk();
                    for selector in child.named_children(&mut inner) {
                        let name = match selector.child_by_field_name("name") {
                            Some(name) => Some(self.text_of(name).to_string()),
                            None if selector.named_child_count() == 0 => {
                                Some(self.text_of(selector).to_string())
                            }
                            None => None,
                        };
                        let local = selector
                            .child_by_field_name("alias")
                            .map(|a| self.text_of(a).to_string());
                        if let Some(name) = name {
                            selectors.push((local.clone().unwrap_or_else(|| name.clone()), name));
                        }
                    }
                }
                _ => {}
            }
        }
        if node.kind() == "using_directive"
            && let Some(name) = node.child_by_field_name("name")
            && alias.is_none()
            && !path.is_empty()
        {
            alias = Some(self.text_of(name).to_string());
        }
        if path.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let text = self.text_of(node);
        whole_package |= text.trim_end_matches(';').trim_end().ends_with('*');
        if !selectors.is_empty() {
            let module = format!("{PACKAGE}{path}");
            let bound = selectors
                .into_iter()
                .map(|(local, name)| Binding {
                    local,
                    module: format!("{PACKAGE}{path}.{name}"),
                    symbol: Some(name),
                })
                .collect();
            return (vec![module], bound);
        }
        let module = format!("{PACKAGE}{path}");
        // a namespace (C#, Swift) or a package's every member binds no name
        let names_a_member = !whole_package
            && !matches!(self.language, Language::CSharp | Language::Swift)
            || alias.is_some();
        let last = names::last_segment(&path).to_string();
        let bound = names_a_member
            .then(|| Binding {
                local: alias.unwrap_or_else(|| last.clone()),
                module: module.clone(),
                symbol: Some(last),
            })
            .into_iter()
            .collect();
        (vec![module], bound)
    }

    /// `use App\Model\Cart;`, `use App\Model\{Invoice, Money as M};`.
    fn php_use(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let mut cursor = node.walk();
        let mut prefix = String::new();
        let mut clauses = Vec::new();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "namespace_name" => prefix = names::normalized(self.text_of(child)),
                "namespace_use_clause" => clauses.push(child),
                "namespace_use_group" => {
                    let mut inner = child.walk();
                    clauses.extend(
                        child
                            .named_children(&mut inner)
                            .filter(|c| c.kind() == "namespace_use_clause"),
                    );
                }
                _ => {}
            }
        }
        let mut modules = Vec::new();
        let mut bound = Vec::new();
        for clause in clauses {
            let alias = clause
                .child_by_field_name("alias")
                .map(|a| self.text_of(a).to_string());
            let mut inner = clause.walk();
            let Some(name) = clause
                .named_children(&mut inner)
                .find(|c| matches!(c.kind(), "qualified_name" | "name"))
            else {
                continue;
            };
            let name = names::normalized(self.text_of(name));
            let path = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}.{name}")
            };
            let module = format!("{PACKAGE}{path}");
            let last = names::last_segment(&path).to_string();
            bound.push(Binding {
                local: alias.unwrap_or_else(|| last.clone()),
                module: module.clone(),
                symbol: Some(last),
            });
            modules.push(module);
        }
        (modules, bound)
    }

    /// `import 'cart.dart' as c;`, `import 'package:shop/cart.dart';`, the
    /// other files of a conditional import (`if (dart.library.io) 'io.dart'`),
    /// `export 'src/cart.dart';` and `part 'cart.g.dart';`.
    fn dart_import(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let modules: Vec<String> = self
            .dart_uris(node)
            .into_iter()
            .map(|uri| {
                if uri.starts_with("dart:") {
                    format!("{LIBRARY}{uri}")
                } else if let Some(package) = uri.strip_prefix("package:") {
                    // a package's own files live under its `lib` folder
                    match package.split_once('/') {
                        Some((_, rest)) => format!("{LIBRARY}lib/{rest}"),
                        None => format!("{LIBRARY}{package}"),
                    }
                } else {
                    format!("{RELATIVE}{uri}")
                }
            })
            .collect();
        let bound = node
            .child_by_field_name("alias")
            .zip(modules.first())
            .map(|(alias, module)| Binding {
                local: self.text_of(alias).to_string(),
                module: module.clone(),
                symbol: None,
            })
            .into_iter()
            .collect();
        (modules, bound)
    }

    /// The URIs a Dart directive names, in the order written.
    fn dart_uris(&self, node: Node) -> Vec<String> {
        let Some(uri) = node.child_by_field_name("uri") else {
            return Vec::new();
        };
        if uri.kind() == "uri" {
            return vec![self.unquoted(uri)];
        }
        // a configurable URI: the default, then each `if (..) 'other.dart'`
        let mut uris = Vec::new();
        let mut cursor = uri.walk();
        for part in uri.named_children(&mut cursor) {
            let written = match part.kind() {
                "uri" => Some(part),
                _ => {
                    let mut inner = part.walk();
                    part.named_children(&mut inner).find(|c| c.kind() == "uri")
                }
            };
            if let Some(written) = written {
                uris.push(self.unquoted(written));
            }
        }
        uris
    }

    /// Ruby's `require 'json'` and `require_relative 'cart'`: an import from
    /// the file (true), not a call.
    pub(super) fn ruby_require(&mut self, node: Node, callee: &Callee) -> bool {
        let relative = match callee.name.as_str() {
            "require" | "load" => false,
            "require_relative" => true,
            _ => return false,
        };
        if callee.object.is_some() {
            return false;
        }
        let Some(arguments) = node.child_by_field_name("arguments") else {
            return false;
        };
        let mut cursor = arguments.walk();
        let Some(path) = arguments
            .named_children(&mut cursor)
            .find(|c| c.kind() == "string")
        else {
            return false;
        };
        let path = self.unquoted(path);
        let module = if relative {
            format!("{RELATIVE}{path}")
        } else {
            format!("{LIBRARY}{path}")
        };
        let file = super::file_uid(self.path, self.language);
        self.out
            .references
            .push(Reference::plain(file, "imports", module));
        true
    }
}
