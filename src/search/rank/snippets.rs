//! A hit's snippet: the line that matched, cut to a readable width around
//! the first match, with its highlights in characters.

use crate::search::query::regex_cache::Shared as Regex;

use crate::search::model::{Highlight, SNIPPET_CHARS};
use crate::search::query::Query;
use crate::search::query::plan::{LineMatcher, Spelled};

/// Finds where a query's words appear in a text: every spelling of every
/// positive term and each identifier part of two or more characters,
/// without regard to case, and the query's regex.
pub struct Highlighter {
    words: Option<Spelled>,
    regex: Option<Regex>,
    /// A code line's highlights are where it matched.
    lines: LineMatcher,
}

/// The query's words as one automaton when they are all ASCII (leftmost-
/// first in the regex's order, so both find the same), else as that regex.
fn words_of(alternatives: &[String]) -> Option<Spelled> {
    if alternatives.is_empty() {
        return None;
    }
    if alternatives.iter().all(|a| a.is_ascii())
        && let Some(automaton) = crate::search::query::plan::literal_automaton(alternatives)
    {
        return Some(Spelled::Automaton(automaton));
    }
    let escaped: Vec<String> = alternatives.iter().map(|a| regex::escape(a)).collect();
    crate::search::query::plan::words_regex(&escaped.join("|")).map(Spelled::Regex)
}

impl Highlighter {
    pub fn new(query: &Query, regex: Option<Regex>) -> Highlighter {
        let mut alternatives: Vec<String> = Vec::new();
        for term in &query.terms {
            alternatives.push(term.text.trim().to_string());
            let parts = term.parts();
            for part in parts {
                if part.chars().count() >= 2 {
                    alternatives.push(part.clone());
                }
            }
            if parts.len() > 1 {
                alternatives.push(parts.join("_"));
            }
        }
        alternatives.retain(|a| !a.is_empty());
        // longest first (as escaped for a regex), so a whole identifier wins
        // over its parts
        alternatives.sort_by_cached_key(|a| std::cmp::Reverse(regex::escape(a).len()));
        alternatives.dedup();
        Highlighter {
            words: words_of(&alternatives),
            lines: LineMatcher::new(query, regex.clone()),
            regex,
        }
    }

    /// What verifies the query's lines of code text.
    pub fn line_matcher(&self) -> &LineMatcher {
        &self.lines
    }

    /// Where a line of code text the query found matched (byte ranges,
    /// sorted), as verifying it found.
    pub fn line_ranges(&self, line: &str) -> Vec<(usize, usize)> {
        // a line asked for some of the words only shows the words it holds
        self.lines.ranges(line).unwrap_or_else(|| self.ranges(line))
    }

    /// Byte ranges of matches in `text`, sorted, not overlapping.
    pub fn ranges(&self, text: &str) -> Vec<(usize, usize)> {
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        if let Some(words) = &self.words {
            ranges.extend(words.find_iter(text));
        }
        if let Some(regex) = &self.regex {
            ranges.extend(regex.find_iter(text).map(|m| (m.start(), m.end())));
        }
        ranges.retain(|(s, e)| e > s);
        ranges.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        merged
    }

    pub fn matches(&self, text: &str) -> bool {
        self.words.as_ref().is_some_and(|w| w.is_match(text))
            || self.regex.as_ref().is_some_and(|r| r.is_match(text))
    }

    /// The first line of `text` that matches, with its 0-based index; lines
    /// end at any of CommonMark's line endings, as the outline counts them.
    pub fn first_line<'a>(&self, text: &'a str) -> Option<(usize, &'a str)> {
        crate::text_lines::lines(text)
            .enumerate()
            .find(|(_, line)| self.matches(line))
    }
}

