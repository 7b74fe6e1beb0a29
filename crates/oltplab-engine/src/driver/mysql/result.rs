//! Rows kept as engine values, and `--db-ps-mode=disable`'s parameters printed into the text.

use std::fmt::Write as _;
use std::sync::Arc;

use mysql_common::constants::ColumnType;
use mysql_common::io::ParseBuf;
use mysql_common::packets::Column;
use mysql_common::proto::{Binary, Text};
use mysql_common::row::{Row, RowDeserializer};
use mysql_common::value::ServerSide;

use super::errors::Error;
use crate::db::Value;

/// A row packet as engine values (the binary protocol's after `COM_STMT_EXECUTE`, the text
/// protocol's after `COM_QUERY`), decoded by `mysql_common`'s value parsers.
pub fn decode_row(packet: &[u8], columns: &Arc<[Column]>, binary: bool) -> Result<Vec<Value>, Error> {
    let row: Row = if binary {
        ParseBuf(packet).parse::<RowDeserializer<ServerSide, Binary>>(Arc::clone(columns)).map(Into::into)
    } else {
        ParseBuf(packet).parse::<RowDeserializer<(), Text>>(Arc::clone(columns)).map(Into::into)
    }
    .map_err(|e| Error::Protocol(format!("cannot read a row: {e}")))?;
    Ok(values_of(row))
}

/// A fetched row as engine values: integers as `Int` (the text protocol sends them as digits,
/// so the column type decides), everything else as its text.
fn values_of(row: Row) -> Vec<Value> {
    let columns = row.columns();
    row.unwrap().into_iter().zip(columns.iter()).map(|(v, c)| value_of(v, is_integer(c.column_type()))).collect()
}

fn is_integer(t: ColumnType) -> bool {
    matches!(
        t,
        ColumnType::MYSQL_TYPE_TINY
            | ColumnType::MYSQL_TYPE_SHORT
            | ColumnType::MYSQL_TYPE_INT24
            | ColumnType::MYSQL_TYPE_LONG
            | ColumnType::MYSQL_TYPE_LONGLONG
            | ColumnType::MYSQL_TYPE_YEAR
    )
}

fn value_of(v: mysql_common::Value, integer_column: bool) -> Value {
    match v {
        mysql_common::Value::NULL => Value::Null,
        mysql_common::Value::Int(i) => Value::Int(i),
        mysql_common::Value::UInt(u) => i64::try_from(u).map_or_else(|_| Value::Text(u.to_string()), Value::Int),
        mysql_common::Value::Bytes(b) => {
            let text = String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            match text.parse::<i64>() {
                Ok(i) if integer_column => Value::Int(i),
                _ => Value::Text(text),
            }
        }
        mysql_common::Value::Float(f) => Value::Text(f.to_string()),
        mysql_common::Value::Double(f) => Value::Text(f.to_string()),
        // Dates and times as MySQL prints them, without the literal's quotes.
        other => Value::Text(other.as_sql(false).trim_matches('\'').to_string()),
    }
}

/// sysbench's client-side emulation (`--db-ps-mode=disable`): each `?` becomes the next
/// parameter printed as a literal, strings quoted and not escaped. Writes into `out`, a
/// buffer the connection reuses, so that no statement allocates.
pub fn inline_into(out: &mut String, sql: &str, params: &[Value]) {
    out.clear();
    let mut next = params.iter();
    let mut rest = sql;
    while let Some(at) = rest.find('?') {
        out.push_str(&rest[..at]);
        match next.next() {
            Some(v) => {
                let _ = write!(out, "{v}");
            }
            None => out.push('?'),
        }
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_printed_as_sysbench_prints_them() {
        let mut out = String::from("left over");
        let sql = "UPDATE sbtest1 SET c=? WHERE id=? AND k IS NOT ?";
        inline_into(&mut out, sql, &[Value::Text("1-2".into()), Value::Int(-7), Value::Null]);
        assert_eq!(out, "UPDATE sbtest1 SET c='1-2' WHERE id=-7 AND k IS NOT NULL");
        inline_into(&mut out, "SELECT ?, ?", &[Value::Int(1)]);
        assert_eq!(out, "SELECT 1, ?");
        inline_into(&mut out, "COMMIT", &[]);
        assert_eq!(out, "COMMIT");
    }

    #[test]
    fn values_keep_their_types() {
        assert_eq!(value_of(mysql_common::Value::Bytes(b"42".to_vec()), true), Value::Int(42));
        assert_eq!(value_of(mysql_common::Value::Bytes(b"42".to_vec()), false), Value::Text("42".into()));
        assert_eq!(value_of(mysql_common::Value::UInt(u64::MAX), true), Value::Text(u64::MAX.to_string()));
        assert_eq!(value_of(mysql_common::Value::Int(-3), true), Value::Int(-3));
        assert_eq!(value_of(mysql_common::Value::NULL, true), Value::Null);
        assert_eq!(
            value_of(mysql_common::Value::Date(2024, 2, 29, 13, 5, 0, 0), false),
            Value::Text("2024-02-29 13:05:00".into())
        );
    }
}
