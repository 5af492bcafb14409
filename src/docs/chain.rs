//! The history's hash chain and the stored contents' encoding: what an entry
//! hash covers, and how revisions are kept (deflated, addressed by BLAKE3).

use serde_json::json;
use std::io::{Read, Write};

use super::model::DocHistoryEntry;

/// The `prev_hash` of the first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The BLAKE3 of a document's bytes, 64 hex digits.
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// The entry's fields in a fixed order, as one JSON array: the canonical
/// encoding the chain hashes (JSON escapes make it unambiguous).
fn canonical(entry: &DocHistoryEntry) -> String {
    json!([
        entry.seq,
        entry.mount,
        entry.path,
        entry.rev,
        entry.hash,
        entry.op,
        entry.actor,
        entry.source,
        entry.at,
        entry.from_path,
        entry.request_id,
    ])
    .to_string()
}

/// `BLAKE3(prev_hash "\n" canonical(entry))`.
pub fn entry_hash(entry: &DocHistoryEntry) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(entry.prev_hash.as_bytes());
    hasher.update(b"\n");
    hasher.update(canonical(entry).as_bytes());
    hasher.finalize().to_hex().to_string()
}

pub fn deflate(bytes: &[u8]) -> Vec<u8> {
    thread_local! {
        // a compressor's tables are a few hundred KB, zeroed when made: made
        // once a thread and reset, not made for every revision
        static COMPRESSOR: std::cell::RefCell<flate2::Compress> =
            std::cell::RefCell::new(flate2::Compress::new(flate2::Compression::fast(), false));
    }
    COMPRESSOR.with_borrow_mut(|compressor| {
        compressor.reset();
        let mut out = Vec::with_capacity(bytes.len() / 3 + 64);
        loop {
            let read = usize::try_from(compressor.total_in()).unwrap_or(bytes.len());
            let rest = bytes.get(read..).unwrap_or_default();
            match compressor.compress_vec(rest, &mut out, flate2::FlushCompress::Finish) {
                Ok(flate2::Status::StreamEnd) => return out,
                Ok(_) => out.reserve(out.capacity().max(64)),
                // compressing into memory does not fail; were it to, the
                // one-off encoder gives the same stream
                Err(_) => return deflate_once(bytes),
            }
        }
    })
}

fn deflate_once(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::DeflateEncoder::new(
        Vec::with_capacity(bytes.len() / 3 + 16),
        flate2::Compression::fast(),
    );
    // writing into a Vec cannot fail
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

pub fn inflate(bytes: &[u8], size_hint: usize) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(size_hint);
    flate2::read::DeflateDecoder::new(bytes).read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    fn entry() -> DocHistoryEntry {
        DocHistoryEntry {
            seq: 1,
            mount: "docs".into(),
            path: "a.md".into(),
            rev: 1,
            hash: content_hash(b"x"),
            op: "create".into(),
            actor: "web".into(),
            source: "person".into(),
            at: "2026-12-01T00:00:00Z".into(),
            from_path: None,
            request_id: Some("r1".into()),
            prev_hash: GENESIS.into(),
            entry_hash: String::new(),
        }
    }

    #[test]
    fn every_field_and_the_previous_hash_change_the_entry_hash() {
        let base = entry_hash(&entry());
        let mut changed = Vec::new();
        let mut variant = entry();
        variant.path = "b.md".into();
        changed.push(variant);
        let mut variant = entry();
        variant.rev = 2;
        changed.push(variant);
        let mut variant = entry();
        variant.actor = "other".into();
        changed.push(variant);
        let mut variant = entry();
        variant.prev_hash = content_hash(b"y");
        changed.push(variant);
        let mut variant = entry();
        variant.request_id = None;
        changed.push(variant);
        for variant in changed {
            assert_ne!(entry_hash(&variant), base, "{variant:?}");
        }
    }

    #[test]
    fn contents_survive_deflate_and_inflate() {
        let text = "# Title\n".repeat(1000);
        let packed = deflate(text.as_bytes());
        assert!(packed.len() < text.len() / 4);
        assert_eq!(inflate(&packed, text.len()).ok(), Some(text.into_bytes()));
    }

    proptest::proptest! {
        /// The compressor a thread keeps is reset between contents: each
        /// comes back whole, compressible or not, large or empty.
        #[test]
        fn contents_deflated_one_after_another_each_inflate_back(
            contents in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::collection::vec(proptest::num::u8::ANY, 0..20_000),
                    "(# [a-z]{1,8}\n[a-z ]{0,80}\n){0,200}".prop_map(String::into_bytes),
                ],
                1..4,
            )
        ) {
            for bytes in &contents {
                let back = inflate(&deflate(bytes), bytes.len()).ok();
                proptest::prop_assert_eq!(back.as_ref(), Some(bytes));
            }
        }
    }
}
