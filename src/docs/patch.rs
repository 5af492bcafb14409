//! Patch operations: pure functions from a document's text to its next text,
//! applied all or nothing (a failing operation names its index). An
//! operation that places text (section operations, append, prepend) leaves
//! every heading outside its change as it was.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use utoipa::ToSchema;

use super::heading_changes::{self, Heading};
use super::sections::{self, Section};
use crate::envelope::{Category, Code};
use crate::text_lines::first_line_ending;
use crate::tools::ToolError;

/// At most this many operations in one patch.
pub const MAX_OPERATIONS: usize = 100;

/// One edit. A section is its heading path (`Setup/Install`) or anchor; its
/// body runs to the next heading of its level or higher.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Operation {
    /// Replaces the section's body; its heading stays.
    ReplaceSection { section: String, content: String },
    /// Inserts before the section's heading.
    InsertBeforeSection { section: String, content: String },
    /// Inserts after the section and its subsections.
    InsertAfterSection { section: String, content: String },
    /// Adds to the end of the section's body.
    AppendToSection { section: String, content: String },
    /// Removes the section with its subsections.
    DeleteSection { section: String },
    /// Replaces `find` where it occurs, exactly `expected_count` times
    /// (default 1) or refused.
    ReplaceText {
        /// Not empty.
        #[schema(min_length = 1)]
        find: String,
        replace: String,
        // no document holds 100 million copies of a text: the ceiling
        // only keeps numbers a client sends within what JSON carries exactly
        #[serde(default = "one")]
        #[schema(minimum = 1, maximum = 100_000_000)]
        expected_count: usize,
    },
    /// Adds to the end.
    Append { content: String },
    /// Adds to the start (after any front matter).
    Prepend { content: String },
    /// Replaces the whole document.
    ReplaceAll { content: String },
}

fn one() -> usize {
    1
}

/// An operation's failure as the patch's: `E_ARGUMENT` (the seed's code for
/// a selector that names no section or several), naming the operation's
/// index, with what the failure knew (the sections there are, the
/// candidates) kept in its details.
fn failed(index: usize, message: String, details: Option<Value>) -> ToolError {
    let mut details = match details {
        Some(Value::Object(known)) => known,
        _ => Map::new(),
    };
    details.insert("field".into(), json!(format!("operations[{index}]")));
    details.insert("index".into(), json!(index));
    ToolError::fail(
        Category::Validation,
        Code::E_ARGUMENT,
        format!("operations[{index}]: {message}"),
    )
    .with_details(Value::Object(details))
}

/// Applies every operation in order to `text`.
pub fn apply(text: &str, operations: &[Operation]) -> Result<String, ToolError> {
    apply_outlined(text, operations, &|text| sections::outline(text).into()).map(|(text, _)| text)
}

/// Like [`apply`], with the outline of each text an operation addresses
/// taken from `outline_of` (a writer passes one that keeps large documents'
/// outlines, so a patch right after a read does not parse the text again).
/// The first operation's text is `text` itself, the same slice. Answers the
/// new text and, when the last operation had to parse it, its outline.
pub fn apply_outlined(
    text: &str,
    operations: &[Operation],
    outline_of: &dyn Fn(&str) -> Arc<[Section]>,
) -> Result<Outlined, ToolError> {
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
    // `outline_of` may know it; each next one the outline the last one made
    let mut text = std::borrow::Cow::Borrowed(text);
    let mut known: Option<Arc<[Section]>> = None;
    for (index, operation) in operations.iter().enumerate() {
        let outline = |addressed: &str| known.clone().unwrap_or_else(|| outline_of(addressed));
        let lines_of = lines_counted_in(index);
        let (applied, outlined) =
            apply_one(&text, operation, &outline, &lines_of).map_err(|error| match error {
                ToolError::Fail(body) => failed(index, body.message, body.details),
                other => other,
            })?;
        text = std::borrow::Cow::Owned(applied);
        known = outlined;
    }
    Ok((text.into_owned(), known))
}

