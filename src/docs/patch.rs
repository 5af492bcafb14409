//! Patch operations: pure functions from a document's text to its next text,
//! applied all or nothing (a failing operation names its index).

use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::Arc;
use utoipa::ToSchema;

use super::sections::{self, Section};
use crate::envelope::{Category, Code};
use crate::text_lines::first_line_ending;
use crate::tools::ToolError;

/// At most this many operations in one patch.
pub const MAX_OPERATIONS: usize = 100;

/// One edit. Sections are addressed by heading path (`Setup/Install`) or
/// anchor; a section's body is what follows its heading up to the next
/// heading of the same or a higher level (subsections included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Operation {
    /// Replaces the section's body; its heading stays.
    ReplaceSection { section: String, content: String },
    /// Inserts before the section's heading.
    InsertBeforeSection { section: String, content: String },
    /// Inserts after the section's end (after its subsections).
    InsertAfterSection { section: String, content: String },
    /// Adds to the end of the section's body.
    AppendToSection { section: String, content: String },
    /// Removes the section: heading, body and subsections.
    DeleteSection { section: String },
    /// Replaces every occurrence of `find`; refused unless there are exactly
    /// `expected_count` of them (default 1).
    ReplaceText {
        find: String,
        replace: String,
        // no document holds 100 million copies of a text: the ceiling
        // only keeps numbers a client sends within what JSON carries exactly
        #[serde(default = "one")]
        #[schema(minimum = 1, maximum = 100_000_000)]
        expected_count: usize,
    },
    /// Adds to the end of the document.
    Append { content: String },
    /// Adds to the start of the document (after front matter, if any).
    Prepend { content: String },
    /// Replaces the whole document: an edit made in an editor, or a past
    /// revision restored. The base still guards it like any other patch.
    ReplaceAll { content: String },
}

fn one() -> usize {
    1
}

fn failed(index: usize, message: String) -> ToolError {
    ToolError::fail(
        Category::Validation,
        Code::E_ARGUMENT,
        format!("operations[{index}]: {message}"),
    )
    .with_details(json!({"field": format!("operations[{index}]"), "index": index}))
}

/// Applies every operation in order to `text`.
pub fn apply(text: &str, operations: &[Operation]) -> Result<String, ToolError> {
    apply_outlined(text, operations, &|text| sections::outline(text).into())
}

/// Like [`apply`], with the outline of each text an operation addresses
/// taken from `outline_of` (a writer passes one that keeps large documents'
/// outlines, so a patch right after a read does not parse the text again).
/// The first operation's text is `text` itself, the same slice.
pub fn apply_outlined(
    text: &str,
    operations: &[Operation],
    outline_of: &dyn Fn(&str) -> Arc<[Section]>,
) -> Result<String, ToolError> {
    if operations.is_empty() {
        return Err(ToolError::invalid("operations", "at least one operation"));
    }
    if operations.len() > MAX_OPERATIONS {
        return Err(ToolError::invalid(
            "operations",
            format!("at most {MAX_OPERATIONS} operations in one patch"),
        ));
    }
    // the first operation reads `text` itself: not copied, and a caller's
    // `outline_of` may know it
    let mut text = std::borrow::Cow::Borrowed(text);
    for (index, operation) in operations.iter().enumerate() {
        let applied = apply_one(&text, operation, outline_of).map_err(|error| match error {
            ToolError::Fail(body) => failed(index, body.message),
            other => other,
        })?;
        text = std::borrow::Cow::Owned(applied);
    }
    Ok(text.into_owned())
}

/// `content` ending in a line break, so what follows starts on its own
/// line: the line ending `text` uses (its first), so a CR LF document stays
/// CR LF.
fn as_lines(text: &str, content: &str) -> String {
    if content.is_empty() || content.ends_with(['\n', '\r']) {
        content.to_string()
    } else {
        format!("{content}{}", first_line_ending(text))
    }
}

fn splice(text: &str, start: usize, end: usize, insert: &str) -> String {
    let mut out = String::with_capacity(text.len() + insert.len());
    out.push_str(&text[..start]);
    out.push_str(insert);
    out.push_str(&text[end..]);
    out
}

