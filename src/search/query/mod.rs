//! The query language: words (identifier-aware), `"exact phrases"`,
//! prefixes (`auth*`), required words (`+gzip`), exclusions (`-test`), one
//! `/regex/` over code text, and filters (`area:`, `kind:`, `path:`,
//! `lang:`, `status:`). Two or more words are ranked by how many of them a
//! hit holds, not required all: the precise forms are what must match, and
//! the common words of a question (`a`, `with`) are left out. Parsing
//! refuses what it cannot honour, naming the field and what it expected:
//! user text never reaches SQLite's MATCH syntax raw.
//!
//! Beside it: `tokens.rs` splits identifiers into words, `trigrams.rs` makes
//! the trigram tokens of a text (the same for a file and a query),
//! `reach.rs` says which corpora and areas a query reads, `plan.rs` what it
//! becomes before it meets the index, `regex_cache.rs` keeps its compiled
//! patterns, `words.rs` knows stop words and stems.

pub mod plan;
pub mod reach;
pub mod regex_cache;
pub mod tokens;
pub mod trigrams;
pub mod words;

use crate::tools::ToolError;
use crate::tools::searchable;
pub use crate::tools::searchable::Vocabulary;

/// Characters a query may hold at most.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// Words, phrases and exclusions a query may hold at most.
const MAX_TERMS: usize = 16;

/// A corpus one query covers, by name: those the areas declare
/// (`tools::searchable`) and the code text lines search keeps itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Corpus(&'static str);

impl Corpus {
    /// The code text lines, found in the files the areas' units carry.
    pub const CODE: Corpus = Corpus(searchable::CODE.name);

    pub fn of(corpus: &searchable::Corpus) -> Corpus {
        Corpus(corpus.name)
    }

    pub fn name(self) -> &'static str {
        self.0
    }
}

/// A word or phrase of the query. Compared, hashed and shown by what was
/// written (a cursor is bound to that): the rest is worked out from it.
#[derive(Clone)]
pub struct Term {
    /// As written, without quotes, the leading `-` or the trailing `*`.
    pub text: String,
    /// Written in quotes: its words must follow each other.
    pub phrase: bool,
    /// Written with a trailing `*`: its last word may go on.
    pub prefix: bool,
    /// Written with a leading `+`: a hit must hold it.
    pub required: bool,
    /// Its identifier parts and its spellings, worked out once: matching,
    /// ranking and highlighting each ask for them.
    parts: Vec<String>,
    spellings: Vec<String>,
}

impl Term {
    pub fn new(text: &str, phrase: bool, prefix: bool) -> Term {
        let parts = tokens::all_parts(text);
        Term {
            text: text.to_string(),
            phrase,
            prefix,
            required: false,
            spellings: spellings(text, phrase, &parts),
            parts,
        }
    }

    /// A bare word: not a phrase, a prefix or required. Among several
    /// words, a hit need not hold it; it ranks higher when it does.
    pub fn plain(&self) -> bool {
        !self.phrase && !self.prefix && !self.required
    }

    /// Its identifier parts; empty for punctuation only.
    pub fn parts(&self) -> &[String] {
        &self.parts
    }

    /// The spellings it may have in code text, matched without regard to
    /// case: as written, and for an identifier its snake_case and
    /// run-together forms (which cover camelCase and PascalCase).
    pub fn spellings(&self) -> &[String] {
        &self.spellings
    }
}

impl PartialEq for Term {
    fn eq(&self, other: &Term) -> bool {
        (&self.text, self.phrase, self.prefix, self.required)
            == (&other.text, other.phrase, other.prefix, other.required)
    }
}

impl Eq for Term {}

impl std::fmt::Debug for Term {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Term")
            .field("text", &self.text)
            .field("phrase", &self.phrase)
            .field("prefix", &self.prefix)
            .field("required", &self.required)
            .finish()
    }
}

impl std::hash::Hash for Term {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (&self.text, self.phrase, self.prefix, self.required).hash(state);
    }
}

