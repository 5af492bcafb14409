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
    /// The module an import binding says `name` lives in.
    pub module: Option<String>,
}

impl Reference {
    pub fn plain(source: String, kind: &'static str, name: String) -> Reference {
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
    /// Any other text file: searched as text, with no symbols; its
    /// language facet comes from `text_languages`.
    Text,
}

impl Language {
    /// The languages the graph parses (every one but `Text`).
    pub const ALL: [Language; 7] = [
        Language::Python,
        Language::Rust,
        Language::TypeScript,
        Language::Tsx,
        Language::JavaScript,
        Language::Go,
        Language::Markdown,
    ];

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
