//! `cos index` and the code's refresh before a shell's search: an index run
//! through the tool runtime, its progress on a terminal, and its summary;
//! then the search index brought level with it, on this thread with no
//! time limit (a query may take 30 s at most, and on a repository as large
//! as the Linux kernel the search index's first build takes longer).

use super::*;

/// Draws an index run's progress on a terminal.
pub(super) struct Bar(indicatif::ProgressBar);

impl crate::tools::Progress for Bar {
    fn total(&self, total: u64) {
        self.0.set_length(total);
    }

    fn advance(&self) {
        self.0.inc(1);
    }
}

/// `cos index`: the index tool through the runtime, like every other caller,
/// with a progress bar when stderr is a terminal.
pub(super) fn index(hub: Hub) -> i32 {
    match index_with_progress(&hub) {
        Ok(summary) => print_index_summary(&summary),
        Err(error) => {
            eprintln!("cos: indexing failed: {}", error.message);
            return 1;
        }
    }
    let started = std::time::Instant::now();
    match level_search(&hub) {
        Ok(Some(report)) => {
            let taken: Vec<String> = report
                .caught_up
                .iter()
                .filter(|(_, units)| **units > 0)
                .map(|(source, units)| format!("{source} {units}"))
                .collect();
            println!(
                "search index: {} in {} ms",
                if taken.is_empty() {
                    "level already".to_string()
                } else {
                    format!("took in {}", taken.join(", "))
                },
                started.elapsed().as_millis()
            );
            0
        }
        Ok(None) => 0,
        Err(error) => {
            eprintln!(
                "cos: the search index could not be brought level: {}",
                error.message
            );
            1
        }
    }
}

/// Brings the search index level with every area it follows (and embeds
/// what is new, with a model set), on this thread with no time limit;
/// `None` with the search module off.
pub(super) fn level_search(
    hub: &Hub,
) -> Result<Option<crate::search::indexer::SearchIndexReport>, crate::envelope::ErrorBody> {
    match hub.call_here::<crate::search::indexer::SearchIndex>(
        Default::default(),
        Source::Cli,
        &crate::tools::Unwatched,
    ) {
        Ok(answer) => Ok(Some(answer.data)),
        Err(error) if error.code == crate::envelope::Code::E_MODULE_DISABLED => Ok(None),
        Err(error) => Err(error),
    }
}

/// Brings the graph up to date (only new and changed files are parsed),
/// with a progress bar on stderr when it is a terminal.
pub(super) fn index_with_progress(
    hub: &Hub,
) -> Result<crate::graph::index::IndexSummary, crate::envelope::ErrorBody> {
    use std::io::IsTerminal;
    let bar = if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(0)
    } else {
        indicatif::ProgressBar::hidden()
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} {bar:40} {pos}/{len} files {elapsed_precise}",
    ) {
        bar.set_style(style);
    }
    let bar = Bar(bar);
    let result = hub.call_here::<crate::graph::tools::GraphIndex>(
        crate::graph::tools::IndexInput::default(),
        Source::Cli,
        &bar,
    );
    bar.0.finish_and_clear();
    result.map(|answer| answer.data)
}

/// Before a one-shot command reads the code: a shell has no watcher, so the
/// graph is brought up to date first, as `cos serve` keeps it. Says on
/// stderr what it parsed; with the graph module off it does nothing.
pub(super) fn refresh_code(hub: &Hub) {
    match index_with_progress(hub) {
        Ok(summary) if summary.parsed + summary.removed > 0 => eprintln!(
            "cos: indexed the code first ({} parsed, {} removed, {} ms)",
            counted(summary.parsed, "new or changed file"),
            summary.removed,
            summary.milliseconds
        ),
        Ok(_) => {}
        Err(error) if error.code == crate::envelope::Code::E_MODULE_DISABLED => {}
        Err(error) => eprintln!(
            "cos: the code could not be indexed first ({}); searching what the index holds",
            error.message
        ),
    }
}

/// `left out: a.min.js (minified), b.js (binary) and 3 more`
pub(super) fn left_out_line(summary: &crate::graph::index::IndexSummary) -> String {
    const SHOWN: usize = 5;
    let named: Vec<String> = summary
        .left_out
        .iter()
        .take(SHOWN)
        .map(|file| format!("{} ({})", file.path, file.why))
        .collect();
    let more = summary.skipped.saturating_sub(named.len() as u64);
    let mut line = format!("left out: {}", named.join(", "));
    if more > 0 {
        line.push_str(&format!(" and {more} more"));
    }
    line
}

/// `searchable: python 2,812 files (38.4 MB), yaml 40 files (96 kB), ...`,
/// the languages with the most bytes first.
pub(super) fn languages_line(summary: &crate::graph::index::IndexSummary) -> String {
    let mut languages: Vec<_> = summary.languages.iter().collect();
    languages.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(a.0.cmp(b.0)));
    let shown: Vec<String> = languages
        .iter()
        .map(|(language, share)| {
            format!(
                "{language} {} ({})",
                counted(share.files, "file"),
                humansize(share.bytes)
            )
        })
        .collect();
    format!("searchable by language: {}", shown.join(", "))
}

/// `resolved by language: python calls 8123 of 9001 (90 %), imports 700 of
/// 702 (100 %); go ...`: how much of what the code names the graph linked.
pub(super) fn resolution_line(summary: &crate::graph::index::IndexSummary) -> String {
    let share = |found: u64, missed: u64| {
        let all = found + missed;
        let percent = (found * 100).checked_div(all).unwrap_or(100);
        format!("{found} of {all} ({percent} %)")
    };
    let shown: Vec<String> = summary
        .resolution
        .iter()
        .map(|(language, counts)| {
            format!(
                "{language} calls {}, imports {}",
                share(counts.calls_resolved, counts.calls_unresolved),
                share(counts.imports_resolved, counts.imports_unresolved)
            )
        })
        .collect();
    format!("resolved by language: {}", shown.join("; "))
}

/// Bytes in the units people read: `812 B`, `96.0 kB`, `38.4 MB`.
fn humansize(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut size = bytes as f64 / 1000.0;
    let mut unit = 0;
    while size >= 1000.0 && unit + 1 < UNITS.len() {
        size /= 1000.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS[unit])
}

pub(super) fn print_index_summary(summary: &crate::graph::index::IndexSummary) {
    println!(
        "indexed {} in {} ms: {} parsed, {} unchanged, {} removed, {} skipped, {} with parse errors",
        counted(summary.files, "file"),
        summary.milliseconds,
        summary.parsed,
        summary.unchanged,
        summary.removed,
        summary.skipped,
        summary.files_with_parse_errors
    );
    if !summary.left_out.is_empty() {
        println!("{}", left_out_line(summary));
        let reasons: Vec<String> = summary
            .left_out_by_reason
            .iter()
            .map(|(why, n)| format!("{why} {n}"))
            .collect();
        println!("left out by reason: {}", reasons.join(", "));
    }
    println!("{}", languages_line(summary));
    if !summary.resolution.is_empty() {
        println!("{}", resolution_line(summary));
    }
    let list = |counts: &std::collections::BTreeMap<String, u64>| {
        counts
            .iter()
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "nodes: {} ({})",
        summary.nodes_by_kind.values().sum::<u64>(),
        list(&summary.nodes_by_kind)
    );
    println!(
        "edges: {} ({})",
        summary.edges_by_kind.values().sum::<u64>(),
        list(&summary.edges_by_kind)
    );
}
