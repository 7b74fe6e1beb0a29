//! The statement paths: prepare (Parse + Describe + Sync per statement, all in one write),
//! execute a prepared statement (Bind + Execute + Sync in one write, parameters written in
//! place), and the simple-query protocol. Replies are walked in the read buffer; rows are
//! decoded only when the caller keeps them.

use fallible_iterator::FallibleIterator as _;
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use postgres_protocol::IsNull;

use super::errors::{PgError, ServerError};
use super::sql::Template;
use super::values::{binary_row, encode_param, text_row};
use super::wire::Wire;
use crate::db::{DbError, Fetch, QueryClass, QueryResult, Value};

/// Result columns in binary format (one format code for all of them).
const BINARY: [i16; 1] = [1];

/// A statement prepared on the server.
#[derive(Debug)]
pub struct Prepared {
    name: String,
    params: usize,
    /// The result columns' type oids; none for a statement without a row description.
    columns: Vec<u32>,
}

/// Prepares `templates` as statements `s<first>`, `s<first + 1>`, ..., each with its own Sync
/// (so that the server's transaction count is the same as with libpq's one `PQprepare` each),
/// all in one round trip. `old` statements are closed on the way.
pub async fn prepare_all(
    wire: &mut Wire,
    templates: &[Template],
    first: usize,
    old: &[Prepared],
) -> Result<Vec<Prepared>, PgError> {
    wire.ready().await?;
    let protocol = |e: std::io::Error| PgError::Protocol(e.to_string());
    if !old.is_empty() {
        for stmt in old {
            frontend::close(b'S', &stmt.name, &mut wire.out).map_err(protocol)?;
        }
        wire.sync();
    }
    let mut statements = Vec::with_capacity(templates.len());
    for (i, template) in templates.iter().enumerate() {
        let name = format!("s{}", first + i);
        frontend::parse(&name, &template.numbered(), std::iter::empty(), &mut wire.out).map_err(protocol)?;
        frontend::describe(b'S', &name, &mut wire.out).map_err(protocol)?;
        wire.sync();
        statements.push(Prepared { name, params: 0, columns: Vec::new() });
    }
    wire.send().await?;
    wire.shrink();
    if !old.is_empty() {
        wire.finish().await?;
    }
    let mut first_error = None;
    for stmt in &mut statements {
        let error = loop {
            let f = wire.frame().await?;
            match f.tag {
                b'Z' => {
                    wire.consume(f);
                    break None;
                }
                b'E' => break Some(wire.server_error(f)?),
                b't' | b'T' => match wire.message(f)? {
                    Message::ParameterDescription(body) => stmt.params = body.parameters().count()?,
                    Message::RowDescription(body) => {
                        stmt.columns = body.fields().map(|field| Ok(field.type_oid())).collect()?;
                    }
                    _ => {}
                },
                _ => wire.consume(f),
            }
        };
        if let Some(e) = error {
            wire.finish().await?;
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(statements), |e| Err(PgError::Server(e)))
}

/// Executes a prepared statement. A statement with a row description is a read, even with no
/// rows (sysbench's `PGRES_TUPLES_OK`); otherwise rows affected decide between write and other.
/// Every row is read off the wire, as sysbench reads its whole result.
pub async fn execute(wire: &mut Wire, stmt: &Prepared, params: &[Value], fetch: Fetch) -> Result<QueryResult, PgError> {
    if params.len() != stmt.params {
        return Err(PgError::Protocol(format!("expected {} parameters but got {}", stmt.params, params.len())));
    }
    wire.ready().await?;
    let serialize =
        |v: &Value, out: &mut bytes::BytesMut| Ok(if encode_param(v, out) { IsNull::No } else { IsNull::Yes });
    // No parameter format codes: every parameter is text.
    frontend::bind("", &stmt.name, [], params, serialize, BINARY, &mut wire.out)
        .map_err(|_| PgError::Protocol("a parameter is too large for a Bind message".into()))?;
    frontend::execute("", 0, &mut wire.out).map_err(|e| PgError::Protocol(e.to_string()))?;
    wire.sync();
    wire.send().await?;

    let reads = !stmt.columns.is_empty();
    let class = if reads { QueryClass::Read } else { QueryClass::Other };
    let mut out = QueryResult { class, columns: stmt.columns.len(), ..QueryResult::other() };
    loop {
        let f = wire.frame().await?;
        match f.tag {
            b'D' => {
                out.row_count += 1;
                if fetch == Fetch::Rows {
                    out.rows.push(binary_row(wire.body(f), &stmt.columns).map_err(client)?);
                }
            }
            b'C' if !reads => {
                out.row_count = rows_affected(wire.body(f));
                if out.row_count > 0 {
                    out.class = QueryClass::Write;
                }
            }
            b'Z' => {
                wire.consume(f);
                return Ok(out);
            }
            b'E' => {
                let e = wire.server_error(f)?;
                return Err(wire.fail(e).await);
            }
            _ => {}
        }
        wire.consume(f);
    }
}

/// The simple-query protocol, as sysbench's `PQexec`. With several statements in one text, the
/// last one's result counts, as `PQexec` returns the last result. Values come back as text.
pub async fn simple(wire: &mut Wire, sql: &str, fetch: Fetch) -> Result<QueryResult, PgError> {
    wire.ready().await?;
    wire.query(sql)?;
    wire.send().await?;
    let mut out = QueryResult::other();
    let (mut in_result_set, mut rows_seen) = (false, 0);
    let mut error: Option<ServerError> = None;
    loop {
        let f = wire.frame().await?;
        match f.tag {
            b'T' => {
                (in_result_set, rows_seen) = (true, 0);
                out.rows.clear();
                // A RowDescription starts with its field count.
                out.columns = wire.body(f).get(..2).map_or(0, |n| usize::from(u16::from_be_bytes([n[0], n[1]])));
            }
            b'D' => {
                rows_seen += 1;
                if fetch == Fetch::Rows {
                    out.rows.push(text_row(wire.body(f)).map_err(client)?);
                }
            }
            b'C' => {
                (out.class, out.row_count) = match (in_result_set, rows_affected(wire.body(f))) {
                    (true, _) => (QueryClass::Read, rows_seen),
                    (false, 0) => (QueryClass::Other, 0),
                    (false, n) => (QueryClass::Write, n),
                };
                if !in_result_set {
                    out.rows.clear();
                    out.columns = 0;
                }
                in_result_set = false;
            }
            b'G' => {
                // COPY FROM STDIN sent as a query: refused, the server answers with an error.
                wire.consume(f);
                frontend::copy_fail("COPY FROM STDIN is not supported here", &mut wire.out)
                    .map_err(|e| PgError::Protocol(e.to_string()))?;
                wire.send().await?;
                continue;
            }
            b'E' => {
                let e = wire.server_error(f)?;
                error.get_or_insert(e);
                continue;
            }
            b'Z' => {
                wire.consume(f);
                return error.map_or(Ok(out), |e| Err(PgError::Server(e)));
            }
            _ => {}
        }
        wire.consume(f);
    }
}

/// The count at the end of a `CommandComplete` tag (`UPDATE 3`, `INSERT 0 1`, `COPY 10`); 0 for
/// tags without one (`BEGIN`).
pub fn rows_affected(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    let last = tag.rsplit(|&b| b == b' ').next().unwrap_or_default();
    std::str::from_utf8(last).ok().and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn client(e: DbError) -> PgError {
    PgError::Protocol(e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_affected_from_command_tags() {
        assert_eq!(rows_affected(b"UPDATE 3\0"), 3);
        assert_eq!(rows_affected(b"INSERT 0 12\0"), 12);
        assert_eq!(rows_affected(b"SELECT 100\0"), 100);
        assert_eq!(rows_affected(b"BEGIN\0"), 0);
        assert_eq!(rows_affected(b"CREATE TABLE\0"), 0);
    }
}