/// `line` cut to [`SNIPPET_CHARS`] around its first range, with the ranges
/// moved to character offsets in the cut. Walks only the cut and the
/// characters just before it, so a minified line of megabytes with
/// thousands of matches costs what a short one does.
pub fn snippet(line: &str, ranges: &[(usize, usize)]) -> (String, Vec<Highlight>) {
    let line = line.trim_end();
    let first = floor_boundary(line, ranges.first().map_or(0, |(start, _)| *start));
    if line.len() <= 4 * SNIPPET_CHARS && line.is_ascii() {
        // a byte is a character: nothing is counted
        let from = first
            .saturating_sub(SNIPPET_CHARS / 3)
            .min(line.len().saturating_sub(SNIPPET_CHARS));
        let to = (from + SNIPPET_CHARS).min(line.len());
        return highlighted(line, ranges, from..to, |byte| {
            (byte.clamp(from, to) - from) as u32
        });
    }
    // a third of the width before the first match, unless the line ends sooner
    let from =
        chars_back(line, first, SNIPPET_CHARS / 3).min(chars_back(line, line.len(), SNIPPET_CHARS));
    let to = line[from..]
        .char_indices()
        .nth(SNIPPET_CHARS)
        .map_or(line.len(), |(at, _)| from + at);
    let starts: Vec<usize> = line[from..to]
        .char_indices()
        .map(|(at, _)| from + at)
        .collect();
    highlighted(line, ranges, from..to, |byte| {
        starts.partition_point(|at| *at < byte) as u32
    })
}

/// The cut `bytes` of `line` and the ranges within it, moved to the
/// characters `char_at` counts from the cut's start.
fn highlighted(
    line: &str,
    ranges: &[(usize, usize)],
    bytes: std::ops::Range<usize>,
    char_at: impl Fn(usize) -> u32,
) -> (String, Vec<Highlight>) {
    let highlights = ranges
        .iter()
        .filter(|(start, end)| *end > bytes.start && *start < bytes.end)
        .map(|(start, end)| Highlight {
            start: char_at(*start),
            end: char_at(*end),
        })
        .collect();
    (line[bytes].to_string(), highlights)
}

/// The byte offset `count` characters before `at` (or 0).
fn chars_back(text: &str, at: usize, count: usize) -> usize {
    text[..at]
        .char_indices()
        .rev()
        .take(count)
        .last()
        .map_or(at, |(start, _)| start)
}

