//! The board's input rules shared by its tools and its file import: titles,
//! swimlanes, appetites, text lists, dependencies and page sizes.

use crate::store::Session;
use serde_json::json;

use super::config::BoardConfig;
use super::model::*;
use super::records;
use super::rules::{self, refuse};
use crate::envelope::{Category, Code};
use crate::tools::{ToolError, text};

const MAX_TITLE_CHARS: usize = 200;

/// Swimlanes a task may use: the configured ones plus any the board already holds.
pub(super) fn known_swimlanes(
    connection: &Session,
    config: &BoardConfig,
) -> Result<Vec<String>, ToolError> {
    let mut lanes = config.swimlanes.clone();
    for lane in records::extra_swimlanes(connection)? {
        if !lanes.contains(&lane) {
            lanes.push(lane);
        }
    }
    Ok(lanes)
}

pub(super) fn check_swimlane(
    connection: &Session,
    config: &BoardConfig,
    swimlane: &str,
) -> Result<(), ToolError> {
    let lanes = known_swimlanes(connection, config)?;
    if lanes.iter().any(|lane| lane == swimlane) {
        return Ok(());
    }
    Err(
        ToolError::invalid("swimlane", format!("one of {}", lanes.join(", ")))
            .with_details(json!({"field": "swimlane", "allowed": lanes, "got": swimlane})),
    )
}

/// A description as the board keeps it: as written, but for U+0000, which
/// CommonMark replaces with U+FFFD (and PostgreSQL's text cannot hold).
pub fn markdown_text(text: &str) -> std::borrow::Cow<'_, str> {
    crate::store::sql::without_nul(text)
}

pub fn check_title(title: &str) -> Result<(), ToolError> {
    let length = title.trim().chars().count();
    if length == 0 || title.chars().count() > MAX_TITLE_CHARS {
        return Err(ToolError::invalid(
            "title",
            format!("1 to {MAX_TITLE_CHARS} characters, got {length}"),
        ));
    }
    text::check_visible_name("title", title)
}

/// An epic name, when one is given.
pub(super) fn check_epic(epic: Option<&str>) -> Result<(), ToolError> {
    match epic {
        Some(epic) if epic.chars().count() > 200 => Err(ToolError::invalid(
            "epic",
            format!("at most 200 characters, got {}", epic.chars().count()),
        )),
        Some(epic) => text::check_name("epic", epic),
        None => Ok(()),
    }
}

pub(super) fn check_appetite(appetite: Option<&str>) -> Result<(), ToolError> {
    match appetite {
        Some(text) if !valid_appetite(text) => Err(ToolError::invalid(
            "appetite",
            format!("a duration such as 30m, 2h, 1d, 3w or 1cy, got {text:?}"),
        )),
        _ => Ok(()),
    }
}

pub(super) fn check_text_list(field: &str, items: &[String]) -> Result<(), ToolError> {
    if items.len() > 100 {
        return Err(ToolError::invalid(field, "at most 100 entries"));
    }
    if let Some(bad) = items
        .iter()
        .find(|item| item.trim().is_empty() || item.chars().count() > text::MAX_LIST_ITEM_CHARS)
    {
        return Err(ToolError::invalid(
            field,
            format!(
                "entries of 1 to {} characters, got {bad:?}",
                text::MAX_LIST_ITEM_CHARS
            ),
        ));
    }
    items
        .iter()
        .try_for_each(|item| text::check_visible_name(field, item))
}

/// Resolves dependency ids, refusing unknown ones, self-references and cycles.
pub(super) fn resolve_dependencies(
    connection: &Session,
    seq: i64,
    depends_on: &[String],
) -> Result<Vec<i64>, ToolError> {
    let mut resolved = Vec::with_capacity(depends_on.len());
    for id in depends_on {
        let dependency = task_seq("depends_on", id)?;
        if dependency == seq {
            return Err(ToolError::invalid(
                "depends_on",
                "other tasks: a task cannot depend on itself",
            ));
        }
        if !records::task_exists(connection, dependency)? {
            return Err(ToolError::invalid(
                "depends_on",
                format!("existing tasks; there is no {id}"),
            )
            .with_details(json!({"field": "depends_on", "unknown": id})));
        }
        if !resolved.contains(&dependency) {
            resolved.push(dependency);
        }
    }
    if let Some(cycle) = rules::find_cycle(connection, seq, &resolved)? {
        return Err(refuse(
            Category::Validation,
            Code::E_DEPENDENCY_CYCLE,
            format!(
                "these dependencies would make a cycle: {}",
                cycle.join(" → ")
            ),
            json!({"field": "depends_on", "cycle": cycle}),
        ));
    }
    resolved.sort_unstable();
    Ok(resolved)
}

pub(super) fn check_limit(
    field: &str,
    value: Option<u32>,
    default: u32,
    max: u32,
) -> Result<u32, ToolError> {
    match value {
        None => Ok(default),
        Some(n) if (1..=max).contains(&n) => Ok(n),
        Some(n) => Err(ToolError::invalid(field, format!("1 to {max}, got {n}"))),
    }
}

pub(super) fn task_seq(field: &str, id: &str) -> Result<i64, ToolError> {
    parse_task_id(id)
        .ok_or_else(|| ToolError::invalid(field, format!("a task id like TASK-12, got {id:?}")))
}

pub(super) fn unknown_task(id: &str) -> ToolError {
    refuse(
        Category::NotFound,
        Code::E_NOT_FOUND,
        format!("no task {id}"),
        json!({"id": id}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_nul_is_replaced_in_a_description() {
        assert_eq!(markdown_text("a\0b\0"), "a\u{FFFD}b\u{FFFD}");
        assert!(matches!(
            markdown_text("kept \u{1} as\twritten"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
