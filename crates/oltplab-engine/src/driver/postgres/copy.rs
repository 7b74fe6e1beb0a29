//! `COPY ... FROM STDIN` in text format: the fastest load PostgreSQL offers, and
//! the stored data are those the equivalent INSERTs make (columns left out take
//! their defaults, so SERIAL ids come from the sequence in row order: 1..N).

use std::pin::pin;

use bytes::Bytes;
use futures_util::SinkExt;
use tokio_postgres::Client;

use super::errors::db_error;
use crate::db::DbResult;
use crate::driver::tab_text::TabRows;

/// Rows are sent in messages of at most this size (COPY's messages need not end at a row's
/// end): big enough to keep the socket busy.
const CHUNK_BYTES: usize = 256 * 1024;

/// Loads `rows` in one COPY (one transaction); returns the rows the server stored.
pub async fn copy_in(client: &Client, table: &str, columns: &[&str], rows: &TabRows) -> DbResult<u64> {
    if rows.is_empty() {
        return Ok(0);
    }
    let sql = if columns.is_empty() {
        format!("COPY {table} FROM STDIN")
    } else {
        format!("COPY {table} ({}) FROM STDIN", columns.join(", "))
    };
    let sink = client.copy_in::<_, Bytes>(sql.as_str()).await.map_err(|e| db_error(&e))?;
    let mut sink = pin!(sink);
    for chunk in rows.as_str().as_bytes().chunks(CHUNK_BYTES) {
        sink.as_mut().send(Bytes::copy_from_slice(chunk)).await.map_err(|e| db_error(&e))?;
    }
    sink.as_mut().finish().await.map_err(|e| db_error(&e))
}
