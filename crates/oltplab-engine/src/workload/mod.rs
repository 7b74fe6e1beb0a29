//! The workloads: sysbench's OLTP scripts and `bulk_insert`, behind one enum the
//! executor drives (names, options, statements to prepare, one event at a time,
//! prepare/check/cleanup). Dispatch is a plain match: no boxing on the hot path.

pub mod bulk_insert;
mod ctx;
pub mod oltp;
pub mod options;
mod tables;
pub mod unfinished_prepare;

pub use ctx::{EventCtx, Tally, WorkerInfo};

use crate::driver::{Conn, DbError, DbResult, Dialect};
use crate::error::{EngineError, Result};
use crate::rand::{rand_defs, Rng};
use bulk_insert::{BulkInsert, BulkState};
use oltp::{Oltp, OltpState, Script};
use options::{OptDef, Options};

/// Every workload oltplab runs (TPC-C will join them).
#[allow(clippy::large_enum_variant)] // one per run, shared by reference: its size does not matter
pub enum Workload {
    Oltp(Oltp),
    BulkInsert(BulkInsert),
}

/// What one connection keeps between events.
#[derive(Debug)]
pub enum WorkerState {
    Oltp(OltpState),
    BulkInsert(BulkState),
}

/// Progress of prepare and cleanup: sysbench's printed lines, and rows loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrepareEvent {
    Message(String),
    Rows { table: usize, done: u64, total: u64 },
}

const NAMES: [&str; 11] = [
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
        Script::from_name(name).map(Script::description)
    }

    /// The workload's options followed by the `--rand-*` options.
    pub fn defs(name: &str) -> Result<Vec<OptDef>> {
        let mut defs = if name == BULK_INSERT {
            Vec::new()
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
        let script = Script::from_name(name).ok_or_else(|| unknown(name))?;
        Ok(Workload::Oltp(Oltp::new(script, opts, threads)?))
    }

    pub fn name(&self) -> &'static str {
        match self {
            Workload::Oltp(w) => w.script().name(),
            Workload::BulkInsert(_) => BULK_INSERT,
        }
    }

    /// Labels of the statement kinds, for per-kind latency histograms.
    pub fn kinds(&self) -> Vec<&'static str> {
        match self {
            Workload::Oltp(w) => w.kinds(),
            Workload::BulkInsert(w) => w.kinds(),
        }
    }

    /// SQL to prepare on each connection, with each one's index in `kinds()`;
    /// `StmtId(i)` names the i-th entry.
    pub fn statements(&self, dialect: Dialect) -> Vec<(String, usize)> {
        match self {
            Workload::Oltp(w) => w.statements(dialect),
            Workload::BulkInsert(_) => Vec::new(),
        }
    }

    pub fn worker_state(&self, worker: WorkerInfo) -> WorkerState {
        match self {
            Workload::Oltp(w) => WorkerState::Oltp(w.worker_state()),
            Workload::BulkInsert(w) => WorkerState::BulkInsert(w.worker_state(worker)),
        }
    }

    /// One sysbench event. A [`DbError`] is returned as is: the executor rolls back and retries.
    pub async fn event(&self, ctx: &mut EventCtx<'_>, state: &mut WorkerState) -> DbResult<()> {
        match (self, state) {
            (Workload::Oltp(w), WorkerState::Oltp(s)) => w.event(ctx, s).await,
            (Workload::BulkInsert(w), WorkerState::BulkInsert(s)) => w.event(ctx, s).await,
            _ => Err(state_mismatch()),
        }
    }

    /// End of the run on this connection (`bulk_insert` sends its last rows).
    pub async fn finish(&self, ctx: &mut EventCtx<'_>, state: &mut WorkerState) -> DbResult<()> {
        match (self, state) {
            (Workload::Oltp(_), WorkerState::Oltp(_)) => Ok(()),
            (Workload::BulkInsert(w), WorkerState::BulkInsert(s)) => w.finish(ctx, s).await,
            _ => Err(state_mismatch()),
        }
    }

    /// Before a run: the tables prepare creates are there.
    pub async fn check(&self, conn: &mut Conn) -> Result<()> {
        match self {
            Workload::Oltp(w) => w.check(conn).await,
            Workload::BulkInsert(w) => w.check(conn).await,
        }
    }

    /// Tables prepare creates (its units of parallel work).
    pub fn prepare_units(&self) -> usize {
        match self {
            Workload::Oltp(w) => w.tables(),
            Workload::BulkInsert(w) => w.tables(),
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
        }
    }

    pub async fn cleanup(&self, conn: &mut Conn, progress: &mut (dyn FnMut(PrepareEvent) + Send)) -> Result<()> {
        match self {
            Workload::Oltp(w) => w.cleanup(conn, progress).await,
            Workload::BulkInsert(w) => w.cleanup(conn, progress).await,
        }
    }
}

fn unknown(name: &str) -> EngineError {
    EngineError::config(format!("unknown workload '{name}'; choose one of {}", NAMES.join(", ")))
}

fn state_mismatch() -> DbError {
    DbError::fatal("OLTPLAB", "internal error: the worker state does not belong to this workload")
}
