//! The one ordering every hit of every area goes through, deterministic:
//! an exact definition of the queried name first, then hits holding more
//! of the query's words, then name and file-name matches, whole words
//! before parts of words, then BM25 (names weigh more than paths, paths
//! more than bodies, rare words more than common ones), symbol kinds
//! weighted (a class above a variable), ties broken by path, line and
//! target.
//!
//! Beside it: `collect.rs` gathers a query's hits before they are ranked and
//! `snippets.rs` cuts a hit's snippet around its match. The features an item
//! brings to every ranking are worked out once and kept with the item
//! (`index/features.rs`).

pub mod collect;
pub mod snippets;

use memchr::memmem::Finder;
use std::cmp::Ordering;

use crate::search::memory::postings::Scored;
use std::sync::Arc;

use crate::search::index::features::{self, Holds, Standing, kind_weight};
use crate::search::index::records::Item;
use crate::search::memory::file_texts::FileText;
use crate::search::query::Query;
use crate::search::query::tokens;

/// A line of code text that matched. Where in it is found again only for
/// the lines an answer shows (`Highlighter::line_ranges`).
#[derive(Debug, Clone)]
pub struct CodeLine {
    /// Shared by every line of the file.
    pub path: Arc<str>,
    /// Its file's language, shared by every line of the file.
    pub lang: Arc<str>,
    pub line: u32,
    pub text: LineText,
    pub whole_word: bool,
    /// Whether its file's path is a test's.
    pub test: bool,
    /// Its place among the lines of every indexed file: its file's place
    /// in path order (as bytes) above its line number. Two lines compare
    /// by it as by their paths then lines.
    pub in_path_order: u64,
}

/// A line's text, as where it is in its file's text: the lines that are
/// ranked but not shown are never copied.
#[derive(Clone)]
pub struct LineText {
    file: Arc<FileText>,
    start: usize,
    end: usize,
}

impl LineText {
    /// `line`, a slice of `file`'s text.
    pub fn within(file: &Arc<FileText>, line: &str) -> LineText {
        let start = (line.as_ptr() as usize).saturating_sub(file.text.as_ptr() as usize);
        let start = start.min(file.text.len());
        LineText {
            file: file.clone(),
            start,
            end: (start + line.len()).min(file.text.len()),
        }
    }

    /// The line at `bytes` of `file`'s text, known to lie on character
    /// boundaries: nothing of the text is read.
    pub fn at(file: &Arc<FileText>, bytes: std::ops::Range<usize>) -> LineText {
        let end = bytes.end.min(file.text.len());
        LineText {
            file: file.clone(),
            start: bytes.start.min(end),
            end,
        }
    }

    /// A line on its own.
    #[cfg(test)]
    pub fn of(line: &str) -> LineText {
        let file = Arc::new(FileText::of(line));
        LineText::within(&file, &file.text.clone())
    }

    pub fn as_str(&self) -> &str {
        self.file.text.get(self.start..self.end).unwrap_or_default()
    }
}

impl std::fmt::Debug for LineText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

#[derive(Debug, Clone)]
pub enum Found {
    Item(Scored),
    Line(CodeLine),
}

/// The ranking rules, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    ExactDefinition,
    Name,
    WholeWordInName,
    PartialName,
    TextWholeWord,
    TextPartial,
    /// Found by the embedding model: its meaning is near the query's.
    Meaning,
}

impl Rule {
    pub fn wording(self) -> &'static str {
        match self {
            Rule::ExactDefinition => "exact definition",
            Rule::Name => "name",
            Rule::WholeWordInName => "whole word in name",
            Rule::PartialName => "partial name",
            Rule::TextWholeWord => "text (whole word)",
            Rule::TextPartial => "text (partial)",
            Rule::Meaning => "similar meaning",
        }
    }
}

/// A hit before it is shown: its rule and what orders it.
#[derive(Debug, Clone)]
pub struct Ranked {
    pub rule: Rule,
    /// The query's terms it holds, a bit for each by its place.
    pub terms: u32,
    /// How deep its definition is nested (`Class.method`: 1): of the exact
    /// definitions of a name, the module's own comes before members'.
    depth: usize,
    test: bool,
    weight: i32,
    bm25: f64,
    /// Where it was found: what orders hits the rules hold equal.
    at: usize,
    pub found: Found,
}

