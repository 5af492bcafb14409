//! The hub's settings file, `$COS_STATE_DIR/config.toml`: one TOML table a
//! section an area (`[search]`, ...). This module reads the file and hands
//! out a section; what a section means is its area's business.

use std::path::{Path, PathBuf};

use super::ToolError;

pub const SETTINGS_FILE: &str = "config.toml";

/// The settings file of the hub whose state lives in `state_dir`.
pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join(SETTINGS_FILE)
}

/// The table `[name]` of the settings file: empty when the file or the
/// section is absent; an `E_CONFIG` naming the file when it cannot be read
/// or `name` is not a table.
pub fn section(state_dir: &Path, name: &str) -> Result<toml::Table, ToolError> {
    let file = path(state_dir);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(toml::Table::new()),
        Err(error) => {
            return Err(ToolError::config(
                &file,
                &format!("cannot be read: {error}"),
            ));
        }
    };
    let mut table: toml::Table = toml::from_str(&text).map_err(|error| {
        ToolError::config(&file, &format!("is not valid TOML: {}", error.message()))
    })?;
    match table.remove(name) {
        None => Ok(toml::Table::new()),
        Some(toml::Value::Table(section)) => Ok(section),
        Some(_) => Err(ToolError::config(
            &file,
            &format!("[{name}] must be a table"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_is_read_and_a_missing_file_or_section_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(section(dir.path(), "search").unwrap().is_empty());
        std::fs::write(path(dir.path()), "[search]\nembedding_model = \"/m\"\n").unwrap();
        let search = section(dir.path(), "search").unwrap();
        assert_eq!(search["embedding_model"].as_str(), Some("/m"));
        assert!(section(dir.path(), "database").unwrap().is_empty());
    }

    #[test]
    fn a_broken_file_or_a_section_that_is_no_table_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(path(dir.path()), "[search\n").unwrap();
        let error = section(dir.path(), "search").unwrap_err();
        assert_eq!(error.to_body("e").code, crate::envelope::Code::E_CONFIG);
        assert!(error.to_string().contains("config.toml"), "{error}");
        std::fs::write(path(dir.path()), "search = 3\n").unwrap();
        let error = section(dir.path(), "search").unwrap_err();
        assert!(
            error.to_string().contains("[search] must be a table"),
            "{error}"
        );
    }
}
