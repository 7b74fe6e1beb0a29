//! `COPY ... FROM STDIN` in text format: the fastest load PostgreSQL offers, and
//! the stored data are those the equivalent INSERTs make (columns left out take
//! their defaults, so SERIAL ids come from the sequence in row order: 1..N).

use postgres_protocol::message::frontend;

use super::errors::PgError;
use super::query::rows_affected;
use super::wire::Wire;
use crate::driver::tab_text::TabRows;

/// Rows are sent in messages of at most this size (COPY's messages need not end at a row's
/// end): big enough to keep the socket busy.
const CHUNK_BYTES: usize = 256 * 1024;

/// Loads `rows` in one COPY (one transaction); returns the rows the server stored.
pub async fn copy_in(wire: &mut Wire, table: &str, columns: &[&str], rows: &TabRows) -> Result<u64, PgError> {
    if rows.is_empty() {
        return Ok(0);
    }
    let sql = if columns.is_empty() {
        format!("COPY {table} FROM STDIN")
    } else {
        format!("COPY {table} ({}) FROM STDIN", columns.join(", "))
    };
    wire.ready().await?;
    wire.query(&sql)?;
    wire.send().await?;
    let f = wire.frame().await?;
    match f.tag {
        b'G' => wire.consume(f),
        b'E' => {
            let e = wire.server_error(f)?;
            return Err(wire.fail(e).await);
        }
        tag => return Err(PgError::Protocol(format!("expected CopyInResponse, got message '{}'", char::from(tag)))),
    }
    let protocol = |e: std::io::Error| PgError::Protocol(e.to_string());
    for chunk in rows.as_str().as_bytes().chunks(CHUNK_BYTES) {
        frontend::CopyData::new(chunk).map_err(protocol)?.write(&mut wire.out);
        wire.send().await?;
    }
    frontend::copy_done(&mut wire.out);
    wire.send().await?;
    let (mut stored, mut error) = (0, None);
    loop {
        let f = wire.frame().await?;
        match f.tag {
            b'C' => stored = rows_affected(wire.body(f)),
            b'E' => {
                error.get_or_insert(wire.server_error(f)?);
                continue;
            }
            b'Z' => {
                wire.consume(f);
                wire.shrink();
                return error.map_or(Ok(stored), |e| Err(PgError::Server(e)));
            }
            _ => {}
        }
        wire.consume(f);
    }
}
