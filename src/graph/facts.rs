//! What the extractor finds in one file: its nodes, its in-file edges, its
//! references still to resolve and the local names its imports bind, plus the
//! languages it reads. Plain data shared by the extractor, the bindings and
//! the indexer; it depends on none of them.

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
    /// The module an import binding says `name` lives in (for a call through
    /// a typed receiver: the module the receiver's type lives in).
    pub module: Option<String>,
    /// A call through an object whose type the code around it gives (`c` after
    /// `c = Cart()`, `self`, a typed parameter or field): that type's name;
    /// empty for an object whose type it does not give.
    pub receiver: Option<String>,
}

impl Reference {
    pub fn plain(source: String, kind: &'static str, name: String) -> Reference {
        Reference {
            source,
            kind,
            name,
            qualifier: None,
            module: None,
            receiver: None,
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
    Java,
    CSharp,
    C,
    Cpp,
    Php,
    Ruby,
    Kotlin,
    Swift,
    Scala,
    Dart,
    Markdown,
    /// Any other text file: searched as text, with no symbols; its
    /// language facet comes from `text_languages`.
    Text,
}

impl Language {
    /// The languages the graph parses (every one but `Text`).
    pub const ALL: [Language; 17] = [
        Language::Python,
        Language::Rust,
        Language::TypeScript,
        Language::Tsx,
        Language::JavaScript,
        Language::Go,
        Language::Java,
        Language::CSharp,
        Language::C,
        Language::Cpp,
        Language::Php,
        Language::Ruby,
        Language::Kotlin,
        Language::Swift,
        Language::Scala,
        Language::Dart,
        Language::Markdown,
    ];

    pub fn of(path: &str) -> Option<Language> {
        match path.rsplit_once('.').map(|(_, ext)| ext) {
            Some("py") => Some(Language::Python),
            Some("rs") => Some(Language::Rust),
            Some("ts") | Some("mts") | Some("cts") => Some(Language::TypeScript),
            Some("tsx") => Some(Language::Tsx),
            // a Vue or Svelte component is its script blocks (see `extract`)
            Some("vue" | "svelte") => Some(Language::TypeScript),
            Some("js") | Some("jsx") | Some("mjs") | Some("cjs") => Some(Language::JavaScript),
            Some("go") => Some(Language::Go),
            Some("java") => Some(Language::Java),
            Some("cs") => Some(Language::CSharp),
            // a `.h` header is C unless its text says C++ (see `extract`)
            Some("c" | "h") => Some(Language::C),
            Some("cc" | "cpp" | "cxx" | "c++" | "hh" | "hpp" | "hxx" | "h++" | "ipp") => {
                Some(Language::Cpp)
            }
            Some("php") => Some(Language::Php),
            Some("rb" | "rake" | "gemspec") => Some(Language::Ruby),
            Some("kt" | "kts") => Some(Language::Kotlin),
            Some("swift") => Some(Language::Swift),
            Some("scala" | "sc") => Some(Language::Scala),
            Some("dart") => Some(Language::Dart),
            Some("md") | Some("markdown") => Some(Language::Markdown),
            _ => None,
        }
    }

    /// True when a method body names its type's fields without `this`
    /// (a bare `cart` may be the field `cart`).
    pub fn members_are_implicit(self) -> bool {
        matches!(
            self,
            Language::Java
                | Language::CSharp
                | Language::Cpp
                | Language::Kotlin
                | Language::Swift
                | Language::Scala
                | Language::Dart
        )
    }

    /// The language the graph reads `path` as: one it parses, or else text.
    pub fn of_any(path: &str) -> Language {
        Language::of(path).unwrap_or(Language::Text)
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::JavaScript => "javascript",
            Language::Go => "go",
            Language::Java => "java",
            Language::CSharp => "c#",
            Language::C => "c",
            Language::Cpp => "c++",
            Language::Php => "php",
            Language::Ruby => "ruby",
            Language::Kotlin => "kotlin",
            Language::Swift => "swift",
            Language::Scala => "scala",
            Language::Dart => "dart",
            Language::Markdown => "markdown",
            Language::Text => "text",
        }
    }
}

pub fn file_uid(path: &str, language: Language) -> String {
    match language {
        Language::Markdown => format!("doc:file:{path}"),
        _ => format!("code:file:{path}"),
    }
}

/// `local` stands for `symbol` of `module` (a module path as the language writes
/// it: dotted for Python and Rust, a specifier for scripts, `go:<path>` for Go),
/// or for the module itself when `symbol` is None.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub local: String,
    pub module: String,
    pub symbol: Option<String>,
}
