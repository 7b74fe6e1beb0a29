//! `COPY ... FROM STDIN` in text format: the fastest load PostgreSQL offers, and
//! the stored data are those the equivalent INSERTs make (columns left out take
//! their defaults, so SERIAL ids come from the sequence in row order: 1..N).

use std::pin::pin;

use bytes::BytesMut;
use futures_util::SinkExt;
use tokio_postgres::Client;

use super::errors::db_error;
use crate::driver::tab_text::encode_row;
use crate::driver::{DbResult, Value};

/// Rows are sent in chunks of about this size: big enough to keep the socket busy,
/// small enough not to double the memory of a large load.
const CHUNK_BYTES: usize = 256 * 1024;

/// Loads `rows` in one COPY (one transaction); returns the rows the server stored.
pub async fn copy_in(client: &Client, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> DbResult<u64> {
    if rows.is_empty() {
        return Ok(0);
    }
    let sql = if columns.is_empty() {
        format!("COPY {table} FROM STDIN")
    } else {
        format!("COPY {table} ({}) FROM STDIN", columns.join(", "))
    };
    let sink = client.copy_in::<_, bytes::Bytes>(sql.as_str()).await.map_err(|e| db_error(&e))?;
    let mut sink = pin!(sink);
    let mut buf = BytesMut::with_capacity(CHUNK_BYTES + 4096);
    for row in rows {
        encode_row(row, &mut buf);
        if buf.len() >= CHUNK_BYTES {
            sink.as_mut().send(buf.split().freeze()).await.map_err(|e| db_error(&e))?;
        }
    }
    if !buf.is_empty() {
        sink.as_mut().send(buf.split().freeze()).await.map_err(|e| db_error(&e))?;
    }
    sink.as_mut().finish().await.map_err(|e| db_error(&e))
}
