//! Why an answer is empty, in the query's terms: the words nothing holds,
//! what the query would find without a filter or without one of its
//! required words (with counts), and only then what the index itself left
//! out, when it could have held a hit.

use rusqlite::Connection;
use std::path::Path;

use super::index::records;
use super::memory::item_index;
use super::query::plan::{self, WordQuery};
use super::query::{Corpus, Query, unknown_language_note};
use super::rank::collect::{self, Sieve};
use crate::tools::ToolError;
use crate::tools::searchable;

/// Said whenever a query reaches the code while the graph was never indexed
/// (documents and tasks may be in the index already: the code is not).
pub const CODE_NOT_INDEXED: &str = "the code is not indexed yet, so no symbol or code line was searched: index the repository (`cos index` or the cos_graph_index tool; `cos serve` and `cos mcp` index it at start and follow saves)";

/// Why a query found nothing, where the index can tell. `code_unindexed`:
/// the graph was never indexed (said already when the query reached the code).
pub fn empty_reasons(
    c: &Connection,
    query: &Query,
    sieve: &Sieve,
    collected: &collect::Collected,
    code_unindexed: bool,
    revision: i64,
    repo: &Path,
) -> Result<Vec<String>, ToolError> {
    let mut reasons: Vec<String> = query
        .filters
        .unknown_langs
        .iter()
        .map(|lang| unknown_language_note(lang, &sieve.reach.vocabulary.languages))
        .collect();
    reasons.extend(word_reasons(c, query, sieve, revision)?);
    let (items, files) = records::sizes(c)?;
    let reach = sieve.reach;
    if code_unindexed && !reach.reads_code() && items + files == 0 {
        reasons.push(CODE_NOT_INDEXED.to_string());
    }
    let index_empty = !code_unindexed && items + files == 0;
    if index_empty {
        reasons.push(empty_index_reason(c, sieve)?);
    }
    if !query.filters.paths.is_empty() {
        let any_path = records::all_paths(c)?
            .iter()
            .any(|path| sieve.path_passes(Some(path)));
        if !any_path {
            reasons.push(format!(
                "path:{} matches no indexed file",
                query.filters.paths.join(",")
            ));
        }
    } else if collected.files_seen > 0 && collected.files_passed == 0 {
        reasons.push("no file in the chosen languages holds the text".to_string());
    }
    if !code_unindexed && !index_empty && reach.reads_code() {
        for offered in reach.sources.iter().filter(|offered| offered.files) {
            if let Some(left_out) = offered.left_out {
                reasons.extend(left_out_reason(&left_out(c)?, sieve, query, repo));
            }
        }
    }
    let short: Vec<&str> = query
        .terms
        .iter()
        .filter(|t| t.text.chars().count() < 3)
        .map(|t| t.text.as_str())
        .collect();
    if !short.is_empty() && reach.reads(Corpus::CODE) {
        reasons.push(format!(
            "{} under 3 characters: code text needs 3 or more to match a part of a word",
            short
                .iter()
                .map(|s| format!("`{s}` is"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(reasons)
}

/// Why the index holds nothing: the repository has no file the hub reads,
/// or it has files and every one was left out (named, with why), which is
/// not the same as a repository without code.
fn empty_index_reason(c: &Connection, sieve: &Sieve) -> Result<String, ToolError> {
    let mut count = 0;
    let mut first = Vec::new();
    for offered in sieve.reach.sources.iter().filter(|offered| offered.files) {
        if let Some(left_out) = offered.left_out {
            let left_out = left_out(c)?;
            count += left_out.count;
            first.extend(left_out.first);
        }
    }
    if count == 0 {
        return Ok(
            "the index is empty: the repository holds no files, documents or tasks the hub reads yet"
                .to_string(),
        );
    }
    const NAMED: usize = 5;
    let named: Vec<String> = first
        .iter()
        .take(NAMED)
        .map(|(path, why)| format!("{path} ({why})"))
        .collect();
    let more = count.saturating_sub(named.len() as u64);
    Ok(format!(
        "nothing is indexed: {} {} the repository holds {} left out, so none is searched: {}{} (files over 1 MiB, binary, minified and generated files are left out; `cos index` lists them)",
        count,
        if count == 1 { "file" } else { "files" },
        if count == 1 { "was" } else { "were all" },
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        },
    ))
}

/// The files the graph left out, which no code query searches: said when
/// one finds nothing and one of them could have held a hit (its path passes
/// the filter and its text holds a word of the query), naming the first three.
fn left_out_reason(
    left_out: &searchable::LeftOut,
    sieve: &Sieve,
    query: &Query,
    repo: &Path,
) -> Option<String> {
    // the files that could have held a hit are named first
    let (could_hold, others): (Vec<_>, Vec<_>) = left_out.first.iter().partition(|(path, _)| {
        sieve.path_passes(Some(path)) && holds_a_word(&repo.join(path), query)
    });
    if left_out.count == 0 || could_hold.is_empty() {
        return None;
    }
    let named: Vec<String> = could_hold
        .into_iter()
        .chain(others)
        .take(3)
        .map(|(path, why)| format!("{path} ({why})"))
        .collect();
    let files = if left_out.count == 1 { "file" } else { "files" };
    Some(format!(
        "{} {files} of the repository {} not indexed, so not searched: {}{} (`cos index` lists them)",
        left_out.count,
        if left_out.count == 1 { "is" } else { "are" },
        named.join(", "),
        if left_out.count > named.len() as u64 {
            ", ..."
        } else {
            ""
        },
    ))
}

/// Whether the file at `path` holds one of the query's words (any case):
/// read only for an empty answer, and only files of at most 8 MiB.
fn holds_a_word(path: &Path, query: &Query) -> bool {
    const LARGEST: u64 = 8 << 20;
    let small = std::fs::metadata(path).is_ok_and(|m| m.len() <= LARGEST);
    let Some(text) = small.then(|| std::fs::read(path).ok()).flatten() else {
        return false;
    };
    let text = String::from_utf8_lossy(&text).to_lowercase();
    query
        .terms
        .iter()
        .any(|term| text.contains(&term.text.to_lowercase()))
}

/// What the words of a query find one by one, and the query without its
/// filters or without one of its required terms, when that finds anything.
fn word_reasons(
    c: &Connection,
    query: &Query,
    sieve: &Sieve,
    revision: i64,
) -> Result<Vec<String>, ToolError> {
    let Some(asked) = plan::word_query(query).filter(|_| sieve.reach.reads_items()) else {
        return Ok(Vec::new());
    };
    let index = item_index::word_index(c, sieve.database, revision)?;
    let mut reasons = Vec::new();
    let terms: Vec<(usize, &Vec<plan::Phrase>)> = asked
        .places
        .iter()
        .copied()
        .zip(asked.required.iter().chain(&asked.optional))
        .collect();
    let unheld: Vec<String> = terms
        .iter()
        .filter(|(_, phrases)| {
            let alone = WordQuery {
                required: vec![(*phrases).clone()],
                ..WordQuery::default()
            };
            index.count(&alone, None) == 0
        })
        .map(|(place, _)| format!("`{}`", query.terms[*place].text))
        .collect();
    if !unheld.is_empty() {
        reasons.push(format!(
            "no symbol, section, task or evidence holds {}",
            unheld.join(", ")
        ));
    }
    let filters = filter_words(query);
    if !filters.is_empty() {
        let unfiltered = index.count(&asked, None);
        if unfiltered > 0 {
            reasons.push(format!(
                "without {}: {unfiltered} symbols, sections, tasks or evidence match",
                filters.join(" ")
            ));
        }
    }
    if asked.required.len() > 1 || (!asked.required.is_empty() && !asked.optional.is_empty()) {
        let passes = |item: &records::Item| sieve.item_passes(item);
        for (at, place) in asked.places.iter().enumerate().take(asked.required.len()) {
            let mut without = asked.clone();
            without.required.remove(at);
            without.places.remove(at);
            let found = index.count(&without, Some(&passes));
            if found > 0 {
                reasons.push(format!(
                    "without `{}`: {found} symbols, sections, tasks or evidence match",
                    query.terms[*place].text
                ));
            }
        }
    }
    Ok(reasons)
}

/// The query's filters as written (`kind:class`, `lang:python`).
fn filter_words(query: &Query) -> Vec<String> {
    let filters = &query.filters;
    let named = [
        (
            "area",
            filters
                .areas
                .iter()
                .map(|c| c.name().to_string())
                .collect::<Vec<_>>(),
        ),
        ("kind", filters.kinds.clone()),
        ("path", filters.paths.clone()),
        ("lang", filters.langs.clone()),
        ("status", filters.statuses.clone()),
    ];
    named
        .into_iter()
        .filter(|(_, values)| !values.is_empty())
        .map(|(name, values)| format!("{name}:{}", values.join(",")))
        .collect()
}