impl Ranked {
    /// An item found by its meaning alone, `at` in the semantic order.
    pub fn by_meaning(id: i64, item: Arc<Item>, at: usize) -> Ranked {
        Ranked {
            rule: Rule::Meaning,
            terms: 0,
            depth: nesting(&item.target),
            test: item.test,
            weight: 0,
            bm25: 0.0,
            at,
            found: Found::Item(Scored {
                id,
                item,
                bm25: 0.0,
                terms: 0,
            }),
        }
    }

    /// The row id of an item hit.
    pub fn item_id(&self) -> Option<i64> {
        match &self.found {
            Found::Item(hit) => Some(hit.id),
            Found::Line(_) => None,
        }
    }

    /// Where the hit is, for the last ties: path, line, target.
    fn place(&self) -> (&str, u32, &str) {
        match &self.found {
            Found::Item(hit) => (
                hit.item.path.as_deref().unwrap_or(""),
                hit.item.line.unwrap_or(0),
                &hit.item.target,
            ),
            Found::Line(line) => (&line.path, line.line, ""),
        }
    }
}

/// What the query's words are compared with names as.
pub struct Wanted {
    /// The only word, as written, when the query is one identifier.
    exact: Option<String>,
    /// Every positive term's words run together.
    folded: String,
    /// Each positive term's parts, joined by single spaces (an empty
    /// one is held by no name).
    joined_parts: Vec<Finder<'static>>,
    /// Each positive term run together.
    folded_terms: Vec<Finder<'static>>,
    /// A bit for each positive term of words (what an item can hold): what
    /// a code line holds.
    every_term: u32,
}

impl Wanted {
    pub fn of(query: &Query) -> Wanted {
        let exact = match query.terms.as_slice() {
            [only] if !only.phrase && !only.prefix => Some(only.text.clone()),
            _ => None,
        };
        let folded_terms: Vec<String> = query
            .terms
            .iter()
            .map(|t| tokens::folded(&t.text))
            .collect();
        Wanted {
            exact,
            folded: folded_terms.concat(),
            joined_parts: query
                .terms
                .iter()
                .map(|t| Finder::new(&t.parts().join(" ")).into_owned())
                .collect(),
            folded_terms: folded_terms
                .iter()
                .map(|t| Finder::new(t).into_owned())
                .collect(),
            every_term: query
                .terms
                .iter()
                .take(32)
                .enumerate()
                .filter(|(_, term)| !term.parts().is_empty())
                .fold(0, |bits, (at, _)| bits | 1 << at),
        }
    }

    /// A bit for each term of words: what a hit holding them all holds.
    pub fn every_term(&self) -> u32 {
        self.every_term
    }

    /// The terms of words a line of code text holds (a bit for each), its
    /// words run together as each term's are: the precise terms, which
    /// the line was asked for, and the plain words it holds besides.
    fn held_in_line(&self, line: &str) -> u32 {
        let folded = tokens::folded(line);
        self.folded_terms
            .iter()
            .take(32)
            .enumerate()
            .filter(|(_, term)| !term.needle().is_empty() && term.find(folded.as_bytes()).is_some())
            .fold(0, |bits, (at, _)| bits | 1 << at)
            & self.every_term
    }

    /// The terms of `held` (a bit for each held), by their finders.
    fn held<'w>(
        finders: &'w [Finder<'static>],
        held: u32,
    ) -> impl Iterator<Item = &'w Finder<'static>> {
        finders
            .iter()
            .enumerate()
            .filter(move |(at, _)| {
                held.checked_shr(*at as u32)
                    .is_some_and(|bits| bits & 1 == 1)
            })
            .map(|(_, finder)| finder)
    }

    /// The rule an item meets, from its name's parts as the index keeps them
    /// (single spaces between parts). Asked of every item a query matches:
    /// what does not depend on the query comes from the item's standing.
    fn rule_for(&self, item: &Item, standing: &Standing, held: u32) -> Rule {
        if standing.definition && self.exact.as_deref() == Some(&*item.name) {
            return Rule::ExactDefinition;
        }
        let is_name = !self.folded.is_empty()
            && (*standing.folded_name == self.folded
                || standing.folded_stem.as_deref() == Some(self.folded.as_str())
                || (standing.task
                    && self
                        .exact
                        .as_deref()
                        .is_some_and(|e| e.eq_ignore_ascii_case(&item.target))));
        if is_name {
            return Rule::Name;
        }
        // of the words, those the item holds (all of them unless ranked)
        let name_parts = &*item.name_parts;
        let in_name = |joined: &Finder| holds_parts(name_parts, joined);
        let joined: Vec<&Finder> = Wanted::held(&self.joined_parts, held).collect();
        if !joined.is_empty() && joined.iter().all(|p| in_name(p)) {
            return Rule::WholeWordInName;
        }
        // `transaction atomic`: the name holds some words, its file's name the rest
        if joined.iter().any(|p| in_name(p)) {
            let file_parts = &standing.file_stem_parts;
            let in_file = |joined: &Finder| holds_parts(file_parts, joined);
            if joined.iter().all(|p| in_name(p) || in_file(p)) {
                return Rule::WholeWordInName;
            }
        }
        let terms: Vec<&Finder> = Wanted::held(&self.folded_terms, held).collect();
        let partial = !terms.is_empty()
            && terms.iter().all(|term| {
                !term.needle().is_empty() && term.find(standing.folded_name.as_bytes()).is_some()
            });
        if partial {
            return Rule::PartialName;
        }
        Rule::TextWholeWord
    }
}

