//! Receiver types: which type an object a method is called on has, as far as
//! the code around the call says (a declared type, a constructor or literal,
//! `self`/`this`, a field of the enclosing type). Read from the syntax tree
//! alone, by field names most tree-sitter grammars share; what cannot be told
//! stays unknown, and the call is then resolved by name only.

use tree_sitter::Node;

use super::names::{Types, is_word, last_segment, normalized, starts_upper, type_name};
use super::walk::Walk;

/// How deep a declaration scan goes below a function or type: deeper code is
/// rare and its calls are resolved by name.
const MAX_SCAN_DEPTH: usize = 48;

/// Type names one function's code is read for at most.
const MAX_MENTIONS: usize = 256;

/// Node kinds that start a type of their own: a scan for one scope's
/// variables does not enter them.
const NESTED_TYPES: &[&str] = &[
    "class_definition",
    "class_declaration",
    "class_specifier",
    "struct_specifier",
    "interface_declaration",
    "object_declaration",
    "object_definition",
    "class",
    "module",
];

/// Node kinds that hold a function body: a type's fields are not found in them.
const BODIES: &[&str] = &[
    "block",
    "compound_statement",
    "function_body",
    "body_statement",
    "constructor_body",
    "statement_block",
    "method",
];

impl Walk<'_> {
    /// The variables a function declares with a known type: its parameters
    /// and the locals in its body.
    pub(super) fn local_types(&self, function: Node) -> Types {
        let mut types = Types::new();
        self.scan(function, 0, false, &mut types);
        types
    }

    /// The fields a type declares with a known type: field declarations,
    /// constructor properties, and `self.x = Type(..)` assignments.
    pub(super) fn field_types(&self, class: Node) -> Types {
        let mut types = Types::new();
        let mut cursor = class.walk();
        for child in class.named_children(&mut cursor) {
            self.scan(child, 0, true, &mut types);
        }
        types
    }

    fn scan(&self, node: Node, depth: usize, fields: bool, types: &mut Types) {
        if depth > MAX_SCAN_DEPTH || depth > 0 && self.starts_a_scope(node) {
            return;
        }
        let in_body = fields && BODIES.contains(&node.kind());
        if !in_body && declares(node) {
            for (name, type_name) in self.declared(node) {
                types.entry(name).or_insert(type_name);
            }
        }
        if fields
            && node.kind().contains("assignment")
            && let Some((name, type_name)) = self.member_assignment(node)
        {
            types.entry(name).or_insert(type_name);
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if in_body {
                // only assignments to members count inside a method's body
                self.scan_members(child, depth + 1, types);
            } else {
                self.scan(child, depth + 1, fields, types);
            }
        }
    }

    fn scan_members(&self, node: Node, depth: usize, types: &mut Types) {
        if depth > MAX_SCAN_DEPTH || NESTED_TYPES.contains(&node.kind()) {
            return;
        }
        if node.kind().contains("assignment")
            && let Some((name, type_name)) = self.member_assignment(node)
        {
            types.entry(name).or_insert(type_name);
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.scan_members(child, depth + 1, types);
        }
    }

    /// `self.x = Cart()`, `this.x = new Cart()`, `@x = Cart.new`: field `x` is a `Cart`.
    fn member_assignment(&self, node: Node) -> Option<(String, String)> {
        let left = node
            .child_by_field_name("left")
            .or_else(|| node.child_by_field_name("target"))?;
        let right = node
            .child_by_field_name("right")
            .or_else(|| node.child_by_field_name("value"))
            .or_else(|| node.child_by_field_name("result"))?;
        let left = normalized(self.text_of(left));
        let field = self.self_member(&left)?;
        Some((field.to_string(), self.value_type(right)?))
    }

    /// `self.x`, `this.x`, `$this.x` (normalized) or `@x`: the member `x`.
    pub(super) fn self_member<'t>(&self, text: &'t str) -> Option<&'t str> {
        if let Some(field) = text.strip_prefix('@') {
            return is_word(field).then_some(field);
        }
        let (object, field) = text.split_once('.')?;
        (self.is_self(object) && is_word(field)).then_some(field)
    }

    pub(super) fn is_self(&self, word: &str) -> bool {
        matches!(word, "self" | "this" | "$this" | "Self")
    }

    /// The names a function's parameters bind: a bare call to one runs what
    /// the caller passed, nothing the graph can name.
    pub(super) fn parameter_names(&self, function: Node) -> std::collections::HashSet<String> {
        let mut names = std::collections::HashSet::new();
        let list = function.child_by_field_name("parameters").or_else(|| {
            let mut cursor = function.walk();
            function
                .named_children(&mut cursor)
                .find(|c| c.kind().contains("parameter"))
        });
        let Some(list) = list else {
            return names;
        };
        let mut cursor = list.walk();
        for parameter in list.named_children(&mut cursor) {
            if let Some(name) = self.declared_name(parameter) {
                names.insert(name);
            }
        }
        names
    }

    /// The types a function's code names where only a type can stand: type
    /// identifiers (generic arguments, casts, `sizeof`, `typeof`), and C#'s
    /// generic names and type arguments, whose grammar spells them as plain
    /// identifiers.
    pub(super) fn type_mentions(&self, function: Node) -> Vec<String> {
        let mut found = Vec::new();
        // each node with its parent's kind (`Node::parent` walks from the root)
        let mut stack = vec![(function, "", 0usize)];
        while let Some((node, parent_kind, depth)) = stack.pop() {
            let mention = match node.kind() {
                "type_identifier" => Some(node),
                "generic_name" => node.named_child(0),
                "identifier"
                    if matches!(parent_kind, "type_argument_list" | "typeof_expression") =>
                {
                    Some(node)
                }
                _ => None,
            };
            if let Some(name) = mention.and_then(|m| type_name(self.text_of(m))) {
                found.push(name);
            }
            let nested = depth > 0 && self.starts_a_scope(node);
            if depth < MAX_SCAN_DEPTH && found.len() < MAX_MENTIONS && !nested {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    stack.push((child, node.kind(), depth + 1));
                }
            }
        }
        found
    }

    /// A type, or a function scanned on its own when the walk reaches it
    /// (its body sees the enclosing function's variables through the walk).
    fn starts_a_scope(&self, node: Node) -> bool {
        NESTED_TYPES.contains(&node.kind()) || self.is_function(node)
    }

    /// The (name, type) pairs a declaration, parameter or assignment gives.
    fn declared(&self, node: Node) -> Vec<(String, String)> {
        let written = node
            .child_by_field_name("type")
            .or_else(|| typed_child(node))
            .and_then(|t| type_name(self.text_of(t)));
        let value = node
            .child_by_field_name("value")
            .or_else(|| node.child_by_field_name("right"));
        let mut declared = Vec::new();
        let mut add = |name: Node, own_value: Option<Node>| {
            let Some(name) = self.declared_name(name) else {
                return;
            };
            let type_name = written
                .clone()
                .or_else(|| own_value.or(value).and_then(|v| self.value_type(v)));
            if let Some(type_name) = type_name {
                declared.push((name, type_name));
            }
        };
        let mut cursor = node.walk();
        let names: Vec<Node> = ["name", "pattern", "left", "declarator"]
            .into_iter()
            .find_map(|field| {
                let found: Vec<Node> = node.children_by_field_name(field, &mut cursor).collect();
                (!found.is_empty()).then_some(found)
            })
            .unwrap_or_default();
        if !names.is_empty() {
            // Go's `a, b := x, y` pairs names with values in order
            if let (Some(list), Some(values)) = (names.first(), value)
                && list.kind() == "expression_list"
                && values.kind() == "expression_list"
            {
                let mut left = list.walk();
                let mut right = values.walk();
                for (name, value) in list
                    .named_children(&mut left)
                    .zip(values.named_children(&mut right))
                {
                    add(name, Some(value));
                }
                return declared;
            }
            for name in names {
                let own_value = name.child_by_field_name("value");
                add(name, own_value);
            }
            return declared;
        }
        // C#'s `Cart c = new Cart()` and Kotlin's properties name their variables in children
        let mut cursor = node.walk();
        let declarators: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| {
                matches!(
                    c.kind(),
                    "variable_declarator" | "variable_declaration" | "initialized_identifier_list"
                )
            })
            .collect();
        let mut nested = Vec::new();
        for declarator in declarators {
            let own_value = declarator
                .child_by_field_name("value")
                .or_else(|| last_value(declarator))
                .or_else(|| last_value(node));
            let nested_type = typed_child(declarator).and_then(|t| type_name(self.text_of(t)));
            if let (Some(type_name), Some(name)) = (nested_type, self.declared_name(declarator)) {
                nested.push((name, type_name));
                continue;
            }
            add(declarator, own_value);
        }
        declared.extend(nested);
        if declared.is_empty()
            && written.is_some()
            && matches!(
                node.kind(),
                "parameter" | "class_parameter" | "typed_parameter" | "typed_default_parameter"
            )
            && let Some(name) = self.declared_name(node)
            && let Some(type_name) = written
        {
            declared.push((name, type_name));
        }
        declared
    }

    /// The variable a name node declares: an identifier, or the one inside a
    /// declarator (`*p`, `p = ..`, `mut p`, `$p`).
    fn declared_name(&self, node: Node) -> Option<String> {
        const MEMBER_ACCESS: [&str; 7] = [
            "member",
            "selector",
            "field_access",
            "field_expression",
            "attribute",
            "navigation",
            "subscript",
        ];
        let mut node = node;
        for _ in 0..8 {
            // `c.Writer = ..` assigns a member of `c`, and declares nothing
            if MEMBER_ACCESS.iter().any(|kind| node.kind().contains(kind))
                || node.kind().starts_with("index")
            {
                return None;
            }
            let text = self.text_of(node);
            if is_word(text) {
                return Some(text.to_string());
            }
            node = node
                .child_by_field_name("name")
                .or_else(|| node.child_by_field_name("declarator"))
                .or_else(|| node.child_by_field_name("pattern"))
                .or_else(|| {
                    let mut cursor = node.walk();
                    node.named_children(&mut cursor).find(|c| {
                        c.kind().ends_with("identifier")
                            || c.kind() == "pattern"
                            || c.kind() == "variable_name"
                    })
                })?;
        }
        None
    }

    /// The type a value has when its syntax says: `new Cart()`, `Cart()`,
    /// `Cart.new`, `Cart::new()`, `&Cart{}`, `Cart { .. }`.
    pub(super) fn value_type(&self, node: Node) -> Option<String> {
        match node.kind() {
            "object_creation_expression" | "new_expression" | "instance_expression" => {
                let written = node
                    .child_by_field_name("type")
                    .or_else(|| node.child_by_field_name("constructor"))
                    .or_else(|| {
                        let mut cursor = node.walk();
                        node.named_children(&mut cursor)
                            .find(|c| c.kind().contains("type") || c.kind().contains("name"))
                    })?;
                type_name(self.text_of(written))
            }
            "composite_literal" | "struct_expression" => {
                let written = node
                    .child_by_field_name("type")
                    .or_else(|| node.child_by_field_name("name"))?;
                type_name(self.text_of(written))
            }
            "unary_expression" | "parenthesized_expression" | "await_expression" => {
                let inner = node.child_by_field_name("operand").or_else(|| {
                    let mut cursor = node.walk();
                    node.named_children(&mut cursor).last()
                })?;
                self.value_type(inner)
            }
            _ if self.is_call(node) => {
                let callee = self.callee(node)?;
                let qualifier = callee.qualifier.as_deref().unwrap_or("");
                let constructs = matches!(callee.name.as_str(), "new" | "default")
                    || callee.name.starts_with("new_")
                    || callee.name.starts_with("with_");
                if qualifier.is_empty() {
                    starts_upper(&callee.name).then(|| callee.name.clone())
                } else if constructs && starts_upper(last_segment(qualifier)) {
                    Some(qualifier.to_string())
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

/// True for the node kinds that can declare a variable: declarations,
/// declarators, parameters, assignments, definitions, specs, `let`s.
fn declares(node: Node) -> bool {
    const DECLARING: [&str; 8] = [
        "declaration",
        "declarator",
        "parameter",
        "assignment",
        "definition",
        "spec",
        "let_",
        "property",
    ];
    let kind = node.kind();
    DECLARING.iter().any(|part| kind.contains(part))
}

/// A child holding a declared type where the grammar gives it no field
/// (Kotlin's `user_type`, Swift's `type_annotation`).
fn typed_child(node: Node) -> Option<Node> {
    let mut cursor = node.walk();
    let found = node.named_children(&mut cursor).find(|c| {
        matches!(
            c.kind(),
            "user_type" | "type_annotation" | "nullable_type" | "type"
        )
    });
    found.map(|t| {
        if t.kind() == "type_annotation" {
            let mut inner = t.walk();
            let named = t.named_children(&mut inner).next();
            named.unwrap_or(t)
        } else {
            t
        }
    })
}

/// The last named child of a declaration when it is an expression that can
/// give a type (Kotlin's `val c = Cart()`).
fn last_value(node: Node) -> Option<Node> {
    let mut cursor = node.walk();
    let last = node.named_children(&mut cursor).last()?;
    matches!(
        last.kind(),
        "call_expression" | "object_creation_expression" | "new_expression" | "instance_expression"
    )
    .then_some(last)
}
