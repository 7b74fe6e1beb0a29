//! A closed-loop run: connect, start the workers together, drain the recorders
//! at every interval boundary, and assemble the result.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::task::JoinSet;

use super::connect::open_all;
use super::progress::{EncodedHistogram, IntervalReport, Progress, Sink};
use super::spec::{LoadShape, Resolved, Spec};
use super::stop::Stop;
use super::worker::{run_worker, Shared, WorkerTotals};
use crate::driver::ServerInfo;
use crate::error::{EngineError, Result};
use crate::rand::Rng;
use crate::result::{RunResult, StopReason};
use crate::stats::{encode_base64, LatencySummary, Recorders, Snapshot};
use crate::workload::WorkerInfo;

/// Recorder shards: a few per core is enough to keep lock contention negligible.
fn shard_count(threads: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    threads.min(4 * cores).max(1)
}

pub async fn run(spec: &Spec, sink: &Sink, stop: Stop) -> Result<RunResult> {
    let Resolved { workload, load, target, options } = spec.resolve()?;
    let statements = workload.statements(target.dialect());
    let sqls: Vec<String> = statements.iter().map(|(sql, _)| sql.clone()).collect();

    let connect_start = Instant::now();
    let server = check_target(&target, &workload, load.threads, sqls.len()).await?;
    let mut user_stop = stop.clone();
    let conns = tokio::select! {
        conns = open_all(&target, load.threads, &sqls) => conns?,
        () = user_stop.stopped() => return Err(EngineError::Interrupted("while connecting; nothing was measured".into())),
    };
    let connect_s = connect_start.elapsed().as_secs_f64();

    let kinds = workload.kinds();
    let start = Instant::now();
    let started_at = epoch_s(SystemTime::now());
    let shared = Arc::new(Shared {
        recorders: Recorders::new(shard_count(load.threads), kinds.len()),
        stmt_kinds: statements.iter().map(|(_, k)| *k).collect(),
        deadline: (load.time_s > 0.0).then(|| start + Duration::from_secs_f64(load.time_s)),
        max_events: load.events,
        events_started: AtomicU64::new(0),
        running: AtomicUsize::new(load.threads),
        stop: stop.clone(),
        fatal: Mutex::new(None),
        interrupted: AtomicBool::new(false),
        workload,
    });
    sink.send(Progress::Started { threads: load.threads, connect_s, started_at });

    let mut workers = JoinSet::new();
    for (id, conn) in conns.into_iter().enumerate() {
        let rng = Rng::for_stream(load.rand_seed, id as u64 + 1);
        let info = WorkerInfo { id, count: load.threads };
        workers.spawn(run_worker(Arc::clone(&shared), conn, rng, info));
    }

    let interval = Duration::from_secs_f64(load.interval_s());
    let mut reporter = Reporter::new(kinds.iter().map(|k| (*k).to_string()).collect(), load.percentile);
    let mut next_tick = start + interval;
    let mut totals: Vec<WorkerTotals> = Vec::with_capacity(load.threads);
    loop {
        tokio::select! {
            joined = workers.join_next() => match joined {
                Some(Ok(t)) => totals.push(t),
                Some(Err(e)) => super::worker::fail(&shared, format!("a worker panicked: {e}")),
                None => break,
            },
            () = tokio::time::sleep_until(next_tick.into()) => {
                sink.send(Progress::Interval(reporter.interval(&shared, start.elapsed().as_secs_f64())));
                next_tick += interval;
            }
            () = user_stop.stopped(), if !shared.interrupted.load(Ordering::Relaxed) => {
                if shared.fatal.lock().expect("fatal lock").is_none() {
                    shared.interrupted.store(true, Ordering::Relaxed);
                }
            }
        }
    }
    let duration_s = start.elapsed().as_secs_f64();
    // The last, partial interval: nothing measured is dropped.
    if reporter.last_s < duration_s - 1e-6 || reporter.intervals == 0 {
        sink.send(Progress::Interval(reporter.interval(&shared, duration_s)));
    }

    let ended = Ended { started_at, connect_s, duration_s, server, options, driver: target.driver_name() };
    Ok(assemble(&shared, reporter, &load, totals, ended))
}

/// What the run knows when its workers have ended.
struct Ended {
    started_at: f64,
    connect_s: f64,
    duration_s: f64,
    server: ServerInfo,
    options: crate::workload::options::Options,
    driver: &'static str,
}

