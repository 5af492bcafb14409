//! Outlines of large documents, kept by content hash: an agent pages through
//! a large document one call a page, and each page needs the outline, whose
//! parse (pulldown-cmark, every paragraph's inlines included) cost 350 ms a
//! page for a 27 MB document of 20,000 sections. Kept only for texts the
//! parse is slow for, a few at a time, within a weight; a changed document
//! has another hash, so nothing here goes stale. Callers asking for one
//! outline at once wait for one parse, and a write keeps the outline its
//! patch parsed (`keep`) or parses its new text's outline ahead on a thread
//! of its own (`warm`), for the call that follows.
//!
//! Owns the kept outlines only; knows nothing of mounts, files or the store.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::sections::{self, Section};

/// Texts smaller than this are parsed again: it takes well under a millisecond.
const WORTH_KEEPING: usize = 256 << 10;
/// Outlines kept at once, and their weight together (headings' text and
/// their records), so a document of millions of headings is not kept.
const MOST_KEPT: usize = 8;
const MOST_WEIGHT: usize = 16 << 20;

/// An outline being parsed or parsed: whoever asks for it meanwhile waits
/// for the one parse rather than starting another.
type Cell = Arc<OnceLock<Arc<[Section]>>>;

struct Kept {
    hash: String,
    outline: Cell,
    /// Zero until parsed.
    weight: usize,
}

static KEPT: Mutex<VecDeque<Kept>> = Mutex::new(VecDeque::new());

/// The outline of `text`, whose content hash is `hash`.
pub fn outline(hash: &str, text: &str) -> Arc<[Section]> {
    if text.len() < WORTH_KEEPING {
        return sections::outline(text).into();
    }
    let cell = cell_for(hash);
    let outline = cell.get_or_init(|| parse(hash, text)).clone();
    settle(&cell, &outline);
    outline
}

/// Keeps `outline`, already parsed from a text of `len` bytes whose content
/// hash is `hash` (a patch's check parses its result), so that the call after
/// the write finds it without parsing again.
pub fn keep(hash: &str, len: usize, outline: Arc<[Section]>) {
    if len < WORTH_KEEPING {
        return;
    }
    let cell = cell_for(hash);
    let kept = cell.get_or_init(|| outline).clone();
    settle(&cell, &kept);
}

/// Parses the outline of a large text (its `bytes`, content hash `hash`) on
/// a thread of its own, so that the call after a write finds it kept. One at
/// a time: a text written while another is being parsed is parsed when first
/// asked for. Bytes that are not UTF-8 are never read as a document: skipped.
pub fn warm(hash: &str, bytes: &[u8]) {
    static WARMING: AtomicBool = AtomicBool::new(false);
    /// Lets the next warm-up start, however this one ended.
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            WARMING.store(false, Ordering::Release);
        }
    }
    if bytes.len() < WORTH_KEEPING {
        return;
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    if WARMING.swap(true, Ordering::AcqRel) {
        return;
    }
    let done = Done;
    let (hash, text) = (hash.to_string(), text.to_string());
    let spawned = std::thread::Builder::new()
        .name("cos-docs-outline".into())
        .spawn(move || {
            let _done = done;
            outline(&hash, &text);
        });
    if let Err(error) = spawned {
        tracing::debug!(%error, "no thread to parse an outline ahead: it is parsed when asked for");
    }
}

fn parse(hash: &str, text: &str) -> Arc<[Section]> {
    #[cfg(test)]
    tests::parsed(hash);
    #[cfg(not(test))]
    let _ = hash;
    sections::outline(text).into()
}

/// The cell kept for `hash`, made (and kept) if there is none yet.
fn cell_for(hash: &str) -> Cell {
    let mut kept = lock();
    if let Some(found) = kept.iter().find(|kept| kept.hash == hash) {
        return found.outline.clone();
    }
    let cell = Cell::default();
    kept.push_front(Kept {
        hash: hash.to_string(),
        outline: cell.clone(),
        weight: 0,
    });
    within_bounds(&mut kept);
    cell
}

