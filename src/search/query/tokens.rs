//! Identifier-aware words: `parseHttpRequest`, `parse_http_request`,
//! `ParseHTTPRequest` and `parse http request` all come down to the parts
//! `parse`, `http`, `request`. Identifiers are split *before* they are
//! lower-cased (lower-casing first loses the camelCase boundaries).

/// The lower-cased parts of one run of letters, digits and underscores:
/// split at underscores, at a lower-to-upper step (`parseHttp`), at the end of
/// an acronym (`HTTPRequest`), and between letters and digits (`utf8`).
pub fn parts(run: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = run.chars().collect();
    for (at, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut parts);
            continue;
        }
        if let Some(&before) = at.checked_sub(1).and_then(|b| chars.get(b))
            && before.is_alphanumeric()
        {
            let after = chars.get(at + 1).copied();
            let camel_step = before.is_lowercase() && c.is_uppercase();
            let acronym_end = before.is_uppercase()
                && c.is_uppercase()
                && after.is_some_and(|a| a.is_lowercase());
            let digit_step = before.is_numeric() != c.is_numeric();
            if camel_step || acronym_end || digit_step {
                flush(&mut current, &mut parts);
            }
        }
        // some capitals lower-case to a letter and a combining mark: keep the letter
        current.extend(c.to_lowercase().filter(|l| l.is_alphanumeric()));
    }
    flush(&mut current, &mut parts);
    parts
}

fn flush(current: &mut String, parts: &mut Vec<String>) {
    if !current.is_empty() {
        parts.push(std::mem::take(current));
    }
}

/// The runs of letters, digits and underscores in `text`, with their byte offsets.
pub fn runs(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|run| run.chars().any(char::is_alphanumeric))
        .map(move |run| (run.as_ptr() as usize - text.as_ptr() as usize, run))
}

/// The words an index keeps for `text`: every run's parts, then, for a run
/// of several parts, the parts joined (`parsehttprequest`), so an exact
/// identifier matches as one word and each of its parts matches on its own.
pub fn index_words(text: &str) -> String {
    let mut words = String::with_capacity(text.len() + text.len() / 4);
    for (_, run) in runs(text) {
        let parts = parts(run);
        for part in &parts {
            push_word(&mut words, part);
        }
        if parts.len() > 1 {
            push_word(&mut words, &parts.concat());
        }
    }
    words
}

fn push_word(words: &mut String, word: &str) {
    if !words.is_empty() {
        words.push(' ');
    }
    words.push_str(word);
}

/// The parts of every run of `text`, in order.
pub fn all_parts(text: &str) -> Vec<String> {
    runs(text).flat_map(|(_, run)| parts(run)).collect()
}

/// `text` reduced to its parts joined: the form two spellings of one
/// identifier share (`parse_http_request` and `ParseHTTPRequest` give
/// `parsehttprequest`).
pub fn folded(text: &str) -> String {
    all_parts(text).concat()
}

/// Whether the match at `start..end` of `line` begins and ends on a word
/// boundary: a non-identifier character, the line's edge, or a camelCase step.
pub fn on_word_boundaries(line: &str, start: usize, end: usize) -> bool {
    let before = line[..start].chars().next_back();
    let first = line[start..end].chars().next();
    let last = line[start..end].chars().next_back();
    let after = line[end..].chars().next();
    let starts = match (before, first) {
        (None, _) => true,
        (Some(b), Some(f)) => !is_word_char(b) || (b.is_lowercase() && f.is_uppercase()),
        (Some(_), None) => false,
    };
    let ends = match (last, after) {
        (_, None) => true,
        (Some(l), Some(a)) => !is_word_char(a) || (l.is_lowercase() && a.is_uppercase()),
        (None, Some(_)) => false,
    };
    starts && ends
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spellings_of_one_identifier_share_their_parts() {
        let expected = vec!["parse", "http", "request"];
        for spelling in [
            "parseHttpRequest",
            "parse_http_request",
            "ParseHTTPRequest",
            "PARSE_HTTP_REQUEST",
        ] {
            assert_eq!(parts(spelling), expected, "{spelling}");
            assert_eq!(folded(spelling), "parsehttprequest");
        }
        assert_eq!(all_parts("parse http request"), expected);
    }

    #[test]
    fn digits_and_acronyms_split() {
        assert_eq!(parts("utf8Decode"), vec!["utf", "8", "decode"]);
        assert_eq!(parts("HTTP_OK"), vec!["http", "ok"]);
        assert_eq!(parts("__init__"), vec!["init"]);
        assert_eq!(parts("IOError"), vec!["io", "error"]);
    }

    #[test]
    fn index_words_keep_the_parts_and_the_whole() {
        assert_eq!(
            index_words("def select_related(self):"),
            "def select related selectrelated self"
        );
        assert_eq!(index_words("a->b"), "a b");
    }

    #[test]
    fn word_boundaries_include_camel_case_steps() {
        let line = "let parseHttp = http_get(x);";
        let at = line.find("Http").unwrap();
        assert!(on_word_boundaries(line, at, at + 4));
        let at = line.find("http_").unwrap();
        assert!(!on_word_boundaries(line, at, at + 4));
        assert!(on_word_boundaries(line, 4, 13));
    }

    proptest! {
        #[test]
        fn parts_are_lower_case_alphanumeric_and_never_empty(text in "\\PC{0,40}") {
            for part in all_parts(&text) {
                prop_assert!(!part.is_empty());
                prop_assert!(part.chars().all(char::is_alphanumeric));
                prop_assert_eq!(part.to_lowercase(), part.clone());
            }
            let _ = index_words(&text);
        }

        #[test]
        fn boundaries_never_panic(text in "\\PC{0,20}", a in 0usize..30, b in 0usize..30) {
            let (start, end) = (a.min(b), a.max(b));
            if end <= text.len() && text.is_char_boundary(start) && text.is_char_boundary(end) {
                let _ = on_word_boundaries(&text, start, end);
            }
        }
    }
}
