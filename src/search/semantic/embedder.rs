//! Texts to vectors, as model2vec does it: a text's word pieces (the
//! model's own tokenizer, stop words left out) each have a vector distilled
//! once by the transformer, and a text's vector is their mean, normalised.
//! A name's pieces weigh twice: a symbol is first what it is called.

use rusqlite::Connection;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use tokenizers::Tokenizer;

use super::encoder::Encoder;
use super::folder::{FolderError, ModelFolder};
use super::records;
use super::vectors::Vector;
use crate::search::query::words::is_stop_word;
use crate::store::StoreError;

/// Pieces of a text past these are left out: a text's vector is made by
/// its beginning (a symbol's name, path and the start of its doc comment,
/// a task's title), and what follows mostly blurs it. Measured on the
/// question set from 16 to 48 pieces: 20 ranked best.
const MOST_PIECES: usize = 20;

/// A text to embed: its name, which weighs more, and the rest.
pub struct Text<'a> {
    pub name: &'a str,
    pub rest: &'a str,
}

pub struct Embedder {
    pub folder: ModelFolder,
    tokenizer: Tokenizer,
    /// Loaded at the first piece to distil.
    encoder: OnceLock<Result<Encoder, String>>,
    markers: (u32, u32),
    special: HashSet<u32>,
    /// Distilled pieces, and the databases whose stored pieces were read.
    pieces: Mutex<Pieces>,
}

#[derive(Default)]
struct Pieces {
    vectors: HashMap<u32, Vector>,
    read_from: HashSet<PathBuf>,
}