fn assemble(shared: &Shared, reporter: Reporter, load: &LoadShape, threads: Vec<WorkerTotals>, e: Ended) -> RunResult {
    let error = shared.fatal.lock().expect("fatal lock").clone();
    let stop_reason = if error.is_some() {
        StopReason::Error
    } else if shared.interrupted.load(Ordering::Relaxed) {
        StopReason::Interrupted
    } else if load.events > 0 && shared.events_started.load(Ordering::Relaxed) >= load.events {
        StopReason::Events
    } else {
        StopReason::Time
    };
    let total = reporter.total;
    let kinds = reporter.kinds.iter().zip(&total.kinds).filter(|(_, h)| !h.is_empty());
    RunResult {
        workload: shared.workload.name().to_string(),
        options: e.options,
        driver: e.driver.to_string(),
        server_version: e.server.version,
        server_variables: e.server.variables,
        complete: matches!(stop_reason, StopReason::Time | StopReason::Events),
        error,
        stop_reason,
        started_at: e.started_at,
        ended_at: epoch_s(SystemTime::now()),
        connect_s: e.connect_s,
        duration_s: e.duration_s,
        latency_ns: LatencySummary::new(&total.transactions, &total.counts, load.percentile),
        histograms: std::iter::once((String::new(), encode_base64(&total.transactions)))
            .chain(kinds.map(|(k, h)| (k.clone(), encode_base64(h))))
            .collect(),
        histogram_ms: load.histogram.then(|| crate::stats::sysbench_buckets_ms(&total.transactions)),
        transactions: total.counts.transactions,
        queries: total.counts.queries_doc(),
        errors: total.counts.errors_doc(),
        reconnects: total.counts.reconnects,
        saturated: total.counts.saturated,
        threads,
        interval_s: load.interval_s(),
    }
}

/// One connection first: a missing table, a bad path or too low a limit fails here, before the others open.
async fn check_target(
    target: &crate::driver::Target,
    workload: &crate::workload::Workload,
    threads: usize,
    statements: usize,
) -> Result<ServerInfo> {
    let mut first = super::connect::open_one(target, &[]).await?;
    workload.check(&mut first).await?;
    let limits = first.limits().await.unwrap_or_default();
    super::preflight::check(target, &limits, threads as u64, statements as u64)?;
    first.server_info().await.map_err(|e| EngineError::Driver(format!("cannot read the server's version: {e}")))
}

pub fn epoch_s(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Turns recorder drains into interval reports and keeps the run's totals.
struct Reporter {
    kinds: Vec<String>,
    percentile: f64,
    last_s: f64,
    intervals: u64,
    total: Snapshot,
}

impl Reporter {
    fn new(kinds: Vec<String>, percentile: f64) -> Self {
        let total = Snapshot::new(kinds.len());
        Self { kinds, percentile, last_s: 0.0, intervals: 0, total }
    }

    /// Drains the recorders into the interval that ends at `t_s` (seconds since the start).
    fn interval(&mut self, shared: &Shared, t_s: f64) -> IntervalReport {
        let snap = shared.recorders.drain();
        let (start_s, interval_s) = (self.last_s, t_s - self.last_s);
        let encode = |tag: Option<String>, h: &crate::stats::Histogram| EncodedHistogram {
            tag,
            start_s,
            interval_s,
            max_ns: h.max(),
            encoded: encode_base64(h),
        };
        let mut histograms = vec![encode(None, &snap.transactions)];
        for (kind, h) in self.kinds.iter().zip(&snap.kinds) {
            if !h.is_empty() {
                histograms.push(encode(Some(kind.clone()), h));
            }
        }
        let c = &snap.counts;
        let report = IntervalReport {
            t_s,
            interval_s,
            threads_running: shared.running.load(Ordering::Relaxed),
            transactions: c.transactions,
            reads: c.reads,
            writes: c.writes,
            others: c.others,
            errors: c.errors,
            reconnects: c.reconnects,
            errors_by_code: c.errors_by_code.clone(),
            latency_ns: LatencySummary::new(&snap.transactions, c, self.percentile),
            histograms,
        };
        self.total.merge(&snap);
        self.last_s = t_s;
        self.intervals += 1;
        report
    }
}
