//! Gathering every hit of a query before it is ranked: items from the word
//! index, and lines of code text from the trigram prefilter, each verified,
//! both held to the query's filters.
//!
//! One file (about 640 lines): items and lines are collected in one read
//! transaction under one sieve, so a cursor names the revision both came from.

use fixedbitset::FixedBitSet;
use globset::{GlobSet, GlobSetBuilder};
use rusqlite::Connection;
use std::sync::Arc;

use super::{CodeLine, Found, LineText};
use crate::search::index::catch_up;
use crate::search::index::records;
use crate::search::memory::file_texts;
use crate::search::memory::identifier_runs;
use crate::search::memory::item_index;
use crate::search::query::plan::{self, Check, LineMatcher, Verdict};
use crate::search::query::reach::Reach;
use crate::search::query::{Corpus, Query};
use crate::store::StoreError;
use crate::tools::ToolError;

/// Items a word query collects at most (best BM25 first).
pub const MAX_ITEMS: usize = 2_000;
/// Matches read to choose them from: past this many, the rest are not seen.
const MAX_ITEMS_READ: usize = 20_000;
/// Lines of code text a query collects at most: past that, an answer says it
/// was capped and how to narrow it, instead of scanning every file.
pub const MAX_LINES: usize = 1_000;

/// The filters a hit must pass.
pub struct Sieve<'a> {
    pub corpora: &'a [Corpus],
    pub reach: &'a Reach,
    query: &'a Query,
    paths: Option<GlobSet>,
    /// The index's database (what kept texts belong to, with a revision).
    pub database: &'a std::path::Path,
}

impl<'a> Sieve<'a> {
    pub fn new(
        query: &'a Query,
        reach: &'a Reach,
        database: &'a std::path::Path,
    ) -> Result<Sieve<'a>, ToolError> {
        let paths = if query.filters.paths.is_empty() {
            None
        } else {
            let mut set = GlobSetBuilder::new();
            for glob in &query.filters.paths {
                let glob = globset::GlobBuilder::new(glob)
                    .literal_separator(false)
                    .build()
                    .map_err(|e| ToolError::invalid("path", format!("a valid glob ({e})")))?;
                set.add(glob);
            }
            Some(
                set.build()
                    .map_err(|e| ToolError::invalid("path", format!("valid globs ({e})")))?,
            )
        };
        Ok(Sieve {
            corpora: &reach.corpora,
            reach,
            query,
            paths,
            database,
        })
    }

    pub fn path_passes(&self, path: Option<&str>) -> bool {
        match (&self.paths, path) {
            (None, _) => true,
            (Some(set), Some(path)) => set.is_match(path),
            (Some(_), None) => false,
        }
    }

    fn lang_passes(&self, lang: Option<&str>) -> bool {
        let langs = &self.query.filters.langs;
        langs.is_empty() || lang.is_some_and(|l| langs.iter().any(|wanted| wanted == l))
    }

    /// Whether some item of the word index could fail `item_passes`.
    fn sifts_items(&self) -> bool {
        let filters = &self.query.filters;
        !self.reach.every_item_corpus
            || !filters.kinds.is_empty()
            || !filters.statuses.is_empty()
            || self.paths.is_some()
            || !filters.langs.is_empty()
    }

    pub fn item_passes(&self, item: &records::Item) -> bool {
        self.corpora.iter().any(|c| c.name() == &*item.corpus) && self.filters_pass(item)
    }

    /// The query's filters but its areas: kind, status, path and language.
    fn filters_pass(&self, item: &records::Item) -> bool {
        let filters = &self.query.filters;
        let kind = filters.kinds.is_empty() || filters.kinds.iter().any(|k| **k == *item.kind);
        let status = filters.statuses.is_empty()
            || item
                .status
                .as_ref()
                .is_some_and(|s| filters.statuses.iter().any(|wanted| **wanted == **s));
        kind && status
            && self.path_passes(item.path.as_deref())
            && self.lang_passes(item.lang.as_deref())
    }
}

