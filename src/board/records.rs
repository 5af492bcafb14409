//! The board's rows: reading and writing tasks, dependencies and history,
//! and the SQL of its listings (with `filters`). Plain SQL over a connection
//! or transaction the caller holds; no rules here, and no SQL elsewhere in
//! the board but `rules` (its consistency checks) and `filters`.

use serde_json::Value as Json;

use super::model::{Card, HistoryEntry, Kind, Lease, Priority, Status, Task, format_task_id};
use crate::store::sql::{ColumnError, renumbered};
use crate::store::{Dialect, Row, Session, StoreError, Value, Write};

/// Every column but the description, in `task_from_row` order. Card queries
/// stop here, so they never read a description.
fn row_columns(dialect: Dialect) -> String {
    format!(
        "t.seq, t.title, t.status, t.kind, t.priority, t.swimlane, t.epic, \
         t.labels, t.appetite, t.refs, t.assignee, t.position, t.version, t.created_at, t.started_at, \
         t.completed_at, t.updated_at, t.updated_by, \
         (SELECT {} FROM task_dependencies d WHERE d.task = t.seq), l.holder, l.expires_at",
        dialect.joined("d.depends_on")
    )
}
/// The tasks with their leases, as `t` and `l`.
const TASKS: &str = "tasks t LEFT JOIN task_leases l ON l.task = t.seq";
const DESCRIPTION_INDEX: usize = 21;

