//! What a process keeps between queries, each brought level with the index
//! by the rows that came and went: `postings.rs` the inverted word index of
//! the items (BM25), `item_index.rs` that index and the items' names kept per
//! index revision, `file_texts.rs` the files' texts and their trigram sets,
//! `identifier_runs.rs` the code lines by the identifier runs they hold,
//! `cache.rs` the shelves and bounded maps these are kept on, and `gallop.rs`
//! the galloping search that intersects their sorted lists.

pub mod cache;
pub mod file_texts;
pub mod gallop;
pub mod identifier_runs;
pub mod item_index;
pub mod postings;
