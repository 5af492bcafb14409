//! What a parsed query becomes before it meets the index: phrases for the
//! word index (user text is only ever words to look up), a trigram prefilter over code text (Zoekt's idea: a
//! substring or a regex's required literals as trigrams), and the matcher
//! that verifies a candidate line and says where it matched.

use super::regex_cache::Shared as Regex;
use super::tokens;
use super::trigrams;
use super::{Query, Term};
use aho_corasick::{AhoCorasick, MatchKind};
use memchr::memmem::Finder;
use regex_syntax::hir::{Hir, HirKind};

/// A phrase to match: its words in order, the last one a prefix when
/// `prefix`; a single word matches any word of its stem when `stem`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Phrase {
    pub words: Vec<String>,
    pub prefix: bool,
    pub stem: bool,
}

/// What a query asks of the word index: items holding, for every required
/// term, one of its phrases, and for no excluded term any of its phrases.
/// An optional term ranks an item higher when held; when nothing is
/// required, an item holds one optional term at least.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WordQuery {
    pub required: Vec<Vec<Phrase>>,
    pub optional: Vec<Vec<Phrase>>,
    pub excluded: Vec<Vec<Phrase>>,
    /// For each term of `required` then `optional`, its place among the
    /// query's terms: the bit it sets in a matched item's terms.
    pub places: Vec<usize>,
}

/// What the query asks of the word index, or None when no term holds a word.
/// Among two words or more, the plain ones are optional (`Query::ranked`).
pub fn word_query(query: &Query) -> Option<WordQuery> {
    let ranked = query.ranked();
    let mut asked = WordQuery::default();
    let mut optional_places = Vec::new();
    let mut by_place: Vec<Option<Vec<Phrase>>> = query.terms.iter().map(term_phrases).collect();
    if ranked {
        add_compounds(&query.terms, &mut by_place);
    }
    for ((place, term), phrases) in query.terms.iter().enumerate().zip(by_place) {
        let Some(phrases) = phrases else {
            continue;
        };
        if ranked && term.plain() {
            asked.optional.push(phrases);
            optional_places.push(place);
        } else {
            asked.required.push(phrases);
            asked.places.push(place);
        }
    }
    if asked.required.is_empty() && asked.optional.is_empty() {
        return None;
    }
    asked.places.extend(optional_places);
    asked.excluded = query.excluded.iter().filter_map(term_phrases).collect();
    Some(asked)
}

/// Whether code text lines are asked for fewer words than the query holds:
/// among three plain words or more (and no regex), a line seldom holds
/// every word of a question, so it is asked for two ([`line_query`]) and
/// ranked by how many it holds.
pub fn loosens_lines(query: &Query) -> bool {
    query.ranked()
        && query.regex.is_none()
        && query
            .terms
            .iter()
            .filter(|term| term.plain() && !term.parts().is_empty())
            .count()
            >= 3
}

/// The query a line of code text must answer: when [`loosens_lines`], the
/// query's precise terms and, of its plain words, the two `holders` counts
/// fewest of (the rarest: a line holding them is worth ranking); else none
/// (the query itself).
pub fn line_query(query: &Query, holders: impl Fn(&Term) -> usize) -> Option<Query> {
    if !loosens_lines(query) {
        return None;
    }
    let mut plain: Vec<(usize, usize)> = query
        .terms
        .iter()
        .enumerate()
        .filter(|(_, term)| term.plain() && !term.parts().is_empty())
        .map(|(at, term)| (holders(term), at))
        .collect();
    plain.sort();
    let kept: Vec<usize> = plain.iter().take(2).map(|(_, at)| *at).collect();
    let mut loose = query.clone();
    loose.terms = query
        .terms
        .iter()
        .enumerate()
        .filter(|(at, term)| !term.plain() || term.parts().is_empty() || kept.contains(at))
        .map(|(_, term)| term.clone())
        .collect();
    Some(loose)
}

/// What the word index asks of one term alone: the items holding it.
pub fn term_query(term: &Term) -> Option<WordQuery> {
    Some(WordQuery {
        required: vec![term_phrases(term)?],
        places: vec![0],
        ..WordQuery::default()
    })
}

