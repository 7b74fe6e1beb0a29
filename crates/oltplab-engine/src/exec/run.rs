//! A run: connect, start the workers together, drain the recorders at every interval
//! boundary (and at every segment boundary: the end of the warm-up, each step of a step
//! plan), and assemble the result.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use tokio::task::JoinSet;

use super::connect::{close_all, open_all};
use super::progress::{Phase, Progress, Sink};
use super::reporter::Reporter;
use super::schedule::Schedule;
use super::segments::Latencies;
use super::spec::{LoadShape, Resolved, Spec, WorkerNumbers};
use super::steps::{Step, Timeline};
use super::stop::Stop;
use super::ticks::Ticks;
use super::worker::{run_worker, Shared};
use crate::db::ServerInfo;
use crate::error::{EngineError, Result};
use crate::rand::Rng;
use crate::result::{RunResult, StopReason};
use crate::stats::{encode_base64, epoch_s, Recorders, WorkerTotals};
use crate::workload::WorkerInfo;

/// Recorder shards: only the runtime's worker threads record at the same time. A connection's
/// shard is fixed, so with several workers a few shards per worker keep two of them from
/// meeting on one lock; with one worker (up to 4 cores) nothing can meet and one shard is
/// enough. Each shard is 2.6 MB of histograms, drained and reset at every interval.
fn shard_count(threads: usize) -> usize {
    let workers = tokio::runtime::Handle::current().metrics().num_workers();
    let shards = if workers == 1 { 1 } else { 4 * workers };
    threads.min(shards).max(1)
}

