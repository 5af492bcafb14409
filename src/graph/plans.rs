//! Tools that plan work over the graph: where a rename must touch (graph edges
//! plus a text search for what the graph cannot see), where a call chain leads,
//! and which symbols look alike.

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use serde_json::{Map, json};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::Path;
use utoipa::ToSchema;

use super::tools::{
    GraphNode, add_freshness, graph_offsets, in_range, node_at, resolve_node, spec,
};
use crate::store::StoreError;
use crate::tools::cursor::{named_pages, narrowing};
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

fn sql_error(connection: &Connection) -> impl Fn(rusqlite::Error) -> ToolError + '_ {
    move |error| ToolError::from(StoreError::on(connection, error))
}

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

fn is_test_path(path: &str) -> bool {
    path.split('/').any(|segment| {
        segment == "tests"
            || segment == "test"
            || segment.starts_with("test_")
            || segment.ends_with("_test.py")
            || segment.ends_with("_test.go")
            || segment.contains(".test.")
            || segment.contains(".spec.")
    })
}

// ---------------------------------------------------------------- rename plan

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenamePlanInput {
    /// The symbol to rename: a uid, a path or a name.
    pub uid: String,
    /// The new name: an identifier (letters, digits, underscores; not starting with a digit).
    pub new_name: String,
    /// A list's cursor from `next_cursors`: that list alone, after the sites already seen.
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
        "Everything a rename touches: call sites and import sites (from the graph), doc references, test references and \
         string literals (from a whole-word text search), each saying which found it; a risk level and the order to edit files in.",
    );

    fn run(context: &ToolContext, input: RenamePlanInput) -> Result<Answer<RenamePlan>, ToolError> {
        let new_name = input.new_name.trim().to_string();
        if !valid_identifier(&new_name) {
            return Err(ToolError::invalid(
                "new_name",
                format!(
                    "an identifier (letters, digits, underscores, not starting with a digit), got {new_name:?}"
                ),
            ));
        }
        let root = context.hub.config.repo_root.clone();
        context.hub.store.view(|c| {
            let target = resolve_node(c, &input.uid, "uid")?;
            let node = target.node.clone();
            if !matches!(
                node.kind.as_str(),
                "function" | "method" | "class" | "interface" | "variable" | "module"
            ) {
                return Err(ToolError::invalid(
                    "uid",
                    format!(
                        "a function, method, class, interface, variable or module; {} is a {}",
                        node.uid, node.kind
                    ),
                ));
            }
            let old = node.label.clone();
            let mut files = Files::default();
            let definition_path = node.path.clone().unwrap_or_default();
            let (start, end) = span(c, target.id)?;
            let definition = files.site(
                &root,
                &definition_path,
                (start, end),
                &[&old],
                "graph",
                Some(node.uid.clone()),
            );

            let mut seen: HashSet<(String, u32)> =
                HashSet::from([(definition.path.clone(), definition.line)]);
            let mut call_sites = Vec::new();
            let mut test_references = Vec::new();
            for (uid, path, start, end) in callers(c, target.id)? {
                // a call through an alias (`import gettext as _`) names the alias, not the symbol
                let aliases = aliases_in(c, &path, &old)?;
                let mut words: Vec<&str> = vec![&old];
                words.extend(aliases.iter().map(String::as_str));
                let site = files.site(&root, &path, (start, end), &words, "graph", Some(uid));
                if seen.insert((site.path.clone(), site.line)) {
                    if is_test_path(&path) {
                        test_references.push(site);
                    } else {
                        call_sites.push(site);
                    }
                }
            }
            let mut import_sites = Vec::new();
            for path in importers(c, target.id, &old)? {
                let lines = files.lines(&root, &path).to_vec();
                for (index, line) in lines.iter().enumerate() {
                    let trimmed = line.trim_start();
                    let is_import = trimmed.starts_with("import ")
                        || trimmed.starts_with("from ")
                        || trimmed.starts_with("use ")
                        || trimmed.starts_with("pub use ");
                    if is_import && has_word(line, &old) {
                        let site = files.site(
                            &root,
                            &path,
                            (index as u32 + 1, index as u32 + 1),
                            &[&old],
                            "graph",
                            None,
                        );
                        if seen.insert((site.path.clone(), site.line)) {
                            import_sites.push(site);
                        }
                    }
                }
            }
            // the text search covers what no edge records: docs, strings, tests the graph missed
            let mut doc_references = Vec::new();
            let mut string_literals = Vec::new();
            for (path, language) in indexed_files(c)? {
                let lines = files.lines(&root, &path).to_vec();
                for (index, line) in lines.iter().enumerate() {
                    if !has_word(line, &old) {
                        continue;
                    }
                    let number = index as u32 + 1;
                    if seen.contains(&(path.clone(), number)) {
                        continue;
                    }
                    let site = || RenameSite {
                        path: path.clone(),
                        line: number,
                        text: line.trim().chars().take(200).collect(),
                        found_by: "text".to_string(),
                        in_node: None,
                    };
                    if language == "markdown" {
                        doc_references.push(site());
                    } else if in_string_literal(line, &old) {
                        string_literals.push(site());
                    } else if is_test_path(&path) {
                        test_references.push(site());
                    } else {
                        continue;
                    }
                    seen.insert((path.clone(), number));
                }
            }
            let all_sites = [
                &call_sites,
                &import_sites,
                &doc_references,
                &test_references,
                &string_literals,
            ];
            let count = all_sites.iter().map(|s| s.len()).sum::<usize>() as u64;
            let touched: BTreeSet<&str> = all_sites
                .iter()
                .flat_map(|sites| sites.iter().map(|s| s.path.as_str()))
                .collect();
            let risk =
                if count > 25 || touched.len() > 5 || (!string_literals.is_empty() && count > 5) {
                    "high"
                } else if count > 5 || touched.len() > 2 || !string_literals.is_empty() {
                    "medium"
                } else {
                    "low"
                };
            let mut order: Vec<String> = vec![definition.path.clone()];
            for sites in [
                &import_sites,
                &call_sites,
                &test_references,
                &doc_references,
                &string_literals,
            ] {
                for site in sites.iter() {
                    if !order.contains(&site.path) {
                        order.push(site.path.clone());
                    }
                }
            }
            let mut meta = Map::new();
            meta.insert("resolved_from".into(), json!(target.resolved_from));
            meta.insert("files_touched".into(), json!(order.len()));
            add_freshness(&mut meta, c, context)?;
            let listing = (&input.uid, &new_name);
            let offsets = graph_offsets(context, c, Self::SPEC.name, listing)?;
            let from = offsets.start_in("cursor", input.cursor.as_deref())?;
            let names = [
                "call_sites",
                "import_sites",
                "doc_references",
                "test_references",
                "string_literals",
                "order",
            ];
            let keep = narrowing("cursor", &names, from.as_ref())?;
            let starts = [
                keep[0].apply(&mut call_sites),
                keep[1].apply(&mut import_sites),
                keep[2].apply(&mut doc_references),
                keep[3].apply(&mut test_references),
                keep[4].apply(&mut string_literals),
                keep[5].apply(&mut order),
            ];
            let pages = named_pages(&offsets, "", &names, &starts);
            let answer = Answer::new(RenamePlan {
                node,
                old_name: old,
                new_name,
                definition,
                call_sites,
                import_sites,
                doc_references,
                test_references,
                string_literals,
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

fn span(c: &Connection, id: i64) -> Result<(u32, u32), ToolError> {
    c.query_row(
        "SELECT coalesce(line_start, 1), coalesce(line_end, line_start, 1) FROM graph_nodes WHERE id = ?1",
        [id],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
    .map_err(sql_error(c))
}

/// Nodes that call, extend or implement `id`: (uid, file, first line, last line).
fn callers(c: &Connection, id: i64) -> Result<Vec<(String, String, u32, u32)>, ToolError> {
    let run = || -> rusqlite::Result<Vec<(String, String, u32, u32)>> {
        let mut statement = c.prepare_cached(
            "SELECT s.uid, s.file, coalesce(s.line_start, 1), coalesce(s.line_end, s.line_start, 1)
             FROM graph_edges e JOIN graph_nodes s ON s.id = e.source
             WHERE e.target = ?1 AND e.kind IN ('calls', 'inherits_from', 'implements') AND s.file IS NOT NULL
             ORDER BY s.file, s.line_start",
        )?;
        let rows = statement.query_map([id], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

/// The local names file `path` binds `symbol` to, other than its own name.
fn aliases_in(c: &Connection, path: &str, symbol: &str) -> Result<Vec<String>, ToolError> {
    let run = || -> rusqlite::Result<Vec<String>> {
        let mut statement = c.prepare_cached(
            "SELECT DISTINCT b.local FROM graph_bindings b JOIN graph_nodes f ON f.id = b.file
             WHERE f.file = ?1 AND f.kind = 'file' AND b.symbol = ?2 AND b.local != ?2",
        )?;
        let rows = statement.query_map(params![path, symbol], |row| row.get(0))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

/// Files that import the symbol's file and bind its name.
fn importers(c: &Connection, id: i64, name: &str) -> Result<Vec<String>, ToolError> {
    let run = || -> rusqlite::Result<Vec<String>> {
        let mut statement = c.prepare_cached(
            "SELECT DISTINCT s.file FROM graph_nodes t
             JOIN graph_nodes f ON f.file = t.file AND f.kind IN ('file', 'doc_file')
             JOIN graph_edges e ON e.target = f.id AND e.kind = 'imports'
             JOIN graph_nodes s ON s.id = e.source
             JOIN graph_bindings b ON b.file = s.id AND (b.symbol = ?2 OR b.local = ?2)
             WHERE t.id = ?1 ORDER BY s.file",
        )?;
        let rows = statement.query_map(params![id, name], |row| row.get(0))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

fn indexed_files(c: &Connection) -> Result<Vec<(String, String)>, ToolError> {
    let run = || -> rusqlite::Result<Vec<(String, String)>> {
        let mut statement =
            c.prepare_cached("SELECT path, language FROM graph_files ORDER BY path")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

// ---------------------------------------------------------------- trace

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceInput {
    /// Where the chain starts: a function or method uid, a path or a name.
    pub uid: String,
    /// Calls to follow, 1 to 8 (default 4).
    pub depth: Option<u32>,
    /// Steps to return at most, 1 to 1,000 (default 200).
    pub max_steps: Option<u32>,
    /// A list's cursor from `next_cursors`: that list alone, after what was already seen.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TraceStep {
    pub node: GraphNode,
    /// Calls from the start to here.
    pub depth: u32,
    /// The caller that led here.
    pub from: String,
    /// `resolved`, `name` or `external`.
    pub confidence: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TraceBranch {
    pub uid: String,
    /// Distinct callees: where the chain forks.
    pub callees: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Trace {
    pub node: GraphNode,
    pub steps: Vec<TraceStep>,
    pub branches: Vec<TraceBranch>,
    /// Modules outside the repository the chain calls into.
    pub external_targets: Vec<String>,
    pub count: u64,
    /// By list, the cursor for what a trimmed answer left out.
    pub next_cursors: BTreeMap<String, String>,
}

pub struct GraphTrace;

impl Tool for GraphTrace {
    type Input = TraceInput;
    type Output = Trace;
    const SPEC: ToolSpec = spec(
        "cos_graph_trace",
        "The forward call chain from a function: each step with its caller and depth, the points where it branches, and \
         the external modules it reaches.",
    );

    fn run(context: &ToolContext, input: TraceInput) -> Result<Answer<Trace>, ToolError> {
        let depth = in_range("depth", input.depth, 4, 1, 8)?;
        let max_steps = in_range("max_steps", input.max_steps, 200, 1, 1000)? as usize;
        context.hub.store.view(|c| {
            let start = resolve_node(c, &input.uid, "uid")?;
            let mut seen = HashSet::from([start.id]);
            let mut frontier = VecDeque::from([(start.id, start.node.uid.clone(), 0u32)]);
            let mut steps = Vec::new();
            let mut branches = Vec::new();
            let mut external_targets = BTreeSet::new();
            let mut truncated = false;
            while let Some((id, uid, level)) = frontier.pop_front() {
                if level >= depth {
                    continue;
                }
                let callees = callees(c, id)?;
                if callees.len() > 1 {
                    branches.push(TraceBranch {
                        uid: uid.clone(),
                        callees: callees.iter().map(|(_, n, _)| n.uid.clone()).collect(),
                    });
                }
                for (next, node, confidence) in callees {
                    if node.kind == "external" {
                        external_targets.insert(node.label.clone());
                    }
                    if !seen.insert(next) {
                        continue;
                    }
                    if steps.len() >= max_steps {
                        truncated = true;
                        break;
                    }
                    if node.kind != "external" {
                        frontier.push_back((next, node.uid.clone(), level + 1));
                    }
                    steps.push(TraceStep {
                        node,
                        depth: level + 1,
                        from: uid.clone(),
                        confidence,
                    });
                }
            }
            let mut meta = Map::new();
            meta.insert("resolved_from".into(), json!(start.resolved_from));
            meta.insert(
                "semantic_scope".into(),
                json!(format!("forward_calls_depth_{depth}")),
            );
            meta.insert("steps_capped".into(), json!(truncated));
            add_freshness(&mut meta, c, context)?;
            let offsets =
                graph_offsets(context, c, Self::SPEC.name, (&input.uid, depth, max_steps))?;
            let from = offsets.start_in("cursor", input.cursor.as_deref())?;
            let names = ["steps", "branches", "external_targets"];
            let keep = narrowing("cursor", &names, from.as_ref())?;
            let mut external_targets: Vec<String> = external_targets.into_iter().collect();
            let count = steps.len() as u64;
            let starts = [
                keep[0].apply(&mut steps),
                keep[1].apply(&mut branches),
                keep[2].apply(&mut external_targets),
            ];
            let answer = Answer::new(Trace {
                node: start.node,
                count,
                steps,
                branches,
                external_targets,
                next_cursors: BTreeMap::new(),
            });
            let pages = named_pages(&offsets, "", &names, &starts);
            Ok(pages
                .into_iter()
                .fold(answer, Answer::with_page)
                .with_meta(meta))
        })
    }
}

fn callees(c: &Connection, id: i64) -> Result<Vec<(i64, GraphNode, String)>, ToolError> {
    let run = || -> rusqlite::Result<Vec<(i64, GraphNode, String)>> {
        let mut statement = c.prepare_cached(
            "SELECT n.id, n.uid, n.kind, n.label, n.file, n.line_start, e.confidence
             FROM graph_edges e JOIN graph_nodes n ON n.id = e.target
             WHERE e.source = ?1 AND e.kind = 'calls' ORDER BY n.file, n.line_start, n.uid",
        )?;
        let rows =
            statement.query_map([id], |row| Ok((row.get(0)?, node_at(row, 1)?, row.get(6)?)))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

// ---------------------------------------------------------------- similar

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SimilarInput {
    pub uid: String,
    /// 1 to 50 (default 10).
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SimilarSymbol {
    pub node: GraphNode,
    /// 0 to 1: the mean of the two scores below.
    pub score: f64,
    /// Jaccard overlap of what both call, are called by, extend or contain.
    pub structural: f64,
    /// Jaccard overlap of the words in both names (snake_case and camelCase split).
    pub lexical: f64,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Similar {
    pub node: GraphNode,
    pub results: Vec<SimilarSymbol>,
    pub count: u64,
}

/// The words of an identifier: `parse_HTTPRequest2` → parse, http, request2.
pub fn name_words(name: &str) -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (index, c) in chars.iter().enumerate() {
        let next_is_lower = chars.get(index + 1).is_some_and(|n| n.is_lowercase());
        let boundary = c.is_uppercase()
            && !current.is_empty()
            && (current
                .chars()
                .last()
                .is_some_and(|p| p.is_lowercase() || p.is_ascii_digit())
                || next_is_lower);
        if !c.is_alphanumeric() || boundary {
            if !current.is_empty() {
                words.insert(current.to_lowercase());
                current.clear();
            }
            if !c.is_alphanumeric() {
                continue;
            }
        }
        current.push(*c);
    }
    if !current.is_empty() {
        words.insert(current.to_lowercase());
    }
    words
}

fn jaccard<T: Ord>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    a.intersection(b).count() as f64 / a.union(b).count() as f64
}

pub struct GraphSimilar;

impl Tool for GraphSimilar {
    type Input = SimilarInput;
    type Output = Similar;
    const SPEC: ToolSpec = spec(
        "cos_graph_similar",
        "Symbols like this one, without a model: structurally (they call, are called by or extend the same things) and \
         lexically (their names share words). Candidates of the same kind family, best first.",
    );

    fn run(context: &ToolContext, input: SimilarInput) -> Result<Answer<Similar>, ToolError> {
        let limit = in_range("limit", input.limit, 10, 1, 50)? as usize;
        context.hub.store.view(|c| {
            let target = resolve_node(c, &input.uid, "uid")?;
            let family = kind_family(&target.node.kind);
            let own = neighbour_keys(c, target.id)?;
            let own_words = name_words(&target.node.label);
            let mut candidates: BTreeMap<i64, GraphNode> = BTreeMap::new();
            for (id, node) in structural_candidates(c, target.id)?
                .into_iter()
                .chain(lexical_candidates(c, &own_words)?)
            {
                if id != target.id && kind_family(&node.kind) == family {
                    candidates.insert(id, node);
                }
            }
            let mut results = Vec::new();
            for (id, node) in candidates {
                let structural = jaccard(&own, &neighbour_keys(c, id)?);
                let lexical = jaccard(&own_words, &name_words(&node.label));
                let score = (structural + lexical) / 2.0;
                if score > 0.0 {
                    let round = |x: f64| (x * 1000.0).round() / 1000.0;
                    results.push(SimilarSymbol {
                        node,
                        score: round(score),
                        structural: round(structural),
                        lexical: round(lexical),
                    });
                }
            }
            results.sort_by(|a, b| {
                b.score
                    .total_cmp(&a.score)
                    .then_with(|| a.node.uid.cmp(&b.node.uid))
            });
            results.truncate(limit);
            let mut meta = Map::new();
            meta.insert("resolved_from".into(), json!(target.resolved_from));
            meta.insert(
                "method".into(),
                json!("jaccard(neighbours) + jaccard(name words), no model"),
            );
            add_freshness(&mut meta, c, context)?;
            Ok(Answer::new(Similar {
                node: target.node,
                count: results.len() as u64,
                results,
            })
            .with_meta(meta))
        })
    }
}

fn kind_family(kind: &str) -> &str {
    match kind {
        "function" | "method" => "callable",
        "class" | "interface" => "type",
        other => other,
    }
}

/// A node's neighbourhood as `direction:kind:node` keys.
fn neighbour_keys(c: &Connection, id: i64) -> Result<BTreeSet<String>, ToolError> {
    let run = || -> rusqlite::Result<BTreeSet<String>> {
        let mut statement = c.prepare_cached(
            "SELECT 'out:' || kind || ':' || target FROM graph_edges WHERE source = ?1 AND kind <> 'contains'
             UNION ALL SELECT 'in:' || kind || ':' || source FROM graph_edges WHERE target = ?1 AND kind <> 'contains'",
        )?;
        let rows = statement.query_map([id], |row| row.get(0))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

/// Nodes that share a callee, a caller or a base with `id` (at most 500).
fn structural_candidates(c: &Connection, id: i64) -> Result<Vec<(i64, GraphNode)>, ToolError> {
    let run = || -> rusqlite::Result<Vec<(i64, GraphNode)>> {
        let mut statement = c.prepare_cached(
            "SELECT DISTINCT n.id, n.uid, n.kind, n.label, n.file, n.line_start FROM (
                 SELECT other.source AS id FROM graph_edges mine JOIN graph_edges other
                     ON other.target = mine.target AND other.kind = mine.kind
                     WHERE mine.source = ?1 AND mine.kind <> 'contains'
                 UNION SELECT other.target FROM graph_edges mine JOIN graph_edges other
                     ON other.source = mine.source AND other.kind = mine.kind
                     WHERE mine.target = ?1 AND mine.kind <> 'contains'
             ) shared JOIN graph_nodes n ON n.id = shared.id LIMIT 500",
        )?;
        let rows = statement.query_map([id], |row| Ok((row.get(0)?, node_at(row, 1)?)))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

/// Nodes whose names share a word with `words` (at most 200).
fn lexical_candidates(
    c: &Connection,
    words: &BTreeSet<String>,
) -> Result<Vec<(i64, GraphNode)>, ToolError> {
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let query = words
        .iter()
        .map(|w| format!("label:\"{w}\"*"))
        .collect::<Vec<_>>()
        .join(" OR ");
    let run = || -> rusqlite::Result<Vec<(i64, GraphNode)>> {
        let mut statement = c.prepare_cached(
            "SELECT n.id, n.uid, n.kind, n.label, n.file, n.line_start FROM graph_nodes_fts f
             JOIN graph_nodes n ON n.id = f.rowid WHERE graph_nodes_fts MATCH ?1 ORDER BY bm25(graph_nodes_fts) LIMIT 200",
        )?;
        let rows = statement.query_map([query], |row| Ok((row.get(0)?, node_at(row, 1)?)))?;
        rows.collect()
    };
    run().map_err(sql_error(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_snake_and_camel_case() {
        let words = |s: &str| name_words(s).into_iter().collect::<Vec<_>>();
        assert_eq!(words("parse_HTTPRequest"), ["http", "parse", "request"]);
        assert_eq!(words("loadTasks"), ["load", "tasks"]);
        assert_eq!(words("__init__"), ["init"]);
    }

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
    }
}