fn json_list(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

fn invalid_column(index: usize, text: &str) -> ColumnError {
    ColumnError {
        index,
        expected: "a known value",
        found: format!("{text:?}"),
    }
}

/// Reads a task; the description only when the query selected it.
fn task_from_row(row: &Row) -> Result<Task, ColumnError> {
    let status = row.text(2)?;
    let kind = row.text(3)?;
    let priority = row.text(4)?;
    let dependencies = row.opt_text(18)?;
    let mut depends_on: Vec<i64> = dependencies
        .as_deref()
        .unwrap_or("")
        .split(',')
        .filter_map(|n| n.parse().ok())
        .collect();
    depends_on.sort_unstable();
    let description = if row.len() > DESCRIPTION_INDEX {
        row.text(DESCRIPTION_INDEX)?
    } else {
        String::new()
    };
    Ok(Task {
        id: format_task_id(row.int(0)?),
        title: row.text(1)?,
        description,
        status: Status::parse(&status).ok_or_else(|| invalid_column(2, &status))?,
        kind: Kind::parse(&kind).ok_or_else(|| invalid_column(3, &kind))?,
        priority: Priority::parse(&priority).ok_or_else(|| invalid_column(4, &priority))?,
        swimlane: row.text(5)?,
        epic: row.opt_text(6)?,
        labels: json_list(&row.text(7)?),
        appetite: row.opt_text(8)?,
        references: json_list(&row.text(9)?),
        assignee: row.opt_text(10)?,
        position: row.real(11)?,
        version: row.int(12)?,
        created_at: row.text(13)?,
        started_at: row.opt_text(14)?,
        completed_at: row.opt_text(15)?,
        updated_at: row.text(16)?,
        updated_by: row.text(17)?,
        lease: match (row.opt_text(19)?, row.opt_text(20)?) {
            (Some(holder), Some(expires_at)) => Some(Lease { holder, expires_at }),
            _ => None,
        },
        depends_on: depends_on.into_iter().map(format_task_id).collect(),
    })
}

pub fn load_task(session: &Session, seq: i64) -> Result<Option<Task>, StoreError> {
    let sql = format!(
        "SELECT {}, t.description FROM {TASKS} WHERE t.seq = ?1",
        row_columns(session.dialect())
    );
    match session.query_opt(&sql, &[seq.into()])? {
        Some(row) => Ok(Some(task_from_row(&row)?)),
        None => Ok(None),
    }
}

/// Tasks matching `filter` (a WHERE clause over `t`), in `order`, with descriptions.
pub fn load_tasks(
    session: &Session,
    filter: &str,
    order: &str,
    parameters: &[Value],
) -> Result<Vec<Task>, StoreError> {
    let sql = format!(
        "SELECT {}, t.description FROM {TASKS} WHERE {filter} ORDER BY {order}",
        row_columns(session.dialect())
    );
    query_tasks(session, &sql, parameters)
}

/// The tasks numbered `seqs` (those that exist), with descriptions, in one statement.
pub fn load_tasks_numbered(session: &Session, seqs: &[i64]) -> Result<Vec<Task>, StoreError> {
    if seqs.is_empty() {
        return Ok(Vec::new());
    }
    let list = serde_json::to_string(seqs).unwrap_or_else(|_| "[]".into());
    let filter = session.dialect().in_integers("t.seq", "?1");
    load_tasks(session, &filter, "t.seq", &[list.into()])
}

/// What a claim reads in one statement: the first task its filter holds
/// (locked when the order says so), where it goes, and whether a lease ran out.
pub struct Claimable {
    pub task: Task,
    /// The position at the end of the column the task moves to.
    pub end: f64,
    /// Whether some lease (on any task) ran out before the claim's time.
    pub lease_expired: bool,
}

/// The first task `filter` holds in `order` (which may lock it), with the
/// position at the end of `end_of` and whether a lease ran out before `now`,
/// read in the same statement: a claim's one round trip to find its task.
pub fn load_claimable(
    session: &Session,
    filter: &str,
    order: &str,
    parameters: &[Value],
    end_of: Status,
    now: &str,
) -> Result<Option<Claimable>, StoreError> {
    let mut bound = parameters.to_vec();
    bound.push(end_of.as_str().into());
    bound.push(now.into());
    let sql = format!(
        "SELECT {}, t.description, ({}), {} FROM {TASKS} WHERE {filter} ORDER BY {order}",
        row_columns(session.dialect()),
        renumbered(LAST_POSITION, parameters.len()),
        renumbered(LEASE_EXPIRED, parameters.len() + 1)
    );
    let Some(row) = session.query_opt(&sql, &bound)? else {
        return Ok(None);
    };
    Ok(Some(Claimable {
        end: after_last(row.opt_real(DESCRIPTION_INDEX + 1)?),
        lease_expired: row.int(DESCRIPTION_INDEX + 2)? == 1,
        task: task_from_row(&row)?,
    }))
}

/// Cards matching `filter`, in `order`: the description is never read.
pub fn load_cards(
    session: &Session,
    filter: &str,
    order: &str,
    parameters: &[Value],
) -> Result<Vec<Card>, StoreError> {
    let sql = format!(
        "SELECT {} FROM {TASKS} WHERE {filter} ORDER BY {order}",
        row_columns(session.dialect())
    );
    Ok(query_tasks(session, &sql, parameters)?
        .into_iter()
        .map(Card::from)
        .collect())
}

/// How many tasks `filter` (over `t`, the tasks) holds, counted no further
/// than `up_to`, read in `order`: the order of the index that should serve
/// it, so the planner takes that one even with statistics that have not yet
/// seen the column fill.
pub fn count_tasks(
    session: &Session,
    filter: &str,
    order: &str,
    parameters: &[Value],
    up_to: u32,
) -> Result<i64, StoreError> {
    let mut bound = parameters.to_vec();
    bound.push(i64::from(up_to).into());
    let sql = format!(
        "SELECT count(*) FROM (SELECT 1 FROM tasks t WHERE {filter} ORDER BY {order} LIMIT ?{}) AS counted",
        bound.len()
    );
    Ok(session.query_one(&sql, &bound)?.int(0)?)
}

fn query_tasks(
    session: &Session,
    sql: &str,
    parameters: &[Value],
) -> Result<Vec<Task>, StoreError> {
    session
        .query(sql, parameters)?
        .iter()
        .map(|row| task_from_row(row).map_err(StoreError::from))
        .collect()
}

/// Writes every column of `task` (by its sequence number), except dependencies.
pub fn save_task(session: &Session, seq: i64, task: &Task) -> Result<(), StoreError> {
    session.execute_together(task_writes(seq, task))
}

/// A change to a task: every column of its row and its history entries
/// (at the task's version), together: one round trip to a team database.
pub fn save_change(
    session: &Session,
    seq: i64,
    task: &Task,
    by: &Author,
    at: &str,
    changes: &[Change],
) -> Result<(), StoreError> {
    let mut writes = task_writes(seq, task);
    writes.extend(history_write(seq, by, task.version, at, changes));
    session.execute_together(writes)
}

/// The writes of [`save_task`]: the row, then its lease.
fn task_writes(seq: i64, task: &Task) -> Vec<Write> {
    let labels = serde_json::to_string(&task.labels).unwrap_or_else(|_| "[]".into());
    let references = serde_json::to_string(&task.references).unwrap_or_else(|_| "[]".into());
    let row = Write {
        sql: "INSERT INTO tasks (seq, title, description, status, kind, priority, swimlane, epic, labels, appetite,
                            refs, assignee, position, version, created_at, started_at, completed_at, updated_at, updated_by)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
         ON CONFLICT(seq) DO UPDATE SET
            title = excluded.title, description = excluded.description, status = excluded.status,
            kind = excluded.kind, priority = excluded.priority, swimlane = excluded.swimlane,
            epic = excluded.epic, labels = excluded.labels, appetite = excluded.appetite, refs = excluded.refs,
            assignee = excluded.assignee, position = excluded.position, version = excluded.version,
            created_at = excluded.created_at, started_at = excluded.started_at,
            completed_at = excluded.completed_at, updated_at = excluded.updated_at, updated_by = excluded.updated_by"
            .into(),
        parameters: vec![
            seq.into(),
            (&task.title).into(),
            (&task.description).into(),
            task.status.as_str().into(),
            task.kind.as_str().into(),
            task.priority.as_str().into(),
            (&task.swimlane).into(),
            task.epic.clone().into(),
            labels.into(),
            task.appetite.clone().into(),
            references.into(),
            task.assignee.clone().into(),
            task.position.into(),
            task.version.into(),
            (&task.created_at).into(),
            task.started_at.clone().into(),
            task.completed_at.clone().into(),
            (&task.updated_at).into(),
            (&task.updated_by).into(),
        ],
    };
    vec![row, lease_write(seq, task.lease.as_ref())]
}

