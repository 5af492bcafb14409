//! The items (symbols, sections, tasks) and their words, kept in memory
//! between the queries of a process as the word index (`postings`) a query
//! matches and scores. When the index's revision moves, the kept index is
//! brought level by the row ids that came and went: ids are never reused
//! (`AUTOINCREMENT`), so an id names one item for good and only new ids are
//! read. Beside it, once read, the distinct names of every item with the
//! corpora they are names in, which a query that found nothing is compared
//! with ("did you mean"): one read of them per revision instead of one per
//! such query.

use std::path::Path;
use std::sync::Arc;

use rusqlite::Connection;

use super::cache::{self, Shelf};
use super::postings::WordIndex;
use crate::search::index::records;
use crate::store::StoreError;

/// Bytes of names kept at most (Django's 33,353 distinct names weigh about
/// 3.5 MiB); past it they are read again for each query that needs them.
const MAX_NAME_BYTES: usize = 32 << 20;
/// New items past this many are read in one pass over the table rather
/// than one by one.
const READ_ONE_BY_ONE: usize = 2_000;
/// Dead slots a kept index may hold beyond its live ones before it is
/// built afresh.
const DEAD_ALLOWANCE: usize = 4_096;

struct Kept {
    words: Arc<WordIndex>,
    names: Option<Arc<Names>>,
}

/// The distinct names of the items, each beside its lower-cased form and the
/// corpora it is a name in, in order of length in characters.
pub struct Names {
    by_length: Vec<Name>,
    /// The corpora named, by their bit's place.
    corpora: Vec<String>,
    bytes: usize,
}

/// A name's length in characters, lower-cased form, form as written, and
/// corpora (bit `1 << place in Names::corpora`).
type Name = (usize, String, String, u64);

/// Corpora a name's set tells apart; the items of any further corpus share
/// the last bit, so a query may be offered a name of another corpus but
/// never misses one of its own.
const MOST_CORPORA: usize = 64;

impl Names {
    /// From (name, corpus) pairs in order of name.
    fn of(named: Vec<(String, String)>) -> Names {
        let mut by_length: Vec<Name> = Vec::new();
        let mut corpora: Vec<String> = Vec::new();
        for (name, corpus) in named {
            let place = match corpora.iter().position(|known| *known == corpus) {
                Some(place) => place,
                None if corpora.len() < MOST_CORPORA => {
                    corpora.push(corpus);
                    corpora.len() - 1
                }
                None => MOST_CORPORA - 1,
            };
            let bit = 1 << place;
            match by_length.last_mut() {
                Some((_, _, last, corpora)) if *last == name => *corpora |= bit,
                _ => by_length.push((name.chars().count(), name.to_lowercase(), name, bit)),
            }
        }
        by_length.sort_unstable();
        let bytes = by_length
            .iter()
            .map(|(_, lower, name, _)| 64 + lower.len() + name.len())
            .sum();
        Names {
            by_length,
            corpora,
            bytes,
        }
    }

    /// The names of `shortest` to `longest` characters in any of `corpora`
    /// (by name): (lower-cased, as written).
    pub fn of_length(
        &self,
        shortest: usize,
        longest: usize,
        corpora: &[&str],
    ) -> impl Iterator<Item = (&str, &str)> {
        let wanted = corpora
            .iter()
            .filter_map(|corpus| self.corpora.iter().position(|known| known == corpus))
            .fold(0u64, |bits, place| bits | 1 << place.min(MOST_CORPORA - 1));
        let from = self.by_length.partition_point(|(n, ..)| *n < shortest);
        let to = self.by_length.partition_point(|(n, ..)| *n <= longest);
        self.by_length[from..to.max(from)]
            .iter()
            .filter(move |(.., bits)| bits & wanted != 0)
            .map(|(_, lower, name, _)| (lower.as_str(), name.as_str()))
    }
}

/// The distinct names of the items in the index at `revision` of the
/// database at `database`.
pub fn names(c: &Connection, database: &Path, revision: i64) -> Result<Arc<Names>, StoreError> {
    let known =
        cache::for_them(KEPT.lock().as_mut(), database, revision).and_then(|k| k.names.clone());
    if let Some(names) = known {
        return Ok(names);
    }
    let names = Arc::new(Names::of(records::distinct_names(c)?));
    if names.bytes <= MAX_NAME_BYTES
        && let Some(kept) = cache::for_them(KEPT.lock().as_mut(), database, revision)
    {
        kept.names = Some(names.clone());
    }
    Ok(names)
}

static KEPT: Shelf<Kept> = Shelf::new();