/// What collecting found besides the hits.
#[derive(Debug, Default)]
pub struct Collected {
    pub found: Vec<Found>,
    pub capped: bool,
    pub notes: Vec<String>,
    /// Files the path filter was tried on, and how many it let through.
    pub files_seen: usize,
    pub files_passed: usize,
    /// Lines of code text collected.
    lines: usize,
}

/// What one read of the index found, and the revision and time it read at.
pub struct Read {
    pub revision: i64,
    pub updated_at: Option<String>,
    pub collected: Collected,
}

/// Collects the items and the code lines of a query in one read transaction,
/// so the revision a cursor is bound to is the one the hits came from. With
/// `check_level`, None (having read nothing more) when the index is behind a
/// source of the sieve's corpora: the caller catches up and asks again.
pub fn collect(
    hub: &crate::tools::HubState,
    query: &Query,
    matcher: &LineMatcher,
    sieve: &Sieve,
    check_level: bool,
) -> Result<Option<Read>, ToolError> {
    hub.store.view_at_once(|c| {
        let sources = records::Sources::read(c)?;
        if check_level && !catch_up::level_in(hub, c, &sieve.reach.sources, &sources)? {
            return Ok(None);
        }
        let revision = sources.indexed_revision();
        // the files' own count of commits: a task or a document written keeps
        // their table and texts, and every batch that rewrote files (the first
        // of a catch-up too, before the graph's revision is recorded) drops them
        let files_revision = catch_up::files_writes(&sieve.reach.sources, &sources);
        let mut collected = items_of(c, query, sieve, revision)?;
        if sieve.reach.reads(Corpus::CODE) {
            match loose_lines(c, query, sieve, revision)? {
                Some(loose) => {
                    let matcher = LineMatcher::new(&loose, None);
                    code_lines(c, &loose, &matcher, sieve, files_revision, &mut collected)?;
                }
                None => code_lines(c, query, matcher, sieve, files_revision, &mut collected)?,
            }
        }
        Ok(Some(Read {
            revision,
            updated_at: sources.updated_at(),
            collected,
        }))
    })
}

/// The query code text lines answer when it asks them for fewer words
/// than it holds (`plan::line_query`), its words' rarity read from the word
/// index of the items.
fn loose_lines(
    c: &Connection,
    query: &Query,
    sieve: &Sieve,
    revision: i64,
) -> Result<Option<Query>, ToolError> {
    if !plan::loosens_lines(query) {
        return Ok(None);
    }
    let index = item_index::word_index(c, sieve.database, revision)?;
    Ok(plan::line_query(query, |term| {
        plan::term_query(term).map_or(0, |alone| index.count(&alone, None))
    }))
}

/// The items matching the query's words and passing its filters, ascending
/// by row id; past MAX_ITEMS, the MAX_ITEMS with the best BM25 (ties by row
/// id) of the first MAX_ITEMS_READ. The word index is kept in memory for the
/// revision read (`items`).
fn items_of(
    c: &Connection,
    query: &Query,
    sieve: &Sieve,
    revision: i64,
) -> Result<Collected, ToolError> {
    let mut collected = Collected::default();
    let wants_items = sieve.reach.reads_items();
    let Some(words) = plan::word_query(query).filter(|_| wants_items) else {
        return Ok(collected);
    };
    let index = item_index::word_index(c, sieve.database, revision)?;
    let passes = |item: &records::Item| sieve.item_passes(item);
    let sifting = sieve
        .sifts_items()
        .then_some(&passes as &dyn Fn(&records::Item) -> bool);
    let (scored, cut) = index.best(&words, MAX_ITEMS_READ, MAX_ITEMS, sifting);
    if cut {
        collected.capped = true;
        collected.notes.push(if words.optional.is_empty() {
            format!(
                "more than {MAX_ITEMS} symbols, sections and tasks matched: the {MAX_ITEMS} with the best BM25 are ranked; narrow with area:, kind: or another word"
            )
        } else {
            format!(
                "more than {MAX_ITEMS} symbols, sections and tasks hold some of the words: the {MAX_ITEMS} holding the most (then the best BM25) are ranked; +word requires one"
            )
        });
    }
    collected.found.extend(scored.into_iter().map(Found::Item));
    Ok(collected)
}