fn lease_write(seq: i64, lease: Option<&Lease>) -> Write {
    match lease {
        None => Write {
            sql: "DELETE FROM task_leases WHERE task = ?1".into(),
            parameters: vec![seq.into()],
        },
        Some(lease) => Write {
            sql: "INSERT INTO task_leases(task, holder, expires_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(task) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at"
                .into(),
            parameters: vec![seq.into(), (&lease.holder).into(), (&lease.expires_at).into()],
        },
    }
}

/// The tasks whose lease ran out before `now`, by number.
pub fn expired_leases(session: &Session, now: &str) -> Result<Vec<i64>, StoreError> {
    session
        .query(
            "SELECT task FROM task_leases WHERE expires_at <= ?1 ORDER BY task",
            &[now.into()],
        )?
        .iter()
        .map(|row| Ok(row.int(0)?))
        .collect()
}

/// Whether some lease ran out before `now`. The earliest expiry is read
/// from its index, however few rows the planner believes the table holds.
pub fn has_expired_lease(session: &Session, now: &str) -> Result<bool, StoreError> {
    Ok(session
        .query_one(&format!("SELECT {LEASE_EXPIRED}"), &[now.into()])?
        .int(0)?
        == 1)
}

/// 1 when some lease ran out before `?1`, else 0.
const LEASE_EXPIRED: &str =
    "CASE WHEN (SELECT min(expires_at) FROM task_leases) <= ?1 THEN 1 ELSE 0 END";

/// Reserves the next task number (never reused: SQLite's AUTOINCREMENT and
/// the team database's `board_sequence` remember the highest).
pub fn next_seq(session: &Session) -> Result<i64, StoreError> {
    let sql = match session.dialect() {
        Dialect::Sqlite => {
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'tasks'), 0),
                        coalesce((SELECT max(seq) FROM tasks), 0)) + 1"
        }
        Dialect::Postgres => {
            "UPDATE board_sequence SET last = greatest(last, (SELECT coalesce(max(seq), 0) FROM tasks)) + 1
             WHERE id = 1 RETURNING last"
        }
    };
    Ok(session.query_one(sql, &[])?.int(0)?)
}

