//! A local embedding model in the sentence-transformers folder layout:
//! `config.json` (a BERT encoder), `tokenizer.json`, `model.safetensors` and
//! the pooling module's `config.json` (named by `modules.json`, else
//! `1_Pooling/`). Opening a folder checks every file and field the hub uses
//! and names the first one that is missing or unsupported.

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Names the way pieces are distilled (`encoder.rs`); changing that way
/// changes this, and vectors made the old way are made again.
const DISTILLATION: &str = "pieces between markers, pooled, less the mean of 1024; v1";

/// Why a model folder cannot be used: the file (and field) at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {fault}", file.display())]
pub struct FolderError {
    pub file: PathBuf,
    pub fault: String,
}

fn fault(file: &Path, fault: impl Into<String>) -> FolderError {
    FolderError {
        file: file.to_path_buf(),
        fault: fault.into(),
    }
}

/// The encoder's shape, from `config.json`.
#[derive(Debug, Clone, Deserialize)]
pub struct EncoderShape {
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub vocab_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "two")]
    pub type_vocab_size: usize,
    #[serde(default = "small_epsilon")]
    pub layer_norm_eps: f64,
    #[serde(default = "gelu")]
    pub hidden_act: String,
    #[serde(default = "absolute")]
    pub position_embedding_type: String,
    #[serde(default)]
    model_type: Option<String>,
    #[serde(default)]
    architectures: Vec<String>,
}

fn two() -> usize {
    2
}
fn small_epsilon() -> f64 {
    1e-12
}
fn gelu() -> String {
    "gelu".into()
}
fn absolute() -> String {
    "absolute".into()
}

/// How the encoder's outputs become one vector (the pooling config).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    Mean,
    Cls,
}

/// A model folder, checked.
#[derive(Debug, Clone)]
pub struct ModelFolder {
    pub dir: PathBuf,
    pub shape: EncoderShape,
    pub pooling: Pooling,
    pub weights: PathBuf,
    pub tokenizer_file: PathBuf,
    /// Names this model's weights and vocabulary: vectors made with another
    /// are not comparable and are made again.
    pub id: String,
}

impl ModelFolder {
    pub fn open(dir: &Path) -> Result<ModelFolder, FolderError> {
        if !dir.is_dir() {
            return Err(fault(
                dir,
                "is not a folder (a sentence-transformers model folder was expected)",
            ));
        }
        let config_file = dir.join("config.json");
        let config = read(&config_file)?;
        let shape = shape_of(&config_file, &config)?;
        let tokenizer_file = dir.join("tokenizer.json");
        let tokenizer = read(&tokenizer_file)?;
        let (pooling_file, pooling) = pooling_of(dir)?;
        let weights = dir.join("model.safetensors");
        let header = safetensors_header(&weights)?;
        // and how pieces are distilled: vectors made another way are not comparable
        let mut id = blake3::Hasher::new();
        id.update(DISTILLATION.as_bytes());
        for part in [&config, &tokenizer, &pooling, &header] {
            id.update(&(part.len() as u64).to_le_bytes());
            id.update(part);
        }
        Ok(ModelFolder {
            dir: dir.to_path_buf(),
            pooling: pooling_mode(&pooling_file, &pooling)?,
            shape,
            weights,
            tokenizer_file,
            id: id.finalize().to_hex()[..16].to_string(),
        })
    }

    /// The folder's name, for answers: its last two components.
    pub fn name(&self) -> String {
        let mut parts: Vec<_> = self.dir.components().rev().take(2).collect();
        parts.reverse();
        parts
            .iter()
            .map(|part| part.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    }
}

fn read(file: &Path) -> Result<Vec<u8>, FolderError> {
    std::fs::read(file).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => fault(file, "is missing"),
        _ => fault(file, format!("cannot be read: {error}")),
    })
}

