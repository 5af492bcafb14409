//! Per-file extraction: one source file in, its nodes, its in-file edges and its
//! unresolved references (imports, calls, bases) out. Pure functions over text,
//! run in parallel by the indexer; resolution across files happens later in SQL.

use tree_sitter::{Node, Parser};

use super::bindings::{self, Binding};

/// A node this file declares.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRecord {
    pub uid: String,
    pub kind: &'static str,
    pub label: String,
    pub line_start: u32,
    pub line_end: u32,
}

/// An edge between two nodes of this file (both uids are known here).
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeRecord {
    pub source: String,
    pub target: String,
    pub kind: &'static str,
}

/// A reference to resolve against the whole graph: `source` imports, calls or
/// inherits from something called `name` (for imports: a dotted module path).
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub source: String,
    pub kind: &'static str,
    pub name: String,
    /// How a call or base was qualified (`db` in `db.connect()`, `""` when bare,
    /// None for an expression); consumed when bindings are applied.
    pub qualifier: Option<String>,
    /// The module an import binding says `name` lives in.
    pub module: Option<String>,
}

impl Reference {
    fn plain(source: String, kind: &'static str, name: String) -> Reference {
        Reference {
            source,
            kind,
            name,
            qualifier: None,
            module: None,
        }
    }
}

#[derive(Debug, Default)]
pub struct Extraction {
    pub nodes: Vec<NodeRecord>,
    pub edges: Vec<EdgeRecord>,
    pub references: Vec<Reference>,
    /// Local names the file's imports introduce.
    pub bindings: Vec<Binding>,
    /// Syntax errors tree-sitter recovered from.
    pub parse_errors: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Python,
    Rust,
    TypeScript,
    Tsx,
    JavaScript,
    Go,
    Markdown,
}

impl Language {
    pub fn of(path: &str) -> Option<Language> {
        match path.rsplit_once('.').map(|(_, ext)| ext) {
            Some("py") => Some(Language::Python),
            Some("rs") => Some(Language::Rust),
            Some("ts") | Some("mts") | Some("cts") => Some(Language::TypeScript),
            Some("tsx") => Some(Language::Tsx),
            Some("js") | Some("jsx") | Some("mjs") | Some("cjs") => Some(Language::JavaScript),
            Some("go") => Some(Language::Go),
            Some("md") | Some("markdown") => Some(Language::Markdown),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::JavaScript => "javascript",
            Language::Go => "go",
            Language::Markdown => "markdown",
        }
    }
}

pub fn file_uid(path: &str, language: Language) -> String {
    match language {
        Language::Markdown => format!("doc:file:{path}"),
        _ => format!("code:file:{path}"),
    }
}

/// Extracts `text` (the file at repository-relative `path`).
pub fn extract(path: &str, language: Language, text: &str) -> Extraction {
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
    match grammar_of(language) {
        Some((grammar_language, grammar)) => {
            code(
                &mut extraction,
                path,
                &file,
                text,
                &grammar_language,
                grammar,
            );
            bindings::bind_references(&mut extraction.references, &extraction.bindings, language);
        }
        None => markdown(&mut extraction, path, &file, text),
    }
    extraction
}

/// The tree-sitter grammar and construct names of a programming language (Markdown has its own walk).
fn grammar_of(language: Language) -> Option<(tree_sitter::Language, &'static Grammar)> {
    match language {
        Language::Python => Some((tree_sitter_python::LANGUAGE.into(), &PYTHON)),
        Language::Rust => Some((tree_sitter_rust::LANGUAGE.into(), &RUST)),
        Language::TypeScript => Some((tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(), &SCRIPT)),
        Language::Tsx => Some((tree_sitter_typescript::LANGUAGE_TSX.into(), &SCRIPT)),
        Language::JavaScript => Some((tree_sitter_javascript::LANGUAGE.into(), &SCRIPT)),
        Language::Go => Some((tree_sitter_go::LANGUAGE.into(), &GO)),
        Language::Markdown => None,
    }
}

/// How a language's grammar names the constructs the graph cares about.
struct Grammar {
    classes: &'static [(&'static str, &'static str)],
    functions: &'static [&'static str],
    containers: &'static [&'static str],
    imports: &'static [&'static str],
    calls: &'static [&'static str],
    /// Values that make a `name = value` binding a function (JS/TS arrow functions).
    function_values: &'static [&'static str],
}

