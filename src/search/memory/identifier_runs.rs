//! The lines of code text by the runs they hold, kept in memory: for every
//! distinct run of ASCII letters, digits and underscores (as written) in
//! the indexed files, the lines holding it. A literal made only of those
//! characters occurs only inside one run, so the lines holding it are the
//! lines of the runs it occurs in, and those runs are found through their
//! lower-cased trigrams (Django's files hold 69,316 distinct runs
//! lower-cased, about a tenth more as written): no candidate file's text is
//! scanned. Where a literal lies in a run as written also tells whether it
//! is a whole word there, so for an ASCII line the runs can decide what
//! verifying its text would. Brought level by the file row ids that came
//! and went (never reused, `AUTOINCREMENT`); built only once a process asks
//! a second query, so a one-shot `cos search` scans instead; bounded by the
//! text it covers (past the bound, queries scan).

use std::path::Path;
use std::sync::Arc;

use fixedbitset::FixedBitSet;
use foldhash::HashMap;
use rusqlite::Connection;

use super::cache::{self, Memo, Rows, Shelf};
use super::gallop::holds_from;
use crate::search::index::records;
use crate::store::StoreError;

/// Bytes of text the index covers at most: past it, queries scan.
const MAX_TEXT_BYTES: usize = 128 << 20;
/// Room for files let go of the index may hold beyond its live ones
/// before it is built afresh.
const DEAD_ALLOWANCE: usize = 256;
/// Queries a process answers by scanning before it builds the index.
const SCANS_BEFORE_BUILDING: u32 = 1;
/// Runs a term's spellings are in at least for them to be kept once found.
const FREQUENT_RUNS: usize = 64;
/// Bytes of kept runs at most.
const MAX_KEPT_HOLDINGS_BYTES: usize = 8 << 20;

/// A line of a file: the file's slot and the line's index (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct LineAt {
    slot: u32,
    line: u32,
}

#[derive(Debug, Clone)]
struct FileSlot {
    id: i64,
    /// Where each line starts; emptied when the file is let go.
    line_starts: Vec<u32>,
    /// The lines that are ASCII without a carriage return: their bytes
    /// are known without reading them, and their runs are all their words.
    plain: FixedBitSet,
    bytes: usize,
}

#[derive(Debug, Clone, Default)]
pub struct RunIndex {
    /// Every distinct run as written, each followed by a line break.
    vocabulary: Vec<u8>,
    /// The same, lower-cased: where a lower-cased literal is looked for.
    folded: Vec<u8>,
    /// Where each run starts in `vocabulary`, ascending.
    run_starts: Vec<u32>,
    run_ids: HashMap<Box<[u8]>, u32>,
    /// By trigram of the lower-cased runs (three bytes in one number): the
    /// runs holding it, ascending, so a literal's runs are found without
    /// reading every run.
    grams: HashMap<u32, Vec<u32>>,
    /// By run: the lines holding it, ascending.
    lines: Vec<Vec<LineAt>>,
    files: Vec<FileSlot>,
    live: HashMap<i64, u32>,
    live_bytes: usize,
    /// The runs of the spellings held by many (`field`, `admin`) as the
    /// index holds them now: finding them reads long lists of runs, and
    /// they are the same until the index changes.
    kept_holdings: Memo<Vec<String>, Arc<Holding>, MAX_KEPT_HOLDINGS_BYTES>,
}

