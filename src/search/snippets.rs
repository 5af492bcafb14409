//! A hit's snippet: the line that matched, cut to a readable width around
//! the first match, with its highlights in characters.

use regex::Regex;

use super::model::Highlight;
use super::query::Query;
use super::words;

/// The widest snippet, in characters.
pub const SNIPPET_CHARS: usize = 240;

/// Finds where a query's words appear in a text: every spelling of every
/// positive term and each identifier part of two or more characters,
/// without regard to case, and the query's regex.
pub struct Highlighter {
    words: Option<Regex>,
    regex: Option<Regex>,
}

impl Highlighter {
    pub fn new(query: &Query, regex: Option<Regex>) -> Highlighter {
        let mut alternatives: Vec<String> = Vec::new();
        for term in &query.terms {
            alternatives.push(regex::escape(term.text.trim()));
            for part in term.parts() {
                if part.chars().count() >= 2 {
                    alternatives.push(regex::escape(&part));
                }
            }
            let parts = term.parts();
            if parts.len() > 1 {
                alternatives.push(regex::escape(&parts.join("_")));
            }
        }
        alternatives.retain(|a| !a.is_empty());
        // longest first, so a whole identifier wins over its parts
        alternatives.sort_by_key(|a| std::cmp::Reverse(a.len()));
        alternatives.dedup();
        let words = (!alternatives.is_empty())
            .then(|| super::matching::words_regex(&alternatives.join("|")))
            .flatten();
        Highlighter { words, regex }
    }

    /// Byte ranges of matches in `text`, sorted, not overlapping.
    pub fn ranges(&self, text: &str) -> Vec<(usize, usize)> {
        let mut ranges: Vec<(usize, usize)> = self
            .words
            .iter()
            .chain(self.regex.iter())
            .flat_map(|r| r.find_iter(text).map(|m| (m.start(), m.end())))
            .filter(|(s, e)| e > s)
            .collect();
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
        self.words
            .iter()
            .chain(self.regex.iter())
            .any(|r| r.is_match(text))
    }

    /// The first line of `text` that matches, with its 0-based index.
    pub fn first_line<'a>(&self, text: &'a str) -> Option<(usize, &'a str)> {
        text.lines()
            .enumerate()
            .find(|(_, line)| self.matches(line))
    }
}

/// `line` cut to [`SNIPPET_CHARS`] around its first range, with the ranges
/// moved to character offsets in the cut.
pub fn snippet(line: &str, ranges: &[(usize, usize)]) -> (String, Vec<Highlight>) {
    let line = line.trim_end();
    let total = line.chars().count();
    let first = ranges
        .first()
        .map_or(0, |(start, _)| char_index(line, *start));
    let skip = if total <= SNIPPET_CHARS || first < SNIPPET_CHARS / 3 {
        0
    } else {
        (first - SNIPPET_CHARS / 3).min(total - SNIPPET_CHARS)
    };
    let (from, to) = (skip, (skip + SNIPPET_CHARS).min(total));
    let cut: String = line.chars().skip(from).take(to - from).collect();
    let highlights = ranges
        .iter()
        .map(|(start, end)| (char_index(line, *start), char_index(line, *end)))
        .filter(|(start, end)| *end > from && *start < to)
        .map(|(start, end)| Highlight {
            start: (start.max(from) - from) as u32,
            end: (end.min(to) - from) as u32,
        })
        .collect();
    (cut, highlights)
}

fn char_index(text: &str, byte: usize) -> usize {
    let byte = byte.min(text.len());
    text.char_indices().take_while(|(at, _)| *at < byte).count()
}

/// Whether any of `ranges` in `line` begins and ends on word boundaries.
pub fn any_whole_word(line: &str, ranges: &[(usize, usize)]) -> bool {
    ranges
        .iter()
        .any(|(start, end)| words::on_word_boundaries(line, *start, *end))
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

    proptest! {
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
}
