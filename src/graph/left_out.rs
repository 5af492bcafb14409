//! Which files the graph leaves out although git tracks them: too large,
//! binary, minified (JavaScript, or a file read as text only: a bundled
//! stylesheet, a one-line JSON), or generated text (a lock file, a file
//! that says it is generated). Their symbols would be noise (a bundle's
//! `ab`, `Ev`, `wv` ranked as exact definitions) and their texts useless as
//! search snippets or lines that drown real ones; what they were built from
//! is indexed instead. Decides from a file's name and bytes only; the index
//! run counts them as skipped.

use super::facts::Language;

/// Files larger than this are left out (generated or vendored code, data).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Only the first bytes are looked at for a NUL, as git does to call a file binary.
pub const BINARY_PROBE_BYTES: usize = 8192;

/// A JavaScript file whose lines average more than this many bytes is minified
/// (hand-written code averages under 50; SonarQube's JavaScript analyser uses
/// 200 too, GitHub's linguist 110).
const MINIFIED_AVERAGE_LINE_BYTES: usize = 200;

/// Below this size a file is never called minified by its lines: a short
/// one-line module is still worth its symbols.
const MINIFIED_MIN_BYTES: usize = 2048;

/// A NUL in the first block makes a file binary, as git and ripgrep decide.
pub fn is_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_PROBE_BYTES)]).is_some()
}

/// Lock files: written by package managers, never by people, and full of
/// names and hashes every search for a package would find first.
const LOCK_FILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lock",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "composer.lock",
    "Gemfile.lock",
    "go.sum",
    "flake.lock",
    "Package.resolved",
    "pubspec.lock",
    "mix.lock",
];

/// How far into a file a generator's notice is looked for.
const GENERATED_PROBE_BYTES: usize = 1024;

/// Why a file read from disk is left out, if it is.
pub fn reason(path: &str, language: Language, bytes: &[u8]) -> Option<&'static str> {
    if is_binary(bytes) {
        return Some("binary");
    }
    let text_only = language == Language::Text;
    if (language == Language::JavaScript || text_only) && is_minified(path, bytes) {
        return Some("minified");
    }
    if text_only && is_generated(path, bytes) {
        return Some("generated");
    }
    None
}

/// How comments open, in the languages a generator's notice is written in.
const COMMENT_MARKS: &[&str] = &[
    "//", "/*", "*", "#", "--", ";", "<!--", "%", "\"\"\"", "'''", "rem ",
];

/// A lock file, or one whose opening says it was generated: a comment line
/// holding `@generated` (as Facebook's and Rust's tools mark theirs), or
/// "generated" and "do not edit" (Go's convention, followed by protoc,
/// bindgen and most others). A generator's own source, which prints the
/// notice, holds it in a string, not a comment, and stays.
fn is_generated(path: &str, bytes: &[u8]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if LOCK_FILES.contains(&name) {
        return true;
    }
    let opening = &bytes[..bytes.len().min(GENERATED_PROBE_BYTES)];
    String::from_utf8_lossy(opening).lines().any(|line| {
        let line = line.trim_start().to_ascii_lowercase();
        COMMENT_MARKS.iter().any(|mark| line.starts_with(mark))
            && (line.contains("@generated")
                || line.contains("generated") && line.contains("do not edit"))
    })
}