pub fn task_exists(session: &Session, seq: i64) -> Result<bool, StoreError> {
    Ok(session
        .query_opt("SELECT 1 FROM tasks WHERE seq = ?1", &[seq.into()])?
        .is_some())
}

pub fn set_dependencies(session: &Session, seq: i64, depends_on: &[i64]) -> Result<(), StoreError> {
    session.execute(
        "DELETE FROM task_dependencies WHERE task = ?1",
        &[seq.into()],
    )?;
    for dependency in depends_on {
        session.execute(
            "INSERT INTO task_dependencies(task, depends_on) VALUES (?1, ?2)",
            &[seq.into(), (*dependency).into()],
        )?;
    }
    Ok(())
}

/// Direct dependencies of every task, as an adjacency list.
pub fn dependency_edges(session: &Session) -> Result<Vec<(i64, i64)>, StoreError> {
    session
        .query("SELECT task, depends_on FROM task_dependencies", &[])?
        .iter()
        .map(|row| Ok((row.int(0)?, row.int(1)?)))
        .collect()
}

/// One history entry.
pub struct Change<'a> {
    pub field: &'a str,
    pub old: Json,
    pub new: Json,
}

/// Who writes a change: the actor (`kind:id`), the door it came through,
/// and the authenticated user the actor acts for, when the hub has users.
pub struct Author {
    pub actor: String,
    pub source: &'static str,
    pub user: Option<String>,
}

pub fn append_history(
    session: &Session,
    seq: i64,
    by: &Author,
    version: i64,
    at: &str,
    changes: &[Change],
) -> Result<(), StoreError> {
    session.execute_together(
        history_write(seq, by, version, at, changes)
            .into_iter()
            .collect(),
    )
}

/// The write of [`append_history`]; none for no change.
fn history_write(
    seq: i64,
    by: &Author,
    version: i64,
    at: &str,
    changes: &[Change],
) -> Option<Write> {
    if changes.is_empty() {
        return None;
    }
    // one statement for every entry of a change: one round trip to a team database
    let mut parameters: Vec<Value> = vec![
        seq.into(),
        at.into(),
        (&by.actor).into(),
        by.source.into(),
        version.into(),
        by.user.clone().into(),
    ];
    let mut rows = Vec::with_capacity(changes.len());
    for change in changes {
        let n = parameters.len();
        rows.push(format!(
            "(?1, ?2, ?3, ?4, ?{}, ?{}, ?{}, ?5, ?6)",
            n + 1,
            n + 2,
            n + 3
        ));
        parameters.push(change.field.into());
        parameters.push(
            (!change.old.is_null())
                .then(|| change.old.to_string())
                .into(),
        );
        parameters.push(
            (!change.new.is_null())
                .then(|| change.new.to_string())
                .into(),
        );
    }
    Some(Write {
        sql: format!(
            "INSERT INTO task_history(task, at, actor, source, field, old_value, new_value, version, user_name)
             VALUES {}",
            rows.join(", ")
        ),
        parameters,
    })
}

/// Swimlanes the board knows beyond the configured ones (added by import).
pub fn extra_swimlanes(session: &Session) -> Result<Vec<String>, StoreError> {
    session
        .query("SELECT name FROM board_swimlanes ORDER BY name", &[])?
        .iter()
        .map(|row| Ok(row.text(0)?))
        .collect()
}

pub fn add_swimlane(session: &Session, name: &str) -> Result<bool, StoreError> {
    Ok(session.execute(
        "INSERT INTO board_swimlanes(name) VALUES (?1) ON CONFLICT DO NOTHING",
        &[name.into()],
    )? > 0)
}