/// Two plain words written one after the other may be one word in the
/// code (`file name` in `get_valid_filename`, `time zone` in `timezone`):
/// each of the two may also be held as the pair run together, so an item
/// holding that counts as holding both.
fn add_compounds(terms: &[Term], by_place: &mut [Option<Vec<Phrase>>]) {
    let single_word = |term: &Term| {
        (term.plain() && term.parts().len() == 1 && tokens::runs(&term.text).count() == 1)
            .then(|| term.parts()[0].to_lowercase())
            .filter(|word| word.chars().all(|c| c.is_ascii_alphabetic()))
    };
    for at in 1..terms.len() {
        let (Some(first), Some(second)) = (single_word(&terms[at - 1]), single_word(&terms[at]))
        else {
            continue;
        };
        let joined = Phrase {
            words: vec![format!("{first}{second}")],
            prefix: false,
            stem: true,
        };
        for place in [at - 1, at] {
            if let Some(phrases) = &mut by_place[place] {
                phrases.push(joined.clone());
            }
        }
    }
}

/// One term: its parts as a phrase; for a single identifier of several
/// parts, its joined form first (the index keeps both).
fn term_phrases(term: &Term) -> Option<Vec<Phrase>> {
    let runs: Vec<Vec<String>> = tokens::runs(&term.text)
        .map(|(_, run)| tokens::parts(run))
        .filter(|parts| !parts.is_empty())
        .collect();
    let parts: Vec<String> = runs.iter().flatten().cloned().collect();
    if parts.is_empty() {
        return None;
    }
    // one word of letters, written bare: `passwords` finds `password`
    let stem = !term.phrase
        && !term.prefix
        && runs.len() == 1
        && parts.len() == 1
        && parts[0].chars().all(char::is_alphabetic);
    let phrase = |words: Vec<String>| Phrase {
        words,
        prefix: term.prefix,
        stem,
    };
    if !term.phrase && runs.len() == 1 && parts.len() > 1 {
        return Some(vec![phrase(vec![parts.concat()]), phrase(parts)]);
    }
    Some(vec![phrase(parts)])
}

/// The shortest substring code text search can prefilter.
pub const MIN_SUBSTRING: usize = trigrams::MIN_CHARS;

/// What verifying a line found, when it matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub whole_word: bool,
}

/// Words found without regard to case: by one literal automaton when they
/// are ASCII (it finds what their case-insensitive regex finds, without a
/// lazy DFA or a scratch pool), else by a regex.
#[derive(Debug, Clone)]
pub enum Spelled {
    Automaton(AhoCorasick),
    Regex(Regex),
}

impl Spelled {
    /// Where it occurs in `text` (byte ranges, ascending, none empty).
    pub fn find_iter<'a>(&'a self, text: &'a str) -> Occurrences<'a> {
        match self {
            Spelled::Automaton(automaton) => Occurrences::Automaton(automaton.find_iter(text)),
            Spelled::Regex(regex) => Occurrences::Regex(regex.find_iter(text)),
        }
    }

    pub fn is_match(&self, text: &str) -> bool {
        match self {
            Spelled::Automaton(automaton) => automaton.is_match(text),
            Spelled::Regex(regex) => regex.is_match(text),
        }
    }
}

/// Where a [`Spelled`] occurs in one text.
pub enum Occurrences<'a> {
    Automaton(aho_corasick::FindIter<'a, 'a>),
    Regex(regex::Matches<'a, 'a>),
}

impl Iterator for Occurrences<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        match self {
            Occurrences::Automaton(found) => found.next().map(|m| (m.start(), m.end())),
            // a regex may match nothing somewhere: that is no occurrence
            Occurrences::Regex(found) => {
                found.find(|m| !m.is_empty()).map(|m| (m.start(), m.end()))
            }
        }
    }
}

/// One of what a matching line must hold (a required term's spellings),
/// as [`LineMatcher::check_of_term`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check(usize);

