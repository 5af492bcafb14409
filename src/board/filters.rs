//! The filters the board's listings share (status, kind, priority, label,
//! swimlane, epic, text) and the listings they select.

use super::model::*;
use super::records;
use crate::store::sql::renumbered;
use crate::store::{Dialect, Session, Value};
use crate::tools::ToolError;

/// Filters shared by the board, search, ready and claim tools.
#[derive(Debug, Default, Clone)]
pub struct TaskFilter {
    pub status: Option<Status>,
    pub kind: Option<Kind>,
    pub priority: Option<Priority>,
    pub label: Option<String>,
    pub swimlane: Option<String>,
    pub epic: Option<String>,
    pub text: Option<String>,
}

impl TaskFilter {
    /// A WHERE clause over `t` and its parameters.
    fn sql(&self, dialect: Dialect) -> Result<(String, Vec<Value>), ToolError> {
        let mut clauses = vec!["1 = 1".to_string()];
        let mut parameters: Vec<Value> = Vec::new();
        let mut push = |clause: &str, value: Value| {
            parameters.push(value);
            clauses.push(clause.replace('?', &format!("?{}", parameters.len())));
        };
        if let Some(status) = self.status {
            push("t.status = ?", status.as_str().into());
        }
        if let Some(kind) = self.kind {
            push("t.kind = ?", kind.as_str().into());
        }
        if let Some(priority) = self.priority {
            push("t.priority = ?", priority.as_str().into());
        }
        if let Some(label) = &self.label {
            push(&dialect.json_array_holds("t.labels", "?"), label.into());
        }
        if let Some(swimlane) = &self.swimlane {
            push("t.swimlane = ?", swimlane.into());
        }
        if let Some(epic) = &self.epic {
            push("t.epic = ?", epic.into());
        }
        if let Some(text) = &self.text {
            match text_query(text, dialect)? {
                Some(query) => push(text_match(dialect), query.into()),
                // no words to index (`->`, `€`): found as written instead
                None => push(
                    &format!(
                        "({} OR {})",
                        dialect.contains("t.title", "?"),
                        dialect.contains("t.description", "?")
                    ),
                    text.trim().into(),
                ),
            }
        }
        Ok((clauses.join(" AND "), parameters))
    }
}

/// The clause a text query of [`text_query`] is matched by.
fn text_match(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => "t.seq IN (SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH ?)",
        Dialect::Postgres => {
            "to_tsvector('simple', t.title || ' ' || t.description) @@ to_tsquery('simple', ?)"
        }
    }
}

/// Turns free text into a safe full-text query (FTS5's on SQLite, a
/// `tsquery` on PostgreSQL): every word must appear (as a prefix). None
/// when the text holds no word, only punctuation or symbols.
pub(super) fn text_query(text: &str, dialect: Dialect) -> Result<Option<String>, ToolError> {
    if crate::tools::text::is_blank(text) {
        return Err(ToolError::invalid(
            "text",
            "text with at least one visible character",
        ));
    }
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .take(16)
        .map(|word| match dialect {
            Dialect::Sqlite => format!("\"{word}\"*"),
            Dialect::Postgres => format!("'{}':*", word.to_lowercase()),
        })
        .collect();
    let joiner = match dialect {
        Dialect::Sqlite => " ",
        Dialect::Postgres => " & ",
    };
    Ok((!words.is_empty()).then(|| words.join(joiner)))
}

pub(super) fn load_filtered(
    session: &Session,
    filter: &TaskFilter,
    extra: &str,
    order: &str,
    extra_parameters: Vec<Value>,
) -> Result<Vec<Card>, ToolError> {
    let (clause, parameters) = filtered_clause(session, filter, extra, extra_parameters)?;
    Ok(records::load_cards(session, &clause, order, &parameters)?)
}

/// `filter`'s WHERE clause over `t` with `extra` (numbered from `?1`
/// among `extra_parameters`) added, and every parameter in order.
pub(super) fn filtered_clause(
    session: &Session,
    filter: &TaskFilter,
    extra: &str,
    extra_parameters: Vec<Value>,
) -> Result<(String, Vec<Value>), ToolError> {
    let (mut clause, mut parameters) = filter.sql(session.dialect())?;
    if !extra.is_empty() {
        clause = format!("{clause} AND {}", renumbered(extra, parameters.len()));
        parameters.extend(extra_parameters);
    }
    Ok((clause, parameters))
}

pub(super) fn count_filtered(
    session: &Session,
    filter: &TaskFilter,
) -> Result<Vec<(Status, u64)>, ToolError> {
    let (clause, parameters) = filter.sql(session.dialect())?;
    let sql = format!("SELECT t.status, count(*) FROM tasks t WHERE {clause} GROUP BY t.status");
    let mut counts = Vec::new();
    for row in session.query(&sql, &parameters)? {
        let status = row.text(0).map_err(crate::store::StoreError::from)?;
        let count = row.int(1).map_err(crate::store::StoreError::from)?;
        if let Some(status) = Status::parse(&status) {
            counts.push((status, count as u64));
        }
    }
    Ok(counts)
}