fn shape_of(file: &Path, config: &[u8]) -> Result<EncoderShape, FolderError> {
    let shape: EncoderShape = serde_json::from_slice(config)
        .map_err(|error| fault(file, format!("is not a BERT configuration: {error}")))?;
    let bert = shape.model_type.as_deref() == Some("bert")
        || shape.architectures.iter().any(|a| a == "BertModel");
    if !bert {
        let named = shape
            .model_type
            .clone()
            .or_else(|| shape.architectures.first().cloned())
            .unwrap_or_else(|| "none".into());
        return Err(fault(
            file,
            format!(
                "model_type: the hub runs BERT encoders (\"bert\", BertModel), this is {named}"
            ),
        ));
    }
    let checks = [
        (shape.hidden_act == "gelu", "hidden_act: expected \"gelu\""),
        (
            shape.position_embedding_type == "absolute",
            "position_embedding_type: expected \"absolute\"",
        ),
        (
            shape.num_attention_heads > 0
                && shape.hidden_size.is_multiple_of(shape.num_attention_heads),
            "num_attention_heads: expected a divisor of hidden_size",
        ),
        (shape.hidden_size > 0, "hidden_size: expected more than 0"),
        (shape.vocab_size > 0, "vocab_size: expected more than 0"),
        (
            shape.max_position_embeddings >= 3,
            "max_position_embeddings: expected at least 3",
        ),
        (
            shape.type_vocab_size >= 1,
            "type_vocab_size: expected at least 1",
        ),
    ];
    match checks.into_iter().find(|(holds, _)| !holds) {
        Some((_, why)) => Err(fault(file, why)),
        None => Ok(shape),
    }
}

