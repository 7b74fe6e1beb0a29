//! A deterministic in-process driver for engine tests: no database, fixed latency,
//! optional injected errors, and a shared log of every statement it was sent. A connection
//! used from another thread than the one it was opened on fails every statement: the engine
//! keeps each connection on its engine thread (`exec/engine_threads.rs`), and every executor
//! test on the fake checks it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::db::{DbError, DbResult, ErrorAction, Fetch, QueryClass, QueryResult, StmtId, Value};
use crate::error::{EngineError, Result};

#[derive(Debug, Clone, Default)]
pub struct FakeTarget {
    /// Time each statement takes.
    pub latency_us: u64,
    /// Every Nth statement fails with a retryable error (0: never).
    pub fail_every: u64,
    /// The connection's Nth statement (1-based) stalls for `stall_ms` (0: never): a server pause.
    pub stall_at: u64,
    pub stall_ms: u64,
    /// From the connection's Nth statement on (0: never), the server is gone for good:
    /// statements fail with a lost connection and reconnecting fails.
    pub down_at: u64,
    /// Statements as executed, with parameters inlined.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl FakeTarget {
    /// Parses `//?latency_us=50&fail_every=7`.
    pub fn parse(rest: &str) -> Result<Self> {
        let mut t = FakeTarget::default();
        let query = rest.split_once('?').map_or("", |(_, q)| q);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let n: u64 = v.parse().map_err(|_| EngineError::config(format!("fake driver: bad value in '{pair}'")))?;
            match k {
                "latency_us" => t.latency_us = n,
                "fail_every" => t.fail_every = n,
                "stall_at" => t.stall_at = n,
                "stall_ms" => t.stall_ms = n,
                "down_at" => t.down_at = n,
                _ => return Err(EngineError::config(format!("fake driver: unknown option '{k}'"))),
            }
        }
        Ok(t)
    }
}

pub struct FakeConn {
    target: FakeTarget,
    sqls: Vec<String>,
    executed: u64,
    opened_on: std::thread::ThreadId,
}

impl FakeConn {
    pub fn new(target: FakeTarget) -> Self {
        Self { target, sqls: Vec::new(), executed: 0, opened_on: std::thread::current().id() }
    }

    #[allow(clippy::unnecessary_wraps)]
    pub fn prepare(&mut self, sqls: &[String]) -> DbResult<()> {
        self.sqls = sqls.to_vec();
        Ok(())
    }

    pub fn prepare_more(&mut self, sql: &str) -> StmtId {
        self.sqls.push(sql.to_owned());
        StmtId(self.sqls.len() - 1)
    }

    pub async fn execute(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> DbResult<QueryResult> {
        let sql = inline_params(&self.sqls[id.0], params);
        self.query(&sql, fetch).await
    }

    pub async fn query(&mut self, sql: &str, _fetch: Fetch) -> DbResult<QueryResult> {
        if std::thread::current().id() != self.opened_on {
            return Err(DbError::fatal(
                "FAKE_THREAD",
                "a statement ran on another thread than its connection opened on",
            ));
        }
        self.executed += 1;
        // Yield as a network driver would, so that a test's other tasks (a stop, the reporter) run.
        if self.target.down_at > 0 && self.executed >= self.target.down_at {
            tokio::task::yield_now().await;
            return Err(DbError {
                code: "FAKE_GONE".into(),
                message: "server gone".into(),
                action: ErrorAction::Reconnect,
                sql_state: String::new(),
            });
        }
        if self.target.stall_at > 0 && self.executed == self.target.stall_at {
            tokio::time::sleep(Duration::from_millis(self.target.stall_ms)).await;
        }
        if self.target.latency_us > 0 {
            tokio::time::sleep(Duration::from_micros(self.target.latency_us)).await;
        } else {
            tokio::task::yield_now().await;
        }
        self.target.log.lock().expect("fake log").push(sql.to_owned());
        if self.target.fail_every > 0 && self.executed % self.target.fail_every == 0 {
            return Err(DbError {
                code: "FAKE".into(),
                message: "injected failure".into(),
                action: ErrorAction::Retry,
                sql_state: String::new(),
            });
        }
        let upper = sql.trim_start().to_ascii_uppercase();
        let class = if upper.starts_with("SELECT") {
            QueryClass::Read
        } else if upper.starts_with("INSERT") || upper.starts_with("UPDATE") || upper.starts_with("DELETE") {
            QueryClass::Write
        } else {
            QueryClass::Other
        };
        let row_count = u64::from(class != QueryClass::Other);
        // A prepared database: every table answers, and no prepare was left unfinished.
        let unfinished = sql.contains(crate::db::UNFINISHED_PREPARE_TABLE);
        Ok(QueryResult { class, row_count, rows: vec![vec![Value::Int(i64::from(!unfinished))]], columns: 1 })
    }

    pub fn reconnect(&mut self) -> DbResult<()> {
        if self.target.down_at > 0 && self.executed >= self.target.down_at {
            return Err(DbError::fatal("FAKE_GONE", "server gone"));
        }
        Ok(())
    }
}

/// Replaces each `?` with the next parameter rendered as an SQL literal.
pub fn inline_params(sql: &str, params: &[Value]) -> String {
    let mut out = String::with_capacity(sql.len() + params.len() * 8);
    let mut next = params.iter();
    for ch in sql.chars() {
        match (ch, ch == '?') {
            (_, true) => match next.next() {
                Some(v) => out.push_str(&v.to_string()),
                None => out.push('?'),
            },
            (c, false) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_connection_used_from_another_thread_fails() {
        let mut conn = FakeConn::new(FakeTarget::default());
        assert!(conn.query("SELECT 1", Fetch::Discard).await.is_ok());
        let elsewhere = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(conn.query("SELECT 1", Fetch::Discard))
        });
        let e = elsewhere.join().unwrap().unwrap_err();
        assert_eq!((e.code.as_str(), e.action), ("FAKE_THREAD", ErrorAction::Fatal));
    }
}
