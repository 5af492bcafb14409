//! What the board offers search: each task is a unit (fingerprinted by its
//! version) and one item of the `tasks` corpus, found by its title, id,
//! description and labels; a batch of changed tasks is read in one query.

use std::collections::HashMap;

use super::model::{Task, format_task_id};
use crate::tools::searchable::{Corpus, Opens, SearchItem, SearchUnit, Searchable, UnitVersion};
use crate::tools::{ToolContext, ToolError};

const TASKS: Corpus = Corpus {
    name: "tasks",
    kinds: &["task"],
    opens: Opens::Task,
    definitions: false,
    paths: false,
    statuses: true,
};

pub static SEARCHABLE: Searchable = Searchable {
    source: "board",
    corpora: &[TASKS],
    files: false,
    revision: super::revision_in,
    prepare: None,
    units,
    load,
    load_batch: Some(load_batch),
    languages: Vec::new,
    statuses,
    left_out: None,
};

fn statuses() -> Vec<&'static str> {
    super::model::Status::ALL
        .iter()
        .map(|s| s.as_str())
        .collect()
}

fn units(context: &ToolContext) -> Result<Vec<UnitVersion>, ToolError> {
    let versions = context.hub.shared.view(super::records::task_versions)?;
    Ok(versions
        .into_iter()
        .map(|(seq, version)| UnitVersion {
            key: seq.to_string(),
            fingerprint: version.to_string(),
            detail: String::new(),
        })
        .collect())
}

fn load(context: &ToolContext, unit: &UnitVersion) -> Result<Option<SearchUnit>, ToolError> {
    Ok(load_batch(context, std::slice::from_ref(unit))?
        .pop()
        .flatten())
}

/// The tasks of `units` in one read.
fn load_batch(
    context: &ToolContext,
    units: &[UnitVersion],
) -> Result<Vec<Option<SearchUnit>>, ToolError> {
    let seqs: Vec<Option<i64>> = units.iter().map(|unit| unit.key.parse().ok()).collect();
    let wanted: Vec<i64> = seqs.iter().flatten().copied().collect();
    let mut tasks: HashMap<String, Task> = context
        .hub
        .shared
        .view(|c| super::records::load_tasks_numbered(c, &wanted))?
        .into_iter()
        .map(|task| (task.id.clone(), task))
        .collect();
    Ok(seqs
        .into_iter()
        .map(|seq| {
            seq.and_then(|seq| tasks.remove(&format_task_id(seq)))
                .map(search_unit)
        })
        .collect())
}

fn search_unit(task: Task) -> SearchUnit {
    let body = format!("{}\n{}", task.description, task.labels.join(" "));
    let item = SearchItem {
        corpus: TASKS.name,
        kind: "task".to_string(),
        words_from: [
            format!("{} {}", task.title, task.id),
            String::new(),
            body.clone(),
        ],
        name: task.title,
        target: task.id,
        path: None,
        line: None,
        lang: None,
        status: Some(task.status.as_str().to_string()),
        body,
        test: false,
    };
    SearchUnit {
        items: vec![item],
        file: None,
    }
}