fn section<'a>(sections: &'a [Section], wanted: &str) -> Result<&'a Section, ToolError> {
    sections::find(sections, "section", wanted)
}

/// Where text that follows `text[..end]` must start: on a new line (unless
/// the content itself starts with a line break).
fn separated(text: &str, end: usize, content: &str) -> String {
    let on_new_line = end <= sections::byte_order_mark(text)
        || text[..end].ends_with(['\n', '\r'])
        || content.is_empty()
        || content.starts_with(['\n', '\r']);
    if on_new_line {
        as_lines(text, content)
    } else {
        format!("{}{}", first_line_ending(text), as_lines(text, content))
    }
}

fn apply_one(
    text: &str,
    operation: &Operation,
    outline_of: &dyn Fn(&str) -> Arc<[Section]>,
) -> Result<String, ToolError> {
    let outline = || outline_of(text);
    Ok(match operation {
        Operation::ReplaceSection {
            section: name,
            content,
        } => {
            let sections = outline();
            let found = section(&sections, name)?;
            let body = separated(text, found.body_start(), content);
            splice(text, found.body_start(), found.end, &body)
        }
        Operation::InsertBeforeSection {
            section: name,
            content,
        } => {
            let sections = outline();
            let found = section(&sections, name)?;
            splice(text, found.start, found.start, &as_lines(text, content))
        }
        Operation::InsertAfterSection {
            section: name,
            content,
        }
        | Operation::AppendToSection {
            section: name,
            content,
        } => {
            let sections = outline();
            let found = section(&sections, name)?;
            let at = match operation {
                Operation::AppendToSection { .. } => body_end(&sections, found),
                _ => found.end,
            };
            splice(text, at, at, &separated(text, at, content))
        }
        Operation::DeleteSection { section: name } => {
            let sections = outline();
            let found = section(&sections, name)?;
            splice(text, found.start, found.end, "")
        }
        Operation::ReplaceText {
            find,
            replace,
            expected_count,
        } => {
            if find.is_empty() {
                return Err(ToolError::invalid("find", "at least one character"));
            }
            let count = text.matches(find.as_str()).count();
            if count != *expected_count {
                return Err(ToolError::invalid(
                    "expected_count",
                    format!(
                        "{find:?} occurs {count} times, not {expected_count}; nothing was changed"
                    ),
                ));
            }
            text.replace(find.as_str(), replace)
        }
        Operation::Append { content } => {
            let at = text.len();
            splice(text, at, at, &separated(text, at, content))
        }
        Operation::Prepend { content } => {
            let at = sections::front_matter_end(text);
            splice(text, at, at, &separated(text, at, content))
        }
        Operation::ReplaceAll { content } => content.clone(),
    })
}

