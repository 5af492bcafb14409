//! Cutting a document's text into pages that fit an answer, at a heading
//! where one is near, else at a line end, else between characters: a page is
//! never empty and the pages joined are the text byte for byte.

/// What a character costs in the envelope's weight once JSON-encoded (see
/// `envelope::measure`: ASCII one, any other character four).
fn weight(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' => 2,
        c if (c as u32) < 0x20 => 6,
        c if c.is_ascii() => 1,
        _ => 4,
    }
}

/// The weight of `text` as a JSON string.
pub fn text_weight(text: &str) -> usize {
    text.chars().map(weight).sum()
}

/// Where the page starting at `start` ends, within `limit` weight;
/// `headings` are the byte offsets where sections start.
pub fn page_end(text: &str, start: usize, limit: usize, headings: &[usize]) -> usize {
    let limit = limit.max(8);
    let mut spent = 0;
    let mut last_line = None;
    let mut last_heading = None;
    for (offset, c) in text[start..].char_indices() {
        let at = start + offset;
        spent += weight(c);
        if spent > limit {
            if let Some(heading) = last_heading.filter(|h: &(usize, usize)| h.1 * 2 >= limit) {
                return heading.0;
            }
            if let Some(line) = last_line {
                return line;
            }
            return if at > start { at } else { at + c.len_utf8() };
        }
        if c == '\n' {
            let next = at + 1;
            last_line = Some(next);
            if headings.binary_search(&next).is_ok() {
                last_heading = Some((next, spent));
            }
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pages(text: &str, limit: usize, headings: &[usize]) -> Vec<String> {
        let mut out = Vec::new();
        let mut start = 0;
        while start < text.len() {
            let end = page_end(text, start, limit, headings);
            assert!(end > start, "an empty page at {start}");
            out.push(text[start..end].to_string());
            start = end;
        }
        out
    }

    #[test]
    fn pages_end_at_headings_when_one_is_near() {
        let text = format!("# A\n{}\n# B\n{}\n", "a".repeat(60), "b".repeat(60));
        let headings = [0, text.find("# B").unwrap_or(0)];
        let cut = pages(&text, 100, &headings);
        assert_eq!(cut[0], format!("# A\n{}\n", "a".repeat(60)));
        assert_eq!(cut.concat(), text);
    }

    proptest! {
        #[test]
        fn pages_rebuild_any_text_and_stay_within_their_weight(
            text in "(\\PC|\n|\"|\\\\){0,400}",
            limit in 8usize..200,
        ) {
            let headings: Vec<usize> = text.match_indices('\n').map(|(at, _)| at + 1).collect();
            let cut = pages(&text, limit, &headings);
            prop_assert_eq!(cut.concat(), text.clone());
            for page in &cut {
                // a page over the limit holds one character only
                prop_assert!(text_weight(page) <= limit || page.chars().count() == 1);
            }
        }
    }
}
