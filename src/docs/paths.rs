//! Document paths: what a path argument may be, checked as text before the
//! file system is touched. Resolution itself happens beneath the mount's
//! directory handle (`docs::disk`, cap-std: openat2 `RESOLVE_BENEATH` where
//! the kernel has it), so a symlink leading out is refused by the kernel, not
//! by comparing strings.

use serde_json::json;
use std::path::{Path, PathBuf};

use super::mounts::Mount;
use crate::envelope::{Category, Code};
use crate::tools::ToolError;

const MAX_PATH_BYTES: usize = 1024;
const MAX_COMPONENT_BYTES: usize = 255;

/// A document's path inside its mount: relative, `/`-separated, no `.` or
/// `..`, ending in `.md` or `.markdown`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DocPath(String);

/// Ordered and hashed as its text, so maps keyed by it are searched by `&str`.
impl std::borrow::Borrow<str> for DocPath {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl DocPath {
    /// A path the hub stored itself after checking it.
    pub(super) fn trusted(path: &str) -> DocPath {
        DocPath(path.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn as_path(&self) -> &Path {
        Path::new(&self.0)
    }

    /// The folder holding the document, `""` at the mount's top.
    pub fn parent(&self) -> &str {
        self.0.rsplit_once('/').map_or("", |(parent, _)| parent)
    }

    pub fn file_name(&self) -> &str {
        self.0.rsplit_once('/').map_or(&self.0, |(_, name)| name)
    }
}

/// `E_PATH` naming the field and why.
pub fn refused(field: &str, path: &str, why: &str) -> ToolError {
    ToolError::fail(
        Category::Validation,
        Code::E_PATH,
        format!("{field}: {path:?} {why}; paths are relative to the mount, like guides/setup.md"),
    )
    .with_details(json!({"field": field, "path": path}))
}

/// Why a path no schema can refuse was refused (`details.rule`): its length
/// in bytes, a folder its mount keeps out, a symbolic link on disk.
#[derive(Debug, Clone, Copy)]
pub enum BeyondSchema {
    Bytes,
    Excluded,
    Symlink,
}

/// `refused`, saying which rule beyond the spec's pattern it met.
pub fn refused_beyond_schema(field: &str, path: &str, why: &str, rule: BeyondSchema) -> ToolError {
    let rule = match rule {
        BeyondSchema::Bytes => "bytes",
        BeyondSchema::Excluded => "excluded",
        BeyondSchema::Symlink => "symlink",
    };
    refused(field, path, why).with_details(json!({"field": field, "path": path, "rule": rule}))
}

/// Whether `name` is a Markdown file name.
pub fn is_markdown(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    (lower.ends_with(".md") && lower.len() > 3) || (lower.ends_with(".markdown") && lower.len() > 9)
}

/// Checks a document path given as `field`.
pub fn document(field: &str, raw: &str, mount: &Mount) -> Result<DocPath, ToolError> {
    let path = relative(field, raw, mount)?;
    if !is_markdown(path.file_name()) {
        return Err(refused(
            field,
            raw,
            "is not a Markdown document (expected a name ending in .md or .markdown)",
        ));
    }
    Ok(path)
}

/// Checks a folder prefix given as `field` (`""` is the mount's top).
pub fn prefix(field: &str, raw: &str, mount: &Mount) -> Result<String, ToolError> {
    let trimmed = raw.trim_end_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    Ok(relative(field, trimmed, mount)?.0)
}

fn relative(field: &str, raw: &str, mount: &Mount) -> Result<DocPath, ToolError> {
    if raw.is_empty() {
        return Err(refused(field, raw, "is empty"));
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(refused_beyond_schema(
            field,
            raw,
            "is longer than 1024 bytes",
            BeyondSchema::Bytes,
        ));
    }
    if raw.chars().any(char::is_control) {
        return Err(refused(field, raw, "holds a control character"));
    }
    if raw.contains('\\') {
        return Err(refused(
            field,
            raw,
            "holds a backslash (use / between folders)",
        ));
    }
    if raw.starts_with('/') {
        return Err(refused(field, raw, "is absolute"));
    }
    let bytes = raw.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(refused(field, raw, "starts with a drive letter"));
    }
    if encodes_a_separator_or_dot(raw) {
        return Err(refused(
            field,
            raw,
            "holds a percent-encoded dot, slash, backslash or NUL",
        ));
    }
    for component in raw.split('/') {
        match component {
            "" => return Err(refused(field, raw, "holds an empty folder name (//)")),
            "." | ".." => {
                return Err(refused(
                    field,
                    raw,
                    "holds . or .. (it must stay inside the mount)",
                ));
            }
            _ if component.len() > MAX_COMPONENT_BYTES => {
                return Err(refused_beyond_schema(
                    field,
                    raw,
                    "has a name longer than 255 bytes",
                    BeyondSchema::Bytes,
                ));
            }
            _ => {}
        }
    }
    let as_path = PathBuf::from(raw);
    if let Some(excluded) = mount
        .excluded
        .iter()
        .find(|excluded| as_path.starts_with(excluded))
    {
        return Err(refused_beyond_schema(
            field,
            raw,
            &format!(
                "is inside {}, which is never a document folder",
                excluded.display()
            ),
            BeyondSchema::Excluded,
        ));
    }
    Ok(DocPath(raw.to_string()))
}

/// `%2e`, `%2f`, `%5c` or `%00` in any case: a path a client decoded once too
/// few times, or meant to be decoded by someone else.
fn encodes_a_separator_or_dot(raw: &str) -> bool {
    let lower = raw.to_ascii_lowercase();
    ["%2e", "%2f", "%5c", "%00"]
        .iter()
        .any(|encoded| lower.contains(encoded))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mount() -> Mount {
        Mount {
            key: "handbook".into(),
            name: "Handbook".into(),
            root: PathBuf::from("/srv/handbook"),
            agents: super::super::mounts::Access::ReadWrite,
            people: super::super::mounts::Access::ReadWrite,
            excluded: vec![PathBuf::from(".git"), PathBuf::from(".cos")],
        }
    }

    /// Ways out of a mount, and paths that name no Markdown file.
    const ESCAPE_FORMS: [&str; 18] = [
        "",
        "../secret.md",
        "a/../../b.md",
        "./a.md",
        "/etc/passwd.md",
        "a\\..\\b.md",
        "a\0.md",
        "C:/x.md",
        "c:x.md",
        "%2e%2e/x.md",
        "%2E%2E%2Fx.md",
        "a%2fb.md",
        "a%5c..%5cb.md",
        "a%00.md",
        "a//b.md",
        "a\u{1b}[31m.md",
        "notes.txt",
        ".md",
    ];

    #[test]
    fn every_escape_form_is_refused() {
        let mount = mount();
        let inside_kept_out = [".git/config.md", ".git/hooks/x.md", ".cos/cos.db.md"];
        for path in ESCAPE_FORMS.into_iter().chain(inside_kept_out) {
            assert!(document("path", path, &mount).is_err(), "{path:?} passed");
        }
    }

    proptest::proptest! {
        #[test]
        fn an_accepted_path_never_leaves_the_mount(raw in "(\\PC|/|\\.|\\\\|%|:){0,40}(\\.md)?") {
            if let Ok(path) = document("path", &raw, &mount()) {
                let text = path.as_str();
                proptest::prop_assert!(!text.starts_with('/'));
                proptest::prop_assert!(!text.contains('\\'));
                proptest::prop_assert!(text.split('/').all(|c| !c.is_empty() && c != "." && c != ".."));
                proptest::prop_assert!(!text.chars().any(char::is_control));
                proptest::prop_assert!(!text.starts_with(".git/") && !text.starts_with(".cos/"));
                proptest::prop_assert!(is_markdown(path.file_name()));
            }
        }
    }

    /// The spec's pattern for document paths (tools::text), as clients see it.
    fn published_pattern() -> fancy_regex::Regex {
        published("cos-markdown-path")
    }

    // compiled once for every generated case (compiling was most of their time)
    static PUBLISHED_PATH: std::sync::LazyLock<fancy_regex::Regex> =
        std::sync::LazyLock::new(published_pattern);
    static PUBLISHED_PREFIX: std::sync::LazyLock<fancy_regex::Regex> =
        std::sync::LazyLock::new(|| published("cos-folder-prefix"));

    fn published(marker: &str) -> fancy_regex::Regex {
        let rule = crate::tools::text::SCHEMA_RULES
            .iter()
            .find(|rule| rule.marker == marker)
            .expect("the rule is published");
        fancy_regex::Regex::new(&(rule.pattern)()).expect("an ECMA-262-style pattern")
    }

    /// Whether a refusal is one no schema states (`details.rule`).
    fn beyond_the_schema(refusal: Result<String, ToolError>) -> bool {
        match refusal {
            Ok(_) => true,
            Err(error) => {
                error.to_body("x").details.as_ref().is_some_and(|details| {
                    details["rule"] == "bytes" || details["rule"] == "excluded"
                })
            }
        }
    }

    #[test]
    fn the_published_prefix_pattern_takes_folders_and_refuses_escapes() {
        let pattern = published("cos-folder-prefix");
        for prefix in [
            "",
            "/",
            "//",
            "guides",
            "guides/",
            "a/b//",
            "Ünïcode/ノート",
            "100%",
            "..md",
        ] {
            assert!(
                pattern.is_match(prefix).expect("matches"),
                "{prefix:?} was refused"
            );
            assert!(
                beyond_the_schema(super::prefix("prefix", prefix, &mount())),
                "{prefix:?}"
            );
        }
        for prefix in [
            "/a", "..", "a/../b", "./", "a//b", "C:/x", "%2e%2e", "a\\b", "a\u{82}", "a\u{1b}",
        ] {
            assert!(
                !pattern.is_match(prefix).expect("matches"),
                "{prefix:?} passed the pattern"
            );
        }
    }

    /// What the hub refuses of a path the spec allows is only what no schema
    /// can state, and says so in `details.rule`.
    fn refused_only_beyond_the_schema(raw: &str) -> bool {
        match document("path", raw, &mount()) {
            Ok(_) => true,
            Err(error) => {
                let body = error.to_body("x");
                body.details.as_ref().is_some_and(|details| {
                    details["rule"] == "bytes" || details["rule"] == "excluded"
                })
            }
        }
    }

    #[test]
    fn the_published_pattern_refuses_every_escape_form_and_takes_ordinary_paths() {
        let pattern = published_pattern();
        for path in ESCAPE_FORMS
            .into_iter()
            .chain(["x/.md", "a/./b.md", "a/.."])
        {
            assert!(
                !pattern.is_match(path).expect("matches"),
                "{path:?} passed the pattern"
            );
        }
        for path in [
            "a.md",
            "guides/setup.md",
            "Ünïcode/ノート.markdown",
            "100%.md",
            "x.MD",
            "..md",
        ] {
            assert!(
                pattern.is_match(path).expect("matches"),
                "{path:?} was refused"
            );
            assert!(refused_only_beyond_the_schema(path), "{path:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn a_prefix_the_spec_allows_is_refused_only_for_what_no_schema_states(
            raw in "(\\PC|\\p{Cc}|/|\\.|\\\\|%|:|2e|5c|00){0,30}"
        ) {
            if PUBLISHED_PREFIX.is_match(&raw).unwrap_or(false) {
                proptest::prop_assert!(beyond_the_schema(super::prefix("prefix", &raw, &mount())), "{:?}", raw);
            }
        }

        #[test]
        fn a_path_the_spec_allows_is_refused_only_for_what_no_schema_states(
            raw in "(\\PC|/|\\.|\\\\|%|:|2e|5c|00){0,40}(\\.md|\\.MarkDown)?"
        ) {
            if PUBLISHED_PATH.is_match(&raw).unwrap_or(false) {
                proptest::prop_assert!(refused_only_beyond_the_schema(&raw), "{:?}", raw);
            }
        }
    }

    #[test]
    fn ordinary_paths_pass_unchanged() {
        let mount = mount();
        for path in [
            "a.md",
            "guides/setup.md",
            "Ünïcode/ノート.markdown",
            "100%.md",
            ".github/PULL_REQUEST_TEMPLATE.md",
            "handbook-evil.md",
            "x.MD",
        ] {
            let checked = document("path", path, &mount);
            assert_eq!(
                checked.as_ref().map(DocPath::as_str).ok(),
                Some(path),
                "{path:?}"
            );
        }
    }
}
