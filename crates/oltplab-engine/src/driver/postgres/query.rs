//! The statement paths: prepare (Parse + Describe + Sync per statement, all in one write),
//! execute a prepared statement (Bind + Execute + Sync in one write: the Bind's fixed part
//! encoded once at prepare time, each parameter written in place after it), and the
//! simple-query protocol. Replies are walked in the read buffer; rows are decoded only when the
//! caller keeps them.

use std::sync::{Arc, Mutex, Weak};

use bytes::{BufMut, BytesMut};
use fallible_iterator::FallibleIterator as _;
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;

use super::errors::{PgError, ServerError};
use super::sql::Template;
use super::values::{binary_row, encode_param, text_row};
use super::wire::{Frame, Wire};
use crate::db::{DbError, Fetch, QueryClass, QueryResult, Value};
use crate::driver::share::share_equal;

/// What follows a Bind's parameters: one result format code, binary, for all the columns; then
/// Execute of the unnamed portal with no row limit (its length, 9, the portal's empty name and
/// the limit 0). Sync comes last.
const BIND_END_AND_EXECUTE: [u8; 14] = [0, 1, 0, 1, b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0];
/// Execute's part of [`BIND_END_AND_EXECUTE`].
const EXECUTE_BYTES: usize = 10;

/// A statement prepared on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    name: String,
    params: usize,
    /// The result columns' type oids; none for a statement without a row description.
    columns: Vec<u32>,
    /// Its Bind message up to the parameters, encoded once: the tag, a length patched per
    /// execution, the unnamed portal, the statement's name, no parameter format codes (every
    /// parameter is text) and the parameter count.
    bind_head: Vec<u8>,
}

impl Prepared {
    fn check(&self, params: &[Value]) -> Result<(), PgError> {
        if params.len() == self.params {
            return Ok(());
        }
        Err(PgError::Protocol(format!("expected {} parameters but got {}", self.params, params.len())))
    }

    fn new(name: String, params: usize, columns: Vec<u32>) -> Result<Self, PgError> {
        let count = u16::try_from(params)
            .map_err(|_| PgError::Protocol(format!("{params} parameters are more than a Bind message can carry")))?;
        let mut bind_head = Vec::with_capacity(12 + name.len());
        bind_head.extend_from_slice(b"B\0\0\0\0\0");
        bind_head.extend_from_slice(name.as_bytes());
        bind_head.extend_from_slice(&[0, 0, 0]);
        bind_head.extend_from_slice(&count.to_be_bytes());
        Ok(Self { name, params, columns, bind_head })
    }
}

