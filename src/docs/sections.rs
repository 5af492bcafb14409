//! A document's sections, from its headings as CommonMark reads them
//! (pulldown-cmark: a `#` inside a code fence or front matter is no heading),
//! and where its front matter ends, read by the same parse.
//! A section runs from its heading to the next heading of the same or a
//! higher level, so it holds its subsections. It is addressed by its heading
//! path (`Setup/Install`) or its anchor (`install`, GitHub's slug rule with
//! `-1`, `-2` for repeats).

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use utoipa::ToSchema;

use crate::envelope::{Category, Code};
use crate::text_lines::LineCounter;
use crate::tools::ToolError;

/// One heading of the outline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Section {
    /// Titles from the top heading down to this one, joined by `/`.
    pub path: String,
    pub anchor: String,
    pub title: String,
    /// 1 to 6.
    pub level: u8,
    /// 1-based line of the heading.
    pub line: usize,
    /// Byte offset where the heading starts.
    pub start: usize,
    /// Byte offset where the section ends (exclusive).
    pub end: usize,
    /// Bytes of the heading line(s); the body starts at `start + heading_bytes`.
    #[serde(skip)]
    pub heading_bytes: usize,
}

impl Section {
    pub fn size(&self) -> usize {
        self.end - self.start
    }

    pub fn body_start(&self) -> usize {
        self.start + self.heading_bytes
    }
}

/// A heading as the parser found it: level, title (untrimmed), where its
/// line starts and where the heading ends.
type Heading = (u8, String, usize, usize);

/// Bytes of a leading byte order mark: editors on Windows write one, and
/// CommonMark would read it as text, so that a first line `# Title` after it
/// were no heading and front matter no front matter. It stays where it is,
/// before every section.
pub fn byte_order_mark(text: &str) -> usize {
    if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    }
}

/// The CommonMark extensions documents are read with, front matter
/// (YAML between `---` and `---` or `...`, TOML between `+++` lines) among them.
const OPTIONS: Options = Options::ENABLE_TABLES
    .union(Options::ENABLE_FOOTNOTES)
    .union(Options::ENABLE_STRIKETHROUGH)
    .union(Options::ENABLE_TASKLISTS)
    .union(Options::ENABLE_YAML_STYLE_METADATA_BLOCKS)
    .union(Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS);

/// Where a leading front matter block ends (its closing line and line
/// break included) as the outline reads it, else where a byte order mark
/// ends, else 0: what goes first in a document goes there.
pub fn front_matter_end(text: &str) -> usize {
    let skipped = byte_order_mark(text);
    let body = &text[skipped..];
    // the parse reads the whole text's blocks: only where one could begin
    if !(body.starts_with("---") || body.starts_with("+++")) {
        return skipped;
    }
    match Parser::new_ext(body, OPTIONS).into_offset_iter().next() {
        Some((Event::Start(Tag::MetadataBlock(_)), block)) => skipped + line_end(body, block.end),
        _ => skipped,
    }
}

/// Every heading outside containers (quotes, lists), in order, found lazily:
/// a caller that needs only the first stops the inline parsing there.
fn headings(text: &str) -> impl Iterator<Item = Heading> + '_ {
    let skipped = byte_order_mark(text);
    let mut depth = 0usize;
    let mut current: Option<Heading> = None;
    Parser::new_ext(&text[skipped..], OPTIONS)
        .into_offset_iter()
        .filter_map(move |(event, range)| {
            match event {
                Event::Start(Tag::Heading { level, .. }) if depth == 0 => {
                    let start = line_start(text, skipped + range.start).max(skipped);
                    let end = line_end(text, skipped + range.end);
                    current = Some((level as u8, String::new(), start, end));
                }
                Event::End(TagEnd::Heading(_)) => return current.take(),
                Event::Text(piece) | Event::Code(piece) => {
                    if let Some((_, title, _, _)) = current.as_mut() {
                        title.push_str(&piece);
                    }
                }
                Event::Start(
                    Tag::BlockQuote(_) | Tag::List(_) | Tag::Item | Tag::FootnoteDefinition(_),
                ) => depth += 1,
                Event::End(
                    TagEnd::BlockQuote(_)
                    | TagEnd::List(_)
                    | TagEnd::Item
                    | TagEnd::FootnoteDefinition,
                ) => depth = depth.saturating_sub(1),
                _ => {}
            }
            None
        })
}

