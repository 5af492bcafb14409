//! How names are written in code across languages: a type as written
//! reduced to its name, member access spelt one way (`a.b`), and the tests
//! the walk and the receiver typing share.

use std::collections::HashMap;

/// Variables (or fields) by name, each with its type's name as written
/// (`Cart`, `model.Cart`).
pub(super) type Types = HashMap<String, String>;

/// Marks a receiver the call did not write: a bare call in a method, made on
/// the method's own type when that type (or a base) has the method, and
/// otherwise a call to a function of that name.
pub const IMPLICIT_SELF: &str = "@";

/// Marks a receiver that is the type itself (`Cart.create()`): the type's
/// method runs, never an override in a subtype.
pub const TYPE_ITSELF: &str = "^";

/// A receiver without its mark, if it has one (`@Cart`, `^Cart` → `Cart`).
pub fn unmarked(receiver: &str) -> &str {
    receiver
        .strip_prefix(IMPLICIT_SELF)
        .or_else(|| receiver.strip_prefix(TYPE_ITSELF))
        .unwrap_or(receiver)
}

/// Words that never name a type: inferred declarations.
const IMPLICIT: &[&str] = &[
    "var", "auto", "let", "val", "dynamic", "final", "const", "_",
];

/// A type as written, reduced to its name: `&mut Cart<T>` → `Cart`,
/// `model.Cart` stays qualified, `Optional[Cart]` → `Cart`, `var` → none.
pub(super) fn type_name(written: &str) -> Option<String> {
    let mut text = normalized(written.trim());
    if let Some(inner) = text
        .strip_prefix("Optional[")
        .and_then(|rest| rest.strip_suffix(']'))
    {
        text = inner.to_string();
    }
    if let Some(inner) = text.strip_prefix(':') {
        text = inner.trim().to_string();
    }
    let mut name = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '<' | '[' | '(' => depth += 1,
            '>' | ']' | ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => name.push(c),
            _ => {}
        }
    }
    let name = name
        .trim_start_matches(['&', '*', '?', '^', '@'])
        .trim_start_matches("mut ")
        .trim_start_matches("const ")
        .trim_start_matches("struct ")
        .trim_end_matches(['?', '!', '*', '&'])
        .trim()
        .trim_matches('.');
    let valid = !name.is_empty() && !IMPLICIT.contains(&name) && name.split('.').all(is_word);
    valid.then(|| name.to_string())
}

/// `a->b`, `a::b`, `a\b` and `a?.b` written as `a.b`.
pub(super) fn normalized(text: &str) -> String {
    text.replace("->", ".")
        .replace("::", ".")
        .replace("?.", ".")
        .replace('\\', ".")
}

pub(super) fn is_word(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

pub(super) fn starts_upper(text: &str) -> bool {
    text.trim_start_matches('$')
        .chars()
        .next()
        .is_some_and(char::is_uppercase)
}

pub(super) fn last_segment(text: &str) -> &str {
    text.rsplit('.').next().unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_types_reduce_to_their_names() {
        assert_eq!(type_name("&mut Cart<T>").as_deref(), Some("Cart"));
        assert_eq!(type_name("*shop.Cart").as_deref(), Some("shop.Cart"));
        assert_eq!(type_name("Optional[Cart]").as_deref(), Some("Cart"));
        assert_eq!(type_name(": Cart?").as_deref(), Some("Cart"));
        assert_eq!(
            type_name("App\\Model\\Cart").as_deref(),
            Some("App.Model.Cart")
        );
        assert_eq!(type_name("var"), None);
        assert_eq!(type_name("auto"), None);
        assert_eq!(type_name("Map<String, Cart>").as_deref(), Some("Map"));
        assert_eq!(type_name("not a type"), None);
    }
}