/// Weighs a parsed outline: one heavier than all may weigh is let go of.
fn settle(cell: &Cell, outline: &[Section]) {
    let mut kept = lock();
    let Some(at) = kept.iter().position(|k| Arc::ptr_eq(&k.outline, cell)) else {
        return;
    };
    if kept[at].weight == 0 {
        kept[at].weight = weight_of(outline);
    }
    if kept[at].weight > MOST_WEIGHT {
        kept.remove(at);
    }
    within_bounds(&mut kept);
}

/// Lets go of the oldest outlines until the rest are within both bounds.
fn within_bounds(kept: &mut VecDeque<Kept>) {
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
/// change is one push, remove or pop), so a poisoned lock is taken as it is.
fn lock() -> std::sync::MutexGuard<'static, VecDeque<Kept>> {
    KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash of every large text parsed in this process, in order.
    static PARSED: Mutex<Vec<String>> = Mutex::new(Vec::new());

    pub(super) fn parsed(hash: &str) {
        PARSED.lock().unwrap().push(hash.to_string());
    }

    fn parses_of(hash: &str) -> usize {
        PARSED.lock().unwrap().iter().filter(|h| *h == hash).count()
    }

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
    fn callers_asking_at_once_for_one_outline_share_one_parse() {
        let _turn = turn();
        let text = large(900, "Shared");
        let hash = crate::docs::chain::content_hash(text.as_bytes());
        let callers: Vec<_> = (0..4)
            .map(|_| {
                let (hash, text) = (hash.clone(), text.clone());
                std::thread::spawn(move || outline(&hash, &text))
            })
            .collect();
        let outlines: Vec<_> = callers.into_iter().map(|c| c.join().unwrap()).collect();
        assert_eq!(parses_of(&hash), 1, "parsed more than once");
        assert!(outlines.iter().all(|o| Arc::ptr_eq(o, &outlines[0])));
        assert_eq!(&*outlines[0], sections::outline(&text).as_slice());
    }

    #[test]
    fn a_large_text_is_parsed_ahead_on_its_own_thread_and_a_small_one_never() {
        let _turn = turn();
        let text = large(900, "Warm");
        let hash = crate::docs::chain::content_hash(text.as_bytes());
        warm(&hash, text.as_bytes());
        let ready = || {
            lock()
                .iter()
                .any(|kept| kept.hash == hash && kept.outline.get().is_some())
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !ready() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(ready(), "not parsed ahead");
        outline(&hash, &text);
        assert_eq!(parses_of(&hash), 1, "parsed again when asked for");
        let small = "# Small\n";
        let small_hash = crate::docs::chain::content_hash(small.as_bytes());
        warm(&small_hash, small.as_bytes());
        // nor bytes that are not UTF-8, which no read takes
        let mut latin = large(900, "Latin").into_bytes();
        latin.push(0xE9);
        let latin_hash = crate::docs::chain::content_hash(&latin);
        warm(&latin_hash, &latin);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(parses_of(&small_hash) + parses_of(&latin_hash), 0);
        assert!(!lock().iter().any(|kept| kept.hash == small_hash));
    }

    #[test]
    fn an_outline_handed_over_is_kept_for_a_large_text_and_never_parsed_again() {
        let _turn = turn();
        let text = large(900, "Handed");
        let hash = crate::docs::chain::content_hash(text.as_bytes());
        let parsed: Arc<[Section]> = sections::outline(&text).into();
        keep(&hash, text.len(), parsed.clone());
        let asked = outline(&hash, &text);
        assert!(Arc::ptr_eq(&asked, &parsed), "not the outline handed over");
        assert_eq!(parses_of(&hash), 0, "parsed again when asked for");
        let small = "# Small\n";
        let small_hash = crate::docs::chain::content_hash(small.as_bytes());
        keep(&small_hash, small.len(), sections::outline(small).into());
        assert!(!lock().iter().any(|kept| kept.hash == small_hash));
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
