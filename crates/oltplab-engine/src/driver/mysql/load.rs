//! The bulk load: `LOAD DATA LOCAL INFILE` fed from memory, about a third faster than
//! multi-row `INSERT`s of the same rows on MariaDB 10.11 (`InnoDB`, 512 KiB batches), with
//! sysbench's INSERT batches as the fallback when the server refuses local infile.

use super::errors::{db_error, Error};
use super::MysqlConn;
use crate::db::{DbError, DbResult, Fetch, Value};
use crate::driver::tab_text::TabRows;
use crate::driver::InsertBatches;

/// The server or its configuration refuses `LOAD DATA LOCAL`: `ER_NOT_ALLOWED_COMMAND`,
/// MariaDB's `ER_LOAD_INFILE_CAPABILITY_DISABLED`, MySQL 8's `local_infile`=OFF errors.
const REFUSED_CODES: [u16; 4] = [1148, 4166, 3948, 3950];

impl MysqlConn {
    pub async fn bulk_load(&mut self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> DbResult<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        match self.try_load_data(table, columns, &TabRows::from_values(rows)).await? {
            Some(loaded) => Ok(loaded),
            None => self.insert_batches(table, columns, rows).await,
        }
    }

    pub async fn bulk_load_text(&mut self, table: &str, columns: &[&str], rows: &TabRows) -> DbResult<u64> {
        if rows.is_empty() {
            return Ok(0);
        }
        match self.try_load_data(table, columns, rows).await? {
            Some(loaded) => Ok(loaded),
            None => self.insert_batches(table, columns, &rows.to_values()).await,
        }
    }

    /// LOAD DATA when the server takes it and the table keeps the ids sent; None when the rows
    /// must go as INSERTs instead.
    async fn try_load_data(&mut self, table: &str, columns: &[&str], rows: &TabRows) -> DbResult<Option<u64>> {
        let described = if self.local_infile { Some(self.describe(table, columns).await?) } else { None };
        let Some(table_is) = described.filter(|t| t.keeps_ids) else { return Ok(None) };
        match self.load_data(table, columns, rows, table_is.ascii_compatible).await {
            Err(Error::Server { code, .. }) if REFUSED_CODES.contains(&code) => {
                self.local_infile = false;
                Ok(None)
            }
            Err(e) => Err(db_error(&e, self.ignore.as_deref())),
            Ok(loaded) if loaded == rows.rows() as u64 => Ok(Some(loaded)),
            Ok(loaded) => Err(DbError::fatal(
                "OLTPLAB",
                format!(
                    "LOAD DATA LOCAL INFILE into {table} loaded {loaded} of {} rows or warned; the data differ \
                     from what was sent (check the table's definition)",
                    rows.rows()
                ),
            )),
        }
    }

    async fn insert_batches(&mut self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> DbResult<u64> {
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
        rows: &TabRows,
        ascii_compatible: bool,
    ) -> Result<u64, Error> {
        let session = self.session.as_mut().ok_or(Error::Closed)?;
        let data = rows.as_str();
        // ASCII reads the same in every ASCII-compatible character set, so it can skip the
        // conversion (a quarter of a 4-table load's time on MariaDB 10.11 into latin1 tables);
        // other text is declared as what it is, UTF-8, and converted by the server.
        let charset = if ascii_compatible && data.is_ascii() { "binary" } else { "utf8mb4" };
        // The default field and line format (tab, newline, backslash escapes) is TabRows'.
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'oltplab-bulk-load' INTO TABLE {table} CHARACTER SET {charset} ({})",
            columns.join(", ")
        );
        let done = session.query(&sql, None, Some(data.as_bytes())).await?;
        Ok(if done.warnings == 0 { done.affected } else { 0 })
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
