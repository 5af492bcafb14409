//! The board's rows: reading and writing tasks, dependencies and history,
//! and the SQL of its listings (with `filters`). Plain SQL over a connection
//! or transaction the caller holds; no rules here, and no SQL elsewhere in
//! the board but `rules` (its consistency checks) and `filters`.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::Value;

use super::model::{Card, HistoryEntry, Kind, Priority, Status, Task, format_task_id};
use crate::store::StoreError;

/// Every column but the description, in `task_from_row` order. Card queries
/// stop here, so they never read a description.
const ROW_COLUMNS: &str = "t.seq, t.title, t.status, t.kind, t.priority, t.swimlane, t.epic, \
     t.labels, t.appetite, t.refs, t.assignee, t.position, t.version, t.created_at, t.started_at, \
     t.completed_at, t.updated_at, t.updated_by, \
     (SELECT group_concat(d.depends_on) FROM task_dependencies d WHERE d.task = t.seq)";
const DESCRIPTION_INDEX: usize = 19;

fn json_list(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

fn invalid_column(index: usize, text: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        index,
        rusqlite::types::Type::Text,
        format!("unexpected value {text:?}").into(),
    )
}

/// Reads a task; the description only when the query selected it.
fn task_from_row(row: &Row) -> rusqlite::Result<Task> {
    let status: String = row.get(2)?;
    let kind: String = row.get(3)?;
    let priority: String = row.get(4)?;
    let dependencies: Option<String> = row.get(18)?;
    let mut depends_on: Vec<i64> = dependencies
        .as_deref()
        .unwrap_or("")
        .split(',')
        .filter_map(|n| n.parse().ok())
        .collect();
    depends_on.sort_unstable();
    let description = if row.as_ref().column_count() > DESCRIPTION_INDEX {
        row.get(DESCRIPTION_INDEX)?
    } else {
        String::new()
    };
    Ok(Task {
        id: format_task_id(row.get(0)?),
        title: row.get(1)?,
        description,
        status: Status::parse(&status).ok_or_else(|| invalid_column(2, &status))?,
        kind: Kind::parse(&kind).ok_or_else(|| invalid_column(3, &kind))?,
        priority: Priority::parse(&priority).ok_or_else(|| invalid_column(4, &priority))?,
        swimlane: row.get(5)?,
        epic: row.get(6)?,
        labels: json_list(&row.get::<_, String>(7)?),
        appetite: row.get(8)?,
        references: json_list(&row.get::<_, String>(9)?),
        assignee: row.get(10)?,
        position: row.get(11)?,
        version: row.get(12)?,
        created_at: row.get(13)?,
        started_at: row.get(14)?,
        completed_at: row.get(15)?,
        updated_at: row.get(16)?,
        updated_by: row.get(17)?,
        depends_on: depends_on.into_iter().map(format_task_id).collect(),
    })
}

pub fn load_task(connection: &Connection, seq: i64) -> Result<Option<Task>, StoreError> {
    let sql = format!("SELECT {ROW_COLUMNS}, t.description FROM tasks t WHERE t.seq = ?1");
    connection
        .query_row(&sql, [seq], task_from_row)
        .optional()
        .map_err(|error| StoreError::on(connection, error))
}

/// Tasks matching `filter` (a WHERE clause over `t`), in `order`, with descriptions.
pub fn load_tasks(
    connection: &Connection,
    filter: &str,
    order: &str,
    parameters: &[&dyn rusqlite::ToSql],
) -> Result<Vec<Task>, StoreError> {
    query_tasks(
        connection,
        &format!(
            "SELECT {ROW_COLUMNS}, t.description FROM tasks t WHERE {filter} ORDER BY {order}"
        ),
        parameters,
    )
}

/// Cards matching `filter`, in `order`: the description is never read.
pub fn load_cards(
    connection: &Connection,
    filter: &str,
    order: &str,
    parameters: &[&dyn rusqlite::ToSql],
) -> Result<Vec<Card>, StoreError> {
    let sql = format!("SELECT {ROW_COLUMNS} FROM tasks t WHERE {filter} ORDER BY {order}");
    Ok(query_tasks(connection, &sql, parameters)?
        .into_iter()
        .map(Card::from)
        .collect())
}

fn query_tasks(
    connection: &Connection,
    sql: &str,
    parameters: &[&dyn rusqlite::ToSql],
) -> Result<Vec<Task>, StoreError> {
    let run = || -> rusqlite::Result<Vec<Task>> {
        let mut statement = connection.prepare_cached(sql)?;
        let rows = statement.query_map(parameters, task_from_row)?;
        rows.collect()
    };
    run().map_err(|error| StoreError::on(connection, error))
}

