//! What an area offers search, in one shape: the corpora its items fill, the
//! revision search follows it by, the units it holds with their
//! fingerprints, and each unit loaded as search items with the facts ranking
//! needs (is it a test's, is it a definition). An area declares one on its
//! `Area`; search reads every area through it and names none.

use std::sync::Mutex;

use rusqlite::Connection;

use super::{ToolContext, ToolError};
use crate::store::StoreError;

/// The corpus of code text lines, kept by search itself from the file texts
/// that units carry: each area whose units carry files feeds it.
pub const CODE: Corpus = Corpus {
    name: "code",
    kinds: &["line"],
    opens: Opens::Location,
    definitions: false,
    paths: true,
    statuses: false,
};

/// A corpus: one `area:` of search's answers, filled by one area's items.
#[derive(Debug, Clone, Copy)]
pub struct Corpus {
    /// Its name in `area:` filters, hits and facets.
    pub name: &'static str,
    /// The kinds its hits have (`kind:` filters pick corpora by them).
    pub kinds: &'static [&'static str],
    /// What a hit's target names.
    pub opens: Opens,
    /// Its items are definitions: an exact name match ranks first, and an
    /// item's body is its defining line.
    pub definitions: bool,
    /// Its items may stand in files (`path:` and `lang:` filters reach them).
    pub paths: bool,
    /// Its items carry a status (`status:` filters reach them).
    pub statuses: bool,
}

/// What a hit's target names, and so what opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opens {
    /// A graph uid, and its file and line.
    Node,
    /// `mount/path#anchor` of a document section.
    Section,
    /// A task id; a task's id matches as a name.
    Task,
    /// `task/session` of an evidence session.
    Session,
    /// A file and line.
    Location,
}

/// Readies an area's record for a query.
pub type Prepare = fn(&ToolContext) -> Result<(), ToolError>;

/// Loads units as [`Searchable::load`] does each, in their order.
pub type LoadBatch = fn(&ToolContext, &[UnitVersion]) -> Result<Vec<Option<SearchUnit>>, ToolError>;

/// Reads what an area left out.
pub type LeftOutReader = fn(&Connection) -> Result<LeftOut, StoreError>;

/// An area as search follows it.
#[derive(Debug)]
pub struct Searchable {
    /// The name the index records this source's revision and units under.
    pub source: &'static str,
    /// The corpora its items fill.
    pub corpora: &'static [Corpus],
    /// Whether its units carry file texts, searched line by line as [`CODE`].
    pub files: bool,
    /// Its revision, read on a connection to the hub's own database the
    /// caller holds (in its snapshot) when the area keeps its tables there:
    /// a counter that moves with every change to what it offers.
    pub revision: fn(&super::HubState, &Connection) -> Result<i64, StoreError>,
    /// Run before a query reads the index (a first scan for changes made
    /// while no hub ran, say); cheap once done.
    pub prepare: Option<Prepare>,
    /// Every unit it holds now, with its fingerprint.
    pub units: fn(&ToolContext) -> Result<Vec<UnitVersion>, ToolError>,
    /// A unit as search items; `None` when it is gone meanwhile.
    pub load: fn(&ToolContext, &UnitVersion) -> Result<Option<SearchUnit>, ToolError>,
    /// Many units at once, in their order: used instead of `load` where
    /// one read serves a batch better than one read a unit (rows in a
    /// team database, each read a round trip).
    pub load_batch: Option<LoadBatch>,
    /// The values its items' `lang:` and `status:` may take.
    pub languages: fn() -> Vec<&'static str>,
    pub statuses: fn() -> Vec<&'static str>,
    /// What it left out of what it offers, said when a query reaching its
    /// files finds nothing.
    pub left_out: Option<LeftOutReader>,
}

/// A unit (a file, a task, a document, a session) as it is now. The index
/// re-reads a unit whose fingerprint changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitVersion {
    /// Unique within its source.
    pub key: String,
    pub fingerprint: String,
    /// What loading it needs besides its key (a file's language), as given.
    pub detail: String,
}