fn floor_boundary(text: &str, byte: usize) -> usize {
    let mut byte = byte.min(text.len());
    while !text.is_char_boundary(byte) {
        byte -= 1;
    }
    byte
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_long_line_is_cut_around_its_match_and_highlights_move_with_it() {
        let line = format!("{}needle{}", "x".repeat(500), "y".repeat(500));
        let (cut, highlights) = snippet(&line, &[(500, 506)]);
        assert_eq!(cut.chars().count(), SNIPPET_CHARS);
        let h = highlights[0];
        let shown: String = cut
            .chars()
            .skip(h.start as usize)
            .take((h.end - h.start) as usize)
            .collect();
        assert_eq!(shown, "needle");
    }

    #[test]
    fn highlights_count_characters_not_bytes() {
        let (cut, highlights) = snippet("é needle", &[(3, 9)]);
        assert_eq!(cut, "é needle");
        assert_eq!(highlights, vec![Highlight { start: 2, end: 8 }]);
    }

    /// The plain statement of the cut, counting characters from the start
    /// of the line for every range.
    fn counted_snippet(line: &str, ranges: &[(usize, usize)]) -> (String, Vec<Highlight>) {
        let line = line.trim_end();
        let char_index = |byte: usize| {
            let byte = byte.min(line.len());
            line.char_indices().take_while(|(at, _)| *at < byte).count()
        };
        let total = line.chars().count();
        let first = ranges.first().map_or(0, |(start, _)| char_index(*start));
        let skip = if total <= SNIPPET_CHARS || first < SNIPPET_CHARS / 3 {
            0
        } else {
            (first - SNIPPET_CHARS / 3).min(total - SNIPPET_CHARS)
        };
        let (from, to) = (skip, (skip + SNIPPET_CHARS).min(total));
        let cut: String = line.chars().skip(from).take(to - from).collect();
        let highlights = ranges
            .iter()
            .map(|(start, end)| (char_index(*start), char_index(*end)))
            .filter(|(start, end)| *end > from && *start < to)
            .map(|(start, end)| Highlight {
                start: (start.max(from) - from) as u32,
                end: (end.min(to) - from) as u32,
            })
            .collect();
        (cut, highlights)
    }

    #[test]
    fn a_megabyte_line_full_of_matches_is_cut_in_one_walk() {
        let line = "abc ".repeat(250_000);
        let ranges: Vec<(usize, usize)> = (0..250_000).map(|n| (n * 4, n * 4 + 3)).collect();
        let (cut, highlights) = snippet(&line, &ranges);
        assert_eq!(cut.chars().count(), SNIPPET_CHARS);
        assert_eq!(highlights.len(), SNIPPET_CHARS / 4);
    }

    /// Sorted ranges of `line` on character boundaries, from (start, length) picks.
    fn picked_ranges(line: &str, picks: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let mut ranges: Vec<(usize, usize)> = picks
            .iter()
            .map(|(at, len)| {
                let start = floor_boundary(line, *at);
                (start, floor_boundary(line, start + len).max(start))
            })
            .collect();
        ranges.sort_unstable();
        ranges
    }

    proptest! {
        #[test]
        fn the_cut_and_its_highlights_are_those_counted_from_the_line_start(
            line in "(\\PC|[ ]){0,600}",
            picks in proptest::collection::vec((0usize..700, 0usize..30), 0..6),
        ) {
            let ranges = picked_ranges(&line, &picks);
            prop_assert_eq!(snippet(&line, &ranges), counted_snippet(&line, &ranges));
        }

        /// The same for ASCII lines, short (cut without counting) and long.
        #[test]
        fn an_ascii_cut_and_its_highlights_are_those_counted_from_the_line_start(
            line in "[ -~]{0,1100}",
            picks in proptest::collection::vec((0usize..1200, 0usize..30), 0..6),
        ) {
            let ranges = picked_ranges(&line, &picks);
            prop_assert_eq!(snippet(&line, &ranges), counted_snippet(&line, &ranges));
        }

        #[test]
        fn snippets_stay_within_the_line(line in "\\PC{0,400}", a in 0usize..500, len in 0usize..20) {
            let start = (0..=a.min(line.len())).rev().find(|i| line.is_char_boundary(*i)).unwrap_or(0);
            let end = (start..=(start + len).min(line.len())).rev().find(|i| line.is_char_boundary(*i)).unwrap_or(start);
            let (cut, highlights) = snippet(&line, &[(start, end)]);
            let chars = cut.chars().count() as u32;
            prop_assert!(chars as usize <= SNIPPET_CHARS);
            for h in highlights {
                prop_assert!(h.start <= h.end && h.end <= chars);
            }
        }
    }

    proptest::proptest! {
        /// The automaton of ASCII words finds the ranges the regex of
        /// the same words finds.
        #[test]
        fn ascii_words_are_found_where_their_regex_finds_them(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "getKey", "GET_KEY", "get", "key", "\u{212a}ey", "k\u{e9}y", "json Response",
                    "a.b", "A.B", " ", "_", "(", "x", "\n",
                ]),
                0..30,
            ),
            words in proptest::collection::vec(
                proptest::sample::select(vec!["getkey", "get_key", "get", "key", "json response", "a.b", "ke"]),
                1..5,
            ),
        ) {
            let words: Vec<String> = words.into_iter().map(str::to_string).collect();
            let text = pieces.concat();
            let ranges = |w: &Spelled| w.find_iter(&text).collect::<Vec<_>>();
            let Some(ascii) = words_of(&words) else {
                return Err(proptest::test_runner::TestCaseError::fail("no words"));
            };
            proptest::prop_assert!(matches!(ascii, Spelled::Automaton(_)));
            let escaped: Vec<String> = words.iter().map(|w| regex::escape(w)).collect();
            let by_regex = Spelled::Regex(
                crate::search::query::plan::words_regex(&escaped.join("|")).unwrap(),
            );
            proptest::prop_assert_eq!(ranges(&ascii), ranges(&by_regex));
            proptest::prop_assert_eq!(ascii.is_match(&text), by_regex.is_match(&text));
        }
    }
}
