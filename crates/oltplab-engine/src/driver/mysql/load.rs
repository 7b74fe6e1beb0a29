//! The bulk load: `LOAD DATA LOCAL INFILE` fed from memory, about a third faster than
//! multi-row `INSERT`s of the same rows on MariaDB 10.11 (`InnoDB`, 512 KiB batches), with
//! sysbench's INSERT batches as the fallback when the server refuses local infile.

use bytes::Bytes;
use mysql_async::prelude::Queryable;
use mysql_async::{Error, InfileData};

use super::errors::db_error;
use super::MysqlConn;
use crate::driver::tab_text::encode_row;
use crate::driver::{DbError, DbResult, Fetch, InsertBatches, Value};

/// The server or its configuration refuses `LOAD DATA LOCAL`: `ER_NOT_ALLOWED_COMMAND`,
/// MariaDB's `ER_LOAD_INFILE_CAPABILITY_DISABLED`, MySQL 8's `local_infile`=OFF errors.
const REFUSED_CODES: [u16; 4] = [1148, 4166, 3948, 3950];

impl MysqlConn {
    pub async fn bulk_load(&mut self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> DbResult<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        let described = if self.local_infile { Some(self.describe(table, columns).await?) } else { None };
        if let Some(table_is) = described.filter(|t| t.keeps_ids) {
            match self.load_data(table, columns, rows, table_is.ascii_compatible).await {
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

    /// What LOAD DATA needs to know of the table, asked at every call (the table may have been
    /// re-created since), which costs little beside 512 KiB of rows.
    async fn describe(&mut self, table: &str, columns: &[&str]) -> DbResult<TableFacts> {
        let described = self.query(&format!("SHOW FULL COLUMNS FROM {table}"), Fetch::Rows).await?;
        // Field, Type, Collation, Null, Key, Default, Extra, Privileges, Comment.
        let server_numbered = described.rows.iter().any(|row| {
            text(row, 6).contains("auto_increment") && !columns.iter().any(|c| c.eq_ignore_ascii_case(text(row, 0)))
        });
        let wide = ["ucs2", "utf16", "utf32"];
        let ascii_compatible = described.rows.iter().all(|row| !wide.iter().any(|w| text(row, 2).starts_with(w)));
        Ok(TableFacts { keeps_ids: !server_numbered, ascii_compatible })
    }

    /// One `LOAD DATA LOCAL INFILE` of all `rows`: the rows it loaded, or 0 on any warning
    /// (with LOCAL the server turns bad values and duplicate keys into warnings, not errors).
    async fn load_data(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<Value>],
        ascii_compatible: bool,
    ) -> Result<u64, Error> {
        let conn = self.conn.as_mut().ok_or(Error::Driver(mysql_async::DriverError::ConnectionClosed))?;
        let data = tab_separated(rows);
        // ASCII reads the same in every ASCII-compatible character set, so it can skip the
        // conversion (a quarter of a 4-table load's time on MariaDB 10.11 into latin1 tables);
        // other text is declared as what it is, UTF-8, and converted by the server.
        let charset = if ascii_compatible && data.is_ascii() { "binary" } else { "utf8mb4" };
        let data = Bytes::from(data);
        conn.set_infile_handler(async move {
            let stream: InfileData = Box::pin(futures_util::stream::once(std::future::ready(Ok(data))));
            Ok(stream)
        });
        // The default field and line format (tab, newline, backslash escapes) is the one
        // `tab_separated` writes.
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'oltplab-bulk-load' INTO TABLE {table} CHARACTER SET {charset} ({})",
            columns.join(", ")
        );
        let result = conn.query_iter(sql).await?;
        let (loaded, warnings) = (result.affected_rows(), result.warnings());
        result.drop_result().await?;
        Ok(if warnings == 0 { loaded } else { 0 })
    }
}

/// Column `i` of a `SHOW FULL COLUMNS` row, as text.
fn text(row: &[Value], i: usize) -> &str {
    match row.get(i) {
        Some(Value::Text(s)) => s.as_str(),
        _ => "",
    }
}

/// What [`MysqlConn::describe`] found.
#[derive(Clone, Copy)]
struct TableFacts {
    /// LOAD DATA reserves `AUTO_INCREMENT` values in growing blocks and loses what a statement
    /// leaves unused (`InnoDB`'s allocation for inserts of unknown size), so ids left to the
    /// server would have gaps where sysbench's multi-row INSERTs give 1..N: a table whose
    /// auto-increment column is not among the loaded columns is loaded by INSERTs.
    keeps_ids: bool,
    /// No column in UCS-2, UTF-16 or UTF-32, where ASCII bytes are not ASCII text.
    ascii_compatible: bool,
}

/// Rows in LOAD DATA's default format: fields split by tabs, rows ended by newlines.
fn tab_separated(rows: &[Vec<Value>]) -> Vec<u8> {
    let row_bytes =
        rows.first().map_or(0, |r| r.iter().map(|v| if let Value::Text(s) = v { s.len() + 1 } else { 12 }).sum());
    let mut out = Vec::with_capacity(rows.len() * row_bytes);
    for row in rows {
        encode_row(row, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_in_load_data_format() {
        let rows = vec![
            vec![Value::Int(1), Value::Int(-5), Value::Text("12-34".into()), Value::Null],
            vec![Value::Int(2), Value::Int(0), Value::Text("a\tb\\".into()), Value::Text(String::new())],
        ];
        assert_eq!(String::from_utf8(tab_separated(&rows)).unwrap(), "1\t-5\t12-34\t\\N\n2\t0\ta\\tb\\\\\t\n");
        assert!(tab_separated(&[]).is_empty());
    }
}
