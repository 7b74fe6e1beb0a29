//! The workloads: sysbench's OLTP scripts and `bulk_insert`, behind one enum the
//! executor drives (names, options, statements to prepare, one event at a time,
//! prepare/check/cleanup). Dispatch is a plain match: no boxing on the hot path.

pub mod bulk_insert;
mod ctx;
pub mod oltp;
pub mod script;
mod tables;
pub mod tpcc;
pub mod unfinished_prepare;

pub use ctx::{EventCtx, WorkerInfo};

use std::rc::Rc;

use crate::db::{DbError, DbResult, Dialect};
use crate::driver::Conn;
use crate::error::{EngineError, Result};
use crate::options::{OptDef, Options};
use crate::rand::{rand_defs, Rng};
use bulk_insert::{BulkInsert, BulkState};
use oltp::{Oltp, OltpState, Script};
use script::{EventLane, ScriptEvent, ScriptLoad, ScriptState, ScriptThread};
use tpcc::{Tpcc, TpccState};

/// Every workload oltplab runs. Shared by the engine threads, so `Send` and `Sync`; what is
/// not lives in [`ThreadState`] and [`WorkerState`], on their thread.
#[allow(clippy::large_enum_variant)] // one per run, shared by reference: its size does not matter
pub enum Workload {
    Oltp(Oltp),
    BulkInsert(BulkInsert),
    Tpcc(Tpcc),
    /// A sysbench Lua script (`crate::script` builds it).
    Script(Box<dyn ScriptLoad>),
}

/// What a workload keeps per engine thread (the executor runs the connections on a few
/// threads, each owning its share): created on that thread before its connections' states, which
/// may keep an `Rc` of it, and never moved off it, so it need not be `Send` (a script keeps its
/// one Lua state per thread here). The native workloads keep nothing per thread.
#[derive(Default)]
pub struct ThreadState {
    /// A script's Lua state and its sysbench threads.
    script: Option<Box<dyn ScriptThread>>,
    /// `!Send` and `!Sync`, as a Lua state is: the compiler holds the executor to keeping
    /// per-thread and per-connection state on their thread.
    _on_its_thread: std::marker::PhantomData<std::rc::Rc<()>>,
}

impl std::fmt::Debug for ThreadState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadState").field("script", &self.script.is_some()).finish()
    }
}

/// What one connection keeps between events (created on its engine thread; it need not be `Send`).
#[derive(Debug)]
pub enum WorkerState {
    Oltp(OltpState),
    BulkInsert(BulkState),
    Tpcc(TpccState),
    Script(ScriptState),
}

/// Progress of prepare and cleanup: sysbench's printed lines, and rows loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrepareEvent {
    Message(String),
    Rows { table: usize, done: u64, total: u64 },
}

const NAMES: [&str; 12] = [
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "select_random_points",
    "select_random_ranges",
    "bulk_insert",
    tpcc::NAME,
];

const BULK_INSERT: &str = "bulk_insert";

