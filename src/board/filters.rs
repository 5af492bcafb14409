//! The filters the board's listings share (status, kind, priority, label,
//! swimlane, epic, text) and the listings they select.

use rusqlite::Connection;

use super::model::*;
use super::records;
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
    fn sql(&self) -> Result<(String, Vec<Box<dyn rusqlite::ToSql>>), ToolError> {
        let mut clauses = vec!["1 = 1".to_string()];
        let mut parameters: Vec<Box<dyn rusqlite::ToSql>> = Vec::new();
        let mut push = |clause: &str, value: Box<dyn rusqlite::ToSql>| {
            parameters.push(value);
            clauses.push(clause.replace('?', &format!("?{}", parameters.len())));
        };
        if let Some(status) = self.status {
            push("t.status = ?", Box::new(status.as_str()));
        }
        if let Some(kind) = self.kind {
            push("t.kind = ?", Box::new(kind.as_str()));
        }
        if let Some(priority) = self.priority {
            push("t.priority = ?", Box::new(priority.as_str()));
        }
        if let Some(label) = &self.label {
            push(
                "EXISTS (SELECT 1 FROM json_each(t.labels) WHERE value = ?)",
                Box::new(label.clone()),
            );
        }
        if let Some(swimlane) = &self.swimlane {
            push("t.swimlane = ?", Box::new(swimlane.clone()));
        }
        if let Some(epic) = &self.epic {
            push("t.epic = ?", Box::new(epic.clone()));
        }
        if let Some(text) = &self.text {
            match fts_query(text)? {
                Some(query) => push(
                    "t.seq IN (SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH ?)",
                    Box::new(query),
                ),
                // no words to index (`->`, `€`): found as written instead
                None => push(
                    "(instr(t.title, ?) > 0 OR instr(t.description, ?) > 0)",
                    Box::new(text.trim().to_string()),
                ),
            }
        }
        Ok((clauses.join(" AND "), parameters))
    }
}

/// Turns free text into a safe FTS5 query: every word must appear (as a
/// prefix). None when the text holds no word, only punctuation or symbols.
pub(super) fn fts_query(text: &str) -> Result<Option<String>, ToolError> {
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
        .map(|word| format!("\"{word}\"*"))
        .collect();
    Ok((!words.is_empty()).then(|| words.join(" ")))
}

pub(super) fn load_filtered(
    connection: &Connection,
    filter: &TaskFilter,
    extra: &str,
    order: &str,
    extra_parameters: Vec<Box<dyn rusqlite::ToSql>>,
) -> Result<Vec<Card>, ToolError> {
    let (mut clause, mut parameters) = filter.sql()?;
    if !extra.is_empty() {
        let offset = parameters.len();
        let mut extra = extra.to_string();
        for index in (1..=extra_parameters.len()).rev() {
            extra = extra.replace(&format!("?{index}"), &format!("?{}", index + offset));
        }
        clause = format!("{clause} AND {extra}");
        parameters.extend(extra_parameters);
    }
    let references: Vec<&dyn rusqlite::ToSql> = parameters.iter().map(|p| p.as_ref()).collect();
    Ok(records::load_cards(
        connection,
        &clause,
        order,
        &references,
    )?)
}

pub(super) fn count_filtered(
    connection: &Connection,
    filter: &TaskFilter,
) -> Result<Vec<(Status, u64)>, ToolError> {
    let (clause, parameters) = filter.sql()?;
    let sql = format!("SELECT t.status, count(*) FROM tasks t WHERE {clause} GROUP BY t.status");
    let references: Vec<&dyn rusqlite::ToSql> = parameters.iter().map(|p| p.as_ref()).collect();
    let run = || -> rusqlite::Result<Vec<(String, i64)>> {
        let mut statement = connection.prepare_cached(&sql)?;
        let rows =
            statement.query_map(references.as_slice(), |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect()
    };
    let rows = run().map_err(|error| crate::store::StoreError::on(connection, error))?;
    Ok(rows
        .into_iter()
        .filter_map(|(status, count)| Some((Status::parse(&status)?, count as u64)))
        .collect())
}