/// Of `names` (the closest first), those that, asked in place of the query's
/// one word with its filters, would find a symbol, section or task of the
/// areas searched (a symbol, where code text is): a name offered as "did you
/// mean" must find something. At most `most`.
pub fn names_finding(
    c: &Connection,
    query: &Query,
    sieve: &Sieve,
    revision: i64,
    names: Vec<String>,
    most: usize,
) -> Result<Vec<String>, ToolError> {
    let index = item_index::word_index(c, sieve.database, revision)?;
    let name_corpora = sieve.reach.name_corpora();
    let in_areas = |item: &records::Item| name_corpora.contains(&&*item.corpus);
    let passes = |item: &records::Item| in_areas(item) && sieve.filters_pass(item);
    /// Names tried at most: each is a look-up in the word index.
    const TRIED: usize = 50;
    let mut finding = Vec::new();
    for name in names.into_iter().take(TRIED) {
        if finding.len() == most {
            break;
        }
        let mut asked = query.clone();
        asked.terms = vec![crate::search::query::Term::new(&name, false, false)];
        let Some(words) = plan::word_query(&asked) else {
            continue;
        };
        if !index.best(&words, 1, 1, Some(&passes)).0.is_empty() {
            finding.push(name);
        }
    }
    Ok(finding)
}