/// A byte a run is made of.
fn in_run(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Whether `literal` is made only of run bytes (so it lies inside one run).
pub fn within_runs(literal: &str) -> bool {
    !literal.is_empty() && literal.bytes().all(in_run)
}

/// The distinct trigrams of `bytes`, each as one number.
fn trigrams(bytes: &[u8]) -> Vec<u32> {
    let mut grams: Vec<u32> = bytes
        .windows(3)
        .map(|w| u32::from(w[0]) << 16 | u32::from(w[1]) << 8 | u32::from(w[2]))
        .collect();
    grams.sort_unstable();
    grams.dedup();
    grams
}

/// Files by row id: a removed file's slot and lines stay until the index
/// is built afresh.
impl Rows for RunIndex {
    fn slots_by_id(&self) -> &HashMap<i64, u32> {
        &self.live
    }

    fn slots_by_id_mut(&mut self) -> &mut HashMap<i64, u32> {
        &mut self.live
    }

    fn slots(&self) -> usize {
        self.files.len()
    }

    fn let_go(&mut self, slot: u32) {
        self.kept_holdings.clear();
        let file = &mut self.files[slot as usize];
        file.line_starts = Vec::new();
        file.plain = FixedBitSet::new();
        self.live_bytes -= file.bytes;
    }
}

impl RunIndex {
    fn run_id(&mut self, run: &[u8]) -> u32 {
        if let Some(known) = self.run_ids.get(run) {
            return *known;
        }
        let next = self.run_starts.len() as u32;
        self.run_starts.push(self.vocabulary.len() as u32);
        self.vocabulary.extend_from_slice(run);
        self.vocabulary.push(b'\n');
        let folded = run.to_ascii_lowercase();
        self.folded.extend_from_slice(&folded);
        self.folded.push(b'\n');
        self.run_ids.insert(run.into(), next);
        self.lines.push(Vec::new());
        for gram in trigrams(&folded) {
            self.grams.entry(gram).or_default().push(next);
        }
        next
    }

    /// Where the run of `id` lies in the vocabularies, its line break left out.
    fn span(&self, id: usize) -> std::ops::Range<usize> {
        let start = self.run_starts[id] as usize;
        let end = self
            .run_starts
            .get(id + 1)
            .map_or(self.vocabulary.len(), |next| *next as usize);
        start..end - 1
    }

    /// The run of `id` as written (ASCII).
    pub fn run_text(&self, id: u32) -> &str {
        let bytes = &self.vocabulary[self.span(id as usize)];
        std::str::from_utf8(bytes).unwrap_or_default()
    }

    /// The runs holding `literal`: those holding all its trigrams, each
    /// verified; a literal under three bytes is looked for in every run.
    fn runs_holding(&self, literal: &[u8]) -> Vec<usize> {
        if literal.len() < 3 {
            return memchr::memmem::find_iter(&self.folded, literal)
                .map(|at| {
                    self.run_starts
                        .partition_point(|start| *start as usize <= at)
                        - 1
                })
                .collect();
        }
        let mut lists = Vec::new();
        for gram in trigrams(literal) {
            match self.grams.get(&gram) {
                Some(runs) => lists.push(runs),
                None => return Vec::new(),
            }
        }
        lists.sort_unstable_by_key(|runs| runs.len());
        let Some((first, rest)) = lists.split_first() else {
            return Vec::new();
        };
        let finder = memchr::memmem::Finder::new(literal);
        let mut cursors = vec![0; rest.len()];
        first
            .iter()
            .filter(|run| {
                rest.iter()
                    .zip(cursors.iter_mut())
                    .all(|(runs, from)| holds_from(runs, from, *run))
            })
            .map(|run| *run as usize)
            .filter(|run| finder.find(&self.folded[self.span(*run)]).is_some())
            .collect()
    }

    /// Adds the file of row `id` with its text; false when the index would
    /// pass its bound (nothing is added then).
    pub fn add_file(&mut self, id: i64, text: &str) -> bool {
        if self.holds(id) {
            return true;
        }
        if self.live_bytes + text.len() > MAX_TEXT_BYTES {
            return false;
        }
        self.kept_holdings.clear();
        let Ok(slot) = u32::try_from(self.files.len()) else {
            return false;
        };
        let mut line_starts = Vec::new();
        let mut plain = FixedBitSet::new();
        let mut run = Vec::with_capacity(64);
        let mut start = 0usize;
        for (line, text_line) in text.split('\n').enumerate() {
            line_starts.push(start as u32);
            start += text_line.len() + 1;
            if text_line.is_ascii() && !text_line.ends_with('\r') {
                plain.grow(line + 1);
                plain.insert(line);
            }
            let at = LineAt {
                slot,
                line: line as u32,
            };
            for byte in text_line.bytes().chain(std::iter::once(b' ')) {
                if in_run(byte) {
                    run.push(byte);
                    continue;
                }
                if !run.is_empty() {
                    let id = self.run_id(&run) as usize;
                    if self.lines[id].last() != Some(&at) {
                        self.lines[id].push(at);
                    }
                    run.clear();
                }
            }
        }
        self.files.push(FileSlot {
            id,
            line_starts,
            plain,
            bytes: text.len(),
        });
        self.live.insert(id, slot);
        self.live_bytes += text.len();
        true
    }

    /// The runs holding any of `literals` (lower-cased, each
    /// `within_runs`), and how many lines those runs are in.
    pub fn holding(&self, literals: &[String]) -> Arc<Holding> {
        if let Some(kept) = self.kept_holdings.get(literals) {
            return kept;
        }
        let mut runs: Vec<usize> = literals
            .iter()
            .flat_map(|literal| self.runs_holding(literal.as_bytes()))
            .collect();
        runs.sort_unstable();
        runs.dedup();
        let lines = runs.iter().map(|run| self.lines[*run].len()).sum();
        let holding = Arc::new(Holding { runs, lines });
        if holding.runs.len() >= FREQUENT_RUNS {
            let size = std::mem::size_of_val(holding.runs.as_slice());
            self.kept_holdings
                .keep(literals.to_vec(), holding.clone(), size);
        }
        holding
    }

    /// Of the spellings of several terms a matching line holds one of each,
    /// those of the term held by the fewest lines (the fewest lines to
    /// verify), and that term's place among `terms`. A term with a spelling
    /// under three bytes (found by reading every run, and on most lines) is
    /// weighed only when every term has one.
    pub fn rarest<'t>(
        &self,
        terms: impl Iterator<Item = &'t [String]>,
    ) -> Option<(usize, Arc<Holding>)> {
        let (long, short): (Vec<_>, Vec<_>) = terms
            .enumerate()
            .filter(|(_, literals)| literals.iter().all(|l| within_runs(l)))
            .partition(|(_, literals)| literals.iter().all(|l| l.len() >= 3));
        let weighed = if long.is_empty() { short } else { long };
        weighed
            .into_iter()
            .map(|(term, literals)| (term, self.holding(literals)))
            .min_by_key(|(_, holding)| holding.lines)
    }

    /// The lines of the runs `holding` found, each once, ordered by their
    /// file's place (`place_of` its row id; None leaves the file out) then
    /// line.
    pub fn lines_holding(
        &self,
        holding: &Holding,
        place_of: impl Fn(i64) -> Option<usize>,
    ) -> LinesInOrder<'_> {
        // each file's place asked once: u32::MAX not yet, u32::MAX - 1 left out
        let mut places = vec![u32::MAX; self.files.len()];
        let mut found: Vec<Entry> = Vec::with_capacity(holding.lines);
        for run in &holding.runs {
            for at in &self.lines[*run] {
                let file = &self.files[at.slot as usize];
                let place = &mut places[at.slot as usize];
                if *place == u32::MAX {
                    *place = (!file.line_starts.is_empty())
                        .then(|| place_of(file.id))
                        .flatten()
                        .and_then(|p| u32::try_from(p).ok())
                        .filter(|p| *p < u32::MAX - 1)
                        .unwrap_or(u32::MAX - 1);
                }
                if *place != u32::MAX - 1 {
                    let key = u64::from(*place) << 32 | u64::from(at.line);
                    found.push((key, at.slot, *run as u32));
                }
            }
        }
        let sorted = if found.len() > SORTED_AT_ONCE {
            found = grouped_by_place(found);
            0
        } else {
            found.sort_unstable();
            found.len()
        };
        LinesInOrder {
            index: self,
            found,
            next: 0,
            sorted,
        }
    }

    /// Line `line` of the file in `slot`: its bytes, its line break left
    /// out, and whether it is plain (see `FileSlot::plain`).
    fn line_bytes(&self, slot: u32, line: usize) -> Option<(std::ops::Range<usize>, bool)> {
        let file = &self.files[slot as usize];
        let start = *file.line_starts.get(line)? as usize;
        let end = file
            .line_starts
            .get(line + 1)
            .map_or(file.bytes, |next| *next as usize - 1);
        Some((start..end, file.plain.contains(line)))
    }
}