const PYTHON: Grammar = Grammar {
    classes: &[("class_definition", "class")],
    functions: &["function_definition"],
    containers: &[],
    imports: &["import_statement", "import_from_statement"],
    calls: &["call"],
    function_values: &[],
};

const RUST: Grammar = Grammar {
    classes: &[
        ("struct_item", "class"),
        ("enum_item", "class"),
        ("trait_item", "interface"),
    ],
    functions: &["function_item", "function_signature_item"],
    containers: &["impl_item", "mod_item"],
    imports: &["use_declaration"],
    calls: &["call_expression", "macro_invocation"],
    function_values: &[],
};

/// TypeScript, TSX and JavaScript share their constructs' names.
const SCRIPT: Grammar = Grammar {
    classes: &[
        ("class_declaration", "class"),
        ("abstract_class_declaration", "class"),
        ("interface_declaration", "interface"),
    ],
    functions: &[
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
    ],
    containers: &[],
    imports: &["import_statement"],
    calls: &["call_expression", "new_expression"],
    function_values: &["arrow_function", "function_expression", "function"],
};

const GO: Grammar = Grammar {
    classes: &[],
    functions: &["function_declaration"],
    containers: &[],
    imports: &["import_spec"],
    calls: &["call_expression"],
    function_values: &[],
};

struct Walk<'a> {
    path: &'a str,
    /// Variable uids declared so far (a name assigned twice is one variable).
    variables: std::collections::HashSet<String>,
    text: &'a str,
    grammar: &'a Grammar,
    out: &'a mut Extraction,
}

fn code(
    out: &mut Extraction,
    path: &str,
    file: &str,
    text: &str,
    language: &tree_sitter::Language,
    grammar: &Grammar,
) {
    let mut parser = Parser::new();
    if parser.set_language(language).is_err() {
        out.parse_errors += 1;
        return;
    }
    let Some(tree) = parser.parse(text, None) else {
        out.parse_errors += 1;
        return;
    };
    let mut walk = Walk {
        path,
        variables: Default::default(),
        text,
        grammar,
        out,
    };
    walk.visit(tree.root_node(), file, "", None);
}

fn line(node: Node) -> (u32, u32) {
    (
        node.start_position().row as u32 + 1,
        node.end_position().row as u32 + 1,
    )
}

