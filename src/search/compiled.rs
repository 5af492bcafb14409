//! Compiled regexes kept by what they were compiled from: a query asked
//! again compiles to the same patterns, and compiling a case-insensitive
//! pattern costs more than scanning the few lines a prefilter leaves.
//! Handed out shared, not cloned: a clone of a `Regex` starts with empty
//! scratch space and rebuilds its lazy DFA's states on every query, while
//! the shared one keeps them warm. Bounded; emptied whole when full, so a
//! flood of distinct queries costs memory only up to the bound.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use regex::Regex;

/// Patterns kept at most.
const MAX_KEPT: usize = 512;

/// A compiled regex, shared with every query that asks for the same pattern.
pub type Shared = Arc<Regex>;

static KEPT: LazyLock<Mutex<HashMap<String, Shared>>> = LazyLock::new(Mutex::default);

fn kept() -> std::sync::MutexGuard<'static, HashMap<String, Shared>> {
    KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The regex `key` names, compiled by `compile` the first time (a
/// refusal is not kept: it is asked again, and refused again).
pub fn regex(
    key: &str,
    compile: impl FnOnce() -> Result<Regex, regex::Error>,
) -> Result<Shared, regex::Error> {
    if let Some(regex) = kept().get(key) {
        return Ok(regex.clone());
    }
    let regex = Arc::new(compile()?);
    let mut kept = kept();
    if kept.len() >= MAX_KEPT {
        kept.clear();
    }
    kept.insert(key.to_string(), regex.clone());
    Ok(regex)
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
        assert!(kept().len() <= MAX_KEPT);
    }
}
