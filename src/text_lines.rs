//! Lines as CommonMark counts them: a line ends at LF, at CR LF, or at a
//! lone CR (old Mac files). Tree-sitter and `str::lines` count LF only, so
//! every place that numbers, splits or ends lines of Markdown does it here,
//! and a heading's line is the same number in documents, the graph and search.
//!
//! Knows no area.

/// Line breaks in `text[from..to]`, counting CR LF once and a lone CR as one;
/// `to` must not split a CR LF.
pub fn line_breaks(text: &str, from: usize, to: usize) -> usize {
    let bytes = text.as_bytes();
    memchr::memchr2_iter(b'\n', b'\r', &bytes[from..to])
        .filter(|&at| !(bytes[from + at] == b'\r' && bytes.get(from + at + 1) == Some(&b'\n')))
        .count()
}

/// The lines of `text` without their breaks; like `str::lines`, no empty
/// line after a final break.
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest.filter(|r| !r.is_empty())?;
        match current.find(['\n', '\r']) {
            None => {
                rest = None;
                Some(current)
            }
            Some(at) => {
                let past = if current[at..].starts_with("\r\n") {
                    at + 2
                } else {
                    at + 1
                };
                rest = Some(&current[past..]);
                Some(&current[..at])
            }
        }
    })
}

/// The line ending `text` uses first: LF, CR LF or a lone CR; LF when it
/// has none.
pub fn first_line_ending(text: &str) -> &'static str {
    let bytes = text.as_bytes();
    match memchr::memchr2(b'\n', b'\r', bytes) {
        Some(at) if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') => "\r\n",
        Some(at) if bytes[at] == b'\r' => "\r",
        _ => "\n",
    }
}

/// Numbers the lines of one text at offsets given in ascending order, each
/// from where the last one was counted (a file of thousands of headings is
/// counted once, not once a heading).
pub struct LineCounter<'a> {
    text: &'a str,
    counted_to: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    pub fn new(text: &'a str) -> LineCounter<'a> {
        LineCounter {
            text,
            counted_to: 0,
            line: 1,
        }
    }

    /// The 1-based line holding `offset`; an offset before the last one
    /// asked is counted from the start again.
    pub fn line_at(&mut self, offset: usize) -> usize {
        if offset < self.counted_to {
            (self.counted_to, self.line) = (0, 1);
        }
        self.line += line_breaks(self.text, self.counted_to, offset);
        self.counted_to = offset;
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_commonmark_line_ending_ends_a_line_and_cr_lf_ends_one() {
        assert_eq!(line_breaks("a\nb\r\nc\rd", 0, 8), 3);
        assert_eq!(line_breaks("a\r\rb", 0, 4), 2);
        assert_eq!(line_breaks("no break", 0, 8), 0);
    }

    #[test]
    fn lines_end_at_any_line_ending() {
        let found: Vec<&str> = lines("a\r\nb\rc\n\nd\r").collect();
        assert_eq!(found, ["a", "b", "c", "", "d"]);
        assert_eq!(lines("").count(), 0);
        assert_eq!(
            lines("x\ny\n").collect::<Vec<_>>(),
            "x\ny\n".lines().collect::<Vec<_>>(),
            "as str::lines where only LF ends lines"
        );
    }

    #[test]
    fn the_first_line_ending_is_the_texts() {
        assert_eq!(first_line_ending("a\r\nb\n"), "\r\n");
        assert_eq!(first_line_ending("a\rb\r\n"), "\r");
        assert_eq!(first_line_ending("a\nb\r"), "\n");
        assert_eq!(first_line_ending("none"), "\n");
    }

    #[test]
    fn a_counter_numbers_offsets_in_order_and_out_of_order_alike() {
        let text = "# One\r\rtext\r# Two\r\n\r\n## Three\n";
        let starts: Vec<usize> = ["# One", "# Two", "## Three"]
            .iter()
            .map(|heading| text.find(heading).unwrap())
            .collect();
        let mut counter = LineCounter::new(text);
        let lines: Vec<usize> = starts.iter().map(|&at| counter.line_at(at)).collect();
        assert_eq!(lines, [1, 4, 6]);
        assert_eq!(counter.line_at(starts[1]), 4);
    }
}
