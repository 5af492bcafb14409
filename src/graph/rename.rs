//! The rename plan: where renaming a symbol must touch, from the graph's
//! edges (call and import sites) plus a whole-word text search for what the
//! graph cannot see (docs, string literals, tests it missed), with a risk
//! level and the order to edit files in.

use super::{is_test_path, records};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, json};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use utoipa::ToSchema;

use super::tools::{GraphNode, add_freshness, add_unresolved, graph_offsets, resolve_node, spec};
use crate::tools::cursor::{named_pages, narrowing};
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

/// `word` occurs in `line` as a whole identifier (not inside a longer one).
fn has_word(line: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(word).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// `word` occurs inside a quoted string on this line.
fn in_string_literal(line: &str, word: &str) -> bool {
    ['"', '\''].iter().any(|quote| {
        line.split(*quote)
            .enumerate()
            .any(|(index, part)| index % 2 == 1 && has_word(part, word))
    })
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenamePlanInput {
    /// The symbol to rename: a uid, a path or a name.
    #[schema(format = "cos-not-blank")]
    pub uid: String,
    /// An identifier (letters of any script, digits, underscores; not a
    /// digit first).
    #[schema(pattern = "^[A-Za-z_][A-Za-z0-9_]*$")]
    pub new_name: String,
    /// A list's `next_cursors` entry: that list alone, after what was seen.
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RenameSite {
    pub path: String,
    pub line: u32,
    /// The line as it reads now (trimmed, at most 200 characters).
    pub text: String,
    /// `graph` (an edge says so) or `text` (a whole-word search found it; check it by hand).
    pub found_by: String,
    /// The node the site lies in, when the graph knows it.
    pub in_node: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RenamePlan {
    pub node: GraphNode,
    pub old_name: String,
    pub new_name: String,
    pub definition: RenameSite,
    pub call_sites: Vec<RenameSite>,
    pub import_sites: Vec<RenameSite>,
    pub doc_references: Vec<RenameSite>,
    pub test_references: Vec<RenameSite>,
    pub string_literals: Vec<RenameSite>,
    /// `low`, `medium` or `high`: by how many sites and files, and whether dynamic uses (strings) exist.
    pub risk: String,
    /// Files in the order to edit them: the definition, importers, callers, tests, docs, strings.
    pub order: Vec<String>,
    pub count: u64,
    /// By list, the cursor for the sites a trimmed answer left out.
    pub next_cursors: BTreeMap<String, String>,
}

/// Lines of a file, read once per plan.
#[derive(Default)]
struct Files {
    lines: HashMap<String, Vec<String>>,
}

impl Files {
    fn lines(&mut self, root: &Path, path: &str) -> &[String] {
        self.lines.entry(path.to_string()).or_insert_with(|| {
            std::fs::read(root.join(path))
                .map(|bytes| {
                    String::from_utf8_lossy(&bytes)
                        .lines()
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        })
    }

    /// The first line in `start..=end` (1-based) naming `word`, as a site.
    fn site(
        &mut self,
        root: &Path,
        path: &str,
        (start, end): (u32, u32),
        words: &[&str],
        found_by: &str,
        in_node: Option<String>,
    ) -> RenameSite {
        let lines = self.lines(root, path);
        let first = start.max(1);
        let hit = (first..=end.max(first))
            .find(|n| {
                lines
                    .get(*n as usize - 1)
                    .is_some_and(|l| words.iter().any(|word| has_word(l, word)))
            })
            .unwrap_or(first);
        let text = lines
            .get(hit as usize - 1)
            .map(|l| l.trim().chars().take(200).collect())
            .unwrap_or_default();
        RenameSite {
            path: path.to_string(),
            line: hit,
            text,
            found_by: found_by.to_string(),
            in_node,
        }
    }
}

fn valid_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

pub struct GraphRenamePlan;

impl Tool for GraphRenamePlan {
    type Input = RenamePlanInput;
    type Output = RenamePlan;
    const SPEC: ToolSpec = spec(
        "cos_graph_rename_plan",
        "Everything a rename touches: call and import sites (from the graph), doc, test and string-literal references \
         (from a whole-word text search), each saying which found it; a risk level and an order to edit files in.",
    );

    fn run(context: &ToolContext, input: RenamePlanInput) -> Result<Answer<RenamePlan>, ToolError> {
        let new_name = checked_new_name(&input.new_name)?;
        let root = context.hub.config.repo_root.clone();
        context.hub.store.view(|c| {
            let target = resolve_node(c, &input.uid, "uid")?;
            check_renamable(&target.node)?;
            let node = target.node.clone();
            let old = node.label.clone();
            let mut files = Files::default();
            let definition = files.site(
                &root,
                node.path.as_deref().unwrap_or_default(),
                records::span(c, target.id)?,
                &[&old],
                "graph",
                Some(node.uid.clone()),
            );
            let mut sites = Sites::new(&definition);
            sites.graph_callers(c, &root, &mut files, target.id, &old)?;
            sites.graph_importers(c, &root, &mut files, target.id, &old)?;
            // the text search covers what no edge records: docs, strings, tests the graph missed
            sites.text_matches(c, &root, &mut files, &old)?;
            let count = sites.count();
            let risk = sites.risk();
            let mut order = sites.edit_order(&definition.path);
            let mut meta = Map::new();
            meta.insert("resolved_from".into(), json!(target.resolved_from));
            meta.insert("files_touched".into(), json!(order.len()));
            add_freshness(&mut meta, c, context)?;
            add_unresolved(&mut meta, c, &old)?;
            let listing = (&input.uid, &new_name);
            let offsets = graph_offsets(context, c, Self::SPEC.name, listing)?;
            let from = offsets.start_in("cursor", input.cursor.as_deref())?;
            let keep = narrowing("cursor", &SITE_LISTS, from.as_ref())?;
            let starts = [
                keep[0].apply(&mut sites.call_sites),
                keep[1].apply(&mut sites.import_sites),
                keep[2].apply(&mut sites.doc_references),
                keep[3].apply(&mut sites.test_references),
                keep[4].apply(&mut sites.string_literals),
                keep[5].apply(&mut order),
            ];
            let pages = named_pages(&offsets, "", &SITE_LISTS, &starts);
            let answer = Answer::new(RenamePlan {
                node,
                old_name: old,
                new_name,
                definition,
                call_sites: sites.call_sites,
                import_sites: sites.import_sites,
                doc_references: sites.doc_references,
                test_references: sites.test_references,
                string_literals: sites.string_literals,
                risk: risk.to_string(),
                order,
                count,
                next_cursors: BTreeMap::new(),
            });
            Ok(pages
                .into_iter()
                .fold(answer, Answer::with_page)
                .with_meta(meta))
        })
    }
}

/// The plan's lists, in the order cursors name them.
const SITE_LISTS: [&str; 6] = [
    "call_sites",
    "import_sites",
    "doc_references",
    "test_references",
    "string_literals",
    "order",
];

fn checked_new_name(given: &str) -> Result<String, ToolError> {
    let new_name = given.trim().to_string();
    if valid_identifier(&new_name) {
        return Ok(new_name);
    }
    Err(ToolError::invalid(
        "new_name",
        format!(
            "an identifier (letters, digits, underscores, not starting with a digit), got {new_name:?}"
        ),
    ))
}

fn check_renamable(node: &GraphNode) -> Result<(), ToolError> {
    if matches!(
        node.kind.as_str(),
        "function" | "method" | "class" | "interface" | "variable" | "module"
    ) {
        return Ok(());
    }
    let expected = "a function, method, class, interface, variable or module";
    Err(ToolError::invalid(
        "uid",
        format!("{expected}; {} is a {}", node.uid, node.kind),
    )
    .with_details(serde_json::json!({"field": "uid", "expected": expected, "kind": node.kind})))
}

/// Every place a rename touches, each line once: what the graph knows first,
/// then what only a text search finds.
struct Sites {
    seen: HashSet<(String, u32)>,
    call_sites: Vec<RenameSite>,
    import_sites: Vec<RenameSite>,
    doc_references: Vec<RenameSite>,
    test_references: Vec<RenameSite>,
    string_literals: Vec<RenameSite>,
}

impl Sites {
    fn new(definition: &RenameSite) -> Sites {
        Sites {
            seen: HashSet::from([(definition.path.clone(), definition.line)]),
            call_sites: Vec::new(),
            import_sites: Vec::new(),
            doc_references: Vec::new(),
            test_references: Vec::new(),
            string_literals: Vec::new(),
        }
    }

    /// Callers from the graph's `calls` edges, tests apart.
    fn graph_callers(
        &mut self,
        c: &Connection,
        root: &Path,
        files: &mut Files,
        id: i64,
        old: &str,
    ) -> Result<(), ToolError> {
        for (uid, path, start, end) in records::callers(c, id)? {
            // a call through an alias (`import gettext as _`) names the alias, not the symbol
            let aliases = records::aliases_in(c, &path, old)?;
            let mut words: Vec<&str> = vec![old];
            words.extend(aliases.iter().map(String::as_str));
            let site = files.site(root, &path, (start, end), &words, "graph", Some(uid));
            if self.seen.insert((site.path.clone(), site.line)) {
                if is_test_path(&path) {
                    self.test_references.push(site);
                } else {
                    self.call_sites.push(site);
                }
            }
        }
        Ok(())
    }

    /// The import lines naming the symbol in files the graph says import it.
    fn graph_importers(
        &mut self,
        c: &Connection,
        root: &Path,
        files: &mut Files,
        id: i64,
        old: &str,
    ) -> Result<(), ToolError> {
        for path in records::importers(c, id, old)? {
            let lines = files.lines(root, &path).to_vec();
            for (index, line) in lines.iter().enumerate() {
                if !(is_import_line(line) && has_word(line, old)) {
                    continue;
                }
                let number = index as u32 + 1;
                let site = files.site(root, &path, (number, number), &[old], "graph", None);
                if self.seen.insert((site.path.clone(), site.line)) {
                    self.import_sites.push(site);
                }
            }
        }
        Ok(())
    }

    /// Whole-word matches on lines no edge recorded: in docs, in string
    /// literals, and in tests.
    fn text_matches(
        &mut self,
        c: &Connection,
        root: &Path,
        files: &mut Files,
        old: &str,
    ) -> Result<(), ToolError> {
        for (path, language) in records::indexed_files(c)? {
            let lines = files.lines(root, &path).to_vec();
            for (index, line) in lines.iter().enumerate() {
                let number = index as u32 + 1;
                if !has_word(line, old) || self.seen.contains(&(path.clone(), number)) {
                    continue;
                }
                let list = if language == "markdown" {
                    &mut self.doc_references
                } else if in_string_literal(line, old) {
                    &mut self.string_literals
                } else if is_test_path(&path) {
                    &mut self.test_references
                } else {
                    continue;
                };
                list.push(RenameSite {
                    path: path.clone(),
                    line: number,
                    text: line.trim().chars().take(200).collect(),
                    found_by: "text".to_string(),
                    in_node: None,
                });
                self.seen.insert((path.clone(), number));
            }
        }
        Ok(())
    }

    fn all(&self) -> [&Vec<RenameSite>; 5] {
        [
            &self.call_sites,
            &self.import_sites,
            &self.doc_references,
            &self.test_references,
            &self.string_literals,
        ]
    }

    fn count(&self) -> u64 {
        self.all().iter().map(|sites| sites.len()).sum::<usize>() as u64
    }

    /// High for many sites or files (or strings among several sites), medium
    /// for some or any string literal, low otherwise.
    fn risk(&self) -> &'static str {
        let count = self.count();
        let touched: BTreeSet<&str> = self
            .all()
            .iter()
            .flat_map(|sites| sites.iter().map(|s| s.path.as_str()))
            .collect();
        let strings = !self.string_literals.is_empty();
        if count > 25 || touched.len() > 5 || (strings && count > 5) {
            "high"
        } else if count > 5 || touched.len() > 2 || strings {
            "medium"
        } else {
            "low"
        }
    }

    /// The files to edit, definition first, then importers, callers, tests,
    /// docs and strings.
    fn edit_order(&self, definition: &str) -> Vec<String> {
        let mut order = vec![definition.to_string()];
        let mut listed: std::collections::HashSet<&str> = [definition].into_iter().collect();
        for sites in [
            &self.import_sites,
            &self.call_sites,
            &self.test_references,
            &self.doc_references,
            &self.string_literals,
        ] {
            for site in sites {
                if listed.insert(&site.path) {
                    order.push(site.path.clone());
                }
            }
        }
        order
    }
}

fn is_import_line(line: &str) -> bool {
    let trimmed = line.trim_start();
    ["import ", "from ", "use ", "pub use "]
        .iter()
        .any(|start| trimmed.starts_with(start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_and_string_literals() {
        assert!(has_word("x = connect()", "connect"));
        assert!(!has_word("reconnect()", "connect"));
        assert!(!has_word("connect_all()", "connect"));
        assert!(in_string_literal("getattr(db, 'connect')", "connect"));
        assert!(!in_string_literal("db.connect('x')", "connect"));
        assert!(is_test_path("app/tests/test_db.py"));
        assert!(is_test_path("web/app.test.ts"));
        assert!(!is_test_path("app/db.py"));
        assert!(is_test_path("src/test/java/com/shop/CartTest.java"));
        assert!(is_test_path("gson/src/main/java/ReaderTests.java"));
        assert!(is_test_path("spec/cart_spec.rb"));
        assert!(is_test_path("test/MediatR.Tests/SendTests.cs"));
        assert!(is_test_path("Tests/AlamofireTests/SessionTests.swift"));
        assert!(!is_test_path("src/main/java/com/shop/Contest.java"));
        assert!(!is_test_path("src/Latest.py"));
        assert!(is_import_line("    from app.db import connect"));
        assert!(!is_import_line("imported = 1"));
    }
}
