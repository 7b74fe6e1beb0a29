//! What a workload's event sees: one connection, its random generator, and
//! helpers that time and classify each statement as sysbench counts them.

use crate::db::{DbResult, Fetch, QueryResult, StmtId, Value};
use crate::driver::{Conn, Now};
use crate::rand::Rng;
use crate::stats::{EventClock, Tally};

/// Who runs the event: sysbench's thread id and thread count.
#[derive(Debug, Clone, Copy)]
pub struct WorkerInfo {
    /// 0-based, as sysbench's `thread_id`.
    pub id: usize,
    /// `--threads`.
    pub count: usize,
}

pub struct EventCtx<'a> {
    pub conn: &'a mut Conn,
    pub rng: &'a mut Rng,
    pub worker: WorkerInfo,
    /// Statement kind (index into the workload's `kinds()`) of each prepared statement.
    stmt_kinds: &'a [usize],
    pub tally: Tally,
    /// Times the event and each statement: one clock read per statement.
    pub clock: EventClock,
    /// (kind, latency) of each statement that completed in this event.
    pub(crate) stmt_latencies_ns: Vec<(usize, u64)>,
    /// Errors the workload handled itself (a script restarts its event in Lua), for the
    /// executor to record: error code, and whether the connection was opened again.
    pub handled_errors: Vec<(String, bool)>,
    /// The connection's load ended by itself (a script's thread loop returned): what ran since
    /// its last event is not an event, and no other follows.
    pub ended: bool,
}

impl<'a> EventCtx<'a> {
    /// An event that starts now.
    pub fn new(conn: &'a mut Conn, rng: &'a mut Rng, worker: WorkerInfo, stmt_kinds: &'a [usize]) -> Self {
        Self::reusing(conn, rng, worker, stmt_kinds, EventClock::start(), Vec::with_capacity(32))
    }

    /// An event timed by `clock`, recording into `latencies` (cleared): the executor hands the
    /// same buffer to every event of a connection, so that no event allocates.
    pub fn reusing(
        conn: &'a mut Conn,
        rng: &'a mut Rng,
        worker: WorkerInfo,
        stmt_kinds: &'a [usize],
        clock: EventClock,
        mut latencies: Vec<(usize, u64)>,
    ) -> Self {
        latencies.clear();
        Self {
            conn,
            rng,
            worker,
            stmt_kinds,
            tally: Tally::default(),
            clock,
            stmt_latencies_ns: latencies,
            handled_errors: Vec::new(),
            ended: false,
        }
    }

    /// Executes a prepared statement and discards its rows (they are still read).
    pub async fn exec(&mut self, id: StmtId, params: &[Value]) -> DbResult<QueryResult> {
        self.run(id, params, Fetch::Discard).await
    }

    /// Executes a prepared statement and returns its rows (TPC-C needs them).
    pub async fn exec_rows(&mut self, id: StmtId, params: &[Value]) -> DbResult<QueryResult> {
        self.run(id, params, Fetch::Rows).await
    }

    /// Sends SQL text, unprepared, as sysbench's `con:query()`; timed as statement kind `kind`.
    pub async fn query(&mut self, kind: usize, sql: &str) -> DbResult<QueryResult> {
        let result = self.conn.query(sql, Fetch::Discard).await;
        self.finish(kind, &result);
        result
    }

    async fn run(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> DbResult<QueryResult> {
        // A thread's sole connection mostly completes the statement here, without awaiting the
        // driver's futures (docs/performance-engine.md, "A statement without a future").
        let result = match self.conn.execute_now(id, params, fetch) {
            Now::Done(result) => result,
            Now::Wait(pending) => self.conn.finish(pending).await,
            Now::Later => self.conn.execute(id, params, fetch).await,
        };
        self.finish(self.stmt_kinds[id.0], &result);
        result
    }

    fn finish(&mut self, kind: usize, result: &DbResult<QueryResult>) {
        // A failed statement's time also ends here: it is not added to the next statement.
        let ns = self.clock.lap_ns();
        if let Ok(r) = result {
            self.tally.add(r.class);
            self.stmt_latencies_ns.push((kind, ns));
        }
    }
}
