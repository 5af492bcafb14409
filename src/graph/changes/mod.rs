//! `cos_changes`: what a change affects. The diff (working tree, staged, or
//! a range) is mapped to the definitions its hunks touch; each comes with
//! its dependents from the graph (impact's tiers), the tests that reach it,
//! and the tasks and document sections that name it, ranked by risk. Files
//! the graph does not read are listed with the tasks and documents that
//! name them.

mod diff;
mod mentions;
mod symbols;

use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use utoipa::{IntoParams, ToSchema};

use super::analysis::{DEPENDENCY_KINDS, meta};
use super::records::{self, GraphNode};
use super::tools::{Direction, Neighbour, in_range, spec, walk_neighbours};
use crate::tools::cursor::{Offsets, named_pages, narrowing};
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};
use diff::Against;
use mentions::{DocMention, TaskMention};
use symbols::Change;

/// Dependents named per symbol at most (the count says the rest).
const DEPENDENTS_NAMED: usize = 20;
/// Dependents walked per symbol at most.
const VISIT_LIMIT: usize = 500;
/// Changed files looked into at most.
const MAX_FILES: usize = 500;

#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ChangesInput {
    /// Staged changes instead of the working tree.
    pub staged: Option<bool>,
    /// `A..B`, or a ref against the working tree.
    #[schema(
        pattern = r"^(?!-)(?:[A-Za-z0-9_/~^@{}-]|\.(?!\.))+(?:\.\.(?!-)(?:[A-Za-z0-9_/~^@{}-]|\.(?!\.))+)?$"
    )]
    #[param(
        pattern = r"^(?!-)(?:[A-Za-z0-9_/~^@{}-]|\.(?!\.))+(?:\.\.(?!-)(?:[A-Za-z0-9_/~^@{}-]|\.(?!\.))+)?$"
    )]
    pub range: Option<String>,
    /// Dependents' depth, 1 to 4 (default 2).
    #[schema(minimum = 1, maximum = 4)]
    #[param(minimum = 1, maximum = 4)]
    pub depth: Option<u32>,
    /// An entry of `next_cursors`: that list alone, continued.
    pub cursor: Option<String>,
}

/// One definition the change touched.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChangedSymbol {
    pub uid: String,
    pub kind: String,
    pub name: String,
    pub path: String,
    pub line: u32,
    /// `added`, `modified`, `removed` or `renamed`.
    pub change: String,
    /// The uid a renamed definition had.
    pub renamed_from: Option<String>,
    /// `high`, `medium` or `low`, from its dependents and tests.
    pub risk: String,
    /// Why that risk, in a few words.
    pub risk_reason: String,
    /// Dependents counted to the depth asked.
    pub dependents_count: u64,
    /// The nearest dependents (at most 20), by depth.
    pub dependents: Vec<Neighbour>,
    /// Test code among the dependents.
    pub tests: Vec<GraphNode>,
    pub tasks: Vec<TaskMention>,
    pub documents: Vec<DocMention>,
}

/// One changed file.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChangedFile {
    pub path: String,
    /// `added`, `modified`, `deleted` or `renamed`.
    pub change: String,
    pub old_path: Option<String>,
    pub binary: bool,
    /// Definitions of it the change touched.
    pub symbols: u64,
    /// For a file the graph does not read (config, data): the tasks and
    /// document sections that name it.
    pub tasks: Vec<TaskMention>,
    pub documents: Vec<DocMention>,
}

/// The counts and what to look at first.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChangesSummary {
    pub files: u64,
    pub symbols: u64,
    /// The uids of the high-risk symbols.
    pub riskiest: Vec<String>,
    /// Changed (not removed) symbols no test reaches.
    pub untested: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Changes {
    /// What was compared with what.
    pub against: String,
    /// The graph revision the dependents and tests come from.
    pub graph_revision: i64,
    pub summary: ChangesSummary,
    /// Riskiest first.
    pub symbols: Vec<ChangedSymbol>,
    pub files: Vec<ChangedFile>,
    /// By list (`symbols`, `files`), the cursor for what a trimmed answer
    /// left out; it holds while the change and the graph stay as they were.
    pub next_cursors: BTreeMap<String, String>,
}

pub struct ChangesTool;

impl Tool for ChangesTool {
    type Input = ChangesInput;
    type Output = Changes;
    const SPEC: ToolSpec = spec(
        "cos_changes",
        "What a change affects, before a commit: the definitions the working tree (or staged, or a range) \
         changed, each with dependents, tests, tasks and documents, riskiest first.",
    )
    .cutting_first(&["symbols", "files"]);