/// The runs holding a term's spellings, and the lines they are in.
#[derive(Debug)]
pub struct Holding {
    runs: Vec<usize>,
    lines: usize,
}

/// Lines sorted all at once: past this many, they are grouped by their
/// files' places and each file's sorted when the walk reaches it.
const SORTED_AT_ONCE: usize = 1024;

/// A line of a run: its key (its file's place << 32 | its index), its
/// file's slot, and the run.
type Entry = (u64, u32, u32);

/// A line [`RunIndex::lines_holding`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundLine {
    /// The line's file's place and its index in one key: `place << 32 | line`.
    pub key: u64,
    /// The line's bytes in its file's text, its line break left out.
    pub bytes: std::ops::Range<usize>,
    /// ASCII without a carriage return: `bytes` are the line's exactly, and
    /// its runs are all its words.
    pub plain: bool,
    /// Where the runs that found it are in the list found.
    runs: std::ops::Range<usize>,
}

/// `found` in ascending order of their files' places (the lines of one
/// file together, in no set order): a counting sort, two passes over lines
/// a comparison sort would compare many times over.
fn grouped_by_place(found: Vec<Entry>) -> Vec<Entry> {
    let place = |entry: &Entry| (entry.0 >> 32) as usize;
    let places = found.iter().map(place).max().map_or(0, |last| last + 1);
    let mut starts = vec![0usize; places + 1];
    for entry in &found {
        starts[place(entry) + 1] += 1;
    }
    for at in 1..starts.len() {
        starts[at] += starts[at - 1];
    }
    let mut grouped = vec![(0, 0, 0); found.len()];
    for entry in found {
        let at = &mut starts[place(&entry)];
        grouped[*at] = entry;
        *at += 1;
    }
    grouped
}

