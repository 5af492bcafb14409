//! The word index, in memory: for every word of the items (symbols, document
//! sections, tasks), where it occurs (item, field, position), so a query
//! matches words, phrases, prefixes and stems and scores them by BM25
//! without reading SQLite. Its scoring is FTS5's `bm25()` (the formula and constants
//! of `fts5_aux.c`), with the fields weighted name 10, path 3, body 1.
//! Items are held by slot: a removed item's slot is left dead, and `keep`
//! starts the index afresh when dead slots outnumber live ones.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use foldhash::HashMap;

use super::cache::{Memo, Rows};
use super::gallop::{holds_from, holds_key_from};
use crate::search::index::records::Item;
use crate::search::query::plan::{Phrase, WordQuery};
use crate::search::query::words::stem;

/// The fields of an item's words, in the order they are given.
pub const FIELDS: usize = 3;
/// How much a match in each field counts: name, path, body.
const WEIGHTS: [f64; FIELDS] = [10.0, 3.0, 1.0];
/// FTS5's BM25 parameters.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Positions are packed beside the field in 32 bits: words past this
/// position in one field are not indexed (a field of a billion words).
const POSITION_BITS: u32 = 30;
const MAX_POSITION: u32 = (1 << POSITION_BITS) - 1;

/// Where a word occurs: the item's slot and its field and position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Occurrence {
    slot: u32,
    place: u32,
}

impl Occurrence {
    fn field(self) -> usize {
        (self.place >> POSITION_BITS) as usize
    }

    fn position(self) -> u32 {
        self.place & MAX_POSITION
    }
}

fn place(field: usize, position: u32) -> u32 {
    ((field as u32) << POSITION_BITS) | position
}

/// What an item must pass besides matching the words, if anything.
pub type Passes<'a> = Option<&'a dyn Fn(&Item) -> bool>;

#[derive(Debug, Clone)]
struct Slot {
    id: i64,
    /// None once the item is removed.
    item: Option<Arc<Item>>,
    /// Its words in every field: BM25's document length.
    words: u32,
}

/// An item a query matched, and its BM25 (lower is better, as FTS5's).
#[derive(Debug, Clone)]
pub struct Scored {
    /// The item's row id.
    pub id: i64,
    pub item: Arc<Item>,
    pub bm25: f64,
    /// The query's terms it holds, a bit for each by its place.
    pub terms: u32,
}

/// A live item a query matched, before its item is handed out.
struct Match {
    id: i64,
    slot: u32,
    bm25: f64,
    terms: u32,
}

impl Match {
    /// More terms held first, then the better BM25, then the lower row id.
    fn better(a: &Match, b: &Match) -> std::cmp::Ordering {
        b.terms
            .count_ones()
            .cmp(&a.terms.count_ones())
            .then(a.bm25.total_cmp(&b.bm25))
            .then(a.id.cmp(&b.id))
    }
}

/// How often a phrase occurs in each field of one item (by slot).
type Hits = Vec<(u32, [u32; FIELDS])>;

/// Occurrences a word has at least for its hits to be kept once worked out.
const FREQUENT: usize = 2_048;
/// Bytes of kept hits at most.
const MAX_KEPT_HITS_BYTES: usize = 16 << 20;

#[derive(Debug, Clone, Default)]
pub struct WordIndex {
    vocabulary: HashMap<Box<str>, u32>,
    /// The ids of the words of each English stem (`password`: `password`,
    /// `passwords`), for a query's bare words.
    stems: HashMap<Box<str>, Vec<u32>>,
    /// By word id: the word, and its occurrences, ascending.
    words: Vec<Box<str>>,
    postings: Vec<Vec<Occurrence>>,
    /// Word ids in the words' order, for prefixes: made at the first prefix
    /// asked after a new word.
    in_order: OnceLock<Vec<u32>>,
    slots: Vec<Slot>,
    live: HashMap<i64, u32>,
    live_words: u64,
    /// The hits of the phrases of frequent words (`to`, `field`, `model
    /// admin`) as the index holds them now, by their words' ids: walking
    /// every occurrence of such a word is most of what a query asking for
    /// it costs, and the walk finds the same until the index changes.
    kept_hits: Memo<Vec<Vec<u32>>, Arc<Hits>, MAX_KEPT_HITS_BYTES>,
}