pub async fn run(spec: &Spec, sink: &Sink, stop: Stop) -> Result<RunResult> {
    let Resolved { workload, load, target, options } = spec.resolve()?;
    let statements = workload.statements(target.dialect());
    let sqls: Vec<String> = statements.iter().map(|(sql, _)| sql.clone()).collect();

    let connect_start = Instant::now();
    let server = check_target(sink, &target, &workload, load.threads, sqls.len()).await?;
    let mut user_stop = stop.clone();
    let conns = connect_all(&target, load.threads, &sqls, &mut user_stop).await?;
    let connect_s = connect_start.elapsed().as_secs_f64();
    // Distributed runs: connected, now wait for the instant every client starts at.
    super::start::wait_for_start(spec.start_at, &mut user_stop).await?;

    let kinds = workload.kinds();
    let start = Instant::now();
    let started_at = epoch_s(SystemTime::now());
    let warmup_end = (load.warmup_s > 0.0).then(|| start + Duration::from_secs_f64(load.warmup_s));
    let measured_start = warmup_end.unwrap_or(start);
    let open_loop = load.is_open_loop();
    let timeline = load.plan.as_ref().map(|p| p.timeline(measured_start));
    let steps = load.plan.as_ref().map_or(&[][..], |p| &p.steps[..]);
    let deadline = (load.time_s > 0.0).then(|| measured_start + Duration::from_secs_f64(load.time_s));
    let shared = Arc::new(Shared {
        recorders: Recorders::new(shard_count(load.threads), kinds.len(), warmup_end.is_none()),
        stmt_kinds: statements.iter().map(|(_, k)| *k).collect(),
        deadline,
        schedule: open_loop.then(|| {
            let origin = start + Duration::from_secs_f64(spec.arrival_phase_s.unwrap_or(0.0).max(0.0));
            // Clients sharing one seed (TPC-C's run-wide constants) draw distinct arrivals.
            let stream = spec.workers.map_or(0, |w| (1 << 40) + w.first as u64);
            Mutex::new(arrivals(&load, steps, timeline.as_ref(), origin, deadline, stream))
        }),
        timeline: timeline.clone(),
        max_events: load.events,
        events_started: AtomicU64::new(0),
        running: AtomicUsize::new(load.threads),
        in_flight: AtomicUsize::new(0),
        answers: AtomicU64::new(0),
        stop: stop.clone(),
        fatal: Mutex::new(None),
        interrupted: AtomicBool::new(false),
        workload,
    });
    let planned_s = if load.time_s > 0.0 { load.warmup_s + load.time_s } else { 0.0 };
    sink.send(Progress::Started { threads: load.threads, connect_s, started_at, planned_s });

    let mut workers = spawn_workers(&shared, conns, &load, spec.workers);

    let interval = Duration::from_secs_f64(load.interval_s());
    let first_phase = if warmup_end.is_some() { Phase::Warmup } else { Phase::Run };
    let kind_names = kinds.iter().map(|k| (*k).to_string()).collect();
    let mut reporter =
        Reporter::new(kind_names, load.percentile, open_loop, first_phase, steps.to_vec(), start, interval);
    let boundaries = warmup_end.into_iter().chain(timeline.iter().flat_map(Timeline::boundaries));
    let mut ticks = Ticks::new(start, interval, boundaries, deadline);
    let mut totals: Vec<WorkerTotals> = Vec::with_capacity(load.threads);
    let mut finished = Vec::with_capacity(load.threads);
    let mut end_watch = EndWatch::new(deadline);
    loop {
        tokio::select! {
            joined = workers.join_next() => match joined {
                Some(Ok((t, conn))) => {
                    totals.push(t);
                    finished.push(conn);
                }
                Some(Err(e)) => super::worker::fail(&shared, crate::panics::joined("a worker", &e).to_string()),
                None => break,
            },
            () = tokio::time::sleep_until(ticks.next().into()) => {
                let now = Instant::now();
                if last_event_started(&shared) && ticks.end_at(now) {
                    continue; // the last interval takes in the drain (ticks.rs)
                }
                let ends_segment = ticks.fired(now);
                let report = reporter.interval(&shared, now, (now - start).as_secs_f64(), ends_segment);
                sink.send(Progress::Interval(Box::new(report)));
            }
            // Once: after a fatal error the stop stays set and would wake this loop again and again.
            () = user_stop.stopped(), if !end_watch.stop_seen => {
                ticks.end_at(Instant::now());
                let fatal = shared.fatal.lock().expect("fatal lock").is_some();
                if !fatal {
                    shared.interrupted.store(true, Ordering::Relaxed);
                }
                end_watch.look_now();
            }
            () = sleep_until_or_never(end_watch.look_at) => {
                if end_watch.silent(shared.answers.load(Ordering::Relaxed)) {
                    abandon(&shared, &mut workers).await;
                    break;
                }
            }
        }
    }
    // The workers can all see the stop and end before this loop does: still an interruption.
    if user_stop.is_stopped() && shared.fatal.lock().expect("fatal lock").is_none() {
        shared.interrupted.store(true, Ordering::Relaxed);
    }
    let end = Instant::now();
    let run_s = (end - start).as_secs_f64();
    // The last, partial interval: nothing measured is dropped.
    if reporter.last_s < run_s - 1e-6 || reporter.intervals == 0 {
        sink.send(Progress::Interval(Box::new(reporter.interval(&shared, end, run_s, false))));
    }
    // sysbench's "total time": the measured part only.
    let duration_s = end.saturating_duration_since(measured_start).as_secs_f64();

    // After the clock stopped: goodbyes are not measured.
    close_all(finished).await;
    let ended = Ended { started_at, connect_s, duration_s, server, options, driver: target.driver_name() };
    Ok(assemble(&shared, &reporter, &load, totals, ended))
}

/// Whether the last of `--events` has started: from then on the load only drains.
fn last_event_started(shared: &Shared) -> bool {
    shared.max_events > 0 && shared.events_started.load(Ordering::Relaxed) >= shared.max_events
}

/// How long after the run's end (its time limit, Ctrl-C or a fatal error) the server may answer
/// none of the workers still waiting before they are abandoned: a server that stopped answering
/// (SIGSTOP, a hung disk, a network black hole) must not hang the run past its time limit, but
/// a slow one still answering (2,000 connections' last transactions, an open loop's backlog on
/// a loaded host) is waited for, its transactions measured. sysbench waits for ever.
const END_GRACE: Duration = Duration::from_secs(10);

/// One worker per connection, numbered among every client's (`Spec::workers`; else 0..threads).
fn spawn_workers(
    shared: &Arc<Shared>,
    conns: Vec<crate::driver::Conn>,
    load: &LoadShape,
    numbers: Option<WorkerNumbers>,
) -> JoinSet<(WorkerTotals, crate::driver::Conn)> {
    let numbers = numbers.unwrap_or(WorkerNumbers { first: 0, all: load.threads });
    let mut workers = JoinSet::new();
    for (local, conn) in conns.into_iter().enumerate() {
        let id = numbers.first + local;
        let rng = Rng::for_stream(load.rand_seed, id as u64 + 1);
        let info = WorkerInfo { id, count: numbers.all.max(load.threads) };
        workers.spawn(run_worker(Arc::clone(shared), conn, rng, info));
    }
    workers
}

