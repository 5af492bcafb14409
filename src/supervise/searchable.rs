//! What agent evidence offers search: each evidence bundle is a unit
//! (fingerprinted by its version) whose recorded outputs, discoveries and
//! backtracks are items of the `evidence` corpus, each naming its task and
//! bundle.

use serde_json::Value;

use crate::tools::searchable::{Corpus, Opens, SearchItem, SearchUnit, Searchable, UnitVersion};
use crate::tools::{ToolContext, ToolError};

const EVIDENCE: Corpus = Corpus {
    name: "evidence",
    kinds: &["output", "discovery", "backtrack"],
    opens: Opens::Session,
    definitions: false,
    paths: false,
    statuses: false,
};

pub static SEARCHABLE: Searchable = Searchable {
    source: "supervise",
    corpora: &[EVIDENCE],
    files: false,
    revision: |hub, connection| hub.shared.view_beside(connection, super::records::revision),
    prepare: None,
    units,
    load,
    load_batch: None,
    languages: Vec::new,
    statuses: Vec::new,
    left_out: None,
};

fn units(context: &ToolContext) -> Result<Vec<UnitVersion>, ToolError> {
    let versions = context.hub.shared.view(super::records::session_versions)?;
    Ok(versions
        .into_iter()
        .map(|(session, version)| UnitVersion {
            key: session,
            fingerprint: version.to_string(),
            detail: String::new(),
        })
        .collect())
}

fn load(context: &ToolContext, unit: &UnitVersion) -> Result<Option<SearchUnit>, ToolError> {
    let store = &context.hub.shared;
    let Some(row) = store.view(|c| super::records::session(c, &unit.key))? else {
        return Ok(None);
    };
    // a row this area wrote always parses; one that does not is left out of
    // search (with a warning) rather than failing every query
    let contents = match row.contents() {
        Ok(contents) => contents,
        Err(error) => {
            tracing::warn!(session = %row.session_id, %error, "an evidence session's bundle does not parse: it is not searched");
            return Ok(Some(SearchUnit::default()));
        }
    };
    let target = format!("{}/{}", row.task_marker, row.session_id);
    // the task, session and persona are words of every item, so a query
    // naming them finds the session's evidence
    let about = format!("{} {} {}", row.task_marker, row.session_id, row.persona_id);
    let item = |kind: &str, name: String, body: String| SearchItem {
        corpus: EVIDENCE.name,
        kind: kind.to_string(),
        words_from: [name.clone(), String::new(), format!("{body}\n{about}")],
        name,
        target: target.clone(),
        path: None,
        line: None,
        lang: None,
        status: None,
        body,
        test: false,
    };
    let mut items = Vec::new();
    for (field, filled) in &contents.slots {
        let body = format!("{}\n{}", text_of(&filled.output), filled.formula_id);
        items.push(item("output", field.clone(), body));
    }
    for discovery in &contents.discoveries {
        let body = format!("{}\n{}", discovery.summary, discovery.impact_assessment);
        items.push(item("discovery", discovery.summary.clone(), body));
    }
    for backtrack in &contents.backtracks {
        let name = format!("{} -> {}", backtrack.from_formula, backtrack.to_formula);
        items.push(item("backtrack", name, backtrack.reason.clone()));
    }
    Ok(Some(SearchUnit { items, file: None }))
}

/// A recorded output as text: a string as it is, anything else as indented
/// JSON, so each value stands on a line of its own.
fn text_of(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}