impl Embedder {
    pub fn open(folder: ModelFolder) -> Result<Embedder, FolderError> {
        let file = folder.tokenizer_file.clone();
        let fault = |fault: String| FolderError {
            file: file.clone(),
            fault,
        };
        let mut tokenizer = Tokenizer::from_file(&folder.tokenizer_file)
            .map_err(|error| fault(format!("is not a tokenizer the hub can read: {error}")))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|error| fault(error.to_string()))?;
        let id = |token: &str| tokenizer.token_to_id(token);
        let (Some(start), Some(end)) = (id("[CLS]").or(id("<s>")), id("[SEP]").or(id("</s>")))
        else {
            return Err(fault(
                "names no start and end markers ([CLS] and [SEP])".into(),
            ));
        };
        let vocabulary = tokenizer.get_vocab_size(true);
        if vocabulary > folder.shape.vocab_size {
            return Err(fault(format!(
                "holds {vocabulary} pieces, more than config.json's vocab_size {}",
                folder.shape.vocab_size
            )));
        }
        let special: HashSet<u32> = tokenizer
            .get_added_tokens_decoder()
            .into_iter()
            .filter(|(_, token)| token.special)
            .map(|(id, _)| id)
            .chain([start, end])
            .collect();
        Ok(Embedder {
            folder,
            tokenizer,
            encoder: OnceLock::new(),
            markers: (start, end),
            special,
            pieces: Mutex::default(),
        })
    }

    /// A text's pieces with their weights (`rarity`), stop words left out,
    /// at most `MOST_PIECES`.
    fn pieces_of(&self, text: &str) -> Result<Vec<(u32, f32)>, String> {
        let kept: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .map(str::to_lowercase)
            .filter(|word| !word.is_empty() && !is_stop_word(word))
            .collect();
        if kept.is_empty() {
            return Ok(Vec::new());
        }
        let encoding = self
            .tokenizer
            .encode(kept.join(" "), false)
            .map_err(|error| format!("the tokenizer failed: {error}"))?;
        Ok(encoding
            .get_ids()
            .iter()
            .filter(|id| !self.special.contains(id))
            .map(|id| (*id, self.rarity(*id)))
            .take(MOST_PIECES)
            .collect())
    }

    /// The vector of each text (None for a text without a piece to go by),
    /// and the pieces distilled for them that `c`'s database did not hold
    /// (for the caller to store). `c` only reads: distilling holds no lock
    /// a writer waits on.
    pub fn embed(
        &self,
        texts: &[Text],
        database: &Path,
        c: &Connection,
    ) -> Result<Embedded, EmbedError> {
        let mut pieced = Vec::with_capacity(texts.len());
        for text in texts {
            let name = self.pieces_of(text.name).map_err(EmbedError::Model)?;
            let rest = self.pieces_of(text.rest).map_err(EmbedError::Model)?;
            pieced.push((name, rest));
        }
        let mut stored_center = None;
        let missing = {
            let mut pieces = self.pieces.lock().unwrap_or_else(|p| p.into_inner());
            // pieces stored by another model's run are not this model's
            if !pieces.read_from.contains(database)
                && records::stored_model(c)?.as_deref() == Some(self.folder.id.as_str())
            {
                records::each_piece(c, |piece, scale, bytes| {
                    if let (Ok(piece), Some(vector)) =
                        (u32::try_from(piece), Vector::from_stored(scale, bytes))
                    {
                        pieces.vectors.insert(piece, vector);
                    }
                })?;
                pieces.read_from.insert(database.to_path_buf());
            }
            if self.encoder.get().is_none() {
                stored_center = records::center(c, &self.folder.id)?;
            }
            let mut missing: Vec<u32> = pieced
                .iter()
                .flat_map(|(name, rest)| name.iter().chain(rest))
                .map(|(piece, _)| *piece)
                .filter(|piece| !pieces.vectors.contains_key(piece))
                .collect();
            missing.sort_unstable();
            missing.dedup();
            missing
        };
        // distilled with the lock let go: a query meanwhile embeds its words
        let mut distilled = Vec::with_capacity(missing.len());
        if !missing.is_empty() {
            let vectors = self
                .encoder(stored_center)?
                .distil(&missing)
                .map_err(EmbedError::Model)?;
            distilled = missing
                .into_iter()
                .zip(vectors)
                .map(|(piece, vector)| (piece, Vector::of(&vector)))
                .collect();
        }
        let mut pieces = self.pieces.lock().unwrap_or_else(|p| p.into_inner());
        for (piece, vector) in &distilled {
            pieces.vectors.insert(*piece, vector.clone());
        }
        let vectors = pieced
            .iter()
            .map(|(name, rest)| self.mean_of(&pieces.vectors, name, rest))
            .collect();
        let center = self
            .encoder
            .get()
            .and_then(|e| e.as_ref().ok())
            .filter(|_| !distilled.is_empty())
            .map(|e| e.center().iter().flat_map(|v| v.to_le_bytes()).collect());
        Ok(Embedded {
            vectors,
            distilled,
            center,
        })
    }

    /// A text's vector: the weighted mean of its pieces' (the name's
    /// counting twice), normalised; None when no piece has a vector.
    fn mean_of(
        &self,
        vectors: &HashMap<u32, Vector>,
        name: &[(u32, f32)],
        rest: &[(u32, f32)],
    ) -> Option<Vector> {
        let mut sum = vec![0f32; self.folder.shape.hidden_size];
        let weighed = name
            .iter()
            .map(|(p, w)| (p, 2.0 * w))
            .chain(rest.iter().map(|(p, w)| (p, *w)));
        let mut any = false;
        for (piece, weight) in weighed {
            if let Some(vector) = vectors.get(piece) {
                vector.add_to(&mut sum, weight);
                any = true;
            }
        }
        any.then(|| Vector::of(&sum))
    }

    /// How much a piece counts, from its place in the vocabulary (which
    /// orders pieces by frequency, the most frequent first), as model2vec
    /// weighs: a smooth inverse frequency, `a / (a + p)`, p by Zipf's law.
    /// Weighing by this corpus's own word counts was measured worse: rare
    /// identifiers and numbers drowned the words that carry the meaning.
    fn rarity(&self, piece: u32) -> f32 {
        const A: f64 = 1e-4;
        let vocabulary = self.folder.shape.vocab_size as f64;
        // the harmonic sum over ranks 2 to vocabulary + 1
        let harmonic = (vocabulary + 1.0).ln() + 0.5772 - 1.0;
        let p = 1.0 / ((f64::from(piece) + 2.0) * harmonic);
        (A / (A + p)) as f32
    }

    /// The transformer, loaded at the first call, with the center stored
    /// in the database when there is one (distilling it takes about as long
    /// as reading the weights).
    fn encoder(&self, stored_center: Option<Vec<u8>>) -> Result<&Encoder, EmbedError> {
        let (start, end) = self.markers;
        let center = stored_center.map(|bytes| {
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        });
        self.encoder
            .get_or_init(|| Encoder::load(&self.folder, start, end, center))
            .as_ref()
            .map_err(|error| EmbedError::Model(error.clone()))
    }
}

/// Texts' vectors, and the pieces distilled to make them.
pub struct Embedded {
    pub vectors: Vec<Option<Vector>>,
    pub distilled: Vec<(u32, Vector)>,
    /// The encoder's center, when pieces were distilled, for the caller
    /// to store beside them.
    pub center: Option<Vec<u8>>,
}

/// Why texts could not be embedded.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("the embedding model: {0}")]
    Model(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}
