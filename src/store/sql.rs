//! SQL that runs on either database: the values a statement takes and a row
//! gives back, and the statement text in each dialect. Statements are
//! written once with SQLite's numbered placeholders (`?1`, `?2`); the
//! PostgreSQL side renumbers them to `$1`, `$2`.

use std::fmt;

/// A value bound to a statement or read from a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl From<i64> for Value {
    fn from(value: i64) -> Value {
        Value::Int(value)
    }
}

impl From<u32> for Value {
    fn from(value: u32) -> Value {
        Value::Int(i64::from(value))
    }
}

impl From<f64> for Value {
    fn from(value: f64) -> Value {
        Value::Real(value)
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Value {
        Value::Text(value.to_string())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Value {
        Value::Text(value)
    }
}

impl From<&String> for Value {
    fn from(value: &String) -> Value {
        Value::Text(value.clone())
    }
}

impl From<Vec<u8>> for Value {
    fn from(value: Vec<u8>) -> Value {
        Value::Blob(value)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Value {
        value.map_or(Value::Null, Into::into)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => formatter.write_str("null"),
            Value::Int(value) => write!(formatter, "{value}"),
            Value::Real(value) => write!(formatter, "{value}"),
            Value::Text(_) => formatter.write_str("text"),
            Value::Blob(bytes) => write!(formatter, "{} bytes", bytes.len()),
        }
    }
}

/// A column whose value is not of the type the reader expects.
#[derive(Debug, thiserror::Error)]
#[error("column {index} holds {found}, expected {expected}")]
pub struct ColumnError {
    pub index: usize,
    pub expected: &'static str,
    pub found: String,
}

/// One row of an answer, its columns in the statement's order.
#[derive(Debug, Clone, Default)]
pub struct Row(pub Vec<Value>);

impl Row {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn at(&self, index: usize, expected: &'static str) -> Result<&Value, ColumnError> {
        self.0.get(index).ok_or(ColumnError {
            index,
            expected,
            found: "no such column".into(),
        })
    }

    fn wrong(index: usize, expected: &'static str, found: &Value) -> ColumnError {
        ColumnError {
            index,
            expected,
            found: found.to_string(),
        }
    }

    pub fn opt_int(&self, index: usize) -> Result<Option<i64>, ColumnError> {
        match self.at(index, "an integer")? {
            Value::Null => Ok(None),
            Value::Int(value) => Ok(Some(*value)),
            other => Err(Row::wrong(index, "an integer", other)),
        }
    }

    pub fn int(&self, index: usize) -> Result<i64, ColumnError> {
        self.opt_int(index)?
            .ok_or_else(|| Row::wrong(index, "an integer", &Value::Null))
    }

    pub fn opt_real(&self, index: usize) -> Result<Option<f64>, ColumnError> {
        match self.at(index, "a number")? {
            Value::Null => Ok(None),
            Value::Real(value) => Ok(Some(*value)),
            Value::Int(value) => Ok(Some(*value as f64)),
            other => Err(Row::wrong(index, "a number", other)),
        }
    }

    pub fn real(&self, index: usize) -> Result<f64, ColumnError> {
        self.opt_real(index)?
            .ok_or_else(|| Row::wrong(index, "a number", &Value::Null))
    }

    pub fn opt_text(&self, index: usize) -> Result<Option<String>, ColumnError> {
        match self.at(index, "text")? {
            Value::Null => Ok(None),
            Value::Text(value) => Ok(Some(value.clone())),
            other => Err(Row::wrong(index, "text", other)),
        }
    }

    pub fn text(&self, index: usize) -> Result<String, ColumnError> {
        self.opt_text(index)?
            .ok_or_else(|| Row::wrong(index, "text", &Value::Null))
    }

    pub fn opt_blob(&self, index: usize) -> Result<Option<Vec<u8>>, ColumnError> {
        match self.at(index, "bytes")? {
            Value::Null => Ok(None),
            Value::Blob(value) => Ok(Some(value.clone())),
            Value::Text(value) => Ok(Some(value.clone().into_bytes())),
            other => Err(Row::wrong(index, "bytes", other)),
        }
    }
}

/// A write nobody needs the changed-row count of, to run with others.
pub struct Write {
    pub sql: String,
    pub parameters: Vec<Value>,
}

/// Which database a statement is for, where their SQL differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// `expression`'s values over a group joined by commas, as text.
    pub fn joined(self, expression: &str) -> String {
        match self {
            Dialect::Sqlite => format!("group_concat({expression})"),
            Dialect::Postgres => format!("string_agg(({expression})::text, ',')"),
        }
    }

    /// True when `needle` (a bound parameter) occurs in the text `haystack`.
    pub fn contains(self, haystack: &str, needle: &str) -> String {
        match self {
            Dialect::Sqlite => format!("instr({haystack}, {needle}) > 0"),
            Dialect::Postgres => format!("strpos({haystack}, {needle}) > 0"),
        }
    }

    /// True when the JSON array of strings in `column` holds `value`.
    pub fn json_array_holds(self, column: &str, value: &str) -> String {
        match self {
            Dialect::Sqlite => {
                format!("EXISTS (SELECT 1 FROM json_each({column}) WHERE value = {value})")
            }
            Dialect::Postgres => format!(
                "EXISTS (SELECT 1 FROM jsonb_array_elements_text(({column})::jsonb) AS e(v) WHERE e.v = {value})"
            ),
        }
    }

    /// True when the integer `column` is one of the JSON array of integers
    /// `list` (a bound parameter, as text): many keys in one statement.
    pub fn in_integers(self, column: &str, list: &str) -> String {
        match self {
            Dialect::Sqlite => format!("{column} IN (SELECT value FROM json_each({list}))"),
            Dialect::Postgres => format!(
                "{column} IN (SELECT (jsonb_array_elements_text(CAST({list} AS text)::jsonb))::bigint)"
            ),
        }
    }

    /// The clause ending a query that locks the rows of `table` (an alias)
    /// it returns, passing over rows another transaction holds: what a
    /// write beside others takes. Empty in SQLite, whose writer is alone.
    pub fn lock_skipping_locked(self, table: &str) -> String {
        match self {
            Dialect::Sqlite => String::new(),
            Dialect::Postgres => format!(" FOR UPDATE OF {table} SKIP LOCKED"),
        }
    }
}

/// `text` without U+0000, each replaced by U+FFFD (as CommonMark does):
/// PostgreSQL's text cannot hold it.
pub fn without_nul(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        std::borrow::Cow::Owned(text.replace('\0', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// `sql` with every `?N` placeholder (outside quotes) moved on by `offset`.
pub fn renumbered(sql: &str, offset: usize) -> String {
    if offset == 0 {
        return sql.to_string();
    }
    let moved = with_placeholders(sql, |number| {
        Some(match number {
            Some(number) => format!("?{}", number + offset),
            None => "?".to_string(),
        })
    });
    moved.unwrap_or_else(|| sql.to_string())
}

/// `sql` with its `?N` placeholders (outside quotes) replaced by
/// `parameters` written as PostgreSQL literals, for a statement sent as
/// text beside another (its `COMMIT`). `None` when a value has no literal
/// kept here (a real number, bytes, text holding a NUL) or a placeholder
/// has no value.
pub fn inlined(sql: &str, parameters: &[Value]) -> Option<String> {
    with_placeholders(sql, |number| {
        match parameters.get(number?.checked_sub(1)?)? {
            Value::Null => Some("NULL".to_string()),
            // in parentheses, so a minus never meets another as `--`, a comment
            Value::Int(value) if *value < 0 => Some(format!("({value})")),
            Value::Int(value) => Some(value.to_string()),
            Value::Text(text) if !text.contains('\0') => {
                Some(postgres_protocol::escape::escape_literal(text))
            }
            _ => None,
        }
    })
}

/// `sql` with SQLite's `?N` placeholders written as PostgreSQL's `$N`;
/// quoted strings and identifiers are left as they are.
pub fn for_postgres(sql: &str) -> String {
    let written = with_placeholders(sql, |number| {
        Some(number.map_or_else(|| "$".to_string(), |number| format!("${number}")))
    });
    written.unwrap_or_else(|| sql.to_string())
}

/// `sql` with each placeholder outside quotes (`?N`, or a bare `?` as
/// `None`, digits too many for a number kept after it) replaced by what
/// `replace` makes of it; `None` as soon as `replace` has nothing for one.
fn with_placeholders(
    sql: &str,
    mut replace: impl FnMut(Option<usize>) -> Option<String>,
) -> Option<String> {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut quote: Option<char> = None;
    let mut characters = sql.chars().peekable();
    while let Some(character) = characters.next() {
        match quote {
            Some(open) if character == open => quote = None,
            Some(_) => {}
            None if character == '\'' || character == '"' => quote = Some(character),
            None if character == '?' => {
                let mut digits = String::new();
                while let Some(digit) = characters.next_if(char::is_ascii_digit) {
                    digits.push(digit);
                }
                match digits.parse::<usize>() {
                    Ok(number) => out.push_str(&replace(Some(number))?),
                    Err(_) => {
                        out.push_str(&replace(None)?);
                        out.push_str(&digits);
                    }
                }
                continue;
            }
            None => {}
        }
        out.push(character);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_in_as_literals_outside_quotes_only() {
        let parameters = [
            Value::Text("it's".into()),
            Value::Int(-3),
            Value::Null,
            Value::Text("a\\b".into()),
        ];
        assert_eq!(
            inlined("VALUES (?1, ?2, ?3, '?1', ?4)", &parameters).as_deref(),
            Some("VALUES ('it''s', (-3), NULL, '?1',  E'a\\\\b')")
        );
        assert_eq!(
            inlined("SET n = n-?1", &[Value::Int(-3)]).as_deref(),
            Some("SET n = n-(-3)"),
            "never a comment"
        );
        assert_eq!(inlined("VALUES (?5)", &parameters), None);
        assert_eq!(inlined("VALUES (?0)", &parameters), None);
        assert_eq!(inlined("VALUES (?1)", &[Value::Real(1.5)]), None);
        assert_eq!(inlined("VALUES (?1)", &[Value::Text("a\0b".into())]), None);
    }

    #[test]
    fn placeholders_move_on_outside_quotes_only() {
        assert_eq!(
            renumbered("a = ?1 AND b = '?1' AND c = ?12 AND \"?3\" = ?", 4),
            "a = ?5 AND b = '?1' AND c = ?16 AND \"?3\" = ?"
        );
        assert_eq!(renumbered("x = ?2", 0), "x = ?2");
        let huge = "x = ?99999999999999999999999";
        assert_eq!(
            renumbered(huge, 1),
            huge,
            "digits past a number stay as written"
        );
    }

    #[test]
    fn placeholders_are_written_for_postgres_outside_quotes_only() {
        assert_eq!(
            for_postgres("SELECT '?1', \"a?\" FROM t WHERE a = ?1 AND b = ?12 AND c = ?"),
            "SELECT '?1', \"a?\" FROM t WHERE a = $1 AND b = $12 AND c = $"
        );
    }

    #[test]
    fn rows_read_the_type_asked_for_and_name_the_column_otherwise() {
        let row = Row(vec![Value::Int(3), Value::Null, Value::Text("x".into())]);
        assert_eq!(row.int(0).unwrap(), 3);
        assert_eq!(row.real(0).unwrap(), 3.0);
        assert_eq!(row.opt_text(1).unwrap(), None);
        assert_eq!(row.text(2).unwrap(), "x");
        let wrong = row.int(2).unwrap_err();
        assert_eq!((wrong.index, wrong.expected), (2, "an integer"));
        assert!(row.text(1).is_err(), "null where text is required");
        assert!(row.int(7).is_err(), "past the last column");
    }
}
