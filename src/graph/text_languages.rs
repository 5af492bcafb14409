//! The language of a file the graph reads as text only (YAML, SQL, Java,
//! a Dockerfile): tokei's table of file names, extensions and shebangs,
//! each language named as search's `lang:` filter spells it (lower case,
//! words joined by `-`: `c++`, `protocol-buffers`, `yaml`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

/// Every language tokei knows, by its name, as search spells it.
static FACETS: LazyLock<HashMap<&'static str, String>> = LazyLock::new(|| {
    tokei::LanguageType::list()
        .iter()
        .map(|(language, _)| (language.name(), facet_of(language.name())))
        .collect()
});

/// What a file no table knows is called.
pub const UNKNOWN: &str = "text";

/// The language of the file at `full` (its name first, then its extension,
/// then its shebang, as tokei decides), or `text`.
pub fn of(full: &Path) -> &'static str {
    tokei::LanguageType::from_path(full, &tokei::Config::default())
        .and_then(|language| FACETS.get(language.name()))
        .map_or(UNKNOWN, String::as_str)
}

/// Every language a text file can be given, sorted, each once.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = FACETS.values().map(String::as_str).collect();
    names.push(UNKNOWN);
    names.sort_unstable();
    names.dedup();
    names
}

/// A language's name as a filter value. A header is its language's (a
/// `.h` is C, as GitHub's linguist has it), and plain text is `text`.
fn facet_of(name: &str) -> String {
    let name = match name {
        "Plain Text" => return UNKNOWN.to_string(),
        "C Header" => "C",
        "C++ Header" => "C++",
        other => other,
    };
    let mut facet = String::with_capacity(name.len());
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() || c == '+' || c == '#' {
            facet.push(c);
        } else if !facet.is_empty() && !facet.ends_with('-') {
            facet.push('-');
        }
    }
    facet.trim_end_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_named_by_its_name_extension_or_shebang() {
        let repo = tempfile::tempdir().unwrap();
        let files = [
            ("Dockerfile", "FROM debian\n", "dockerfile"),
            ("Makefile", "all:\n", "makefile"),
            ("build.gradle.kts", "plugins {}\n", "kotlin"),
            ("Main.java", "class Main {}\n", "java"),
            ("config.YML", "a: 1\n", "yaml"),
            ("schema.sql", "SELECT 1;\n", "sql"),
            ("include/list.h", "int x;\n", "c"),
            ("src/vec.hpp", "int x;\n", "c++"),
            ("api.proto", "syntax = \"proto3\";\n", "protocol-buffers"),
            ("deploy", "#!/bin/sh\necho hi\n", "shell"),
            ("notes.txt", "hello\n", "text"),
            ("LICENSE-THING", "no shebang here\n", "text"),
            ("data.unknownext", "x\n", "text"),
        ];
        for (name, text, _) in files {
            let path = repo.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        for (name, _, facet) in files {
            assert_eq!(of(&repo.path().join(name)), facet, "{name}");
        }
    }

    #[test]
    fn every_name_is_a_lower_case_filter_value_listed_once() {
        let names = names();
        assert!(names.len() > 200, "{}", names.len());
        for name in &names {
            assert!(
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| !c.is_uppercase() && !c.is_whitespace())
                    && !name.contains(',')
                    && !name.contains(':'),
                "{name}"
            );
        }
        for known in ["java", "yaml", "c", "c++", "c#", "shell", "text", "python"] {
            assert!(names.contains(&known), "{known}");
        }
        assert_eq!(facet_of("Standard ML (SML)"), "standard-ml-sml");
        assert_eq!(facet_of("Objective-C++"), "objective-c++");
    }
}
