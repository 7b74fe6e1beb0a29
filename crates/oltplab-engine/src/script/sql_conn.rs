//! A script's connection: the engine's [`Conn`] in a cell that a statement in flight takes it
//! out of, the thread it counts for, and its multi-row INSERT buffer; a query on it, and its
//! reconnect.

use std::cell::RefCell;
use std::rc::Rc;

use super::ctx::{LocalFuture, ThreadCtx};
use crate::db::{DbError, Fetch, QueryResult};
use crate::driver::Conn;

/// One script connection: the engine's connection (taken out while a statement runs), the
/// thread it counts for, and its multi-row INSERT buffer.
pub struct ScriptConn {
    pub(super) conn: Option<Conn>,
    pub(super) ctx: Rc<ThreadCtx>,
    pub(super) bulk: Option<Bulk>,
}

/// The multi-row INSERT being built (sysbench's `bulk_insert_*`): the statement so far, the
/// length of its head (`INSERT ... VALUES`), and the rows after it.
pub(super) struct Bulk {
    pub(super) sql: String,
    pub(super) head_len: usize,
    pub(super) rows: usize,
}

/// Runs `op` on the connection, taken out of its cell while the statement is in flight (a
/// closed connection is an error, as sysbench's "attempt to use an already closed connection").
pub(super) async fn with_conn<'a, T>(
    conn: &Rc<RefCell<ScriptConn>>,
    op: impl FnOnce(Conn) -> LocalFuture<'a, (Conn, T)>,
) -> Result<T, DbError> {
    let taken = conn.borrow_mut().conn.take();
    let Some(c) = taken else {
        return Err(DbError::fatal("2006", "attempt to use an already closed connection"));
    };
    let (c, out) = op(c).await;
    conn.borrow_mut().conn = Some(c);
    Ok(out)
}

/// Sends `sql` as a plain query.
pub(super) async fn query(conn: &Rc<RefCell<ScriptConn>>, sql: &str, fetch: Fetch) -> Result<QueryResult, DbError> {
    with_conn(conn, |mut c| {
        Box::pin(async move {
            let r = c.query(sql, fetch).await;
            (c, r)
        })
    })
    .await
    .and_then(|r| r)
}

/// Opens the connection again (its statements prepared again), retrying while the server is
/// away, until the run stops.
pub(super) async fn reconnect(conn: &Rc<RefCell<ScriptConn>>) -> Result<(), DbError> {
    let ctx = Rc::clone(&conn.borrow().ctx);
    let mut backoff = std::time::Duration::from_millis(1);
    loop {
        match with_conn(conn, |mut c| {
            Box::pin(async move {
                let r = c.reconnect().await;
                (c, r)
            })
        })
        .await
        .and_then(|r| r)
        {
            Ok(()) => return Ok(()),
            Err(e) if ctx.shared.pacer.stopping() => return Err(e),
            Err(_) => {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(std::time::Duration::from_millis(100));
            }
        }
    }
}
