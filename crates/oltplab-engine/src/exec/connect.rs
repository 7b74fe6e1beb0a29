//! Opens the run's connections concurrently, before the clock starts: sysbench
//! also excludes connection set-up from the measured time.

use tokio::task::JoinSet;

use crate::driver::{Conn, Target};
use crate::error::{EngineError, Result};

/// Connections are opened at most this many at a time, so that a server's
/// listen backlog (and a SQLite file's lock) is not flooded.
const CONNECT_CONCURRENCY: usize = 64;

/// Opens `n` connections and prepares `sqls` on each.
pub async fn open_all(target: &Target, n: usize, sqls: &[String]) -> Result<Vec<Conn>> {
    let mut conns: Vec<Option<Conn>> = (0..n).map(|_| None).collect();
    let mut pending = JoinSet::new();
    let mut next = 0;
    while next < n || !pending.is_empty() {
        while next < n && pending.len() < CONNECT_CONCURRENCY {
            let (target, sqls, id) = (target.clone(), sqls.to_vec(), next);
            pending.spawn(async move { (id, open_one(&target, &sqls).await) });
            next += 1;
        }
        let joined = pending.join_next().await.expect("a task is pending");
        let (id, conn) = joined.map_err(|e| crate::panics::joined("a connect task", &e))?;
        conns[id] = Some(conn?);
    }
    Ok(conns.into_iter().map(|c| c.expect("every connection was opened")).collect())
}

/// Closes `conns` politely ([`Conn::close`]), all at once.
pub async fn close_all(conns: impl IntoIterator<Item = Conn>) {
    let mut closing: JoinSet<()> = conns.into_iter().map(Conn::close).collect();
    while closing.join_next().await.is_some() {}
}

pub async fn open_one(target: &Target, sqls: &[String]) -> Result<Conn> {
    let mut conn = Conn::open(target).await?;
    if !sqls.is_empty() {
        conn.prepare(sqls).await.map_err(|e| prepare_error(&e))?;
    }
    Ok(conn)
}

fn prepare_error(e: &crate::db::DbError) -> EngineError {
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
