//! `cos_search`: one ranked query over every corpus the areas offer (code
//! symbols, code text, documents, tasks, agent evidence).

use rusqlite::Connection;
use serde::Deserialize;
use serde_json::{Map, json};
use std::borrow::Cow;
use utoipa::{IntoParams, ToSchema};

use super::empty::CODE_NOT_INDEXED;
use super::index::features::Holds;
use super::index::records;
use super::memory::item_index;
use super::model::{DocumentPlace, Facets, Opens, SearchAnswer, SearchHit};
use super::modes::{self, Answering, SearchMode};
use super::query::reach::{self, Reach};
use super::query::{self, Corpus, Query};
use super::rank::collect::{self, Sieve};
use super::rank::snippets::{self, Highlighter};
use super::rank::{self, Found, Ranked};
use crate::tools::cursor::Offsets;
use crate::tools::input::in_range;
use crate::tools::schema::comma_list_of;
use crate::tools::searchable;
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchRequest {
    /// The query: words (identifier-aware: `parseHttpRequest` finds
    /// `parse_http_request`; several rank by how many a hit holds),
    /// `"exact phrase"`, `prefix*`, `+required`, `-excluded`, one `/regex/`
    /// over code text, filters `area:`, `kind:`, `path:` (a glob), `lang:`,
    /// `status:`.
    #[schema(min_length = 1, max_length = 1000)]
    #[param(min_length = 1, max_length = 1000)]
    pub q: String,
    #[schema(schema_with = areas)]
    #[param(schema_with = areas)]
    pub area: Option<String>,
    #[schema(schema_with = kinds)]
    #[param(schema_with = kinds)]
    pub kind: Option<String>,
    /// Only hits under these globs (comma-separated), such as `src/**/*.rs`;
    /// a regex belongs in the query as `/.../`.
    #[schema(pattern = r"^[^\^$()|+\\]*$")]
    #[param(pattern = r"^[^\^$()|+\\]*$")]
    pub path: Option<String>,
    #[schema(schema_with = languages)]
    #[param(schema_with = languages)]
    pub lang: Option<String>,
    #[schema(schema_with = statuses)]
    #[param(schema_with = statuses)]
    pub status: Option<String>,
    /// `auto` (default; fuses in semantic with a model), `lexical`, or
    /// `semantic` (needs an embedding model).
    #[param(inline)]
    pub mode: Option<SearchMode>,
    /// 1 to 200, default 20.
    #[schema(minimum = 1, maximum = 200)]
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
    /// A previous answer's `next_cursor`: the hits after it.
    pub cursor: Option<String>,
}

fn areas() -> utoipa::openapi::schema::Object {
    let vocabulary = reach::declared_vocabulary();
    let names: Vec<&str> = vocabulary.corpora.iter().map(|c| c.name).collect();
    comma_list_of(&names, "Only these areas (comma-separated).")
}

fn kinds() -> utoipa::openapi::schema::Object {
    comma_list_of(
        &reach::declared_vocabulary().kinds(),
        "Only hits of these kinds (comma-separated).",
    )
}

/// Languages are hundreds (every file is searched as text), so the schema
/// gives their form and a few examples; the tool checks the name.
fn languages() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .pattern(Some(LANGUAGES))
        .description(Some(
            "Only hits in these languages (comma-separated, lower case: python, c++, ...).",
        ))
        .build()
}

/// Languages' names as filters spell them, separated by commas.
pub(super) const LANGUAGES: &str = "^[a-z0-9+#-]+( *, *[a-z0-9+#-]+)*$";

fn statuses() -> utoipa::openapi::schema::Object {
    comma_list_of(
        &reach::declared_vocabulary().statuses,
        "Only tasks in these statuses (comma-separated).",
    )
}

/// A search tool's spec. Each reads only, as a client sees it: what it writes
/// is the index's own derived copy, brought level with what it follows.
pub(super) const fn spec(
    name: &'static str,
    description: &'static str,
    list_hints: &'static [&'static str],
) -> ToolSpec {
    ToolSpec {
        name,
        module: super::MODULE,
        layer: "search",
        description,
        effect: crate::tools::Effect::READ,
        list_hints,
        agent_budget: None,
        upkeep: false,
    }
}

