//! Opens an engine thread's connections concurrently, before the clock starts: sysbench
//! also excludes connection set-up from the measured time.

use futures_util::stream::{self, StreamExt as _};

use crate::db::DbError;
use crate::driver::{Conn, Target};
use crate::error::{EngineError, Result};

/// Connections are opened at most this many at a time over all engine threads, so that a
/// server's listen backlog (and a SQLite file's lock) is not flooded.
const CONNECT_CONCURRENCY: usize = 64;

/// Opens `n` connections on this thread, one of `threads` engine threads opening theirs at the
/// same time, and prepares `sqls` on each; in order.
pub async fn open_share(target: &Target, n: usize, sqls: &[String], threads: usize) -> Result<Vec<Conn>> {
    let at_once = CONNECT_CONCURRENCY.div_ceil(threads.max(1));
    let mut opening =
        stream::iter(0..n).map(|i| async move { (i, open_one(target, sqls).await) }).buffer_unordered(at_once);
    let mut conns: Vec<Option<Conn>> = (0..n).map(|_| None).collect();
    while let Some((i, conn)) = opening.next().await {
        conns[i] = Some(conn?);
    }
    Ok(conns.into_iter().map(|c| c.expect("every connection was opened")).collect())
}

/// Closes `conns` politely ([`Conn::close`]), all at once, on this thread.
pub async fn close_all(conns: impl IntoIterator<Item = Conn>) {
    futures_util::future::join_all(conns.into_iter().map(Conn::close)).await;
}

pub async fn open_one(target: &Target, sqls: &[String]) -> Result<Conn> {
    let mut conn = Conn::open(target).await?;
    if !sqls.is_empty() {
        conn.prepare(sqls).await.map_err(|e| prepare_error(&e))?;
    }
    Ok(conn)
}

fn prepare_error(e: &DbError) -> EngineError {
    let msg = e.message.to_ascii_lowercase();
    if msg.contains("no such table") || msg.contains("doesn't exist") || msg.contains("does not exist") {
        EngineError::NotPrepared(format!(
            "the workload's tables are missing ({}); run `oltplab prepare` with the same workload, options and --db first",
            e.message
        ))
    } else {
        EngineError::Driver(format!("cannot prepare the workload's statements: {e}"))
    }
}
