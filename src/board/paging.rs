//! Paging the board's columns with keyset cursors.
//!
//! A column cursor holds the column and the sort key of the last card seen:
//! (position, seq) for the active columns, which run in board order, and
//! (completed_at, seq) for complete and archive, newest first. Keysets stay
//! valid while the board changes (a card added before the cursor is simply not
//! shown again), so no revision is bound; the cursor is sealed with the hub's
//! key and bound to the board's filters, so a cursor for other filters is
//! `STALE_CURSOR` and anything else not made here `E_CURSOR`.

use crate::store::Session;
use serde_json::{Value, json};
use std::sync::Arc;

use super::filters::{TaskFilter, load_filtered};
use super::model::sequence_of;
use super::model::{Card, Status};
use crate::tools::cursor::{Keyring, malformed, stale};
use crate::tools::{Page, ToolError};

/// Where a column was left: its status and the sort key of the last card seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    pub status: Status,
    key: Key,
    seq: i64,
}

#[derive(Debug, Clone, PartialEq)]
enum Key {
    /// The board order of an active column.
    Position(f64),
    /// When a complete or archived card was completed.
    Completed(String),
}

impl Position {
    /// The position just after `card`, read from the card as the answer shows it.
    fn after(card: &Value) -> Option<Position> {
        let status = Status::parse(card.get("status")?.as_str()?)?;
        let seq = sequence_of(card.get("id")?.as_str()?);
        let key = if status.is_paged() {
            Key::Completed(
                card.get("completed_at")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            )
        } else {
            Key::Position(card.get("position")?.as_f64()?)
        };
        Some(Position { status, key, seq })
    }

    fn after_card(card: &Card) -> Position {
        let key = if card.status.is_paged() {
            Key::Completed(card.completed_at.clone().unwrap_or_default())
        } else {
            Key::Position(card.position)
        };
        Position {
            status: card.status,
            key,
            seq: sequence_of(&card.id),
        }
    }

    fn to_json(&self) -> Value {
        let key = match &self.key {
            Key::Position(position) => json!(position),
            Key::Completed(at) => json!(at),
        };
        json!({"st": self.status.as_str(), "k": key, "seq": self.seq})
    }

    fn from_json(at: &Value) -> Option<Position> {
        let status = Status::parse(at.get("st")?.as_str()?)?;
        let key = if status.is_paged() {
            Key::Completed(at.get("k")?.as_str()?.to_string())
        } else {
            Key::Position(at.get("k")?.as_f64()?)
        };
        Some(Position {
            status,
            key,
            seq: at.get("seq")?.as_i64()?,
        })
    }
}

/// Seals and opens column cursors for one set of board filters.
#[derive(Clone)]
pub struct ColumnCursors {
    keyring: Keyring,
    scope: String,
}

impl ColumnCursors {
    pub fn new(keyring: &Keyring, filter: &TaskFilter) -> ColumnCursors {
        ColumnCursors {
            keyring: keyring.clone(),
            scope: format!("cos_task_board|{filter:?}"),
        }
    }

    fn seal(&self, position: &Position) -> String {
        self.keyring.seal(&self.scope, &position.to_json())
    }

    /// The position a cursor holds; `column`, when given, is the column it must be for.
    pub fn open(
        &self,
        field: &str,
        cursor: &str,
        column: Option<Status>,
    ) -> Result<Position, ToolError> {
        let at = self.keyring.open(field, &self.scope, cursor)?;
        let position = Position::from_json(&at).ok_or_else(|| malformed(field))?;
        match column {
            Some(status) if status != position.status => Err(stale(
                field,
                "The cursor belongs to another column; pass it as `cursor` or ask again without it",
            )),
            _ => Ok(position),
        }
    }

    /// The page of column `index`: when the agent budget cuts its cards, its
    /// `next_cursor` resumes right after the last card kept.
    pub fn page(&self, index: usize) -> Page {
        let cursors = self.clone();
        Page {
            list: format!("/columns/{index}/cards"),
            cursor_field: format!("/columns/{index}/next_cursor"),
            resume: Arc::new(move |_, last| {
                Position::after(last)
                    .map(|position| cursors.seal(&position))
                    .unwrap_or_default()
            }),
        }
    }

    /// Cards of `status` after `from` (from the start without it) in the
    /// column's order, `page` at most, and the cursor for the rest.
    pub fn cards_after(
        &self,
        connection: &Session,
        filter: &TaskFilter,
        status: Status,
        from: Option<&Position>,
        page: Option<u32>,
    ) -> Result<(Vec<Card>, Option<String>), ToolError> {
        let (order, after) = if status.is_paged() {
            (
                "coalesce(t.completed_at, '') DESC, t.seq DESC",
                " AND (coalesce(t.completed_at, ''), t.seq) < (?2, ?3)",
            )
        } else {
            ("t.position, t.seq", " AND (t.position, t.seq) > (?2, ?3)")
        };
        let mut parameters: Vec<crate::store::Value> = vec![status.as_str().into()];
        let mut extra = "t.status = ?1".to_string();
        if let Some(from) = from {
            extra.push_str(after);
            match &from.key {
                Key::Position(position) => parameters.push((*position).into()),
                Key::Completed(at) => parameters.push(at.into()),
            }
            parameters.push(from.seq.into());
        }
        let limit = page.map_or(String::new(), |page| {
            format!(" LIMIT {}", page as usize + 1)
        });
        let mut cards = load_filtered(
            connection,
            filter,
            &extra,
            &format!("{order}{limit}"),
            parameters,
        )?;
        let more = page.is_some_and(|page| cards.len() > page as usize);
        if let Some(page) = page {
            cards.truncate(page as usize);
        }
        let next = match (more, cards.last()) {
            (true, Some(last)) => Some(self.seal(&Position::after_card(last))),
            _ => None,
        };
        Ok((cards, next))
    }
}