/// The word index of the items at `revision` of the database at `database`.
pub fn word_index(
    c: &Connection,
    database: &Path,
    revision: i64,
) -> Result<Arc<WordIndex>, StoreError> {
    let mut kept = KEPT.lock();
    if let Some(kept) = cache::for_them(kept.as_mut(), database, revision) {
        return Ok(kept.words.clone());
    }
    let mut words = cache::take_for(&mut kept, database)
        .map(|kept| kept.words)
        .unwrap_or_default();
    // queries still reading the index before keep theirs: this one is copied
    level(Arc::make_mut(&mut words), c)?;
    let value = Kept {
        words: words.clone(),
        names: None,
    };
    cache::keep(&mut kept, database, revision, value);
    Ok(words)
}

/// Brings `index` level with the items `c` sees: lets go of the ids gone,
/// reads the ids it does not hold.
fn level(index: &mut WordIndex, c: &Connection) -> Result<(), StoreError> {
    let new = cache::rows_to_read(index, records::item_ids(c)?, DEAD_ALLOWANCE);
    let mut add = |id: i64, item: records::Item, words: &str| {
        let mut fields = words.split('\n');
        let fields = [(); super::postings::FIELDS].map(|_| fields.next().unwrap_or_default());
        index.add(id, Arc::new(item), fields);
    };
    if new.len() > READ_ONE_BY_ONE {
        records::each_item_with_words(c, |id, item, words| {
            if new.binary_search(&id).is_ok() {
                add(id, item, words);
            }
        })?;
        index.shrink_to_fit();
        Ok(())
    } else {
        for id in new {
            if let Some((item, words)) = records::item_with_words(c, id)? {
                add(id, item, &words);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::memory::cache::Rows;

    #[test]
    fn a_moved_revision_reads_the_new_items_and_lets_go_of_the_gone() {
        let c = crate::search::index::schema::index_for_tests();
        let add = |name: &str| {
            let item = records::task_for_tests(name);
            records::add_item(
                &c,
                name,
                &item,
                &[name.into(), String::new(), "shared".into()],
            )
            .unwrap();
        };
        add("first");
        add("second");
        // (the kept index is shared by the tests of this process: `level`
        // is what moving to another revision runs)
        let mut kept = WordIndex::default();
        let names = |index: &WordIndex| -> Vec<String> {
            let query = crate::search::query::plan::WordQuery {
                required: vec![vec![crate::search::query::plan::Phrase {
                    words: vec!["shared".into()],
                    ..Default::default()
                }]],
                ..Default::default()
            };
            index
                .search(&query, usize::MAX)
                .iter()
                .map(|hit| hit.item.name.to_string())
                .collect()
        };
        level(&mut kept, &c).unwrap();
        assert_eq!(names(&kept), ["first", "second"]);
        c.execute("DELETE FROM search_items WHERE unit = 'first'", [])
            .unwrap();
        add("first");
        level(&mut kept, &c).unwrap();
        assert_eq!(names(&kept), ["second", "first"], "new ids come after");
        assert_eq!(
            (kept.live(), kept.dead()),
            (2, 1),
            "brought level, not built again"
        );
    }

    #[test]
    fn names_are_found_by_their_length_in_characters_and_their_corpora() {
        let named = |pairs: &[(&str, &str)]| {
            let mut pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(name, corpus)| (name.to_string(), corpus.to_string()))
                .collect();
            pairs.sort();
            Names::of(pairs)
        };
        let names = named(&[
            ("Größe", "symbols"),
            ("abc", "symbols"),
            ("abc", "tasks"),
            ("ab", "symbols"),
            ("ABCD", "docs"),
            ("abcdef", "symbols"),
        ]);
        let between = |shortest, longest, corpora: &[&str]| -> Vec<(&str, &str)> {
            names.of_length(shortest, longest, corpora).collect()
        };
        let all = ["symbols", "docs", "tasks"];
        assert_eq!(between(3, 4, &all), [("abc", "abc"), ("abcd", "ABCD")]);
        assert_eq!(
            between(5, 5, &all),
            [("größe", "Größe")],
            "characters, not bytes"
        );
        assert!(between(7, 9, &all).is_empty());
        assert!(between(5, 2, &all).is_empty());
        assert_eq!(
            between(3, 4, &["tasks"]),
            [("abc", "abc")],
            "a name in two corpora is one name, in both"
        );
        assert_eq!(between(3, 4, &["docs"]), [("abcd", "ABCD")]);
        assert!(
            between(3, 4, &["evidence"]).is_empty(),
            "a corpus with no names"
        );
    }
}