/// The position after the last card of `status`.
pub fn end_position(session: &Session, status: Status) -> Result<f64, StoreError> {
    let last = session.query_one(
        &format!("SELECT ({LAST_POSITION})"),
        &[status.as_str().into()],
    )?;
    Ok(after_last(last.opt_real(0)?))
}

/// The last position in column `?1`, read off the column's index: a planner
/// that still takes the column for empty (statistics older than a burst of
/// moves) would otherwise read all of it for max().
const LAST_POSITION: &str =
    "SELECT e.position FROM tasks e WHERE e.status = ?1 ORDER BY e.position DESC LIMIT 1";

/// The position after `last`, the last in a column (none when it is empty).
fn after_last(last: Option<f64>) -> f64 {
    last.unwrap_or(0.0) + 1.0
}

/// Moves the board's revision for a change its tables' triggers do not see
/// (its settings, set in a team database).
pub fn bump_revision(session: &Session) -> Result<(), StoreError> {
    session
        .execute(
            "UPDATE board_revision SET revision = revision + 1 WHERE id = 1",
            &[],
        )
        .map(|_| ())
}

/// The board's revision: bumped by triggers inside every writing transaction.
pub fn board_revision(session: &Session) -> Result<i64, StoreError> {
    Ok(session
        .query_one("SELECT revision FROM board_revision WHERE id = 1", &[])?
        .int(0)?)
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
pub fn respace(session: &Session, column: &[Card]) -> Result<(), StoreError> {
    for (index, card) in column.iter().enumerate() {
        session.execute(
            "UPDATE tasks SET position = ?1 WHERE seq = ?2",
            &[
                (index as f64).into(),
                super::model::sequence_of(&card.id).into(),
            ],
        )?;
    }
    Ok(())
}

/// Tasks in `status`.
pub fn count_in(session: &Session, status: Status) -> Result<u32, StoreError> {
    let count = session
        .query_one(
            "SELECT count(*) FROM tasks WHERE status = ?1",
            &[status.as_str().into()],
        )?
        .int(0)?;
    Ok(u32::try_from(count).unwrap_or(u32::MAX))
}

/// The most tasks any one assignee has in progress.
pub fn most_in_progress_per_assignee(session: &Session) -> Result<u32, StoreError> {
    let most = session
        .query_one(
            "SELECT coalesce(max(n), 0) FROM
                 (SELECT count(*) AS n FROM tasks WHERE status = 'in_progress' GROUP BY assignee) AS per_assignee",
            &[],
        )?
        .int(0)?;
    Ok(u32::try_from(most).unwrap_or(u32::MAX))
}

/// Entries of task `seq`, newest first, from `start` on.
pub fn history_page(
    session: &Session,
    seq: i64,
    start: usize,
    limit: u32,
) -> Result<(Vec<HistoryEntry>, u64), StoreError> {
    let total = session
        .query_one(
            "SELECT count(*) FROM task_history WHERE task = ?1",
            &[seq.into()],
        )?
        .int(0)?;
    let parse = |text: Option<String>| text.and_then(|t| serde_json::from_str(&t).ok());
    let entries = session
        .query(
            "SELECT at, actor, source, field, old_value, new_value, version, user_name FROM task_history
             WHERE task = ?1 ORDER BY id DESC LIMIT ?2 OFFSET ?3",
            &[seq.into(), limit.into(), (start as i64).into()],
        )?
        .iter()
        .map(|row| {
            Ok(HistoryEntry {
                at: row.text(0)?,
                actor: row.text(1)?,
                source: row.text(2)?,
                field: row.text(3)?,
                old: parse(row.opt_text(4)?),
                new: parse(row.opt_text(5)?),
                version: row.int(6)?,
                user: row.opt_text(7)?,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    Ok((entries, total as u64))
}

/// Every task's number and version (bumped by each change to it), by number:
/// what areas that follow the board, such as search, compare.
pub fn task_versions(session: &Session) -> Result<Vec<(i64, i64)>, StoreError> {
    session
        .query("SELECT seq, version FROM tasks ORDER BY seq", &[])?
        .iter()
        .map(|row| Ok((row.int(0)?, row.int(1)?)))
        .collect()
}
