//! The layout keeps the architecture: no import cycles between modules at any
//! depth, and the shared modules name no area (docs/architecture.md). Read
//! from the source tree, so a new `use` that breaks either fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every module of the crate and the modules it refers to by `crate::` or `super::` paths.
fn module_imports() -> BTreeMap<Module, BTreeSet<Module>> {
    module_imports_with(None)
}

/// The same, with `probe` (a path under `src/` and its text) read as one
/// more file of the tree: a rule's test shows the rule catches it.
fn module_imports_with(probe: Option<(&str, &str)>) -> BTreeMap<Module, BTreeSet<Module>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&src, &mut files);
    if let Some((path, _)) = probe {
        files.push(src.join(path));
    }
    let modules: BTreeMap<Module, PathBuf> = files
        .into_iter()
        .map(|file| {
            let relative = file.strip_prefix(&src).unwrap().with_extension("");
            let mut parts: Module = relative
                .iter()
                .map(|part| part.to_string_lossy().into_owned())
                .collect();
            let is_folder_root = matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            );
            if is_folder_root {
                parts.pop();
            }
            (parts, file)
        })
        .collect();
    let mut imports = BTreeMap::new();
    for (module, file) in &modules {
        let text = match probe {
            Some((path, text)) if *file == src.join(path) => text.to_string(),
            _ => std::fs::read_to_string(file).unwrap(),
        };
        // unit tests may reach anywhere
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let mut targets = BTreeSet::new();
        for path in paths_in(code) {
            let segments: Vec<&str> = path.split("::").collect();
            let (base, rest): (Module, &[&str]) = if segments[0] == "crate" {
                (Vec::new(), &segments[1..])
            } else {
                let mut base = module.clone();
                let mut at = 0;
                // `super` from `a::b` (whether a file or a folder's mod.rs) is `a`
                while segments.get(at) == Some(&"super") {
                    base.pop();
                    at += 1;
                }
                (base, &segments[at..])
            };
            let mut target = None;
            for length in (1..=rest.len()).rev() {
                let candidate: Module = base
                    .iter()
                    .cloned()
                    .chain(rest[..length].iter().map(|s| s.to_string()))
                    .collect();
                if modules.contains_key(&candidate) {
                    target = Some(candidate);
                    break;
                }
            }
            if let Some(target) = target
                && !target.starts_with(module)
                && !module.starts_with(&target)
            {
                targets.insert(target);
            }
        }
        imports.insert(module.clone(), targets);
    }
    imports
}

fn collect(folder: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// `crate::a::b` and `super::super::c` paths written in `code`.
fn paths_in(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        for (at, _) in code.match_indices(start) {
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |n| at + n);
            paths.push(code[at..end].trim_end_matches(':').to_string());
        }
    }
    paths
}

/// Imports between distinct modules, seen at `depth` (`graph::extract::walk` at
/// depth 2 is `graph::extract`).
fn at_depth(
    imports: &BTreeMap<Module, BTreeSet<Module>>,
    depth: usize,
) -> BTreeMap<Module, BTreeSet<Module>> {
    let cut = |module: &Module| module[..module.len().min(depth)].to_vec();
    let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, targets) in imports {
        for to in targets {
            let (a, b) = (cut(from), cut(to));
            if !a.starts_with(&b) && !b.starts_with(&a) {
                graph.entry(a).or_default().insert(b);
            }
        }
    }
    graph
}

fn reachable(graph: &BTreeMap<Module, BTreeSet<Module>>, from: &Module) -> BTreeSet<Module> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.clone()];
    while let Some(next) = stack.pop() {
        for to in graph.get(&next).into_iter().flatten() {
            if seen.insert(to.clone()) {
                stack.push(to.clone());
            }
        }
    }
    seen
}

