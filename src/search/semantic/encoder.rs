//! The model's transformer (a BERT encoder, run on the CPU with candle),
//! used only to distil one vector a word piece: the piece between the
//! model's start and end markers, pooled as the model pools. Texts are then
//! embedded from those vectors (`table.rs`), never by the transformer, so
//! indexing a large repository costs one pass a distinct word piece.

use candle_core::{DType, Device, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, Module, VarBuilder};

use super::folder::{ModelFolder, Pooling};

/// How many word pieces one forward pass distils.
const BATCH: usize = 256;
/// How many pieces, spread over the vocabulary, make the vector every
/// distilled piece shares (see `Encoder::center`).
const CENTER_SAMPLE: usize = 1024;

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    up: Linear,
    down: Linear,
    out_norm: LayerNorm,
}

pub struct Encoder {
    words: Embedding,
    positions: Embedding,
    types: Embedding,
    norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    pooling: Pooling,
    /// The markers a piece is put between (`[CLS]`, `[SEP]`).
    start: u32,
    end: u32,
    /// What every piece's output shares, from its markers' context: taken
    /// off each distilled vector, else every text's mean points the same
    /// way (cosine 0.8 between unrelated sentences) and the differences
    /// that carry meaning are small beside it.
    center: Vec<f32>,
}

fn linear(vb: &VarBuilder, name: &str, input: usize, output: usize) -> candle_core::Result<Linear> {
    candle_nn::linear(input, output, vb.pp(name))
}

fn norm(vb: &VarBuilder, name: &str, size: usize, eps: f64) -> candle_core::Result<LayerNorm> {
    candle_nn::layer_norm(size, eps, vb.pp(name))
}