/// Writes every column of `task` (by its sequence number), except dependencies.
pub fn save_task(connection: &Connection, seq: i64, task: &Task) -> Result<(), StoreError> {
    let labels = serde_json::to_string(&task.labels).unwrap_or_else(|_| "[]".into());
    let references = serde_json::to_string(&task.references).unwrap_or_else(|_| "[]".into());
    connection
        .execute(
            "INSERT INTO tasks (seq, title, description, status, kind, priority, swimlane, epic, labels, appetite,
                                refs, assignee, position, version, created_at, started_at, completed_at, updated_at, updated_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
             ON CONFLICT(seq) DO UPDATE SET
                title = excluded.title, description = excluded.description, status = excluded.status,
                kind = excluded.kind, priority = excluded.priority, swimlane = excluded.swimlane,
                epic = excluded.epic, labels = excluded.labels, appetite = excluded.appetite, refs = excluded.refs,
                assignee = excluded.assignee, position = excluded.position, version = excluded.version,
                created_at = excluded.created_at, started_at = excluded.started_at,
                completed_at = excluded.completed_at, updated_at = excluded.updated_at, updated_by = excluded.updated_by",
            params![
                seq,
                task.title,
                task.description,
                task.status.as_str(),
                task.kind.as_str(),
                task.priority.as_str(),
                task.swimlane,
                task.epic,
                labels,
                task.appetite,
                references,
                task.assignee,
                task.position,
                task.version,
                task.created_at,
                task.started_at,
                task.completed_at,
                task.updated_at,
                task.updated_by,
            ],
        )
        .map(|_| ())
        .map_err(|error| StoreError::on(connection, error))
}

/// Reserves the next task number (never reused: AUTOINCREMENT remembers the highest).
pub fn next_seq(connection: &Connection) -> Result<i64, StoreError> {
    connection
        .query_row(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'tasks'), 0),
                        coalesce((SELECT max(seq) FROM tasks), 0)) + 1",
            [],
            |row| row.get(0),
        )
        .map_err(|error| StoreError::on(connection, error))
}

pub fn task_exists(connection: &Connection, seq: i64) -> Result<bool, StoreError> {
    connection
        .query_row("SELECT 1 FROM tasks WHERE seq = ?1", [seq], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
        .map_err(|error| StoreError::on(connection, error))
}

pub fn set_dependencies(
    connection: &Connection,
    seq: i64,
    depends_on: &[i64],
) -> Result<(), StoreError> {
    let run = || -> rusqlite::Result<()> {
        connection.execute("DELETE FROM task_dependencies WHERE task = ?1", [seq])?;
        let mut insert = connection
            .prepare_cached("INSERT INTO task_dependencies(task, depends_on) VALUES (?1, ?2)")?;
        for dependency in depends_on {
            insert.execute([seq, *dependency])?;
        }
        Ok(())
    };
    run().map_err(|error| StoreError::on(connection, error))
}

/// Direct dependencies of every task, as an adjacency list.
pub fn dependency_edges(connection: &Connection) -> Result<Vec<(i64, i64)>, StoreError> {
    let run = || -> rusqlite::Result<Vec<(i64, i64)>> {
        let mut statement =
            connection.prepare_cached("SELECT task, depends_on FROM task_dependencies")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect()
    };
    run().map_err(|error| StoreError::on(connection, error))
}

/// One history entry.
pub struct Change<'a> {
    pub field: &'a str,
    pub old: Value,
    pub new: Value,
}

pub fn append_history(
    connection: &Connection,
    seq: i64,
    actor: &str,
    source: &str,
    version: i64,
    at: &str,
    changes: &[Change],
) -> Result<(), StoreError> {
    let run = || -> rusqlite::Result<()> {
        let mut insert = connection.prepare_cached(
            "INSERT INTO task_history(task, at, actor, source, field, old_value, new_value, version)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        for change in changes {
            insert.execute(params![
                seq,
                at,
                actor,
                source,
                change.field,
                (!change.old.is_null()).then(|| change.old.to_string()),
                (!change.new.is_null()).then(|| change.new.to_string()),
                version
            ])?;
        }
        Ok(())
    };
    run().map_err(|error| StoreError::on(connection, error))
}

/// Swimlanes the board knows beyond the configured ones (added by import).
pub fn extra_swimlanes(connection: &Connection) -> Result<Vec<String>, StoreError> {
    let run = || -> rusqlite::Result<Vec<String>> {
        let mut statement =
            connection.prepare_cached("SELECT name FROM board_swimlanes ORDER BY name")?;
        let rows = statement.query_map([], |row| row.get(0))?;
        rows.collect()
    };
    run().map_err(|error| StoreError::on(connection, error))
}

pub fn add_swimlane(connection: &Connection, name: &str) -> Result<bool, StoreError> {
    connection
        .execute(
            "INSERT OR IGNORE INTO board_swimlanes(name) VALUES (?1)",
            [name],
        )
        .map(|inserted| inserted > 0)
        .map_err(|error| StoreError::on(connection, error))
}

