//! The board view: one page of cards per column with WIP state, cached per
//! board revision.

use crate::store::Session;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::board::config::{BoardConfig, WipLimits};
use crate::board::model::*;
use crate::board::paging::{ColumnCursors, Position};
use crate::board::records;
use crate::tools::cache::Shared;
use crate::tools::{Answer, Tool, ToolContext, ToolError, ToolSpec};

use super::{DEFAULT_PAGE, MAX_PAGE, spec};
use crate::board::filters::{TaskFilter, count_filtered};
use crate::board::validate::{check_limit, known_swimlanes};

#[derive(Debug, Default, Deserialize, ToSchema, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct BoardInput {
    /// Opaque cursor from a previous answer's complete column.
    pub complete_cursor: Option<String>,
    /// Opaque cursor from a previous answer's archive column.
    pub archive_cursor: Option<String>,
    /// Cards per page of complete and archive (1 to 200, default 50).
    #[schema(minimum = 1, maximum = 200)]
    #[param(minimum = 1, maximum = 200)]
    pub page_size: Option<u32>,
    /// Any column's `next_cursor`: answers that column alone, continuing after it.
    pub cursor: Option<String>,
    pub kind: Option<Kind>,
    pub priority: Option<Priority>,
    pub label: Option<String>,
    pub swimlane: Option<String>,
    pub epic: Option<String>,
    /// Words all in the title or description; text without words (`->`)
    /// is found as written.
    #[schema(format = "cos-not-blank")]
    #[param(format = "cos-not-blank")]
    pub text: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WipState {
    pub limit: u32,
    /// True when the limit applies per actor (in_progress) rather than to the column.
    pub per_actor: bool,
    /// Cards in the column (for per-actor limits: the most any one actor holds).
    pub occupied: u32,
    pub at_limit: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Column {
    pub status: Status,
    /// Tasks in this column matching the filters, on every page.
    pub total: u64,
    pub wip: Option<WipState>,
    pub cards: Vec<Card>,
    /// Pass back (as `cursor`, or `complete_cursor`/`archive_cursor` for those
    /// columns) for the cards after these; null when the column is all here.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Board {
    /// The board revision this answer shows; `/api/stream` announces newer ones.
    pub revision: i64,
    pub columns: Vec<Column>,
    /// Tasks matching the filters across every column.
    pub total_count: u64,
    /// Swimlanes a task may use.
    pub swimlanes: Vec<String>,
}

pub struct TaskBoard;

impl Tool for TaskBoard {
    type Input = BoardInput;
    type Output = Shared<Board>;
    const SPEC: ToolSpec = spec(
        "cos_task_board",
        "The board: one column per status with cards, totals and WIP state; complete and archive are paged, \
         newest first. A column cut short has a next_cursor: pass it as cursor for the rest of it.",
    );

    fn run(context: &ToolContext, input: BoardInput) -> Result<Answer<Shared<Board>>, ToolError> {
        let page = check_limit("page_size", input.page_size, DEFAULT_PAGE, MAX_PAGE)?;
        let filter = TaskFilter {
            kind: input.kind,
            priority: input.priority,
            label: input.label.clone(),
            swimlane: input.swimlane.clone(),
            epic: input.epic.clone(),
            text: input.text.clone(),
            ..TaskFilter::default()
        };
        let cursors = ColumnCursors::new(&context.hub.cursors, &filter);
        let open = |field: &str, cursor: &Option<String>, column: Option<Status>| {
            cursor
                .as_deref()
                .map(|cursor| cursors.open(field, cursor, column))
                .transpose()
        };
        let from = Starts {
            only: open("cursor", &input.cursor, None)?,
            complete: open(
                "complete_cursor",
                &input.complete_cursor,
                Some(Status::Complete),
            )?,
            archive: open(
                "archive_cursor",
                &input.archive_cursor,
                Some(Status::Archive),
            )?,
        };
        let state_dir = &context.hub.config.state_dir;
        let board = context.hub.shared.view(|c| {
            let key = format!("{}|{input:?}", BoardConfig::stamp_in(c, state_dir));
            // The revision is read before the board, so a cached board is never older than its revision.
            let revision = records::board_revision(c)?;
            context.hub.answers.get_or_compute(
                crate::board::AREA.id,
                Self::SPEC.name,
                key,
                revision,
                || {
                    let config = BoardConfig::load_in(c, state_dir)?;
                    let board = build_board(c, &config, &filter, page, &cursors, &from)?;
                    Ok(Answer::new(Board { revision, ..board }))
                },
            )
        })?;
        let columns = if from.only.is_some() {
            1
        } else {
            Status::ALL.len()
        };
        Ok((0..columns).fold(board, |board, index| board.with_page(cursors.page(index))))
    }
}

/// Where the columns start: `only` answers one column after a cursor.
pub(super) struct Starts {
    only: Option<Position>,
    complete: Option<Position>,
    archive: Option<Position>,
}

pub(super) fn build_board(
    connection: &Session,
    config: &BoardConfig,
    filter: &TaskFilter,
    page: u32,
    cursors: &ColumnCursors,
    from: &Starts,
) -> Result<Board, ToolError> {
    let totals = count_filtered(connection, filter)?;
    let total_of = |status: Status| {
        totals
            .iter()
            .find(|(s, _)| *s == status)
            .map_or(0, |(_, n)| *n)
    };
    let mut columns = Vec::with_capacity(Status::ALL.len());
    for status in Status::ALL {
        let start = match (&from.only, status) {
            (Some(only), _) if only.status != status => continue,
            (Some(only), _) => Some(only),
            (None, Status::Complete) => from.complete.as_ref(),
            (None, Status::Archive) => from.archive.as_ref(),
            (None, _) => None,
        };
        let page = status.is_paged().then_some(page);
        let (cards, next_cursor) = cursors.cards_after(connection, filter, status, start, page)?;
        let wip = wip_state(connection, &config.wip, status)?;
        columns.push(Column {
            status,
            total: total_of(status),
            wip,
            cards,
            next_cursor,
        });
    }
    Ok(Board {
        revision: 0,
        columns,
        total_count: totals.iter().map(|(_, n)| n).sum(),
        swimlanes: known_swimlanes(connection, config)?,
    })
}

pub(super) fn wip_state(
    connection: &Session,
    limits: &WipLimits,
    status: Status,
) -> Result<Option<WipState>, ToolError> {
    let (limit, per_actor, occupied) = match status {
        Status::InProgress => match limits.per_actor_limit() {
            Some(limit) => (
                limit,
                true,
                records::most_in_progress_per_assignee(connection)?,
            ),
            None => return Ok(None),
        },
        other => match limits.column_limit(other) {
            Some(limit) => (limit, false, records::count_in(connection, other)?),
            None => return Ok(None),
        },
    };
    Ok(Some(WipState {
        limit,
        per_actor,
        occupied,
        at_limit: occupied >= limit,
    }))
}