fn code_lines(
    c: &Connection,
    query: &Query,
    matcher: &LineMatcher,
    sieve: &Sieve,
    files_revision: i64,
    collected: &mut Collected,
) -> Result<(), ToolError> {
    let prefiltered = plan::has_trigram_prefilter(query);
    if !prefiltered && !matcher.by_regex() {
        collected.notes.push(format!(
            "code text was not searched: substring search needs a word of {} or more characters",
            plan::MIN_SUBSTRING
        ));
        return Ok(());
    }
    if !prefiltered {
        collected.notes.push(format!(
            "the regex requires no literal of {} or more characters, so every file was scanned",
            plan::MIN_SUBSTRING
        ));
    }
    let Some(scanner) = matcher.first().cloned() else {
        return Ok(());
    };
    let table = file_texts::files(c, sieve.database, files_revision)?;
    let by_runs = prefiltered
        && matcher
            .run_literals()
            .any(|literals| literals.iter().all(|l| identifier_runs::within_runs(l)));
    if by_runs && let Some(index) = identifier_runs::index(c, sieve.database, files_revision)? {
        let lines = Lines {
            c,
            sieve,
            files_revision,
            table: &table,
            matcher,
        };
        return lines.by_runs(&index, collected);
    }
    let mut scan = Scan::new(&scanner, matcher.literals());
    let index = TrigramIndex {
        c,
        database: sieve.database,
        files_revision,
        table: &table,
    };
    let candidates = match &plan::trigram_prefilter(query) {
        Some(prefilter) => {
            let candidates = index.candidates(prefilter)?;
            scan.narrow(&index, &candidates)?;
            Some(candidates)
        }
        None => None,
    };
    for (place, file) in table.in_path_order(candidates.as_ref()) {
        collected.files_seen += 1;
        if !sieve.path_passes(Some(&file.path)) || !sieve.lang_passes(Some(&file.lang)) {
            continue;
        }
        collected.files_passed += 1;
        let Some(content) = file_texts::text(c, sieve.database, files_revision, file.id)? else {
            continue;
        };
        let found: Vec<CodeLine> = matching_lines(&content, place, &scan, matcher)
            .into_iter()
            .map(|(number, text, verdict)| {
                code_line(
                    file,
                    place,
                    number,
                    LineText::within(&content, text),
                    verdict,
                )
            })
            .collect();
        for line in found {
            if !add_line(collected, line) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Line `number` of `file`, its text `text`, that matched.
fn code_line(
    file: &records::KeptFile,
    place: usize,
    number: u32,
    text: LineText,
    verdict: Verdict,
) -> CodeLine {
    CodeLine {
        in_path_order: (place as u64) << 32 | u64::from(number),
        whole_word: verdict.whole_word,
        test: file.test,
        path: file.path.clone(),
        lang: file.lang.clone(),
        line: number,
        text,
    }
}

/// Adds a line that matched; false, with the answer capped and a note
/// saying so, when MAX_LINES are already there.
fn add_line(collected: &mut Collected, line: CodeLine) -> bool {
    if collected.lines >= MAX_LINES {
        collected.capped = true;
        collected.notes.push(format!(
            "more than {MAX_LINES} lines of code text matched: the first {MAX_LINES} by path are ranked; narrow with path:, lang: or another word"
        ));
        return false;
    }
    collected.lines += 1;
    collected.found.push(Found::Line(line));
    true
}

/// A file's text and what the index keeps of it.
type OpenFile<'t> = (Arc<file_texts::FileText>, &'t records::KeptFile);

/// What finding a query's lines through the lines by run reads.
struct Lines<'a> {
    c: &'a Connection,
    sieve: &'a Sieve<'a>,
    files_revision: i64,
    table: &'a file_texts::FileTable,
    matcher: &'a LineMatcher,
}

impl Lines<'_> {
    /// The lines holding one of the rarest list of the matcher's
    /// `run_literals` (of those lying within runs), in path and line order,
    /// each verified as a scanned line is.
    fn by_runs(
        &self,
        index: &identifier_runs::RunIndex,
        collected: &mut Collected,
    ) -> Result<(), ToolError> {
        let Some((term, rarest)) = index.rarest(self.matcher.run_literals()) else {
            return Ok(());
        };
        let mut holding = index.lines_holding(&rarest, |id| self.table.place(id).map(|(p, _)| p));
        // room for every line that may be added, so a thousand are not copied
        // again at each doubling
        let room = MAX_LINES.saturating_sub(collected.lines);
        collected
            .found
            .reserve(holding.size_hint().1.unwrap_or(0).min(room));
        let mut verdicts = RunVerdicts::new(self.matcher, term);
        let mut file: Option<(usize, Option<OpenFile>)> = None;
        while let Some(found) = holding.next() {
            let place = (found.key >> 32) as usize;
            let line = (found.key & u64::from(u32::MAX)) as u32;
            if file.as_ref().is_none_or(|(at, _)| *at != place) {
                file = Some((place, self.open(place, collected)?));
            }
            let Some((_, Some((text, kept)))) = &file else {
                continue;
            };
            let Some((line_text, verdict)) = verdicts.verdict(index, &holding, &found, text) else {
                continue;
            };
            if !add_line(
                collected,
                code_line(kept, place, line + 1, line_text, verdict),
            ) {
                break;
            }
        }
        Ok(())
    }

    /// The text of the file at `place` when it passes the filters.
    fn open(
        &self,
        place: usize,
        collected: &mut Collected,
    ) -> Result<Option<OpenFile<'_>>, ToolError> {
        let Some(kept) = self.table.at(place) else {
            return Ok(None);
        };
        collected.files_seen += 1;
        if !self.sieve.path_passes(Some(&kept.path)) || !self.sieve.lang_passes(Some(&kept.lang)) {
            return Ok(None);
        }
        collected.files_passed += 1;
        let text = file_texts::text(self.c, self.sieve.database, self.files_revision, kept.id)?;
        Ok(text.map(|text| (text, kept)))
    }
}

