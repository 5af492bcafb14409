//! The walk over one file's syntax tree: declarations (types, functions,
//! methods, variables, modules), containment, bases, calls, and the dispatch
//! of import statements to their language's reader.

use tree_sitter::{Node, Parser};

use super::bindings;
use super::grammar::Grammar;
use super::kinds::{Kinds, role};
use super::names;
use super::scopes::{Receiver, Scopes};
use super::{EdgeRecord, Extraction, Language, NodeRecord, Reference};

pub(super) struct Walk<'a> {
    pub(super) path: &'a str,
    pub(super) language: Language,
    /// Variable uids declared so far (a name assigned twice is one variable).
    variables: std::collections::HashSet<String>,
    /// The functions and types the walk is inside, innermost last.
    pub(super) scopes: Scopes,
    /// How many nodes deep the walk is (see `MAX_DEPTH`).
    depth: usize,
    pub(super) text: &'a str,
    grammar: &'a Grammar,
    kinds: &'static Kinds,
    pub(super) out: &'a mut Extraction,
}

/// A call's parts: the name called, how it was qualified (`Some("")` when
/// bare, None for an expression) and the object it was called on.
pub(super) struct Callee<'t> {
    pub(super) name: String,
    pub(super) qualifier: Option<String>,
    pub(super) object: Option<Node<'t>>,
}

/// How deep the walk goes into a syntax tree. Real declarations sit far
/// above it; a chain of thousands of `a + b + ...` terms (a generated C
/// table) nests that deep, and walking it would overflow a parser thread's
/// stack. What lies deeper is not read.
const MAX_DEPTH: usize = 256;

/// The fields a member access names its object by, across grammars.
const OBJECT_FIELDS: [&str; 9] = [
    "object",
    "receiver",
    "expression",
    "argument",
    "operand",
    "value",
    "target",
    "path",
    "scope",
];

pub(super) struct Source<'a> {
    pub(super) path: &'a str,
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    pub(super) language: Language,
}

