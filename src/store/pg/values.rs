//! [`Value`]s bound to PostgreSQL statements and read from its rows: a
//! value takes the type the server infers for its placeholder (an integer
//! bound where text is expected is written as text, a NUL in text as
//! U+FFFD), so one statement text serves both databases.

use std::error::Error;

use bytes::BytesMut;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use crate::store::StoreError;
use crate::store::sql::{ColumnError, Row, Value, without_nul};

type Boxed = Box<dyn Error + Sync + Send>;

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Boxed> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(value) => int_to_sql(*value, ty, out),
            Value::Real(value) => match *ty {
                Type::FLOAT4 => (*value as f32).to_sql(ty, out),
                Type::FLOAT8 => value.to_sql(ty, out),
                _ => value.to_string().to_sql(&Type::TEXT, out),
            },
            Value::Text(text) => match *ty {
                Type::INT8 | Type::INT4 | Type::INT2 => int_to_sql(text.parse()?, ty, out),
                Type::JSONB => {
                    out.extend_from_slice(&[1]);
                    out.extend_from_slice(text.as_bytes());
                    Ok(IsNull::No)
                }
                _ => without_nul(text).as_ref().to_sql(&Type::TEXT, out),
            },
            Value::Blob(bytes) => bytes.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn int_to_sql(value: i64, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Boxed> {
    match *ty {
        Type::INT8 => value.to_sql(ty, out),
        Type::INT4 => i32::try_from(value)?.to_sql(ty, out),
        Type::INT2 => i16::try_from(value)?.to_sql(ty, out),
        Type::FLOAT8 => (value as f64).to_sql(ty, out),
        Type::FLOAT4 => (value as f32).to_sql(ty, out),
        Type::BOOL => (value != 0).to_sql(ty, out),
        _ => value.to_string().as_str().to_sql(&Type::TEXT, out),
    }
}

/// The parameters as the driver takes them.
pub fn bind(parameters: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    parameters
        .iter()
        .map(|value| value as &(dyn ToSql + Sync))
        .collect()
}

/// A row's columns as values, by the type the server says each has.
pub fn row(row: &postgres::Row) -> Result<Row, StoreError> {
    let mut values = Vec::with_capacity(row.len());
    for (index, column) in row.columns().iter().enumerate() {
        let unreadable = |error: postgres::Error| ColumnError {
            index,
            expected: "a value of its declared type",
            found: error.to_string(),
        };
        let value = match *column.type_() {
            Type::INT8 => row.try_get::<_, Option<i64>>(index).map(|v| v.into()),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(index)
                .map(|v| v.map(i64::from).into()),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(index)
                .map(|v| v.map(i64::from).into()),
            Type::BOOL => row
                .try_get::<_, Option<bool>>(index)
                .map(|v| v.map(i64::from).into()),
            Type::FLOAT8 => row.try_get::<_, Option<f64>>(index).map(|v| v.into()),
            Type::FLOAT4 => row
                .try_get::<_, Option<f32>>(index)
                .map(|v| v.map(f64::from).into()),
            Type::BYTEA => row.try_get::<_, Option<Vec<u8>>>(index).map(|v| v.into()),
            Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR | Type::UNKNOWN => {
                row.try_get::<_, Option<String>>(index).map(|v| v.into())
            }
            ref other => {
                return Err(ColumnError {
                    index,
                    expected: "an integer, a number, text or bytes",
                    found: format!("PostgreSQL type {other}"),
                }
                .into());
            }
        };
        values.push(value.map_err(unreadable)?);
    }
    Ok(Row(values))
}
