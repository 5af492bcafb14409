//! Moving the shared state between databases: `cos database copy` takes the
//! tables areas name as theirs from one store (the hub's own, or a team
//! database) to another, row for row, so ids, positions, history and
//! revisions arrive as they were. The target must hold nothing yet; the
//! copy is one transaction there, so it lands whole or not at all. The
//! settings files a team shares go along: from the hub's state folder into
//! the team database's `shared_files`, or back into the folder once the
//! rows are in.

use std::path::Path;

use super::shared_files::{self, SharedFile};
use super::{Dialect, Session, SharedStore, StoreError, Value};

/// A table an area keeps in the shared state, in the order they are copied
/// (a table before those that refer to it).
#[derive(Debug, Clone, Copy)]
pub struct SharedTable {
    pub name: &'static str,
    /// A one-row counter its migration puts there (a revision): copied
    /// over the target's row instead of beside it, and no sign of content.
    pub counter: bool,
}

/// Rows copied, by table.
pub type CopyReport = Vec<(&'static str, usize)>;

#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error("the target already holds {rows} rows in {table}: copy only into an empty database")]
    NotEmpty { table: &'static str, rows: i64 },
    #[error("{path} exists and differs from the team's: move it away to copy the team's in")]
    FileDiffers { path: String },
    #[error("writing {path}: {source}")]
    File {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The settings files a copy moves: their names, and the state folder
/// holding the hub's own.
pub struct SharedFiles<'a> {
    pub names: &'a [&'static str],
    pub state_dir: &'a Path,
}

/// Copies every table of `tables` from `from` to `to`.
pub fn copy(
    from: &SharedStore,
    to: &SharedStore,
    tables: &[SharedTable],
    files: &SharedFiles,
) -> Result<CopyReport, CopyError> {
    let texts = read_files(from, files)?;
    let rows = from.view_at_once(|source| -> Result<_, StoreError> {
        tables
            .iter()
            .map(|table| {
                let columns = columns(source, table.name)?;
                let sql = format!("SELECT {} FROM {}", columns.join(", "), table.name);
                Ok((*table, columns, source.query(&sql, &[])?))
            })
            .collect::<Result<Vec<_>, StoreError>>()
    })?;
    to.write(|target| -> Result<CopyReport, CopyError> {
        for table in tables.iter().filter(|table| !table.counter) {
            let held = target
                .query_one(&format!("SELECT count(*) FROM {}", table.name), &[])?
                .int(0)
                .map_err(StoreError::from)?;
            if held > 0 {
                return Err(CopyError::NotEmpty {
                    table: table.name,
                    rows: held,
                });
            }
        }
        if target.dialect() == Dialect::Postgres {
            // triggers deferred to the commit would move counters (a
            // revision) after their rows are copied: they run as rows go in
            target.execute("SET CONSTRAINTS ALL IMMEDIATE", &[])?;
        }
        let mut report = Vec::new();
        for (table, columns, rows) in &rows {
            if table.counter {
                target.execute(&format!("DELETE FROM {}", table.name), &[])?;
            }
            let placeholders: Vec<String> = (1..=columns.len()).map(|n| format!("?{n}")).collect();
            let insert = format!(
                "INSERT INTO {} ({}) VALUES ({})",
                table.name,
                columns.join(", "),
                placeholders.join(", ")
            );
            for row in rows {
                target.execute(&insert, &row.0)?;
            }
            restart_serials(target, table.name)?;
            report.push((table.name, rows.len()));
        }
        if to.team().is_some() {
            put_rows(target, &texts, &mut report)?;
        } else {
            check_files(files.state_dir, &texts)?;
        }
        Ok(report)
    })
    .and_then(|mut report| {
        if to.team().is_none() {
            write_files(files.state_dir, &texts, &mut report)?;
        }
        Ok(report)
    })
}

/// The shared files `from` holds: the state folder's, or the team's rows.
fn read_files(
    from: &SharedStore,
    files: &SharedFiles,
) -> Result<Vec<(&'static str, String)>, CopyError> {
    if from.team().is_some() {
        let rows = from.view(shared_files::all)?;
        return Ok(files
            .names
            .iter()
            .filter_map(|name| {
                let (_, SharedFile { text, .. }) = rows.iter().find(|(held, _)| held == name)?;
                Some((*name, text.clone()))
            })
            .collect());
    }
    let mut texts = Vec::new();
    for name in files.names {
        let path = files.state_dir.join(name);
        match std::fs::read_to_string(&path) {
            Ok(text) => texts.push((*name, text)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(CopyError::File {
                    path: path.display().to_string(),
                    source,
                });
            }
        }
    }
    Ok(texts)
}

fn put_rows(
    target: &Session,
    texts: &[(&'static str, String)],
    report: &mut CopyReport,
) -> Result<(), CopyError> {
    let held = target
        .query_one("SELECT count(*) FROM shared_files", &[])?
        .int(0)
        .map_err(StoreError::from)?;
    if held > 0 {
        return Err(CopyError::NotEmpty {
            table: "shared_files",
            rows: held,
        });
    }
    let now = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    for (name, text) in texts {
        shared_files::write(target, name, text, &now)?;
        report.push((name, 1));
    }
    Ok(())
}

/// Refuses before anything is written when a file in the state folder
/// would be replaced by another text.
fn check_files(state_dir: &Path, texts: &[(&'static str, String)]) -> Result<(), CopyError> {
    for (name, text) in texts {
        let path = state_dir.join(name);
        if let Ok(held) = std::fs::read_to_string(&path)
            && held != *text
        {
            return Err(CopyError::FileDiffers {
                path: path.display().to_string(),
            });
        }
    }
    Ok(())
}

fn write_files(
    state_dir: &Path,
    texts: &[(&'static str, String)],
    report: &mut CopyReport,
) -> Result<(), CopyError> {
    for (name, text) in texts {
        let path = state_dir.join(name);
        let temporary = path.with_extension("copy.tmp");
        std::fs::write(&temporary, text)
            .and_then(|()| std::fs::rename(&temporary, &path))
            .map_err(|source| CopyError::File {
                path: path.display().to_string(),
                source,
            })?;
        report.push((name, 1));
    }
    Ok(())
}

/// The columns of `table`, in their order.
fn columns(session: &Session, table: &str) -> Result<Vec<String>, StoreError> {
    let (sql, index) = match session.dialect() {
        Dialect::Sqlite => ("SELECT name FROM pragma_table_info(?1) ORDER BY cid", 0),
        Dialect::Postgres => (
            "SELECT column_name::text FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = ?1 ORDER BY ordinal_position",
            0,
        ),
    };
    session
        .query(sql, &[Value::from(table)])?
        .iter()
        .map(|row| Ok(row.text(index)?))
        .collect()
}

/// On PostgreSQL, moves each serial column's sequence past the rows copied
/// in with their own numbers, so the next row gets a new one.
fn restart_serials(session: &Session, table: &str) -> Result<(), StoreError> {
    if session.dialect() != Dialect::Postgres {
        return Ok(());
    }
    let serials = session.query(
        "SELECT column_name::text FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = ?1 AND column_default LIKE 'nextval(%'",
        &[Value::from(table)],
    )?;
    for serial in serials {
        let column = serial.text(0)?;
        session.query(
            &format!(
                "SELECT setval(pg_get_serial_sequence(?1, ?2), coalesce((SELECT max({column}) FROM {table}), 0) + 1, false)"
            ),
            &[Value::from(table), Value::from(column.as_str())],
        )?;
    }
    Ok(())
}