/// Every heading outside containers (quotes, lists), in order.
pub fn outline(text: &str) -> Vec<Section> {
    let found: Vec<Heading> = headings(text).collect();
    let mut sections = Vec::with_capacity(found.len());
    let mut stack: Vec<(u8, String)> = Vec::new();
    let mut slugs: HashMap<String, usize> = HashMap::new();
    let mut lines = LineCounter::new(text);
    for (index, (level, title, start, heading_end)) in found.iter().enumerate() {
        let line = lines.line_at(*start);
        let title = title.trim().to_string();
        while stack.last().is_some_and(|(above, _)| *above >= *level) {
            stack.pop();
        }
        stack.push((*level, title.clone()));
        let path = stack
            .iter()
            .map(|(_, title)| title.as_str())
            .collect::<Vec<_>>()
            .join("/");
        let end = found[index + 1..]
            .iter()
            .find(|(next, ..)| next <= level)
            .map_or(text.len(), |(_, _, next_start, _)| *next_start);
        sections.push(Section {
            path,
            anchor: unique_slug(&title, &mut slugs),
            title,
            level: *level,
            line,
            start: *start,
            end,
            heading_bytes: heading_end - start,
        });
    }
    sections
}

/// A document's title: its first heading, else its file name without the extension.
pub fn title_of(text: &str, file_name: &str) -> String {
    headings(text)
        .map(|(_, title, _, _)| title.trim().to_string())
        .find(|title| !title.is_empty())
        .unwrap_or_else(|| {
            file_name
                .rsplit_once('.')
                .map_or(file_name, |(stem, _)| stem)
                .to_string()
        })
}

/// Where the line holding `offset` starts.
fn line_start(text: &str, offset: usize) -> usize {
    memchr::memrchr2(b'\n', b'\r', &text.as_bytes()[..offset]).map_or(0, |brk| brk + 1)
}

/// The offset just past the line holding `offset - 1` (its line break included).
fn line_end(text: &str, offset: usize) -> usize {
    let bytes = text.as_bytes();
    let past_break = |at: usize| match (bytes[at], bytes.get(at + 1)) {
        (b'\r', Some(b'\n')) => at + 2,
        _ => at + 1,
    };
    if offset > 0 && matches!(bytes[offset - 1], b'\n' | b'\r') {
        return past_break(offset - 1).max(offset);
    }
    memchr::memchr2(b'\n', b'\r', &bytes[offset..]).map_or(text.len(), |at| past_break(offset + at))
}

/// GitHub's heading slug: lower case, letters, digits, `-` and `_` kept,
/// spaces to `-`, the rest dropped; repeats get `-1`, `-2`, ...
fn unique_slug(title: &str, seen: &mut HashMap<String, usize>) -> String {
    let base: String = title
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect();
    let count = seen.entry(base.clone()).or_insert(0);
    let slug = if *count == 0 {
        base.clone()
    } else {
        format!("{base}-{count}")
    };
    *count += 1;
    slug
}

/// The section `wanted` names (leading `#`s ignored): the one section with
/// that full heading path, else the section with that anchor, else the
/// one section a tail of whose path it is (its title alone, `Setup/Install`,
/// ...). A tail is matched title by title, so `Output` does not name a
/// heading `Input/Output`; a name several sections fit is refused with their
/// anchors, which always tell them apart.
pub fn find<'a>(
    sections: &'a [Section],
    field: &str,
    wanted: &str,
) -> Result<&'a Section, ToolError> {
    // an anchor as a link writes it (`#install`), a heading as Markdown does (`## Install`)
    let wanted = wanted.trim().trim_start_matches('#').trim_start();
    let full: Vec<&Section> = sections.iter().filter(|s| s.path == wanted).collect();
    if let [one] = full.as_slice() {
        return Ok(one);
    }
    // anchors are unique: one settles even a path that several sections share
    if let Some(section) = sections.iter().find(|s| s.anchor == wanted) {
        return Ok(section);
    }
    let candidates = if full.is_empty() {
        let parents = parents(sections);
        (sections.iter().enumerate())
            .filter(|(at, _)| path_ends_with(sections, &parents, *at, wanted))
            .map(|(_, section)| section)
            .collect()
    } else {
        full
    };
    match candidates.as_slice() {
        [one] => Ok(one),
        [] => {
            let known: Vec<&str> = sections.iter().take(50).map(|s| s.path.as_str()).collect();
            Err(ToolError::not_found(
                Code::E_NOT_FOUND,
                format!(
                    "{field}: no section {wanted:?}; give a heading path such as {:?} or an anchor",
                    known.first().copied().unwrap_or("Setup/Install")
                ),
            )
            .with_details(json!({"field": field, "sections": known})))
        }
        many => {
            let anchors: Vec<&str> = many.iter().map(|s| s.anchor.as_str()).collect();
            let listed: Vec<Value> = (many.iter())
                .map(|s| json!({"path": s.path, "anchor": s.anchor, "line": s.line}))
                .collect();
            Err(ToolError::fail(
                Category::Validation,
                Code::E_AMBIGUOUS,
                format!(
                    "{field}: {wanted:?} names {} sections; give the anchor of the one you mean ({})",
                    many.len(),
                    anchors.join(", ")
                ),
            )
            .with_details(json!({"field": field, "candidates": listed})))
        }
    }
}