/// A word as the index keeps it: lower-cased already (`words::parts`), its
/// diacritics removed (`é` is `e`), as FTS5's `remove_diacritics` did.
pub fn fold(word: &str) -> Cow<'_, str> {
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char::is_combining_mark;
    if word.is_ascii() {
        return Cow::Borrowed(word);
    }
    Cow::Owned(word.nfd().filter(|c| !is_combining_mark(*c)).collect())
}

/// Items by row id: a removed item's slot and occurrences stay until the
/// index is built afresh.
impl Rows for WordIndex {
    fn slots_by_id(&self) -> &HashMap<i64, u32> {
        &self.live
    }

    fn slots_by_id_mut(&mut self) -> &mut HashMap<i64, u32> {
        &mut self.live
    }

    fn slots(&self) -> usize {
        self.slots.len()
    }

    fn let_go(&mut self, slot: u32) {
        self.kept_hits.clear();
        let slot = &mut self.slots[slot as usize];
        slot.item = None;
        self.live_words -= u64::from(slot.words);
    }
}

impl WordIndex {
    /// Adds the item of row `id` with its words, each field's words
    /// separated by spaces; an item already held under `id` is replaced.
    pub fn add(&mut self, id: i64, item: Arc<Item>, fields: [&str; FIELDS]) {
        self.remove(id);
        self.kept_hits.clear();
        let Ok(slot) = u32::try_from(self.slots.len()) else {
            return;
        };
        let mut words = 0u32;
        for (field, text) in fields.iter().enumerate() {
            for (position, word) in text.split(' ').filter(|w| !w.is_empty()).enumerate() {
                let Some(position) = u32::try_from(position).ok().filter(|p| *p <= MAX_POSITION)
                else {
                    break;
                };
                let term = self.word_id(&fold(word));
                self.postings[term as usize].push(Occurrence {
                    slot,
                    place: place(field, position),
                });
                words = words.saturating_add(1);
            }
        }
        self.slots.push(Slot {
            id,
            item: Some(item),
            words,
        });
        self.live.insert(id, slot);
        self.live_words += u64::from(words);
    }

    /// How many items it holds.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// The live item of row `id`.
    pub fn item(&self, id: i64) -> Option<&Arc<Item>> {
        let slot = self.live.get(&id)?;
        self.slots.get(*slot as usize)?.item.as_ref()
    }

    /// Gives back what growing left unused: after many items were added at
    /// once, a third of the occurrences' room is spare on average.
    pub fn shrink_to_fit(&mut self) {
        for occurrences in &mut self.postings {
            occurrences.shrink_to_fit();
        }
        self.postings.shrink_to_fit();
        self.words.shrink_to_fit();
        self.stems.shrink_to_fit();
        self.slots.shrink_to_fit();
    }

    fn word_id(&mut self, word: &str) -> u32 {
        if let Some(known) = self.vocabulary.get(word) {
            return *known;
        }
        let next = self.words.len() as u32;
        self.vocabulary.insert(word.into(), next);
        self.stems.entry(stem(word).into()).or_default().push(next);
        self.words.push(word.into());
        self.postings.push(Vec::new());
        self.in_order = OnceLock::new();
        next
    }

    /// The ids of the words beginning with `prefix`.
    fn beginning_with(&self, prefix: &str) -> Vec<u32> {
        let in_order = self.in_order.get_or_init(|| {
            let mut ids: Vec<u32> = (0..self.words.len() as u32).collect();
            ids.sort_unstable_by(|a, b| self.words[*a as usize].cmp(&self.words[*b as usize]));
            ids
        });
        let word = |id: &u32| &*self.words[*id as usize];
        let from = in_order.partition_point(|id| word(id) < prefix);
        in_order[from..]
            .iter()
            .take_while(|id| word(id).starts_with(prefix))
            .copied()
            .collect()
    }

    fn item_at(&self, slot: u32) -> Option<&Arc<Item>> {
        self.slots.get(slot as usize)?.item.as_ref()
    }