/// What the line numbers in operation `index`'s refusal count in, as the
/// end of "on line N…": the document as the client read it for the first
/// operation, the text the earlier ones made for each later one.
fn lines_counted_in(index: usize) -> String {
    match index {
        0 => String::new(),
        1 => " of the text as operations[0] left it".into(),
        _ => format!(
            " of the text as operations[0] to operations[{}] left it",
            index - 1
        ),
    }
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

fn spliced(text: &str, start: usize, end: usize, insert: &str) -> String {
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

/// `text[at..end]` to become `insert`.
struct Splice {
    at: usize,
    end: usize,
    insert: String,
}

/// A text and, when known, its outline.
pub type Outlined = (String, Option<Arc<[Section]>>);

/// The text after `operation`, and its outline when the operation had to
/// parse it anyway; `lines_of` says what a refusal's line numbers count in.
fn apply_one(
    text: &str,
    operation: &Operation,
    outline_of: &dyn Fn(&str) -> Arc<[Section]>,
    lines_of: &str,
) -> Result<Outlined, ToolError> {
    // parsed only by the operations that place text, when first needed
    let parsed = std::cell::OnceCell::new();
    let outline = || parsed.get_or_init(|| outline_of(text));
    let found = |name: &str| section(outline(), name);
    let splice = match operation {
        Operation::ReplaceSection {
            section: name,
            content,
        } => {
            let found = found(name)?;
            Splice {
                at: found.body_start(),
                end: found.end,
                insert: separated(text, found.body_start(), content),
            }
        }
        Operation::InsertBeforeSection {
            section: name,
            content,
        } => {
            let at = found(name)?.start;
            Splice {
                at,
                end: at,
                insert: as_lines(text, content),
            }
        }
        Operation::InsertAfterSection {
            section: name,
            content,
        }
        | Operation::AppendToSection {
            section: name,
            content,
        } => {
            let found = found(name)?;
            let at = match operation {
                Operation::AppendToSection { .. } => body_end(outline(), found),
                _ => found.end,
            };
            Splice {
                at,
                end: at,
                insert: separated(text, at, content),
            }
        }
        Operation::DeleteSection { section: name } => {
            let found = found(name)?;
            Splice {
                at: found.start,
                end: found.end,
                insert: String::new(),
            }
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
            return Ok((text.replace(find.as_str(), replace), None));
        }
        Operation::Append { content } => Splice {
            at: text.len(),
            end: text.len(),
            insert: separated(text, text.len(), content),
        },
        Operation::Prepend { content } => {
            let at = sections::front_matter_end(text);
            Splice {
                at,
                end: at,
                insert: separated(text, at, content),
            }
        }
        Operation::ReplaceAll { content } => return Ok((content.clone(), None)),
    };
    let removing = matches!(operation, Operation::DeleteSection { .. });
    let (applied, outlined) =
        keeping_the_outline_around(text, outline(), splice, removing, lines_of)?;
    Ok((applied, Some(outlined.into())))
}

/// Applies `splice` so that the headings outside it stay as they were and
/// the inserted text's own headings stay its own. Markdown joins what meets
/// at the seams: a paragraph line before a setext underline becomes part of
/// its heading (`x` appended before `Title` over `===` retitles it `x
/// Title`), a paragraph before `---` becomes a heading. Where that happens, a
/// blank line on either side keeps the two apart. Where even that does not,
/// the operation is refused, naming the first heading it would change: a
/// code fence or HTML block the content opens and never closes swallows
/// what follows, and a link reference definition (`[label]: url`) removed
/// or added retitles every heading whose text uses its label. `removing`
/// says the splice deletes a section, so that a refusal names the section
/// rather than a content the operation does not have; `lines_of` what the
/// line number of a heading outside the splice counts in.
fn keeping_the_outline_around(
    text: &str,
    outline: &[Section],
    splice: Splice,
    removing: bool,
    lines_of: &str,
) -> Result<(String, Vec<Section>), ToolError> {
    // a splice that writes back what was there changes no heading, however
    // a parser reads the text (the content alone may read otherwise: a bare
    // CR ends a line, yet not a fence's info string, for the outline's parser)
    if text.get(splice.at..splice.end) == Some(splice.insert.as_str()) {
        return Ok((text.to_string(), outline.to_vec()));
    }
    let mut tried = splice;
    let mut change = String::new();
    for padded in [false, true] {
        if padded {
            tried = with_blank_lines_around(text, tried);
        }
        let applied = spliced(text, tried.at, tried.end, &tried.insert);
        let outlined = sections::outline(&applied);
        match outline_change(outline, &outlined, &tried, lines_of) {
            None => return Ok((applied, outlined)),
            Some(described) => change = described,
        }
    }
    if removing {
        return Err(ToolError::invalid(
            "section",
            format!(
                "a section whose removal leaves the other headings as they are; removing \
                 this one would {change} (where it holds a link reference definition \
                 `[label]: url` those headings use, replace the section with the \
                 definitions alone instead); nothing was changed"
            ),
        ));
    }
    Err(ToolError::invalid(
        "content",
        format!(
            "Markdown that leaves the headings around it as they are; placed here it \
             would {change} (a code fence or HTML block left open runs on over the \
             headings after it, and a link reference definition `[label]: url` that \
             the change removes or adds retitles the headings using its label); \
             nothing was changed"
        ),
    ))
}

/// `None` when the headings of `before` outside the replaced range, at
/// their offsets in `after`, are the headings of `after` outside the
/// inserted text, and within it the inserted text's own headings, as they
/// read on their own; else what would change first, in words (a line of
/// `before` counted as `lines_of` says).
fn outline_change(
    before: &[Section],
    after: &[Section],
    splice: &Splice,
    lines_of: &str,
) -> Option<String> {
    let inserted_end = splice.at + splice.insert.len();
    let moved = |start: usize| {
        if start < splice.at {
            start
        } else {
            start - (splice.end - splice.at) + splice.insert.len()
        }
    };
    let kept = (before.iter())
        .filter(|s| s.start < splice.at || s.start >= splice.end)
        .map(|s| Heading::of(s, moved(s.start)));
    let found = (after.iter())
        .filter(|s| s.start < splice.at || s.start >= inserted_end)
        .map(|s| Heading::of(s, s.start));
    if let Some(change) = heading_changes::first_change(kept, found) {
        return Some(change.describe("the heading", lines_of));
    }
    let own = sections::outline(&splice.insert);
    let placed = (after.iter())
        .filter(|s| s.start >= splice.at && s.start < inserted_end)
        .map(|s| Heading::of(s, s.start));
    let own = own.iter().map(|s| Heading::of(s, s.start + splice.at));
    heading_changes::first_change(own, placed)
        .map(|change| change.describe("the content's heading", " of the content"))
}

/// `splice` with a blank line between the inserted text and what meets it
/// on either side, where there is none.
fn with_blank_lines_around(text: &str, splice: Splice) -> Splice {
    let ending = first_line_ending(text);
    let mut insert = splice.insert;
    if splice.end < text.len() && !ends_with_blank_line(insert.as_bytes()) {
        let next = text.as_bytes().get(splice.end);
        insert.push_str(line_break_between(insert.as_bytes().last(), next, ending));
    }
    // line breaks the content starts with end the line before it first
    let breaks = insert.len() - insert.trim_start_matches(['\n', '\r']).len();
    let before = &text.as_bytes()[..splice.at];
    let last = &before[before.len().saturating_sub(4)..];
    let seam = [last, &insert.as_bytes()[..breaks]].concat();
    if splice.at > sections::front_matter_end(text) && !ends_with_blank_line(&seam) {
        let between = line_break_between(before.last(), insert.as_bytes().first(), ending);
        insert.insert_str(0, between);
    }
    Splice { insert, ..splice }
}

/// One more line break of the document's kind between `previous` and
/// `next`, where neither joins it into one CR LF with the break already
/// there (a document may mix its line endings): after a CR, an LF is written
/// as CR LF; before an LF, a bare CR is doubled, the second CR then taking
/// that LF as its own.
fn line_break_between(
    previous: Option<&u8>,
    next: Option<&u8>,
    ending: &'static str,
) -> &'static str {
    match ending {
        "\n" if previous == Some(&b'\r') => "\r\n",
        "\r" if next == Some(&b'\n') => "\r\r",
        _ => ending,
    }
}

/// True when `text` is empty or ends with an empty line.
fn ends_with_blank_line(text: &[u8]) -> bool {
    let Some(without_break) = text
        .strip_suffix(b"\n")
        .or_else(|| text.strip_suffix(b"\r"))
    else {
        return text.is_empty();
    };
    let without_break = without_break.strip_suffix(b"\r").unwrap_or(without_break);
    without_break.is_empty() || without_break.ends_with(b"\n") || without_break.ends_with(b"\r")
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
        let (out, outline) = apply_outlined(&doc, &operations, &outline_of).unwrap();
        assert_eq!(out, apply(DOC, &operations).unwrap());
        // the result's outline, parsed by the last operation, is handed back
        assert_eq!(outline.as_deref(), Some(sections::outline(&out).as_slice()));
        let asked = asked.into_inner();
        // the second reads the outline the first one made of its result
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(asked[0].0, "the first operation was handed a copy");
        // text replacements address no section: they parse nothing
        let replacing = [Operation::ReplaceText {
            find: "intro".into(),
            replace: "preface".into(),
            expected_count: 1,
        }];
        let parses = std::cell::Cell::new(0);
        let counted = |text: &str| -> Arc<[Section]> {
            parses.set(parses.get() + 1);
            sections::outline(text).into()
        };
        let (_, outline) = apply_outlined(&doc, &replacing, &counted).unwrap();
        assert_eq!(parses.get(), 0);
        assert!(
            outline.is_none(),
            "nothing parsed, so no outline to hand back"
        );
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
        // "top" right above the `---` would make it a heading: a blank line between
        assert_eq!(
            prepend("---\nnot closed\n").as_deref(),
            Some("top\n\n---\nnot closed\n")
        );
    }

    #[test]
    fn a_blank_line_put_in_a_bare_cr_document_does_not_merge_into_a_cr_lf() {
        // found by the property below: the CR put before content that starts
        // with an LF made one CR LF with it, so no blank line parted `===`
        // from the content's paragraph, which read as a heading with it, and
        // the append was refused
        let appended = apply(
            "\r===",
            &[Operation::Append {
                content: "\n🌀\n=\n".into(),
            }],
        );
        assert_eq!(appended.ok().as_deref(), Some("\r===\r\r\n🌀\n=\n"));
        let titles: Vec<String> = sections::outline("\r===\r\r\n🌀\n=\n")
            .into_iter()
            .map(|s| s.title)
            .collect();
        assert_eq!(titles, ["🌀"]);
    }

    #[test]
    fn what_meets_at_a_seam_keeps_the_headings_around_it() {
        let run = |text: &str, operation: Operation| {
            apply(text, &[operation]).map_err(|error| match error {
                ToolError::Fail(body) => body.message,
                other => format!("{other:?}"),
            })
        };
        let titles = |text: &str| -> Vec<String> {
            sections::outline(text)
                .into_iter()
                .map(|s| s.title)
                .collect()
        };
        // a line appended right above a setext heading would join its title
        let text = "# Top\n## One\nbody\n\nTwo\n===\nmore\n";
        let appended = run(
            text,
            Operation::AppendToSection {
                section: "One".into(),
                content: "x".into(),
            },
        );
        assert_eq!(
            appended.as_deref(),
            Ok("# Top\n## One\nbody\n\nx\n\nTwo\n===\nmore\n")
        );
        let inserted = run(
            text,
            Operation::InsertBeforeSection {
                section: "Two".into(),
                content: "x".into(),
            },
        );
        assert_eq!(inserted, appended);
        // deleting what stood between a paragraph and a setext heading
        let text = "# Top\nlast line\n## Gone\nbody\n\nTwo\n---\n";
        let deleted = run(
            text,
            Operation::DeleteSection {
                section: "Gone".into(),
            },
        )
        .unwrap();
        assert_eq!(deleted, "# Top\nlast line\n\nTwo\n---\n");
        assert_eq!(titles(&deleted), ["Top", "Two"]);
        // a rule appended under a paragraph would make the paragraph a heading
        let appended = run(
            "# Log\nlast entry",
            Operation::Append {
                content: "---".into(),
            },
        )
        .unwrap();
        assert_eq!(appended, "# Log\nlast entry\n\n---\n");
        assert_eq!(titles(&appended), ["Log"]);
        // the content's own heading stays one, even after an open HTML block
        let text = "# Top\n<div>\n";
        let appended = run(
            text,
            Operation::Append {
                content: "## Mine".into(),
            },
        )
        .unwrap();
        assert_eq!(titles(&appended), ["Top", "Mine"]);
        // a fence the content opens would swallow every section after it
        let text = "# Top\n## One\nbody\n## Two\nmore\n";
        let fenced = run(
            text,
            Operation::AppendToSection {
                section: "One".into(),
                content: "```\ncode".into(),
            },
        );
        assert!(
            fenced
                .as_ref()
                .is_err_and(|message| message.contains("operations[0]: content:")),
            "{fenced:?}"
        );
        let closed = run(
            text,
            Operation::AppendToSection {
                section: "One".into(),
                content: "```\ncode\n```".into(),
            },
        );
        assert_eq!(
            closed.map(|out| titles(&out)),
            Ok(vec!["Top".into(), "One".into(), "Two".into()])
        );
        // and so would a fence left open before the content's heading
        let open = run(
            "# Top\n```\n",
            Operation::Append {
                content: "## Mine".into(),
            },
        );
        assert!(open.is_err(), "{open:?}");
        assert!(
            run(
                "# Top\n```\n",
                Operation::Append {
                    content: "log line".into()
                }
            )
            .is_ok()
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

    /// The message of `operation`'s refusal on `text`; panics when it was applied.
    fn refusal(text: &str, operation: Operation) -> String {
        patch_refusal(text, &[operation])
    }

    fn patch_refusal(text: &str, operations: &[Operation]) -> String {
        match apply(text, operations) {
            Err(ToolError::Fail(body)) => body.message,
            other => panic!("refused, not {other:?}"),
        }
    }

    const CHANGELOG: &str =
        "# Log\n## [v2] - 2024\nnew\n## v1\nfirst\n\n[v2]: https://example.com/v2\n";

    #[test]
    fn a_refusal_names_the_heading_a_lost_link_definition_would_retitle() {
        // a changelog's last section holds the definitions its headings use
        let message = refusal(
            CHANGELOG,
            Operation::ReplaceSection {
                section: "Log/v1".into(),
                content: "first release\n".into(),
            },
        );
        let retitled = "would make the heading \"## v2 - 2024\" on line 2 read \"## [v2] - 2024\"";
        assert!(message.contains(retitled), "{message}");
        assert!(message.contains("link reference definition"), "{message}");
        // kept in the content, the definition leaves the heading as it was
        let kept = apply(
            CHANGELOG,
            &[Operation::ReplaceSection {
                section: "Log/v1".into(),
                content: "first release\n\n[v2]: https://example.com/v2\n".into(),
            }],
        );
        assert_eq!(
            kept.ok().as_deref(),
            Some(CHANGELOG.replace("first\n", "first release\n").as_str())
        );
    }

    #[test]
    fn a_refused_delete_names_the_section_and_the_heading_it_would_retitle() {
        let message = refusal(
            CHANGELOG,
            Operation::DeleteSection {
                section: "Log/v1".into(),
            },
        );
        assert!(
            message.starts_with("operations[0]: section: a section whose removal")
                && message.contains("removing this one would make the heading \"## v2 - 2024\""),
            "{message}"
        );
    }

    #[test]
    fn a_refusal_names_the_heading_an_added_link_definition_would_retitle() {
        let message = refusal(
            "# Notes\n## [draft] plan\nbody\n\n",
            Operation::Append {
                content: "[draft]: /drafts".into(),
            },
        );
        let retitled = "make the heading \"## [draft] plan\" on line 2 read \"## draft plan\"";
        assert!(message.contains(retitled), "{message}");
    }

    #[test]
    fn a_refusal_names_the_heading_an_open_fence_would_swallow() {
        let message = refusal(
            "# A\nintro\n## B\nbody\n",
            Operation::AppendToSection {
                section: "A".into(),
                content: "```\ncode".into(),
            },
        );
        assert!(
            message.contains("make the heading \"## B\" on line 3 plain text"),
            "{message}"
        );
    }

    #[test]
    fn a_later_operations_refusal_counts_its_lines_in_the_text_the_earlier_ones_made() {
        let text = "# A\nintro\n## B\nbody\n";
        let grow_a = || Operation::AppendToSection {
            section: "A".into(),
            content: "one\ntwo".into(),
        };
        let open_fence = Operation::AppendToSection {
            section: "A".into(),
            content: "```\ncode".into(),
        };
        // "## B" is line 3 of the document, line 5 after one addition of two
        // lines, line 7 after two
        for (earlier, line, counted_in) in [
            (1, 5, "operations[0]"),
            (2, 7, "operations[0] to operations[1]"),
        ] {
            let mut operations = vec![grow_a(); earlier];
            operations.push(open_fence.clone());
            let message = patch_refusal(text, &operations);
            assert!(
                message.starts_with(&format!("operations[{earlier}]:")),
                "{message}"
            );
            let named = format!(
                "make the heading \"## B\" on line {line} of the text as {counted_in} left it \
                 plain text"
            );
            assert!(message.contains(&named), "{message}");
        }
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

    /// The operation's result, or `None` where it was refused for changing
    /// the headings around it, which only a code fence or an HTML block that
    /// runs to its own end marker (not to a blank line), or a link reference
    /// definition removed or added, can do.
    fn kept_around(
        text: &str,
        operation: Operation,
        content: &str,
    ) -> Result<Option<String>, proptest::test_runner::TestCaseError> {
        match apply(text, &[operation]) {
            Ok(out) => Ok(Some(out)),
            Err(ToolError::Fail(body))
                if body
                    .message
                    .starts_with("operations[0]: content: Markdown that leaves")
                    || body
                        .message
                        .starts_with("operations[0]: section: a section whose removal") =>
            {
                let blocks = |t: &str| t.contains(['`', '~', '<', '[']);
                proptest::prop_assert!(
                    blocks(text) || blocks(content),
                    "refused without a block that could swallow: {text:?} {content:?}"
                );
                Ok(None)
            }
            Err(other) => Err(proptest::test_runner::TestCaseError::fail(format!(
                "{other:?}"
            ))),
        }
    }

    /// What was added besides `content`: nothing but line breaks, the
    /// document's own kind (or a CR LF after a CR in a document that mixes
    /// them), at most two on either side.
    fn only_line_breaks_around(
        text: &str,
        added: &str,
        content: &str,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let ending = first_line_ending(text);
        let around = added.replacen(content, "", 1);
        let breaks = around.matches(ending).count();
        let own_kind = around == ending.repeat(breaks) || (ending == "\n" && text.contains('\r'));
        proptest::prop_assert!(
            own_kind && around.trim_matches(['\r', '\n']).is_empty(),
            "{around:?}"
        );
        proptest::prop_assert!(around.len() <= 8, "{around:?}");
        Ok(())
    }

    /// The headings before `at` and from `end` on in `text` are the headings
    /// of `out` before `at` and from the same distance to its end.
    fn seams_hold(
        text: &str,
        out: &str,
        at: usize,
        end: usize,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let heads = |t: &str, keep: &dyn Fn(usize) -> bool| -> Vec<(u8, String, usize)> {
            (sections::outline(t).into_iter())
                .filter(|s| keep(s.start))
                .map(|s| {
                    (
                        s.level,
                        s.title,
                        if s.start < at {
                            s.start
                        } else {
                            t.len() - s.start
                        },
                    )
                })
                .collect()
        };
        let grown = out.len() + end - text.len();
        proptest::prop_assert_eq!(
            heads(text, &|start| start < at || start >= end),
            heads(out, &|start| start < at || start >= grown)
        );
        Ok(())
    }

    #[test]
    fn a_section_replaced_by_its_own_body_is_the_same_text_whatever_the_body_reads_alone() {
        // found by the property below: alone, the body opens a code fence
        // (its info string runs over bare CRs), in place it does not
        let text = "---\n...\n- \n> # \n```\r### \r# ```";
        let outline = sections::outline(text);
        for section in &outline {
            let body = &text[section.body_start()..section.end];
            let replace = Operation::ReplaceSection {
                section: section.path.clone(),
                content: body.into(),
            };
            assert_eq!(
                apply(text, &[replace]).ok().as_deref(),
                Some(text),
                "{section:?}"
            );
        }
    }

    /// Markdown-like text with every line ending and some headings, fences,
    /// quotes, lists and setext underlines.
    const MARKDOWNISH: &str =
        "(#{1,3} |\\PC|\n|\r|\r\n|```|> |- |---|===|Setup|Use|\\[v1\\]|\n\n\\[v1\\]: /u\n){0,120}";

    proptest::proptest! {
            #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
            #[test]
            fn a_section_operation_changes_its_section_and_nothing_else(
                mark in "\u{feff}?",
                front in "(---\n\n?(a: 1\n|# H\n)?(---|[.]{3})\n)?",
                before in MARKDOWNISH,
                heading in "(\n|\r|\r\n)?#{1,3} (\\[v1\\] )?[^\r\n]{0,6}(\n|\r|\r\n)?",
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
                if let Some(replaced) = kept_around(&text, Operation::ReplaceSection { section: named(), content: content.clone() }, &content)? {
                    proptest::prop_assert!(replaced.starts_with(&text[..chosen.body_start()]));
                    proptest::prop_assert!(replaced.ends_with(&text[chosen.end..]));
                    proptest::prop_assert!(replaced.contains(content.as_str()));
                    seams_hold(&text, &replaced, chosen.body_start(), chosen.end)?;
                }

                if let Some(deleted) = kept_around(&text, Operation::DeleteSection { section: named() }, "")? {
                    let (head, tail) = (&text[..chosen.start], &text[chosen.end..]);
                    proptest::prop_assert!(deleted.starts_with(head) && deleted.ends_with(tail), "{deleted:?}");
                    // at most a line break between, for a blank line
                    only_line_breaks_around(&text, &deleted[head.len()..deleted.len() - tail.len()], "")?;
                    seams_hold(&text, &deleted, chosen.start, chosen.end)?;
                }

                let inserts = [
                    (Operation::InsertBeforeSection { section: named(), content: content.clone() }, chosen.start),
                    (Operation::InsertAfterSection { section: named(), content: content.clone() }, chosen.end),
                    (Operation::AppendToSection { section: named(), content: content.clone() }, body_end(&outline, chosen)),
                ];
                for (operation, at) in inserts {
                    let Some(out) = kept_around(&text, operation.clone(), &content)? else {
                        continue;
                    };
                    proptest::prop_assert!(out.starts_with(&text[..at]), "{operation:?}");
                    proptest::prop_assert!(out.ends_with(&text[at..]), "{operation:?}");
                    let added = &out[at..out.len() - (text.len() - at)];
                    proptest::prop_assert!(added.contains(content.as_str()), "{operation:?}");
                    only_line_breaks_around(&text, added, &content)?;
                    seams_hold(&text, &out, at, at)?;
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
                if let Some(appended) = kept_around(&text, Operation::Append { content: content.clone() }, &content)? {
                    proptest::prop_assert!(appended.starts_with(&text));
                    only_line_breaks_around(&text, &appended[text.len()..], &content)?;
                    seams_hold(&text, &appended, text.len(), text.len())?;
                }

                let top = sections::front_matter_end(&text);
                proptest::prop_assert!(top >= mark.len());
                if let Some(prepended) = kept_around(&text, Operation::Prepend { content: content.clone() }, &content)? {
                    proptest::prop_assert!(prepended.starts_with(&text[..top]));
                    proptest::prop_assert!(prepended.ends_with(&text[top..]));
                    proptest::prop_assert!(prepended[top..].starts_with(&content) || prepended[top..].starts_with(ending));
                    seams_hold(&text, &prepended, top, top)?;
                }

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