pub struct Search;

impl Tool for Search {
    type Input = SearchRequest;
    type Output = SearchAnswer;
    const SPEC: ToolSpec = spec(
        "cos_search",
        "One ranked search over code symbols, code text, documents, tasks and agent evidence (the query's forms are under q). Each hit says why it matched and what opens it.",
        &["hits"],
    );

    fn run(context: &ToolContext, input: SearchRequest) -> Result<Answer<SearchAnswer>, ToolError> {
        let mode = input.mode.unwrap_or(SearchMode::Auto);
        let limit = in_range("limit", input.limit, 20, 1, 200)? as usize;
        let vocabulary = reach::vocabulary_of(context);
        let separate: Vec<(&str, &str)> = [
            ("area", &input.area),
            ("kind", &input.kind),
            ("path", &input.path),
            ("lang", &input.lang),
            ("status", &input.status),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.as_deref().map(|v| (name, v)))
        .collect();
        let query = query::parse("q", &input.q, &separate, &vocabulary)?;
        let answering = modes::choose(context, mode, &query)?;
        let regex = match &query.regex {
            Some(source) => Some(query::compile("q", source)?),
            None => None,
        };
        let (reach, mut notes) = Reach::of(context, &query)?;
        let store = &context.hub.store;
        let sieve = Sieve::new(&query, &reach, store.path())?;
        let highlighter = Highlighter::new(&query, regex);
        super::index::catch_up::first_scan(context, &reach.sources)?;
        let mut check_level = true;
        // another caller is still building the index (a first build over a
        // large repository): this answer reads what it has taken in so far
        let mut building = false;
        let collect::Read {
            revision,
            updated_at,
            mut collected,
        } = loop {
            let read = collect::collect(
                context.hub,
                &query,
                highlighter.line_matcher(),
                &sieve,
                check_level,
            )?;
            if let Some(read) = read {
                break read;
            }
            if super::index::catch_up::catch_up_for_query(context, &reach.sources)?.is_none() {
                building = true;
            }
            // what the catch-up left is read as it is: a source that moved
            // again meanwhile is taken in by the next query
            check_level = false;
        };
        let progress = match answering.embedder() {
            Some(embedder) => Some(modes::progress(context, embedder, revision)?),
            None => None,
        };
        // a page of one mode, or of vectors since added to, continues no other
        let offsets = Offsets::new(
            &context.hub.cursors,
            Self::SPEC.name,
            (
                &query,
                &reach.corpora,
                answering.name(),
                progress.as_ref().map(|p| p.embedded),
            ),
            revision,
        );
        let start = offsets.start("cursor", input.cursor.as_deref())?;
        notes.extend(collected.notes.iter().cloned());
        let holds = |corpus: &str| Holds::of(reach.opens(corpus), reach.is_definitions(corpus));
        let shown = start.saturating_add(limit);
        let mut ranked = rank::rank(
            &query,
            std::mem::take(&mut collected.found),
            match answering {
                Answering::Fused(_) => shown.max(modes::DEPTH),
                _ => shown,
            },
            &holds,
        );
        match &answering {
            Answering::Semantic(embedder) => {
                let most = shown.max(modes::DEPTH);
                let meaning = modes::meaning(context, embedder, &query, &sieve, revision, most)?;
                ranked = modes::after_exact_names(ranked, meaning);
            }
            Answering::Fused(embedder) => {
                let meaning =
                    modes::meaning(context, embedder, &query, &sieve, revision, modes::DEPTH)?;
                ranked = modes::fuse(ranked, meaning, &query);
            }
            Answering::Lexical { .. } => {}
        }
        if let Some(progress) = progress.as_ref().filter(|p| !p.complete()) {
            notes.push(format!(
                "the embedding model has embedded {} of {} items so far (meta.semantic): hits by meaning may miss the rest; ask again in a moment",
                progress.embedded, progress.items
            ));
        }
        let facets = facets_of(&ranked, &reach);
        let languages = languages_of(&ranked);
        let total = ranked.len();
        let hits: Vec<SearchHit> = ranked
            .iter()
            .skip(start)
            .take(limit)
            .map(|found| hit_of(found, &highlighter, &reach, &query))
            .collect();
        if !query.ignored.is_empty() {
            notes.push(format!(
                "left out as too common to rank by: {}",
                query.ignored.join(", ")
            ));
        }
        let indexing = building || pending(context);
        if indexing {
            notes.push(
                "an index run is under way (meta.pending): this answer may miss what it adds; ask again in a moment"
                    .to_string(),
            );
        }
        // hits from the code say it is indexed; without any, ask (a run
        // under way says so above, rather than asking for one)
        let code_hits = facets
            .iter()
            .filter(|(corpus, _)| *corpus == Corpus::CODE.name() || reach.is_definitions(corpus))
            .map(|(_, count)| count)
            .sum::<u64>();
        let code_unindexed =
            !indexing && code_hits == 0 && store.view(|c| never_indexed_code(context, c))?;
        if code_unindexed && reach.reads_code() {
            notes.push(CODE_NOT_INDEXED.to_string());
        }
        let did_you_mean = if total == 0 {
            store.view(|c| {
                notes.extend(super::empty::empty_reasons(
                    c,
                    &query,
                    &sieve,
                    &collected,
                    code_unindexed,
                    revision,
                    &context.hub.config.repo_root,
                )?);
                // the names of the revision the query read, each offered
                // only where it finds something through the query's filters
                let names = item_index::names(c, store.path(), revision)?;
                let close = close_names(&names, &query, &reach.name_corpora());
                collect::names_finding(c, &query, &sieve, revision, close, 5)
            })?
        } else {
            Vec::new()
        };
        let more = start + hits.len() < total;
        let mut meta = Map::new();
        meta.insert("mode".into(), json!(answering.name()));
        meta.insert("mode_reason".into(), json!(answering.reason()));
        if let Some(progress) = &progress {
            meta.insert("semantic".into(), json!(progress));
        }
        meta.insert("index_updated_at".into(), json!(updated_at));
        meta.insert("pending".into(), json!(indexing));
        Ok(Answer::new(SearchAnswer {
            next_cursor: offsets.next(start, hits.len(), more),
            hits,
            total: total as u64,
            facets,
            languages,
            capped: collected.capped,
            notes,
            did_you_mean,
        })
        .with_meta(meta)
        .with_page(offsets.page("/hits", "/next_cursor", start)))
    }
}

