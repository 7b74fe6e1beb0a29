//! Parameters in, results out: sysbench's classification by result, the rows
//! read to the end (sysbench buffers every result), and `--db-ps-mode=disable`'s
//! parameters printed into the text.

use std::fmt::Write as _;

use mysql_async::consts::ColumnType;
use mysql_async::prelude::Protocol;
use mysql_async::{Params, Row};

use crate::db::{Fetch, QueryClass, QueryResult, Value};

/// Reads a statement's whole result. A result set (columns > 0) is a read, whatever
/// its row count; otherwise changed rows > 0 make a write, and the rest is "other".
pub async fn read<P: Protocol>(
    mut r: mysql_async::QueryResult<'_, 'static, P>,
    fetch: Fetch,
) -> mysql_async::Result<QueryResult> {
    if r.columns_ref().is_empty() {
        let affected = r.affected_rows();
        r.drop_result().await?;
        let class = if affected > 0 { QueryClass::Write } else { QueryClass::Other };
        return Ok(QueryResult { class, row_count: affected, rows: Vec::new() });
    }
    let mut out = QueryResult { class: QueryClass::Read, row_count: 0, rows: Vec::new() };
    // `next` stops at the end of the first result set; `drop_result` reads any further ones.
    while let Some(row) = r.next().await? {
        out.row_count += 1;
        if fetch == Fetch::Rows {
            out.rows.push(values_of(row));
        }
    }
    r.drop_result().await?;
    Ok(out)
}

/// The parameters of one execution, in the binary protocol's types.
pub fn params_of(values: &[Value]) -> Params {
    if values.is_empty() {
        return Params::Empty;
    }
    Params::Positional(
        values
            .iter()
            .map(|v| match v {
                Value::Null => mysql_async::Value::NULL,
                Value::Int(i) => mysql_async::Value::Int(*i),
                Value::Text(s) => mysql_async::Value::Bytes(s.as_bytes().to_vec()),
            })
            .collect(),
    )
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

fn value_of(v: mysql_async::Value, integer_column: bool) -> Value {
    match v {
        mysql_async::Value::NULL => Value::Null,
        mysql_async::Value::Int(i) => Value::Int(i),
        mysql_async::Value::UInt(u) => i64::try_from(u).map_or_else(|_| Value::Text(u.to_string()), Value::Int),
        mysql_async::Value::Bytes(b) => {
            let text = String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            match text.parse::<i64>() {
                Ok(i) if integer_column => Value::Int(i),
                _ => Value::Text(text),
            }
        }
        mysql_async::Value::Float(f) => Value::Text(f.to_string()),
        mysql_async::Value::Double(f) => Value::Text(f.to_string()),
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
        assert_eq!(value_of(mysql_async::Value::Bytes(b"42".to_vec()), true), Value::Int(42));
        assert_eq!(value_of(mysql_async::Value::Bytes(b"42".to_vec()), false), Value::Text("42".into()));
        assert_eq!(value_of(mysql_async::Value::UInt(u64::MAX), true), Value::Text(u64::MAX.to_string()));
        assert_eq!(value_of(mysql_async::Value::Int(-3), true), Value::Int(-3));
        assert_eq!(value_of(mysql_async::Value::NULL, true), Value::Null);
        assert_eq!(
            value_of(mysql_async::Value::Date(2024, 2, 29, 13, 5, 0, 0), false),
            Value::Text("2024-02-29 13:05:00".into())
        );
        let Params::Positional(p) = params_of(&[Value::Int(1), Value::Text("x".into()), Value::Null]) else { panic!() };
        assert_eq!(p, [mysql_async::Value::Int(1), mysql_async::Value::Bytes(b"x".to_vec()), mysql_async::Value::NULL]);
        assert!(matches!(params_of(&[]), Params::Empty));
    }
}
