//! `COPY ... FROM STDIN` in text format: the fastest load PostgreSQL offers, and
//! the stored data are those the equivalent INSERTs make (columns left out take
//! their defaults, so SERIAL ids come from the sequence in row order: 1..N).

use std::fmt::Write as _;
use std::pin::pin;

use bytes::{BufMut, BytesMut};
use futures_util::SinkExt;
use tokio_postgres::Client;

use super::errors::db_error;
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

/// One line of COPY's text format: tab-separated, `\N` for NULL.
pub fn encode_row(row: &[Value], out: &mut BytesMut) {
    for (i, value) in row.iter().enumerate() {
        if i > 0 {
            out.put_u8(b'\t');
        }
        match value {
            Value::Null => out.put_slice(b"\\N"),
            Value::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Value::Text(s) => escape_into(s, out),
        }
    }
    out.put_u8(b'\n');
}

/// Backslash, and the bytes that would end a column or a line, take a backslash escape.
fn escape_into(s: &str, out: &mut BytesMut) {
    let special = |c: &u8| matches!(c, b'\\' | b'\t' | b'\n' | b'\r');
    if !s.as_bytes().iter().any(special) {
        out.put_slice(s.as_bytes());
        return;
    }
    for &c in s.as_bytes() {
        match c {
            b'\\' => out.put_slice(b"\\\\"),
            b'\t' => out.put_slice(b"\\t"),
            b'\n' => out.put_slice(b"\\n"),
            b'\r' => out.put_slice(b"\\r"),
            _ => out.put_u8(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(row: &[Value]) -> String {
        let mut out = BytesMut::new();
        encode_row(row, &mut out);
        String::from_utf8(out.to_vec()).unwrap()
    }

    #[test]
    fn rows_are_tab_separated_lines() {
        assert_eq!(line(&[Value::Int(1), Value::Int(-2), Value::Text("abc-12".into())]), "1\t-2\tabc-12\n");
        assert_eq!(line(&[Value::Null, Value::Text(String::new())]), "\\N\t\n");
    }

    #[test]
    fn specials_are_escaped() {
        assert_eq!(line(&[Value::Text("a\tb\nc\rd\\e'f".into())]), "a\\tb\\nc\\rd\\\\e'f\n");
        // A literal backslash-N is text, not NULL; a lone `\.` is not the end marker.
        assert_eq!(line(&[Value::Text("\\N".into())]), "\\\\N\n");
        assert_eq!(line(&[Value::Text("\\.".into())]), "\\\\.\n");
        assert_eq!(line(&[Value::Text("ünï".into())]), "ünï\n");
    }
}