/// An item's name, or for the unnamed text before a document's first
/// heading, its file's name.
fn title_of(item: &super::index::records::Item) -> String {
    match (&*item.name, item.path.as_deref()) {
        ("", Some(path)) => path.rsplit('/').next().unwrap_or(path).to_string(),
        (name, _) => name.to_string(),
    }
}

/// Search's part of the hub's health: the embedding model, and how far it
/// embedded what the index holds.
pub fn health(context: &ToolContext) -> crate::tools::area::AreaHealth {
    let mut health = crate::tools::area::AreaHealth::default();
    let model = match super::semantic::model(&context.hub.config) {
        Ok(Some(embedder)) => match context
            .hub
            .store
            .view(|c| super::semantic::pass::Progress::of(c, &embedder))
        {
            Ok(progress) => json!({
                "status": if progress.complete() { "ready" } else { "embedding" },
                "model": progress.model,
                "embedded": progress.embedded,
                "items": progress.items,
            }),
            Err(error) => {
                health.problems.push(format!("search: {error}"));
                json!({"status": "unreadable"})
            }
        },
        Ok(None) => json!({
            "status": "off",
            "enable_with": format!("{} or [search] {}", super::semantic::ENVIRONMENT, super::semantic::SETTING),
        }),
        Err(error) => {
            health.problems.push(error.to_string());
            json!({"status": "broken", "error": error.to_string()})
        }
    };
    health.report.insert("embedding_model".into(), model);
    health
}

