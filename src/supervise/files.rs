//! The bundle files: `$COS_AGENT_DIR/evidence_bundle_<session>.json`, each
//! rewritten whole (temporary file, fsync, rename, fsync of the folder) from
//! the database after every change, so a reader never sees half a bundle and
//! a crash between the two leaves a file one version behind, which the next
//! change or start rewrites. The database row is the truth; the file is its
//! copy for tools that read files.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::model::Contents;
use super::records::{self, SessionRow};
use crate::store::SharedStore;
use crate::tools::{HubConfig, ToolError};

/// Where bundle files go: `$COS_AGENT_DIR` (relative to the repository when
/// relative), by default `<state dir>/agents`.
pub fn agent_dir(config: &HubConfig) -> PathBuf {
    match std::env::var_os("COS_AGENT_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => config.repo_root.join(dir),
        None => config.state_dir.join("agents"),
    }
}

pub fn bundle_path(dir: &Path, session_id: &str) -> PathBuf {
    dir.join(format!("evidence_bundle_{session_id}.json"))
}

/// A bundle as its file holds it: one top-level field per slot (null when
/// empty), beside the accumulators, as the reference system writes it.
pub fn file_json(row: &SessionRow, contents: &Contents, fields: &[(String, Vec<String>)]) -> Value {
    let mut file = Map::new();
    file.insert("session_id".into(), json!(row.session_id));
    file.insert("task_marker".into(), json!(row.task_marker));
    file.insert("persona_id".into(), json!(row.persona_id));
    file.insert("version".into(), json!(row.version));
    file.insert("created_at".into(), json!(row.created_at));
    file.insert("updated_at".into(), json!(row.updated_at));
    for (field, _) in fields {
        file.insert(field.clone(), Value::Null);
    }
    for (field, filled) in &contents.slots {
        file.insert(field.clone(), filled.output.clone());
    }
    file.insert("backtracks".into(), json!(contents.backtracks));
    file.insert("discoveries".into(), json!(contents.discoveries));
    file.insert(
        "degraded_formulas".into(),
        json!(contents.degraded_formulas),
    );
    Value::Object(file)
}

/// The version a bundle file says it holds, `None` when absent or unreadable.
pub fn version_on_disk(path: &Path) -> Option<i64> {
    let text = std::fs::read(path).ok()?;
    serde_json::from_slice::<Value>(&text).ok()?["version"].as_i64()
}

/// Rewrites the session's file from its latest row, under a lock shared by
/// every process, so concurrent writers leave the newest version behind.
pub fn write_latest(
    store: &SharedStore,
    dir: &Path,
    session_id: &str,
    fields: &[(String, Vec<String>)],
) -> Result<(), ToolError> {
    std::fs::create_dir_all(dir)
        .map_err(|error| ToolError::io(format!("creating {}", dir.display()), error))?;
    let lock_path = dir.join(".evidence.lock");
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|error| ToolError::io(format!("opening {}", lock_path.display()), error))?;
    lock.lock()
        .map_err(|error| ToolError::io(format!("locking {}", lock_path.display()), error))?;
    let Some(row) = store.view(|c| records::session(c, session_id))? else {
        return Ok(());
    };
    let path = bundle_path(dir, session_id);
    let contents = row
        .contents()
        .map_err(|error| ToolError::internal("reading a stored bundle", error))?;
    let text = serde_json::to_vec_pretty(&file_json(&row, &contents, fields))
        .map_err(|error| ToolError::internal("encoding a bundle", error))?;
    replace(dir, &path, &text)
}

fn replace(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    let temp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("bundle"),
        uuid::Uuid::new_v4().simple()
    ));
    let written = (|| -> std::io::Result<()> {
        let mut file = File::options().write(true).create_new(true).open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)?;
        File::open(dir)?.sync_all()
    })();
    written.map_err(|error| {
        let _ = std::fs::remove_file(&temp);
        ToolError::io(format!("writing {}", path.display()), error)
    })
}

/// Makes every bundle file equal to its row (after a crash between the
/// database and the file), and removes temporary files a crash left that are
/// older than `age`. Answers how many files were rewritten.
pub fn reconcile(
    store: &SharedStore,
    dir: &Path,
    fields: &[(String, Vec<String>)],
    age: std::time::Duration,
) -> Result<usize, ToolError> {
    let sessions = store.view(records::all_sessions)?;
    let mut rewritten = 0;
    for row in &sessions {
        if version_on_disk(&bundle_path(dir, &row.session_id)) != Some(row.version) {
            write_latest(store, dir, &row.session_id, fields)?;
            rewritten += 1;
        }
    }
    sweep_temps(dir, age);
    Ok(rewritten)
}

fn sweep_temps(dir: &Path, age: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !(name.starts_with(".evidence_bundle_") && name.ends_with(".tmp")) {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|elapsed| elapsed > age);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