    fn run(context: &ToolContext, input: ChangesInput) -> Result<Answer<Changes>, ToolError> {
        let against = against(&input)?;
        let depth = in_range("depth", input.depth, 2, 1, 4)?;
        let repo = &context.hub.config.repo_root;
        diff::check(repo, &against)?;
        let files = diff::changed_files(repo, &against)?;
        if files.len() > MAX_FILES {
            return Err(ToolError::invalid(
                "range",
                format!(
                    "a change of at most {MAX_FILES} files; this one has {}",
                    files.len()
                ),
            ));
        }
        // the graph as the working tree is now, as `cos search` keeps it
        let indexed = super::index::index(&context.hub.store, repo, &|_| {}, &|| {})?;
        let mut changed_files = Vec::new();
        let mut touched = Vec::new();
        let texts = diff::texts(repo, &against, &files)?;
        for (file, (old, new)) in files.iter().zip(texts) {
            let found = symbols::touched(file, old.as_deref(), new.as_deref());
            let read_by_graph = super::facts::Language::of(&file.path).is_some();
            let (tasks, documents) = if read_by_graph {
                (Vec::new(), Vec::new())
            } else {
                mentions::of(context, &file.path)?
            };
            changed_files.push(ChangedFile {
                path: file.path.clone(),
                change: file.status.as_str().into(),
                old_path: file.old_path.clone(),
                binary: file.binary,
                symbols: found.len() as u64,
                tasks,
                documents,
            });
            touched.extend(found);
        }
        // definitions of one name (`new`, `run`) share their mentions
        let mut named: HashMap<String, Mentions> = HashMap::new();
        let mut changed: Vec<ChangedSymbol> = Vec::new();
        for symbol in touched {
            let mentions = match named.get(&symbol.name) {
                Some(known) => known.clone(),
                None => {
                    let found = mentions::of(context, &symbol.name)?;
                    named.insert(symbol.name.clone(), found.clone());
                    found
                }
            };
            changed.push(described(context, symbol, depth, mentions)?);
        }
        changed.sort_by(|a, b| {
            rank(&a.risk)
                .cmp(&rank(&b.risk))
                .then(b.dependents_count.cmp(&a.dependents_count))
                .then(a.path.cmp(&b.path))
                .then(a.line.cmp(&b.line))
        });
        let summary = ChangesSummary {
            files: changed_files.len() as u64,
            symbols: changed.len() as u64,
            riskiest: changed
                .iter()
                .filter(|s| s.risk == "high")
                .map(|s| s.uid.clone())
                .collect(),
            untested: changed
                .iter()
                .filter(|s| s.change != "removed" && s.tests.is_empty())
                .map(|s| s.uid.clone())
                .collect(),
        };
        let revision = context.hub.store.view(super::revision_in)?;
        let names: Vec<&str> = named.keys().map(String::as_str).collect();
        let unresolved = context.hub.store.view(|c| {
            records::unresolved_calls_named(c, &names)
                .map_err(|e| crate::store::StoreError::on(c, e))
        })?;
        // a cursor holds while the change (its files and lines) and the graph do
        let mut state = std::collections::hash_map::DefaultHasher::new();
        (revision, format!("{files:?}")).hash(&mut state);
        let offsets = Offsets::new(
            &context.hub.cursors,
            Self::SPEC.name,
            (&against, depth),
            (state.finish() >> 1) as i64,
        );
        let from = offsets.start_in("cursor", input.cursor.as_deref())?;
        let names = ["symbols", "files"];
        let keep = narrowing("cursor", &names, from.as_ref())?;
        let starts = [
            keep[0].apply(&mut changed),
            keep[1].apply(&mut changed_files),
        ];
        let pages = named_pages(&offsets, "", &names, &starts);
        let answer = Answer::new(Changes {
            against: against.describe(),
            graph_revision: revision,
            summary,
            symbols: changed,
            files: changed_files,
            next_cursors: BTreeMap::new(),
        })
        .with_meta(meta(&[
            ("indexed_first", json!(indexed.parsed + indexed.removed)),
            ("unresolved_calls_named", json!(unresolved)),
        ]));
        Ok(pages.into_iter().fold(answer, Answer::with_page))
    }
}

fn against(input: &ChangesInput) -> Result<Against, ToolError> {
    match (input.staged.unwrap_or(false), input.range.as_deref()) {
        (true, Some(_)) => Err(ToolError::invalid_pair(
            "range",
            "staged",
            "a range or staged, not both",
        )),
        (true, None) => Ok(Against::Staged),
        (false, Some(range)) => diff::parse_range(range),
        (false, None) => Ok(Against::WorkingTree),
    }
}

fn rank(risk: &str) -> u8 {
    match risk {
        "high" => 0,
        "medium" => 1,
        _ => 2,
    }
}