/// A unit's items and, for a file, its text.
#[derive(Debug, Default)]
pub struct SearchUnit {
    pub items: Vec<SearchItem>,
    pub file: Option<FileText>,
}

/// A file's text for code search.
#[derive(Debug)]
pub struct FileText {
    pub path: String,
    pub lang: String,
    /// `None` when it is not kept (too large, not UTF-8, searched otherwise).
    pub text: Option<String>,
    /// Whether it is a test's: its lines rank after the others.
    pub test: bool,
}

/// One thing a query can find.
#[derive(Debug, Clone)]
pub struct SearchItem {
    /// One of its source's corpora, by name.
    pub corpus: &'static str,
    pub kind: String,
    pub name: String,
    /// What opens it (see [`Opens`]).
    pub target: String,
    pub path: Option<String>,
    pub line: Option<u32>,
    pub lang: Option<String>,
    pub status: Option<String>,
    /// The text its snippets come from.
    pub body: String,
    /// The texts its name, path and body words come from.
    pub words_from: [String; 3],
    /// Whether it is a test's: it ranks after the others.
    pub test: bool,
}

/// What an area left out: how many, and the first few with why.
#[derive(Debug, Clone, Default)]
pub struct LeftOut {
    pub count: u64,
    /// (path, why), in path order.
    pub first: Vec<(String, String)>,
}

/// Every searchable any registry of this process brought, for what is read
/// without a hub at hand (the request schema's lists of areas, kinds,
/// languages and statuses).
static DECLARED: Mutex<Vec<&'static Searchable>> = Mutex::new(Vec::new());

/// Records `searchable` (once) as one the process knows.
pub fn declare(searchable: &'static Searchable) {
    let mut declared = DECLARED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if !declared
        .iter()
        .any(|known| known.source == searchable.source)
    {
        declared.push(searchable);
    }
}

/// Every searchable declared so far, in the order their areas were added.
pub fn declared() -> Vec<&'static Searchable> {
    DECLARED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}

/// The vocabulary of `searchables`: their corpora (with [`CODE`] where any
/// carries files), languages and statuses, each once; the code's first.
pub fn vocabulary(searchables: &[&'static Searchable]) -> Vocabulary {
    let mut words = Vocabulary::default();
    let code_first = searchables.iter().filter(|s| s.files);
    for searchable in code_first.chain(searchables.iter().filter(|s| !s.files)) {
        for corpus in searchable.corpora {
            push_corpus(&mut words.corpora, *corpus);
        }
        if searchable.files {
            push_corpus(&mut words.corpora, CODE);
        }
        for language in (searchable.languages)() {
            if !words.languages.contains(&language) {
                words.languages.push(language);
            }
        }
        for status in (searchable.statuses)() {
            if !words.statuses.contains(&status) {
                words.statuses.push(status);
            }
        }
    }
    words
}

fn push_corpus(corpora: &mut Vec<Corpus>, corpus: Corpus) {
    if !corpora.iter().any(|known| known.name == corpus.name) {
        corpora.push(corpus);
    }
}

/// The names search's filters accept, from the areas that know them.
#[derive(Debug, Clone, Default)]
pub struct Vocabulary {
    pub corpora: Vec<Corpus>,
    pub languages: Vec<&'static str>,
    pub statuses: Vec<&'static str>,
}

impl Vocabulary {
    pub fn corpus(&self, name: &str) -> Option<&Corpus> {
        self.corpora.iter().find(|corpus| corpus.name == name)
    }

    /// Every kind a hit can have, each once.
    pub fn kinds(&self) -> Vec<&'static str> {
        let mut kinds: Vec<&'static str> = Vec::new();
        for kind in self.corpora.iter().flat_map(|corpus| corpus.kinds) {
            if !kinds.contains(kind) {
                kinds.push(kind);
            }
        }
        kinds
    }
}