/// The spellings of a term written `text` of `parts` (see `Term::spellings`).
fn spellings(text: &str, phrase: bool, parts: &[String]) -> Vec<String> {
    let mut spellings = vec![text.to_string()];
    let single_run = tokens::runs(text).count() == 1;
    if !phrase && single_run && parts.len() > 1 {
        spellings.push(parts.join("_"));
        spellings.push(parts.concat());
    }
    if phrase && parts.len() > 1 {
        spellings.push(parts.join("_"));
    }
    // three at most: a list is the cheapest set
    let mut seen: Vec<String> = Vec::new();
    spellings.retain(|s| {
        let lower = s.to_lowercase();
        let new = !seen.contains(&lower);
        if new {
            seen.push(lower);
        }
        new
    });
    spellings
}

/// The filters, from the query's `name:value` words and the separate arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Filters {
    pub areas: Vec<Corpus>,
    pub kinds: Vec<String>,
    pub paths: Vec<String>,
    pub langs: Vec<String>,
    /// Of `langs`, those no file can have (no language of that name is
    /// known): they match nothing, and an empty answer says so.
    pub unknown_langs: Vec<String>,
    pub statuses: Vec<String>,
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Query {
    pub terms: Vec<Term>,
    pub excluded: Vec<Term>,
    /// The `/regex/`'s source, checked to compile.
    pub regex: Option<String>,
    pub filters: Filters,
    /// The common words left out of `terms`, as written.
    pub ignored: Vec<String>,
}

impl Query {
    /// Whether hits are ranked by how many of the words they hold rather
    /// than required to hold them all: two words or more.
    pub fn ranked(&self) -> bool {
        self.terms.iter().filter(|t| !t.parts().is_empty()).count() >= 2
    }
}

pub const FILTER_NAMES: &[&str] = &["area", "kind", "path", "lang", "status"];

/// Parses `text` (the `field` argument) and the filters given beside it.
pub fn parse(
    field: &str,
    text: &str,
    separate: &[(&str, &str)],
    vocabulary: &Vocabulary,
) -> Result<Query, ToolError> {
    if text.chars().count() > MAX_QUERY_CHARS {
        return Err(ToolError::invalid(
            field,
            format!("at most {MAX_QUERY_CHARS} characters"),
        ));
    }
    if text.chars().any(|c| c.is_control() && !c.is_whitespace()) {
        return Err(ToolError::invalid(field, "text without control characters"));
    }
    let mut query = Query {
        terms: Vec::new(),
        excluded: Vec::new(),
        regex: None,
        filters: Filters::default(),
        ignored: Vec::new(),
    };
    for (name, value) in separate {
        add_filter(&mut query.filters, name, name, value, vocabulary)?;
    }
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let at = text.len() - rest.len();
        // `-word` and `-"phrase"` exclude, `+word` and `+"phrase"` are
        // required; `->`, `--flag` or `++` are text to find
        let marked = |sign: char| {
            rest.strip_prefix(sign)
                .filter(|body| body.starts_with(|c: char| c.is_alphanumeric() || c == '"'))
        };
        let (excluded, required, body) = match (marked('-'), marked('+')) {
            (Some(body), _) => (true, false, body),
            (None, Some(body)) => (false, true, body),
            (None, None) => (false, false, rest),
        };
        let (token, after) = if let Some(quoted) = body.strip_prefix('"') {
            let Some(end) = quoted.find('"') else {
                return Err(ToolError::invalid(
                    field,
                    format!(
                        "a closing quote for the phrase opened at character {}",
                        at + 1
                    ),
                ));
            };
            let phrase = &quoted[..end];
            let token = Token::Phrase(phrase);
            (token, &quoted[end + 1..])
        } else if !excluded && body.starts_with('/') && body.len() > 1 {
            let (source, after) = regex_at(field, body, at)?;
            (Token::Regex(source), after)
        } else {
            let end = body.find(char::is_whitespace).unwrap_or(body.len());
            (Token::Word(&body[..end]), &body[end..])
        };
        match token {
            Token::Regex(source) => {
                if query.regex.is_some() {
                    return Err(ToolError::invalid(field, "at most one /regex/"));
                }
                check_regex(field, &source)?;
                query.regex = Some(source);
            }
            Token::Word(word) if !excluded && filter_word(word).is_some() => {
                let (name, value) = filter_word(word).unwrap_or_default();
                add_filter(&mut query.filters, field, name, value, vocabulary)?;
            }
            Token::Word(word) => {
                let (text, prefix) = match word.strip_suffix('*') {
                    Some(stem) if !stem.is_empty() => (stem, true),
                    _ => (word, false),
                };
                let term = Term {
                    required,
                    ..Term::new(text, false, prefix)
                };
                push_term(&mut query, excluded, term);
            }
            Token::Phrase(phrase) => {
                let term = Term {
                    required,
                    ..Term::new(phrase.trim(), true, false)
                };
                push_term(&mut query, excluded, term);
            }
        }
        rest = after.trim_start();
    }
    check_terms(field, &query)?;
    leave_out_common_words(&mut query);
    Ok(query)
}