/// `statements` as one list shared with every connection that prepared the same (the same
/// names, parameter counts and column types: every connection of a run, as each prepares the
/// workload's statements in the same order).
pub fn shared(statements: Vec<Prepared>) -> Arc<Vec<Prepared>> {
    static RECENT: Mutex<Vec<Weak<Vec<Prepared>>>> = Mutex::new(Vec::new());
    share_equal(&RECENT, statements)
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
        statements.push((name, 0, Vec::new()));
    }
    wire.send().await?;
    wire.shrink();
    if !old.is_empty() {
        wire.finish().await?;
    }
    let mut first_error = None;
    for (_, params, columns) in &mut statements {
        let error = loop {
            let f = wire.frame().await?;
            match f.tag {
                b'Z' => {
                    wire.consume(f);
                    break None;
                }
                b'E' => break Some(wire.server_error(f)?),
                b't' | b'T' => match wire.message(f)? {
                    Message::ParameterDescription(body) => *params = body.parameters().count()?,
                    Message::RowDescription(body) => {
                        *columns = body.fields().map(|field| Ok(field.type_oid())).collect()?;
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
    if let Some(e) = first_error {
        return Err(PgError::Server(e));
    }
    statements.into_iter().map(|(name, params, columns)| Prepared::new(name, params, columns)).collect()
}

/// Executes a prepared statement. A statement with a row description is a read, even with no
/// rows (sysbench's `PGRES_TUPLES_OK`); otherwise rows affected decide between write and other.
/// Every row is read off the wire, as sysbench reads its whole result.
pub async fn execute(wire: &mut Wire, stmt: &Prepared, params: &[Value], fetch: Fetch) -> Result<QueryResult, PgError> {
    stmt.check(params)?;
    wire.ready().await?;
    encode_bind_execute(&mut wire.out, stmt, params)?;
    wire.sync();
    wire.send().await?;
    let keep = (fetch == Fetch::Rows).then_some(&stmt.columns[..]);
    let mut reply = Reply::new(stmt);
    loop {
        let f = match wire.buffered()? {
            Ok(f) => f,
            Err(_) => wire.frame().await?,
        };
        if let Some(end) = reply.read(wire, f, keep) {
            return end;
        }
    }
}

/// An execution begun by [`execute_now`].
pub enum Executing {
    Done(Result<QueryResult, PgError>),
    /// Sent, or partly; its reply not all there: [`finish`] awaits the rest.
    Wait(Pending),
    /// Not started: the connection must first read past an abandoned request's replies.
    Later,
}

/// An execution's reply read so far, between [`execute_now`] and [`finish`].
pub struct Pending(Reply);

/// [`execute`] of a statement whose rows are dropped, as far as it goes without an await: a
/// thread's sole connection sends in `send(2)` and waits for the reply in `recv(2)`, so its
/// statements are done here (docs/performance-engine.md, "A statement without a future").
pub fn execute_now(wire: &mut Wire, stmt: &Prepared, params: &[Value]) -> Result<Executing, PgError> {
    if !wire.is_ready() {
        return Ok(Executing::Later);
    }
    stmt.check(params)?;
    encode_bind_execute(&mut wire.out, stmt, params)?;
    wire.sync();
    let mut reply = Reply::new(stmt);
    if wire.send_now()? {
        while let Some(f) = wire.frame_now()? {
            if let Some(end) = reply.read(wire, f, None) {
                return Ok(Executing::Done(end));
            }
        }
    }
    Ok(Executing::Wait(Pending(reply)))
}

/// The rest of an execution [`execute_now`] began: what the socket did not take, and the reply
/// from where it stopped.
pub async fn finish(wire: &mut Wire, Pending(mut reply): Pending) -> Result<QueryResult, PgError> {
    wire.send_rest().await?;
    loop {
        let f = wire.frame().await?;
        if let Some(end) = reply.read(wire, f, None) {
            return end;
        }
    }
}

/// An execution's reply, one message at a time.
struct Reply {
    out: QueryResult,
    reads: bool,
    /// The server's error: the messages up to `ReadyForQuery` are read past, then it is returned.
    failed: Option<ServerError>,
}

impl Reply {
    fn new(stmt: &Prepared) -> Self {
        let reads = !stmt.columns.is_empty();
        let class = if reads { QueryClass::Read } else { QueryClass::Other };
        Self { out: QueryResult { class, columns: stmt.columns.len(), ..QueryResult::other() }, reads, failed: None }
    }

    /// Takes the message `f` (rows decoded with `keep`'s column types when given); the result
    /// once `ReadyForQuery` ends the reply.
    #[inline]
    fn read(&mut self, wire: &mut Wire, f: Frame, keep: Option<&[u32]>) -> Option<Result<QueryResult, PgError>> {
        match f.tag {
            b'D' if self.failed.is_none() => {
                self.out.row_count += 1;
                if let Some(columns) = keep {
                    match binary_row(wire.body(f), columns) {
                        Ok(row) => self.out.rows.push(row),
                        Err(e) => return Some(Err(client(e))),
                    }
                }
            }
            b'C' if !self.reads => {
                self.out.row_count = rows_affected(wire.body(f));
                if self.out.row_count > 0 {
                    self.out.class = QueryClass::Write;
                }
            }
            b'Z' => {
                wire.consume(f);
                return Some(match self.failed.take() {
                    Some(e) => Err(PgError::Server(e)),
                    None => Ok(std::mem::replace(&mut self.out, QueryResult::other())),
                });
            }
            // The first error is the one returned (`server_error` consumes its message).
            b'E' if self.failed.is_none() => {
                return match wire.server_error(f) {
                    Ok(e) => {
                        self.failed = Some(e);
                        None
                    }
                    Err(lost) => Some(Err(lost)),
                };
            }
            _ => {}
        }
        wire.consume(f);
        None
    }
}

/// Bind (the statement's head, then each parameter: its length, patched once written, and its
/// text) and Execute into `out`; nothing is left in `out` when a parameter is too large.
fn encode_bind_execute(out: &mut BytesMut, stmt: &Prepared, params: &[Value]) -> Result<(), PgError> {
    let start = out.len();
    let too_large = |out: &mut BytesMut| {
        out.truncate(start);
        PgError::Protocol("a parameter is too large for a Bind message".into())
    };
    out.extend_from_slice(&stmt.bind_head);
    for v in params {
        let at = out.len();
        out.put_i32(-1); // NULL, unless a value follows
        if encode_param(v, out) {
            let Ok(len) = i32::try_from(out.len() - at - 4) else { return Err(too_large(out)) };
            out[at..at + 4].copy_from_slice(&len.to_be_bytes());
        }
    }
    out.extend_from_slice(&BIND_END_AND_EXECUTE);
    // The length counts itself, not the tag.
    let Ok(len) = i32::try_from(out.len() - EXECUTE_BYTES - start - 1) else { return Err(too_large(out)) };
    out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
    Ok(())
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
    fn bind_and_execute_are_postgres_protocols_bytes() {
        use postgres_protocol::IsNull;

        let stmt = Prepared::new("s12".into(), 3, vec![25]).unwrap();
        let params = [Value::Int(-42), Value::Null, Value::Text("x y".into())];
        let mut ours = BytesMut::from(&b"left"[..]);
        encode_bind_execute(&mut ours, &stmt, &params).unwrap();

        let mut codec = BytesMut::from(&b"left"[..]);
        let serialize = |v: &Value, out: &mut BytesMut| Ok(if encode_param(v, out) { IsNull::No } else { IsNull::Yes });
        assert!(frontend::bind("", "s12", [], &params, serialize, [1], &mut codec).is_ok());
        frontend::execute("", 0, &mut codec).unwrap();
        assert_eq!(ours, codec);

        assert!(Prepared::new("s0".into(), 70_000, Vec::new()).is_err());
    }

    #[test]
    fn rows_affected_from_command_tags() {
        assert_eq!(rows_affected(b"UPDATE 3\0"), 3);
        assert_eq!(rows_affected(b"INSERT 0 12\0"), 12);
        assert_eq!(rows_affected(b"SELECT 100\0"), 100);
        assert_eq!(rows_affected(b"BEGIN\0"), 0);
        assert_eq!(rows_affected(b"CREATE TABLE\0"), 0);
    }
}