/// The lines [`RunIndex::lines_holding`] found, in key order. A query stops
/// at its first MAX_LINES lines, and a common word is on tens of thousands:
/// many lines come grouped by their files' places, and each file's are
/// sorted only when the walk reaches them; a few are sorted at once.
pub struct LinesInOrder<'i> {
    index: &'i RunIndex,
    found: Vec<Entry>,
    next: usize,
    /// The lines before it are in key order.
    sorted: usize,
}

impl Iterator for LinesInOrder<'_> {
    type Item = FoundLine;

    fn next(&mut self) -> Option<FoundLine> {
        loop {
            if self.next == self.sorted && !self.sort_next_file() {
                return None;
            }
            let first = self.next;
            let (key, slot, _) = self.found[first];
            self.next += 1;
            // a line holding several of the runs is found once for each
            while (self.next < self.sorted || self.sort_next_file())
                && self.found[self.next].0 == key
            {
                self.next += 1;
            }
            let line = (key & u64::from(u32::MAX)) as usize;
            if let Some((bytes, plain)) = self.index.line_bytes(slot, line) {
                return Some(FoundLine {
                    key,
                    bytes,
                    plain,
                    runs: first..self.next,
                });
            }
        }
    }

    /// At most one line per entry left: a line holding several runs has an
    /// entry for each.
    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.found.len() - self.next))
    }
}

impl LinesInOrder<'_> {
    /// Puts the next file's lines in order after those handed out; false
    /// when none is left.
    fn sort_next_file(&mut self) -> bool {
        let rest = &mut self.found[self.sorted..];
        let Some(first) = rest.first() else {
            return false;
        };
        let place = first.0 >> 32;
        let file = rest.partition_point(|entry| entry.0 >> 32 == place);
        rest[..file].sort_unstable();
        self.sorted += file;
        true
    }

    /// The runs that found `line` (ids for [`RunIndex::run_text`]).
    pub fn runs_of(&self, line: &FoundLine) -> impl Iterator<Item = u32> + '_ {
        self.found[line.runs.clone()].iter().map(|(_, _, run)| *run)
    }
}

