//! What prepare, check and cleanup share across workloads: sysbench's multi-row
//! INSERT buffer (`db_bulk_insert_*` in `db_driver.c`), the table check before a
//! run, and the drop loop.

use super::{unfinished_prepare, PrepareEvent};
use crate::db::{DbError, Fetch, Value};
use crate::driver::Conn;
use crate::error::{EngineError, Result};

/// sysbench's `BULK_PACKET_SIZE`: a multi-row INSERT never exceeds it.
pub const BULK_PACKET_SIZE_BYTES: usize = 512 * 1024;

/// One multi-row `INSERT ... VALUES(..),(..)` under construction.
#[derive(Debug, Clone)]
pub struct BulkBuffer {
    sql: String,
    header_len: usize,
    rows: u64,
}

impl BulkBuffer {
    /// `header` ends in `VALUES`; rows follow it directly, joined by `,` (as sysbench sends them).
    pub fn new(header: &str) -> Self {
        let mut sql = String::with_capacity(BULK_PACKET_SIZE_BYTES);
        sql.push_str(header);
        Self { sql, header_len: header.len(), rows: 0 }
    }

    /// Must the buffer be sent before `row_len` more bytes go in? sysbench keeps
    /// room for the comma and C's terminating NUL; a first row always goes in.
    pub fn needs_flush_before(&self, row_len: usize) -> bool {
        self.rows > 0 && self.sql.len() + row_len + 2 > BULK_PACKET_SIZE_BYTES
    }

    pub fn push(&mut self, row: &str) {
        if self.rows > 0 {
            self.sql.push(',');
        }
        self.sql.push_str(row);
        self.rows += 1;
    }

    pub fn sql(&self) -> &str {
        &self.sql
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    pub fn clear(&mut self) {
        self.sql.truncate(self.header_len);
        self.rows = 0;
    }
}

/// Rows for one [`Conn::bulk_load`](crate::driver::Conn::bulk_load), cut where sysbench cuts its
/// multi-row INSERTs ([`BulkBuffer`]'s 512 KiB of SQL text), so that progress is reported at the
/// same rows whichever load path the server offers.
#[derive(Debug)]
pub struct RowChunk {
    rows: Vec<Vec<Value>>,
    /// What `INSERT INTO t(cols) VALUES(..),(..)` of these rows would take.
    sql_len: usize,
    header_len: usize,
}

impl RowChunk {
    /// `header` is the INSERT up to `VALUES`, as sysbench writes it.
    pub fn new(header: &str) -> Self {
        Self { rows: Vec::new(), sql_len: header.len(), header_len: header.len() }
    }

    /// As [`BulkBuffer::needs_flush_before`], for a row given as values.
    pub fn needs_flush_before(&self, row: &[Value]) -> bool {
        !self.rows.is_empty() && self.sql_len + literal_len(row) + 2 > BULK_PACKET_SIZE_BYTES
    }

    pub fn push(&mut self, row: Vec<Value>) {
        self.sql_len += literal_len(&row) + usize::from(!self.rows.is_empty());
        self.rows.push(row);
    }

    pub fn rows(&self) -> &[Vec<Value>] {
        &self.rows
    }