fn is_minified(path: &str, bytes: &[u8]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    if stem.ends_with(".min") || stem.ends_with("-min") {
        return true;
    }
    if bytes.len() < MINIFIED_MIN_BYTES {
        return false;
    }
    let lines = memchr::memchr_iter(b'\n', bytes).count() + usize::from(!bytes.ends_with(b"\n"));
    bytes.len() / lines.max(1) > MINIFIED_AVERAGE_LINE_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_lines(count: usize, width: usize) -> Vec<u8> {
        let line = format!("let x{} = 1;\n", "y".repeat(width.saturating_sub(13)));
        line.repeat(count).into_bytes()
    }

    #[test]
    fn a_bundle_on_long_lines_or_a_min_name_is_minified_and_hand_written_code_is_not() {
        let bundle = code_lines(20, 400);
        assert_eq!(
            reason(
                "static/assets/index-sgUBijiQ.js",
                Language::JavaScript,
                &bundle
            ),
            Some("minified")
        );
        assert_eq!(
            reason("vendor/jquery.min.js", Language::JavaScript, b"var a=1;\n"),
            Some("minified"),
            "named so, whatever its size"
        );
        assert_eq!(
            reason("vendor/lodash-min.mjs", Language::JavaScript, b"var a=1;\n"),
            Some("minified")
        );
        let hand_written = code_lines(2000, 40);
        assert_eq!(
            reason("src/app.js", Language::JavaScript, &hand_written),
            None
        );
        assert_eq!(
            reason("src/config.js", Language::JavaScript, &code_lines(1, 600)),
            None,
            "a short one-line module keeps its symbols"
        );
        assert_eq!(
            reason("src/admin.js", Language::JavaScript, &code_lines(3, 900)),
            Some("minified"),
            "over 2 KiB on lines averaging 900 bytes"
        );
        assert_eq!(
            reason("src/data.ts", Language::TypeScript, &bundle),
            None,
            "only JavaScript is shipped minified"
        );
        assert_eq!(
            reason("notes/admin.min.md", Language::Markdown, b"# Admin\n"),
            None
        );
        assert_eq!(
            reason("assets/site.css", Language::Text, &bundle),
            Some("minified"),
            "a file read as text only is minified by its lines too"
        );
        assert_eq!(
            reason("config/app.yaml", Language::Text, &code_lines(200, 40)),
            None
        );
    }

    #[test]
    fn a_lock_file_or_a_generators_notice_makes_text_generated() {
        let text = |s: &str| s.as_bytes().to_vec();
        assert_eq!(
            reason("web/package-lock.json", Language::Text, b"{}\n"),
            Some("generated")
        );
        assert_eq!(
            reason("go.sum", Language::Text, b"a v1 h1:x\n"),
            Some("generated")
        );
        let notice = text("// Code generated by protoc-gen-go. DO NOT EDIT.\npackage api\n");
        assert_eq!(
            reason("api/api.pb.txt", Language::Text, &notice),
            Some("generated")
        );
        assert_eq!(
            reason(
                "schema.sql",
                Language::Text,
                &text("-- @generated by sqlc\n")
            ),
            Some("generated")
        );
        let block = text("/*\n * Generated by headergen - DO NOT EDIT\n */\n#define REG 1\n");
        assert_eq!(reason("regs.h", Language::Text, &block), Some("generated"));
        // a notice past the opening, half of one, or one a generator prints, is not enough
        let late = format!("{}# generated; do not edit\n", "x = 1\n".repeat(300));
        assert_eq!(reason("late.cfg", Language::Text, late.as_bytes()), None);
        let generator = text("BEGIN {\n  print \"// Generated file - do not edit\"\n}\n");
        assert_eq!(
            reason("tools/gen-caps.awk", Language::Text, &generator),
            None
        );
        assert_eq!(
            reason(
                "README.txt",
                Language::Text,
                &text("Please do not edit by hand.\n")
            ),
            None
        );
        // parsed code keeps its symbols: the graph resolves calls through it
        assert_eq!(reason("api/api.pb.go", Language::Go, &notice), None);
    }

    #[test]
    fn a_nul_in_the_first_8_kib_makes_a_file_binary() {
        let mut bytes = code_lines(10, 40);
        bytes.insert(5, 0);
        assert_eq!(
            reason("src/app.py", Language::Python, &bytes),
            Some("binary")
        );
        let mut late = code_lines(400, 40);
        late.push(0);
        assert_eq!(reason("src/app.py", Language::Python, &late), None);
    }
}