/// The end of a section's own body: where its first subsection starts, or its end.
fn body_end(sections: &[Section], found: &Section) -> usize {
    sections
        .iter()
        .find(|s| s.start > found.start && s.start < found.end)
        .map_or(found.end, |sub| sub.start)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Guide\nintro\n## Setup\nold steps\n### Deep\ndeep\n## Use\nuse it\n";

    fn patch(operations: Vec<Operation>) -> Result<String, ToolError> {
        apply(DOC, &operations)
    }

    #[test]
    fn the_first_operation_reads_the_callers_own_text_and_the_next_the_result() {
        let doc = DOC.to_string();
        let asked = std::cell::RefCell::new(Vec::new());
        let outline_of = |text: &str| -> Arc<[Section]> {
            let own = std::ptr::eq(text, doc.as_str());
            asked.borrow_mut().push((own, text.to_string()));
            sections::outline(text).into()
        };
        let section = |name: &str, content: &str| Operation::AppendToSection {
            section: name.into(),
            content: content.into(),
        };
        let operations = [section("Setup", "one"), section("Use", "two")];
        let out = apply_outlined(&doc, &operations, &outline_of).unwrap();
        assert_eq!(out, apply(DOC, &operations).unwrap());
        let asked = asked.into_inner();
        assert_eq!(asked.len(), 2);
        assert!(asked[0].0, "the first operation was handed a copy");
        assert!(!asked[1].0 && asked[1].1.contains("one"), "{asked:?}");
    }

    #[test]
    fn an_operation_with_an_unknown_field_is_refused() {
        // what tools::schema's closing of tagged variants states in the spec
        let parsed = serde_json::from_value::<Operation>(
            json!({"op": "append", "content": "x", "section": "Setup"}),
        );
        assert!(parsed.is_err(), "{parsed:?}");
    }

    #[test]
    fn content_that_starts_its_own_line_gets_no_second_break() {
        let replaced = apply(
            "# Runbook\r\n## End",
            &[Operation::ReplaceSection {
                section: "end".into(),
                content: "\r\nDone.".into(),
            }],
        );
        assert_eq!(
            replaced.ok().as_deref(),
            Some("# Runbook\r\n## End\r\nDone.\r\n")
        );
        let appended = apply(
            "last",
            &[Operation::Append {
                content: "\nmore".into(),
            }],
        );
        assert_eq!(appended.ok().as_deref(), Some("last\nmore\n"));
    }

    #[test]
    fn sections_are_found_in_texts_with_any_line_ending() {
        for ending in ["\r\n", "\r"] {
            let text = DOC.replace('\n', ending);
            let replaced = apply(
                &text,
                &[Operation::ReplaceSection {
                    section: "Guide/Setup".into(),
                    content: "new steps".into(),
                }],
            );
            let expected = format!(
                "# Guide{e}intro{e}## Setup{e}new steps{e}## Use{e}use it{e}",
                e = ending
            );
            assert_eq!(replaced.ok(), Some(expected), "{ending:?}");
            let appended = apply(
                &format!("# Log{ending}last"),
                &[Operation::Append {
                    content: "more".into(),
                }],
            );
            assert_eq!(
                appended.ok(),
                Some(format!("# Log{ending}last{ending}more{ending}")),
                "the document's own line ending: {ending:?}"
            );
        }
    }

    #[test]
    fn section_operations_touch_only_their_section() {
        let replaced = patch(vec![Operation::ReplaceSection {
            section: "Guide/Setup".into(),
            content: "new steps".into(),
        }]);
        assert_eq!(
            replaced.ok().as_deref(),
            Some("# Guide\nintro\n## Setup\nnew steps\n## Use\nuse it\n")
        );
        let appended = patch(vec![Operation::AppendToSection {
            section: "setup".into(),
            content: "more".into(),
        }]);
        assert_eq!(
            appended.ok().as_deref(),
            Some("# Guide\nintro\n## Setup\nold steps\nmore\n### Deep\ndeep\n## Use\nuse it\n")
        );
        let after = patch(vec![Operation::InsertAfterSection {
            section: "Setup".into(),
            content: "## Extra\n".into(),
        }]);
        assert_eq!(
            after.ok().as_deref(),
            Some("# Guide\nintro\n## Setup\nold steps\n### Deep\ndeep\n## Extra\n## Use\nuse it\n")
        );
        let before = patch(vec![Operation::InsertBeforeSection {
            section: "use".into(),
            content: "x".into(),
        }]);
        assert_eq!(
            before.ok().as_deref(),
            Some("# Guide\nintro\n## Setup\nold steps\n### Deep\ndeep\nx\n## Use\nuse it\n")
        );
        let deleted = patch(vec![Operation::DeleteSection {
            section: "Setup".into(),
        }]);
        assert_eq!(
            deleted.ok().as_deref(),
            Some("# Guide\nintro\n## Use\nuse it\n")
        );
    }

    #[test]
    fn text_replacement_checks_its_count_and_a_failure_names_its_index() {
        let ok = patch(vec![Operation::ReplaceText {
            find: "use".into(),
            replace: "apply".into(),
            expected_count: 1,
        }]);
        assert_eq!(
            ok.ok().as_deref(),
            Some("# Guide\nintro\n## Setup\nold steps\n### Deep\ndeep\n## Use\napply it\n")
        );
        let refused = patch(vec![
            Operation::Append {
                content: "end".into(),
            },
            Operation::ReplaceText {
                find: "e".into(),
                replace: "E".into(),
                expected_count: 1,
            },
        ]);
        let message = refused.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.starts_with("operations[1]:"), "{message}");
        assert!(apply(DOC, &[]).is_err());
    }

    #[test]
    fn append_and_prepend_keep_lines_and_front_matter() {
        assert_eq!(
            apply(
                "a",
                &[Operation::Append {
                    content: "b".into()
                }]
            )
            .ok()
            .as_deref(),
            Some("a\nb\n")
        );
        assert_eq!(
            apply(
                "---\nx: 1\n---\nbody\n",
                &[Operation::Prepend {
                    content: "top".into()
                }]
            )
            .ok()
            .as_deref(),
            Some("---\nx: 1\n---\ntop\nbody\n")
        );
        let prepend = |text: &str| {
            apply(
                text,
                &[Operation::Prepend {
                    content: "top".into(),
                }],
            )
            .ok()
        };
        assert_eq!(
            prepend("---\r\nx: 1\r\n---\r\nbody\r\n").as_deref(),
            Some("---\r\nx: 1\r\n---\r\ntop\r\nbody\r\n")
        );
        assert_eq!(
            prepend("+++\nx = 1\n+++\nbody\n").as_deref(),
            Some("+++\nx = 1\n+++\ntop\nbody\n")
        );
        assert_eq!(
            prepend("---\nx: 1\n---").as_deref(),
            Some("---\nx: 1\n---\ntop\n"),
            "a front matter closing the text"
        );
        assert_eq!(
            prepend("---\nnot closed\n").as_deref(),
            Some("top\n---\nnot closed\n")
        );
    }

    #[test]
    fn a_byte_order_mark_stays_first_whatever_is_prepended_or_deleted() {
        let text = "\u{feff}# Title\nintro\n## Part\nbody\n";
        let run = |operation| apply(text, &[operation]).map_err(|error| format!("{error:?}"));
        assert_eq!(
            run(Operation::Prepend {
                content: "top".into()
            })
            .as_deref(),
            Ok("\u{feff}top\n# Title\nintro\n## Part\nbody\n")
        );
        assert_eq!(
            run(Operation::DeleteSection {
                section: "Title".into()
            })
            .as_deref(),
            Ok("\u{feff}")
        );
        assert_eq!(
            run(Operation::AppendToSection {
                section: "Title".into(),
                content: "more".into()
            })
            .as_deref(),
            Ok("\u{feff}# Title\nintro\nmore\n## Part\nbody\n")
        );
        let fronted = "\u{feff}---\na: 1\n---\n# T\n";
        assert_eq!(
            sections::front_matter_end(fronted),
            fronted.len() - "# T\n".len()
        );
    }

    #[test]
    fn replace_all_takes_the_content_as_it_is() {
        let text = "# Title\n\nold\n";
        let next = apply(
            text,
            &[Operation::ReplaceAll {
                content: "# Other\n\nnew, no final line break".into(),
            }],
        )
        .map_err(|error| format!("{error:?}"));
        assert_eq!(next.as_deref(), Ok("# Other\n\nnew, no final line break"));
    }

    /// One operation's result, its refusal a failed case.
    fn applied(
        text: &str,
        operation: Operation,
    ) -> Result<String, proptest::test_runner::TestCaseError> {
        apply(text, &[operation])
            .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e:?}")))
    }

    /// Markdown-like text with every line ending and some headings, fences,
    /// quotes, lists and setext underlines.
    const MARKDOWNISH: &str = "(#{1,3} |\\PC|\n|\r|\r\n|```|> |- |---|===|Setup|Use){0,120}";

    proptest::proptest! {
            #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
            #[test]
            fn a_section_operation_changes_its_section_and_nothing_else(
                mark in "\u{feff}?",
                front in "(---\n\n?(a: 1\n|# H\n)?(---|[.]{3})\n)?",
                before in MARKDOWNISH,
                heading in "(\n|\r|\r\n)?#{1,3} [^\r\n]{0,6}(\n|\r|\r\n)?",
                after in MARKDOWNISH,
                pick in proptest::prelude::any::<proptest::sample::Index>(),
                content in "(\\PC|\n|\r\n){0,20}",
            ) {
                // one heading at least, most of the time, wherever it lands
                // (a byte order mark, as Windows editors write, front matter
                // or what looks like it first, at times)
                let text = format!("{mark}{front}{before}{heading}{after}");
                let outline = sections::outline(&text);
                // what goes first (front matter, the mark) is in no section
                let top = sections::front_matter_end(&text);
                proptest::prop_assert!(top >= mark.len());
                proptest::prop_assert!(outline.iter().all(|s| s.start >= top), "{top} {outline:?}");
                if outline.is_empty() {
                    // the heading fell inside a code fence or front matter
                    return Ok(());
                }
                let chosen = &outline[pick.index(outline.len())];
                // by anchor, else by heading path (an anchor may be another heading's path)
                let names_it = |name: &String| sections::find(&outline, "section", name).ok() == Some(chosen);
                let Some(name) = [&chosen.anchor, &chosen.path].into_iter().find(|name| names_it(name)) else {
                    return Ok(());
                };
                let run = |operation: Operation| apply(&text, &[operation]);
                let named = || name.clone();

                let body = &text[chosen.body_start()..chosen.end];
                if body.is_empty() || body.ends_with(['\n', '\r']) {
                    let same = run(Operation::ReplaceSection { section: named(), content: body.into() });
                    proptest::prop_assert_eq!(same.ok(), Some(text.clone()), "its own body back");
                }
                let replaced = applied(&text, Operation::ReplaceSection { section: named(), content: content.clone() })?;
                proptest::prop_assert!(replaced.starts_with(&text[..chosen.body_start()]));
                proptest::prop_assert!(replaced.ends_with(&text[chosen.end..]));
                proptest::prop_assert!(replaced.contains(content.as_str()));

                let deleted = run(Operation::DeleteSection { section: named() });
                proptest::prop_assert_eq!(
                    deleted.ok(),
                    Some(format!("{}{}", &text[..chosen.start], &text[chosen.end..]))
                );

                let inserts = [
                    (Operation::InsertBeforeSection { section: named(), content: content.clone() }, chosen.start),
                    (Operation::InsertAfterSection { section: named(), content: content.clone() }, chosen.end),
                    (Operation::AppendToSection { section: named(), content: content.clone() }, body_end(&outline, chosen)),
                ];
                let ending = first_line_ending(&text);
                for (operation, at) in inserts {
                    let out = applied(&text, operation.clone())?;
                    proptest::prop_assert!(out.starts_with(&text[..at]), "{operation:?}");
                    proptest::prop_assert!(out.ends_with(&text[at..]), "{operation:?}");
                    let added = &out[at..out.len() - (text.len() - at)];
                    // the content, and line breaks of the document's own kind around it
                    let around = added.replacen(content.as_str(), "", 1);
                    proptest::prop_assert!(added.contains(content.as_str()), "{operation:?}");
                    proptest::prop_assert!(around.is_empty() || around == ending || around == ending.repeat(2), "{around:?}");
                }
            }

            #[test]
            fn whole_document_operations_keep_what_they_do_not_touch(
                mark in "\u{feff}?",
                text in MARKDOWNISH,
                content in "(\\PC|\n|\r\n){0,20}",
                find in "(\\PC|\n){1,3}",
            ) {
                let text = format!("{mark}{text}");
                let ending = first_line_ending(&text);
                let appended = applied(&text, Operation::Append { content: content.clone() })?;
                proptest::prop_assert!(appended.starts_with(&text));
                let added = appended[text.len()..].replacen(content.as_str(), "", 1);
                proptest::prop_assert!(added.is_empty() || added == ending || added == ending.repeat(2), "{added:?}");

                let top = sections::front_matter_end(&text);
                proptest::prop_assert!(top >= mark.len());
                let prepended = applied(&text, Operation::Prepend { content: content.clone() })?;
                proptest::prop_assert!(prepended.starts_with(&text[..top]));
                proptest::prop_assert!(prepended.ends_with(&text[top..]));
                proptest::prop_assert!(prepended[top..].starts_with(&content) || prepended[top..].starts_with(ending));

                let count = text.matches(find.as_str()).count();
                let replace = |expected_count| apply(&text, &[Operation::ReplaceText {
                    find: find.clone(),
                    replace: content.clone(),
                    expected_count,
                }]);
                if count > 0 {
                    proptest::prop_assert_eq!(replace(count).ok(), Some(text.replace(find.as_str(), &content)));
                }
                proptest::prop_assert!(replace(count + 1).is_err(), "a count that differs changes nothing");
            }
    }
}