/// Whether a dependent is test code: in a test file (the graph's rule), in
/// a scope named for tests (Rust's `mod tests`, a `TestCase` class), or a
/// `test_` function.
fn is_test(node: &GraphNode) -> bool {
    let qualified = node.uid.rsplit_once("::").map_or("", |(_, q)| q);
    let scopes = qualified.split('.').rev().skip(1);
    node.path.as_deref().is_some_and(super::is_test_path)
        || scopes
            .into_iter()
            .any(|scope| matches!(scope, "tests" | "test" | "Tests") || test_class(scope))
        || node.label.starts_with("test_")
}

/// `TestStore`, not `Tester`: `Test` and a capital.
fn test_class(scope: &str) -> bool {
    scope
        .strip_prefix("Test")
        .and_then(|rest| rest.chars().next())
        .is_some_and(char::is_uppercase)
}

/// The tasks and document sections naming one name.
type Mentions = (Vec<TaskMention>, Vec<DocMention>);

/// A touched definition with its dependents, tests, risk, and the mentions
/// of its name.
fn described(
    context: &ToolContext,
    symbol: symbols::Touched,
    depth: u32,
    (tasks, documents): Mentions,
) -> Result<ChangedSymbol, ToolError> {
    let dependents = context
        .hub
        .store
        .view(|c| -> Result<Vec<Neighbour>, ToolError> {
            match records::node_by_uid(c, &symbol.uid)? {
                Some((id, _)) => walk_neighbours(
                    c,
                    id,
                    Direction::In,
                    depth.max(3),
                    VISIT_LIMIT,
                    Some(DEPENDENCY_KINDS),
                ),
                // gone from the graph: what still refers to it by name
                None => Ok(records::referrers_by_name(c, &symbol.name)?
                    .into_iter()
                    .map(|(node, edge)| Neighbour {
                        node,
                        edge,
                        direction: "in".into(),
                        depth: 1,
                        confidence: "name".into(),
                    })
                    .collect()),
            }
        })?;
    let tests: Vec<GraphNode> = dependents
        .iter()
        .filter(|n| is_test(&n.node))
        .map(|n| n.node.clone())
        .collect();
    let within: Vec<Neighbour> = dependents
        .into_iter()
        .filter(|n| n.depth <= depth)
        .collect();
    let direct = within.iter().filter(|n| n.depth == 1).count();
    let (risk, reason) = match (&symbol.change, direct, tests.is_empty()) {
        (Change::Removed, 1.., _) => ("high", format!("removed, and {direct} still refer to it")),
        (Change::Removed, 0, _) => ("low", "removed; nothing refers to it".to_string()),
        (_, 5.., _) => ("high", format!("{direct} direct dependents")),
        (_, 1.., true) => (
            "high",
            format!("{direct} direct dependents and no test reaches it"),
        ),
        (_, 1.., false) => ("medium", format!("{direct} direct dependents, tested")),
        (_, 0, true) => ("medium", "no test reaches it".to_string()),
        (_, 0, false) => ("low", "tested, nothing depends on it".to_string()),
    };
    let renamed_from = match &symbol.change {
        Change::Renamed(from) => Some(from.clone()),
        _ => None,
    };
    Ok(ChangedSymbol {
        tasks,
        documents,
        dependents_count: within.len() as u64,
        dependents: within.into_iter().take(DEPENDENTS_NAMED).collect(),
        tests,
        risk: risk.into(),
        risk_reason: reason,
        change: symbol.change.as_str().into(),
        renamed_from,
        uid: symbol.uid,
        kind: symbol.kind,
        name: symbol.name,
        path: symbol.path,
        line: symbol.line,
    })
}

#[cfg(test)]
mod tests {
    use super::{GraphNode, is_test};

    fn node(uid: &str, path: &str) -> GraphNode {
        GraphNode {
            uid: uid.into(),
            kind: "function".into(),
            label: uid.rsplit(['.', ':']).next().unwrap_or_default().into(),
            path: Some(path.into()),
            line: Some(1),
        }
    }

    #[test]
    fn test_code_is_found_by_file_scope_or_name() {
        assert!(is_test(&node(
            "code:function:tests/test_store.py::test_save",
            "tests/test_store.py"
        )));
        assert!(is_test(&node(
            "code:function:src/rank.rs::tests.ranks_first",
            "src/rank.rs"
        )));
        assert!(is_test(&node(
            "code:method:app/models.py::TestStore.check",
            "app/models.py"
        )));
        assert!(is_test(&node(
            "code:function:app/checks.py::test_connect",
            "app/checks.py"
        )));
        assert!(!is_test(&node(
            "code:function:src/rank.rs::rank",
            "src/rank.rs"
        )));
        assert!(!is_test(&node(
            "code:method:src/rank.rs::Tester.run",
            "src/rank.rs"
        )));
        assert!(!is_test(&node(
            "code:function:src/latest.rs::contest",
            "src/latest.rs"
        )));
    }
}
