//! The Rust packages in the repository and the library name each exports:
//! a package's binaries, tests, benches and examples call their own library
//! by that name (`cos_hub::cli::run`), which the extractor reads as `crate::`.

use std::collections::BTreeMap;
use std::path::Path;

/// Library names by the folder of their `Cargo.toml` (`""` for the root).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Libraries(BTreeMap<String, String>);

impl Libraries {
    /// Reads the manifests at `manifests` (repository-relative paths of
    /// `Cargo.toml` files); one that cannot be read or has no library is skipped.
    pub fn read(root: &Path, manifests: &[String]) -> Libraries {
        let mut libraries = BTreeMap::new();
        for manifest in manifests {
            let folder = manifest
                .strip_suffix("Cargo.toml")
                .unwrap_or("")
                .trim_end_matches('/');
            let Ok(text) = std::fs::read_to_string(root.join(manifest)) else {
                continue;
            };
            let has_default_lib = root.join(folder).join("src/lib.rs").is_file();
            if let Some(name) = library_name(&text, has_default_lib) {
                libraries.insert(folder.to_string(), name);
            }
        }
        Libraries(libraries)
    }

    /// The library of the package `path` belongs to (the deepest one holding it).
    pub fn for_file(&self, path: &str) -> Option<&str> {
        self.0
            .iter()
            .filter(|(folder, _)| {
                folder.is_empty()
                    || path
                        .strip_prefix(folder.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })
            .max_by_key(|(folder, _)| folder.len())
            .map(|(_, name)| name.as_str())
    }

    /// A stable description, so a graph built under other names is rebuilt.
    pub fn fingerprint(&self) -> String {
        self.0
            .iter()
            .map(|(folder, name)| format!("{folder}={name}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// `[lib] name`, else the package's name with dashes as underscores, when
/// the manifest declares a library or the package has `src/lib.rs`.
fn library_name(manifest: &str, has_default_lib: bool) -> Option<String> {
    let value: toml::Table = toml::from_str(manifest).ok()?;
    let lib = value.get("lib").and_then(toml::Value::as_table);
    if let Some(name) = lib
        .and_then(|lib| lib.get("name"))
        .and_then(toml::Value::as_str)
    {
        return Some(name.to_string());
    }
    if lib.is_none() && !has_default_lib {
        return None;
    }
    let package = value.get("package")?.get("name")?.as_str()?;
    Some(package.replace('-', "_"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_is_named_by_lib_name_else_by_the_package() {
        assert_eq!(
            library_name(
                "[package]\nname = \"cos-hub\"\n[lib]\nname = \"cos_hub\"\n",
                false
            ),
            Some("cos_hub".into())
        );
        assert_eq!(
            library_name("[package]\nname = \"my-tool\"\n", true),
            Some("my_tool".into())
        );
        assert_eq!(
            library_name("[package]\nname = \"only-bin\"\n", false),
            None
        );
        assert_eq!(
            library_name("[workspace]\nmembers = [\"a\"]\n", false),
            None
        );
        assert_eq!(library_name("not toml at all [", true), None);
    }

    #[test]
    fn a_file_belongs_to_the_deepest_package_holding_it() {
        let libraries = Libraries(BTreeMap::from([
            (String::new(), "root_lib".to_string()),
            ("crates/inner".to_string(), "inner".to_string()),
        ]));
        assert_eq!(libraries.for_file("src/main.rs"), Some("root_lib"));
        assert_eq!(libraries.for_file("crates/inner/tests/t.rs"), Some("inner"));
        assert_eq!(
            libraries.for_file("crates/innermost/x.rs"),
            Some("root_lib")
        );
    }
}