/// The verdicts on the lines the lines by run found, all holding one of
/// the rarest list of `LineMatcher::run_literals`. When that list is a
/// term's spellings, on a plain line whether that term is a whole word
/// there is its runs': a spelling lies inside one run, and a match at a
/// run's edge meets the line's edge or a byte that is no word's, so the run
/// alone tells. Each run is asked once, not each of its lines.
/// When the line must hold only that term's spellings
/// (`LineMatcher::only_literals`), that is the line's verdict and its text
/// is not read; else the other terms are verified by the line's text. A line
/// that is not plain, or found by a term's part, is verified by its text
/// alone.
struct RunVerdicts<'m> {
    matcher: &'m LineMatcher,
    held: Option<Check>,
    only_held: bool,
    whole_word: foldhash::HashMap<u32, bool>,
}

impl RunVerdicts<'_> {
    /// The verdicts on lines holding one of the list at `term` of the
    /// matcher's `run_literals`.
    fn new(matcher: &LineMatcher, term: usize) -> RunVerdicts<'_> {
        let only_held = matcher
            .only_literals()
            .is_some_and(|literals| literals.iter().all(|l| identifier_runs::within_runs(l)));
        RunVerdicts {
            matcher,
            held: matcher.check_of_term(term),
            only_held,
            whole_word: foldhash::HashMap::default(),
        }
    }

    /// The text and verdict of `found` (of `lines`, in `file`), or None
    /// when it does not match.
    fn verdict(
        &mut self,
        index: &identifier_runs::RunIndex,
        lines: &identifier_runs::LinesInOrder,
        found: &identifier_runs::FoundLine,
        file: &Arc<file_texts::FileText>,
    ) -> Option<(LineText, Verdict)> {
        let Some(held) = self.held.filter(|_| found.plain) else {
            let line = identifier_runs::line_at(&file.text, found.bytes.clone());
            let verdict = self.matcher.verdict(line)?;
            return Some((LineText::within(file, line), verdict));
        };
        let matcher = self.matcher;
        let whole_word = lines.runs_of(found).any(|run| {
            *self
                .whole_word
                .entry(run)
                .or_insert_with(|| matcher.whole_word_in(held, index.run_text(run)))
        });
        if self.only_held {
            return Some((
                LineText::at(file, found.bytes.clone()),
                Verdict { whole_word },
            ));
        }
        let line = identifier_runs::line_at(&file.text, found.bytes.clone());
        let verdict = matcher.verdict_holding(line, held, whole_word)?;
        Some((LineText::within(file, line), verdict))
    }
}

/// The indexed files' trigram sets, as one query reads them.
struct TrigramIndex<'a> {
    c: &'a Connection,
    database: &'a std::path::Path,
    files_revision: i64,
    table: &'a file_texts::FileTable,
}

impl TrigramIndex<'_> {
    /// The places of the files the prefilter lets through.
    fn candidates(&self, prefilter: &plan::Prefilter) -> Result<FixedBitSet, StoreError> {
        let mut held = self.table.every_place();
        for requirement in &prefilter.requirements {
            let mut any_spelling = FixedBitSet::with_capacity(held.len());
            for spelling in requirement {
                any_spelling.union_with(&self.holding_every(spelling, held.clone())?);
            }
            held = any_spelling;
        }
        Ok(held)
    }

    /// The places of `within` whose files hold every one of trigram `tokens`.
    fn holding_every(
        &self,
        tokens: &[String],
        mut within: FixedBitSet,
    ) -> Result<FixedBitSet, StoreError> {
        for token in tokens {
            if within.is_clear() {
                break;
            }
            let holding = file_texts::files_holding(
                self.c,
                self.database,
                self.files_revision,
                self.table,
                token,
            )?;
            within.intersect_with(&holding);
        }
        Ok(within)
    }
}

/// A line that matched: its number (1-based), its text, what verifying it found.
type MatchedLine<'a> = (u32, &'a str, Verdict);

/// How a file's text is searched for the lines worth verifying: the
/// scanning regex over the text, or its literals over the lower-cased copy.
enum Scan<'q> {
    Regex(&'q regex::Regex),
    Literals(Vec<Literal<'q>>),
}

/// One spelling of the scanned term, and where it can be.
struct Literal<'q> {
    finder: memchr::memmem::Finder<'q>,
    /// The places of the files holding every trigram of it (no other file
    /// can hold it); None: every file is searched for it.
    files: Option<FixedBitSet>,
}

