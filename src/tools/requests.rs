//! The request ID a call carries. The HTTP door sets it for the request's
//! task (its `Idempotency-Key`, else its `X-Request-Id`, else a new one);
//! a call that comes with none gets a new one. A writing call's shared
//! writes are recorded under it (`store::requests`), so whether one
//! committed can be asked with `cos_write_receipt`.

use std::future::Future;

tokio::task_local! {
    static REQUEST_ID: String;
}

/// Runs `work` as the request `id`: the calls it makes carry it.
pub async fn carrying<F: Future>(id: String, work: F) -> F::Output {
    REQUEST_ID.scope(id, work).await
}

/// The request ID the current task carries, if the door that started it set one.
pub fn current() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// A request ID as the hub accepts one: 1 to 255 visible ASCII characters
/// (an `Idempotency-Key`'s rule, so a key is always a valid ID).
pub fn valid(id: &str) -> bool {
    visible_ascii(id, 255)
}

/// Whether `text` is 1 to `most` visible ASCII characters.
pub fn visible_ascii(text: &str, most: usize) -> bool {
    (1..=most).contains(&text.len()) && text.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_keys_are_one_to_255_visible_ascii_characters() {
        assert!(valid("a"));
        assert!(valid(&"k".repeat(255)));
        assert!(valid("4f1c-9a7e_2b!~"));
        assert!(!valid(""));
        assert!(!valid(&"k".repeat(256)));
        assert!(!valid("with space"));
        assert!(!valid("tab\there"));
        assert!(!valid("ünïcode"));
    }
}
