//! How each programming language's tree-sitter grammar names the constructs
//! the graph cares about.

use super::Language;

/// The tree-sitter grammar and construct names of a programming language (Markdown has its own walk).
pub(super) fn of(language: Language) -> Option<(tree_sitter::Language, &'static Grammar)> {
    match language {
        Language::Python => Some((tree_sitter_python::LANGUAGE.into(), &PYTHON)),
        Language::Rust => Some((tree_sitter_rust::LANGUAGE.into(), &RUST)),
        Language::TypeScript => Some((tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(), &SCRIPT)),
        Language::Tsx => Some((tree_sitter_typescript::LANGUAGE_TSX.into(), &SCRIPT)),
        Language::JavaScript => Some((tree_sitter_javascript::LANGUAGE.into(), &SCRIPT)),
        Language::Go => Some((tree_sitter_go::LANGUAGE.into(), &GO)),
        Language::Markdown | Language::Text => None,
    }
}

/// How a language's grammar names the constructs the graph cares about.
pub(super) struct Grammar {
    pub(super) classes: &'static [(&'static str, &'static str)],
    pub(super) functions: &'static [&'static str],
    pub(super) containers: &'static [&'static str],
    pub(super) imports: &'static [&'static str],
    pub(super) calls: &'static [&'static str],
    /// Values that make a `name = value` binding a function (JS/TS arrow functions).
    pub(super) function_values: &'static [&'static str],
    /// `NAME = value` at module or class level declares a variable (Python).
    pub(super) assignments_declare: bool,
}

const PYTHON: Grammar = Grammar {
    classes: &[("class_definition", "class")],
    functions: &["function_definition"],
    containers: &[],
    imports: &["import_statement", "import_from_statement"],
    calls: &["call"],
    function_values: &[],
    assignments_declare: true,
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
    assignments_declare: false,
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
    assignments_declare: false,
};

const GO: Grammar = Grammar {
    classes: &[],
    functions: &["function_declaration"],
    containers: &[],
    imports: &["import_spec"],
    calls: &["call_expression"],
    function_values: &[],
    assignments_declare: false,
};