/// Whether the server still answers the workers waiting after the run's end: looked at first at
/// the end (or at Ctrl-C), then [`END_GRACE`] after each look that saw new answers.
struct EndWatch {
    look_at: Option<Instant>,
    /// `Shared::answers` at the last look.
    answers_seen: Option<u64>,
    /// Ctrl-C or a fatal error was seen: once, since the stop stays set.
    stop_seen: bool,
}

impl EndWatch {
    fn new(deadline: Option<Instant>) -> Self {
        Self { look_at: deadline, answers_seen: None, stop_seen: false }
    }

    /// The stop: look now.
    fn look_now(&mut self) {
        *self = Self { look_at: Some(Instant::now()), answers_seen: None, stop_seen: true };
    }

    /// At `look_at`: true when the server answered nothing since the last look, `END_GRACE` ago.
    fn silent(&mut self, answers: u64) -> bool {
        if self.answers_seen == Some(answers) {
            return true;
        }
        self.answers_seen = Some(answers); // still answering: a slow server, not a hung one
        self.look_at = Some(Instant::now() + END_GRACE);
        false
    }
}

async fn sleep_until_or_never(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Drops the workers still waiting after [`END_GRACE`] without an answer: their connections get no goodbye,
/// and their transactions in flight (the slowest of the run) were never measured, so the run
/// is marked failed, saying so, unless it was interrupted (then it stays interrupted).
async fn abandon(shared: &Shared, workers: &mut JoinSet<(WorkerTotals, crate::driver::Conn)>) {
    let waiting = workers.len();
    workers.abort_all();
    while workers.join_next().await.is_some() {}
    if !shared.interrupted.load(Ordering::Relaxed) {
        super::worker::fail(
            shared,
            format!(
                "{waiting} connection(s) got no answer from the server for {} s after the run's end (the \
                 server stalled, hung or was stopped); they were abandoned, and their transactions in flight \
                 are not in the results, so the latencies miss the slowest ones",
                END_GRACE.as_secs()
            ),
        );
    }
}

/// An open loop's arrival schedule. A rate plan's later steps switch the rate at their
/// starts; the warm-up runs at the first step's.
fn arrivals(
    load: &LoadShape,
    steps: &[Step],
    timeline: Option<&Timeline>,
    start: Instant,
    deadline: Option<Instant>,
    stream: u64,
) -> Schedule {
    let rng = Rng::for_stream(load.rand_seed, stream);
    let first_rate = steps.first().map_or(load.rate_per_s, |s| s.rate_per_s);
    let changes: Vec<_> =
        timeline.into_iter().flat_map(Timeline::boundaries).zip(steps.iter().skip(1).map(|s| s.rate_per_s)).collect();
    let mut schedule = Schedule::new(first_rate, &changes, load.arrivals, rng, start, load.max_backlog);
    if let Some(end) = deadline {
        schedule.set_end(end);
    }
    schedule
}

/// What the run knows when its workers have ended.
struct Ended {
    started_at: f64,
    connect_s: f64,
    duration_s: f64,
    server: ServerInfo,
    options: crate::options::Options,
    driver: &'static str,
}

fn assemble(shared: &Shared, reporter: &Reporter, load: &LoadShape, threads: Vec<WorkerTotals>, e: Ended) -> RunResult {
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
    let kinds: Vec<(String, String)> = reporter
        .kind_names()
        .iter()
        .zip(&reporter.total.kinds)
        .filter(|(_, h)| !h.is_empty())
        .map(|(k, h)| (k.clone(), encode_base64(h)))
        .collect();
    let total = &reporter.total;
    let Latencies { latency_ns, service_latency_ns, percentiles_ns, service_percentiles_ns } =
        Latencies::of(total, load);
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
        latency_ns,
        service_latency_ns,
        percentiles_ns,
        service_percentiles_ns,
        warmup_s: load.warmup_s,
        rate_per_s: load.rate_per_s,
        late: total.counts.late,
        dropped: reporter.dropped,
        lag_max_ns: total.counts.lag_max_ns,
        client_cpu_s: reporter.client_cpu_s,
        flags: health_flags(
            reporter,
            load,
            e.driver,
            total.counts.client_lag_sum_ns.checked_div(total.counts.transactions),
        ),
        histograms: std::iter::once((String::new(), encode_base64(&total.transactions))).chain(kinds).collect(),
        histogram_ms: load.histogram.then(|| crate::stats::sysbench_buckets_ms(&total.transactions)),
        transactions: total.counts.transactions,
        queries: total.counts.queries_doc(),
        errors: total.counts.errors_doc(),
        reconnects: total.counts.reconnects,
        saturated: total.counts.saturated,
        threads,
        interval_s: load.interval_s(),
        segments: reporter.segments.results(load),
        tpcc: shared.workload.summary(&total.kinds, e.duration_s),
    }
}