/// What each corpus holds, by its name.
pub type HoldsOf<'a> = &'a dyn Fn(&str) -> Holds;

/// `item`'s standing, worked out at its first ranking.
fn standing_of<'i>(item: &'i Item, holds: HoldsOf) -> &'i Standing {
    item.standing.get_or_init(|| {
        let of = features::Of {
            kind: &item.kind,
            name: &item.name,
            name_parts: &item.name_parts,
            path: item.path.as_deref(),
            test: item.test,
        };
        Box::new(Standing::of(holds(&item.corpus), of))
    })
}

/// Whether `parts` (single-space separated) hold what `run` finds (parts
/// joined by single spaces, not empty) as consecutive whole parts.
fn holds_parts(parts: &str, run: &Finder) -> bool {
    let (bytes, length) = (parts.as_bytes(), run.needle().len());
    if length == 0 {
        return false;
    }
    let mut from = 0;
    // every occurrence, overlapping ones too (`b b` in `xb b b`); a UTF-8
    // needle starts at no byte but a character's first
    while let Some(found) = bytes.get(from..).and_then(|rest| run.find(rest)) {
        let at = from + found;
        let end = at + length;
        if (at == 0 || bytes[at - 1] == b' ') && (end == bytes.len() || bytes[end] == b' ') {
            return true;
        }
        from = at + 1;
    }
    false
}

/// Ranks every hit: the first `shown` come in order, the rest after them in
/// no set order (an answer counts them but does not show them). Hits the
/// ordering holds equal keep the order they were found in, so any `shown`
/// gives the same first hits as ordering all of them would.
pub fn rank(query: &Query, found: Vec<Found>, shown: usize, holds: HoldsOf) -> Vec<Ranked> {
    let wanted = Wanted::of(query);
    let loose_lines = crate::search::query::plan::loosens_lines(query);
    let mut ranked: Vec<Ranked> = found
        .into_iter()
        .enumerate()
        .map(|(at, found)| match &found {
            Found::Item(hit) => {
                let standing = standing_of(&hit.item, holds);
                // of the terms of words, which it holds
                let terms = hit.terms & wanted.every_term;
                Ranked {
                    rule: wanted.rule_for(&hit.item, standing, terms),
                    terms,
                    test: standing.test,
                    weight: standing.weight,
                    depth: nesting(&hit.item.target),
                    bm25: hit.bm25,
                    at,
                    found,
                }
            }
            Found::Line(line) => Ranked {
                rule: if line.whole_word {
                    Rule::TextWholeWord
                } else {
                    Rule::TextPartial
                },
                // a line holds every word, unless it was asked for fewer
                terms: if loose_lines {
                    wanted.held_in_line(line.text.as_str())
                } else {
                    wanted.every_term
                },
                test: line.test,
                weight: kind_weight("line"),
                depth: 0,
                bm25: 0.0,
                at,
                found,
            },
        })
        .collect();
    let by = |a: &Ranked, b: &Ranked| order(a, b).then(a.at.cmp(&b.at));
    let shown = shown.min(ranked.len());
    if shown > 0 && shown < ranked.len() {
        ranked.select_nth_unstable_by(shown - 1, by);
    }
    ranked[..shown].sort_unstable_by(by);
    ranked
}

fn order(a: &Ranked, b: &Ranked) -> Ordering {
    order_before_place(a, b).then_with(|| match (&a.found, &b.found) {
        (Found::Line(x), Found::Line(y)) => x.in_path_order.cmp(&y.in_path_order),
        _ => a.place().cmp(&b.place()),
    })
}