impl<'q> Scan<'q> {
    fn new(scanner: &'q regex::Regex, literals: Option<&'q [String]>) -> Scan<'q> {
        match literals {
            Some(literals) => Scan::Literals(
                literals
                    .iter()
                    .map(|literal| Literal {
                        finder: memchr::memmem::Finder::new(literal.as_bytes()),
                        files: None,
                    })
                    .collect(),
            ),
            None => Scan::Regex(scanner),
        }
    }

    /// Searches each of the candidate files only for the spellings whose
    /// trigrams it holds: a file is a candidate when it holds those of any
    /// spelling, and scanning it for the others found nothing but cost as
    /// much (`ASinTests`: 5.3 MB of files hold the trigrams of `asintests`,
    /// 0.4 MB those of `a_sin_tests`).
    fn narrow(&mut self, index: &TrigramIndex, candidates: &FixedBitSet) -> Result<(), StoreError> {
        let Scan::Literals(literals) = self else {
            return Ok(());
        };
        if literals.len() < 2 {
            return Ok(());
        }
        for literal in literals.iter_mut() {
            let text = String::from_utf8_lossy(literal.finder.needle()).into_owned();
            let tokens = crate::search::query::trigrams::token_list(&text);
            if !tokens.is_empty() {
                literal.files = Some(index.holding_every(&tokens, candidates.clone())?);
            }
        }
        Ok(())
    }

    /// Where something worth verifying starts in `content`, the text of
    /// the file at `place`, ascending.
    fn starts(&self, content: &file_texts::FileText, place: usize) -> Vec<usize> {
        match self {
            Scan::Regex(scanner) => scanner
                .find_iter(&content.text)
                .map(|m| m.start())
                .collect(),
            Scan::Literals(literals) => {
                let mut starts: Vec<usize> = literals
                    .iter()
                    .filter(|literal| literal.files.as_ref().is_none_or(|f| f.contains(place)))
                    .flat_map(|literal| literal.finder.find_iter(&content.folded))
                    .collect();
                if literals.len() > 1 {
                    starts.sort_unstable();
                }
                starts
            }
        }
    }
}