pub(super) fn code(
    out: &mut Extraction,
    source: Source,
    grammar_language: &tree_sitter::Language,
    (grammar, kinds): (&Grammar, &'static Kinds),
) {
    let Source {
        path,
        file,
        text,
        language,
    } = source;
    let mut parser = Parser::new();
    if parser.set_language(grammar_language).is_err() {
        out.parse_errors += 1;
        return;
    }
    let Some(tree) = parser.parse(text, None) else {
        out.parse_errors += 1;
        return;
    };
    let mut walk = Walk {
        path,
        language,
        variables: Default::default(),
        text,
        grammar,
        kinds,
        out,
        scopes: Scopes::default(),
        depth: 0,
    };
    walk.visit(tree.root_node(), file, "", None);
}

pub(super) fn line(node: Node) -> (u32, u32) {
    (
        node.start_position().row as u32 + 1,
        node.end_position().row as u32 + 1,
    )
}

impl Walk<'_> {
    /// The node's kind, as `Node::kind` but from the grammar's table.
    pub(super) fn kind(&self, node: Node) -> &'static str {
        self.kinds.name(node)
    }

    /// The node's child in field `name`, as `Node::child_by_field_name` but
    /// by the grammar's table.
    pub(super) fn field<'t>(&self, node: Node<'t>, name: &str) -> Option<Node<'t>> {
        self.kinds.field(node, name)
    }

    /// The node's children in field `name`, by the grammar's table.
    pub(super) fn fields<'t>(&self, node: Node<'t>, name: &str) -> Vec<Node<'t>> {
        let Some(id) = self.kinds.field_id(name) else {
            return Vec::new();
        };
        let mut cursor = node.walk();
        node.children_by_field_id(id, &mut cursor).collect()
    }

    pub(super) fn is(&self, node: Node, role: u16) -> bool {
        self.kinds.is(node, role)
    }

    /// The graph node kind a type declaration of this kind makes.
    pub(super) fn class_kind(&self, node: Node) -> Option<&'static str> {
        self.kinds.class_kind(node)
    }

    pub(super) fn text_of(&self, node: Node) -> &str {
        node.utf8_text(self.text.as_bytes()).unwrap_or("")
    }

    pub(super) fn name_of(&self, node: Node) -> Option<String> {
        if let Some(name) = self.field(node, "name") {
            return Some(self.text_of(name).to_string());
        }
        // Dart names a function in its signature
        if let Some(signature) = self.field(node, "signature") {
            let inner = self
                .field(signature, "name")
                .or_else(|| signature.named_child(0)?.child_by_field_name("name"));
            return inner.map(|name| self.text_of(name).to_string());
        }
        // C and C++ name a function inside its declarator (`*f(int)`, `A::f()`)
        let mut declarator = self.field(node, "declarator");
        for _ in 0..8 {
            let current = declarator?;
            if self.field(current, "declarator").is_none() {
                let name = self.text_of(current);
                return (!name.is_empty() && !name.contains('(')).then(|| name.to_string());
            }
            declarator = self.field(current, "declarator");
        }
        match self.kind(node) {
            "init_declaration" => Some("init".to_string()),
            // Kotlin and Swift give some declarations' names no field
            _ => {
                let mut cursor = node.walk();
                let name = node.named_children(&mut cursor).find(|c| {
                    matches!(
                        self.kind(*c),
                        "identifier" | "simple_identifier" | "type_identifier"
                    )
                });
                name.map(|n| self.text_of(n).to_string())
            }
        }
    }

    /// `parent` is the uid that contains what is found here; `scope` the qualified
    /// name prefix; `owner` the enclosing function or method (for calls).
    pub(super) fn visit(&mut self, node: Node, parent: &str, scope: &str, owner: Option<&str>) {
        if node.is_error() || node.is_missing() {
            self.out.parse_errors += 1;
        }
        if owner.is_none() {
            self.variables_of(node, parent, scope);
        }
        let handled = self.go_type(node, parent)
            || self.go_method(node, parent)
            || self.function_value(node, parent, scope)
            || self.class(node, parent, scope, owner)
            || self.function(node, parent, scope)
            || self.container(node, parent, scope, owner)
            || self.import(node, parent);
        if handled {
            return;
        }
        self.call(node, owner);
        self.children(node, parent, scope, owner);
    }

    /// Go: `type Name struct {..}` or `type Name interface {..}`.
    fn go_type(&mut self, node: Node, parent: &str) -> bool {
        if self.kind(node) != "type_spec" || self.language != Language::Go {
            return false;
        }
        let Some(name) = self.name_of(node) else {
            return false;
        };
        let type_kind = match self.field(node, "type").map(|t| self.kind(t)) {
            Some("interface_type") => "interface",
            _ => "class",
        };
        let uid = format!("code:{type_kind}:{}::{name}", self.path);
        self.declare(&uid, type_kind, &name, node, parent);
        true
    }

    /// Go: `func (r *Receiver) Name(..)`, a method of the receiver's type.
    fn go_method(&mut self, node: Node, parent: &str) -> bool {
        if self.kind(node) != "method_declaration" || self.language != Language::Go {
            return false;
        }
        let Some(name) = self.name_of(node) else {
            return false;
        };
        let receiver = self
            .field(node, "receiver")
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
        self.scopes.enter_function(Default::default());
        self.children(node, &uid, &qualified, Some(&uid.clone()));
        let scope = self.scopes.leave_function();
        self.uses_types(&uid, scope.locals.values().chain(&scope.mentions));
        true
    }

    /// Module- and class-level variables, declared where they are assigned.
    /// A variable given a value of a type the syntax names (`Query =
    /// queryBinding{}`, `DEFAULT = Config()`) uses that type.
    fn variables_of(&mut self, node: Node, parent: &str, scope: &str) {
        let names = self.variable_names(node).unwrap_or_default();
        if names.is_empty() {
            return;
        }
        let value_type = self
            .field(node, "value")
            .or_else(|| self.field(node, "right"))
            .map(|value| match self.kind(value) {
                "expression_list" => value.named_child(0).unwrap_or(value),
                _ => value,
            })
            .and_then(|value| self.value_type(value));
        for name in names {
            let qualified = qualify(scope, &name);
            let uid = format!("code:variable:{}::{qualified}", self.path);
            self.declare_variable(&uid, &name, node, parent);
            self.uses_types(&uid, value_type.iter());
        }
    }

    /// JS/TS: `const name = (..) => ..`, a function by another syntax.
    fn function_value(&mut self, node: Node, parent: &str, scope: &str) -> bool {
        if self.kind(node) != "variable_declarator" {
            return false;
        }
        let (Some(name), Some(value)) = (self.field(node, "name"), self.field(node, "value"))
        else {
            return false;
        };
        if !self.is(value, role::FUNCTION_VALUE) || self.kind(name) != "identifier" {
            return false;
        }
        let name = self.text_of(name).to_string();
        let qualified = qualify(scope, &name);
        let uid = format!("code:function:{}::{qualified}", self.path);
        self.declare(&uid, "function", &name, node, parent);
        self.scopes.enter_function(self.parameter_names(value));
        self.children(value, &uid, &qualified, Some(&uid.clone()));
        let scope = self.scopes.leave_function();
        self.uses_types(&uid, scope.locals.values().chain(&scope.mentions));
        true
    }

    /// A class, struct, enum, trait or interface, with its bases.
    fn class(&mut self, node: Node, parent: &str, scope: &str, owner: Option<&str>) -> bool {
        let kind = self.kind(node);
        let Some(class_kind) = self.class_kind(node) else {
            return false;
        };
        // `struct cart *c` names a C type; only `struct cart { .. }` declares one
        if kind.ends_with("_specifier") && self.field(node, "body").is_none() {
            return false;
        }
        let Some(name) = self
            .field(node, "name")
            .map(|n| self.text_of(n).to_string())
            .or_else(|| self.name_of(node))
        else {
            return false;
        };
        let qualified = qualify(scope, &name);
        let uid = format!("code:{class_kind}:{}::{qualified}", self.path);
        self.declare(&uid, class_kind, &name, node, parent);
        self.bases(node, &uid);
        self.scopes.enter_type(qualified.clone());
        self.children(node, &uid, &qualified, owner);
        let fields = self.scopes.leave_type(&mut self.out.references);
        self.uses_types(&uid, fields.values());
        true
    }

    /// A function, or a method when it sits in a type (or a Rust impl block).
    fn function(&mut self, node: Node, parent: &str, scope: &str) -> bool {
        if !self.is(node, role::FUNCTION) {
            return false;
        }
        // a Dart signature inside a declaration with a body is that declaration's
        let signs_a_body = self.kind(node) == "function_signature"
            && node.parent().is_some_and(|p| {
                matches!(self.kind(p), "method_signature" | "function_declaration")
            });
        if signs_a_body {
            return false;
        }
        let Some(written) = self.name_of(node) else {
            return false;
        };
        // C++ defines a method outside its class as `Type::name`
        let normalized = names::normalized(&written);
        let (owner_type, name) = match normalized.rsplit_once('.') {
            Some((owner_type, name)) => (Some(owner_type.to_string()), name.to_string()),
            None => (None, normalized.clone()),
        };
        let method = parent.starts_with("code:class:")
            || parent.starts_with("code:interface:")
            || owner_type.is_some()
            || !scope.is_empty() && self.language == Language::Rust && scope_is_type(scope);
        let scope = match &owner_type {
            Some(owner_type) => qualify(scope, owner_type),
            None => scope.to_string(),
        };
        let qualified = qualify(&scope, &name);
        let node_kind = if method { "method" } else { "function" };
        let uid = format!("code:{node_kind}:{}::{qualified}", self.path);
        self.declare(&uid, node_kind, &name, node, parent);
        let pushed_type = owner_type.is_some();
        if pushed_type {
            self.scopes
                .enter_type(scope.trim_end_matches('\u{0}').to_string());
        }
        let returned = ["return_type", "result", "returns"]
            .into_iter()
            .find_map(|field| self.field(node, field))
            .and_then(|t| names::type_name(self.text_of(t)));
        self.scopes.enter_function(self.parameter_names(node));
        self.children(node, &uid, &qualified, Some(&uid.clone()));
        let function = self.scopes.leave_function();
        self.uses_types(
            &uid,
            function
                .locals
                .values()
                .chain(returned.as_ref())
                .chain(&function.mentions),
        );
        if pushed_type {
            self.scopes.leave_type(&mut self.out.references);
        }
        true
    }

    /// Rust: `impl Type`, `impl Trait for Type` (an `implements` reference) and
    /// `mod name { .. }` (a module node).
    fn container(&mut self, node: Node, parent: &str, scope: &str, owner: Option<&str>) -> bool {
        let kind = self.kind(node);
        if !self.is(node, role::CONTAINER) {
            return false;
        }
        let type_name = self
            .field(node, "type")
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
            && let Some(type_name) = type_name.as_ref()
        {
            self.implemented_trait(node, scope, type_name);
        }
        if kind == "mod_item"
            && let Some(name) = self.name_of(node)
            && self.field(node, "body").is_some()
        {
            let qualified = qualify(scope, &name);
            let uid = format!("code:module:{}::{qualified}", self.path);
            self.declare(&uid, "module", &name, node, parent);
            self.children(node, &uid, &qualified, owner);
            return true;
        }
        let inner_scope = type_name
            .as_ref()
            .map(|t| qualify(scope, &format!("{t}\u{0}")))
            .unwrap_or_else(|| scope.to_string());
        let pushed_type = kind == "impl_item" && type_name.is_some();
        if let Some(type_name) = type_name.filter(|_| pushed_type) {
            self.scopes.enter_type(type_name);
        }
        self.children(node, parent, &inner_scope, owner);
        if pushed_type {
            self.scopes.leave_type(&mut self.out.references);
        }
        true
    }

    /// `impl Trait for Type`: the type implements the trait.
    fn implemented_trait(&mut self, node: Node, scope: &str, type_name: &str) {
        let Some(trait_node) = self.field(node, "trait") else {
            return;
        };
        let Some((qualifier, trait_name)) = bindings::split_callee(self.text_of(trait_node)) else {
            return;
        };
        let type_uid = format!("code:class:{}::{}", self.path, qualify(scope, type_name));
        self.out.references.push(Reference {
            source: type_uid,
            kind: "implements",
            name: trait_name,
            qualifier,
            module: None,
            receiver: None,
        });
    }

    fn import(&mut self, node: Node, parent: &str) -> bool {
        if !self.is(node, role::IMPORT) {
            return false;
        }
        self.imports(node, parent);
        true
    }

    /// A call inside a function or method: a `calls` reference from it.
    fn call(&mut self, node: Node, owner: Option<&str>) {
        if !self.is(node, role::CALL) {
            return;
        }
        let Some(callee) = self.callee(node) else {
            return;
        };
        if self.language == Language::Ruby && self.ruby_require(node, &callee) {
            return;
        }
        let Some(owner) = owner else {
            return;
        };
        let calls_a_parameter = callee.object.is_none()
            && callee.qualifier.as_deref() == Some("")
            && self.scopes.is_parameter(&callee.name);
        if calls_a_parameter {
            return;
        }
        let mut settle = None;
        let (receiver, qualifier) = match callee.object {
            Some(object) => match self.receiver_of(object) {
                Receiver::Known(type_name) => (Some(type_name), None),
                Receiver::Type(type_name) => {
                    self.scopes.mention(type_name.clone());
                    (Some(format!("{}{type_name}", names::TYPE_ITSELF)), None)
                }
                Receiver::Unknown => (Some(String::new()), callee.qualifier),
                Receiver::Field { field, otherwise } => {
                    settle = Some((field, otherwise));
                    (Some(String::new()), callee.qualifier)
                }
            },
            // `helper()` in a method of a language that names members bare
            // is `this.helper()` first (see `names::IMPLICIT_SELF`)
            None if self.language.members_are_implicit() => {
                let implicit = self
                    .scopes
                    .own_type()
                    .map(|t| format!("{}{t}", names::IMPLICIT_SELF));
                (implicit, callee.qualifier)
            }
            None => (None, callee.qualifier),
        };
        if let Some((field, otherwise)) = settle {
            self.scopes
                .settle_later(self.out.references.len(), field, otherwise);
        }
        self.out.references.push(Reference {
            source: owner.to_string(),
            kind: "calls",
            name: callee.name,
            qualifier,
            module: None,
            receiver,
        });
    }

    /// `uses_type` references from a function or type to the types its
    /// parameters, locals, return value or fields are declared with (each once).
    fn uses_types<'t>(&mut self, source: &str, types: impl Iterator<Item = &'t String>) {
        let mut seen = std::collections::HashSet::new();
        for type_name in types {
            if !seen.insert(type_name.as_str()) {
                continue;
            }
            if let Some((qualifier, name)) = bindings::split_callee(type_name) {
                self.out.references.push(Reference {
                    source: source.replace('\u{0}', ""),
                    kind: "uses_type",
                    name,
                    qualifier,
                    module: None,
                    receiver: None,
                });
            }
        }
    }

    pub(super) fn children(&mut self, node: Node, parent: &str, scope: &str, owner: Option<&str>) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        let kind = self.kind(node);
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if !self.scopes.is_empty() {
                self.learn(child, kind);
            }
            self.visit(child, parent, scope, owner);
        }
        self.depth -= 1;
    }

    pub(super) fn declare(
        &mut self,
        uid: &str,
        kind: &'static str,
        name: &str,
        node: Node,
        parent: &str,
    ) {
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
    /// functions), `const`/`var` specs (Go), properties (Kotlin, Swift).
    pub(super) fn variable_names(&self, node: Node) -> Option<Vec<String>> {
        let identifier = |n: Node| -> Option<String> {
            matches!(self.kind(n), "identifier" | "type_identifier")
                .then(|| self.text_of(n).to_string())
        };
        match self.kind(node) {
            "assignment" if self.grammar.assignments_declare => {
                identifier(self.field(node, "left")?).map(|n| vec![n])
            }
            "const_item" | "static_item" => identifier(self.field(node, "name")?).map(|n| vec![n]),
            "variable_declarator" => {
                let value_is_function = self
                    .field(node, "value")
                    .is_some_and(|v| self.is(v, role::FUNCTION_VALUE));
                if value_is_function {
                    return None;
                }
                identifier(self.field(node, "name")?).map(|n| vec![n])
            }
            // Kotlin's and Swift's `val`/`let`/`var`
            "property_declaration" => {
                let mut cursor = node.walk();
                let named = self.field(node, "name").or_else(|| {
                    node.named_children(&mut cursor)
                        .find(|c| self.kind(*c) == "variable_declaration")
                })?;
                self.declared_name(named).map(|n| vec![n])
            }
            "const_spec" | "var_spec" => {
                let names: Vec<String> = self
                    .fields(node, "name")
                    .into_iter()
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
    pub(super) fn declare_variable(&mut self, uid: &str, name: &str, node: Node, parent: &str) {
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

    pub(super) fn bases(&mut self, node: Node, uid: &str) {
        let mut cursor = node.walk();
        let heritage: Vec<Node> = node
            .children(&mut cursor)
            .filter(|c| matches!(self.kind(*c), "class_heritage" | "extends_type_clause"))
            .collect();
        for clause in heritage {
            self.heritage(clause, uid);
        }
        let mut cursor = node.walk();
        let clauses: Vec<(Node, &'static str)> = node
            .children(&mut cursor)
            .filter_map(|c| {
                let found = self
                    .grammar
                    .base_clauses
                    .iter()
                    .find(|(k, _)| *k == self.kind(c));
                found.map(|(_, edge)| (c, *edge))
            })
            .collect();
        for (clause, edge) in clauses {
            let mut names = Vec::new();
            self.base_names(clause, 0, &mut names);
            for name in names {
                if let Some((qualifier, name)) = bindings::split_callee(&name) {
                    self.out.references.push(Reference {
                        source: uid.replace('\u{0}', ""),
                        kind: edge,
                        name,
                        qualifier,
                        module: None,
                        receiver: None,
                    });
                }
            }
        }
        let Some(bases) = self.field(node, "superclasses") else {
            return;
        };
        let mut cursor = bases.walk();
        for base in bases.named_children(&mut cursor) {
            if self.kind(base) == "keyword_argument" {
                continue;
            }
            if let Some((qualifier, name)) = bindings::split_callee(self.text_of(base)) {
                self.out.references.push(Reference {
                    source: uid.replace('\u{0}', ""),
                    kind: "inherits_from",
                    name,
                    qualifier,
                    module: None,
                    receiver: None,
                });
            }
        }
    }

    /// The type names a base clause lists (`extends Base`, `: public A, B<T>`,
    /// `Base(), Payable`), generics and arguments dropped.
    fn base_names(&self, clause: Node, depth: usize, names: &mut Vec<String>) {
        const TYPES: [&str; 14] = [
            "type_identifier",
            "identifier",
            "constant",
            "qualified_name",
            "qualified_identifier",
            "scoped_identifier",
            "scoped_type_identifier",
            "generic_type",
            "user_type",
            "named_type",
            "name",
            "type",
            "constructor_invocation",
            "simple_base_type",
        ];
        let mut cursor = clause.walk();
        for child in clause.named_children(&mut cursor) {
            if TYPES.contains(&self.kind(child)) {
                if let Some(name) = names::type_name(self.text_of(child)) {
                    names.push(name);
                }
            } else if depth < 3
                && !self.kind(child).contains("access")
                && !self.kind(child).contains("modifier")
            {
                self.base_names(child, depth + 1, names);
            }
        }
    }

    /// `extends A implements B, C` (TS), `extends A` (JS), `interface X extends Y`.
    pub(super) fn heritage(&mut self, clause: Node, uid: &str) {
        let mut cursor = clause.walk();
        for part in clause.named_children(&mut cursor) {
            let kind = match self.kind(part) {
                "implements_clause" => "implements",
                _ => "inherits_from",
            };
            let targets: Vec<Node> =
                if matches!(self.kind(part), "extends_clause" | "implements_clause") {
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
                        receiver: None,
                    });
                }
            }
        }
    }

    pub(super) fn is_call(&self, node: Node) -> bool {
        self.is(node, role::CALL)
    }

    /// The called name, how it was qualified (see `bindings::split_callee`)
    /// and the object it was called on.
    pub(super) fn callee<'t>(&self, node: Node<'t>) -> Option<Callee<'t>> {
        // `obj.name(..)` with fields of their own (Java, PHP, Ruby)
        let named = self
            .field(node, "name")
            .or_else(|| self.field(node, "method"));
        if let Some(name) = named.filter(|_| self.field(node, "function").is_none()) {
            let object = self
                .field(node, "object")
                .or_else(|| self.field(node, "receiver"))
                .or_else(|| self.field(node, "scope"));
            let qualifier = match object {
                None => Some(String::new()),
                Some(object) => {
                    let text = names::normalized(self.text_of(object));
                    text.split('.').all(names::is_word).then_some(text)
                }
            };
            return Some(Callee {
                name: self.text_of(name).to_string(),
                qualifier,
                object,
            });
        }
        let function = self
            .field(node, "function")
            .or_else(|| self.field(node, "macro"))
            .or_else(|| self.field(node, "constructor"))
            .or_else(|| self.field(node, "type"))
            .or_else(|| {
                // Kotlin and Swift give a call's callee no field
                let mut cursor = node.walk();
                node.named_children(&mut cursor).next()
            })?;
        let (qualifier, name) = bindings::split_callee(&names::normalized(self.text_of(function)))?;
        let object = OBJECT_FIELDS
            .iter()
            .find_map(|field| self.field(function, field))
            .or_else(|| {
                (self.kind(function) == "navigation_expression")
                    .then(|| function.named_child(0))
                    .flatten()
            });
        Some(Callee {
            name,
            qualifier,
            object,
        })
    }

    /// An import statement: `imports` references to the modules it names, and the
    /// local names it binds.
    pub(super) fn imports(&mut self, node: Node, parent: &str) {
        let source = parent.replace('\u{0}', "");
        let (modules, bindings) = match self.kind(node) {
            "import_statement" if self.field(node, "source").is_some() => self.script_import(node),
            "import_spec" => self.go_import(node),
            "import_from_statement" => self.python_from_import(node),
            "import_statement" => self.python_import(node),
            "use_declaration" => self.rust_use(node),
            _ => self.package_import(node),
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

    pub(super) fn unquoted(&self, node: Node) -> String {
        self.text_of(node)
            .trim()
            .trim_matches(|c| c == '"' || c == '\'' || c == '`')
            .to_string()
    }

    /// The name an import clause names and its `as` alias, if any.
    pub(super) fn imported_name(&self, name: Node) -> (Option<&str>, Option<&str>) {
        match self.kind(name) {
            "aliased_import" => (
                self.field(name, "name").map(|n| self.text_of(n)),
                self.field(name, "alias").map(|a| self.text_of(a)),
            ),
            _ => (Some(self.text_of(name)), None),
        }
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