    /// The live items matching `query` that `passes` lets through: at most
    /// `limit`, those with the lowest row ids (with optional terms: those
    /// holding the most terms, then the best BM25), in no particular order.
    /// The candidates rise by slot, so each phrase's hits are walked once
    /// from where the last look ended, not searched anew for every candidate.
    fn matching(&self, query: &WordQuery, limit: usize, passes: Passes) -> Vec<Match> {
        // every phrase, numbered as FTS5 numbered them (left to right), and
        // each term's range of them
        let phrases: Vec<&Phrase> = query
            .required
            .iter()
            .chain(&query.optional)
            .chain(&query.excluded)
            .flatten()
            .collect();
        let mut next = 0;
        let mut ranges = |terms: &[Vec<Phrase>]| -> Vec<std::ops::Range<usize>> {
            terms
                .iter()
                .map(|term| {
                    next += term.len();
                    next - term.len()..next
                })
                .collect()
        };
        let required = ranges(&query.required);
        let optional = ranges(&query.optional);
        let excluded = ranges(&query.excluded);
        let hits: Vec<Arc<Hits>> = phrases.iter().map(|p| self.phrase_hits(p)).collect();
        // the first required term's items, or every item of an optional one
        let sources = match required.first() {
            Some(first) => first.clone(),
            None => match (optional.first(), optional.last()) {
                (Some(first), Some(last)) => first.start..last.end,
                _ => return Vec::new(),
            },
        };
        let mut candidates: Vec<u32> = hits[sources.clone()]
            .iter()
            .flat_map(|h| h.iter().map(|(slot, _)| *slot))
            .collect();
        // one phrase's hits are already ascending and distinct
        if sources.len() > 1 {
            candidates.sort_unstable();
            candidates.dedup();
        }
        let positive: Vec<&std::ops::Range<usize>> = required.iter().chain(&optional).collect();
        let bm25 = Bm25::new(self, &hits);
        // where each phrase's search for the previous candidate ended
        let mut cursors = vec![0; hits.len()];
        let mut held: Vec<Option<&[u32; FIELDS]>> = vec![None; hits.len()];
        let mut matched = Vec::new();
        for slot in candidates {
            for ((phrase, from), held) in hits.iter().zip(&mut cursors).zip(&mut held) {
                *held = holds_key_from(phrase, from, &slot, |(s, _)| s).then(|| &phrase[*from].1);
            }
            let holds =
                |term: &std::ops::Range<usize>| held[term.clone()].iter().any(Option::is_some);
            if !required.iter().skip(1).all(holds) || excluded.iter().any(holds) {
                continue;
            }
            let terms = positive
                .iter()
                .zip(&query.places)
                .filter(|(range, _)| holds(range))
                .fold(0u32, |bits, (_, place)| {
                    bits | 1u32.checked_shl(*place as u32).unwrap_or(0)
                });
            let Some(live) = self.slots.get(slot as usize) else {
                continue;
            };
            let Some(item) = &live.item else {
                continue;
            };
            if passes.is_some_and(|passes| !passes(item)) {
                continue;
            }
            matched.push(Match {
                id: live.id,
                slot,
                bm25: bm25.score(live.words, &held),
                terms,
            });
        }
        if matched.len() > limit {
            if limit > 0 {
                if query.optional.is_empty() {
                    matched.select_nth_unstable_by_key(limit - 1, |m| m.id);
                } else {
                    matched.select_nth_unstable_by(limit - 1, Match::better);
                }
            }
            matched.truncate(limit);
        }
        matched
    }

    /// How many live items match `query` that `passes` lets through.
    pub fn count(&self, query: &WordQuery, passes: Passes) -> usize {
        self.matching(query, usize::MAX, passes).len()
    }

    /// The items matching `query`, ascending by row id, at most `limit`.
    #[cfg(test)]
    fn matches(&self, query: &WordQuery, limit: usize) -> Vec<Match> {
        let mut matched = self.matching(query, limit, None);
        matched.sort_unstable_by_key(|m| m.id);
        matched
    }

    /// The items matching `query`, ascending by row id, at most `limit`.
    #[cfg(test)]
    pub fn search(&self, query: &WordQuery, limit: usize) -> Vec<Scored> {
        self.scored(self.matches(query, limit))
    }

    /// Of the first `read` items matching `query` by row id that `passes`
    /// lets through (the query's filters, so that a cut leaves out only what
    /// they would keep), the `keep` with the best BM25 (ties by row id) in
    /// that order, and true; or, when no more match, all of them ascending
    /// by row id, and false. Only the kept ones are handed out.
    pub fn best(
        &self,
        query: &WordQuery,
        read: usize,
        keep: usize,
        passes: Passes,
    ) -> (Vec<Scored>, bool) {
        let mut matched = self.matching(query, read, passes);
        if matched.len() <= keep {
            matched.sort_unstable_by_key(|m| m.id);
            return (self.scored(matched), false);
        }
        // without optional terms every match holds them all: BM25 decides
        if keep > 0 {
            matched.select_nth_unstable_by(keep - 1, Match::better);
        }
        matched.truncate(keep);
        matched.sort_unstable_by(Match::better);
        (self.scored(matched), true)
    }

