//! What a search answers: ranked hits that each say where they are, why they
//! matched and what opens them, with counts per area and a cursor.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use utoipa::ToSchema;

/// The widest snippet, in characters.
pub const SNIPPET_CHARS: usize = 240;

/// Where a document hit is.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct DocumentPlace {
    pub mount: String,
    pub path: String,
    /// The section's anchor; empty for the text before the first heading.
    pub section: String,
}

/// What opens a hit: the graph node, the document section, the task, or
/// the file and line (`path:line`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct Opens {
    /// A graph uid (for `cos_graph_context`).
    pub uid: Option<String>,
    pub document: Option<DocumentPlace>,
    /// `TASK-<n>` (for evidence, the task the session worked).
    pub task_id: Option<String>,
    /// An agent evidence session (for `cos_supervise_bundle`).
    pub session_id: Option<String>,
    /// `path:line`, for an editor.
    pub location: Option<String>,
}

/// A highlighted stretch of a snippet, in characters (Unicode scalar values).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct Highlight {
    pub start: u32,
    pub end: u32,
}

/// One ranked hit.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct SearchHit {
    // the words a hit shares with every other (its area, why, what matched)
    // are borrowed, not copied for each hit
    /// `symbols`, `code`, `docs`, `tasks` or `evidence`: the corpus the
    /// areas offer it in.
    pub area: Cow<'static, str>,
    /// A symbol's kind (class, function, ...), `line`, `heading`, `task`,
    /// or evidence's `output`, `discovery`, `backtrack`.
    pub kind: Cow<'static, str>,
    /// The symbol's name, the section's heading, the task's title, or the file of a line.
    pub title: String,
    pub path: Option<String>,
    /// The 1-based line of the snippet.
    pub line: Option<u32>,
    /// The matching line (cut to about 240 characters around the match).
    pub snippet: String,
    pub highlights: Vec<Highlight>,
    /// The fields that matched: name, path, body, text, id.
    pub matched: Vec<Cow<'static, str>>,
    /// The query's words and phrases it holds, as written: all of them,
    /// unless the query's plain words are ranked by how many a hit holds.
    pub words: Vec<String>,
    /// The ranking rule that placed the hit: exact definition, name,
    /// whole word in name, partial name, text (whole word), text (partial).
    pub why: Cow<'static, str>,
    pub opens: Opens,
}

/// How many hits each area has, by its name (every area of the hub, 0 when none).
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(transparent)]
pub struct Facets(std::collections::BTreeMap<String, u64>);

impl Facets {
    pub fn new() -> Facets {
        Facets::default()
    }

    pub fn get_mut(&mut self, corpus: &str) -> Option<&mut u64> {
        self.0.get_mut(corpus)
    }

    pub fn insert(&mut self, corpus: String, count: u64) {
        self.0.insert(corpus, count);
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0
            .iter()
            .map(|(corpus, count)| (corpus.as_str(), *count))
    }
}

/// A page of hits for one query.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SearchAnswer {
    pub hits: Vec<SearchHit>,
    /// Hits in every area (a lower bound when `capped`).
    pub total: u64,
    pub facets: Facets,
    /// Hits by language: code lines by their file's, symbols by theirs,
    /// documents as `markdown`; tasks and evidence have none.
    pub languages: Facets,
    /// True when an area had more hits than a query collects (1,000 code
    /// lines, 2,000 items): the counts are then lower bounds; narrow the
    /// query (a `path:`, `lang:` or `area:` filter, another word) to see the rest.
    pub capped: bool,
    /// Pass back as `cursor` for the hits after these; null when none remain.
    pub next_cursor: Option<String>,
    /// Why the answer is empty or smaller than it might be (a filter that
    /// matched no file, a term too short for substring search, ...).
    pub notes: Vec<String>,
    /// Names in the index close to a query word that found nothing.
    pub did_you_mean: Vec<String>,
}
