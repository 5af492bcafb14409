//! Trigrams as the index keeps them: each distinct lower-cased trigram of a
//! text as a 32-bit FNV-1a hash written in hex, one token per trigram. The
//! same function makes a file's tokens and a query's, so they always agree;
//! a hash two trigrams share only widens the prefilter, never narrows it.

/// The shortest text a trigram prefilter can narrow.
pub const MIN_CHARS: usize = 3;

/// The distinct trigram tokens of `text`, space-separated, in no set order.
pub fn tokens(text: &str) -> String {
    let hashes = hashes(text);
    let mut out = String::with_capacity(hashes.len() * 9);
    for hash in hashes {
        if !out.is_empty() {
            out.push(' ');
        }
        push_hex(&mut out, hash);
    }
    out
}

/// The distinct trigram tokens of `text` as a list (a query's), in order of
/// first appearance; empty under three characters.
pub fn token_list(text: &str) -> Vec<String> {
    // a query's words are short: a list is the cheapest set
    let mut seen = Vec::new();
    trigram_hashes(text)
        .filter(|hash| {
            let new = !seen.contains(hash);
            if new {
                seen.push(*hash);
            }
            new
        })
        .map(|hash| {
            let mut token = String::with_capacity(8);
            push_hex(&mut token, hash);
            token
        })
        .collect()
}

/// Whether one of the words of `text` (split at whitespace) has a
/// trigram: what makes `token_list` of it nonempty.
pub fn has_trigram_in_a_word(text: &str) -> bool {
    text.split_whitespace()
        .any(|word| trigram_hashes(word).next().is_some())
}

/// Sorted and deduplicated: cheaper than a hash set for thousands of values.
fn hashes(text: &str) -> Vec<u32> {
    let mut all: Vec<u32> = trigram_hashes(text).collect();
    all.sort_unstable();
    all.dedup();
    all
}

fn trigram_hashes(text: &str) -> impl Iterator<Item = u32> + '_ {
    let mut window: [char; 3] = ['\0'; 3];
    let mut filled = 0usize;
    text.chars()
        .flat_map(char::to_lowercase)
        .filter_map(move |c| {
            window = [window[1], window[2], c];
            filled += 1;
            (filled >= MIN_CHARS).then(|| fnv1a(&window))
        })
}

fn fnv1a(window: &[char; 3]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    let mut bytes = [0u8; 4];
    for c in window {
        for byte in c.encode_utf8(&mut bytes).as_bytes() {
            hash ^= u32::from(*byte);
            hash = hash.wrapping_mul(0x0100_0193);
        }
    }
    hash
}

fn push_hex(out: &mut String, hash: u32) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    // a leading letter: FTS5 never reads the token as a number or keyword
    out.push('g');
    for shift in (0..8).rev() {
        out.push(DIGITS[((hash >> (shift * 4)) & 0xf) as usize] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    #[test]
    fn a_query_shares_its_tokens_with_every_text_that_holds_it() {
        let file: HashSet<String> = tokens("fn parseHttpRequest() {}")
            .split(' ')
            .map(str::to_string)
            .collect();
        for token in token_list("HTTPREQ") {
            assert!(file.contains(&token), "{token}");
        }
        assert!(token_list("ab").is_empty());
        assert_eq!(token_list("aaaa").len(), 1);
    }

    proptest! {
        #[test]
        fn every_substring_s_tokens_are_the_texts(text in "\\PC{3,60}", a in 0usize..60, len in 3usize..20) {
            let chars: Vec<char> = text.chars().collect();
            let start = a.min(chars.len().saturating_sub(3));
            let end = (start + len).min(chars.len());
            let part: String = chars[start..end].iter().collect();
            let all: HashSet<String> = tokens(&text).split(' ').map(str::to_string).collect();
            for token in token_list(&part) {
                prop_assert!(all.contains(&token));
            }
        }
    }
}
