//! The search index: a derived copy, in SQLite, of what the areas offer
//! search, every row rebuildable from them. `schema.rs` builds its tables,
//! `records.rs` holds every statement it runs and the items it reads,
//! `features.rs` the rank features an item carries whatever the query,
//! `catch_up.rs` brings the index level with the areas' revisions before a
//! query reads it, and `indexer.rs` does so in the background while a hub
//! serves.

pub mod catch_up;
pub mod features;
pub mod indexer;
pub mod records;
pub mod schema;