/// Verifies code lines against the query.
#[derive(Debug)]
pub struct LineMatcher {
    required: Vec<Regex>,
    /// What a matching line holds one of each: every required term (by its
    /// automaton when its spellings are ASCII without spaces: its regex
    /// then compiles without Unicode, so both find the same), then the regex.
    checks: Vec<Spelled>,
    excluded: Vec<Regex>,
    regex: Option<Regex>,
    literals: Option<Vec<String>>,
    /// Each required term's spellings, as `literals` gives the scanned
    /// one's, for the terms whose spellings allow it (none with a regex),
    /// each beside the place of its term's check in `checks`.
    term_literals: Vec<(usize, Vec<String>)>,
    /// For each required term of ASCII spellings that `term_literals`
    /// leaves out (a phrase, which holds spaces), each of its parts that
    /// every spelling holds, lower-cased, as a list of one. Not for a term
    /// such as `os.path`: its literal scan over candidate files is cheaper
    /// than verifying every line holding `path`.
    part_literals: Vec<Vec<String>>,
    /// The same parts, each found in a line's ASCII-lower-cased bytes: a
    /// line lacking one cannot match, and is told so without its regex.
    part_finders: Vec<Finder<'static>>,
}

/// The longest line whose parts are looked for before its regex runs
/// (lower-cased on the stack).
const PART_CHECKED_LINE: usize = 512;

impl LineMatcher {
    pub fn new(query: &Query, regex: Option<Regex>) -> LineMatcher {
        let required: Vec<(Regex, &Term)> = query
            .terms
            .iter()
            .filter_map(|term| spelling_regex(term).map(|r| (r, term)))
            .collect();
        let scanned = required.iter().max_by_key(|(r, _)| r.as_str().len());
        let literals = match (&regex, scanned) {
            (None, Some((_, term))) => ascii_literals(term),
            _ => None,
        };
        let (term_literals, part_literals) = match &regex {
            None => literal_lists(&required),
            Some(_) => Default::default(),
        };
        let checks = required
            .iter()
            .map(|(r, t)| {
                literal_finder(t).map_or_else(|| Spelled::Regex(r.clone()), Spelled::Automaton)
            })
            .chain(regex.iter().cloned().map(Spelled::Regex))
            .collect();
        LineMatcher {
            required: required.iter().map(|(r, _)| r.clone()).collect(),
            checks,
            excluded: query.excluded.iter().filter_map(spelling_regex).collect(),
            regex,
            literals,
            term_literals,
            part_finders: part_literals
                .iter()
                .flatten()
                .map(|part| Finder::new(part.as_bytes()).into_owned())
                .collect(),
            part_literals,
        }
    }

    /// Whether the query's regex is among what a line must match.
    pub fn by_regex(&self) -> bool {
        self.regex.is_some()
    }

    /// What a matching line holds one of each of, each a list of
    /// lower-cased literals: every required term's spellings, for the terms
    /// that have them as [`LineMatcher::literals`] has the scanned term's,
    /// then the parts of the other terms that every spelling of theirs holds.
    pub fn run_literals(&self) -> impl Iterator<Item = &[String]> {
        self.term_literals
            .iter()
            .map(|(_, literals)| literals.as_slice())
            .chain(self.part_literals.iter().map(Vec::as_slice))
    }

    /// The check of the term whose spellings are the list at `term` among
    /// [`LineMatcher::run_literals`] (None for a list of a term's parts).
    pub fn check_of_term(&self, term: usize) -> Option<Check> {
        self.term_literals.get(term).map(|(check, _)| Check(*check))
    }

    /// The spellings of the query's one term, lower-cased, when holding one
    /// of them (in any case) is all a matching line must do: no other term,
    /// no exclusion, no regex.
    pub fn only_literals(&self) -> Option<&[String]> {
        match (self.checks.as_slice(), self.term_literals.as_slice()) {
            ([Spelled::Automaton(_)], [(_, literals)]) if self.excluded.is_empty() => {
                Some(literals)
            }
            _ => None,
        }
    }

    /// The spellings of the term [`LineMatcher::first`] scans with, lower-cased,
    /// when each is ASCII without spaces: a line holds one of them (in any
    /// case) exactly when that regex finds something in it, and a plain
    /// substring search over lower-cased text finds them several times
    /// faster than a case-insensitive regex.
    pub fn literals(&self) -> Option<&[String]> {
        self.literals.as_deref()
    }