/// Whether an area search follows has background work under way.
fn pending(context: &ToolContext) -> bool {
    context
        .registry
        .searchables()
        .iter()
        .any(|(area, _)| context.hub.pending.is(area.id))
}

/// Whether every source carrying files (the code) is at revision 0: never indexed.
fn never_indexed_code(context: &ToolContext, c: &Connection) -> Result<bool, ToolError> {
    let mut carrying = context
        .registry
        .searchables()
        .into_iter()
        .map(|(_, offered)| offered)
        .filter(|offered| offered.files)
        .peekable();
    let mut never = carrying.peek().is_some();
    for offered in carrying {
        never &= (offered.revision)(context.hub, c)? == 0;
    }
    Ok(never)
}

/// The hits of each corpus, every corpus of the hub counted (0 when none).
fn facets_of(ranked: &[Ranked], reach: &Reach) -> Facets {
    let mut facets = Facets::new();
    for corpus in reach.all_corpora() {
        facets.insert(corpus.to_string(), 0);
    }
    for found in ranked {
        let corpus = match &found.found {
            Found::Line(_) => Corpus::CODE.name(),
            Found::Item(hit) => &hit.item.corpus,
        };
        match facets.get_mut(corpus) {
            Some(count) => *count += 1,
            None => {
                facets.insert(corpus.to_string(), 1);
            }
        }
    }
    facets
}

/// The hits of each language, only the languages some hit is in.
fn languages_of(ranked: &[Ranked]) -> Facets {
    let mut languages = Facets::new();
    for found in ranked {
        let lang = match &found.found {
            Found::Line(line) => Some(&line.lang),
            Found::Item(found) => found.item.lang.as_ref(),
        };
        if let Some(lang) = lang {
            match languages.get_mut(lang) {
                Some(count) => *count += 1,
                None => languages.insert(lang.to_string(), 1),
            }
        }
    }
    languages
}

fn hit_of(ranked: &Ranked, highlighter: &Highlighter, reach: &Reach, query: &Query) -> SearchHit {
    let why = Cow::Borrowed(ranked.rule.wording());
    // a line holds every word unless it was asked for some; an item those its bits say
    let every = matches!(ranked.found, Found::Line(_)) && !query::plan::loosens_lines(query);
    let words: Vec<String> = query
        .terms
        .iter()
        .enumerate()
        .filter(|(at, _)| every || (*at < 32 && ranked.terms & (1 << at) != 0))
        .map(|(_, term)| term.text.clone())
        .collect();
    match &ranked.found {
        Found::Line(line) => {
            let text = line.text.as_str();
            let (snippet, highlights) = snippets::snippet(text, &highlighter.line_ranges(text));
            SearchHit {
                area: Corpus::CODE.name().into(),
                kind: searchable::CODE.kinds[0].into(),
                title: line.path.to_string(),
                path: Some(line.path.to_string()),
                line: Some(line.line),
                snippet,
                highlights,
                matched: vec![Cow::Borrowed("text")],
                words,
                why,
                opens: Opens {
                    location: Some(format!("{}:{}", line.path, line.line)),
                    ..Opens::default()
                },
            }
        }
        Found::Item(found) => {
            let item = &found.item;
            let mut matched = Vec::new();
            if highlighter.matches(&item.name) {
                matched.push(Cow::Borrowed("name"));
            }
            if item.path.as_deref().is_some_and(|p| highlighter.matches(p)) {
                matched.push("path".into());
            }
            let opens = reach.opens(&item.corpus);
            let (line, text) = match reach.is_definitions(&item.corpus) {
                true => (item.line, item.body.to_string()),
                false => match highlighter.first_line(&item.body) {
                    Some((index, text)) => {
                        matched.push("body".into());
                        let line = item.line.map(|l| l + index as u32);
                        (line, text.to_string())
                    }
                    None => (item.line, item.name.to_string()),
                },
            };
            if opens == searchable::Opens::Task && highlighter.matches(&item.target) {
                matched.push("id".into());
            }
            if matched.is_empty() {
                matched.push("body".into());
            }
            let ranges = highlighter.ranges(&text);
            let (snippet, highlights) = snippets::snippet(&text, &ranges);
            SearchHit {
                area: reach
                    .name_of(&item.corpus)
                    .map_or_else(|| Cow::Owned(item.corpus.to_string()), Cow::Borrowed),
                kind: Cow::Owned(item.kind.to_string()),
                title: title_of(item),
                path: item.path.as_deref().map(str::to_string),
                line,
                snippet,
                highlights,
                matched,
                words,
                why,
                opens: opens_of(item, line, opens),
            }
        }
    }
}

