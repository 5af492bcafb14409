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
        Language::Java => Some((tree_sitter_java::LANGUAGE.into(), &JAVA)),
        Language::CSharp => Some((tree_sitter_c_sharp::LANGUAGE.into(), &CSHARP)),
        Language::C => Some((tree_sitter_c::LANGUAGE.into(), &C)),
        Language::Cpp => Some((tree_sitter_cpp::LANGUAGE.into(), &C)),
        Language::Php => Some((tree_sitter_php::LANGUAGE_PHP.into(), &PHP)),
        Language::Ruby => Some((tree_sitter_ruby::LANGUAGE.into(), &RUBY)),
        Language::Kotlin => Some((tree_sitter_kotlin_ng::LANGUAGE.into(), &KOTLIN)),
        Language::Swift => Some((tree_sitter_swift::LANGUAGE.into(), &SWIFT)),
        Language::Scala => Some((tree_sitter_scala::LANGUAGE.into(), &SCALA)),
        Language::Dart => Some((tree_sitter_dart::LANGUAGE.into(), &DART)),
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
    /// Clauses naming a type's bases beside the ones every grammar shares,
    /// with the edge each makes (`inherits_from` or `implements`).
    pub(super) base_clauses: &'static [(&'static str, &'static str)],
}

/// Base clauses no grammar below names.
const NO_BASES: &[(&str, &str)] = &[];

const PYTHON: Grammar = Grammar {
    classes: &[("class_definition", "class")],
    functions: &["function_definition"],
    containers: &[],
    imports: &["import_statement", "import_from_statement"],
    calls: &["call"],
    function_values: &[],
    assignments_declare: true,
    base_clauses: NO_BASES,
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
    base_clauses: NO_BASES,
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
    base_clauses: NO_BASES,
};

const GO: Grammar = Grammar {
    classes: &[],
    functions: &["function_declaration"],
    containers: &[],
    imports: &["import_spec"],
    calls: &["call_expression"],
    function_values: &[],
    assignments_declare: false,
    base_clauses: NO_BASES,
};

const JAVA: Grammar = Grammar {
    classes: &[
        ("class_declaration", "class"),
        ("enum_declaration", "class"),
        ("record_declaration", "class"),
        ("interface_declaration", "interface"),
        ("annotation_type_declaration", "interface"),
    ],
    functions: &["method_declaration", "constructor_declaration"],
    containers: &[],
    imports: &["import_declaration"],
    calls: &["method_invocation", "object_creation_expression"],
    function_values: &[],
    assignments_declare: false,
    base_clauses: &[
        ("superclass", "inherits_from"),
        ("super_interfaces", "implements"),
        ("extends_interfaces", "inherits_from"),
    ],
};

const CSHARP: Grammar = Grammar {
    classes: &[
        ("class_declaration", "class"),
        ("struct_declaration", "class"),
        ("enum_declaration", "class"),
        ("record_declaration", "class"),
        ("interface_declaration", "interface"),
    ],
    functions: &[
        "method_declaration",
        "constructor_declaration",
        "local_function_statement",
    ],
    containers: &[],
    imports: &["using_directive"],
    calls: &["invocation_expression", "object_creation_expression"],
    function_values: &[],
    assignments_declare: false,
    base_clauses: &[("base_list", "inherits_from")],
};

/// C and C++: a prototype declares nothing (its definition does), so a
/// header's declaration and its source file's definition are one symbol.
const C: Grammar = Grammar {
    classes: &[
        ("struct_specifier", "class"),
        ("union_specifier", "class"),
        ("enum_specifier", "class"),
        ("class_specifier", "class"),
    ],
    functions: &["function_definition"],
    containers: &[],
    imports: &["preproc_include"],
    calls: &["call_expression", "new_expression"],
    function_values: &[],
    assignments_declare: false,
    base_clauses: &[("base_class_clause", "inherits_from")],
};

const PHP: Grammar = Grammar {
    classes: &[
        ("class_declaration", "class"),
        ("enum_declaration", "class"),
        ("trait_declaration", "class"),
        ("interface_declaration", "interface"),
    ],
    functions: &["function_definition", "method_declaration"],
    containers: &[],
    imports: &[
        "namespace_use_declaration",
        "require_expression",
        "require_once_expression",
        "include_expression",
        "include_once_expression",
    ],
    calls: &[
        "function_call_expression",
        "member_call_expression",
        "nullsafe_member_call_expression",
        "scoped_call_expression",
        "object_creation_expression",
    ],
    function_values: &[],
    assignments_declare: false,
    base_clauses: &[
        ("base_clause", "inherits_from"),
        ("class_interface_clause", "implements"),
    ],
};

/// Ruby's `require` is a call: the walk reads it as an import.
const RUBY: Grammar = Grammar {
    classes: &[("class", "class"), ("module", "class")],
    functions: &["method", "singleton_method"],
    containers: &[],
    imports: &[],
    calls: &["call"],
    function_values: &[],
    assignments_declare: false,
    base_clauses: &[("superclass", "inherits_from")],
};

const KOTLIN: Grammar = Grammar {
    classes: &[
        ("class_declaration", "class"),
        ("object_declaration", "class"),
    ],
    functions: &["function_declaration", "secondary_constructor"],
    containers: &[],
    imports: &["import"],
    calls: &["call_expression"],
    function_values: &[],
    assignments_declare: false,
    base_clauses: &[("delegation_specifiers", "inherits_from")],
};

const SWIFT: Grammar = Grammar {
    classes: &[
        ("class_declaration", "class"),
        ("protocol_declaration", "interface"),
    ],
    functions: &[
        "function_declaration",
        "protocol_function_declaration",
        "init_declaration",
    ],
    containers: &[],
    imports: &["import_declaration"],
    calls: &["call_expression"],
    function_values: &[],
    assignments_declare: false,
    base_clauses: &[("inheritance_specifier", "inherits_from")],
};

const SCALA: Grammar = Grammar {
    classes: &[
        ("class_definition", "class"),
        ("object_definition", "class"),
        ("enum_definition", "class"),
        ("trait_definition", "interface"),
    ],
    functions: &["function_definition", "function_declaration"],
    containers: &[],
    imports: &["import_declaration"],
    calls: &["call_expression", "instance_expression"],
    function_values: &[],
    assignments_declare: false,
    base_clauses: &[("extends_clause", "inherits_from")],
};

const DART: Grammar = Grammar {
    classes: &[
        ("class_declaration", "class"),
        ("class_definition", "class"),
        ("mixin_declaration", "class"),
        ("enum_declaration", "class"),
        ("extension_declaration", "class"),
    ],
    functions: &[
        "function_declaration",
        "method_declaration",
        "function_signature",
        "constructor_signature",
    ],
    containers: &[],
    imports: &["import_specification", "library_export", "part_directive"],
    calls: &["call_expression"],
    function_values: &[],
    assignments_declare: false,
    base_clauses: &[
        ("superclass", "inherits_from"),
        ("interfaces", "implements"),
        ("mixins", "implements"),
    ],
};
