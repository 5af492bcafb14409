//! Plain English in a query: the common words a question holds that find
//! nothing by themselves (`a`, `with`, `the`: NLTK's list), and the stem
//! that lets `passwords` find `password` and `compressing` find `compress`
//! (Snowball's English stemmer).

use rust_stemmers::{Algorithm, Stemmer};
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::OnceLock;

/// Whether `word` (any case) is a common English word a question can do
/// without.
pub fn is_stop_word(word: &str) -> bool {
    static WORDS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    let words = WORDS.get_or_init(|| {
        stop_words::lookup("en")
            .unwrap_or_default()
            .iter()
            .copied()
            .collect()
    });
    words.contains(word.to_lowercase().as_str())
}

/// The stem of a lower-case word; a word of digits or other scripts stays
/// as it is.
pub fn stem(word: &str) -> Cow<'_, str> {
    static ENGLISH: OnceLock<Stemmer> = OnceLock::new();
    if !word.chars().all(|c| c.is_ascii_alphabetic()) {
        return Cow::Borrowed(word);
    }
    ENGLISH
        .get_or_init(|| Stemmer::create(Algorithm::English))
        .stem(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_small_words_of_a_question_are_stop_words_and_names_are_not() {
        for word in ["a", "with", "the", "How", "do", "I", "into"] {
            assert!(is_stop_word(word), "{word}");
        }
        for word in [
            "gzip", "password", "slug", "url", "path", "request", "model",
        ] {
            assert!(!is_stop_word(word), "{word}");
        }
    }

    #[test]
    fn english_inflections_share_a_stem_and_other_words_keep_theirs() {
        assert_eq!(stem("passwords"), stem("password"));
        assert_eq!(stem("compressing"), stem("compress"));
        assert_eq!(stem("responses"), stem("response"));
        assert_ne!(stem("hash"), stem("has"));
        assert_eq!(stem("utf8"), "utf8");
        assert_eq!(stem("größe"), "größe");
    }
}