    fn scored(&self, matched: Vec<Match>) -> Vec<Scored> {
        matched
            .into_iter()
            .filter_map(|m| {
                Some(Scored {
                    id: m.id,
                    item: self.item_at(m.slot)?.clone(),
                    bm25: m.bm25,
                    terms: m.terms,
                })
            })
            .collect()
    }

    /// The word ids each word of `phrase` may be: one for a whole word, every
    /// word it begins for the last one of a prefix phrase.
    fn word_options(&self, phrase: &Phrase) -> Vec<Vec<u32>> {
        let last = phrase.words.len().saturating_sub(1);
        phrase
            .words
            .iter()
            .enumerate()
            .map(|(at, word)| {
                let word = fold(word);
                if phrase.prefix && at == last {
                    self.beginning_with(&word)
                } else if phrase.stem && phrase.words.len() == 1 {
                    self.stems.get(&*stem(&word)).cloned().unwrap_or_default()
                } else {
                    self.vocabulary.get(&*word).copied().into_iter().collect()
                }
            })
            .collect()
    }

    /// How often `phrase` occurs in each field of every live item holding
    /// it, ascending by slot.
    fn phrase_hits(&self, phrase: &Phrase) -> Arc<Hits> {
        self.hits_of(self.word_options(phrase))
    }

    /// The hits of the word `word`.
    fn word_hits(&self, word: u32) -> Arc<Hits> {
        self.hits_of(vec![vec![word]])
    }

    /// How often any of `words` occurs.
    fn occurrences(&self, words: &[u32]) -> usize {
        words.iter().map(|w| self.postings[*w as usize].len()).sum()
    }

    /// The hits of the phrase of `options` (each word's ids): kept once
    /// walked when even its rarest word is frequent, since the walk then
    /// reads long lists and finds the same until the index changes.
    fn hits_of(&self, options: Vec<Vec<u32>>) -> Arc<Hits> {
        let frequent = options
            .iter()
            .map(|words| self.occurrences(words))
            .min()
            .is_some_and(|rarest| rarest >= FREQUENT);
        if frequent && let Some(kept) = self.kept_hits.get(&options) {
            return kept;
        }
        let hits = Arc::new(self.walked_hits(&options));
        if frequent {
            let size = std::mem::size_of_val(hits.as_slice())
                + options
                    .iter()
                    .map(|w| std::mem::size_of_val(w.as_slice()))
                    .sum::<usize>();
            self.kept_hits.keep(options, hits.clone(), size);
        }
        hits
    }

    /// The slots holding every word of a phrase of several, when even its
    /// rarest word is frequent: each word's items are then kept, and only
    /// the items holding them all are worth walking.
    fn slots_holding_all(&self, options: &[Vec<u32>], anchor: u32) -> Option<Vec<u32>> {
        if options.len() < 2 || self.occurrences(&[anchor]) < FREQUENT {
            return None;
        }
        let mut lists: Vec<Arc<Hits>> = options
            .iter()
            .map(|words| match words.as_slice() {
                [word] => Some(self.word_hits(*word)),
                _ => None,
            })
            .collect::<Option<_>>()?;
        lists.sort_unstable_by_key(|hits| hits.len());
        let (first, rest) = lists.split_first()?;
        let mut cursors = vec![0; rest.len()];
        Some(
            first
                .iter()
                .map(|(slot, _)| *slot)
                .filter(|wanted| {
                    rest.iter()
                        .zip(cursors.iter_mut())
                        .all(|(hits, from)| holds_key_from(hits, from, wanted, |hit| &hit.0))
                })
                .collect(),
        )
    }

    /// The occurrences of `word` in the items of `slots` (ascending).
    fn occurrences_in(&self, word: u32, slots: &[u32]) -> Vec<Occurrence> {
        let postings = &self.postings[word as usize];
        let mut from = 0;
        let mut found = Vec::new();
        for slot in slots {
            holds_key_from(postings, &mut from, slot, |o| &o.slot);
            while let Some(occurrence) = postings.get(from).filter(|o| o.slot == *slot) {
                found.push(*occurrence);
                from += 1;
            }
        }
        found
    }

