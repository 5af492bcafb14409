//! The modes beside the lexical one: `semantic` answers with the items
//! whose vectors are nearest the query's words, and `auto`, when a model is
//! set, fuses the lexical and the semantic orders by reciprocal rank. Which
//! mode answered, and why, goes into the answer's meta.

use serde::Deserialize;
use std::collections::HashSet;
use std::sync::Arc;
use utoipa::ToSchema;

use super::memory::item_index;
use super::query::Query;
use super::rank::collect::Sieve;
use super::rank::{Ranked, Rule, Wanted};
use super::semantic::{self, Embedder, pass::Progress, vectors};
use crate::tools::{ToolContext, ToolError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    Auto,
    Lexical,
    Semantic,
}

/// How deep each order is read for fusion, and the most a semantic answer
/// holds.
pub const DEPTH: usize = 100;
/// Reciprocal rank fusion's constant: the usual 60 lets neither order's
/// first few hits drown the other's.
const FUSION_K: f64 = 60.0;
/// How much the semantic order counts beside the lexical one in fusion
/// (0.5 to 1.5 moved the question set's MRR by under 0.02).
const SEMANTIC_WEIGHT: f64 = 0.7;

/// The mode that answers a query.
pub enum Answering {
    Lexical { reason: String },
    Semantic(Arc<Embedder>),
    Fused(Arc<Embedder>),
}

impl Answering {
    pub fn name(&self) -> &'static str {
        match self {
            Answering::Lexical { .. } => "lexical",
            Answering::Semantic(_) => "semantic",
            Answering::Fused(_) => "fused",
        }
    }

    pub fn reason(&self) -> String {
        match self {
            Answering::Lexical { reason } => reason.clone(),
            Answering::Semantic(_) => "semantic was asked for: definitions the query names exactly, then items nearest its words by meaning".into(),
            Answering::Fused(_) => "auto with an embedding model: lexical and semantic orders fused by reciprocal rank; exact names first".into(),
        }
    }

    pub fn embedder(&self) -> Option<&Arc<Embedder>> {
        match self {
            Answering::Lexical { .. } => None,
            Answering::Semantic(e) | Answering::Fused(e) => Some(e),
        }
    }
}

/// Which mode answers `query` asked in `mode`: `semantic` needs a model that
/// can be used (else its error), `auto` fuses when one can and the query
/// has words to compare.
pub fn choose(
    context: &ToolContext,
    mode: SearchMode,
    query: &Query,
) -> Result<Answering, ToolError> {
    let words = !words_of(query).is_empty();
    match mode {
        SearchMode::Lexical => Ok(Answering::Lexical {
            reason: "lexical was asked for".into(),
        }),
        SearchMode::Semantic => {
            let model = semantic::model(&context.hub.config)?.ok_or_else(semantic::unavailable)?;
            if !words {
                return Err(ToolError::invalid(
                    "q",
                    "words to compare by meaning (mode semantic takes words, not a /regex/ or filters alone)",
                ));
            }
            Ok(Answering::Semantic(model))
        }
        SearchMode::Auto => Ok(match semantic::model(&context.hub.config) {
            Ok(Some(model)) if words => Answering::Fused(model),
            Ok(Some(_)) => Answering::Lexical {
                reason: "auto: the query has no words to compare by meaning, so the lexical index answered".into(),
            },
            Ok(None) => Answering::Lexical {
                reason: format!(
                    "auto: no embedding model is set ({} or [search] {}), so the lexical index answered",
                    semantic::ENVIRONMENT,
                    semantic::SETTING
                ),
            },
            Err(error) => Answering::Lexical {
                reason: format!("auto: the lexical index answered, since {error}"),
            },
        }),
    }
}