/// Each section's parent: the nearest section before it with a bigger heading.
fn parents(sections: &[Section]) -> Vec<Option<usize>> {
    let mut open: Vec<usize> = Vec::new();
    (sections.iter().enumerate())
        .map(|(at, section)| {
            while open
                .last()
                .is_some_and(|&above| sections[above].level >= section.level)
            {
                open.pop();
            }
            let parent = open.last().copied();
            open.push(at);
            parent
        })
        .collect()
}

/// True when the titles from some ancestor of `sections[at]` down to it,
/// joined by `/`, are `wanted`.
fn path_ends_with(
    sections: &[Section],
    parents: &[Option<usize>],
    at: usize,
    wanted: &str,
) -> bool {
    let mut rest = wanted;
    let mut current = Some(at);
    while let Some(at) = current {
        let title = sections[at].title.as_str();
        if rest == title {
            return true;
        }
        match rest
            .strip_suffix(title)
            .and_then(|head| head.strip_suffix('/'))
        {
            Some(head) => rest = head,
            None => return false,
        }
        current = parents[at];
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text_lines::line_breaks;

    const TEXT: &str = "---\ntitle: x\n---\nintro\n# Guide\ntext\n## Setup\n```\n# not a heading\n```\n### Install\nsteps\n## Use\nmore\n> # quoted\n# Guide\nagain\n";

    #[test]
    fn headings_in_code_fences_quotes_and_front_matter_are_not_sections() {
        let sections = outline(TEXT);
        let paths: Vec<&str> = sections.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "Guide",
                "Guide/Setup",
                "Guide/Setup/Install",
                "Guide/Use",
                "Guide"
            ]
        );
        let anchors: Vec<&str> = sections.iter().map(|s| s.anchor.as_str()).collect();
        assert_eq!(anchors, ["guide", "setup", "install", "use", "guide-1"]);
    }

    #[test]
    fn a_byte_order_mark_is_no_part_of_the_first_heading_nor_of_any_section() {
        let text = "\u{feff}# Title\nintro\n## Part\nbody\n";
        let sections = outline(text);
        let paths: Vec<&str> = sections.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(paths, ["Title", "Title/Part"]);
        assert_eq!((sections[0].start, sections[0].line), (3, 1));
        assert_eq!(
            &text[sections[0].start..sections[0].body_start()],
            "# Title\n"
        );
        assert_eq!(title_of(text, "x.md"), "Title");
        // front matter after the mark is front matter still
        let fronted = "\u{feff}---\ntitle: x\n---\n# Real\n";
        let paths: Vec<String> = outline(fronted).into_iter().map(|s| s.path).collect();
        assert_eq!(paths, ["Real"]);
    }

    #[test]
    fn front_matter_ends_where_the_outline_reads_it_to() {
        let cases = [
            ("---\nx: 1\n---\nbody\n", "---\nx: 1\n---\n"),
            ("---\nx: 1\n...\nbody\n", "---\nx: 1\n...\n"),
            ("---\r\nx: 1\r\n---\r\nbody\r\n", "---\r\nx: 1\r\n---\r\n"),
            ("+++\nx = 1\n+++\nbody\n", "+++\nx = 1\n+++\n"),
            ("---\nx: 1\n---", "---\nx: 1\n---"),
            ("\u{feff}---\nx: 1\n---\n# T\n", "\u{feff}---\nx: 1\n---\n"),
            ("\u{feff}# T\n", "\u{feff}"),
            // a blank line after the opening rule: a rule and a setext
            // heading, whose section a prepend must not split
            ("---\n\nx: 1\n---\nbody\n", ""),
            ("---\nnot closed\n", ""),
            ("# T\n---\nx: 1\n---\n", ""),
        ];
        for (text, front) in cases {
            assert_eq!(&text[..front_matter_end(text)], front, "{text:?}");
        }
        assert_eq!(outline("---\n\nx: 1\n---\nbody\n")[0].start, 5);
    }

    #[test]
    fn a_section_holds_its_subsections_and_ends_at_the_next_peer() {
        let sections = outline(TEXT);
        let setup = &sections[1];
        assert_eq!(
            &TEXT[setup.start..setup.end],
            "## Setup\n```\n# not a heading\n```\n### Install\nsteps\n"
        );
        assert_eq!(
            &TEXT[setup.body_start()..setup.end],
            "```\n# not a heading\n```\n### Install\nsteps\n"
        );
        assert_eq!(setup.line, 7);
        let last = &sections[4];
        assert_eq!(&TEXT[last.start..last.end], "# Guide\nagain\n");
    }

    proptest::proptest! {
        #[test]
        fn any_text_has_sections_nested_within_it(text in "(#{1,3} ?|\\PC|\n|\r|\r\n|```|> |- |---|===){0,200}") {
            let sections = outline(&text);
            for section in &sections {
                proptest::prop_assert!(section.start <= section.body_start());
                proptest::prop_assert!(section.body_start() <= section.end);
                proptest::prop_assert!(section.end <= text.len());
                proptest::prop_assert!(text.is_char_boundary(section.start) && text.is_char_boundary(section.end));
                proptest::prop_assert!(find(&sections, "section", &section.anchor).is_ok());
                // counted once along the text, as counting from the top would
                proptest::prop_assert_eq!(section.line, line_breaks(&text, 0, section.start) + 1);
                // a heading starts its line, whichever line ending the text uses
                proptest::prop_assert!(section.start == 0 || matches!(text.as_bytes()[section.start - 1], b'\n' | b'\r'));
            }
            for pair in sections.windows(2) {
                proptest::prop_assert!(pair[0].start < pair[1].start, "one heading per line");
            }
            // the title stops parsing at the first titled heading: the outline's own
            let first_titled = sections.iter().map(|s| s.title.clone()).find(|t| !t.is_empty());
            proptest::prop_assert_eq!(
                title_of(&text, "notes.md"),
                first_titled.unwrap_or_else(|| "notes".to_string())
            );
        }
    }

    #[test]
    fn a_slash_inside_a_title_is_no_step_of_the_path_and_a_shared_path_is_ambiguous() {
        let text = "# Input/Output\nintro\n## Read / Write\none\n## Read / Write\ntwo\n# Input\n## Output\nthree\n";
        let sections = outline(text);
        let line = |wanted: &str| find(&sections, "section", wanted).map(|s| s.line);
        let code = |wanted: &str| match find(&sections, "section", wanted) {
            Err(ToolError::Fail(body)) => Some(body.code),
            _ => None,
        };
        // "Output" is half a title there, a whole one under "Input"
        assert_eq!(line("Output").ok(), Some(8));
        assert_eq!(line("Input").ok(), Some(7));
        assert_eq!(line("# Input").ok(), Some(7), "a heading line as written");
        assert_eq!(code("Write"), Some(Code::E_NOT_FOUND));
        assert_eq!(code("Output/Read / Write"), Some(Code::E_NOT_FOUND));
        // two sections share a full path: only their anchors tell them apart
        assert_eq!(code("Input/Output"), Some(Code::E_AMBIGUOUS));
        assert_eq!(code("Input/Output/Read / Write"), Some(Code::E_AMBIGUOUS));
        assert_eq!(code("Read / Write"), Some(Code::E_AMBIGUOUS));
        let Err(ToolError::Fail(body)) = find(&sections, "section", "Read / Write") else {
            panic!("ambiguous");
        };
        assert!(
            body.message.contains("read--write, read--write-1"),
            "{}",
            body.message
        );
        assert_eq!(
            body.details
                .as_ref()
                .map(|d| d["candidates"][1]["line"].clone()),
            Some(json!(5))
        );
        assert_eq!(line("read--write").ok(), Some(3));
        assert_eq!(line("read--write-1").ok(), Some(5));
        assert_eq!(line("inputoutput").ok(), Some(1));
    }

    #[test]
    fn sections_are_found_by_path_anchor_or_a_unique_tail() {
        let sections = outline(TEXT);
        assert_eq!(
            find(&sections, "section", "Guide/Setup/Install")
                .map(|s| s.line)
                .ok(),
            Some(11)
        );
        assert_eq!(
            find(&sections, "section", "install").map(|s| s.line).ok(),
            Some(11)
        );
        assert_eq!(
            find(&sections, "section", "Setup/Install")
                .map(|s| s.line)
                .ok(),
            Some(11)
        );
        assert_eq!(
            find(&sections, "section", "#guide-1").map(|s| s.line).ok(),
            Some(16)
        );
        assert!(find(&sections, "section", "Nowhere").is_err());
    }
}
