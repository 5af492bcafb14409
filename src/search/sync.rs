//! Keeping the index level with what it indexes. Each source (the graph's
//! files and symbols, the board's tasks, the documents' sections) has a
//! revision; a query first catches up with every source whose revision moved,
//! re-indexing only the units (a file, a task, a document) whose fingerprint
//! changed. The sources never call search: it follows them.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use super::query::{Corpus, KIND_OF_SECTION, KIND_OF_TASK, SYMBOL_KINDS};
use super::records::{self, Item};
use super::words::{all_parts, index_words};
use crate::store::StoreError;
use crate::tools::{ToolContext, ToolError};
use rusqlite::Connection;

/// A file's text is kept for substring and regex search up to this size.
pub const MAX_TEXT_BYTES: u64 = 2 << 20;
/// Units written per transaction, so a cold index never holds the writer long.
const BATCH: usize = 400;

/// One unit's new content: its items (with their words) and, for a file, its text.
struct Unit {
    name: String,
    fingerprint: String,
    items: Vec<(Item, [String; 3])>,
    file: Option<FileUnit>,
}

/// A file's path, language, and its text with its trigram tokens when kept.
struct FileUnit {
    path: String,
    lang: String,
    text: Option<(String, String)>,
}

/// What a catch-up took in: the units (files, tasks, documents) re-indexed
/// or removed, by source, for each source that had moved.
pub type CaughtUp = Vec<(&'static str, usize)>;

/// Catches the index up with every source. One caller of the process at a
/// time does the work; the others wait and find it done.
pub fn catch_up(context: &ToolContext, corpora: &[Corpus]) -> Result<CaughtUp, ToolError> {
    // most queries find every source level: they look without waiting for
    // a catch-up another query may be running
    if level_with_every_source(context, corpora)? {
        return Ok(Vec::new());
    }
    static WORKING: Mutex<()> = Mutex::new(());
    let _working = WORKING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let recorded = context.hub.store.view(records::Sources::read)?;
    let mut caught_up = CaughtUp::new();
    // a source's catch-up, timed and logged; `None` when it was level
    let mut take_in = |source: &'static str,
                       run: &dyn Fn() -> Result<Option<usize>, ToolError>|
     -> Result<(), ToolError> {
        let started = std::time::Instant::now();
        if let Some(units) = run()? {
            tracing::info!(
                source,
                units,
                ms = started.elapsed().as_millis() as u64,
                "the search index caught up"
            );
            caught_up.push((source, units));
        }
        Ok(())
    };
    if corpora
        .iter()
        .any(|c| matches!(c, Corpus::Symbols | Corpus::Code))
    {
        take_in(FILES_SOURCE, &|| catch_up_files(context, &recorded))?;
    }
    if corpora.contains(&Corpus::Tasks) {
        take_in("board", &|| catch_up_tasks(context, &recorded))?;
    }
    if corpora.contains(&Corpus::Docs) {
        take_in("docs", &|| catch_up_documents(context, &recorded))?;
    }
    // none when no source was behind: nothing was written
    if !caught_up.is_empty() {
        let units: usize = caught_up.iter().map(|(_, units)| units).sum();
        if units > BATCH {
            // each batch left a segment of its own, and a term's lookup reads
            // every segment: one merged index answers a query ~25 % sooner
            merge_segments(&context.hub.store)?;
        }
        // a cold index writes much of the database: let the log restart small
        context.hub.store.checkpoint()?;
    }
    Ok(caught_up)
}

/// Pages of the trigram index merged in one transaction: merging the whole
/// index of a large repository at once (Django's, after a cold index) held
/// the write lock for seconds, as long as a writer waits for it.
const MERGE_PAGES_AT_ONCE: i64 = 500;
/// Transactions of merging at most, whatever happens meanwhile.
const MOST_MERGES: usize = 100_000;

/// Merges the trigram index into one segment, a few pages a transaction,
/// then lets FTS5 merge segments as writes come in again.
fn merge_segments(store: &crate::store::Store) -> Result<(), StoreError> {
    for _ in 0..MOST_MERGES {
        if !store.write(|c| records::merge_some_segments(c, MERGE_PAGES_AT_ONCE))? {
            break;
        }
    }
    store.write(records::merge_as_writes_come)
}

/// The revision of each source the index caught up with, read once for a
/// catch-up (only a catch-up moves them, one at a time).
type Recorded = records::Sources;

/// Whether the index has caught up with every source `corpora` come from:
/// every revision read in one visit to the pool.
fn level_with_every_source(context: &ToolContext, corpora: &[Corpus]) -> Result<bool, ToolError> {
    first_scan(context, corpora)?;
    let level = context
        .hub
        .store
        .view(|c| level_in(c, corpora, &records::Sources::read(c)?))?;
    Ok(level)
}

/// What a query does before it looks at the index: the documents' mounts
/// are scanned, once per process, for changes made while no hub ran.
pub fn first_scan(context: &ToolContext, corpora: &[Corpus]) -> Result<(), ToolError> {
    if corpora.contains(&Corpus::Docs) {
        crate::docs::feed::scan_once(context)?;
    }
    Ok(())
}

/// Whether `recorded`, read on `c`, is level with every source `corpora`
/// come from, as `c` sees them: a query asks in the transaction it reads in.
pub fn level_in(
    c: &Connection,
    corpora: &[Corpus],
    recorded: &Recorded,
) -> Result<bool, StoreError> {
    let wants = |corpus: Corpus| corpora.contains(&corpus);
    if (wants(Corpus::Symbols) || wants(Corpus::Code))
        && behind(recorded, FILES_SOURCE, crate::graph::revision_in(c)?)
    {
        return Ok(false);
    }
    if wants(Corpus::Tasks) && behind(recorded, "board", crate::board::revision_in(c)?) {
        return Ok(false);
    }
    Ok(!(wants(Corpus::Docs) && behind(recorded, "docs", crate::docs::revision_in(c)?)))
}

fn files_revision(context: &ToolContext) -> Result<i64, ToolError> {
    Ok(crate::graph::revision(&context.hub.store)?)
}

fn board_revision(context: &ToolContext) -> Result<i64, ToolError> {
    Ok(crate::board::revision(&context.hub.store)?)
}

/// The documents' revision, once the mounts were scanned for changes made
/// while the hub was not running.
fn docs_revision(context: &ToolContext) -> Result<i64, ToolError> {
    crate::docs::feed::scan_once(context)?;
    Ok(crate::docs::revision(&context.hub.store)?)
}

/// Whether the index is behind `source` at `revision`.
fn behind(recorded: &Recorded, source: &str, revision: i64) -> bool {
    recorded.revision_of(source) != Some(revision)
}

/// The source the indexed files (and their symbols) come from.
pub(super) const FILES_SOURCE: &str = "graph";

/// Each catch-up says how many units it rewrote, or None when it was not behind.
fn catch_up_files(context: &ToolContext, recorded: &Recorded) -> Result<Option<usize>, ToolError> {
    let store = &context.hub.store;
    let revision = files_revision(context)?;
    if !behind(recorded, FILES_SOURCE, revision) {
        return Ok(None);
    }
    let files = store.view(crate::graph::files_with_hashes)?;
    let known = store.view(|c| records::units(c, "file:"))?;
    let mut changed = Vec::new();
    let mut present = HashSet::new();
    for (path, hash, lang) in files {
        let unit = format!("file:{path}");
        if known.get(&unit) != Some(&hash) {
            changed.push((unit.clone(), path, hash, lang));
        }
        present.insert(unit);
    }
    let removed = gone(&known, &present, |unit| unit.strip_prefix("file:"));
    if changed.is_empty() {
        apply(context, FILES_SOURCE, revision, &removed, Vec::new(), true)?;
        return Ok(Some(removed.len()));
    }
    let batches = changed.len().div_ceil(BATCH);
    if batches > 1 {
        // merged when the catch-up ends (see `catch_up`)
        store.write(records::defer_merging)?;
    }
    let changed = &changed;
    let written = std::thread::scope(|scope| {
        // the next batch is read, split into words and trigrams (on every
        // core) while this thread writes the one before: writing is one
        // transaction at a time, and took half of a cold index's time
        let (send, prepared) = std::sync::mpsc::sync_channel(1);
        scope.spawn(move || {
            use rayon::prelude::*;
            for batch in changed.chunks(BATCH) {
                let units = batch
                    .par_iter()
                    .map(|(unit, path, hash, lang)| file_unit(context.hub, unit, path, hash, lang))
                    .collect::<Result<Vec<Unit>, ToolError>>();
                let failed = units.is_err();
                // the writer stopped (it failed): nothing more is wanted
                if send.send(units).is_err() || failed {
                    break;
                }
            }
        });
        for (at, units) in prepared.into_iter().enumerate() {
            let removing = if at == 0 { removed.as_slice() } else { &[] };
            apply(
                context,
                FILES_SOURCE,
                revision,
                removing,
                units?,
                at + 1 == batches,
            )?;
        }
        Ok::<(), ToolError>(())
    });
    if let Err(error) = &written
        && batches > 1
    {
        // FTS5 merges as writes come in again (after a crash here, the next
        // large catch-up sets it back; until then FTS5's own ceiling of 16
        // segments a level holds)
        if let Err(merging) = merge_segments(store) {
            tracing::warn!(%merging, %error, "the search index could not merge its segments after a failed catch-up");
        }
    }
    written?;
    Ok(Some(changed.len() + removed.len()))
}

/// Units of `known` no longer present, with the file each stands for.
fn gone(
    known: &HashMap<String, String>,
    present: &HashSet<String>,
    file_of: impl Fn(&str) -> Option<&str>,
) -> Vec<(String, Option<String>)> {
    let mut removed: Vec<(String, Option<String>)> = known
        .keys()
        .filter(|unit| !present.contains(*unit))
        .map(|unit| (unit.clone(), file_of(unit).map(str::to_string)))
        .collect();
    removed.sort();
    removed
}

fn file_unit(
    hub: &crate::tools::HubState,
    unit: &str,
    path: &str,
    hash: &str,
    lang: &str,
) -> Result<Unit, ToolError> {
    let nodes = hub.store.view(|c| crate::graph::nodes_in_file(c, path))?;
    // Markdown is searched as documents, by section, not line by line
    let text = if lang == "markdown" {
        None
    } else {
        read_text(&hub.config.repo_root.join(path))
    };
    let lines: Vec<&str> = text
        .as_deref()
        .map_or_else(Vec::new, |t| t.lines().collect());
    let items = nodes
        .into_iter()
        .filter(|node| SYMBOL_KINDS.contains(&node.kind.as_str()))
        .map(|node| {
            let qualified = node
                .uid
                .rsplit_once("::")
                .map_or(node.label.as_str(), |(_, q)| q);
            let words = [
                index_words(&node.label),
                index_words(path),
                index_words(qualified),
            ];
            // the definition's line is the hit's snippet: kept here, a query
            // never reads the file's text to show it
            let line_text = node
                .line
                .and_then(|line| lines.get(line.saturating_sub(1) as usize))
                .map(|line| clipped(line))
                .unwrap_or_else(|| qualified.to_string());
            let item = Item {
                corpus: Corpus::Symbols.name().into(),
                kind: node.kind.into(),
                name_parts: all_parts(&node.label).join(" ").into(),
                name: node.label.into(),
                target: node.uid.into(),
                path: Some(path.into()),
                line: node.line,
                lang: Some(lang.into()),
                status: None,
                body: line_text.into(),
                standing: Default::default(),
            };
            (item, words)
        })
        .collect();
    Ok(Unit {
        name: unit.to_string(),
        fingerprint: hash.to_string(),
        items,
        file: Some(FileUnit {
            path: path.to_string(),
            lang: lang.to_string(),
            text: text.map(|text| {
                let grams = super::grams::tokens(&text);
                (text, grams)
            }),
        }),
    })
}

/// A line as a snippet may show it: at most a few snippets wide.
fn clipped(line: &str) -> String {
    let end = line
        .char_indices()
        .nth(4 * super::snippets::SNIPPET_CHARS)
        .map_or(line.len(), |(at, _)| at);
    line[..end].trim_end().to_string()
}

/// A file's text when it is UTF-8 and small enough to keep.
fn read_text(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_TEXT_BYTES + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_TEXT_BYTES || bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

fn catch_up_tasks(context: &ToolContext, recorded: &Recorded) -> Result<Option<usize>, ToolError> {
    let store = &context.hub.store;
    let revision = board_revision(context)?;
    if !behind(recorded, "board", revision) {
        return Ok(None);
    }
    let versions = store.view(crate::board::task_versions)?;
    let known = store.view(|c| records::units(c, "task:"))?;
    let mut present = HashSet::new();
    let mut units = Vec::new();
    for (seq, version) in versions {
        let unit = format!("task:{seq}");
        let fingerprint = version.to_string();
        if known.get(&unit) != Some(&fingerprint)
            && let Some(task) = store.view(|c| crate::board::load_task(c, seq))?
        {
            let body = format!("{}\n{}", task.description, task.labels.join(" "));
            let words = [
                format!("{} {}", index_words(&task.title), index_words(&task.id)),
                String::new(),
                index_words(&body),
            ];
            let item = Item {
                corpus: Corpus::Tasks.name().into(),
                kind: KIND_OF_TASK.into(),
                name_parts: all_parts(&task.title).join(" ").into(),
                name: task.title.into(),
                target: task.id.into(),
                path: None,
                line: None,
                lang: None,
                status: Some(task.status.as_str().into()),
                body: body.into(),
                standing: Default::default(),
            };
            units.push(Unit {
                name: unit.clone(),
                fingerprint,
                items: vec![(item, words)],
                file: None,
            });
        }
        present.insert(unit);
    }
    let removed = gone(&known, &present, |_| None);
    let rewritten = units.len() + removed.len();
    apply(context, "board", revision, &removed, units, true)?;
    Ok(Some(rewritten))
}

fn catch_up_documents(
    context: &ToolContext,
    recorded: &Recorded,
) -> Result<Option<usize>, ToolError> {
    let store = &context.hub.store;
    // read before the documents: a change after it moves the revision on,
    // and the next query catches up with it
    let revision = docs_revision(context)?;
    if !behind(recorded, "docs", revision) {
        return Ok(None);
    }
    let mounts = crate::docs::feed::mounts(context)?;
    let documents = crate::docs::feed::live_documents(context, &mounts)?;
    let known = store.view(|c| records::units(c, "doc:"))?;
    let mut present = HashSet::new();
    let mut units = Vec::new();
    for document in documents {
        let unit = format!("doc:{}:{}", document.mount, document.path);
        if known.get(&unit) != Some(&document.hash) {
            let text = crate::docs::feed::text_of(context, &document.hash)?.unwrap_or_default();
            units.push(Unit {
                name: unit.clone(),
                fingerprint: document.hash.clone(),
                items: section_items(&document, &text),
                file: None,
            });
        }
        present.insert(unit);
    }
    let removed = gone(&known, &present, |_| None);
    let rewritten = units.len() + removed.len();
    apply(context, "docs", revision, &removed, units, true)?;
    Ok(Some(rewritten))
}

/// A document's sections as items: each heading with its text up to the next
/// heading; a document without headings is one item under its title. The
/// text before the first heading (front matter, say) is an item without a
/// name: the title is its first heading's, and a query for the title's
/// words finds that heading once rather than twice.
fn section_items(
    document: &crate::docs::feed::LiveDocument,
    text: &str,
) -> Vec<(Item, [String; 3])> {
    let outline = crate::docs::feed::outline(text);
    let mut items = Vec::new();
    let first_start = outline.first().map_or(text.len(), |s| s.start);
    // bodies keep their first lines (a section's starts with its heading), so
    // line i of a body is line `line + i` of the document
    let preamble = text[..first_start].trim_end();
    if outline.is_empty() {
        items.push(section_item(document, &document.title, "", 1, preamble));
    } else if !preamble.trim_start().is_empty() {
        items.push(section_item(document, "", "", 1, preamble));
    }
    for (at, section) in outline.iter().enumerate() {
        let end = outline.get(at + 1).map_or(text.len(), |next| next.start);
        let body = text
            .get(section.start.min(end)..end)
            .unwrap_or_default()
            .trim_end();
        items.push(section_item(
            document,
            &section.path,
            &section.anchor,
            section.line,
            body,
        ));
    }
    items
}

fn section_item(
    document: &crate::docs::feed::LiveDocument,
    heading_path: &str,
    anchor: &str,
    line: usize,
    body: &str,
) -> (Item, [String; 3]) {
    let name = heading_path
        .rsplit_once('/')
        .map_or(heading_path, |(_, last)| last)
        .to_string();
    let words = [
        index_words(heading_path),
        index_words(&document.path),
        index_words(body),
    ];
    let item = Item {
        corpus: Corpus::Docs.name().into(),
        kind: KIND_OF_SECTION.into(),
        name_parts: all_parts(&name).join(" ").into(),
        name: name.into(),
        target: format!("{}/{}#{}", document.mount, document.path, anchor).into(),
        path: Some(document.path.as_str().into()),
        line: u32::try_from(line).ok(),
        lang: Some("markdown".into()),
        status: None,
        body: body.into(),
        standing: Default::default(),
    };
    (item, words)
}

/// Writes one batch: removals, then each unit replaced whole; the source's
/// revision is recorded with the last batch.
fn apply(
    context: &ToolContext,
    source: &str,
    revision: i64,
    removed: &[(String, Option<String>)],
    units: Vec<Unit>,
    last: bool,
) -> Result<(), ToolError> {
    let at = crate::tools::now();
    context.hub.store.write(|c| {
        // Rows first, trigram rows last and in rowid order: FTS5 writes its
        // pending terms out at every statement savepoint and at every rowid
        // that goes backwards, and a run of its own inserts needs neither.
        for (unit, file) in removed {
            records::remove_unit(c, unit, file.as_deref())?;
        }
        let mut grams = Vec::new();
        for unit in &units {
            let file = unit.file.as_ref().map(|file| file.path.as_str());
            records::remove_unit(c, &unit.name, file)?;
            for (item, item_words) in &unit.items {
                records::add_item(c, &unit.name, item, item_words)?;
            }
            if let Some(FileUnit {
                path,
                lang,
                text: Some((text, file_grams)),
            }) = &unit.file
            {
                grams.push((records::add_file(c, path, lang, text)?, file_grams));
            }
            records::set_unit(c, &unit.name, &unit.fingerprint)?;
        }
        for (id, file_grams) in grams {
            records::add_grams(c, id, file_grams)?;
        }
        if last {
            records::set_source_revision(c, source, revision, &at)?;
        }
        records::count_write(c, source, &at)?;
        Ok::<(), ToolError>(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{Hub, HubConfig, Source, Unwatched};
    use serde_json::json;

    /// The one number `query` answers.
    fn number(hub: &Hub, query: &str) -> i64 {
        hub.state()
            .store
            .view(|c| {
                c.query_row(query, [], |row| row.get(0))
                    .map_err(|error| crate::store::StoreError::on(c, error))
            })
            .unwrap()
    }

    /// The code-text lines of `query`'s answer, as `path: snippet`.
    fn code_lines(hub: &Hub, query: &str) -> Vec<String> {
        let answer = hub
            .call_named_here(
                "cos_search",
                json!({"q": query, "area": "code"}),
                Source::Cli,
                &Unwatched,
            )
            .unwrap();
        answer.data["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| format!("{}: {}", hit["path"], hit["snippet"]))
            .collect()
    }

    fn hit_places(hub: &Hub, query: &str) -> Vec<String> {
        let answer = hub
            .call_named_here("cos_search", json!({"q": query}), Source::Cli, &Unwatched)
            .unwrap();
        answer.data["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| format!("{} {}:{}", hit["area"], hit["path"], hit["line"]))
            .collect()
    }

    #[test]
    fn a_database_of_the_first_search_schema_is_indexed_again_and_searched() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(
            repo.path().join("a.py"),
            "def needle_here():\n    return 1\n",
        )
        .unwrap();
        let config = HubConfig::for_repo(repo.path(), None);
        let expected = [
            r#""symbols" "a.py":1"#.to_string(),
            r#""code" "a.py":1"#.to_string(),
        ];
        {
            let hub = Hub::open(config.clone(), crate::hub::default_registry()).unwrap();
            hub.call_named_here("cos_graph_index", json!({}), Source::Cli, &Unwatched)
                .unwrap();
            assert_eq!(hit_places(&hub, "needle_here"), expected);
            // items and texts in the tables of the first version of the
            // schema (empty here), the units and sources as they were
            let tables = [
                "search_items",
                "search_words",
                "search_files",
                "search_trigrams",
            ];
            let created: Vec<&str> = crate::search::schema::MIGRATIONS[0]
                .sql
                .split_inclusive(';')
                .filter(|statement| tables.iter().any(|table| statement.contains(table)))
                .collect();
            let first = format!(
                "DROP TABLE search_items; DROP TABLE search_files; DROP TABLE search_trigrams; {}
                 UPDATE schema_versions SET version = 1 WHERE area = 'search';",
                created.concat()
            );
            hub.state()
                .store
                .write(|c| {
                    c.execute_batch(&first)
                        .map_err(|error| crate::store::StoreError::on(c, error))
                })
                .unwrap();
        }
        let hub = Hub::open(config, crate::hub::default_registry()).unwrap();
        assert_eq!(
            number(
                &hub,
                "SELECT count(*) FROM sqlite_master WHERE name = 'search_words'"
            ),
            0
        );
        assert_eq!(hit_places(&hub, "needle_here"), expected);
    }

    #[test]
    fn sections_indexed_before_the_third_schema_are_built_anew() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("docs")).unwrap();
        std::fs::write(
            repo.path().join("docs/retries.md"),
            "---\ntitle: Retry budget\n---\n# Retry budget\nHow many.\n",
        )
        .unwrap();
        let config = HubConfig::for_repo(repo.path(), None);
        let unnamed = "SELECT count(*) FROM search_items WHERE corpus = 'docs' AND name = ''";
        {
            let hub = Hub::open(config.clone(), crate::hub::default_registry()).unwrap();
            hit_places(&hub, "retry");
            assert_eq!(number(&hub, unnamed), 1);
            // the front matter named by the title, as the second schema's
            // index built it
            hub.state()
                .store
                .write(|c| {
                    c.execute_batch(
                        "UPDATE search_items SET name = 'Retry budget', name_parts = 'retry budget'
                             WHERE corpus = 'docs' AND name = '';
                         UPDATE schema_versions SET version = 2 WHERE area = 'search';",
                    )
                    .map_err(|error| crate::store::StoreError::on(c, error))
                })
                .unwrap();
            assert_eq!(number(&hub, unnamed), 0);
        }
        let hub = Hub::open(config, crate::hub::default_registry()).unwrap();
        hit_places(&hub, "retry");
        assert_eq!(number(&hub, unnamed), 1);
    }

    #[test]
    fn a_query_between_the_batches_of_a_catch_up_reads_the_files_as_they_are_then() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(repo.path().join("a.py"), "needle_before = 1\n").unwrap();
        let hub = crate::hub::on_repo_for_tests(repo.path());
        hub.call_named_here("cos_graph_index", json!({}), Source::Cli, &Unwatched)
            .unwrap();
        // read once: the file's text and trigrams are kept in memory
        assert_eq!(code_lines(&hub, "needle_before").len(), 1);

        // a batch of a catch-up that is not its last rewrites the file
        // without recording the graph's revision, as a catch-up of many
        // batches does between them
        std::fs::write(repo.path().join("a.py"), "needle_after = 2\n").unwrap();
        let context = ToolContext::new(
            hub.state(),
            Source::Cli,
            hub.registry(),
            &Unwatched,
            crate::envelope::Budget::None,
        );
        let revision = crate::graph::revision(&hub.state().store).unwrap();
        let unit = file_unit(hub.state(), "file:a.py", "a.py", "rewritten", "python").unwrap();
        apply(&context, FILES_SOURCE, revision, &[], vec![unit], false).unwrap();

        assert_eq!(
            code_lines(&hub, "needle_after"),
            vec![r#""a.py": "needle_after = 2""#.to_string()]
        );
        assert!(code_lines(&hub, "needle_before").is_empty());
    }

    #[test]
    fn a_catch_up_of_many_batches_leaves_the_trigram_index_in_one_segment() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join("pkg")).unwrap();
        for n in 0..(2 * BATCH + 10) {
            std::fs::write(
                repo.path().join(format!("pkg/module_{n}.py")),
                format!("def handler_{n}(request):\n    return request.value_{n}\n"),
            )
            .unwrap();
        }
        let hub = crate::hub::on_repo_for_tests(repo.path());
        let call = |tool: &str, input: serde_json::Value| {
            hub.call_named_here(tool, input, Source::Cli, &Unwatched)
                .unwrap()
        };
        call("cos_graph_index", json!({}));
        let answer = call("cos_search", json!({"q": "handler_417"}));
        let answer = answer.data.to_string();
        assert!(answer.contains("pkg/module_417.py"), "{answer}");
        let segments = number(
            &hub,
            "SELECT count(DISTINCT segid) FROM search_trigrams_idx",
        );
        assert_eq!(segments, 1);
        let automerge = number(
            &hub,
            "SELECT v FROM search_trigrams_config WHERE k = 'automerge'",
        );
        assert_eq!(automerge, 4, "FTS5 merges as writes come in again");
    }
}
