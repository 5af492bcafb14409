//! Each grammar's node kinds and field names, looked up once per grammar
//! instead of once per node: tree-sitter's C API answers a node's kind by
//! measuring a C string (and Rust then checks it is UTF-8) and a field name
//! by comparing it with every field name of the grammar, and the walk asks
//! both questions several times for every node of every file.

use std::collections::HashMap;
use std::sync::OnceLock;

use tree_sitter::Node;

use super::Language;
use super::grammar::Grammar;

/// What a node kind is to the walk, as bits.
pub(super) mod role {
    pub const FUNCTION: u16 = 1;
    pub const FUNCTION_VALUE: u16 = 1 << 1;
    pub const CONTAINER: u16 = 1 << 2;
    pub const IMPORT: u16 = 1 << 3;
    pub const CALL: u16 = 1 << 4;
    /// Starts a type of its own: a scan for one scope's variables stops there.
    pub const NESTED_TYPE: u16 = 1 << 5;
    /// Can declare a variable (declarations, parameters, assignments, ...).
    pub const DECLARES: u16 = 1 << 6;
    pub const ASSIGNMENT: u16 = 1 << 7;
}

/// Node kinds that start a type of their own.
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

/// Parts of the node kinds that can declare a variable.
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

pub(super) struct Kinds {
    names: Vec<Box<str>>,
    roles: Vec<u16>,
    /// The graph node kind (`class`, `interface`) a type declaration makes.
    classes: Vec<Option<&'static str>>,
    fields: HashMap<Box<str>, std::num::NonZeroU16, foldhash::fast::RandomState>,
}

impl Kinds {
    /// The table of `language` (None for a language without a grammar),
    /// whose grammar is `grammar_language` read by `grammar`.
    pub(super) fn of(
        language: Language,
        grammar_language: &tree_sitter::Language,
        grammar: &Grammar,
    ) -> Option<&'static Kinds> {
        static TABLES: [OnceLock<Kinds>; Language::ALL.len()] =
            [const { OnceLock::new() }; Language::ALL.len()];
        let slot = Language::ALL.iter().position(|l| *l == language)?;
        Some(TABLES[slot].get_or_init(|| Kinds::new(grammar_language, grammar)))
    }

    fn new(grammar_language: &tree_sitter::Language, grammar: &Grammar) -> Kinds {
        let count = grammar_language.node_kind_count();
        let mut kinds = Kinds {
            names: Vec::with_capacity(count),
            roles: Vec::with_capacity(count),
            classes: Vec::with_capacity(count),
            fields: HashMap::default(),
        };
        for id in 0..count {
            let name = u16::try_from(id)
                .ok()
                .and_then(|id| grammar_language.node_kind_for_id(id))
                .unwrap_or("");
            kinds.roles.push(roles_of(name, grammar));
            let class = grammar.classes.iter().find(|(k, _)| *k == name);
            kinds.classes.push(class.map(|(_, kind)| *kind));
            kinds.names.push(name.into());
        }
        for id in 1..=grammar_language.field_count() {
            let Ok(id) = u16::try_from(id) else { break };
            let field = std::num::NonZeroU16::new(id);
            if let (Some(name), Some(field)) = (grammar_language.field_name_for_id(id), field) {
                kinds.fields.insert(name.into(), field);
            }
        }
        kinds
    }

    pub(super) fn name(&'static self, node: Node) -> &'static str {
        match self.names.get(usize::from(node.kind_id())) {
            Some(name) => name.as_ref(),
            // only the error kinds sit past the table, at the top of the range
            None => "ERROR",
        }
    }

    pub(super) fn is(&self, node: Node, role: u16) -> bool {
        self.roles
            .get(usize::from(node.kind_id()))
            .is_some_and(|roles| roles & role != 0)
    }

    pub(super) fn class_kind(&self, node: Node) -> Option<&'static str> {
        self.classes.get(usize::from(node.kind_id())).copied()?
    }

    pub(super) fn field<'t>(&self, node: Node<'t>, name: &str) -> Option<Node<'t>> {
        node.child_by_field_id(self.fields.get(name)?.get())
    }

    pub(super) fn field_id(&self, name: &str) -> Option<std::num::NonZeroU16> {
        self.fields.get(name).copied()
    }
}

fn roles_of(name: &str, grammar: &Grammar) -> u16 {
    let mut roles = 0;
    let mut mark = |yes: bool, role: u16| {
        if yes {
            roles |= role;
        }
    };
    mark(grammar.functions.contains(&name), role::FUNCTION);
    mark(
        grammar.function_values.contains(&name),
        role::FUNCTION_VALUE,
    );
    mark(grammar.containers.contains(&name), role::CONTAINER);
    mark(grammar.imports.contains(&name), role::IMPORT);
    mark(grammar.calls.contains(&name), role::CALL);
    mark(NESTED_TYPES.contains(&name), role::NESTED_TYPE);
    mark(
        DECLARING.iter().any(|part| name.contains(part)),
        role::DECLARES,
    );
    mark(name.contains("assignment"), role::ASSIGNMENT);
    roles
}