/// Leaves out the plain words of a question that every text holds (`how`,
/// `a`, `with`), unless nothing else would be left to look for.
fn leave_out_common_words(query: &mut Query) {
    let common = |term: &Term| term.plain() && words::is_stop_word(&term.text);
    let others = query.terms.iter().filter(|t| !common(t)).count();
    if others == 0 || query.terms.len() < 2 {
        return;
    }
    let (ignored, kept): (Vec<Term>, Vec<Term>) = std::mem::take(&mut query.terms)
        .into_iter()
        .partition(common);
    query.terms = kept;
    query.ignored = ignored.into_iter().map(|term| term.text).collect();
}

enum Token<'a> {
    Word(&'a str),
    Phrase(&'a str),
    Regex(String),
}

fn push_term(query: &mut Query, excluded: bool, term: Term) {
    if term.text.trim().is_empty() {
        return;
    }
    let list = if excluded {
        &mut query.excluded
    } else {
        &mut query.terms
    };
    if !list.contains(&term) {
        list.push(term);
    }
}

fn check_terms(field: &str, query: &Query) -> Result<(), ToolError> {
    if query.terms.len() + query.excluded.len() > MAX_TERMS {
        return Err(ToolError::invalid(
            field,
            format!("at most {MAX_TERMS} words, phrases and exclusions"),
        ));
    }
    let searchable = query
        .terms
        .iter()
        .any(|term| term.text.chars().any(|c| !c.is_whitespace()));
    if query.regex.is_none() && !searchable {
        let wording = if query.excluded.is_empty() {
            "at least one word, \"phrase\" or /regex/ to look for (filters alone select nothing)"
        } else {
            "at least one word to look for besides the exclusions"
        };
        return Err(ToolError::invalid(field, wording));
    }
    let words_found = query.terms.iter().any(|term| !term.parts().is_empty());
    if query.regex.is_none() && !words_found && query.terms.iter().all(|t| t.text.len() < 3) {
        return Err(ToolError::invalid(
            field,
            "at least one letter or digit, or punctuation of 3 or more characters to find in code text",
        ));
    }
    Ok(())
}

/// `name:value` when the word is a filter: a lower-case name, one colon and a
/// value that is not a path or a second colon (`std::vec`, `http://x` stay words).
fn filter_word(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once(':')?;
    let is_name = !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase());
    let is_value = !value.is_empty() && !value.starts_with(':') && !value.starts_with('/');
    (is_name && is_value).then_some((name, value))
}