fn opens_of(item: &records::Item, line: Option<u32>, opens: searchable::Opens) -> Opens {
    let location = match (&item.path, line) {
        (Some(path), Some(line)) => Some(format!("{path}:{line}")),
        _ => None,
    };
    match opens {
        searchable::Opens::Node => Opens {
            uid: Some(item.target.to_string()),
            location,
            ..Opens::default()
        },
        searchable::Opens::Task => Opens {
            task_id: Some(item.target.to_string()),
            ..Opens::default()
        },
        searchable::Opens::Session => {
            let (task, session) = item.target.split_once('/').unwrap_or(("", &item.target));
            Opens {
                task_id: Some(task.to_string()).filter(|task| !task.is_empty()),
                session_id: Some(session.to_string()),
                ..Opens::default()
            }
        }
        searchable::Opens::Location => Opens {
            location,
            ..Opens::default()
        },
        searchable::Opens::Section => {
            let (mount, rest) = item.target.split_once('/').unwrap_or(("", &item.target));
            let (path, section) = rest.rsplit_once('#').unwrap_or((rest, ""));
            Opens {
                document: Some(DocumentPlace {
                    mount: mount.into(),
                    path: path.into(),
                    section: section.into(),
                }),
                ..Opens::default()
            }
        }
    }
}

/// Names close to the query's one word, when it found nothing: by edit
/// distance (a swap of neighbours counting once), names in the corpora it
/// searched, of 3 characters or more (what a part-of-word search needs),
/// each once whatever its case.
fn close_names(names: &item_index::Names, query: &Query, corpora: &[&str]) -> Vec<String> {
    const SHORTEST: usize = 3;
    let [only] = query.terms.as_slice() else {
        return Vec::new();
    };
    let word = only.text.to_lowercase();
    let length = word.chars().count();
    if length < SHORTEST {
        return Vec::new();
    }
    let most = if length < 6 { 1 } else { 2 };
    let mut close: Vec<(usize, &str, &str)> = names
        .of_length(
            length.saturating_sub(most).max(SHORTEST),
            length + most,
            corpora,
        )
        .filter_map(|(lower, name)| {
            // a swap of two neighbours (reciept) is one slip, not two
            let distance = strsim::osa_distance(lower, &word);
            (distance > 0 && distance <= most).then_some((distance, lower, name))
        })
        .collect();
    close.sort();
    close.dedup_by(|a, b| a.1 == b.1);
    close
        .into_iter()
        .map(|(_, _, name)| name.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::tools::{Source, Unwatched};
    use serde_json::json;

    #[test]
    fn an_answer_given_while_an_index_runs_says_it_may_be_incomplete() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join("app.py"), "def main():\n    pass\n").unwrap();
        let hub = crate::hub::on_repo_for_tests(repo.path());
        let ask = || {
            let answer = hub
                .call_named_here("cos_search", json!({"q": "main"}), Source::Cli, &Unwatched)
                .unwrap();
            (answer.data, answer.meta)
        };
        let (before, meta) = ask();
        assert_eq!(meta["pending"], false);
        assert!(
            before["notes"].to_string().contains("not indexed yet"),
            "{before}"
        );

        // as the watcher marks its runs
        hub.state().pending.set(crate::graph::PENDING, true);
        let (during, meta) = ask();
        assert_eq!(meta["pending"], true);
        let notes = during["notes"].to_string();
        assert!(notes.contains("an index run is under way"), "{notes}");
        assert!(!notes.contains("not indexed yet"), "{notes}");
    }
}
