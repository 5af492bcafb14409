//! Outlines of large documents, kept by content hash: an agent pages through
//! a large document one call a page, and each page needs the outline, whose
//! parse (pulldown-cmark, every paragraph's inlines included) cost 350 ms a
//! page for a 27 MB document of 20,000 sections. Kept only for texts the
//! parse is slow for, a few at a time, within a weight; a changed document
//! has another hash, so nothing here goes stale.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::sections::{self, Section};

/// Texts smaller than this are parsed again: it takes well under a millisecond.
const WORTH_KEEPING: usize = 256 << 10;
/// Outlines kept at once, and their weight together (headings' text and
/// their records), so a document of millions of headings is not kept.
const MOST_KEPT: usize = 8;
const MOST_WEIGHT: usize = 16 << 20;

struct Kept {
    hash: String,
    outline: Arc<[Section]>,
    weight: usize,
}

static KEPT: Mutex<VecDeque<Kept>> = Mutex::new(VecDeque::new());

/// The outline of `text`, its content hash taken only when the text is
/// large enough to be kept.
pub fn outline_of(text: &str) -> Arc<[Section]> {
    if text.len() < WORTH_KEEPING {
        return sections::outline(text).into();
    }
    outline(&super::chain::content_hash(text.as_bytes()), text)
}

/// The outline of `text`, whose content hash is `hash`.
pub fn outline(hash: &str, text: &str) -> Arc<[Section]> {
    if text.len() < WORTH_KEEPING {
        return sections::outline(text).into();
    }
    if let Some(found) = lock()
        .iter()
        .find(|kept| kept.hash == hash)
        .map(|kept| kept.outline.clone())
    {
        return found;
    }
    let outline: Arc<[Section]> = sections::outline(text).into();
    keep(hash, outline.clone());
    outline
}

fn keep(hash: &str, outline: Arc<[Section]>) {
    let weight = weight_of(&outline);
    if weight > MOST_WEIGHT {
        return;
    }
    let mut kept = lock();
    if kept.iter().any(|k| k.hash == hash) {
        return;
    }
    kept.push_front(Kept {
        hash: hash.to_string(),
        outline,
        weight,
    });
    let mut total: usize = kept.iter().map(|k| k.weight).sum();
    while kept.len() > MOST_KEPT || total > MOST_WEIGHT {
        match kept.pop_back() {
            Some(dropped) => total -= dropped.weight,
            None => break,
        }
    }
}

fn weight_of(outline: &[Section]) -> usize {
    outline
        .iter()
        .map(|s| std::mem::size_of::<Section>() + s.path.len() + s.anchor.len() + s.title.len())
        .sum()
}

/// The kept outlines; a writer that panicked left nothing half-made (each
/// change is one push or pop), so a poisoned lock is taken as it is.
fn lock() -> std::sync::MutexGuard<'static, VecDeque<Kept>> {
    KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept outlines are one for the process: tests that fill them take turns.
    static TURN: Mutex<()> = Mutex::new(());

    fn turn() -> std::sync::MutexGuard<'static, ()> {
        TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn large(sections: usize, tag: &str) -> String {
        let mut text = String::new();
        for n in 0..sections {
            text.push_str(&format!("## {tag} {n}\n\n{}\n\n", "words ".repeat(60)));
        }
        text
    }

    #[test]
    fn a_large_text_is_parsed_once_and_its_outline_equals_a_fresh_parse() {
        let _turn = turn();
        let text = large(1_000, "Part");
        assert!(text.len() >= WORTH_KEEPING);
        let hash = crate::docs::chain::content_hash(text.as_bytes());
        let first = outline(&hash, &text);
        let again = outline(&hash, &text);
        assert!(Arc::ptr_eq(&first, &again), "the second call parsed again");
        assert_eq!(&*first, sections::outline(&text).as_slice());
    }

    #[test]
    fn a_write_after_a_read_of_the_same_text_finds_the_outline_the_read_kept() {
        let _turn = turn();
        let text = large(900, "Read");
        let read = outline(&crate::docs::chain::content_hash(text.as_bytes()), &text);
        assert!(Arc::ptr_eq(&read, &outline_of(&text)));
        let small = "# A\n";
        assert_eq!(&*outline_of(small), sections::outline(small).as_slice());
    }

    #[test]
    fn another_text_under_the_same_hash_is_never_answered_from_another_document() {
        let _turn = turn();
        // a hash names one content: two texts give two hashes, two outlines
        let (one, two) = (large(700, "One"), large(700, "Two"));
        let (h1, h2) = (
            crate::docs::chain::content_hash(one.as_bytes()),
            crate::docs::chain::content_hash(two.as_bytes()),
        );
        assert_eq!(outline(&h1, &one)[0].title, "One 0");
        assert_eq!(outline(&h2, &two)[0].title, "Two 0");
        assert_eq!(outline(&h1, &one)[0].title, "One 0");
    }

    #[test]
    fn small_texts_are_not_kept_and_the_kept_stay_within_their_bounds() {
        let _turn = turn();
        let small = "# A\n\ntext\n";
        let hash = crate::docs::chain::content_hash(small.as_bytes());
        assert!(!Arc::ptr_eq(&outline(&hash, small), &outline(&hash, small)));
        for n in 0..(MOST_KEPT + 3) {
            let text = large(700, &format!("Doc{n}"));
            outline(&crate::docs::chain::content_hash(text.as_bytes()), &text);
        }
        let kept = lock();
        assert!(kept.len() <= MOST_KEPT);
        assert!(kept.iter().map(|k| k.weight).sum::<usize>() <= MOST_WEIGHT);
    }
}