/// The lines of `content` (the text of the file at `place`) the scan finds
/// and the matcher confirms: line number (1-based), text, verdict.
fn matching_lines<'a>(
    content: &'a file_texts::FileText,
    place: usize,
    scan: &Scan,
    matcher: &LineMatcher,
) -> Vec<MatchedLine<'a>> {
    let text = &*content.text;
    let mut found = Vec::new();
    let mut line_number = 1u32;
    let mut counted_to = 0usize;
    let mut next_line_start = 0usize;
    for start in scan.starts(content, place) {
        if start < next_line_start {
            continue;
        }
        line_number +=
            memchr::memchr_iter(b'\n', &text.as_bytes()[counted_to..start]).count() as u32;
        counted_to = start;
        let line_start = memchr::memrchr(b'\n', &text.as_bytes()[..start]).map_or(0, |at| at + 1);
        let line_end =
            memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |at| start + at);
        next_line_start = line_end + 1;
        let line = text[line_start..line_end].trim_end_matches('\r');
        if let Some(verdict) = matcher.verdict(line) {
            found.push((line_number, line, verdict));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_numbered_and_each_found_once() {
        let query = crate::search::query::parsed_for_tests("foo bar");
        let matcher = LineMatcher::new(&query, None);
        let scanner = matcher.first().unwrap().clone();
        let content = file_texts::FileText::of("foo\nfoo bar foo\r\nnothing\nbar then foo");
        for scan in [
            Scan::Regex(&scanner),
            Scan::new(&scanner, matcher.literals()),
        ] {
            let lines: Vec<_> = matching_lines(&content, 0, &scan, &matcher)
                .into_iter()
                .map(|(n, text, _)| (n, text))
                .collect();
            assert_eq!(lines, vec![(2, "foo bar foo"), (4, "bar then foo")]);
        }
    }

    proptest::proptest! {
        #[test]
        fn the_literal_scan_finds_the_lines_the_regex_scan_finds(
            words in proptest::collection::vec(
                proptest::sample::select(vec![
                    "cachedProperty", "CACHED_PROPERTY", "cached_property", "cached property",
                    "Cached", "property", "\u{212a}ey", "key", "KEY", "k\u{e9}y", "x", " ",
                    "\n", "\r\n", "_", "getKey", "get_key",
                ]),
                0..60,
            ),
            query in proptest::sample::select(vec![
                "cachedProperty", "cached_property", "key", "getKey", "property -cached", "get_key x",
            ]),
        ) {
            let content = file_texts::FileText::of(&words.concat());
            let query = crate::search::query::parsed_for_tests(query);
            let matcher = LineMatcher::new(&query, None);
            let scanner = matcher.first().unwrap().clone();
            proptest::prop_assert!(matcher.literals().is_some());
            proptest::prop_assert_eq!(
                matching_lines(&content, 0, &Scan::new(&scanner, matcher.literals()), &matcher),
                matching_lines(&content, 0, &Scan::Regex(&scanner), &matcher)
            );
        }
    }

    proptest::proptest! {
        /// The lines by run find, and the matcher confirms, the lines a scan
        /// of the file's text finds, with the same verdicts.
        #[test]
        fn the_lines_by_run_are_the_lines_a_scan_finds(
            words in proptest::collection::vec(
                proptest::sample::select(vec![
                    "cachedProperty", "CACHED_PROPERTY", "cached_property", "cached property",
                    "Cached", "property", "\u{212a}ey", "key", "KEY", "k\u{e9}y", "x", " ", ".",
                    "\n", "\r\n", "_", "getKey", "get_key", "\u{e9}get_key", "keys", "(",
                    "getKEY", "Key", "key2", "2", "\u{2014}", "\u{e9}",
                ]),
                0..60,
            ),
            query in proptest::sample::select(vec![
                "cachedProperty", "cached_property", "key", "getKey", "property -cached",
                "get_key x", "Cached property", "_key", "KEY", "etke", "propert key",
                "etke cached", "roper getKey", "\"cached property\"", "\"get key\" -x",
            ]),
        ) {
            let text = words.concat();
            let content = file_texts::FileText::of(&text);
            let query = crate::search::query::parsed_for_tests(query);
            let matcher = LineMatcher::new(&query, None);
            let scanner = matcher.first().unwrap().clone();
            let file = Arc::new(file_texts::FileText::of(&text));
            let mut index = identifier_runs::RunIndex::default();
            proptest::prop_assert!(index.add_file(7, &text));
            let rarest = index.rarest(matcher.run_literals());
            proptest::prop_assume!(rarest.is_some());
            let (term, rarest) = rarest.unwrap();
            let mut lines = index.lines_holding(&rarest, |id| (id == 7).then_some(0));
            let mut verdicts = RunVerdicts::new(&matcher, term);
            let mut by_runs = Vec::new();
            while let Some(found) = lines.next() {
                if let Some((line, verdict)) = verdicts.verdict(&index, &lines, &found, &file) {
                    by_runs.push((found.key as u32 + 1, line.as_str().to_string(), verdict));
                }
            }
            let scanned: Vec<(u32, String, Verdict)> =
                matching_lines(&content, 0, &Scan::new(&scanner, matcher.literals()), &matcher)
                    .into_iter()
                    .map(|(number, line, verdict)| (number, line.to_string(), verdict))
                    .collect();
            proptest::prop_assert_eq!(by_runs, scanned);
        }
    }

    proptest::proptest! {
        /// A file is searched only for the spellings whose trigrams it
        /// holds: it finds every line searching for all of them finds.
        #[test]
        fn a_file_searched_for_the_spellings_it_holds_the_trigrams_of_loses_no_line(
            words in proptest::collection::vec(
                proptest::sample::select(vec![
                    "ASinTests", "a_sin_tests", "asin", "tests", "Sin", "getKey", "get_key",
                    "GETKEY", "ab", "x", " ", "\n", "_", "\u{212a}ey", "k\u{e9}y",
                ]),
                0..40,
            ),
            query in proptest::sample::select(vec!["ASinTests", "getKey", "a_sin_tests", "getKey -x"]),
        ) {
            let content = file_texts::FileText::of(&words.concat());
            let held: std::collections::HashSet<String> = crate::search::query::trigrams::tokens(&content.text)
                .split(' ')
                .map(str::to_string)
                .collect();
            let query = crate::search::query::parsed_for_tests(query);
            let matcher = LineMatcher::new(&query, None);
            let scanner = matcher.first().unwrap().clone();
            let every = Scan::new(&scanner, matcher.literals());
            let mut narrowed = Scan::new(&scanner, matcher.literals());
            let Scan::Literals(literals) = &mut narrowed else {
                return Err(proptest::test_runner::TestCaseError::fail("literals expected"));
            };
            for literal in literals.iter_mut() {
                let text = String::from_utf8_lossy(literal.finder.needle()).into_owned();
                let mut places = FixedBitSet::with_capacity(1);
                places.set(0, crate::search::query::trigrams::token_list(&text).iter().all(|t| held.contains(t)));
                literal.files = Some(places);
            }
            proptest::prop_assert_eq!(
                matching_lines(&content, 0, &narrowed, &matcher),
                matching_lines(&content, 0, &every, &matcher)
            );
        }
    }

    #[test]
    fn many_matching_items_are_cut_to_the_best_by_bm25_then_row_id() {
        let c = crate::search::index::schema::index_for_tests();
        for n in 0..(MAX_ITEMS + 150) {
            // names weigh most: some items hold the word in their name, the
            // rest in their body, repeated a varying number of times
            let (name, body) = if n % 7 == 0 {
                (format!("admin{n}"), "admin".to_string())
            } else {
                (format!("item{n}"), "admin ".repeat(1 + n % 5))
            };
            let item = records::Item {
                corpus: "symbols".into(),
                kind: "class".into(),
                name: name.as_str().into(),
                name_parts: name.as_str().into(),
                target: format!("t{n}").into(),
                path: Some(format!("p{n}.py").into()),
                line: Some(1),
                lang: Some("python".into()),
                status: None,
                body: "".into(),
                test: false,
                standing: Default::default(),
            };
            let words = format!("{name} {}", if n % 7 == 0 { "admin" } else { "" });
            records::add_item(&c, "unit", &item, &[words, "p".into(), body]).unwrap();
        }
        let query = crate::search::query::parsed_for_tests("admin");
        // the kept items' key: no other test's database
        let database = std::path::Path::new("/nowhere/collect-test.db");
        let reach = crate::search::query::reach::everything_for_tests();
        let sieve = Sieve::new(&query, &reach, database).unwrap();
        let collected = items_of(&c, &query, &sieve, 1).unwrap();
        assert!(collected.capped);
        // the definition: every match read whole, sorted, cut
        let words = plan::word_query(&query).unwrap();
        let mut every = item_index::word_index(&c, database, 1)
            .unwrap()
            .search(&words, usize::MAX);
        assert_eq!(every.len(), MAX_ITEMS + 150);
        // `every` is ascending by row id: a stable sort leaves ties so
        every.sort_by(|a, b| a.bm25.total_cmp(&b.bm25));
        every.truncate(MAX_ITEMS);
        let kept: Vec<String> = collected
            .found
            .iter()
            .map(|found| match found {
                Found::Item(hit) => hit.item.name.to_string(),
                Found::Line(_) => panic!("no code text was asked for"),
            })
            .collect();
        let expected: Vec<String> = every.iter().map(|hit| hit.item.name.to_string()).collect();
        assert_eq!(kept, expected);
    }
}