    pub fn clear(&mut self) {
        self.rows.clear();
        self.sql_len = self.header_len;
    }
}

/// The length of `(v1, v2, ...)` with each value printed as an SQL literal.
fn literal_len(row: &[Value]) -> usize {
    let values: usize = row
        .iter()
        .map(|v| match v {
            Value::Null => 4,
            Value::Int(i) => i.unsigned_abs().checked_ilog10().map_or(1, |d| d as usize + 1) + usize::from(*i < 0),
            Value::Text(s) => s.len() + 2,
        })
        .sum();
    values + 2 * row.len().saturating_sub(1) + 2
}

/// Runs DDL during prepare; "already exists" means an earlier prepare left data behind.
pub async fn run_ddl(conn: &mut Conn, sql: &str, workload: &str) -> Result<()> {
    conn.query(sql, Fetch::Discard).await.map(|_| ()).map_err(|e| ddl_error(&e, sql, workload))
}

fn ddl_error(e: &DbError, sql: &str, workload: &str) -> EngineError {
    let first_line = sql.lines().next().unwrap_or(sql);
    if e.message.contains("already exists") {
        return EngineError::NotPrepared(format!(
            "'{first_line}' failed: {e}; run `oltplab cleanup {workload}` with the same --db and options first"
        ));
    }
    EngineError::Driver(format!("'{first_line}' failed: {e}"))
}

/// Before a run: every table `sbtest1..=tables` answers a trivial SELECT, and no prepare was
/// left unfinished. The first table's SELECT asks for the marker too: one statement per table,
/// as the server-side counts of a run expect (docs/mysql.md).
pub async fn check_tables(conn: &mut Conn, tables: usize, prepare_cmd: &str) -> Result<()> {
    for t in 1..=tables {
        let sql = if t == 1 {
            format!("SELECT ({}), (SELECT id FROM sbtest1 LIMIT 1)", unfinished_prepare::exists_sql(conn.dialect()))
        } else {
            format!("SELECT id FROM sbtest{t} LIMIT 1")
        };
        match conn.query(&sql, Fetch::Rows).await {
            Err(e) => {
                return Err(EngineError::NotPrepared(format!(
                    "table sbtest{t} is missing in the database ({e}); run `{prepare_cmd}` with the same --db first"
                )))
            }
            Ok(r)
                if t == 1 && r.rows.first().and_then(|row| row.first()).is_some_and(unfinished_prepare::is_nonzero) =>
            {
                return Err(unfinished_prepare::refusal(prepare_cmd));
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

/// sysbench's `cleanup()`: serial `DROP TABLE IF EXISTS`, one message per table.
pub async fn drop_tables(
    conn: &mut Conn,
    tables: usize,
    progress: &mut (dyn FnMut(PrepareEvent) + Send),
) -> Result<()> {
    for t in 1..=tables {
        progress(PrepareEvent::Message(format!("Dropping table 'sbtest{t}'...")));
        conn.query(&format!("DROP TABLE IF EXISTS sbtest{t}"), Fetch::Discard)
            .await
            .map_err(|e| EngineError::Driver(format!("cannot drop table sbtest{t}: {e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_buffer_flushes_before_512_kib() {
        let mut b = BulkBuffer::new("INSERT INTO t VALUES");
        let row = "x".repeat(1000);
        assert!(!b.needs_flush_before(BULK_PACKET_SIZE_BYTES)); // the first row always goes in
        let mut pushed = 0;
        while !b.needs_flush_before(row.len()) {
            b.push(&row);
            pushed += 1;
        }
        assert!(b.sql().len() < BULK_PACKET_SIZE_BYTES);
        // n rows take 20 + 1001n - 1 bytes, and the NUL needs one more.
        assert_eq!(pushed, (BULK_PACKET_SIZE_BYTES - 20) / 1001);
        assert!(b.sql().starts_with("INSERT INTO t VALUESx"));
        assert_eq!(b.rows(), pushed as u64);
        b.clear();
        assert_eq!((b.sql(), b.rows()), ("INSERT INTO t VALUES", 0));
    }

    #[test]
    fn row_chunks_cut_where_sysbench_inserts_do() {
        let rows: Vec<Vec<Value>> = (0..12_000i64)
            .map(|i| vec![Value::Int(i * 37 - 20), Value::Text("7".repeat(119)), Value::Null, Value::Int(i)])
            .collect();
        let header = "INSERT INTO sbtest1(id, k, c, pad) VALUES";
        let (mut bulk, mut chunk) = (BulkBuffer::new(header), RowChunk::new(header));
        let (mut bulk_cuts, mut chunk_cuts) = (Vec::new(), Vec::new());
        for (i, row) in rows.iter().enumerate() {
            let text = format!("({})", row.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "));
            assert_eq!(literal_len(row), text.len());
            if bulk.needs_flush_before(text.len()) {
                bulk_cuts.push(i);
                bulk.clear();
            }
            bulk.push(&text);
            if chunk.needs_flush_before(row) {
                chunk_cuts.push(i);
                chunk.clear();
            }
            chunk.push(row.clone());
        }
        assert!(bulk_cuts.len() > 2);
        assert_eq!(bulk_cuts, chunk_cuts);
        assert_eq!(chunk.rows().len(), 12_000 - chunk_cuts.last().unwrap());
    }
}
