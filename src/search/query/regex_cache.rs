//! Compiled regexes and literal automatons kept by what they were compiled
//! from: a query asked again compiles to the same patterns, and compiling
//! a case-insensitive pattern costs more than scanning the few lines a
//! prefilter leaves. Handed out shared, not cloned: a clone of a `Regex`
//! starts with empty scratch space and rebuilds its lazy DFA's states on
//! every query, while the shared one keeps them warm. Bounded; emptied
//! whole when full, so a flood of distinct queries costs memory only up to
//! the bound.

use foldhash::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use aho_corasick::AhoCorasick;
use regex::Regex;

/// Patterns kept at most, of each kind.
const MAX_KEPT: usize = 512;

/// A compiled regex, shared with every query that asks for the same pattern.
pub type Shared = Arc<Regex>;

type Kept<T> = LazyLock<Mutex<HashMap<String, T>>>;

static REGEXES: Kept<Shared> = LazyLock::new(Mutex::default);
static FINDERS: Kept<AhoCorasick> = LazyLock::new(Mutex::default);

/// The value `key` names in `kept`, made by `make` the first time (a
/// refusal is not kept: it is asked again, and refused again).
fn kept_or_made<T: Clone, E>(
    kept: &Kept<T>,
    key: &str,
    make: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    let lock = || kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(value) = lock().get(key) {
        return Ok(value.clone());
    }
    let value = make()?;
    let mut kept = lock();
    if kept.len() >= MAX_KEPT {
        kept.clear();
    }
    kept.insert(key.to_string(), value.clone());
    Ok(value)
}

/// The regex `key` names, compiled by `compile` the first time.
pub fn regex(
    key: &str,
    compile: impl FnOnce() -> Result<Regex, regex::Error>,
) -> Result<Shared, regex::Error> {
    kept_or_made(&REGEXES, key, || compile().map(Arc::new))
}

/// The automaton `key` names, built by `build` the first time (a clone
/// shares it).
pub fn finder(
    key: &str,
    build: impl FnOnce() -> Result<AhoCorasick, aho_corasick::BuildError>,
) -> Result<AhoCorasick, aho_corasick::BuildError> {
    kept_or_made(&FINDERS, key, build)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_regex_is_the_one_compiled_and_refusals_are_not_kept() {
        let first = regex("test:a+b", || Regex::new("a+b")).unwrap();
        let again = regex("test:a+b", || panic!("compiled twice")).unwrap();
        assert_eq!(first.as_str(), again.as_str());
        let unclosed = String::from("(");
        let compiles = std::cell::Cell::new(0);
        for _ in 0..2 {
            let refused = regex("test:(", || {
                compiles.set(compiles.get() + 1);
                Regex::new(&unclosed)
            });
            assert!(refused.is_err());
        }
        assert_eq!(compiles.get(), 2, "a refusal is compiled again, not kept");
        for n in 0..(MAX_KEPT + 10) {
            let source = format!("x{n}");
            assert!(regex(&format!("test:bound:{n}"), || Regex::new(&source)).is_ok());
        }
        assert!(REGEXES.lock().unwrap().len() <= MAX_KEPT);
    }
}