    /// Whether `line` matches and, when it does, whether one of its matches
    /// is a whole word (a regex's match always counts as one): what
    /// [`LineMatcher::ranges`] tells, without collecting where. Every line
    /// a query finds is verified; only the shown ones need their ranges.
    pub fn verdict(&self, line: &str) -> Option<Verdict> {
        self.verdict_beside(line, None)
    }

    /// [`LineMatcher::verdict`] of a line known to pass `held`'s check, and
    /// whether one of that check's matches there is a whole word: the other
    /// checks are asked of the line, that one is not.
    pub fn verdict_holding(&self, line: &str, held: Check, whole_word: bool) -> Option<Verdict> {
        self.verdict_beside(line, Some((held, whole_word)))
    }

    /// Whether `held`'s check finds a whole word in `text`.
    pub fn whole_word_in(&self, held: Check, text: &str) -> bool {
        self.checks.get(held.0).is_some_and(|check| {
            check
                .find_iter(text)
                .any(|(start, end)| tokens::on_word_boundaries(text, start, end))
        })
    }

    fn verdict_beside(&self, line: &str, held: Option<(Check, bool)>) -> Option<Verdict> {
        if !self.holds_every_part(line) || self.excluded.iter().any(|r| r.is_match(line)) {
            return None;
        }
        let mut whole_word = self.regex.is_some() || held.is_some_and(|(_, whole)| whole);
        let skipped = held.map(|(check, _)| check.0);
        for (at, check) in self.checks.iter().enumerate() {
            if Some(at) == skipped {
                continue;
            }
            let mut found = false;
            // once a whole word is found, one match says the term is held
            let _ = check.find_iter(line).any(|(start, end)| {
                found = true;
                whole_word = whole_word || tokens::on_word_boundaries(line, start, end);
                whole_word
            });
            if !found {
                return None;
            }
        }
        Some(Verdict { whole_word })
    }

    /// False when `line` lacks one of the parts every spelling of a term
    /// holds (`part_literals`), so it cannot match; true otherwise, and for
    /// a line too long to tell cheaply.
    fn holds_every_part(&self, line: &str) -> bool {
        if self.part_finders.is_empty() || line.len() > PART_CHECKED_LINE {
            return true;
        }
        let mut lower = [0u8; PART_CHECKED_LINE];
        let lower = &mut lower[..line.len()];
        lower.copy_from_slice(line.as_bytes());
        lower.make_ascii_lowercase();
        self.part_finders
            .iter()
            .all(|finder| finder.find(lower).is_some())
    }

    /// Where `line` matches (byte ranges, sorted), or None when it does not.
    pub fn ranges(&self, line: &str) -> Option<Vec<(usize, usize)>> {
        if self.excluded.iter().any(|r| r.is_match(line)) {
            return None;
        }
        let mut ranges = Vec::new();
        for check in &self.checks {
            let before = ranges.len();
            ranges.extend(check.find_iter(line));
            if ranges.len() == before {
                return None;
            }
        }
        ranges.sort_unstable();
        Some(ranges)
    }

    /// The requirement a file's text is scanned with: the regex, else the
    /// term with the longest spelling (longer text is rarer, so the scan stops
    /// at fewer lines that the other terms then reject).
    pub fn first(&self) -> Option<&Regex> {
        self.regex
            .as_ref()
            .or_else(|| self.required.iter().max_by_key(|r| r.as_str().len()))
    }
}

fn ascii_literals(term: &Term) -> Option<Vec<String>> {
    let spelled = term.spellings();
    let plain = |s: &String| s.is_ascii() && !s.is_empty() && !s.contains(char::is_whitespace);
    spelled
        .iter()
        .all(plain)
        .then(|| spelled.iter().map(|s| s.to_ascii_lowercase()).collect())
}

/// Of the required terms (each beside its check's place), the spellings as
/// literals of those whose spellings allow it (`ascii_literals`), and for
/// the others each part that every spelling holds, as a list of one.
type LiteralLists = (Vec<(usize, Vec<String>)>, Vec<Vec<String>>);

