//! What the board offers search: each task is a unit (fingerprinted by its
//! version) and one item of the `tasks` corpus, found by its title, id,
//! description and labels.

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
    let Ok(seq) = unit.key.parse::<i64>() else {
        return Ok(None);
    };
    let Some(task) = context
        .hub
        .shared
        .view(|c| super::records::load_task(c, seq))?
    else {
        return Ok(None);
    };
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
    Ok(Some(SearchUnit {
        items: vec![item],
        file: None,
    }))
}
