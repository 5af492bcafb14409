//! Gathering every hit of a query before it is ranked: items from the word
//! index, and lines of code text from the trigram prefilter, each verified,
//! both held to the query's filters.

use globset::{GlobSet, GlobSetBuilder};
use rusqlite::Connection;

use super::compiled::Shared;
use super::matching::{self, LineMatcher};
use super::query::{Corpus, Query};
use super::rank::{CodeLine, Found};
use super::records;
use super::snippets;
use super::sync;
use super::texts;
use crate::store::{Store, StoreError};
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
    query: &'a Query,
    paths: Option<GlobSet>,
    /// The index's database (what kept texts belong to, with a revision).
    database: &'a std::path::Path,
}

impl<'a> Sieve<'a> {
    pub fn new(
        query: &'a Query,
        corpora: &'a [Corpus],
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
            corpora,
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

    fn item_passes(&self, item: &records::Item) -> bool {
        let filters = &self.query.filters;
        let in_corpus = self.corpora.iter().any(|c| c.name() == item.corpus);
        let kind = filters.kinds.is_empty() || filters.kinds.contains(&item.kind);
        let status = filters.statuses.is_empty()
            || item
                .status
                .as_ref()
                .is_some_and(|s| filters.statuses.contains(s));
        in_corpus
            && kind
            && status
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
}

/// What one read of the index found, and the revision and time it read at.
pub struct Read {
    pub revision: i64,
    pub updated_at: Option<String>,
    pub collected: Collected,
}

/// Collects the items and the code lines of a query in one read transaction,
/// so the revision a cursor is bound to is the one the hits came from.
pub fn collect(
    store: &Store,
    query: &Query,
    regex: Option<&Shared>,
    sieve: &Sieve,
) -> Result<Read, ToolError> {
    store.view(|c| {
        let transaction = c
            .unchecked_transaction()
            .map_err(|error| StoreError::on(c, error))?;
        let revision = records::indexed_revision(c)?;
        let updated_at = records::updated_at(c)?;
        let mut collected = items_of(c, query, sieve)?;
        if sieve.corpora.contains(&Corpus::Code) {
            code_lines(c, query, regex, sieve, &mut collected)?;
        }
        transaction
            .finish()
            .map_err(|error| StoreError::on(c, error))?;
        Ok(Read {
            revision,
            updated_at,
            collected,
        })
    })
}

fn items_of(c: &Connection, query: &Query, sieve: &Sieve) -> Result<Collected, ToolError> {
    let mut collected = Collected::default();
    let wants_items = sieve.corpora.iter().any(|c| *c != Corpus::Code);
    if wants_items && let Some(expression) = matching::word_expression(query) {
        let mut items = records::items_matching(c, &expression, MAX_ITEMS_READ)?;
        if items.len() > MAX_ITEMS {
            items.sort_by(|a, b| a.bm25.total_cmp(&b.bm25).then(a.id.cmp(&b.id)));
            items.truncate(MAX_ITEMS);
            collected.capped = true;
            collected.notes.push(format!(
                "more than {MAX_ITEMS} symbols, sections and tasks matched: the {MAX_ITEMS} with the best BM25 are ranked; narrow with area:, kind: or another word"
            ));
        }
        collected.found.extend(
            items
                .into_iter()
                .filter(|hit| sieve.item_passes(&hit.item))
                .map(Found::Item),
        );
    }
    Ok(collected)
}

fn code_lines(
    c: &Connection,
    query: &Query,
    regex: Option<&Shared>,
    sieve: &Sieve,
    collected: &mut Collected,
) -> Result<(), ToolError> {
    let prefilter = matching::trigram_expression(query);
    if prefilter.is_none() && regex.is_none() {
        collected.notes.push(format!(
            "code text was not searched: substring search needs a word of {} or more characters",
            matching::MIN_SUBSTRING
        ));
        return Ok(());
    }
    if prefilter.is_none() {
        collected.notes.push(format!(
            "the regex requires no literal of {} or more characters, so every file was scanned",
            matching::MIN_SUBSTRING
        ));
    }
    let matcher = LineMatcher::new(query, regex.cloned());
    let Some(scanner) = matcher.first().cloned() else {
        return Ok(());
    };
    // the files' own revision: a task or a document written keeps their table and texts
    let files_revision = records::source_revision(c, sync::FILES_SOURCE)?.unwrap_or(0);
    let table = texts::files(c, sieve.database, files_revision)?;
    let ids = match prefilter.as_deref() {
        Some(expression) => Some(records::candidate_ids(c, expression)?),
        None => None,
    };
    let mut lines = 0usize;
    for file in table.in_path_order(ids.as_deref()) {
        collected.files_seen += 1;
        if !sieve.path_passes(Some(&file.path)) || !sieve.lang_passes(Some(&file.lang)) {
            continue;
        }
        collected.files_passed += 1;
        let Some(content) = texts::text(c, sieve.database, files_revision, file.id)? else {
            continue;
        };
        let found: Vec<CodeLine> = matching_lines(&content, &scanner, &matcher)
            .into_iter()
            .map(|(number, text, ranges)| CodeLine {
                // a regex says itself where its match begins and ends
                whole_word: regex.is_some() || snippets::any_whole_word(text, &ranges),
                path: file.path.clone(),
                line: number,
                text: text.to_string(),
                ranges,
            })
            .collect();
        for line in found {
            if lines >= MAX_LINES {
                collected.capped = true;
                collected.notes.push(format!(
                    "more than {MAX_LINES} lines of code text matched: the first {MAX_LINES} by path are ranked; narrow with path:, lang: or another word"
                ));
                return Ok(());
            }
            lines += 1;
            collected.found.push(Found::Line(line));
        }
    }
    Ok(())
}

/// A line that matched: its number (1-based), its text, where in it.
type MatchedLine<'a> = (u32, &'a str, Vec<(usize, usize)>);

/// The lines of `content` the scanner finds and the matcher confirms: line
/// number (1-based), text, match ranges within the line.
fn matching_lines<'a>(
    content: &'a str,
    scanner: &regex::Regex,
    matcher: &LineMatcher,
) -> Vec<MatchedLine<'a>> {
    let mut found = Vec::new();
    let mut line_number = 1u32;
    let mut counted_to = 0usize;
    let mut next_line_start = 0usize;
    for hit in scanner.find_iter(content) {
        if hit.start() < next_line_start {
            continue;
        }
        line_number +=
            memchr::memchr_iter(b'\n', &content.as_bytes()[counted_to..hit.start()]).count() as u32;
        counted_to = hit.start();
        let start = content[..hit.start()].rfind('\n').map_or(0, |at| at + 1);
        let end = content[hit.start()..]
            .find('\n')
            .map_or(content.len(), |at| hit.start() + at);
        next_line_start = end + 1;
        let text = content[start..end].trim_end_matches('\r');
        if let Some(ranges) = matcher.ranges(text) {
            found.push((line_number, text, ranges));
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
        let content = "foo\nfoo bar foo\r\nnothing\nbar then foo";
        let lines: Vec<_> = matching_lines(content, &scanner, &matcher)
            .into_iter()
            .map(|(n, text, _)| (n, text))
            .collect();
        assert_eq!(lines, vec![(2, "foo bar foo"), (4, "bar then foo")]);
    }
}