/// The query's words as the model reads them: each term's parts.
fn words_of(query: &Query) -> String {
    query
        .terms
        .iter()
        .flat_map(|term| term.parts())
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The query's vector, the items' vectors, and the items nearest it.
pub struct Meaning {
    wanted: Option<vectors::Vector>,
    matrix: Arc<vectors::Matrix>,
    /// The items nearest the query by meaning, best first, that pass its
    /// filters.
    pub nearest: Vec<Ranked>,
}

impl Meaning {
    fn similarity(&self, hit: &Ranked) -> Option<f32> {
        self.matrix
            .similarity(hit.item_id()?, self.wanted.as_ref()?)
    }
}

/// How far the items' embedding got, as a query reads it: the vectors and
/// items held in memory (counting rows each query would read every row).
pub fn progress(
    context: &ToolContext,
    embedder: &Embedder,
    revision: i64,
) -> Result<Progress, ToolError> {
    let store = &context.hub.store;
    store.view(|c| {
        let matrix = vectors::matrix(c, store.path(), &embedder.folder.id)?;
        let index = item_index::word_index(c, store.path(), revision)?;
        Ok(Progress {
            model: embedder.folder.name(),
            embedded: matrix.len() as u64,
            items: index.len() as u64,
        })
    })
}

/// The query by meaning: at most `most` nearest items.
pub fn meaning(
    context: &ToolContext,
    embedder: &Embedder,
    query: &Query,
    sieve: &Sieve,
    revision: i64,
    most: usize,
) -> Result<Meaning, ToolError> {
    let store = &context.hub.store;
    let words = words_of(query);
    let text = semantic::embedder::Text {
        name: "",
        rest: &words,
    };
    let embedded = store
        .view(|c| embedder.embed(std::slice::from_ref(&text), store.path(), c))
        .map_err(semantic::pass::embed_error)?;
    let wanted = embedded.vectors.into_iter().next().flatten();
    store.view(|c| {
        let matrix = vectors::matrix(c, store.path(), &embedder.folder.id)?;
        let Some(query) = wanted.as_ref() else {
            return Ok(Meaning {
                wanted: None,
                matrix,
                nearest: Vec::new(),
            });
        };
        let index = item_index::word_index(c, store.path(), revision)?;
        let keep = |id: i64| index.item(id).is_some_and(|item| sieve.item_passes(item));
        let nearest = matrix
            .nearest(query, most, keep)
            .into_iter()
            // nothing alike (a text without pieces is stored as zero)
            .filter(|(_, similarity)| *similarity > 0.0)
            .filter_map(|(id, _)| Some((id, index.item(id)?.clone())))
            .enumerate()
            .map(|(at, (id, item))| Ranked::by_meaning(id, item, at))
            .collect();
        Ok(Meaning {
            wanted,
            matrix,
            nearest,
        })
    })
}

/// The semantic order, after the definitions the query names exactly (a
/// name is what it is, whatever its meaning's neighbours).
pub fn after_exact_names(lexical: Vec<Ranked>, meaning: Meaning) -> Vec<Ranked> {
    let mut order: Vec<Ranked> = lexical
        .into_iter()
        .filter(|hit| hit.rule <= Rule::Name)
        .collect();
    let named: HashSet<i64> = order.iter().filter_map(Ranked::item_id).collect();
    order.extend(
        meaning
            .nearest
            .into_iter()
            .filter(|hit| hit.item_id().is_none_or(|id| !named.contains(&id))),
    );
    order
}

/// Whether a lexical hit keeps its place ahead of fusion: a name the query
/// spells, or a name holding every word of the query.
fn leads(hit: &Ranked, every_term: u32) -> bool {
    hit.rule <= Rule::Name
        || (hit.rule == Rule::WholeWordInName && every_term != 0 && hit.terms == every_term)
}

/// The lexical order fused with the semantic one by reciprocal rank: the
/// candidates are the first `DEPTH` of each, and each candidate is ranked
/// by both (a lexical hit by its similarity too, so a hit that merely holds
/// a word ranks low by meaning). Exact names keep the lead they have. When
/// the query requires, excludes or quotes words, the semantic order only
/// reorders what the lexical one found: what it adds could break them.
pub fn fuse(lexical: Vec<Ranked>, meaning: Meaning, query: &Query) -> Vec<Ranked> {
    let strict = !query.excluded.is_empty()
        || query.regex.is_some()
        || query.terms.iter().any(|t| t.required || t.phrase);
    let every_term = Wanted::of(query).every_term();
    let mut lead = Vec::new();
    let mut rest = Vec::new();
    // (lexical place, hit)
    let mut candidates: Vec<(Option<usize>, Ranked)> = Vec::new();
    let mut seen = HashSet::new();
    for hit in lexical {
        if let Some(id) = hit.item_id() {
            seen.insert(id);
        }
        if leads(&hit, every_term) {
            lead.push(hit);
        } else if candidates.len() < DEPTH {
            candidates.push((Some(candidates.len()), hit));
        } else {
            rest.push(hit);
        }
    }
    let Meaning {
        wanted,
        matrix,
        nearest,
    } = meaning;
    let meaning = Meaning {
        wanted,
        matrix,
        nearest: Vec::new(),
    };
    if !strict {
        for hit in nearest {
            if hit.item_id().is_some_and(|id| seen.insert(id)) {
                candidates.push((None, hit));
            }
        }
    }
    // each candidate's place by meaning, among the candidates
    let mut by_meaning: Vec<(f32, usize)> = candidates
        .iter()
        .enumerate()
        .filter_map(|(at, (_, hit))| Some((meaning.similarity(hit)?, at)))
        .collect();
    by_meaning.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut meaning_place = vec![None; candidates.len()];
    for (place, (_, at)) in by_meaning.iter().enumerate() {
        meaning_place[*at] = Some(place);
    }
    let part = |at: Option<usize>| at.map_or(0.0, |at| 1.0 / (FUSION_K + 1.0 + at as f64));
    let mut scored: Vec<(f64, usize, Ranked)> = candidates
        .into_iter()
        .zip(meaning_place)
        .enumerate()
        .map(|(at, ((lexical_at, hit), meaning_at))| {
            (
                part(lexical_at) + SEMANTIC_WEIGHT * part(meaning_at),
                at,
                hit,
            )
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    lead.extend(scored.into_iter().map(|(.., hit)| hit));
    lead.extend(rest);
    lead
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::index::records::task_for_tests;
    use crate::search::query::parsed_for_tests;

    fn task(id: i64, name: &str) -> Ranked {
        Ranked::by_meaning(id, Arc::new(task_for_tests(name)), 0)
    }

    fn names(order: &[Ranked]) -> Vec<i64> {
        order.iter().filter_map(Ranked::item_id).collect()
    }

    /// The query's vector points as item 3's does; item 2's is close to
    /// it, and item 1 has none.
    fn meaning(nearest: Vec<Ranked>) -> Meaning {
        Meaning {
            wanted: Some(vectors::Vector::of(&[1.0, 0.0])),
            matrix: Arc::new(vectors::Matrix::for_tests(&[
                (2, &[1.0, 0.2]),
                (3, &[1.0, 0.0]),
            ])),
            nearest,
        }
    }

    #[test]
    fn fusion_adds_what_meaning_finds_but_never_to_a_strict_query() {
        let lexical = || vec![task(1, "a"), task(2, "b")];
        let nearest = || vec![task(3, "c"), task(2, "b")];
        let loose = fuse(
            lexical(),
            meaning(nearest()),
            &parsed_for_tests("alpha beta"),
        );
        assert_eq!(
            names(&loose)[..2],
            [2, 1],
            "what both orders hold comes first"
        );
        assert!(names(&loose).contains(&3), "{:?}", names(&loose));
        for strict in ["alpha +beta", "alpha -beta", "\"alpha beta\""] {
            let fused = fuse(lexical(), meaning(nearest()), &parsed_for_tests(strict));
            let mut found = names(&fused);
            found.sort();
            assert_eq!(found, [1, 2], "{strict}: only reordered");
        }
    }

    #[test]
    fn the_semantic_order_follows_exact_names_once() {
        let mut exact = task(7, "slugify");
        exact.rule = Rule::ExactDefinition;
        let order = after_exact_names(
            vec![exact, task(8, "other")],
            meaning(vec![task(9, "x"), task(7, "slugify")]),
        );
        assert_eq!(names(&order), [7, 9]);
    }
}
