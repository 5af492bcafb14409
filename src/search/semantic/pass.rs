//! Embedding what the index holds: the items (symbols with their doc
//! comments, document sections, tasks, evidence) without a vector of the
//! model set, a batch at a time, each batch read, embedded and written in
//! short transactions of its own, so the hub's other writers never wait
//! long. A background follower runs it after each catch-up of the index
//! (`cos_search_index`); how far it got is in search answers and health.

use rusqlite::Connection;
use serde::Serialize;
use utoipa::ToSchema;

use super::Embedder;
use super::embedder::{EmbedError, Text};
use super::records;
use crate::store::{Store, StoreError};
use crate::tools::ToolError;

/// Items embedded a transaction.
const BATCH: i64 = 256;

/// How far the items' embedding got.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Progress {
    /// The model folder (its last two names).
    pub model: String,
    /// Items with a vector of this model.
    pub embedded: u64,
    /// Items the index holds.
    pub items: u64,
}

impl Progress {
    pub fn of(c: &Connection, embedder: &Embedder) -> Result<Progress, StoreError> {
        let current = records::stored_model(c)?.as_deref() == Some(embedder.folder.id.as_str());
        let (embedded, items) = records::counts(c)?;
        Ok(Progress {
            model: embedder.folder.name(),
            embedded: if current { embedded.max(0) as u64 } else { 0 },
            items: items.max(0) as u64,
        })
    }

    pub fn complete(&self) -> bool {
        self.embedded >= self.items
    }
}

/// Embeds every item without a vector; answers how many it embedded.
pub fn embed_pending(store: &Store, embedder: &Embedder) -> Result<usize, ToolError> {
    store.write(|c| records::adopt_model(c, &embedder.folder.id))?;
    let mut done = 0;
    loop {
        let batch = store.view(|c| records::without_vectors(c, BATCH))?;
        let batch: Vec<(i64, String, String)> = batch
            .into_iter()
            .map(|(id, name, words)| {
                let rest = rest_of(&name, &words);
                (id, name, rest)
            })
            .collect();
        if batch.is_empty() {
            return Ok(done);
        }
        let texts: Vec<Text> = batch
            .iter()
            .map(|(_, name, rest)| Text { name, rest })
            .collect();
        let embedded = store
            .view(|c| embedder.embed(&texts, store.path(), c))
            .map_err(embed_error)?;
        let dimensions = embedder.folder.shape.hidden_size;
        store.write(|c| -> Result<(), StoreError> {
            // a model changed meanwhile: this batch is of the old one
            if records::stored_model(c)?.as_deref() != Some(embedder.folder.id.as_str()) {
                return Ok(());
            }
            if let Some(center) = &embedded.center {
                records::store_center(c, center)?;
            }
            for (piece, vector) in &embedded.distilled {
                records::store_piece(c, *piece, vector.scale(), &vector.bytes())?;
            }
            for ((id, ..), vector) in batch.iter().zip(&embedded.vectors) {
                // a text without a piece to go by is kept as nothing alike
                let vector = vector
                    .clone()
                    .unwrap_or_else(|| super::vectors::Vector::of(&vec![0.0; dimensions]));
                records::store_vector(c, *id, vector.scale(), &vector.bytes())?;
            }
            Ok(())
        })?;
        done += batch.len();
    }
}

/// An item's words but its name's (path and body), without the name's
/// parts run together (`makepassword`, which the index keeps for
/// identifier search, is no word to the model).
fn rest_of(name_parts: &str, words: &str) -> String {
    let run_together = name_parts.replace(' ', "");
    let (_, rest) = words.split_once('\n').unwrap_or((words, ""));
    rest.split([' ', '\n'])
        .filter(|word| !word.is_empty() && *word != run_together)
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn embed_error(error: EmbedError) -> ToolError {
    match error {
        EmbedError::Store(error) => error.into(),
        EmbedError::Model(message) => ToolError::fail(
            crate::envelope::Category::Unavailable,
            crate::envelope::Code::E_CONFIG,
            format!("the embedding model cannot embed: {message}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_item_is_embedded_by_its_path_and_body_without_its_name_run_together() {
        let words = "make password makepassword\ndjango auth hashers py\nmake password makepassword turn a password into a hash";
        assert_eq!(
            super::rest_of("make password", words),
            "django auth hashers py make password turn a password into a hash"
        );
        assert_eq!(super::rest_of("x", "x"), "");
    }
}