/// The line of `text` at `bytes` (from `lines_holding`), without a
/// carriage return before its line break.
pub fn line_at(text: &str, bytes: std::ops::Range<usize>) -> &str {
    text.get(bytes).unwrap_or_default().trim_end_matches('\r')
}

struct Kept {
    index: Option<Arc<RunIndex>>,
    scans: u32,
    /// The files passed the bound: the queries of this process scan.
    over_bound: bool,
}

static KEPT: Shelf<Kept> = Shelf::new();

/// The index of the files at `revision` (the files' own count of commits)
/// of the database at `database`; None while the process has asked fewer
/// queries than it scans first, or when the files pass the bound.
pub fn index(
    c: &Connection,
    database: &Path,
    revision: i64,
) -> Result<Option<Arc<RunIndex>>, StoreError> {
    let mut kept = KEPT.lock();
    if let Some(kept) = cache::for_them(kept.as_mut(), database, revision)
        && (kept.index.is_some() || kept.over_bound)
    {
        return Ok(kept.index.clone());
    }
    let previous = cache::take_for(&mut kept, database);
    let scans = previous.as_ref().map_or(0, |k| k.scans);
    if previous.as_ref().is_some_and(|k| k.over_bound) {
        // not read again at each change: this process scans
        let value = Kept {
            index: None,
            scans,
            over_bound: true,
        };
        cache::keep(&mut kept, database, revision, value);
        return Ok(None);
    }
    let previous = previous.and_then(|k| k.index);
    let Some(mut index) = previous
        .or_else(|| (scans >= SCANS_BEFORE_BUILDING).then(|| Arc::new(RunIndex::default())))
    else {
        let value = Kept {
            index: None,
            scans: scans + 1,
            over_bound: false,
        };
        cache::keep(&mut kept, database, revision, value);
        return Ok(None);
    };
    let whole = level(Arc::make_mut(&mut index), c)?;
    let value = Kept {
        index: whole.then_some(index),
        scans,
        over_bound: !whole,
    };
    let index = value.index.clone();
    cache::keep(&mut kept, database, revision, value);
    Ok(index)
}

