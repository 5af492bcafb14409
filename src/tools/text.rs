//! Names people read (titles, labels, epics, actor ids) hold no control
//! characters and no invisible formatting characters (zero-width spaces,
//! bidirectional overrides), and must show something. Prose (Markdown
//! descriptions) is kept as written: real task files quote control
//! characters in their text. A refusal names the field and the character, so
//! the caller can find it.

use super::ToolError;
use serde_json::json;

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

#[cfg(test)]
mod tests {
    use super::*;

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