#[test]
fn no_module_imports_another_that_imports_it_back() {
    let imports = module_imports();
    assert!(
        imports.len() > 40,
        "the source tree was read: {} modules",
        imports.len()
    );
    for depth in 1..=3 {
        let graph = at_depth(&imports, depth);
        let cycles: Vec<String> = graph
            .keys()
            .flat_map(|a| {
                reachable(&graph, a)
                    .into_iter()
                    .filter(|b| a < b && reachable(&graph, b).contains(a))
                    .map(|b| format!("{} <-> {}", a.join("::"), b.join("::")))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(
            cycles.is_empty(),
            "import cycles at depth {depth}: {cycles:?}"
        );
    }
}

#[test]
fn shared_modules_name_no_area() {
    let imports = module_imports();
    let areas = ["board", "graph", "docs", "supervise", "search", "hub"];
    let shared = [
        "envelope",
        "tools",
        "store",
        "mcp",
        "events",
        "watching",
        "background",
        "text_lines",
    ];
    for (module, targets) in &imports {
        let top = module.first().map(String::as_str).unwrap_or("");
        // the web layer reaches an area only from that area's router file
        let allowed = |target: &Module| {
            top == "web" && module.get(1).map(String::as_str) == Some("routes")
        } || !areas.contains(&target[0].as_str());
        if shared.contains(&top) || top == "web" {
            for target in targets {
                assert!(
                    allowed(target),
                    "{} imports the area {}",
                    module.join("::"),
                    target.join("::")
                );
            }
        }
    }
}

/// The areas `search` imports: it reads every area through the searchables
/// they declare (`tools::searchable`), never by name.
fn areas_search_names(imports: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<String> {
    let areas = ["board", "graph", "docs", "supervise", "hub"];
    imports
        .iter()
        .filter(|(module, _)| module.first().map(String::as_str) == Some("search"))
        .flat_map(|(module, targets)| {
            targets
                .iter()
                .filter(|target| areas.contains(&target[0].as_str()))
                .map(move |target| format!("{} imports {}", module.join("::"), target.join("::")))
        })
        .collect()
}

#[test]
fn search_names_no_area() {
    let named = areas_search_names(&module_imports());
    assert!(named.is_empty(), "search names areas: {named:#?}");
}

#[test]
fn the_search_rule_fails_on_a_probe_import() {
    for probe in [
        "use crate::graph::is_test_path;\n",
        "fn f() -> bool { crate::board::model::Status::ALL.is_empty() }\n",
        "use super::super::docs::feed;\n",
    ] {
        let imports = module_imports_with(Some(("search/layout_probe.rs", probe)));
        let named = areas_search_names(&imports);
        assert_eq!(named.len(), 1, "{probe}: {named:?}");
        assert!(
            named[0].starts_with("search::layout_probe imports "),
            "{named:?}"
        );
    }
}

#[test]
fn the_store_knows_no_envelope_tool_or_front_door() {
    let imports = module_imports();
    for (module, targets) in imports
        .iter()
        .filter(|(m, _)| m.first().map(String::as_str) == Some("store"))
    {
        for target in targets {
            assert!(
                !["envelope", "tools", "web", "mcp", "cli"].contains(&target[0].as_str()),
                "{} imports {}",
                module.join("::"),
                target.join("::")
            );
        }
    }
}

/// The files that may hold SQL: the store, each area's schema, and each
/// area's storage modules (docs/architecture.md names them); a path ending
/// in `/` stands for every file of that folder.
const STORAGE_FILES: &[&str] = &[
    "store/",
    "hub.rs",
    "board/schema.rs",
    "board/records.rs",
    "board/filters.rs",
    "graph/schema.rs",
    "graph/records.rs",
    "graph/index/",
    "graph/resolve.rs",
    "docs/schema.rs",
    "docs/records.rs",
    "supervise/schema.rs",
    "supervise/records.rs",
    "search/index/schema.rs",
    "search/index/records.rs",
    "search/semantic/records.rs",
];

#[test]
fn sql_stays_in_the_storage_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&src, &mut files);
    let statement_starts = [
        "SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "PRAGMA ",
    ];
    let calls = [
        "prepare(",
        "prepare_cached(",
        "execute(",
        "execute_batch(",
        "query_row(",
    ];
    let mut offenders = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let storage = STORAGE_FILES
            .iter()
            .any(|f| relative == *f || (f.ends_with('/') && relative.starts_with(f)));
        if storage {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (number, line) in code.lines().enumerate() {
            let quoted_sql = statement_starts
                .iter()
                .any(|start| line.contains(&format!("\"{start}")));
            let runs_sql = calls.iter().any(|call| line.contains(&format!(".{call}")));
            if quoted_sql || runs_sql {
                offenders.push(format!("{relative}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "SQL outside the storage modules: {offenders:#?}"
    );
}

#[test]
fn the_readme_is_a_front_door() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(
        readme.len() <= 15 * 1024,
        "README.md is {} bytes: keep it a front door of at most 15 KB and move the rest to docs/",
        readme.len()
    );
    let first_screen: Vec<&str> = readme.lines().take(80).collect();
    for command in ["cargo run --release -- serve", "scripts/test.sh"] {
        assert!(
            first_screen.iter().any(|line| line.trim() == command),
            "the README's first 80 lines lack the command `{command}`"
        );
    }
    let ci =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|line| line.trim() == "exec scripts/test.sh"),
        ".ci/run runs the README's test command"
    );
}