fn literal_lists(required: &[(Regex, &Term)]) -> LiteralLists {
    let (mut spelled, mut parts) = LiteralLists::default();
    for (check, (_, term)) in required.iter().enumerate() {
        match ascii_literals(term) {
            Some(literals) => spelled.push((check, literals)),
            None => parts.extend(
                parts_every_spelling_holds(term)
                    .into_iter()
                    .map(|p| vec![p]),
            ),
        }
    }
    (spelled, parts)
}

/// The parts of `term`, lower-cased, that each of its spellings holds,
/// when its spellings are ASCII: its regex then compiles without Unicode,
/// so a line it matches holds each of them as written in some case.
fn parts_every_spelling_holds(term: &Term) -> Vec<String> {
    let spelled = term.spellings();
    if !spelled.iter().all(|s| s.is_ascii()) {
        return Vec::new();
    }
    let lower: Vec<String> = spelled.iter().map(|s| s.to_ascii_lowercase()).collect();
    term.parts()
        .iter()
        .map(|part| part.to_ascii_lowercase())
        .filter(|part| !part.is_empty() && part.is_ascii())
        .filter(|part| lower.iter().all(|s| s.contains(part.as_str())))
        .collect()
}

/// The automaton finding what `spelling_regex` finds, when the term's
/// spellings allow one (`ascii_literals`).
fn literal_finder(term: &Term) -> Option<AhoCorasick> {
    literal_automaton(&ascii_literals(term)?)
}

/// One automaton finding, without regard to ASCII case, what a
/// case-insensitive regex alternating `literals` (ASCII, in this order)
/// finds: leftmost-first, as the alternation.
pub fn literal_automaton(literals: &[String]) -> Option<AhoCorasick> {
    // each literal after its length: no two lists share a key
    let key: String = literals
        .iter()
        .map(|l| format!("{}:{l}", l.len()))
        .collect();
    super::regex_cache::finder(&key, || {
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .ascii_case_insensitive(true)
            .build(literals)
    })
    .ok()
}

fn spelling_regex(term: &Term) -> Option<Regex> {
    let alternatives: Vec<String> = term
        .spellings()
        .iter()
        .map(|spelling| {
            let escaped: Vec<String> = spelling.split_whitespace().map(regex::escape).collect();
            escaped.join(r"\s+")
        })
        .filter(|alternative| !alternative.is_empty())
        .collect();
    if alternatives.is_empty() {
        return None;
    }
    words_regex(&alternatives.join("|"))
}

/// A case-insensitive regex of escaped words. ASCII words compile without
/// Unicode tables (ten times less work per query); their matches are the same.
pub fn words_regex(pattern: &str) -> Option<Regex> {
    super::regex_cache::regex(&format!("words:{pattern}"), || {
        regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .unicode(!pattern.is_ascii())
            .build()
    })
    .ok()
}

/// The trigram prefilter for code text: a file is a candidate when it
/// holds every requirement, and a requirement is held when all the trigram
/// tokens of one of its spellings are in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prefilter {
    pub requirements: Vec<Vec<Vec<String>>>,
}

/// The prefilter of every positive term and the regex's required literals.
/// None when nothing of 3 or more characters is required (the caller then
/// says so instead of scanning).
pub fn trigram_prefilter(query: &Query) -> Option<Prefilter> {
    let requirements = requirements(query, trigrams_of);
    (!requirements.is_empty()).then_some(Prefilter { requirements })
}

/// Whether the query has a trigram prefilter (`trigram_prefilter` is
/// Some), without working out its tokens: most queries find their lines
/// through the runs, and only ask this.
pub fn has_trigram_prefilter(query: &Query) -> bool {
    !requirements(query, |text| {
        trigrams::has_trigram_in_a_word(text).then_some(())
    })
    .is_empty()
}

/// What `of` makes of each spelling of every positive term and of the
/// regex's required literals, as the prefilter's requirements.
fn requirements<T>(query: &Query, of: impl Fn(&str) -> Option<T>) -> Vec<Vec<T>> {
    let mut requirements: Vec<Vec<T>> = Vec::new();
    for term in &query.terms {
        let spelled = term.spellings();
        let options: Vec<T> = spelled.iter().filter_map(|s| of(s)).collect();
        // a spelling too short to prefilter could match anywhere: the term then narrows nothing
        if options.len() == spelled.len() && !options.is_empty() {
            requirements.push(options);
        }
    }
    if let Some(source) = &query.regex {
        requirements.extend(
            required_literals(source)
                .iter()
                .filter_map(|l| of(l))
                .map(|found| vec![found]),
        );
    }
    requirements
}