    /// The hits of the phrase of `options` (each word's ids), found by
    /// walking its rarest word's occurrences.
    fn walked_hits(&self, options: &[Vec<u32>]) -> Hits {
        if options.is_empty() || options.iter().any(Vec::is_empty) {
            return Vec::new();
        }
        // the rarest word is walked, the others looked up beside it
        let Some(anchor) = (0..options.len())
            .filter(|at| options[*at].len() == 1 || options.len() == 1)
            .min_by_key(|at| self.occurrences(&options[*at]))
        else {
            return Vec::new();
        };
        // one word's occurrences are walked where they lie, not copied
        let starts: std::borrow::Cow<[Occurrence]> =
            match self.slots_holding_all(options, options[anchor][0]) {
                Some(slots) => self.occurrences_in(options[anchor][0], &slots).into(),
                None => match options[anchor].as_slice() {
                    [word] => self.postings[*word as usize].as_slice().into(),
                    words => {
                        let mut starts: Vec<Occurrence> = words
                            .iter()
                            .flat_map(|w| self.postings[*w as usize].iter().copied())
                            .collect();
                        starts.sort_unstable();
                        starts.into()
                    }
                },
            };
        // where each word's search for the previous start ended: the wanted
        // occurrences rise with the starts
        let mut cursors: Vec<Vec<usize>> = options.iter().map(|w| vec![0; w.len()]).collect();
        let mut hits: Hits = Vec::new();
        // a slot's occurrences come together: whether it is live is asked once
        let mut dead_slot = None;
        for &start in starts.iter() {
            if start.position() < anchor as u32 || dead_slot == Some(start.slot) {
                continue;
            }
            let counted = hits.last().is_some_and(|(slot, _)| *slot == start.slot);
            if !counted && self.item_at(start.slot).is_none() {
                dead_slot = Some(start.slot);
                continue;
            }
            let first = start.position() - anchor as u32;
            let mut holds_the_rest = true;
            for (at, words) in options.iter().enumerate() {
                if at == anchor {
                    continue;
                }
                let wanted = Occurrence {
                    slot: start.slot,
                    place: place(start.field(), first + at as u32),
                };
                // a cursor left behind is still before what any later start wants
                let held = words
                    .iter()
                    .zip(cursors[at].iter_mut())
                    .any(|(w, from)| holds_from(&self.postings[*w as usize], from, &wanted));
                if !held {
                    holds_the_rest = false;
                    break;
                }
            }
            if !holds_the_rest {
                continue;
            }
            match hits.last_mut() {
                Some((slot, counts)) if *slot == start.slot => counts[start.field()] += 1,
                _ => {
                    let mut counts = [0; FIELDS];
                    counts[start.field()] = 1;
                    hits.push((start.slot, counts));
                }
            }
        }
        hits
    }
}

/// FTS5's BM25 over the phrases of one query.
struct Bm25 {
    idf: Vec<f64>,
    average_words: f64,
}

impl Bm25 {
    fn new(index: &WordIndex, hits: &[Arc<Hits>]) -> Bm25 {
        let rows = index.live.len() as f64;
        let idf = hits
            .iter()
            .map(|h| {
                let holding = h.len() as f64;
                let idf = ((rows - holding + 0.5) / (holding + 0.5)).ln();
                if idf <= 0.0 { 1e-6 } else { idf }
            })
            .collect();
        Bm25 {
            idf,
            average_words: index.live_words as f64 / rows,
        }
    }

