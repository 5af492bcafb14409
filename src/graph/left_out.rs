//! Which files the graph leaves out although git tracks them: too large,
//! binary, or minified JavaScript. Their symbols would be noise (a bundle's
//! `ab`, `Ev`, `wv` ranked as exact definitions) and their one-line texts
//! useless as search snippets; what they were built from is indexed instead.
//! Decides from a file's name and bytes only; the index run counts them as
//! skipped.

use super::facts::Language;

/// Files larger than this are left out (generated or vendored code, data).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Only the first bytes are looked at for a NUL, as git does to call a file binary.
const BINARY_PROBE_BYTES: usize = 8192;

/// A JavaScript file whose lines average more than this many bytes is minified
/// (hand-written code averages under 50; SonarQube's JavaScript analyser uses
/// 200 too, GitHub's linguist 110).
const MINIFIED_AVERAGE_LINE_BYTES: usize = 200;

/// Below this size a file is never called minified by its lines: a short
/// one-line module is still worth its symbols.
const MINIFIED_MIN_BYTES: usize = 2048;

/// Why a file read from disk is left out, if it is.
pub fn reason(path: &str, language: Language, bytes: &[u8]) -> Option<&'static str> {
    if bytes.iter().take(BINARY_PROBE_BYTES).any(|byte| *byte == 0) {
        return Some("binary");
    }
    if language == Language::JavaScript && is_minified(path, bytes) {
        return Some("minified");
    }
    None
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