/// Warnings that the numbers do not describe the server alone.
fn health_flags(reporter: &Reporter, load: &LoadShape, driver: &str, client_lag_mean_ns: Option<u64>) -> Vec<String> {
    let mut flags = Vec::new();
    // An embedded database runs inside the client: its CPU is the server's, so no flag.
    if driver != "sqlite" && reporter.client_saturated() {
        flags.push("client_cpu_saturated".to_string());
    }
    // Lag while every connection was busy is the server's (or too few --threads): it is in the
    // response times, as it should be. Lag while a connection was free is the client's.
    if load.is_open_loop() && client_lag_mean_ns.is_some_and(|ns| ns > CLIENT_BEHIND_LAG_NS) {
        flags.push("client_behind_schedule".to_string());
    }
    if reporter.dropped > 0 {
        flags.push("open_loop_dropped_arrivals".to_string());
    }
    flags
}

/// Mean client-caused start lag above which an open-loop client is flagged as behind schedule.
const CLIENT_BEHIND_LAG_NS: u64 = 10_000_000;

/// One connection first: a missing table, a bad path or too low a limit fails here, before the others open.
/// Opens every connection, or gives up on the user's stop.
async fn connect_all(
    target: &crate::driver::Target,
    n: usize,
    sqls: &[String],
    user_stop: &mut Stop,
) -> Result<Vec<crate::driver::Conn>> {
    tokio::select! {
        conns = open_all(target, n, sqls) => conns,
        () = user_stop.stopped() => Err(EngineError::Interrupted("while connecting; nothing was measured".into())),
    }
}

async fn check_target(
    sink: &Sink,
    target: &crate::driver::Target,
    workload: &crate::workload::Workload,
    threads: usize,
    statements: usize,
) -> Result<ServerInfo> {
    let mut first = super::connect::open_one(target, &[]).await?;
    workload.check(&mut first).await?;
    let (limits, why) = match first.limits().await {
        Ok(limits) => (limits, None),
        Err(e) => (crate::db::ServerLimits::default(), Some(e.to_string())),
    };
    let unchecked = super::preflight::check(target, &limits, threads as u64, statements as u64)?;
    if let Some(text) = super::preflight::unchecked_warning(&unchecked, why.as_deref()) {
        sink.send(Progress::Message { text });
    }
    let info = first.server_info().await;
    first.close().await;
    info.map_err(|e| EngineError::Driver(format!("cannot read the server's version: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_watch_waits_while_the_server_answers_and_gives_up_on_silence() {
        let deadline = Instant::now();
        let mut watch = EndWatch::new(Some(deadline));
        assert_eq!(watch.look_at, Some(deadline)); // the first look is at the end
        assert!(!watch.silent(100)); // what the run had: no verdict yet
        let next = watch.look_at.expect("a next look");
        assert!(next >= deadline + END_GRACE);
        assert!(!watch.silent(101)); // one more answer: slow, still answering
        assert!(watch.look_at.expect("a next look") >= next);
        assert!(watch.silent(101)); // none for END_GRACE: hung
    }

    #[test]
    fn a_stop_looks_at_once_and_only_once() {
        let mut watch = EndWatch::new(None);
        assert_eq!(watch.look_at, None); // no time limit: no look until a stop
        watch.look_now();
        assert!(watch.stop_seen);
        assert!(watch.look_at.is_some_and(|t| t <= Instant::now()));
        assert!(!watch.silent(7));
        assert!(watch.silent(7));
    }
}