    /// The score of an item of `words` words holding each phrase `held`
    /// times in each field (None: not at all).
    fn score(&self, words: u32, held: &[Option<&[u32; FIELDS]>]) -> f64 {
        let length = f64::from(words);
        let mut score = 0.0;
        for (counts, idf) in held.iter().zip(&self.idf) {
            let frequency = counts.map_or(0.0, |counts| {
                counts
                    .iter()
                    .zip(WEIGHTS)
                    .map(|(count, weight)| f64::from(*count) * weight)
                    .sum()
            });
            // in FTS5's order of operations, for the same doubles
            score += idf
                * ((frequency * (K1 + 1.0))
                    / (frequency + K1 * (1.0 - B + B * length / self.average_words)));
        }
        -score
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(name: &str) -> Arc<Item> {
        Arc::new(crate::search::index::records::task_for_tests(name))
    }

    fn phrase(words: &str, prefix: bool) -> Phrase {
        Phrase {
            stem: false,
            words: words.split(' ').map(str::to_string).collect(),
            prefix,
        }
    }

    fn ids(index: &WordIndex, required: &[&str], excluded: &[&str]) -> Vec<i64> {
        let terms = |terms: &[&str]| -> Vec<Vec<Phrase>> {
            terms
                .iter()
                .map(|t| vec![phrase(t.trim_end_matches('*'), t.ends_with('*'))])
                .collect()
        };
        let query = WordQuery {
            required: terms(required),
            excluded: terms(excluded),
            ..WordQuery::default()
        };
        index
            .matches(&query, usize::MAX)
            .iter()
            .map(|m| m.id)
            .collect()
    }

    /// Optional stemmed words: the best `keep` as `best` hands them out,
    /// each with the places of the words it holds.
    fn ranked(index: &WordIndex, words: &[&str], keep: usize) -> Vec<(i64, u32)> {
        let query = WordQuery {
            optional: words
                .iter()
                .map(|word| {
                    vec![Phrase {
                        stem: true,
                        ..phrase(word, false)
                    }]
                })
                .collect(),
            places: (0..words.len()).collect(),
            ..WordQuery::default()
        };
        let (best, _) = index.best(&query, usize::MAX, keep, None);
        best.iter()
            .map(|hit| (row_of(index, hit), hit.terms))
            .collect()
    }

    fn row_of(index: &WordIndex, hit: &Scored) -> i64 {
        index
            .slots
            .iter()
            .find(|slot| {
                slot.item
                    .as_ref()
                    .is_some_and(|item| Arc::ptr_eq(item, &hit.item))
            })
            .map_or(-1, |slot| slot.id)
    }

    #[test]
    fn optional_words_find_items_holding_any_and_rank_those_holding_more_first() {
        let mut index = WordIndex::default();
        index.add(1, item("a"), ["gzip", "", "compresses the responses"]);
        index.add(2, item("b"), ["", "", "a response"]);
        index.add(
            3,
            item("c"),
            ["compression", "", "gzip response compressed"],
        );
        index.add(4, item("d"), ["unrelated", "", "words only"]);
        // 1 and 3 hold all three (`compresses`, `compression` share the
        // stem, as `responses` and `response` do), 2 one of them, 4 none;
        // uncut, by row id
        let found = ranked(&index, &["compress", "responses", "gzip"], 10);
        assert_eq!(found, [(1, 0b111), (2, 0b010), (3, 0b111)]);
        // the cut keeps the best: holding more first
        let kept = ranked(&index, &["compress", "responses", "gzip"], 1);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].1, 0b111);
    }

    #[test]
    fn phrases_prefixes_exclusions_and_diacritics_match_as_fts5_matched_them() {
        let mut index = WordIndex::default();
        index.add(
            1,
            item("a"),
            ["parse http request", "src parser", "café au lait"],
        );
        index.add(2, item("b"), ["parse", "http request", "naïve"]);
        index.add(3, item("c"), ["request parse http", "", "authority"]);
        assert_eq!(ids(&index, &["parse http"], &[]), [1, 3]);
        assert_eq!(
            ids(&index, &["http request"], &[]),
            [1, 2],
            "within a field"
        );
        assert_eq!(ids(&index, &["parse http request"], &[]), [1]);
        assert_eq!(ids(&index, &["pars*"], &[]), [1, 2, 3]);
        assert_eq!(ids(&index, &["parse h*"], &[]), [1, 3]);
        assert_eq!(ids(&index, &["auth*"], &[]), [3]);
        assert_eq!(ids(&index, &["request"], &["authority"]), [1, 2]);
        assert_eq!(ids(&index, &["cafe"], &[]), [1], "é is e");
        assert_eq!(ids(&index, &["naive"], &[]), [2]);
        assert_eq!(ids(&index, &["parse", "naïve"], &[]), [2]);
        assert!(ids(&index, &["nothing"], &[]).is_empty());
        index.remove(1);
        assert_eq!(
            ids(&index, &["parse http"], &[]),
            [3],
            "a removed item is gone"
        );
        index.add(3, item("c2"), ["other", "", ""]);
        assert!(ids(&index, &["parse http"], &[]).is_empty(), "replaced");
        assert_eq!((index.live(), index.dead()), (2, 2));
    }

    #[test]
    fn a_phrase_of_frequent_words_walks_only_the_items_holding_them_all_and_finds_every_hit() {
        // fields of pseudo-random words: `model` and `admin` frequent, the
        // phrase `model admin` in some fields, the words apart in others
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let words = ["model", "admin", "x"];
        let mut items: Vec<[String; FIELDS]> = Vec::new();
        for _ in 0..3_000 {
            items.push([(); FIELDS].map(|_| {
                let length = next(6);
                (0..length)
                    .map(|_| words[next(3) as usize])
                    .collect::<Vec<_>>()
                    .join(" ")
            }));
        }
        let mut index = WordIndex::default();
        for (id, fields) in items.iter().enumerate() {
            index.add(id as i64, item("i"), [&fields[0], &fields[1], &fields[2]]);
        }
        for gone in (0..3_000).step_by(7) {
            index.remove(gone);
        }
        let phrase = phrase("model admin", false);
        assert!(index.postings[index.vocabulary["model"] as usize].len() >= FREQUENT);
        assert!(index.postings[index.vocabulary["admin"] as usize].len() >= FREQUENT);
        let options = index.word_options(&phrase);
        assert!(
            index.slots_holding_all(&options, options[1][0]).is_some(),
            "the items holding both are walked"
        );
        let expected: Hits = items
            .iter()
            .enumerate()
            .filter(|(id, _)| id % 7 != 0)
            .filter_map(|(id, fields)| {
                let counts = fields.clone().map(|field| {
                    let words: Vec<&str> = field.split(' ').collect();
                    words
                        .windows(2)
                        .filter(|w| w == &["model", "admin"])
                        .count() as u32
                });
                (counts.iter().sum::<u32>() > 0).then_some((id as u32, counts))
            })
            .collect();
        assert!(expected.len() > 100);
        assert_eq!(*index.phrase_hits(&phrase), expected);
    }

    #[test]
    fn the_kept_hits_of_frequent_words_and_their_phrases_follow_every_change_of_the_index() {
        let scores = |index: &WordIndex, words: &str| -> Vec<(i64, u64)> {
            let query = WordQuery {
                required: vec![vec![phrase(words, false)]],
                ..WordQuery::default()
            };
            let matched = index.matches(&query, usize::MAX);
            matched.iter().map(|m| (m.id, m.bm25.to_bits())).collect()
        };
        let body = |id: i64| match id % 3 {
            0 => "to be to be",
            1 => "to be",
            _ => "be to",
        };
        let mut index = WordIndex::default();
        // enough occurrences of `to` and `be` for their hits to be kept
        for id in 1..=(FREQUENT as i64 + 10) {
            index.add(id, item("x"), ["name", "", body(id)]);
        }
        let kept = |index: &WordIndex, words: &[&str]| {
            let key: Vec<Vec<u32>> = words.iter().map(|w| vec![index.vocabulary[*w]]).collect();
            index.kept_hits.get(&key).is_some()
        };
        let mut before = Vec::new();
        for (words, key) in [("to", &["to"][..]), ("to be", &["to", "be"][..])] {
            before.push(scores(&index, words));
            assert_eq!(
                scores(&index, words),
                before[before.len() - 1],
                "asked twice, kept once"
            );
            assert!(kept(&index, key), "{words} kept");
        }
        index.remove(3);
        index.add(5, item("y"), ["name", "", "other words"]);
        index.add(9_999, item("z"), ["to be", "", "to be to"]);
        // a fresh index of the same items in the same order of ids
        let mut fresh = WordIndex::default();
        for id in 1..=(FREQUENT as i64 + 10) {
            if id != 3 && id != 5 {
                fresh.add(id, item("x"), ["name", "", body(id)]);
            }
        }
        fresh.add(5, item("y"), ["name", "", "other words"]);
        fresh.add(9_999, item("z"), ["to be", "", "to be to"]);
        for (words, before) in ["to", "to be"].into_iter().zip(before) {
            let after = scores(&index, words);
            assert_ne!(after, before, "{words}");
            assert!(after.iter().any(|(id, _)| *id == 9_999), "{words}");
            assert!(
                after == scores(&fresh, words),
                "{words}: as a fresh index scores"
            );
        }
    }

    /// The FTS5 expression FTS5 matched for `query` before the index was
    /// kept in memory.
    fn fts5_expression(query: &WordQuery) -> String {
        let term = |phrases: &Vec<Phrase>| -> String {
            let each: Vec<String> = phrases
                .iter()
                .map(|p| {
                    format!(
                        "\"{}\"{}",
                        p.words.join(" "),
                        if p.prefix { "*" } else { "" }
                    )
                })
                .collect();
            format!("({})", each.join(" OR "))
        };
        let mut expression = query
            .required
            .iter()
            .map(term)
            .collect::<Vec<_>>()
            .join(" AND ");
        for excluded in &query.excluded {
            expression = format!("({expression}) NOT {}", term(excluded));
        }
        expression
    }

    const WORDS: &[&str] = &[
        "parse",
        "http",
        "request",
        "parsehttprequest",
        "café",
        "cafe",
        "model",
        "models",
        "admin",
        "a",
        "tests",
        "naïve",
    ];

    fn words() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::collection::vec(proptest::sample::select(WORDS), 0..8).prop_map(|w| w.join(" "))
    }

    fn phrases() -> impl proptest::strategy::Strategy<Value = Vec<Phrase>> {
        let one = (
            proptest::collection::vec(proptest::sample::select(WORDS), 1..4),
            proptest::bool::ANY,
        )
            .prop_map(|(words, prefix)| Phrase {
                stem: false,
                words: words
                    .iter()
                    .map(|w| {
                        if prefix {
                            w.chars().take(3).collect()
                        } else {
                            w.to_string()
                        }
                    })
                    .collect(),
                prefix,
            });
        proptest::collection::vec(one, 1..3)
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// The same items match, with the same BM25, as when FTS5 held the
        /// words (its tokenizer, its `bm25()` with the same weights), and
        /// removing an item leaves what adding it never would have.
        #[test]
        fn matches_and_bm25_are_fts5s(
            rows in proptest::collection::vec((words(), words(), words()), 1..30),
            required in proptest::collection::vec(phrases(), 1..3),
            excluded in proptest::collection::vec(phrases(), 0..2),
            removed in proptest::collection::vec(proptest::bool::weighted(0.2), 30),
        ) {
            let c = rusqlite::Connection::open_in_memory().unwrap();
            c.execute_batch(
                "CREATE VIRTUAL TABLE w USING fts5(name, path, body, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')",
            ).unwrap();
            let mut index = WordIndex::default();
            for (at, (name, path, body)) in rows.iter().enumerate() {
                let id = at as i64 + 1;
                // a removed item is as if never added (FTS5's own delete
                // kept counting an emptied row in BM25's averages)
                index.add(id, item(name), [name, path, body]);
                if removed[at] {
                    index.remove(id);
                } else {
                    c.execute("INSERT INTO w(rowid, name, path, body) VALUES (?1, ?2, ?3, ?4)",
                        rusqlite::params![id, name, path, body]).unwrap();
                }
            }
            let query = WordQuery { required, excluded, ..WordQuery::default() };
            let matching = |expression: String| -> Vec<(i64, f64)> {
                let mut statement = c
                    .prepare("SELECT rowid, bm25(w, 10.0, 3.0, 1.0) FROM w WHERE w MATCH ?1 ORDER BY rowid")
                    .unwrap();
                statement
                    .query_map([expression], |row| Ok((row.get(0)?, row.get(1)?)))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap()
            };
            // under a NOT, FTS5 lost the instances of phrases of an OR
            // (`("a") AND ("b" OR "c") NOT "d"` scored only "a"): BM25 is
            // compared without the exclusions, on the rows they leave
            let kept: Vec<i64> = matching(fts5_expression(&query)).into_iter().map(|(id, _)| id).collect();
            let positive = WordQuery { required: query.required.clone(), ..WordQuery::default() };
            let fts5: Vec<(i64, f64)> = matching(fts5_expression(&positive))
                .into_iter()
                .filter(|(id, _)| kept.contains(id))
                .collect();
            let ours: Vec<(i64, f64)> = index.matches(&query, usize::MAX).iter().map(|m| (m.id, m.bm25)).collect();
            proptest::prop_assert_eq!(
                fts5.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
                ours.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
                "{}", fts5_expression(&query)
            );
            for ((_, theirs), (_, mine)) in fts5.iter().zip(&ours) {
                proptest::prop_assert!((theirs - mine).abs() <= 1e-9 * theirs.abs().max(1.0), "{} vs {}", theirs, mine);
            }
        }
    }
}