impl Workload {
    pub fn names() -> &'static [&'static str] {
        &NAMES
    }

    pub fn description(name: &str) -> Option<&'static str> {
        if name == BULK_INSERT {
            return Some(
                "Bulk insert: multi-row INSERTs of up to 512 KiB, each thread into its own table; one row per event",
            );
        }
        if name == tpcc::NAME {
            return Some(tpcc::DESCRIPTION);
        }
        Script::from_name(name).map(Script::description)
    }

    /// The workload's options followed by the `--rand-*` options.
    pub fn defs(name: &str) -> Result<Vec<OptDef>> {
        let mut defs = if name == BULK_INSERT {
            Vec::new()
        } else if name == tpcc::NAME {
            tpcc::defs()
        } else {
            oltp::defs(Script::from_name(name).ok_or_else(|| unknown(name))?)
        };
        defs.extend(rand_defs());
        Ok(defs)
    }

    /// Builds the workload from options parsed with [`Workload::defs`].
    pub fn new(name: &str, opts: &Options, threads: usize) -> Result<Self> {
        if name == BULK_INSERT {
            return Ok(Workload::BulkInsert(BulkInsert::new(threads)?));
        }
        if name == tpcc::NAME {
            return Ok(Workload::Tpcc(Tpcc::new(opts, threads)?));
        }
        let script = Script::from_name(name).ok_or_else(|| unknown(name))?;
        Ok(Workload::Oltp(Oltp::new(script, opts, threads)?))
    }

    pub fn name(&self) -> &'static str {
        match self {
            Workload::Oltp(w) => w.script().name(),
            Workload::BulkInsert(_) => BULK_INSERT,
            Workload::Tpcc(_) => tpcc::NAME,
            Workload::Script(w) => w.name(),
        }
    }

    /// The run's error for a fatal `e`: a script's is sysbench's own line (`` `thread_run'
    /// function failed: file:line: ...``), a native workload's names the workload.
    pub fn fatal_message(&self, e: &DbError) -> String {
        match self {
            Workload::Script(_) => e.message.clone(),
            _ => format!("{e} in {}", self.name()),
        }
    }

    /// Labels of the statement kinds, for per-kind latency histograms.
    pub fn kinds(&self) -> Vec<&'static str> {
        match self {
            Workload::Oltp(w) => w.kinds(),
            Workload::BulkInsert(w) => w.kinds(),
            Workload::Tpcc(w) => w.kinds(),
            Workload::Script(_) => Vec::new(),
        }
    }

    /// SQL to prepare on each connection, with each one's index in `kinds()`;
    /// `StmtId(i)` names the i-th entry.
    pub fn statements(&self, dialect: Dialect) -> Vec<(String, usize)> {
        match self {
            Workload::Oltp(w) => w.statements(dialect),
            Workload::BulkInsert(_) | Workload::Script(_) => Vec::new(),
            Workload::Tpcc(w) => w.statements(dialect),
        }
    }

    /// Whether the workload opens its connections itself (a script connects in its
    /// `thread_init`): the executor then opens none, and its workers hold placeholders.
    pub fn opens_own_connections(&self) -> bool {
        matches!(self, Workload::Script(_))
    }

    /// The state of engine thread `thread`, built on it before the load starts, for its
    /// `connections` (their indices among the run's).
    pub async fn thread_state(&self, thread: usize, connections: &[usize]) -> Result<ThreadState> {
        Ok(match self {
            Workload::Script(w) => {
                ThreadState { script: Some(w.thread_state(thread, connections).await?), ..ThreadState::default() }
            }
            _ => ThreadState::default(),
        })
    }

    /// A connection's state, built on its engine thread from that thread's state; `lane`, the
    /// executor's hand-over between its events (a script's loop takes it itself).
    pub fn worker_state(
        &self,
        thread: &Rc<ThreadState>,
        worker: WorkerInfo,
        lane: Option<Rc<dyn EventLane>>,
    ) -> Result<WorkerState> {
        Ok(match self {
            Workload::Script(_) => {
                let script = thread.script.as_ref().ok_or_else(|| EngineError::Internal("no Lua state".into()))?;
                WorkerState::Script(ScriptState(script.worker(worker.id, lane)?))
            }
            Workload::Oltp(w) => WorkerState::Oltp(w.worker_state()),
            Workload::BulkInsert(w) => WorkerState::BulkInsert(w.worker_state(worker)),
            Workload::Tpcc(w) => WorkerState::Tpcc(w.worker_state(worker)),
        })
    }

    /// A wait before the next event, outside its latency (TPC-C's keying and think times).
    pub fn pause(&self, state: &mut WorkerState, rng: &mut Rng) -> Option<std::time::Duration> {
        match (self, state) {
            (Workload::Tpcc(w), WorkerState::Tpcc(s)) => w.pause(s, rng),
            _ => None,
        }
    }

    /// The workload's own part of the run's summary (`summary.tpcc`), from the measured
    /// histograms of its `kinds()`.
    pub fn summary(&self, kinds: &[crate::stats::Histogram], measured_s: f64) -> Option<crate::result::TpccSummary> {
        match self {
            Workload::Tpcc(w) => Some(w.summary(kinds, measured_s)),
            _ => None,
        }
    }

    /// One sysbench event. A [`DbError`] is returned as is: the executor rolls back and retries.
    pub async fn event(&self, ctx: &mut EventCtx<'_>, state: &mut WorkerState) -> DbResult<()> {
        // TPC-C's and a script's events are boxed (a script's by its trait), TPC-C's out of
        // line (`boxed.rs`): their states (TPC-C's alone was 800 B more than the OLTP event's)
        // would otherwise widen every connection's task, and the point select's state would
        // spread over more cache lines (docs/performance-engine.md).
        match (self, state) {
            (Workload::Oltp(w), WorkerState::Oltp(s)) => w.event(ctx, s).await,
            (Workload::BulkInsert(w), WorkerState::BulkInsert(s)) => w.event(ctx, s).await,
            (Workload::Tpcc(w), WorkerState::Tpcc(s)) => crate::boxed::boxed(|| w.event(ctx, s)).await,
            (Workload::Script(_), WorkerState::Script(s)) => {
                // An event without a blocking call (bulk_insert.lua's, until its buffer fills)
                // never yields: without consume_budget, one connection would run every event
                // of its engine thread, where sysbench's OS threads share the time.
                let done = s.0.event().await;
                ctx.clock.lap_ns(); // the event's end
                tokio::task::coop::consume_budget().await;
                done.map(|e| script_done(ctx, e))
            }
            _ => Err(state_mismatch()),
        }
    }

    /// End of the run on this connection (`bulk_insert` sends its last rows).
    pub async fn finish(&self, ctx: &mut EventCtx<'_>, state: &mut WorkerState) -> DbResult<()> {
        match (self, state) {
            (Workload::Oltp(_), WorkerState::Oltp(_)) | (Workload::Tpcc(_), WorkerState::Tpcc(_)) => Ok(()),
            (Workload::BulkInsert(w), WorkerState::BulkInsert(s)) => w.finish(ctx, s).await,
            (Workload::Script(_), WorkerState::Script(s)) => s.0.finish().await.map(|e| script_done(ctx, e)),
            _ => Err(state_mismatch()),
        }
    }

    /// Before a run: the tables prepare creates are there.
    pub async fn check(&self, conn: &mut Conn) -> Result<()> {
        match self {
            Workload::Oltp(w) => w.check(conn).await,
            Workload::BulkInsert(w) => w.check(conn).await,
            Workload::Tpcc(w) => w.check(conn).await,
            Workload::Script(_) => Ok(()), // its thread_init finds out
        }
    }

    /// Tables prepare creates (its units of parallel work).
    pub fn prepare_units(&self) -> usize {
        match self {
            Workload::Oltp(w) => w.tables(),
            Workload::BulkInsert(w) => w.tables(),
            Workload::Tpcc(w) => w.prepare_units(),
            Workload::Script(_) => 0,
        }
    }

    /// Before the parallel units: false when the data are there already (TPC-C's idempotent
    /// prepare); TPC-C also creates its tables here.
    pub async fn prepare_begin(
        &self,
        conn: &mut Conn,
        progress: &mut (dyn FnMut(PrepareEvent) + Send),
    ) -> Result<bool> {
        match self {
            Workload::Tpcc(w) => w.prepare_begin(conn, progress).await,
            _ => Ok(true),
        }
    }

    /// After every unit: secondary indexes and constraints (TPC-C).
    pub async fn prepare_end(&self, conn: &mut Conn, progress: &mut (dyn FnMut(PrepareEvent) + Send)) -> Result<()> {
        match self {
            Workload::Tpcc(w) => w.prepare_end(conn, progress).await,
            _ => Ok(()),
        }
    }

    /// Creates and loads table `table` (1-based).
    pub async fn prepare_unit(
        &self,
        conn: &mut Conn,
        table: usize,
        rng: &mut Rng,
        progress: &mut (dyn FnMut(PrepareEvent) + Send),
    ) -> Result<()> {
        match self {
            Workload::Oltp(w) => w.prepare_unit(conn, table, rng, progress).await,
            Workload::BulkInsert(w) => w.prepare_unit(conn, table, progress).await,
            Workload::Tpcc(w) => w.prepare_unit(conn, table, rng, progress).await,
            Workload::Script(_) => Err(script_command()),
        }
    }

    pub async fn cleanup(&self, conn: &mut Conn, progress: &mut (dyn FnMut(PrepareEvent) + Send)) -> Result<()> {
        match self {
            Workload::Oltp(w) => w.cleanup(conn, progress).await,
            Workload::BulkInsert(w) => w.cleanup(conn, progress).await,
            Workload::Tpcc(w) => w.cleanup(conn, progress).await,
            Workload::Script(_) => Err(script_command()),
        }
    }
}

fn unknown(name: &str) -> EngineError {
    EngineError::config(format!("unknown workload '{name}'; choose one of {}", NAMES.join(", ")))
}

/// What a script's event did, handed to the executor through the event's context.
fn script_done(ctx: &mut EventCtx<'_>, e: ScriptEvent) {
    ctx.tally = e.tally;
    ctx.handled_errors = e.errors;
    ctx.ended = e.ended;
}

fn script_command() -> EngineError {
    EngineError::Internal("a script prepares and cleans up by its own commands (script::command)".into())
}

fn state_mismatch() -> DbError {
    DbError::fatal("OLTPLAB", "internal error: the worker state does not belong to this workload")
}
