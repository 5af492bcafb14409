//! Names people read (titles, labels, epics, actor ids) hold no control
//! characters and no invisible formatting characters (zero-width spaces,
//! bidirectional overrides), and must show something. Prose (Markdown
//! descriptions) is kept as written: real task files quote control
//! characters in their text. A refusal names the field and the character, so
//! the caller can find it.
//!
//! Each rule is also spelled as a regular expression for the published
//! schemas (`SCHEMA_RULES`), so a generated client refuses what the hub
//! refuses; a property test keeps each pair in step.

use super::ToolError;
use serde_json::json;

/// What no name may hold: control characters (Unicode Cc) and the invisible
/// formatting characters of `is_invisible_format`, as a character-class body.
const NOT_IN_NAMES: &str =
    r"\x00-\x1f\x7f-\x9f\xad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff";
/// White space as `str::trim` removes it (Unicode White_Space), as a
/// character-class body: wider than ECMA-262's `\s`, which leaves U+0085
/// (next line) out, so `\S` would let through what the hub finds blank.
const WHITE_SPACE: &str =
    r"\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000";

/// A rule as a published schema states it: the `format` marker a field's
/// schema carries in the code, replaced by `pattern` when published
/// (tools::schema), with the lengths it implies; on a list, its items'.
pub struct SchemaRule {
    pub marker: &'static str,
    pub pattern: fn() -> String,
    pub lengths: Option<(usize, usize)>,
    /// The rule in a few words, for definitions a model reads instead of
    /// the pattern (mcp::lean).
    /// None where the field's type says enough.
    pub phrase: Option<&'static str>,
}

pub const SCHEMA_RULES: [SchemaRule; 7] = [
    // a uid, a name or a query to look up: anything but white space alone
    SchemaRule {
        marker: "cos-not-blank",
        pattern: not_blank_pattern,
        lengths: None,
        phrase: None,
    },
    SchemaRule {
        marker: "cos-name",
        pattern: name_pattern,
        lengths: None,
        phrase: None,
    },
    SchemaRule {
        marker: "cos-visible-name",
        pattern: visible_name_pattern,
        lengths: None,
        phrase: None,
    },
    SchemaRule {
        marker: "cos-prose",
        pattern: prose_pattern,
        lengths: None,
        phrase: None,
    },
    // labels and other short lists of names (board::validate::check_text_list)
    SchemaRule {
        marker: "cos-name-list",
        pattern: visible_name_pattern,
        lengths: Some((1, MAX_LIST_ITEM_CHARS)),
        phrase: None,
    },
    // a document's path in its mount; the rest of the path rules (bytes,
    // dot segments, percent-encoding, excluded folders) only the mount checks
    SchemaRule {
        marker: "cos-markdown-path",
        pattern: markdown_path_pattern,
        lengths: Some((1, 1024)),
        phrase: Some("A relative path to a .md or .markdown file."),
    },
    // a folder in a mount, to list under: empty (or slashes) for the whole mount
    SchemaRule {
        marker: "cos-folder-prefix",
        pattern: folder_prefix_pattern,
        lengths: None,
        phrase: Some("A relative folder; empty for the whole mount."),
    },
];

/// The rule a published pattern spells, if it spells one.
pub fn rule_spelled_by(pattern: &str) -> Option<&'static SchemaRule> {
    SCHEMA_RULES.iter().find(|rule| (rule.pattern)() == pattern)
}

/// The path rules a Markdown path and a folder prefix share, as ECMA-262
/// lookaheads (the regex crate has none): no drive letter, no
/// percent-encoded dot, slash, backslash or NUL ...
const NO_DRIVE_OR_ENCODING: &str = r"(?![A-Za-z]:)(?!.*%(?:2[eEfF]|5[cC]|00))";
/// ... and no `.` or `..` folder name.
const NO_DOT_FOLDER: &str = r"(?!(?:.*/)?\.\.?(?:/|$))";
/// A character a path may hold anywhere: no control character or backslash.
const PATH_CHAR: &str = r"[^\\\x00-\x1f\x7f-\x9f]";
/// A path's first character: a `PATH_CHAR` that is not a slash.
const PATH_FIRST_CHAR: &str = r"[^/\\\x00-\x1f\x7f-\x9f]";