/// `text`'s trigram tokens, all required; None under 3 characters.
/// Words apart (a phrase's, matched across any run of spaces) count alone.
fn trigrams_of(text: &str) -> Option<Vec<String>> {
    let tokens: Vec<String> = text
        .split_whitespace()
        .flat_map(trigrams::token_list)
        .collect();
    (!tokens.is_empty()).then_some(tokens)
}

/// Literal strings every match of the regex contains, found in its syntax
/// tree (case-insensitive parts are classes, so they require nothing).
pub fn required_literals(source: &str) -> Vec<String> {
    let Ok(hir) = regex_syntax::Parser::new().parse(source) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    collect_required(&hir, &mut found);
    found.retain(|literal| literal.chars().count() >= MIN_SUBSTRING);
    found
}

fn collect_required(hir: &Hir, found: &mut Vec<String>) {
    match hir.kind() {
        HirKind::Literal(literal) => found.push(String::from_utf8_lossy(&literal.0).into_owned()),
        HirKind::Capture(capture) => collect_required(&capture.sub, found),
        HirKind::Repetition(repetition) if repetition.min >= 1 => {
            collect_required(&repetition.sub, found)
        }
        HirKind::Concat(children) => {
            let mut run = String::new();
            for child in children {
                if let HirKind::Literal(literal) = child.kind() {
                    run.push_str(&String::from_utf8_lossy(&literal.0));
                } else {
                    if !run.is_empty() {
                        found.push(std::mem::take(&mut run));
                    }
                    collect_required(child, found);
                }
            }
            if !run.is_empty() {
                found.push(run);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(text: &str) -> Query {
        crate::search::query::parsed_for_tests(text)
    }

    /// The phrases of each term, as `word word*` (`word~` for a stemmed
    /// one), terms apart by ` | `: required, optional, excluded.
    fn phrases(query: &WordQuery) -> (String, String, String) {
        let terms = |terms: &[Vec<Phrase>]| -> String {
            let term = |phrases: &Vec<Phrase>| -> String {
                let phrase = |p: &Phrase| {
                    let mark = match (p.prefix, p.stem) {
                        (true, _) => "*",
                        (false, true) => "~",
                        _ => "",
                    };
                    format!("{}{mark}", p.words.join(" "))
                };
                phrases.iter().map(phrase).collect::<Vec<_>>().join(" or ")
            };
            terms.iter().map(term).collect::<Vec<_>>().join(" | ")
        };
        (
            terms(&query.required),
            terms(&query.optional),
            terms(&query.excluded),
        )
    }

    #[test]
    fn word_queries_are_phrases_of_each_terms_parts() {
        let words = |text: &str| word_query(&query(text)).map(|q| phrases(&q));
        let none = String::new;
        assert_eq!(
            words("parseHttpRequest").unwrap(),
            (
                "parsehttprequest or parse http request".into(),
                none(),
                none()
            )
        );
        // precise forms are required, plain words among them optional
        assert_eq!(
            words(r#"auth* "select related" -test gzip"#).unwrap(),
            (
                "auth* | select related".into(),
                "gzip~".into(),
                "test~".into()
            )
        );
        // the common words of a question are left out
        assert_eq!(
            words("foo(bar x AND").unwrap(),
            (none(), "foo bar | x~".into(), none())
        );
        assert_eq!(
            words("hash a +password").unwrap(),
            ("password~".into(), "hash~".into(), none())
        );
        // two plain words may be one word in the code
        assert_eq!(
            words("safe file name").unwrap(),
            (
                none(),
                "safe~ or safefile~ | file~ or safefile~ or filename~ | name~ or filename~".into(),
                none()
            )
        );
        assert_eq!(
            words("time +zone").unwrap(),
            ("zone~".into(), "time~".into(), none())
        );
        assert_eq!(words("->>"), None);
    }

    #[test]
    fn lines_are_asked_for_the_two_rarest_of_three_plain_words_or_more() {
        let holders = |term: &Term| match term.text.as_str() {
            "gzip" => 3,
            "compress" => 5,
            _ => 100,
        };
        let texts = |query: Option<Query>| {
            query.map(|q| q.terms.iter().map(|t| t.text.clone()).collect::<Vec<_>>())
        };
        assert_eq!(
            texts(line_query(
                &query("compress the responses with gzip"),
                holders
            )),
            Some(vec!["compress".to_string(), "gzip".to_string()])
        );
        // precise terms stay, whatever their rarity
        assert_eq!(
            texts(line_query(&query("+responses compress body gzip"), holders)),
            Some(vec![
                "responses".to_string(),
                "compress".to_string(),
                "gzip".to_string()
            ])
        );
        // two words, a regex, or a single identifier: the query itself
        assert_eq!(texts(line_query(&query("compress gzip"), holders)), None);
        assert_eq!(
            texts(line_query(&query("compress body gzip /x+/"), holders)),
            None
        );
        assert_eq!(texts(line_query(&query("parseHttpRequest"), holders)), None);
    }

    #[test]
    fn a_word_query_names_each_terms_place_among_the_querys_terms() {
        let asked = word_query(&query("compress \"gzip\" responses")).unwrap();
        // required first (the phrase, second), then the optional words
        assert_eq!(asked.places, [1, 0, 2]);
    }

    #[test]
    fn lines_match_every_spelling_of_an_identifier() {
        let matcher = LineMatcher::new(&query("parseHttpRequest"), None);
        for line in [
            "fn parse_http_request() {",
            "x = ParseHTTPRequest()",
            "parsehttprequest",
        ] {
            assert!(matcher.ranges(line).is_some(), "{line}");
        }
        assert!(matcher.ranges("parse the http request").is_none());
        let words = LineMatcher::new(&query("parse http -test"), None);
        assert_eq!(words.ranges("parse(http)"), Some(vec![(0, 5), (6, 10)]));
        assert!(words.ranges("parse http test").is_none());
    }

    #[test]
    fn regexes_prefilter_on_their_required_literals() {
        assert_eq!(
            required_literals(r"def \w+_queryset\("),
            vec!["def ", "_queryset("]
        );
        assert_eq!(required_literals(r"(?i)select"), Vec::<String>::new());
        assert_eq!(required_literals(r"foo|bar"), Vec::<String>::new());
        let prefilter = trigram_prefilter(&query(r"/class \w+Admin/")).unwrap();
        let tokens: Vec<&str> = prefilter
            .requirements
            .iter()
            .flatten()
            .flatten()
            .map(String::as_str)
            .collect();
        for literal in ["cla", "dmi"] {
            assert!(
                tokens.contains(&trigrams::token_list(literal)[0].as_str()),
                "{tokens:?}"
            );
        }
        assert_eq!(trigram_prefilter(&query("ab")), None);
        assert!(trigram_prefilter(&query(r#"say "hi""#)).is_some());
        let identifier = trigram_prefilter(&query("cachedProperty")).unwrap();
        assert_eq!(
            identifier.requirements.len(),
            1,
            "one term, its spellings the alternatives"
        );
        assert_eq!(identifier.requirements[0].len(), 2, "{identifier:?}");
    }

    /// A line of identifiers in their spellings, Unicode look-alikes
    /// (Kelvin sign, long s), accents and punctuation.
    fn line_of_identifiers() -> impl proptest::strategy::Strategy<Value = String> {
        let pieces = proptest::sample::select(vec![
            "getKey",
            "GET_KEY",
            "get_key",
            "getkey",
            "\u{212a}ey",
            "k\u{e9}y",
            "KEY",
            "cachedProperty",
            "Cached",
            "property",
            " ",
            "_",
            ".",
            "(",
            "\u{17f}et",
            "set",
            "x",
            "xKey",
            "test",
        ]);
        proptest::strategy::Strategy::prop_map(proptest::collection::vec(pieces, 0..30), |pieces| {
            pieces.concat()
        })
    }

    proptest::proptest! {
        /// A line's verdict is what the terms' own regexes say (each finds
        /// something, no excluded one does), whatever is asked first to
        /// turn a line away cheaply.
        #[test]
        fn a_verdict_is_what_the_terms_regexes_say(
            words in proptest::collection::vec(
                proptest::sample::select(vec![
                    "json", "JSON", "Json", "response", "RESPONSE", "json response",
                    "json_response", "JsonResponse", " ", "\t", "  ", "x", "_", "\u{e9}",
                    "\u{17f}", "\u{212a}", "key", "get", "sON", "jso",
                ]),
                0..14,
            ),
            text in proptest::sample::select(vec![
                "\"json response\"", "\"json response\" -x", "json response", "JsonResponse",
                "\"get key\"", "\"k\u{e9} json\"", "\"json response\" key", "\"son res\"",
            ]),
            long in proptest::bool::ANY,
        ) {
            let mut line = words.concat();
            if long {
                line = format!("{}{line}", "y ".repeat(PART_CHECKED_LINE / 2));
            }
            let matcher = LineMatcher::new(&query(text), None);
            let said = matcher.required.iter().all(|r| r.is_match(&line))
                && !matcher.excluded.iter().any(|r| r.is_match(&line));
            proptest::prop_assert_eq!(matcher.verdict(&line).is_some(), said, "{:?}", line);
        }
    }

    proptest::proptest! {
        /// A term's automaton finds, in any line, the very ranges its
        /// regex finds.
        #[test]
        fn a_terms_automaton_finds_what_its_regex_finds(
            line in line_of_identifiers(),
            query_text in proptest::sample::select(vec![
                "getKey", "get_key", "key", "cached property", "CachedProperty", "set x",
            ]),
        ) {
            let matcher = LineMatcher::new(&query(query_text), None);
            for (regex, check) in matcher.required.iter().zip(&matcher.checks) {
                let Spelled::Automaton(finder) = check else { continue };
                let by_regex: Vec<(usize, usize)> =
                    regex.find_iter(&line).map(|m| (m.start(), m.end())).collect();
                let by_finder: Vec<(usize, usize)> =
                    finder.find_iter(&line).map(|m| (m.start(), m.end())).collect();
                proptest::prop_assert_eq!(by_finder, by_regex);
            }
        }
    }

    proptest::proptest! {
        /// A line's verdict says what its ranges say: whether it matched,
        /// and whether a match is a whole word (always, for a regex).
        #[test]
        fn a_verdict_is_what_the_ranges_tell(
            line in line_of_identifiers(),
            query_text in proptest::sample::select(vec![
                "getKey", "get_key", "key", "cached property", "\"cached property\"",
                "key -test", "Key x", "k\u{e9}y", "/get_?key/",
            ]),
        ) {
            let query = query(query_text);
            let regex = query.regex.as_ref().map(|r| crate::search::query::compile("q", r).unwrap());
            let by_regex = regex.is_some();
            let matcher = LineMatcher::new(&query, regex);
            let told = matcher.ranges(&line).map(|ranges| Verdict {
                whole_word: by_regex
                    || ranges.iter().any(|(start, end)| tokens::on_word_boundaries(&line, *start, *end)),
            });
            proptest::prop_assert_eq!(matcher.verdict(&line), told);
        }
    }

    proptest::proptest! {
        /// Asking whether a query has a prefilter answers what working the
        /// prefilter out does, for any words, phrases and regexes.
        #[test]
        fn whether_a_query_has_a_prefilter_is_told_without_its_tokens(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "ab", "abc", "a b", "\"ab cd\"", "\"ab cde\"", "Ab", "\u{e9}\u{e9}", "\u{df}x",
                    "\u{130}x", "getKey", "x_y", "-abc", "ab*", "/ab/", "/abc+/", "/a(bcd|efg)/",
                    "/[a-z]{3}/", "\u{1F600}ab", "ffi", "\u{FB03}",
                ]),
                1..4,
            ),
        ) {
            let text = pieces.join(" ");
            if let Ok(query) = crate::search::query::parse("q", &text, &[], crate::search::query::vocabulary_for_tests()) {
                proptest::prop_assert_eq!(
                    has_trigram_prefilter(&query),
                    trigram_prefilter(&query).is_some(),
                    "{}", text
                );
            }
        }
    }
}