/// How many names a definition's target is nested in: the dots of what
/// follows its path (`path::Class.method`), 0 for a target without one.
fn nesting(target: &str) -> usize {
    target
        .rsplit_once("::")
        .map_or(0, |(_, qualified)| qualified.matches('.').count())
}

/// Every rule of the ordering but the last ties (where the hits are).
fn order_before_place(a: &Ranked, b: &Ranked) -> Ordering {
    let by_kind_then_bm25 = || b.weight.cmp(&a.weight).then(a.bm25.total_cmp(&b.bm25));
    let by_bm25_then_kind = || a.bm25.total_cmp(&b.bm25).then(b.weight.cmp(&a.weight));
    let exact = |r: &Ranked| r.rule != Rule::ExactDefinition;
    let fewer_terms = |r: &Ranked| std::cmp::Reverse(r.terms.count_ones());
    exact(a)
        .cmp(&exact(b))
        .then(fewer_terms(a).cmp(&fewer_terms(b)))
        .then(a.rule.cmp(&b.rule))
        .then_with(|| match a.rule {
            Rule::ExactDefinition => a.depth.cmp(&b.depth),
            _ => Ordering::Equal,
        })
        .then(a.test.cmp(&b.test))
        .then_with(|| {
            if a.rule < Rule::TextWholeWord {
                by_kind_then_bm25()
            } else {
                by_bm25_then_kind()
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::is_test_path;

    fn query(text: &str) -> Query {
        crate::search::query::parsed_for_tests(text)
    }

    fn holds_for_tests(corpus: &str) -> Holds {
        match corpus {
            "symbols" => Holds::Definitions,
            "tasks" => Holds::Tasks,
            _ => Holds::Other,
        }
    }

    fn item(corpus: &str, kind: &str, name: &str, path: &str, bm25: f64) -> Found {
        Found::Item(Scored {
            id: 0,
            item: std::sync::Arc::new(Item {
                corpus: corpus.into(),
                kind: kind.into(),
                name: name.into(),
                name_parts: tokens::all_parts(name).join(" ").into(),
                target: format!("{path}::{name}").into(),
                path: Some(path.into()),
                line: Some(1),
                lang: None,
                status: None,
                body: "".into(),
                test: is_test_path(path),
                standing: Default::default(),
            }),
            bm25,
            // every word of the query, as a word query without optional terms finds
            terms: u32::MAX,
        })
    }

    fn names(ranked: &[Ranked]) -> Vec<String> {
        ranked
            .iter()
            .map(|r| match &r.found {
                Found::Item(hit) => format!("{}:{}", hit.item.kind, hit.item.name),
                Found::Line(line) => format!("line:{}", line.path),
            })
            .collect()
    }

    #[test]
    fn the_exact_definition_comes_first_then_names_then_text() {
        let found = vec![
            item("docs", "heading", "Using QuerySet filters", "b.md", -9.0),
            item("symbols", "variable", "queryset", "a.py", -5.0),
            item("symbols", "method", "get_queryset", "a.py", -6.0),
            item("symbols", "class", "QuerySet", "z.py", -1.0),
            item("symbols", "function", "other", "a.py", -20.0),
            Found::Line(CodeLine {
                path: "a.py".into(),
                lang: "python".into(),
                line: 3,
                text: LineText::of("x = QuerySet()"),
                whole_word: true,
                test: false,
                in_path_order: 3,
            }),
        ];
        let ranked = rank(&query("QuerySet"), found, usize::MAX, &holds_for_tests);
        assert_eq!(
            names(&ranked),
            vec![
                "class:QuerySet",
                "variable:queryset",
                "heading:Using QuerySet filters",
                "method:get_queryset",
                "function:other",
                "line:a.py",
            ]
        );
        assert_eq!(ranked[0].rule, Rule::ExactDefinition);
        assert_eq!(ranked[1].rule, Rule::Name);
        assert_eq!(ranked[2].rule, Rule::WholeWordInName);
        assert_eq!(ranked[3].rule, Rule::PartialName);
    }

    proptest::proptest! {
        /// Whole parts are found in the joined form as in the list of parts.
        #[test]
        fn parts_are_held_as_the_list_of_parts_holds_them(
            name in proptest::collection::vec(proptest::sample::select(vec!["b", "xb", "\u{e9}b", "c"]), 0..8),
            run in proptest::collection::vec(proptest::sample::select(vec!["b", "xb", "\u{e9}b", "c"]), 1..3),
        ) {
            proptest::prop_assert!(holds_parts("xb b b", &Finder::new("b b")), "an occurrence inside an earlier one");
            let by_list = name.windows(run.len()).any(|window| window == run.as_slice());
            proptest::prop_assert_eq!(holds_parts(&name.join(" "), &Finder::new(&run.join(" "))), by_list);
        }
    }

    #[test]
    fn tests_rank_after_the_code_they_test_within_a_rule() {
        for (path, test) in [
            ("tests/transactions/tests.py", true),
            ("app/test_models.py", true),
            ("pkg/server_test.go", true),
            ("ui/tests/board.spec.ts", true),
            ("src/parser.test.ts", true),
            ("django/db/transaction.py", false),
            ("src/testing.rs", false),
        ] {
            assert_eq!(is_test_path(path), test, "{path}");
        }
        let found = vec![
            item(
                "symbols",
                "class",
                "AtomicTransactionTests",
                "tests/transactions/tests.py",
                -9.0,
            ),
            item(
                "symbols",
                "function",
                "atomic",
                "django/db/transaction.py",
                -1.0,
            ),
        ];
        let ranked = rank(
            &query("transaction atomic"),
            found,
            usize::MAX,
            &holds_for_tests,
        );
        assert_eq!(
            names(&ranked),
            vec!["function:atomic", "class:AtomicTransactionTests"]
        );
        assert!(ranked.iter().all(|r| r.rule == Rule::WholeWordInName));
    }

    #[test]
    fn a_class_outranks_a_variable_of_the_same_rule_and_ties_go_by_path() {
        let found = vec![
            item("symbols", "variable", "Parser", "b.py", -9.0),
            item("symbols", "class", "Parser", "c.py", -1.0),
            item("symbols", "class", "Parser", "a.py", -1.0),
        ];
        let ranked = rank(&query("parser"), found, usize::MAX, &holds_for_tests);
        let paths: Vec<_> = ranked
            .iter()
            .map(|r| (r.weight, r.place().0.to_string()))
            .collect();
        assert_eq!(
            paths,
            vec![(8, "a.py".into()), (8, "c.py".into()), (2, "b.py".into())]
        );
    }

    fn label(ranked: &Ranked) -> String {
        match &ranked.found {
            Found::Item(hit) => format!("{}:{}:{}", hit.item.kind, hit.item.name, hit.bm25),
            Found::Line(line) => format!("line:{}:{}", line.path, line.line),
        }
    }

    proptest::proptest! {
        #[test]
        fn the_shown_hits_are_those_a_stable_sort_of_all_puts_first(
            hits in proptest::collection::vec(
                (0usize..4, 0usize..4, 0usize..3, -3i32..1, proptest::bool::ANY),
                0..40,
            ),
            shown in 0usize..45,
        ) {
            let kinds = ["class", "variable", "method", "heading"];
            let names = ["QuerySet", "queryset", "get_queryset", "other"];
            let paths = ["a.py", "tests/b.py", "c.py"];
            let in_path_order = |path: &str, line: u32| {
                let mut sorted = paths;
                sorted.sort_unstable();
                let place = sorted.iter().position(|p| *p == path).unwrap_or(0);
                (place as u64) << 32 | u64::from(line)
            };
            let found = || -> Vec<Found> {
                hits.iter()
                    .map(|&(kind, name, path, bm25, line)| {
                        if line {
                            Found::Line(CodeLine {
                                path: paths[path].into(),
                                lang: "python".into(),
                                line: bm25.unsigned_abs(),
                                text: LineText::of(names[name]),
                                whole_word: kind % 2 == 0,
                                test: is_test_path(paths[path]),
                                in_path_order: in_path_order(paths[path], bm25.unsigned_abs()),
                            })
                        } else {
                            item("symbols", kinds[kind], names[name], paths[path], f64::from(bm25))
                        }
                    })
                    .collect()
            };
            let all = rank(&query("QuerySet"), found(), usize::MAX, &holds_for_tests);
            let mut stable = rank(&query("QuerySet"), found(), 0, &holds_for_tests);
            // the last ties by the paths themselves, as the ordering states them
            stable.sort_by(|a, b| order_before_place(a, b).then_with(|| a.place().cmp(&b.place())));
            let labels = |r: &[Ranked]| r.iter().map(label).collect::<Vec<_>>();
            proptest::prop_assert_eq!(labels(&all), labels(&stable));
            let some = rank(&query("QuerySet"), found(), shown, &holds_for_tests);
            let cut = shown.min(all.len());
            proptest::prop_assert_eq!(labels(&some[..cut]), labels(&all[..cut]));
            proptest::prop_assert_eq!(some.len(), all.len());
        }
    }
}