/// The position after the last card of `status`.
pub fn end_position(connection: &Connection, status: Status) -> Result<f64, StoreError> {
    connection
        .query_row(
            "SELECT coalesce(max(position), 0) + 1 FROM tasks WHERE status = ?1",
            [status.as_str()],
            |row| row.get(0),
        )
        .map_err(|error| StoreError::on(connection, error))
}

/// The board's revision: bumped by triggers inside every writing transaction.
pub fn board_revision(connection: &Connection) -> Result<i64, StoreError> {
    let read = || -> rusqlite::Result<i64> {
        let mut statement =
            connection.prepare_cached("SELECT revision FROM board_revision WHERE id = 1")?;
        statement.query_row([], |row| row.get(0))
    };
    read().map_err(|error| StoreError::on(connection, error))
}

/// Icebox tasks whose every dependency is complete, best first.
pub const READY: &str =
    "NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks dt ON dt.seq = d.depends_on
                     WHERE d.task = t.seq AND dt.status NOT IN ('complete', 'archive'))";
pub const READY_ORDER: &str = "t.priority, t.position, t.seq";

/// A card filter: the tasks task `?1` depends on.
pub const DEPENDENCIES_OF: &str =
    "t.seq IN (SELECT depends_on FROM task_dependencies WHERE task = ?1)";
/// A card filter: the tasks that depend on task `?1`.
pub const DEPENDENTS_OF: &str =
    "t.seq IN (SELECT task FROM task_dependencies WHERE depends_on = ?1)";

/// Respaces a column to whole numbers so later moves have room.
pub fn respace(connection: &Connection, column: &[Card]) -> Result<(), StoreError> {
    let run = || -> rusqlite::Result<()> {
        let mut update =
            connection.prepare_cached("UPDATE tasks SET position = ?1 WHERE seq = ?2")?;
        for (index, card) in column.iter().enumerate() {
            update.execute(params![index as f64, super::model::sequence_of(&card.id)])?;
        }
        Ok(())
    };
    run().map_err(|error| StoreError::on(connection, error))
}

/// Tasks in `status`.
pub fn count_in(connection: &Connection, status: Status) -> Result<u32, StoreError> {
    connection
        .prepare_cached("SELECT count(*) FROM tasks WHERE status = ?1")
        .and_then(|mut statement| statement.query_row([status.as_str()], |row| row.get(0)))
        .map_err(|error| StoreError::on(connection, error))
}

/// The most tasks any one assignee has in progress.
pub fn most_in_progress_per_assignee(connection: &Connection) -> Result<u32, StoreError> {
    connection
        .prepare_cached(
            "SELECT coalesce(max(n), 0) FROM
                 (SELECT count(*) AS n FROM tasks WHERE status = 'in_progress' GROUP BY assignee)",
        )
        .and_then(|mut statement| statement.query_row([], |row| row.get(0)))
        .map_err(|error| StoreError::on(connection, error))
}

/// Entries of task `seq`, newest first, from `start` on.
pub fn history_page(
    connection: &Connection,
    seq: i64,
    start: usize,
    limit: u32,
) -> Result<(Vec<HistoryEntry>, u64), StoreError> {
    let run = || -> rusqlite::Result<(Vec<HistoryEntry>, u64)> {
        let total: i64 = connection.query_row(
            "SELECT count(*) FROM task_history WHERE task = ?1",
            [seq],
            |r| r.get(0),
        )?;
        let mut statement = connection.prepare_cached(
            "SELECT at, actor, source, field, old_value, new_value, version FROM task_history
             WHERE task = ?1 ORDER BY id DESC LIMIT ?2 OFFSET ?3",
        )?;
        let parse = |text: Option<String>| text.and_then(|t| serde_json::from_str(&t).ok());
        let rows = statement.query_map(rusqlite::params![seq, limit, start as i64], |row| {
            Ok(HistoryEntry {
                at: row.get(0)?,
                actor: row.get(1)?,
                source: row.get(2)?,
                field: row.get(3)?,
                old: parse(row.get(4)?),
                new: parse(row.get(5)?),
                version: row.get(6)?,
            })
        })?;
        Ok((rows.collect::<rusqlite::Result<_>>()?, total as u64))
    };
    run().map_err(|error| StoreError::on(connection, error))
}

/// Every task's number and version (bumped by each change to it), by number:
/// what areas that follow the board, such as search, compare.
pub fn task_versions(connection: &Connection) -> Result<Vec<(i64, i64)>, StoreError> {
    let read = || -> rusqlite::Result<Vec<(i64, i64)>> {
        let mut statement =
            connection.prepare_cached("SELECT seq, version FROM tasks ORDER BY seq")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect()
    };
    read().map_err(|error| StoreError::on(connection, error))
}