impl Encoder {
    /// Reads the weights (a file of the size of the model, read whole), and
    /// distils the center unless it is given (as an earlier load made it).
    pub fn load(
        model: &ModelFolder,
        start: u32,
        end: u32,
        center: Option<Vec<f32>>,
    ) -> Result<Encoder, String> {
        let bytes = std::fs::read(&model.weights)
            .map_err(|error| format!("{}: cannot be read: {error}", model.weights.display()))?;
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu)
            .map_err(|error| format!("{}: {error}", model.weights.display()))?;
        let mut encoder = Encoder::from_weights(vb, model, start, end)
            .map_err(|error| format!("{}: {error}", model.weights.display()))?;
        encoder.center = match center.filter(|c| c.len() == model.shape.hidden_size) {
            Some(center) => center,
            None => encoder.center_of(model.shape.vocab_size)?,
        };
        Ok(encoder)
    }

    /// What every piece's output shares (see the field), to keep.
    pub fn center(&self) -> &[f32] {
        &self.center
    }

    /// The mean output of pieces spread evenly over the vocabulary's last
    /// nine tenths (the first pieces are markers, unused slots and single
    /// characters in the usual vocabularies).
    fn center_of(&self, vocabulary: usize) -> Result<Vec<f32>, String> {
        let from = vocabulary / 10;
        let step = ((vocabulary - from) / CENTER_SAMPLE).max(1);
        let sample: Vec<u32> = (from..vocabulary)
            .step_by(step)
            .take(CENTER_SAMPLE)
            .map(|piece| piece as u32)
            .collect();
        let outputs = self.distil(&sample)?;
        let mut center = vec![0f32; outputs.first().map_or(0, Vec::len)];
        for output in &outputs {
            for (sum, value) in center.iter_mut().zip(output) {
                *sum += value / outputs.len() as f32;
            }
        }
        Ok(center)
    }

    fn from_weights(
        vb: VarBuilder,
        model: &ModelFolder,
        start: u32,
        end: u32,
    ) -> candle_core::Result<Encoder> {
        let shape = &model.shape;
        // weights saved from a task model carry a `bert.` prefix
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let (hidden, eps) = (shape.hidden_size, shape.layer_norm_eps);
        let layers = (0..shape.num_hidden_layers)
            .map(|at| {
                let l = vb.pp(format!("encoder.layer.{at}"));
                Ok(Layer {
                    query: linear(&l, "attention.self.query", hidden, hidden)?,
                    key: linear(&l, "attention.self.key", hidden, hidden)?,
                    value: linear(&l, "attention.self.value", hidden, hidden)?,
                    attention_out: linear(&l, "attention.output.dense", hidden, hidden)?,
                    attention_norm: norm(&l, "attention.output.LayerNorm", hidden, eps)?,
                    up: linear(&l, "intermediate.dense", hidden, shape.intermediate_size)?,
                    down: linear(&l, "output.dense", shape.intermediate_size, hidden)?,
                    out_norm: norm(&l, "output.LayerNorm", hidden, eps)?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()?;
        let e = vb.pp("embeddings");
        Ok(Encoder {
            words: candle_nn::embedding(shape.vocab_size, hidden, e.pp("word_embeddings"))?,
            positions: candle_nn::embedding(
                shape.max_position_embeddings,
                hidden,
                e.pp("position_embeddings"),
            )?,
            types: candle_nn::embedding(
                shape.type_vocab_size,
                hidden,
                e.pp("token_type_embeddings"),
            )?,
            norm: norm(&e, "LayerNorm", hidden, eps)?,
            layers,
            heads: shape.num_attention_heads,
            pooling: model.pooling,
            start,
            end,
            center: Vec::new(),
        })
    }

    /// The pooled output for each sequence of `ids` (batch, length), none
    /// padded.
    fn forward(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, length) = ids.dims2()?;
        let positions = Tensor::arange(0u32, length as u32, ids.device())?
            .unsqueeze(0)?
            .broadcast_as((batch, length))?;
        let embedded = self
            .words
            .forward(ids)?
            .add(&self.positions.forward(&positions)?)?
            .add(&self.types.forward(&ids.zeros_like()?)?)?;
        let mut x = self.norm.forward(&embedded)?;
        let hidden = x.dim(2)?;
        let per_head = hidden / self.heads;
        let scale = 1.0 / (per_head as f64).sqrt();
        for layer in &self.layers {
            let heads = |t: Tensor| {
                t.reshape((batch, length, self.heads, per_head))?
                    .transpose(1, 2)?
                    .contiguous()
            };
            let q = heads(layer.query.forward(&x)?)?;
            let k = heads(layer.key.forward(&x)?)?;
            let v = heads(layer.value.forward(&x)?)?;
            let weights = candle_nn::ops::softmax_last_dim(&(q.matmul(&k.t()?)? * scale)?)?;
            let context = weights
                .matmul(&v)?
                .transpose(1, 2)?
                .reshape((batch, length, hidden))?;
            x = layer
                .attention_norm
                .forward(&(layer.attention_out.forward(&context)? + &x)?)?;
            let up = layer.up.forward(&x)?.gelu_erf()?;
            x = layer.out_norm.forward(&(layer.down.forward(&up)? + &x)?)?;
        }
        match self.pooling {
            Pooling::Mean => x.mean(1),
            Pooling::Cls => x.narrow(1, 0, 1)?.squeeze(1),
        }
    }

    /// One vector a piece of `pieces`, in their order, less the center.
    pub fn distil(&self, pieces: &[u32]) -> Result<Vec<Vec<f32>>, String> {
        let mut vectors = Vec::with_capacity(pieces.len());
        for chunk in pieces.chunks(BATCH) {
            let ids: Vec<u32> = chunk
                .iter()
                .flat_map(|piece| [self.start, *piece, self.end])
                .collect();
            let ids = Tensor::from_vec(ids, (chunk.len(), 3), &Device::Cpu)
                .map_err(|error| error.to_string())?;
            let pooled = self
                .forward(&ids)
                .and_then(|t| t.to_vec2::<f32>())
                .map_err(|error| format!("the encoder failed: {error}"))?;
            vectors.extend(pooled.into_iter().map(|mut vector| {
                for (value, shared) in vector.iter_mut().zip(&self.center) {
                    *value -= shared;
                }
                vector
            }));
        }
        Ok(vectors)
    }
}
