//! The bulk load: `LOAD DATA LOCAL INFILE` fed from memory, about a third faster than
//! multi-row `INSERT`s of the same rows on MariaDB 10.11 (`InnoDB`, 512 KiB batches), with
//! sysbench's INSERT batches as the fallback when the server refuses local infile.

use std::io::Write as _;

use bytes::Bytes;
use mysql_async::prelude::Queryable;
use mysql_async::{Error, InfileData};

use super::errors::db_error;
use super::MysqlConn;
use crate::driver::{DbError, DbResult, Fetch, InsertBatches, Value};

/// The server or its configuration refuses `LOAD DATA LOCAL`: `ER_NOT_ALLOWED_COMMAND`,
/// MariaDB's `ER_LOAD_INFILE_CAPABILITY_DISABLED`, MySQL 8's `local_infile`=OFF errors.
const REFUSED_CODES: [u16; 4] = [1148, 4166, 3948, 3950];

impl MysqlConn {
    pub async fn bulk_load(&mut self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> DbResult<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        if self.local_infile && self.load_data_keeps_ids(table, columns).await? {
            match self.load_data(table, columns, rows).await {
                Err(Error::Server(e)) if REFUSED_CODES.contains(&e.code) => self.local_infile = false,
                Err(e) => return Err(db_error(&e, self.ignore.as_deref())),
                Ok(loaded) if loaded == rows.len() as u64 => return Ok(loaded),
                Ok(loaded) => {
                    return Err(DbError::fatal(
                        "OLTPLAB",
                        format!(
                            "LOAD DATA LOCAL INFILE into {table} loaded {loaded} of {} rows or warned; the data \
                             differ from what was sent (check the table's definition)",
                            rows.len()
                        ),
                    ))
                }
            }
        }
        let mut batches = InsertBatches::new(table, columns, rows);
        let mut loaded = 0;
        while let Some((sql, n)) = batches.next_batch() {
            self.query(sql, Fetch::Discard).await?;
            loaded += n;
        }
        Ok(loaded)
    }

    /// LOAD DATA reserves `AUTO_INCREMENT` values in growing blocks and loses what a statement
    /// leaves unused (`InnoDB`'s allocation for inserts of unknown size), so ids left to the
    /// server would have gaps where sysbench's multi-row INSERTs give 1..N: a table whose
    /// auto-increment column is not among `columns` is loaded by INSERTs. Asked at every call
    /// (the table may have been re-created since), which costs little beside 512 KiB of rows.
    async fn load_data_keeps_ids(&mut self, table: &str, columns: &[&str]) -> DbResult<bool> {
        let described = self.query(&format!("SHOW COLUMNS FROM {table}"), Fetch::Rows).await?;
        // Field, Type, Null, Key, Default, Extra.
        let server_numbered = described.rows.iter().any(|row| match (row.first(), row.get(5)) {
            (Some(Value::Text(field)), Some(Value::Text(extra))) => {
                extra.contains("auto_increment") && !columns.iter().any(|c| c.eq_ignore_ascii_case(field))
            }
            _ => false,
        });
        Ok(!server_numbered)
    }

    /// One `LOAD DATA LOCAL INFILE` of all `rows`: the rows it loaded, or 0 on any warning
    /// (with LOCAL the server turns bad values and duplicate keys into warnings, not errors).
    async fn load_data(&mut self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> Result<u64, Error> {
        let conn = self.conn.as_mut().ok_or(Error::Driver(mysql_async::DriverError::ConnectionClosed))?;
        let data = Bytes::from(tab_separated(rows));
        conn.set_infile_handler(async move {
            let stream: InfileData = Box::pin(futures_util::stream::once(std::future::ready(Ok(data))));
            Ok(stream)
        });
        // The default field and line format (tab, newline, backslash escapes) is the one
        // `tab_separated` writes; CHARACTER SET is the connection's, as for INSERTs.
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'oltplab-bulk-load' INTO TABLE {table} CHARACTER SET utf8mb4 ({})",
            columns.join(", ")
        );
        let result = conn.query_iter(sql).await?;
        let (loaded, warnings) = (result.affected_rows(), result.warnings());
        result.drop_result().await?;
        Ok(if warnings == 0 { loaded } else { 0 })
    }
}

/// Rows in LOAD DATA's default format: fields split by tabs, rows ended by newlines,
/// `\N` for NULL, and backslash escapes for the bytes that would break the format.
fn tab_separated(rows: &[Vec<Value>]) -> Vec<u8> {
    let row_bytes =
        rows.first().map_or(0, |r| r.iter().map(|v| if let Value::Text(s) = v { s.len() + 1 } else { 12 }).sum());
    let mut out = Vec::with_capacity(rows.len() * row_bytes);
    for row in rows {
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                out.push(b'\t');
            }
            match v {
                Value::Null => out.extend_from_slice(b"\\N"),
                Value::Int(n) => {
                    let _ = write!(out, "{n}");
                }
                Value::Text(s) => escape_into(&mut out, s),
            }
        }
        out.push(b'\n');
    }
    out
}

fn escape_into(out: &mut Vec<u8>, s: &str) {
    let special = |b: u8| matches!(b, b'\\' | b'\t' | b'\n' | b'\r' | 0);
    if !s.bytes().any(special) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    for b in s.bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0 => out.extend_from_slice(b"\\0"),
            other => out.push(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_in_load_data_format() {
        let rows = vec![
            vec![Value::Int(1), Value::Int(-5), Value::Text("12-34".into()), Value::Null],
            vec![Value::Int(2), Value::Int(0), Value::Text("a\tb\nc\\d\re\0".into()), Value::Text(String::new())],
        ];
        assert_eq!(
            String::from_utf8(tab_separated(&rows)).unwrap(),
            "1\t-5\t12-34\t\\N\n2\t0\ta\\tb\\nc\\\\d\\re\\0\t\n"
        );
        assert!(tab_separated(&[]).is_empty());
    }
}