/// A relative path naming a Markdown file (`.md` or `.markdown`, any case):
/// the shared path rules, no empty folder name, a file name that is more
/// than its extension.
fn markdown_path_pattern() -> String {
    let markdown = "[mM][dD]|[mM][aA][rR][kK][dD][oO][wW][nN]";
    format!(
        r"^{NO_DRIVE_OR_ENCODING}(?!.*//){NO_DOT_FOLDER}(?!(?:.*/)?\.(?:{markdown})$){PATH_FIRST_CHAR}{PATH_CHAR}*\.(?:{markdown})$"
    )
}

/// A folder relative to a mount, trailing slashes allowed, or nothing (the
/// whole mount): the shared path rules, no empty folder name before another.
fn folder_prefix_pattern() -> String {
    format!(
        r"^(?:/*|{NO_DRIVE_OR_ENCODING}(?!.*//+[^/]){NO_DOT_FOLDER}{PATH_FIRST_CHAR}{PATH_CHAR}*)$"
    )
}

/// How long one entry of a list of names may be.
pub const MAX_LIST_ITEM_CHARS: usize = 500;

/// `is_blank` as a pattern: one character that is not white space.
fn not_blank_pattern() -> String {
    format!("[^{WHITE_SPACE}]")
}

/// `check_name` as a pattern.
fn name_pattern() -> String {
    format!("^[^{NOT_IN_NAMES}]*$")
}

/// What does not show, as a character-class body: what no name may hold
/// and white space.
fn not_visible() -> String {
    format!("{NOT_IN_NAMES}{WHITE_SPACE}")
}

/// `check_visible_name` as a pattern.
fn visible_name_pattern() -> String {
    let not_visible = not_visible();
    format!("^[^{NOT_IN_NAMES}]*[^{not_visible}][^{NOT_IN_NAMES}]*$")
}

/// `check_prose` as a pattern: names on lines broken by LF or CRLF.
fn prose_pattern() -> String {
    let line_char = format!("(?:[^{NOT_IN_NAMES}]|\\r?\\n)");
    let not_visible = not_visible();
    format!("^{line_char}*[^{not_visible}]{line_char}*$")
}

/// Whether `text` is white space alone (or nothing), as `str::trim` sees
/// white space: what a uid, a name or a query to look up must not be.
pub fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// Characters that change how text is shown without showing themselves:
/// zero-width spaces and joiners, the word joiner, the byte-order mark, the
/// soft hyphen, and the bidirectional embeddings, overrides and isolates
/// that can make text read differently from what it holds.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

fn describe(c: char) -> String {
    let name = match c {
        '\0' => " (NUL)",
        '\u{1B}' => " (escape)",
        '\n' => " (line break)",
        '\r' => " (carriage return)",
        '\t' => " (tab)",
        '\u{200B}' => " (zero-width space)",
        '\u{FEFF}' => " (byte-order mark)",
        '\u{202E}' => " (right-to-left override)",
        _ => "",
    };
    format!("U+{:04X}{name}", c as u32)
}

fn refuse(field: &str, what: &str, c: char, at: usize) -> ToolError {
    let character = describe(c);
    ToolError::invalid(
        field,
        format!(
            "text without {what}; found {character} at character {}",
            at + 1
        ),
    )
    .with_details(
        json!({"field": field, "character": format!("U+{:04X}", c as u32), "position": at + 1}),
    )
}

/// A one-line name: no control or invisible formatting characters.
pub fn check_name(field: &str, text: &str) -> Result<(), ToolError> {
    for (at, c) in text.chars().enumerate() {
        if c.is_control() {
            return Err(refuse(field, "control characters", c, at));
        }
        if is_invisible_format(c) {
            return Err(refuse(field, "invisible formatting characters", c, at));
        }
    }
    Ok(())
}

/// A name that also shows at least one character.
pub fn check_visible_name(field: &str, text: &str) -> Result<(), ToolError> {
    check_name(field, text)?;
    if text
        .chars()
        .all(|c| c.is_whitespace() || is_invisible_format(c))
    {
        return Err(ToolError::invalid(
            field,
            "text with at least one visible character",
        ));
    }
    Ok(())
}

