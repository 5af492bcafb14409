//! A transaction on either database as the areas that can live in a team
//! database see it: statements with [`Value`] parameters answering [`Row`]s,
//! prepared once per connection on both sides.

use rusqlite::Connection;
use rusqlite::types::{ToSqlOutput, ValueRef};

use super::StoreError;
use super::pg::PgSession;
use super::sql::{Dialect, Row, Value, Write, renumbered};

/// One open transaction (or, on SQLite, a connection inside one).
pub enum Session<'c> {
    Sqlite(&'c Connection),
    Postgres(PgSession<'c>),
}

impl Session<'_> {
    pub fn dialect(&self) -> Dialect {
        match self {
            Session::Sqlite(_) => Dialect::Sqlite,
            Session::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Every row `sql` answers.
    pub fn query(&self, sql: &str, parameters: &[Value]) -> Result<Vec<Row>, StoreError> {
        match self {
            Session::Sqlite(connection) => sqlite_query(connection, sql, parameters)
                .map_err(|error| StoreError::on(connection, error)),
            Session::Postgres(session) => session.query(sql, parameters),
        }
    }

    /// The first row `sql` answers, if any.
    pub fn query_opt(&self, sql: &str, parameters: &[Value]) -> Result<Option<Row>, StoreError> {
        Ok(self.query(sql, parameters)?.into_iter().next())
    }

    /// The first row `sql` answers; [`StoreError::NoRows`] when there is none.
    pub fn query_one(&self, sql: &str, parameters: &[Value]) -> Result<Row, StoreError> {
        self.query_opt(sql, parameters)?.ok_or(StoreError::NoRows)
    }

    /// Runs `sql`, answering how many rows it changed.
    pub fn execute(&self, sql: &str, parameters: &[Value]) -> Result<u64, StoreError> {
        match self {
            Session::Sqlite(connection) => {
                let run = || -> rusqlite::Result<usize> {
                    connection
                        .prepare_cached(sql)?
                        .execute(rusqlite::params_from_iter(parameters))
                };
                run()
                    .map(|changed| changed as u64)
                    .map_err(|error| StoreError::on(connection, error))
            }
            Session::Postgres(session) => session.execute(sql, parameters),
        }
    }

    /// Runs `write` as the transaction's last: on a team database it goes
    /// with the `COMMIT`, one round trip for both (once per transaction:
    /// a second one runs at once); on SQLite at once.
    pub fn execute_at_commit(&self, write: Write) -> Result<(), StoreError> {
        match self {
            Session::Postgres(session) => session.execute_at_commit(write),
            Session::Sqlite(_) => self.execute(&write.sql, &write.parameters).map(|_| ()),
        }
    }

    /// Runs `writes`, none of which may read or change what another of them
    /// writes: on a team database as one statement (each a part of one
    /// `WITH`), so one round trip; on SQLite one after another.
    pub fn execute_together(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        match (self, writes.len()) {
            (_, 0) => Ok(()),
            (Session::Postgres(session), 2..) => {
                let (sql, parameters) = together(writes);
                session.execute(&sql, &parameters).map(|_| ())
            }
            _ => writes
                .iter()
                .try_for_each(|write| self.execute(&write.sql, &write.parameters).map(|_| ())),
        }
    }
}

/// `writes` as one statement: all but the last as parts of its `WITH`
/// (which PostgreSQL runs whether or not they are named again), their
/// parameters numbered on from one another's.
fn together(writes: Vec<Write>) -> (String, Vec<Value>) {
    let mut parts = Vec::with_capacity(writes.len());
    let mut parameters = Vec::new();
    for write in writes {
        parts.push(renumbered(&write.sql, parameters.len()));
        parameters.extend(write.parameters);
    }
    let last = parts.pop().unwrap_or_default();
    let with: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(index, part)| format!("w{index} AS ({part})"))
        .collect();
    (format!("WITH {} {last}", with.join(", ")), parameters)
}

fn sqlite_query(
    connection: &Connection,
    sql: &str,
    parameters: &[Value],
) -> rusqlite::Result<Vec<Row>> {
    let mut statement = connection.prepare_cached(sql)?;
    let width = statement.column_count();
    let mut rows = statement.query(rusqlite::params_from_iter(parameters))?;
    let mut answer = Vec::new();
    while let Some(row) = rows.next()? {
        let mut values = Vec::with_capacity(width);
        for index in 0..width {
            values.push(match row.get_ref(index)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(value) => Value::Int(value),
                ValueRef::Real(value) => Value::Real(value),
                ValueRef::Text(text) => Value::Text(String::from_utf8_lossy(text).into_owned()),
                ValueRef::Blob(bytes) => Value::Blob(bytes.to_vec()),
            });
        }
        answer.push(Row(values));
    }
    Ok(answer)
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(value) => ToSqlOutput::Borrowed(ValueRef::Integer(*value)),
            Value::Real(value) => ToSqlOutput::Borrowed(ValueRef::Real(*value)),
            Value::Text(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Value::Blob(bytes) => ToSqlOutput::Borrowed(ValueRef::Blob(bytes)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_together_are_one_statement_numbering_parameters_on() {
        let (sql, parameters) = together(vec![
            Write {
                sql: "INSERT INTO a VALUES (?1, '?2')".into(),
                parameters: vec![1i64.into()],
            },
            Write {
                sql: "UPDATE b SET x = ?2 WHERE y = ?1".into(),
                parameters: vec![2i64.into(), 3i64.into()],
            },
        ]);
        assert_eq!(
            sql,
            "WITH w0 AS (INSERT INTO a VALUES (?1, '?2')) UPDATE b SET x = ?3 WHERE y = ?2"
        );
        assert_eq!(parameters.len(), 3);
    }

    #[test]
    fn sqlite_runs_writes_together_one_after_another() {
        let connection = Connection::open_in_memory().unwrap();
        let session = Session::Sqlite(&connection);
        session.execute("CREATE TABLE t (a INTEGER)", &[]).unwrap();
        let write = |a: i64| Write {
            sql: "INSERT INTO t VALUES (?1)".into(),
            parameters: vec![a.into()],
        };
        session.execute_together(vec![write(1), write(2)]).unwrap();
        let row = session.query_one("SELECT sum(a) FROM t", &[]).unwrap();
        assert_eq!(row.int(0).unwrap(), 3);
    }

    #[test]
    fn sqlite_statements_take_values_and_answer_rows() {
        let connection = Connection::open_in_memory().unwrap();
        let session = Session::Sqlite(&connection);
        session
            .execute("CREATE TABLE t (a INTEGER, b REAL, c TEXT, d BLOB)", &[])
            .unwrap();
        let changed = session
            .execute(
                "INSERT INTO t VALUES (?1, ?2, ?3, ?4)",
                &[7i64.into(), 1.5.into(), "x".into(), Value::Blob(vec![1, 2])],
            )
            .unwrap();
        assert_eq!(changed, 1);
        let row = session
            .query_one(
                "SELECT a, b, c, d, NULL FROM t WHERE a = ?1",
                &[7i64.into()],
            )
            .unwrap();
        assert_eq!(row.int(0).unwrap(), 7);
        assert_eq!(row.real(1).unwrap(), 1.5);
        assert_eq!(row.text(2).unwrap(), "x");
        assert_eq!(row.opt_blob(3).unwrap(), Some(vec![1, 2]));
        assert_eq!(row.opt_int(4).unwrap(), None);
        assert!(
            session
                .query_one("SELECT a FROM t WHERE a = 8", &[])
                .unwrap_err()
                .is_no_rows()
        );
    }
}