/// Brings `index` level with the files `c` sees; false when it could not
/// take them all in (past its bound).
fn level(index: &mut RunIndex, c: &Connection) -> Result<bool, StoreError> {
    for id in cache::rows_to_read(index, records::file_ids(c)?, DEAD_ALLOWANCE) {
        if records::with_text(c, id, |text| index.add_file(id, text))? == Some(false) {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_finds_the_lines_of_the_runs_holding_it_in_any_case() {
        let mut index = RunIndex::default();
        let text = "def get_key(self):\r\n    return self.KEY\nkeys = [GetKey()]\n\u{e9}key";
        assert!(index.add_file(1, text));
        let found = |literal: &str| -> Vec<(u32, &str)> {
            index
                .lines_holding(&index.holding(&[literal.to_string()]), |_| Some(0))
                .map(|found| (found.key as u32, line_at(text, found.bytes)))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            found("key"),
            [
                (0, "def get_key(self):"),
                (1, "    return self.KEY"),
                (2, "keys = [GetKey()]"),
                (3, "\u{e9}key"),
            ]
        );
        assert_eq!(found("getkey"), [(2, "keys = [GetKey()]")]);
        assert_eq!(found("y_k"), [], "within one run only");
        assert_eq!(found("ke").len(), 4, "under three bytes, every run is read");
        assert_eq!(found("etke"), [(2, "keys = [GetKey()]")]);
        assert!(!within_runs("self.key") && within_runs("get_key"));
    }

    #[test]
    fn the_kept_runs_of_a_frequent_spelling_follow_every_file_added() {
        let mut index = RunIndex::default();
        let many: String = (0..FREQUENT_RUNS).map(|n| format!("key{n}\n")).collect();
        assert!(index.add_file(1, &many));
        let key = ["key".to_string()];
        assert_eq!(index.holding(&key).runs.len(), FREQUENT_RUNS);
        assert!(index.kept_holdings.get(&key[..]).is_some(), "kept");
        assert!(index.add_file(2, "KEYZ = 1"));
        let after = index.holding(&key);
        assert_eq!(
            (after.runs.len(), after.lines),
            (FREQUENT_RUNS + 1, FREQUENT_RUNS + 1)
        );
        assert_eq!(index.clone().kept_holdings.get(&key[..]).map(|_| ()), None);
    }

    #[test]
    fn the_rarest_term_is_the_one_on_the_fewest_lines() {
        let mut index = RunIndex::default();
        assert!(index.add_file(1, "field a\nfield b\nmany field\nfield many\nfield"));
        let terms = [
            vec!["field".to_string()],
            vec!["many".to_string()],
            vec!["a.b".to_string()],
            vec!["b".to_string()],
        ];
        let (term, rarest) = index.rarest(terms.iter().map(Vec::as_slice)).unwrap();
        assert_eq!(term, 1);
        let lines: Vec<u64> = index
            .lines_holding(&rarest, |_| Some(0))
            .map(|found| found.key)
            .collect();
        assert_eq!(
            lines,
            [2, 3],
            "many, not field; a.b lies across runs; b, on fewer lines, is short"
        );
    }

    #[test]
    fn many_lines_come_in_key_order_each_once_file_by_file() {
        let mut index = RunIndex::default();
        // lines holding the literal in two runs (found twice), others not at all
        let text = |file: u64| -> String {
            (0..1500u64)
                .map(|line| match (line * 7 + file) % 5 {
                    0 => "nothing here\n",
                    1 | 2 => "key = get_key(KEY)\n",
                    _ => "keys\n",
                })
                .collect()
        };
        for id in 1..=4 {
            assert!(index.add_file(id, &text(id as u64)));
        }
        // the places turn the files' order around, and leave file 2 out
        let place = |id: i64| (id != 2).then(|| (10 - id) as usize);
        let holding = index.holding(&["key".to_string()]);
        let lines = index.lines_holding(&holding, place);
        // the search reserves room for the lines by this bound
        let bound = lines.size_hint().1.expect("an upper bound");
        let found: Vec<u64> = lines.map(|found| found.key).collect();
        assert!(
            found.len() <= bound,
            "{} lines over a bound of {bound}",
            found.len()
        );
        let mut expected = Vec::new();
        for id in 1..=4i64 {
            let Some(at) = place(id) else { continue };
            for (line, content) in text(id as u64).lines().enumerate() {
                if content.contains("key") {
                    expected.push((at as u64) << 32 | line as u64);
                }
            }
        }
        expected.sort_unstable();
        assert!(expected.len() > 3 * SORTED_AT_ONCE, "grouped by place");
        assert_eq!(found, expected);
    }

    #[test]
    fn a_moved_revision_lets_go_of_the_gone_files_and_reads_the_new() {
        let c = crate::search::index::schema::index_for_tests();
        records::add_file(&c, "a.py", "python", false, "needle_one = 1").unwrap();
        records::add_file(&c, "b.py", "python", false, "other = 2").unwrap();
        // (the kept index is shared by the tests of this process: `level`
        // is what moving to another revision runs)
        let mut kept = RunIndex::default();
        let lines = |index: &RunIndex| -> Vec<u64> {
            // places in order of row id
            index
                .lines_holding(&index.holding(&["needle".to_string()]), |id| {
                    usize::try_from(id).ok()
                })
                .map(|found| found.key >> 32)
                .collect()
        };
        assert!(level(&mut kept, &c).unwrap());
        assert_eq!(lines(&kept), [1]);
        c.execute("DELETE FROM search_files WHERE path = 'a.py'", [])
            .unwrap();
        records::add_file(&c, "a.py", "python", false, "needle_two = 3").unwrap();
        assert!(level(&mut kept, &c).unwrap());
        assert_eq!(lines(&kept), [3], "a new id for the new text");
        assert_eq!(
            (kept.live(), kept.dead()),
            (2, 1),
            "brought level, not built again"
        );
    }
}