/// The pooling module's config file: where `modules.json` puts it, else
/// `1_Pooling/config.json`.
fn pooling_of(dir: &Path) -> Result<(PathBuf, Vec<u8>), FolderError> {
    #[derive(Deserialize)]
    struct Module {
        #[serde(default)]
        path: String,
        #[serde(rename = "type", default)]
        kind: String,
    }
    let modules_file = dir.join("modules.json");
    let pooling_dir = match std::fs::read(&modules_file) {
        Ok(bytes) => {
            let modules: Vec<Module> = serde_json::from_slice(&bytes).map_err(|error| {
                fault(&modules_file, format!("is not a list of modules: {error}"))
            })?;
            let pooling = modules.into_iter().find(|m| m.kind.ends_with(".Pooling"));
            match pooling {
                Some(module) if !module.path.contains("..") => dir.join(module.path),
                Some(_) => {
                    return Err(fault(
                        &modules_file,
                        "path: the pooling module's folder must lie inside the model folder",
                    ));
                }
                None => {
                    return Err(fault(
                        &modules_file,
                        "names no sentence_transformers.models.Pooling module",
                    ));
                }
            }
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => dir.join("1_Pooling"),
        Err(error) => return Err(fault(&modules_file, format!("cannot be read: {error}"))),
    };
    let file = pooling_dir.join("config.json");
    let bytes = read(&file)?;
    Ok((file, bytes))
}

fn pooling_mode(file: &Path, bytes: &[u8]) -> Result<Pooling, FolderError> {
    let config: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(bytes)
        .map_err(|error| fault(file, format!("is not a pooling configuration: {error}")))?;
    let on = |field: &str| config.get(field).and_then(|v| v.as_bool()).unwrap_or(false);
    if on("pooling_mode_mean_tokens") {
        Ok(Pooling::Mean)
    } else if on("pooling_mode_cls_token") {
        Ok(Pooling::Cls)
    } else {
        Err(fault(
            file,
            "pooling_mode_mean_tokens: the hub pools by mean or by the CLS token, and neither is on",
        ))
    }
}

/// The header of a safetensors file (its tensors' names, types and shapes):
/// read to check the file and to name the weights, without reading them.
fn safetensors_header(file: &Path) -> Result<Vec<u8>, FolderError> {
    use std::io::Read;
    let mut opened = std::fs::File::open(file).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => fault(file, "is missing"),
        _ => fault(file, format!("cannot be read: {error}")),
    })?;
    let mut length = [0u8; 8];
    opened
        .read_exact(&mut length)
        .map_err(|_| fault(file, "is not a safetensors file (shorter than its header)"))?;
    let length = u64::from_le_bytes(length);
    if length == 0 || length > 100 << 20 {
        return Err(fault(
            file,
            "is not a safetensors file (its header length is out of range)",
        ));
    }
    let mut header = Vec::with_capacity(length as usize);
    opened
        .take(length)
        .read_to_end(&mut header)
        .map_err(|error| fault(file, format!("cannot be read: {error}")))?;
    if header.len() as u64 != length
        || serde_json::from_slice::<serde_json::Value>(&header).is_err()
    {
        return Err(fault(
            file,
            "is not a safetensors file (its header is cut or not JSON)",
        ));
    }
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"{"architectures":["BertModel"],"model_type":"bert","hidden_size":8,
        "num_hidden_layers":1,"num_attention_heads":2,"intermediate_size":16,"vocab_size":10,
        "max_position_embeddings":16}"#;

    fn folder() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), CONFIG).unwrap();
        std::fs::write(dir.path().join("tokenizer.json"), "{}").unwrap();
        std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
        std::fs::write(
            dir.path().join("1_Pooling/config.json"),
            r#"{"pooling_mode_mean_tokens": true}"#,
        )
        .unwrap();
        let header = br#"{"__metadata__":{}}"#;
        let mut weights = (header.len() as u64).to_le_bytes().to_vec();
        weights.extend_from_slice(header);
        std::fs::write(dir.path().join("model.safetensors"), weights).unwrap();
        dir
    }

    #[test]
    fn a_complete_folder_opens_with_its_shape_pooling_and_an_id() {
        let dir = folder();
        let model = ModelFolder::open(dir.path()).unwrap();
        assert_eq!(model.shape.hidden_size, 8);
        assert_eq!(model.pooling, Pooling::Mean);
        assert_eq!(model.id.len(), 16);
        std::fs::write(dir.path().join("tokenizer.json"), "{ }").unwrap();
        assert_ne!(
            ModelFolder::open(dir.path()).unwrap().id,
            model.id,
            "another vocabulary, another id"
        );
    }

    #[test]
    fn each_missing_or_unsupported_part_is_named() {
        let cases: [(&str, Option<&str>, &str); 6] = [
            ("model.safetensors", None, "model.safetensors: is missing"),
            ("tokenizer.json", None, "tokenizer.json: is missing"),
            (
                "1_Pooling/config.json",
                None,
                "1_Pooling/config.json: is missing",
            ),
            (
                "config.json",
                Some(
                    &CONFIG
                        .replace("\"bert\"", "\"t5\"")
                        .replace("BertModel", "T5"),
                ),
                "model_type",
            ),
            (
                "config.json",
                Some(&CONFIG.replace("\"hidden_size\":8,", "")),
                "hidden_size",
            ),
            (
                "1_Pooling/config.json",
                Some(r#"{"pooling_mode_max_tokens": true}"#),
                "pooling_mode_mean_tokens",
            ),
        ];
        for (file, content, says) in cases {
            let dir = folder();
            match content {
                Some(text) => std::fs::write(dir.path().join(file), text).unwrap(),
                None => std::fs::remove_file(dir.path().join(file)).unwrap(),
            }
            let error = ModelFolder::open(dir.path()).unwrap_err();
            assert!(error.to_string().contains(says), "{file}: {error}");
            assert!(error.file.ends_with(file), "{file}: {error}");
        }
        let dir = folder();
        std::fs::write(dir.path().join("model.safetensors"), b"\x05\0\0\0\0\0\0\0{").unwrap();
        let error = ModelFolder::open(dir.path()).unwrap_err();
        assert!(
            error.to_string().contains("not a safetensors file"),
            "{error}"
        );
    }
}