fn add_filter(
    filters: &mut Filters,
    field: &str,
    name: &str,
    value: &str,
    vocabulary: &Vocabulary,
) -> Result<(), ToolError> {
    for value in value.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        match name {
            "area" => {
                let corpus = vocabulary.corpus(value).ok_or_else(|| {
                    let names: Vec<&str> = vocabulary.corpora.iter().map(|c| c.name).collect();
                    one_of(field, "area", value, &names)
                })?;
                push_new(&mut filters.areas, Corpus::of(corpus));
            }
            "kind" => {
                if !vocabulary.kinds().contains(&value) {
                    return Err(one_of(field, "kind", value, &vocabulary.kinds()));
                }
                push_new(&mut filters.kinds, value.to_string());
            }
            "path" => {
                check_glob(field, value)?;
                push_new(&mut filters.paths, value.to_string());
            }
            "lang" => {
                if !is_language_name(value) {
                    return Err(ToolError::invalid(
                        field,
                        format!(
                            "lang: a language's name in lower case (python, yaml, c++, text, ...), not `{}`",
                            value.chars().take(40).collect::<String>()
                        ),
                    ));
                }
                if !vocabulary.languages.contains(&value) {
                    push_new(&mut filters.unknown_langs, value.to_string());
                }
                push_new(&mut filters.langs, value.to_string());
            }
            "status" => {
                if !vocabulary.statuses.contains(&value) {
                    return Err(one_of(field, "status", value, &vocabulary.statuses));
                }
                push_new(&mut filters.statuses, value.to_string());
            }
            _ => {
                return Err(ToolError::invalid(
                    field,
                    format!(
                        "a known filter, not `{name}:` (filters are {}; put a word with a colon in quotes to look for it)",
                        FILTER_NAMES.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn push_new<T: PartialEq>(list: &mut Vec<T>, value: T) {
    if !list.contains(&value) {
        list.push(value);
    }
}

fn one_of(field: &str, filter: &str, value: &str, allowed: &[&str]) -> ToolError {
    let shown: String = value.chars().take(40).collect();
    ToolError::invalid(
        field,
        format!("{filter}: one of {}, not `{shown}`", allowed.join(", ")),
    )
    .with_details(serde_json::json!({
        "field": field,
        "filter": filter,
        "allowed": allowed,
    }))
}

/// Whether `value` is written as languages are named: lower-case ASCII
/// letters and digits, `+`, `#` and `-` (`c++`, `c#`, `protocol-buffers`).
fn is_language_name(value: &str) -> bool {
    !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+#-".contains(&b))
}

/// What to say of a `lang:` no file can have: the closest names the hub
/// knows, or a few of them.
pub fn unknown_language_note(value: &str, known: &[&str]) -> String {
    let mut closest: Vec<(usize, &str)> = known
        .iter()
        .map(|name| (strsim::osa_distance(value, name), *name))
        .filter(|(distance, name)| *distance <= 2.max(name.len() / 3))
        .collect();
    closest.sort();
    let closest: Vec<&str> = closest.into_iter().take(3).map(|(_, name)| name).collect();
    let hint = if closest.is_empty() {
        format!(
            "languages are named in lower case as `cos index` lists them: {} and {} more",
            known.iter().take(8).copied().collect::<Vec<_>>().join(", "),
            known.len().saturating_sub(8)
        )
    } else {
        format!("did you mean {}?", closest.join(", "))
    };
    format!("lang:{value} is no language the hub knows, so no file is in it ({hint})")
}

/// Refuses a regex given where a glob belongs: it would match no path, and
/// a silent zero is the worst answer a search can give.
fn check_glob(field: &str, glob: &str) -> Result<(), ToolError> {
    let regex_only = ['^', '$', '(', ')', '|', '+', '\\'];
    let dot_star = glob
        .match_indices(".*")
        .any(|(at, _)| at == 0 || !glob[..at].ends_with('*'));
    if glob.contains(regex_only) || dot_star {
        return Err(ToolError::invalid(
            field,
            format!(
                "path: a glob such as src/**/*.rs or *test*, not a regular expression (`{}` looks like one); put a regex in the query as /.../ to match code text",
                glob.chars().take(60).collect::<String>()
            ),
        ));
    }
    globset::Glob::new(glob)
        .map(|_| ())
        .map_err(|error| ToolError::invalid(field, format!("path: a valid glob ({error})")))
}

/// The regex starting at `body` (which begins with `/`): up to the next `/`
/// not escaped by a backslash, followed by a space or the end.
fn regex_at<'a>(field: &str, body: &'a str, at: usize) -> Result<(String, &'a str), ToolError> {
    let inner = &body[1..];
    let mut escaped = false;
    for (offset, c) in inner.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '/' if !escaped => {
                let after = &inner[offset + 1..];
                if after.is_empty() || after.starts_with(char::is_whitespace) {
                    let source = inner[..offset].replace("\\/", "/");
                    if source.is_empty() {
                        return Err(ToolError::invalid(field, "a /regex/ that is not empty"));
                    }
                    return Ok((source, after));
                }
                escaped = false;
            }
            _ => escaped = false,
        }
    }
    Err(ToolError::invalid(
        field,
        format!(
            "a closing / for the regex opened at character {} (write \\/ for a slash inside it)",
            at + 1
        ),
    ))
}

/// Patterns bigger than this compile to too much.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// The regex compiled, or a refusal with its position.
pub fn compile(field: &str, source: &str) -> Result<self::regex_cache::Shared, ToolError> {
    self::regex_cache::regex(&format!("query:{source}"), || {
        regex::RegexBuilder::new(source)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
    })
    .map_err(|error| {
        let wording = match error {
            regex::Error::Syntax(detail) => detail
                .lines()
                .last()
                .unwrap_or("invalid syntax")
                .trim_start_matches("error: ")
                .to_string(),
            regex::Error::CompiledTooBig(_) => "a smaller pattern".to_string(),
            _ => "a valid pattern".to_string(),
        };
        let position = regex_syntax::Parser::new()
            .parse(source)
            .err()
            .and_then(|e| match e {
                regex_syntax::Error::Parse(p) => Some(p.span().start.offset),
                regex_syntax::Error::Translate(t) => Some(t.span().start.offset),
                _ => None,
            });
        let at = position.map_or(String::new(), |p| format!(" at character {}", p + 1));
        ToolError::invalid(field, format!("a valid regular expression{at}: {wording}"))
    })
}

fn check_regex(field: &str, source: &str) -> Result<(), ToolError> {
    compile(field, source).map(|_| ())
}

/// The vocabulary of the hub's own areas, for the area's tests.
#[cfg(test)]
pub fn vocabulary_for_tests() -> &'static Vocabulary {
    static VOCABULARY: std::sync::OnceLock<Vocabulary> = std::sync::OnceLock::new();
    VOCABULARY.get_or_init(|| {
        let searchables: Vec<_> = crate::hub::AREAS.iter().filter_map(|a| a.search).collect();
        searchable::vocabulary(&searchables)
    })
}

/// A query parsed with the hub's own areas' vocabulary, for the area's tests.
#[cfg(test)]
pub fn parsed_for_tests(text: &str) -> Query {
    parse("q", text, &[], vocabulary_for_tests()).expect("a valid test query")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parsed(text: &str) -> Result<Query, String> {
        parse("q", text, &[], vocabulary_for_tests()).map_err(|e| e.to_body("t").message)
    }

    fn term(text: &str) -> Term {
        Term::new(text, false, false)
    }

    /// A piece of a query and whether a plain question may lose it.
    fn piece() -> impl Strategy<Value = (&'static str, bool)> {
        prop_oneof![
            prop::sample::select(vec!["a", "the", "with", "how", "into", "Do"])
                .prop_map(|w| (w, true)),
            prop::sample::select(vec![
                "get_object",
                "QuerySet",
                "parseHTTP",
                "gzip",
                "slug",
                "\"the end\"",
                "+the",
                "+with",
                "auth*",
                "to_be",
                "IS_NULL",
            ])
            .prop_map(|w| (w, false)),
        ]
    }

    proptest! {
        #[test]
        fn leaving_out_common_words_never_drops_an_identifier_a_phrase_or_a_filter(
            pieces in proptest::collection::vec(piece(), 1..8),
        ) {
            let text = pieces.iter().map(|(p, _)| *p).collect::<Vec<_>>().join(" ");
            let with_filter = format!("{text} lang:python");
            let query = parsed(&with_filter).unwrap();
            prop_assert_eq!(&query.filters.langs, &vec!["python".to_string()]);
            let shown = |term: &Term| match (term.phrase, term.prefix, term.required) {
                (true, _, _) => format!("\"{}\"", term.text),
                (_, true, _) => format!("{}*", term.text),
                (_, _, true) => format!("+{}", term.text),
                _ => term.text.clone(),
            };
            let kept: Vec<String> = query.terms.iter().map(shown).collect();
            for (piece, common) in &pieces {
                prop_assert!(
                    kept.contains(&piece.to_string()) || (*common && query.ignored.contains(&piece.to_string())),
                    "{} lost from {:?}: {:?}", piece, text, kept
                );
            }
            prop_assert!(query.ignored.iter().all(|word| words::is_stop_word(word)));
            prop_assert!(!query.terms.is_empty());
        }
    }

    proptest! {
        /// What the `lang` parameter's schema allows is never refused: a
        /// name no language has finds nothing and says so instead.
        #[test]
        fn every_lang_the_schema_allows_is_taken(
            names in proptest::collection::vec("[a-z0-9+#-]{1,60}", 1..5),
            spaces in proptest::collection::vec(" {0,2}", 2),
        ) {
            let separator = format!("{},{}", spaces[0], spaces[1]);
            let lang = names.join(&separator);
            let schema = regex::Regex::new(crate::search::tools::LANGUAGES).unwrap();
            prop_assert!(schema.is_match(&lang), "{}", lang);
            let query = parse("q", "parser", &[("lang", &lang)], vocabulary_for_tests());
            prop_assert!(query.is_ok(), "{}: {:?}", lang, query.err());
            let query = query.unwrap();
            for name in &names {
                prop_assert!(query.filters.langs.contains(name));
                let known = vocabulary_for_tests().languages.contains(&name.as_str());
                prop_assert_eq!(query.filters.unknown_langs.contains(name), !known);
            }
        }
    }

    /// A cursor is bound to a query as shown (`Offsets::new`): what a term
    /// works out from its text must not change that.
    #[test]
    fn a_term_is_shown_compared_and_hashed_by_what_was_written() {
        let term = Term::new("getKey", false, true);
        assert_eq!(
            format!("{term:?}"),
            r#"Term { text: "getKey", phrase: false, prefix: true, required: false }"#
        );
        use std::hash::{BuildHasher, BuildHasherDefault};
        let hasher = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
        assert_eq!(
            hasher.hash_one(&term),
            hasher.hash_one((&term.text, term.phrase, term.prefix, term.required))
        );
        assert_eq!(term, Term::new("getKey", false, true));
        assert_ne!(term, Term::new("getKey", false, false));
    }

    #[test]
    fn words_phrases_prefixes_exclusions_and_filters() {
        let query = parsed(r#"parse "select related" auth* -test area:code lang:python"#).unwrap();
        assert_eq!(query.terms.len(), 3);
        assert_eq!(query.terms[0], term("parse"));
        assert!(query.terms[1].phrase);
        assert_eq!(query.terms[1].text, "select related");
        assert!(query.terms[2].prefix);
        assert_eq!(query.excluded, vec![term("test")]);
        assert_eq!(query.filters.areas, vec![Corpus::CODE]);
        assert_eq!(query.filters.langs, vec!["python"]);
    }

    #[test]
    fn colons_of_code_stay_words() {
        let query = parsed("std::vec http://x a-b").unwrap();
        let texts: Vec<_> = query.terms.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, vec!["std::vec", "http://x", "a-b"]);
    }

    #[test]
    fn regexes_are_read_to_their_closing_slash() {
        let query = parsed(r"/fn \w+\(/ area:code").unwrap();
        assert_eq!(query.regex.as_deref(), Some(r"fn \w+\("));
        let query = parsed(r"/a\/b/").unwrap();
        assert_eq!(query.regex.as_deref(), Some("a/b"));
        assert!(parsed("/abc").unwrap_err().contains("closing /"));
        let bad = parsed("/a(b/").unwrap_err();
        assert!(bad.contains("at character"), "{bad}");
    }

    #[test]
    fn bad_queries_are_refused_naming_what_was_expected() {
        for (text, expected) in [
            ("", "at least one word"),
            ("   ", "at least one word"),
            ("-test", "besides the exclusions"),
            ("!!", "at least one letter or digit"),
            ("area:code", "filters alone"),
            ("\"open", "closing quote"),
            (
                "area:nowhere x",
                "one of symbols, code, tasks, docs, evidence",
            ),
            ("kind:banana x", "one of class"),
            ("lang:Python x", "a language's name in lower case"),
            ("lang:c/c++ x", "not `c/c++`"),
            ("foo:bar", "a known filter"),
            ("path:^src/.*$ x", "not a regular expression"),
            ("path:src/(a|b) x", "not a regular expression"),
        ] {
            let refusal = parsed(text).unwrap_err();
            assert!(refusal.contains(expected), "{text:?}: {refusal}");
            assert!(refusal.starts_with("q: "), "{refusal}");
        }
        let long = "a".repeat(MAX_QUERY_CHARS + 1);
        assert!(parsed(&long).unwrap_err().contains("at most 1000"));
    }

    #[test]
    fn globs_stay_globs() {
        assert!(parsed("x path:src/**/*.rs").is_ok());
        assert!(parsed("x path:*.*").is_ok());
    }

    proptest! {
        #[test]
        fn any_text_parses_or_is_refused_without_panic(text in "\\PC{0,80}") {
            if let Ok(query) = parse("q", &text, &[], vocabulary_for_tests()) {
                prop_assert!(query.regex.is_some() || !query.terms.is_empty());
            }
        }

        #[test]
        fn fts_syntax_in_words_is_plain_text(word in "[a-z]{1,6}[()\\-:*^\"]{0,3}[a-z]{0,6}") {
            let _ = parse("q", &word, &[], vocabulary_for_tests());
        }
    }
}
