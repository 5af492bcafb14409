//! Which heading a patch would change outside what it replaced, said so that
//! the writer can see why the patch was refused. Compares outlines only;
//! knows nothing of operations, files or the store.

use super::sections::Section;

/// A heading's place in an outline as the comparison sees it: its level,
/// title and offset, and the line it is on.
#[derive(Clone, Copy)]
pub struct Heading<'a> {
    pub level: u8,
    pub title: &'a str,
    pub start: usize,
    pub line: usize,
}

impl<'a> Heading<'a> {
    /// `section`'s heading, moved to `start`.
    pub fn of(section: &'a Section, start: usize) -> Heading<'a> {
        Heading {
            level: section.level,
            title: &section.title,
            start,
            line: section.line,
        }
    }

    fn reads_as(&self, other: &Heading<'_>) -> bool {
        (self.level, self.title, self.start) == (other.level, other.title, other.start)
    }
}

/// The first place two outlines part.
#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    /// A heading whose level or title would read otherwise.
    Retitled {
        was: String,
        line: usize,
        now: String,
    },
    /// A heading that would be a heading no more.
    Lost { was: String, line: usize },
    /// Text that would become a heading (its line in the changed text).
    Gained { now: String, line: usize },
}

impl Change {
    /// What the change would do, as the end of "it would …"; `whose` says
    /// whose heading it is ("the heading", "the content's heading") and
    /// `lines_of` what its line counts in (" of the content", or nothing
    /// for the document as it was).
    pub fn describe(&self, whose: &str, lines_of: &str) -> String {
        match self {
            Change::Retitled { was, line, now } => {
                format!("make {whose} {was} on line {line}{lines_of} read {now}")
            }
            Change::Lost { was, line } => {
                format!("make {whose} {was} on line {line}{lines_of} plain text")
            }
            Change::Gained { now, line } => {
                format!("make {now} a heading (line {line} of the changed text)")
            }
        }
    }
}

/// The first heading `expected` and `found` disagree on, `None` when they agree.
pub fn first_change<'a, 'b>(
    expected: impl IntoIterator<Item = Heading<'a>>,
    found: impl IntoIterator<Item = Heading<'b>>,
) -> Option<Change> {
    let mut expected = expected.into_iter().peekable();
    let mut found = found.into_iter().peekable();
    loop {
        let change = match (expected.peek(), found.peek()) {
            (None, None) => return None,
            (Some(was), Some(now)) if was.reads_as(now) => {
                expected.next();
                found.next();
                continue;
            }
            (Some(was), Some(now)) if was.start == now.start => Change::Retitled {
                was: shown(was),
                line: was.line,
                now: shown(now),
            },
            (Some(was), Some(now)) if now.start < was.start => Change::Gained {
                now: shown(now),
                line: now.line,
            },
            (Some(was), _) => Change::Lost {
                was: shown(was),
                line: was.line,
            },
            (None, Some(now)) => Change::Gained {
                now: shown(now),
                line: now.line,
            },
        };
        return Some(change);
    }
}

/// The heading as Markdown writes it (`## Title`), quoted, cut to a line's worth.
fn shown(heading: &Heading<'_>) -> String {
    const MOST: usize = 60;
    let title = match heading.title.char_indices().nth(MOST) {
        Some((cut, _)) => format!("{}…", &heading.title[..cut]),
        None => heading.title.to_string(),
    };
    format!("\"{} {title}\"", "#".repeat(usize::from(heading.level)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(level: u8, title: &str, start: usize, line: usize) -> Heading<'_> {
        Heading {
            level,
            title,
            start,
            line,
        }
    }

    #[test]
    fn the_same_headings_are_no_change() {
        let both = [at(1, "A", 0, 1), at(2, "B", 10, 3)];
        assert_eq!(first_change(both, both), None);
        assert_eq!(first_change([], []), None);
    }

    #[test]
    fn names_the_first_heading_that_would_read_otherwise() {
        let was = [at(1, "A", 0, 1), at(2, "v1.0 - 2016", 10, 3)];
        let now = [at(1, "A", 0, 1), at(2, "[v1.0] - 2016", 10, 3)];
        let change = first_change(was, now);
        assert_eq!(
            change
                .as_ref()
                .map(|c| c.describe("the heading", ""))
                .as_deref(),
            Some("make the heading \"## v1.0 - 2016\" on line 3 read \"## [v1.0] - 2016\"")
        );
    }

    #[test]
    fn a_heading_lost_or_gained_is_named_with_its_line() {
        let lost = first_change([at(1, "A", 0, 1), at(2, "B", 10, 3)], [at(1, "A", 0, 1)]);
        assert_eq!(
            lost,
            Some(Change::Lost {
                was: "\"## B\"".into(),
                line: 3
            })
        );
        let gained = first_change([at(2, "B", 10, 3)], [at(1, "X", 4, 2), at(2, "B", 10, 3)]);
        assert_eq!(
            gained.map(|c| c.describe("the heading", "")).as_deref(),
            Some("make \"# X\" a heading (line 2 of the changed text)")
        );
    }

    #[test]
    fn a_long_title_is_cut_on_a_character_boundary() {
        let title = "é".repeat(100);
        let change = first_change([at(1, &title, 0, 1)], []);
        let Some(Change::Lost { was, .. }) = change else {
            panic!("a lost heading, not {change:?}");
        };
        assert_eq!(was, format!("\"# {}…\"", "é".repeat(60)));
    }
}