/// A few paragraphs (a reason, a summary): names on lines, at most
/// `max_chars`, showing something.
pub fn check_prose(field: &str, text: &str, max_chars: usize) -> Result<(), ToolError> {
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        // a carriage return is part of a line break only before a line feed
        let line = match lines.peek() {
            Some(_) => line.strip_suffix('\r').unwrap_or(line),
            None => line,
        };
        check_name(field, line)?;
    }
    if text.chars().count() > max_chars {
        return Err(ToolError::invalid(
            field,
            format!("at most {max_chars} characters"),
        ));
    }
    if is_blank(text) {
        return Err(ToolError::invalid(
            field,
            "text with at least one visible character",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The published pattern of rule `marker`, compiled once for every case
    /// (compiling it again for each was most of the property's time).
    fn rule(marker: &str) -> regex::Regex {
        static COMPILED: std::sync::Mutex<Vec<(String, regex::Regex)>> =
            std::sync::Mutex::new(Vec::new());
        let mut compiled = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, known)) = compiled.iter().find(|(name, _)| name == marker) {
            return known.clone();
        }
        let rule = SCHEMA_RULES
            .iter()
            .find(|rule| rule.marker == marker)
            .expect("a rule of that name");
        let pattern = regex::Regex::new(&(rule.pattern)()).expect("the pattern compiles");
        compiled.push((marker.to_string(), pattern.clone()));
        pattern
    }

    /// Text drawn from the characters the rules are about, among ordinary ones.
    fn tricky_text() -> impl Strategy<Value = String> {
        let tricky = prop::sample::select(vec![
            '\0', '\t', '\n', '\u{B}', '\u{C}', '\r', '\u{1B}', ' ', '\u{7F}', '\u{85}', '\u{9F}',
            '\u{A0}', '\u{AD}', '\u{1680}', '\u{2000}', '\u{200A}', '\u{200B}', '\u{200F}',
            '\u{2028}', '\u{2029}', '\u{202E}', '\u{202F}', '\u{205F}', '\u{2060}', '\u{2066}',
            '\u{3000}', '\u{FEFF}', 'a', 'Z', '7', '-', 'é', '中', '🚀',
        ]);
        prop::collection::vec(prop_oneof![tricky, any::<char>()], 0..12)
            .prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        #[test]
        fn each_published_pattern_accepts_exactly_what_its_check_accepts(text in tricky_text()) {
            // what a uid, a name or a query to look up is refused as: blank once trimmed
            prop_assert_eq!(rule("cos-not-blank").is_match(&text), !is_blank(&text));
            prop_assert_eq!(rule("cos-name").is_match(&text), check_name("f", &text).is_ok());
            prop_assert_eq!(
                rule("cos-visible-name").is_match(&text),
                check_visible_name("f", &text).is_ok()
            );
            prop_assert_eq!(
                rule("cos-prose").is_match(&text),
                check_prose("f", &text, usize::MAX).is_ok(),
                "{:?}", text
            );
        }
    }

    fn refusal(result: Result<(), ToolError>) -> String {
        result.unwrap_err().to_body("x").message
    }

    #[test]
    fn names_refuse_control_and_invisible_characters_naming_them() {
        assert!(check_visible_name("title", "Fix the board — ünïcödé 🚀").is_ok());
        let message = refusal(check_visible_name("title", "red\u{1B}[31m"));
        assert!(
            message.contains("title") && message.contains("U+001B (escape)"),
            "{message}"
        );
        assert!(message.contains("character 4"), "{message}");
        assert!(refusal(check_name("labels", "a\0b")).contains("U+0000 (NUL)"));
        assert!(refusal(check_name("labels", "tab\there")).contains("U+0009"));
        assert!(refusal(check_name("title", "evil\u{202E}txt")).contains("right-to-left override"));
        assert!(refusal(check_visible_name("title", "\u{200B}")).contains("zero-width space"));
        let blank = refusal(check_visible_name("title", "   "));
        assert!(blank.contains("visible character"), "{blank}");
    }
}
