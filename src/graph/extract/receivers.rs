//! Receiver types: which type an object a method is called on has, as far as
//! the code around the call says (a declared type, a constructor or literal,
//! `self`/`this`, a field of the enclosing type). Read from the syntax tree
//! alone, by field names most tree-sitter grammars share; what cannot be told
//! stays unknown, and such a call links no same-named method.

use tree_sitter::Node;

use super::Language;
use super::kinds::role;
use super::names::{self, is_word, last_segment, normalized, starts_upper, type_name};
use super::scopes::Receiver;
use super::walk::Walk;

impl Walk<'_> {
    /// Learns from `node`, a child of a node of kind `parent_kind`, what it
    /// declares in the innermost scope, and what type it names.
    pub(super) fn learn(&mut self, node: Node, parent_kind: &str) {
        if !node.is_named() {
            return;
        }
        const OWN_SCOPE: u16 = role::FUNCTION
            | role::FUNCTION_VALUE
            | role::NESTED_TYPE
            | role::IMPORT
            | role::CONTAINER;
        let declares = self.is(node, role::DECLARES)
            && !self.is(node, OWN_SCOPE)
            && self.class_kind(node).is_none();
        if declares {
            let declared = self.declared(node);
            self.scopes.declare(declared);
        }
        if self.is(node, role::ASSIGNMENT)
            && let Some((field, type_name)) = self.member_assignment(node)
        {
            self.scopes.assign_field(field, type_name);
        }
        if self.scopes.takes_mentions()
            && let Some(mention) = self.mention(node, parent_kind)
        {
            self.scopes.mention(mention);
        }
    }

    /// `self.x = Cart()`, `this.x = new Cart()`, `@x = Cart.new`: field `x` is a `Cart`.
    pub(super) fn member_assignment(&self, node: Node) -> Option<(String, String)> {
        let left = self
            .field(node, "left")
            .or_else(|| self.field(node, "target"))?;
        let right = self
            .field(node, "right")
            .or_else(|| self.field(node, "value"))
            .or_else(|| self.field(node, "result"))?;
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
        let list = self.field(function, "parameters").or_else(|| {
            let mut cursor = function.walk();
            function
                .named_children(&mut cursor)
                .find(|c| self.kind(*c).contains("parameter"))
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

    /// The (name, type) pairs a declaration, parameter or assignment gives.
    pub(super) fn declared(&self, node: Node) -> Vec<(String, String)> {
        let written = self
            .field(node, "type")
            .or_else(|| self.typed_child(node))
            .and_then(|t| type_name(self.text_of(t)));
        let value = self
            .field(node, "value")
            .or_else(|| self.field(node, "right"));
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
        let names: Vec<Node> = ["name", "pattern", "left", "declarator"]
            .into_iter()
            .map(|field| self.fields(node, field))
            .find(|found| !found.is_empty())
            .unwrap_or_default();
        if !names.is_empty() {
            // Go's `a, b := x, y` pairs names with values in order
            if let (Some(list), Some(values)) = (names.first(), value)
                && self.kind(*list) == "expression_list"
                && self.kind(values) == "expression_list"
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
                let own_value = self.field(name, "value");
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
                    self.kind(*c),
                    "variable_declarator" | "variable_declaration" | "initialized_identifier_list"
                )
            })
            .collect();
        let mut nested = Vec::new();
        for declarator in declarators {
            let own_value = self
                .field(declarator, "value")
                .or_else(|| self.last_value(declarator))
                .or_else(|| self.last_value(node));
            let nested_type = self
                .typed_child(declarator)
                .and_then(|t| type_name(self.text_of(t)));
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
                self.kind(node),
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
    pub(super) fn declared_name(&self, node: Node) -> Option<String> {
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
            if MEMBER_ACCESS
                .iter()
                .any(|kind| self.kind(node).contains(kind))
                || self.kind(node).starts_with("index")
            {
                return None;
            }
            let text = self.text_of(node);
            if is_word(text) {
                return Some(text.to_string());
            }
            node = self
                .field(node, "name")
                .or_else(|| self.field(node, "declarator"))
                .or_else(|| self.field(node, "pattern"))
                .or_else(|| {
                    let mut cursor = node.walk();
                    node.named_children(&mut cursor).find(|c| {
                        self.kind(*c).ends_with("identifier")
                            || self.kind(*c) == "pattern"
                            || self.kind(*c) == "variable_name"
                    })
                })?;
        }
        None
    }

    /// The type a value has when its syntax says: `new Cart()`, `Cart()`,
    /// `Cart.new`, `Cart::new()`, `&Cart{}`, `Cart { .. }`.
    pub(super) fn value_type(&self, node: Node) -> Option<String> {
        match self.kind(node) {
            "object_creation_expression" | "new_expression" | "instance_expression" => {
                let written = self
                    .field(node, "type")
                    .or_else(|| self.field(node, "constructor"))
                    .or_else(|| {
                        let mut cursor = node.walk();
                        node.named_children(&mut cursor).find(|c| {
                            self.kind(*c).contains("type") || self.kind(*c).contains("name")
                        })
                    })?;
                type_name(self.text_of(written))
            }
            "composite_literal" | "struct_expression" => {
                let written = self
                    .field(node, "type")
                    .or_else(|| self.field(node, "name"))?;
                type_name(self.text_of(written))
            }
            "unary_expression" | "parenthesized_expression" | "await_expression" => {
                let inner = self.field(node, "operand").or_else(|| {
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

    /// A type named where only a type can stand: a type identifier (generic
    /// arguments, casts, `sizeof`, `typeof`), and C#'s generic names and type
    /// arguments, whose grammar spells them as plain identifiers.
    fn mention(&self, node: Node, parent_kind: &str) -> Option<String> {
        let named = match self.kind(node) {
            // a part of `pkg.Type` (Dart spells both as type identifiers) is no type
            "type_identifier" if self.next_to_a_dot(node) => None,
            "type_identifier" => Some(node),
            "generic_name" => node.named_child(0),
            "identifier" if matches!(parent_kind, "type_argument_list" | "typeof_expression") => {
                Some(node)
            }
            _ => None,
        };
        type_name(self.text_of(named?))
    }

    /// True for either part of `pkg.Type` spelt as two type identifiers
    /// (Dart): neither part alone is the type.
    fn next_to_a_dot(&self, node: Node) -> bool {
        let is = |n: Option<Node>, kind: &str| n.is_some_and(|n| self.kind(n) == kind);
        let next = node.next_sibling();
        let prev = node.prev_sibling();
        is(next, ".") && is(next.and_then(|n| n.next_sibling()), "type_identifier")
            || is(prev, ".") && is(prev.and_then(|n| n.prev_sibling()), "type_identifier")
    }

    /// The type of the object a method is called on, as far as the code
    /// around the call says.
    pub(super) fn receiver_of(&self, object: Node) -> Receiver {
        let text = names::normalized(self.text_of(object));
        let own_type = self.scopes.own_type();
        if self.is_self(&text) {
            return match own_type {
                Some(name) => Receiver::Known(name.to_string()),
                None => Receiver::Unknown,
            };
        }
        if let Some(field) = self.self_member(&text) {
            return match own_type {
                Some(_) => Receiver::Field {
                    field: field.to_string(),
                    otherwise: None,
                },
                None => Receiver::Unknown,
            };
        }
        if names::is_word(&text) {
            if let Some(found) = self.scopes.local(&text) {
                return Receiver::Known(found.clone());
            }
            let otherwise = self.names_a_type(&text).then(|| text.clone());
            if self.language.members_are_implicit() && own_type.is_some() {
                return Receiver::Field {
                    field: text,
                    otherwise,
                };
            }
            return otherwise.map_or(Receiver::Unknown, Receiver::Type);
        }
        self.value_type(object)
            .map_or(Receiver::Unknown, Receiver::Known)
    }

    /// `Cart.create()`: a call on a type. Go's qualified calls name packages,
    /// and so does a name an import binds to a module.
    fn names_a_type(&self, word: &str) -> bool {
        let names_module = self
            .out
            .bindings
            .iter()
            .any(|b| b.local == word && b.symbol.is_none());
        names::starts_upper(word) && self.language != Language::Go && !names_module
    }

    /// A child holding a declared type where the grammar gives it no field
    /// (Kotlin's `user_type`, Swift's `type_annotation`).
    fn typed_child<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        let mut cursor = node.walk();
        let found = node.named_children(&mut cursor).find(|c| {
            matches!(
                self.kind(*c),
                "user_type" | "type_annotation" | "nullable_type" | "type"
            )
        });
        found.map(|t| {
            if self.kind(t) == "type_annotation" {
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
    fn last_value<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        let mut cursor = node.walk();
        let last = node.named_children(&mut cursor).last()?;
        matches!(
            self.kind(last),
            "call_expression"
                | "object_creation_expression"
                | "new_expression"
                | "instance_expression"
        )
        .then_some(last)
    }
}
