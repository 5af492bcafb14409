//! What a query reaches: the corpora its filters allow among those of the
//! modules switched on, and the sources (the areas' searchables) that fill
//! them. Everything search knows of the areas comes from their declared
//! searchables, through the registry.

use super::{Corpus, Query};
use crate::tools::searchable::{self, Opens, Searchable, Vocabulary};
use crate::tools::{ToolContext, ToolError};
use std::sync::Arc;

/// The corpora a query reads and where they come from.
#[derive(Debug, Clone)]
pub struct Reach {
    pub corpora: Vec<Corpus>,
    /// The searchables that fill `corpora` (by their items or their files).
    pub sources: Vec<&'static Searchable>,
    /// Whether `corpora` holds every corpus of the index's items, so no item
    /// fails for its corpus alone.
    pub every_item_corpus: bool,
    pub vocabulary: Arc<Vocabulary>,
}

impl Reach {
    /// Every corpus of the registry's searchables whose modules are on, and
    /// a note for each one switched off.
    pub fn everything(context: &ToolContext) -> Result<(Reach, Vec<String>), ToolError> {
        let all = vocabulary_of(context);
        let corpora = all.corpora.iter().map(Corpus::of).collect();
        Reach::switched_on(context, corpora, all)
    }

    /// The corpora `query`'s filters allow, of the modules switched on.
    pub fn of(context: &ToolContext, query: &Query) -> Result<(Reach, Vec<String>), ToolError> {
        let all = vocabulary_of(context);
        let filters = &query.filters;
        let mut corpora: Vec<Corpus> = if filters.areas.is_empty() {
            all.corpora.iter().map(Corpus::of).collect()
        } else {
            filters.areas.clone()
        };
        let spec = |corpus: &Corpus| all.corpus(corpus.name()).copied();
        corpora.retain(|corpus| {
            let Some(spec) = spec(corpus) else {
                return false;
            };
            (filters.kinds.is_empty() || filters.kinds.iter().any(|k| spec.kinds.contains(&&**k)))
                && (filters.statuses.is_empty() || spec.statuses)
                && (query.regex.is_none() || *corpus == Corpus::CODE)
                && ((filters.paths.is_empty() && filters.langs.is_empty()) || spec.paths)
        });
        if corpora.is_empty() {
            return Err(ToolError::invalid(
                "q",
                "filters that leave at least one area to search (a /regex/ searches code text only; status: selects tasks, which have no path or language)",
            ));
        }
        Reach::switched_on(context, corpora, all)
    }

    /// Those of `corpora` whose modules are switched on, and a note for each left out.
    fn switched_on(
        context: &ToolContext,
        mut corpora: Vec<Corpus>,
        vocabulary: Arc<Vocabulary>,
    ) -> Result<(Reach, Vec<String>), ToolError> {
        let switches = context.switches()?;
        let mut notes = Vec::new();
        let mut sources = Vec::new();
        for (area, offered) in context.registry.searchables() {
            let mut fills: Vec<Corpus> = offered.corpora.iter().map(Corpus::of).collect();
            if offered.files {
                fills.push(Corpus::CODE);
            }
            if !switches.is_on(area.module) {
                for corpus in fills.iter().filter(|corpus| corpora.contains(corpus)) {
                    notes.push(format!(
                        "{} were not searched: the {} module is switched off",
                        corpus.name(),
                        area.module.id()
                    ));
                }
                corpora.retain(|corpus| !fills.contains(corpus));
            } else if fills.iter().any(|corpus| corpora.contains(corpus)) {
                sources.push(offered);
            }
        }
        // a corpus that only a switched-off source fills stays out too
        let every_item_corpus = vocabulary
            .corpora
            .iter()
            .filter(|corpus| corpus.name != searchable::CODE.name)
            .all(|corpus| corpora.contains(&Corpus::of(corpus)));
        Ok((
            Reach {
                corpora,
                sources,
                every_item_corpus,
                vocabulary,
            },
            notes,
        ))
    }

    /// Every corpus of the hub, read or not.
    pub fn all_corpora(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.vocabulary.corpora.iter().map(|corpus| corpus.name)
    }

    pub fn reads(&self, corpus: Corpus) -> bool {
        self.corpora.contains(&corpus)
    }

    /// Whether it reads any items (not only code text).
    pub fn reads_items(&self) -> bool {
        self.corpora.iter().any(|corpus| *corpus != Corpus::CODE)
    }

    /// Whether it reads the code: code text, or a corpus of definitions.
    pub fn reads_code(&self) -> bool {
        self.corpora
            .iter()
            .any(|corpus| *corpus == Corpus::CODE || self.is_definitions(corpus.name()))
    }

    /// The corpora whose names a query for it may be offered: its own, and
    /// for code text the definitions, whose names are the identifiers it holds.
    pub fn name_corpora(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self
            .corpora
            .iter()
            .filter(|corpus| **corpus != Corpus::CODE)
            .map(|corpus| corpus.name())
            .collect();
        if self.reads(Corpus::CODE) {
            for corpus in &self.vocabulary.corpora {
                if corpus.definitions && !names.contains(&corpus.name) {
                    names.push(corpus.name);
                }
            }
        }
        names
    }

    /// How a hit of `corpus` opens; code text opens at its line.
    pub fn opens(&self, corpus: &str) -> Opens {
        self.vocabulary
            .corpus(corpus)
            .map_or(Opens::Location, |spec| spec.opens)
    }

    /// Whether `corpus` holds definitions.
    pub fn is_definitions(&self, corpus: &str) -> bool {
        self.vocabulary
            .corpus(corpus)
            .is_some_and(|spec| spec.definitions)
    }

    /// The corpus's own name when it is one (it always is), for a hit to borrow.
    pub fn name_of(&self, corpus: &str) -> Option<&'static str> {
        self.vocabulary.corpus(corpus).map(|spec| spec.name)
    }
}

/// The vocabulary of every searchable of the context's registry.
pub fn vocabulary_of(context: &ToolContext) -> Arc<Vocabulary> {
    context.registry.search_vocabulary()
}

/// The vocabulary of every searchable this process declared, for what is
/// read without a hub at hand (the request's schema).
pub fn declared_vocabulary() -> Vocabulary {
    searchable::vocabulary(&searchable::declared())
}

/// Every corpus and source of the hub's own areas, for the area's tests.
#[cfg(test)]
pub fn everything_for_tests() -> Reach {
    let sources: Vec<&'static Searchable> =
        crate::hub::AREAS.iter().filter_map(|a| a.search).collect();
    let vocabulary = searchable::vocabulary(&sources);
    Reach {
        corpora: vocabulary.corpora.iter().map(Corpus::of).collect(),
        sources,
        every_item_corpus: true,
        vocabulary: Arc::new(vocabulary),
    }
}