impl Walk<'_> {
    fn text_of(&self, node: Node) -> &str {
        node.utf8_text(self.text.as_bytes()).unwrap_or("")
    }

    fn name_of(&self, node: Node) -> Option<String> {
        node.child_by_field_name("name")
            .map(|name| self.text_of(name).to_string())
    }

    /// `parent` is the uid that contains what is found here; `scope` the qualified
    /// name prefix; `owner` the enclosing function or method (for calls).
    fn visit(&mut self, node: Node, parent: &str, scope: &str, owner: Option<&str>) {
        if node.is_error() || node.is_missing() {
            self.out.parse_errors += 1;
        }
        let kind = node.kind();
        if kind == "type_spec"
            && let Some(name) = self.name_of(node)
        {
            // Go: `type Name struct {..}` or `type Name interface {..}`
            let type_kind = match node.child_by_field_name("type").map(|t| t.kind()) {
                Some("interface_type") => "interface",
                _ => "class",
            };
            let uid = format!("code:{type_kind}:{}::{name}", self.path);
            self.declare(&uid, type_kind, &name, node, parent);
            return;
        }
        if kind == "method_declaration"
            && let Some(name) = self.name_of(node)
        {
            // Go: `func (r *Receiver) Name(..)`
            let receiver = node
                .child_by_field_name("receiver")
                .map(|r| {
                    self.text_of(r)
                        .rsplit([' ', '*', '('])
                        .next()
                        .unwrap_or("")
                        .trim_end_matches(')')
                        .split('[')
                        .next()
                        .unwrap_or("")
                        .to_string()
                })
                .unwrap_or_default();
            let qualified = qualify(&receiver, &name);
            let uid = format!("code:method:{}::{qualified}", self.path);
            self.declare(&uid, "method", &name, node, parent);
            self.children(node, &uid, &qualified, Some(&uid.clone()));
            return;
        }
        if owner.is_none()
            && let Some(names) = self.variable_names(node)
        {
            for name in names {
                let qualified = qualify(scope, &name);
                let uid = format!("code:variable:{}::{qualified}", self.path);
                self.declare_variable(&uid, &name, node, parent);
            }
        }
        if kind == "variable_declarator"
            && let (Some(name), Some(value)) = (
                node.child_by_field_name("name"),
                node.child_by_field_name("value"),
            )
            && self.grammar.function_values.contains(&value.kind())
            && name.kind() == "identifier"
        {
            // JS/TS: `const name = (..) => ..`
            let name = self.text_of(name).to_string();
            let qualified = qualify(scope, &name);
            let uid = format!("code:function:{}::{qualified}", self.path);
            self.declare(&uid, "function", &name, node, parent);
            self.children(value, &uid, &qualified, Some(&uid.clone()));
            return;
        }
        if let Some((_, class_kind)) = self.grammar.classes.iter().find(|(k, _)| *k == kind)
            && let Some(name) = self.name_of(node)
        {
            let qualified = qualify(scope, &name);
            let uid = format!("code:{class_kind}:{}::{qualified}", self.path);
            self.declare(&uid, class_kind, &name, node, parent);
            self.bases(node, &uid);
            self.children(node, &uid, &qualified, owner);
            return;
        }
        if self.grammar.functions.contains(&kind)
            && let Some(name) = self.name_of(node)
        {
            let method = parent.starts_with("code:class:")
                || parent.starts_with("code:interface:")
                || !scope.is_empty() && self.path.ends_with(".rs") && scope_is_type(scope);
            let qualified = qualify(scope, &name);
            let node_kind = if method { "method" } else { "function" };
            let uid = format!("code:{node_kind}:{}::{qualified}", self.path);
            self.declare(&uid, node_kind, &name, node, parent);
            self.children(node, &uid, &qualified, Some(&uid.clone()));
            return;
        }
        if self.grammar.containers.contains(&kind) {
            // impl Type / impl Trait for Type, mod name { .. }
            let type_name = node
                .child_by_field_name("type")
                .map(|t| {
                    self.text_of(t)
                        .split('<')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string()
                })
                .or_else(|| self.name_of(node));
            if kind == "impl_item"
                && let (Some(trait_node), Some(type_name)) =
                    (node.child_by_field_name("trait"), type_name.as_ref())
                && let Some((qualifier, trait_name)) =
                    bindings::split_callee(self.text_of(trait_node))
            {
                let type_uid = format!("code:class:{}::{}", self.path, qualify(scope, type_name));
                self.out.references.push(Reference {
                    source: type_uid,
                    kind: "implements",
                    name: trait_name,
                    qualifier,
                    module: None,
                });
            }
            if kind == "mod_item"
                && let Some(name) = self.name_of(node)
                && node.child_by_field_name("body").is_some()
            {
                let qualified = qualify(scope, &name);
                let uid = format!("code:module:{}::{qualified}", self.path);
                self.declare(&uid, "module", &name, node, parent);
                self.children(node, &uid, &qualified, owner);
                return;
            }
            let inner_scope = type_name
                .map(|t| qualify(scope, &format!("{t}\u{0}")))
                .unwrap_or_else(|| scope.to_string());
            self.children(node, parent, &inner_scope, owner);
            return;
        }
        if self.grammar.imports.contains(&kind) {
            self.imports(node, parent);
            return;
        }
        if self.grammar.calls.contains(&kind)
            && let Some(owner) = owner
            && let Some((qualifier, name)) = self.callee(node)
        {
            self.out.references.push(Reference {
                source: owner.to_string(),
                kind: "calls",
                name,
                qualifier,
                module: None,
            });
        }
        self.children(node, parent, scope, owner);
    }

    fn children(&mut self, node: Node, parent: &str, scope: &str, owner: Option<&str>) {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            self.visit(child, parent, scope, owner);
        }
    }

    fn declare(&mut self, uid: &str, kind: &'static str, name: &str, node: Node, parent: &str) {
        let (line_start, line_end) = line(node);
        let uid = uid.replace('\u{0}', "");
        self.out.nodes.push(NodeRecord {
            uid: uid.clone(),
            kind,
            label: name.to_string(),
            line_start,
            line_end,
        });
        self.out.edges.push(EdgeRecord {
            source: parent.replace('\u{0}', ""),
            target: uid,
            kind: "contains",
        });
    }

    /// Module- and class-level variables and constants a node declares:
    /// `X = 1` (Python), `const X`/`static X` (Rust), `const x = 1` (scripts, not
    /// functions), `const`/`var` specs (Go).
    fn variable_names(&self, node: Node) -> Option<Vec<String>> {
        let identifier = |n: Node| -> Option<String> {
            matches!(n.kind(), "identifier" | "type_identifier")
                .then(|| self.text_of(n).to_string())
        };
        match node.kind() {
            "assignment" if std::ptr::eq(self.grammar, &PYTHON) => {
                identifier(node.child_by_field_name("left")?).map(|n| vec![n])
            }
            "const_item" | "static_item" => {
                identifier(node.child_by_field_name("name")?).map(|n| vec![n])
            }
            "variable_declarator" => {
                let value_is_function = node
                    .child_by_field_name("value")
                    .is_some_and(|v| self.grammar.function_values.contains(&v.kind()));
                if value_is_function {
                    return None;
                }
                identifier(node.child_by_field_name("name")?).map(|n| vec![n])
            }
            "const_spec" | "var_spec" => {
                let mut cursor = node.walk();
                let names: Vec<String> = node
                    .children_by_field_name("name", &mut cursor)
                    .filter_map(identifier)
                    .collect();
                (!names.is_empty()).then_some(names)
            }
            _ => None,
        }
    }

    /// A variable, attached to what declares it by a `declares` edge (the
    /// `contains` spine keeps to files, types and callables); the first
    /// assignment of a name is the declaration.
    fn declare_variable(&mut self, uid: &str, name: &str, node: Node, parent: &str) {
        let uid = uid.replace('\u{0}', "");
        if !self.variables.insert(uid.clone()) {
            return;
        }
        let (line_start, line_end) = line(node);
        self.out.nodes.push(NodeRecord {
            uid: uid.clone(),
            kind: "variable",
            label: name.to_string(),
            line_start,
            line_end,
        });
        self.out.edges.push(EdgeRecord {
            source: parent.replace('\u{0}', ""),
            target: uid,
            kind: "declares",
        });
    }

    fn bases(&mut self, node: Node, uid: &str) {
        let mut cursor = node.walk();
        let heritage: Vec<Node> = node
            .children(&mut cursor)
            .filter(|c| matches!(c.kind(), "class_heritage" | "extends_type_clause"))
            .collect();
        for clause in heritage {
            self.heritage(clause, uid);
        }
        let Some(bases) = node.child_by_field_name("superclasses") else {
            return;
        };
        let mut cursor = bases.walk();
        for base in bases.named_children(&mut cursor) {
            if base.kind() == "keyword_argument" {
                continue;
            }
            if let Some((qualifier, name)) = bindings::split_callee(self.text_of(base)) {
                self.out.references.push(Reference {
                    source: uid.replace('\u{0}', ""),
                    kind: "inherits_from",
                    name,
                    qualifier,
                    module: None,
                });
            }
        }
    }

    /// `extends A implements B, C` (TS), `extends A` (JS), `interface X extends Y`.
    fn heritage(&mut self, clause: Node, uid: &str) {
        let mut cursor = clause.walk();
        for part in clause.named_children(&mut cursor) {
            let kind = match part.kind() {
                "implements_clause" => "implements",
                _ => "inherits_from",
            };
            let targets: Vec<Node> =
                if matches!(part.kind(), "extends_clause" | "implements_clause") {
                    let mut inner = part.walk();
                    part.named_children(&mut inner).collect()
                } else {
                    vec![part]
                };
            for target in targets {
                if let Some((qualifier, name)) = bindings::split_callee(self.text_of(target)) {
                    self.out.references.push(Reference {
                        source: uid.replace('\u{0}', ""),
                        kind,
                        name,
                        qualifier,
                        module: None,
                    });
                }
            }
        }
    }

    /// The called name and how it was qualified (see `bindings::split_callee`).
    fn callee(&self, node: Node) -> Option<(Option<String>, String)> {
        let function = node
            .child_by_field_name("function")
            .or_else(|| node.child_by_field_name("macro"))
            .or_else(|| node.child_by_field_name("constructor"))?;
        bindings::split_callee(self.text_of(function))
    }

    /// An import statement: `imports` references to the modules it names, and the
    /// local names it binds.
    fn imports(&mut self, node: Node, parent: &str) {
        let source = parent.replace('\u{0}', "");
        let (modules, bindings) = match node.kind() {
            "import_statement" if node.child_by_field_name("source").is_some() => {
                self.script_import(node)
            }
            "import_spec" => self.go_import(node),
            "import_from_statement" => self.python_from_import(node),
            "import_statement" => self.python_import(node),
            _ => {
                let tree = node
                    .child_by_field_name("argument")
                    .map(|argument| self.text_of(argument))
                    .unwrap_or("");
                let bindings = bindings::rust_use_bindings(self.path, tree);
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
        };
        let mut seen = std::collections::HashSet::new();
        for module in modules {
            if !module.is_empty() && seen.insert(module.clone()) {
                self.out
                    .references
                    .push(Reference::plain(source.clone(), "imports", module));
            }
        }
        self.out.bindings.extend(bindings);
    }

    fn unquoted(&self, node: Node) -> String {
        self.text_of(node)
            .trim()
            .trim_matches(|c| c == '"' || c == '\'' || c == '`')
            .to_string()
    }

    /// The name an import clause names and its `as` alias, if any.
    fn imported_name(&self, name: Node) -> (Option<&str>, Option<&str>) {
        match name.kind() {
            "aliased_import" => (
                name.child_by_field_name("name").map(|n| self.text_of(n)),
                name.child_by_field_name("alias").map(|a| self.text_of(a)),
            ),
            _ => (Some(self.text_of(name)), None),
        }
    }

    /// `import a.b.c` binds `a` (and the full dotted name); `import a.b as m` binds `m`.
    fn python_import(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let mut modules = Vec::new();
        let mut bound = Vec::new();
        let mut cursor = node.walk();
        for name in node.children_by_field_name("name", &mut cursor) {
            let (module, alias) = self.imported_name(name);
            let Some(module) = module else { continue };
            modules.push(module.to_string());
            let mut module_binding = |local: &str, module: &str| {
                bound.push(Binding {
                    local: local.to_string(),
                    module: module.to_string(),
                    symbol: None,
                })
            };
            match alias {
                Some(alias) => module_binding(alias, module),
                None => {
                    module_binding(module, module);
                    if let Some((top, _)) = module.split_once('.') {
                        module_binding(top, top);
                    }
                }
            }
        }
        (modules, bound)
    }

    /// `from m import f as g, h` binds `g` to `f` of `m` and `h` to `h` of `m`.
    fn python_from_import(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let Some(module) = node
            .child_by_field_name("module_name")
            .map(|m| self.text_of(m).to_string())
        else {
            return (Vec::new(), Vec::new());
        };
        let mut modules = Vec::new();
        let mut bound = Vec::new();
        let mut cursor = node.walk();
        for name in node.children_by_field_name("name", &mut cursor) {
            let (symbol, alias) = self.imported_name(name);
            let Some(symbol) = symbol else { continue };
            // `from pkg import sub` imports a submodule when there is one; resolution tries it first.
            modules.push(bindings::join_module(&module, symbol));
            bound.push(Binding {
                local: alias.unwrap_or(symbol).to_string(),
                module: module.clone(),
                symbol: Some(symbol.to_string()),
            });
        }
        if modules.is_empty() {
            modules.push(module);
        }
        (modules, bound)
    }

    /// `import d, { a as b } from './x'`, `import * as ns from './x'`.
    fn script_import(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let Some(module) = node
            .child_by_field_name("source")
            .map(|source| self.unquoted(source))
        else {
            return (Vec::new(), Vec::new());
        };
        let mut bound = Vec::new();
        let mut cursor = node.walk();
        let clauses: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "import_clause")
            .collect();
        for clause in clauses {
            let mut cursor = clause.walk();
            for part in clause.named_children(&mut cursor) {
                match part.kind() {
                    // a default import: resolved to the target file's symbol of the same name
                    "identifier" => bound.push(Binding {
                        local: self.text_of(part).to_string(),
                        module: module.clone(),
                        symbol: Some(self.text_of(part).to_string()),
                    }),
                    "namespace_import" => {
                        let mut inner = part.walk();
                        if let Some(local) = part
                            .named_children(&mut inner)
                            .find(|c| c.kind() == "identifier")
                        {
                            bound.push(Binding {
                                local: self.text_of(local).to_string(),
                                module: module.clone(),
                                symbol: None,
                            });
                        }
                    }
                    "named_imports" => {
                        let mut inner = part.walk();
                        for specifier in part.named_children(&mut inner) {
                            let Some(name) = specifier.child_by_field_name("name") else {
                                continue;
                            };
                            let name = self.text_of(name).to_string();
                            let local = specifier
                                .child_by_field_name("alias")
                                .map(|a| self.text_of(a).to_string())
                                .unwrap_or_else(|| name.clone());
                            bound.push(Binding {
                                local,
                                module: module.clone(),
                                symbol: Some(name),
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        (vec![module], bound)
    }

    /// `import alias "path"`: the package's name (or alias) stands for its folder.
    fn go_import(&self, node: Node) -> (Vec<String>, Vec<Binding>) {
        let Some(path) = node.child_by_field_name("path").map(|p| self.unquoted(p)) else {
            return (Vec::new(), Vec::new());
        };
        let module = format!("go:{path}");
        let local = match node.child_by_field_name("name") {
            Some(name) => self.text_of(name).to_string(),
            None => path.rsplit('/').next().unwrap_or(&path).to_string(),
        };
        let bound = if local == "_" || local == "." {
            Vec::new()
        } else {
            vec![Binding {
                local,
                module: module.clone(),
                symbol: None,
            }]
        };
        (vec![module], bound)
    }
}

/// True when a Rust scope ends in a type (an impl block), marked by a NUL.
fn scope_is_type(scope: &str) -> bool {
    scope.ends_with('\u{0}')
}

fn qualify(scope: &str, name: &str) -> String {
    let scope = scope.trim_end_matches('\u{0}');
    if scope.is_empty() {
        name.to_string()
    } else {
        format!("{scope}.{name}")
    }
}

/// A heading's anchor, as GitHub makes it: lowercase, spaces to dashes, punctuation dropped.
pub fn slug(heading: &str) -> String {
    let mut slug = String::new();
    for c in heading.trim().to_lowercase().chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            slug.push(c);
        } else if c == ' ' {
            slug.push('-');
        }
    }
    slug
}

fn markdown(out: &mut Extraction, path: &str, file: &str, text: &str) {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_md::LANGUAGE.into())
        .is_err()
    {
        out.parse_errors += 1;
        return;
    }
    let Some(tree) = parser.parse(text, None) else {
        out.parse_errors += 1;
        return;
    };
    let mut stack = vec![tree.root_node()];
    let mut code_ranges = Vec::new();
    while let Some(node) = stack.pop() {
        match node.kind() {
            "atx_heading" | "setext_heading" => {
                let raw = node.utf8_text(text.as_bytes()).unwrap_or("");
                let title = raw
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches('#')
                    .trim()
                    .to_string();
                if !title.is_empty() {
                    let uid = format!("doc:heading:{path}#{}", slug(&title));
                    let (line_start, line_end) = line(node);
                    if !out.nodes.iter().any(|n| n.uid == uid) {
                        out.nodes.push(NodeRecord {
                            uid: uid.clone(),
                            kind: "doc_heading",
                            label: title,
                            line_start,
                            line_end,
                        });
                        out.edges.push(EdgeRecord {
                            source: file.to_string(),
                            target: uid,
                            kind: "contains",
                        });
                    }
                }
            }
            "fenced_code_block" | "indented_code_block" => code_ranges.push(node.byte_range()),
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        // reversed, so the stack visits the document top to bottom
        stack.extend(children.into_iter().rev());
    }
    for (offset, target) in markdown_links(text) {
        if code_ranges.iter().any(|range| range.contains(&offset))
            || target.contains("://")
            || target.starts_with("mailto:")
        {
            continue;
        }
        out.references
            .push(Reference::plain(file.to_string(), "links_to", target));
    }
}

/// `[text](target)` links outside code, as (byte offset, target).
fn markdown_links(text: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    let bytes = text.as_bytes();
    let mut index = 0;
    while let Some(found) = text[index..].find("](") {
        let start = index + found + 2;
        let Some(end) = text[start..].find(')') else {
            break;
        };
        let target = text[start..start + end]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string();
        if !target.is_empty() && !target.contains('`') && bytes.get(index + found).is_some() {
            links.push((start, target));
        }
        index = start + end;
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uids(extraction: &Extraction) -> Vec<&str> {
        extraction.nodes.iter().map(|n| n.uid.as_str()).collect()
    }

    #[test]
    fn python_classes_methods_functions_imports_calls_bases() {
        let text = "import os\nfrom app.db import connect as db_connect\n\nclass Base:\n    pass\n\nclass Store(Base):\n    def save(self):\n        db_connect()\n        self.flush()\n\ndef main():\n    Store().save()\n";
        let e = extract("app/store.py", Language::Python, text);
        assert_eq!(
            uids(&e),
            [
                "code:file:app/store.py",
                "code:class:app/store.py::Base",
                "code:class:app/store.py::Store",
                "code:method:app/store.py::Store.save",
                "code:function:app/store.py::main"
            ]
        );
        assert!(e.edges.contains(&EdgeRecord {
            source: "code:class:app/store.py::Store".into(),
            target: "code:method:app/store.py::Store.save".into(),
            kind: "contains"
        }));
        let refs: Vec<(&str, &str, &str)> = e
            .references
            .iter()
            .map(|r| (r.source.as_str(), r.kind, r.name.as_str()))
            .collect();
        assert!(refs.contains(&("code:file:app/store.py", "imports", "os")));
        assert!(refs.contains(&("code:file:app/store.py", "imports", "app.db.connect")));
        assert!(refs.contains(&("code:class:app/store.py::Store", "inherits_from", "Base")));
        // the alias is followed to the bound symbol and module
        let aliased = e
            .references
            .iter()
            .find(|r| r.kind == "calls" && r.name == "connect")
            .map(|r| (r.source.as_str(), r.module.as_deref()));
        assert_eq!(
            aliased,
            Some(("code:method:app/store.py::Store.save", Some("app.db")))
        );
        assert!(refs.contains(&("code:method:app/store.py::Store.save", "calls", "flush")));
        assert!(refs.contains(&("code:function:app/store.py::main", "calls", "save")));
        assert_eq!(e.parse_errors, 0);
    }

    #[test]
    fn rust_structs_traits_impls_and_calls() {
        let text = "use crate::store::Store;\n\npub trait Shape { fn area(&self) -> f64; }\n\npub struct Square { side: f64 }\n\nimpl Shape for Square {\n    fn area(&self) -> f64 { helper(self.side) }\n}\n\nfn helper(x: f64) -> f64 { x * x }\n";
        let e = extract("src/shape.rs", Language::Rust, text);
        let found = uids(&e);
        assert!(
            found.contains(&"code:interface:src/shape.rs::Shape"),
            "{found:?}"
        );
        assert!(found.contains(&"code:class:src/shape.rs::Square"));
        assert!(
            found.contains(&"code:method:src/shape.rs::Square.area"),
            "{found:?}"
        );
        assert!(found.contains(&"code:function:src/shape.rs::helper"));
        let refs: Vec<(&str, &str, &str)> = e
            .references
            .iter()
            .map(|r| (r.source.as_str(), r.kind, r.name.as_str()))
            .collect();
        assert!(
            refs.contains(&("code:class:src/shape.rs::Square", "implements", "Shape")),
            "{refs:?}"
        );
        assert!(
            refs.contains(&("code:method:src/shape.rs::Square.area", "calls", "helper")),
            "{refs:?}"
        );
        assert!(
            refs.contains(&("code:file:src/shape.rs", "imports", "crate.store.Store")),
            "{refs:?}"
        );
    }

    #[test]
    fn markdown_headings_and_local_links() {
        let text = "# Guide\n\nSee [the API](api.md#errors) and [site](https://example.com).\n\n## Getting started\n\n```\n[not](a-link.md)\n```\n";
        let e = extract("docs/guide.md", Language::Markdown, text);
        assert_eq!(
            uids(&e),
            [
                "doc:file:docs/guide.md",
                "doc:heading:docs/guide.md#guide",
                "doc:heading:docs/guide.md#getting-started"
            ]
        );
        let links: Vec<&str> = e
            .references
            .iter()
            .filter(|r| r.kind == "links_to")
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(links, ["api.md#errors"]);
    }

    #[test]
    fn typescript_classes_interfaces_arrow_functions_imports() {
        let text = "import { connect } from './db';\nimport React from 'react';\n\nexport interface Shape { area(): number }\n\nexport class Square extends Base implements Shape {\n  area() { return helper(2); }\n}\n\nexport const helper = (x: number) => x * x;\nfunction main() { new Square().area(); connect(); }\n";
        let e = extract("web/shapes.ts", Language::TypeScript, text);
        let found = uids(&e);
        for uid in [
            "code:interface:web/shapes.ts::Shape",
            "code:class:web/shapes.ts::Square",
            "code:method:web/shapes.ts::Square.area",
            "code:function:web/shapes.ts::helper",
            "code:function:web/shapes.ts::main",
        ] {
            assert!(found.contains(&uid), "{uid} missing from {found:?}");
        }
        let refs: Vec<(&str, &str, &str)> = e
            .references
            .iter()
            .map(|r| (r.source.as_str(), r.kind, r.name.as_str()))
            .collect();
        for expected in [
            ("code:file:web/shapes.ts", "imports", "./db"),
            ("code:file:web/shapes.ts", "imports", "react"),
            ("code:class:web/shapes.ts::Square", "inherits_from", "Base"),
            ("code:class:web/shapes.ts::Square", "implements", "Shape"),
            ("code:method:web/shapes.ts::Square.area", "calls", "helper"),
            ("code:function:web/shapes.ts::main", "calls", "Square"),
            ("code:function:web/shapes.ts::main", "calls", "connect"),
        ] {
            assert!(
                refs.contains(&expected),
                "{expected:?} missing from {refs:?}"
            );
        }
        assert_eq!(e.parse_errors, 0);
        let tsx = extract(
            "web/App.tsx",
            Language::Tsx,
            "export function App() { return <div>{render()}</div>; }\n",
        );
        assert!(uids(&tsx).contains(&"code:function:web/App.tsx::App"));
        let js = extract(
            "web/util.js",
            Language::JavaScript,
            "class A extends B {}\nfunction f() { g(); }\n",
        );
        assert!(uids(&js).contains(&"code:class:web/util.js::A"));
        assert!(
            js.references
                .iter()
                .any(|r| r.kind == "inherits_from" && r.name == "B")
        );
    }

    #[test]
    fn go_types_methods_functions_imports() {
        let text = "package store\n\nimport (\n  \"fmt\"\n  \"example.com/app/db\"\n)\n\ntype Store struct { n int }\ntype Saver interface { Save() error }\n\nfunc (s *Store) Save() error { return db.Write(fmt.Sprint(s.n)) }\n\nfunc New() *Store { return &Store{} }\n";
        let e = extract("store/store.go", Language::Go, text);
        let found = uids(&e);
        for uid in [
            "code:class:store/store.go::Store",
            "code:interface:store/store.go::Saver",
            "code:method:store/store.go::Store.Save",
            "code:function:store/store.go::New",
        ] {
            assert!(found.contains(&uid), "{uid} missing from {found:?}");
        }
        let refs: Vec<(&str, &str, &str)> = e
            .references
            .iter()
            .map(|r| (r.source.as_str(), r.kind, r.name.as_str()))
            .collect();
        assert!(
            refs.contains(&("code:file:store/store.go", "imports", "go:fmt")),
            "{refs:?}"
        );
        assert!(refs.contains(&(
            "code:file:store/store.go",
            "imports",
            "go:example.com/app/db"
        )));
        assert!(refs.contains(&("code:method:store/store.go::Store.Save", "calls", "Write")));
    }
}
