//! A run: start the engine threads, open every connection on its thread, start the load on
//! all of them together, drain the recorders at every interval boundary (and at every segment
//! boundary: the end of the warm-up, each step of a step plan), and assemble the result. This
//! side runs on the control runtime; the connections never leave their engine threads.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::client_cpu::CpuMeter;
use super::engine_threads::{EngineThreads, Spawner};
use super::progress::{Progress, Sink};
use super::reporter::Reporter;
use super::runtime::{engine_threads, recorder_shards};
use super::schedule::Schedule;
use super::shared::Shared;
use super::spec::{LoadShape, Resolved, Spec, WorkerNumbers};
use super::steps::{Step, Timeline};
use super::stop::Stop;
use super::thread_share::{Finished, Shares};
use super::ticks::Ticks;
use super::worker::fail;
use crate::db::{ServerInfo, ServerLimits};
use crate::driver::Target;
use crate::error::{EngineError, Result};
use crate::options::Options;
use crate::rand::Rng;
use crate::result::{IntervalReport, Phase, RunFacts, RunResult, StopReason};
use crate::stats::{epoch_s, Mono, Recorders, WorkerTotals};
use crate::workload::Workload;

/// Runs the spec's load on the default number of engine threads for its connections
/// ([`super::runtime::workers_for`]; `TOKIO_WORKER_THREADS` overrides it).
pub async fn run(spec: &Spec, sink: &Sink, stop: Stop) -> Result<RunResult> {
    let resolved = spec.resolve()?;
    let threads = engine_threads(resolved.load.threads);
    run_resolved(spec, resolved, sink, stop, threads).await
}

/// As [`run`], on `threads` engine threads (at most one per connection).
pub async fn run_on_threads(spec: &Spec, sink: &Sink, stop: Stop, threads: usize) -> Result<RunResult> {
    run_resolved(spec, spec.resolve()?, sink, stop, threads).await
}

/// Runs a load already resolved (a script's: `crate::script` builds its workload); `spec` says
/// how this client takes part in a distributed run.
pub async fn run_resolved(
    spec: &Spec,
    resolved: Resolved,
    sink: &Sink,
    stop: Stop,
    threads: usize,
) -> Result<RunResult> {
    let Resolved { workload, load, target, options } = resolved;
    let statements = workload.statements(target.dialect());
    let sqls: Arc<[String]> = statements.iter().map(|(sql, _)| sql.clone()).collect();
    let workload = Arc::new(workload);
    let engine = EngineThreads::start(threads.min(load.threads))?;

    let connect_start = Instant::now();
    let server = match check_target(engine.spawner(), sink, &target, &workload, load.threads, sqls.len()).await {
        // A script connects when it chooses to, as in sysbench: one that never does needs no server.
        Err(EngineError::Connect(_)) if matches!(*workload, Workload::Script(_)) => ServerInfo::default(),
        checked => checked?,
    };
    let mut user_stop = stop.clone();
    let mut by_thread = Shares::start(engine.spawner(), load.threads, &workload, &target, &sqls);
    tokio::select! {
        connected = by_thread.connected() => connected?,
        () = user_stop.stopped() => return Err(EngineError::Interrupted("while connecting; nothing was measured".into())),
    }
    if load.threads > engine.len() {
        // Connections share threads: too many states to stay in the TLB (huge_pages.rs). Part
        // of the set-up, before the load's clock starts.
        super::huge_pages::collapse_heap();
    }
    let connect_s = connect_start.elapsed().as_secs_f64();
    // Distributed runs: connected, now wait for the instant every client starts at.
    super::start::wait_for_start(spec.start_at, &mut user_stop).await?;

    let kinds = workload.kinds();
    let start = Instant::now();
    let started_at = epoch_s(SystemTime::now());
    let times = Times::of(&load, start);
    let stmt_kinds = statements.iter().map(|(_, k)| *k).collect();
    let shared = Arc::new(shared_state(spec, &load, &times, workload, stmt_kinds, stop.clone(), engine.len()));
    let planned_s = if load.time_s > 0.0 { load.warmup_s + load.time_s } else { 0.0 };
    sink.send(Progress::Started { threads: load.threads, connect_s, started_at, planned_s });

    // Each connection numbered among every client's (`Spec::workers`; else 0..threads).
    let numbers = spec.workers.unwrap_or(WorkerNumbers { first: 0, all: load.threads });
    by_thread.go(&shared, numbers.first, numbers.all.max(load.threads), load.rand_seed);
    let finished = by_thread.finished();
    tokio::pin!(finished);

    let interval = Duration::from_secs_f64(load.interval_s());
    let first_phase = if times.warmup_end.is_some() { Phase::Warmup } else { Phase::Run };
    let kind_names = kinds.iter().map(|k| (*k).to_string()).collect();
    let steps = load.plan.as_ref().map_or(&[][..], |p| &p.steps[..]);
    let cpu = CpuMeter::new(start, engine.len());
    let mut reporter = Reporter::new(kind_names, load.summarising(), first_phase, steps.to_vec(), interval, cpu);
    let boundaries = times.warmup_end.into_iter().chain(times.timeline.iter().flat_map(Timeline::boundaries));
    let mut ticks = Ticks::new(start, interval, boundaries, times.deadline);
    let mut stop_seen = false;
    // When workers still waiting for the server are abandoned (see END_GRACE).
    let mut give_up_at = times.deadline.map(|d| d + END_GRACE);
    let Finished { totals, abandoned } = loop {
        tokio::select! {
            done = &mut finished => break done,
            () = tokio::time::sleep_until(ticks.next().into()) => {
                let now = Instant::now();
                if last_event_started(&shared) && ticks.end_at(now) {
                    continue; // the last interval takes in the drain (ticks.rs)
                }
                let ends_segment = ticks.fired(now);
                let report = reporter.interval(&shared, now, (now - start).as_secs_f64(), ends_segment);
                if !stop_seen && answered(&report) {
                    // Still answering after the end (an open loop draining its backlog, slow
                    // transactions finishing): the grace runs from the last answer.
                    give_up_at = give_up_at.map(|t| t.max(now + END_GRACE));
                }
                sink.send(Progress::Interval(Box::new(report)));
            }
            // Once: after a fatal error the stop stays set and would wake this loop again and again.
            () = user_stop.stopped(), if !stop_seen => {
                stop_seen = true;
                by_thread.wake();
                ticks.end_at(Instant::now());
                give_up_at = Some(stopped(&shared, give_up_at));
            }
            () = sleep_until_or_never(give_up_at) => {
                // The threads drop their workers still waiting and report at once.
                by_thread.abandon();
                give_up_at = None;
            }
        }
    };
    if abandoned > 0 {
        report_abandoned(&shared, abandoned);
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
    let duration_s = end.saturating_duration_since(times.measured_start).as_secs_f64();

    // After the clock stopped: goodbyes are not measured.
    if let Err(e) = by_thread.close().await {
        fail(&shared, e.to_string());
    }
    drop(engine);
    let ended = Ended { started_at, connect_s, duration_s, server, options, driver: target.driver_name() };
    Ok(assemble(&shared, &reporter, &load, totals, ended))
}

/// When the load's parts begin and end.
struct Times {
    start: Instant,
    warmup_end: Option<Instant>,
    /// The end of the warm-up, else the start.
    measured_start: Instant,
    /// The end of `--time`; None without a time limit.
    deadline: Option<Instant>,
    /// A step plan's steps on the clock.
    timeline: Option<Timeline>,
}

impl Times {
    fn of(load: &LoadShape, start: Instant) -> Self {
        let warmup_end = (load.warmup_s > 0.0).then(|| start + Duration::from_secs_f64(load.warmup_s));
        let measured_start = warmup_end.unwrap_or(start);
        Self {
            start,
            warmup_end,
            measured_start,
            deadline: (load.time_s > 0.0).then(|| measured_start + Duration::from_secs_f64(load.time_s)),
            timeline: load.plan.as_ref().map(|p| p.timeline(measured_start)),
        }
    }
}

/// What the workers share on every engine thread: the recorders (a lane per thread, which
/// its connections record into, over [`recorder_shards`] sets of histograms).
fn shared_state(
    spec: &Spec,
    load: &LoadShape,
    times: &Times,
    workload: Arc<Workload>,
    stmt_kinds: Vec<usize>,
    stop: Stop,
    engine_threads: usize,
) -> Shared {
    let steps = load.plan.as_ref().map_or(&[][..], |p| &p.steps[..]);
    let recorders = Recorders::sharded(
        engine_threads,
        recorder_shards(engine_threads),
        workload.kinds().len(),
        times.warmup_end.is_none(),
    );
    Shared {
        recorders: if load.is_open_loop() { recorders } else { recorders.closed_loop() },
        stmt_kinds,
        deadline: times.deadline,
        deadline_mono: times.deadline.map(Mono::of),
        schedule: load.is_open_loop().then(|| {
            let origin = times.start + Duration::from_secs_f64(spec.arrival_phase_s.unwrap_or(0.0).max(0.0));
            // Clients sharing one seed (TPC-C's run-wide constants) draw distinct arrivals.
            let stream = spec.workers.map_or(0, |w| (1 << 40) + w.first as u64);
            Mutex::new(arrivals(load, steps, times.timeline.as_ref(), origin, times.deadline, stream))
        }),
        timeline: times.timeline.clone(),
        max_events: load.events,
        events_started: AtomicU64::new(0),
        running: AtomicUsize::new(load.threads),
        in_flight: AtomicUsize::new(0),
        stop,
        fatal: Mutex::new(None),
        interrupted: AtomicBool::new(false),
        workload,
    }
}

/// Whether the last of `--events` has started: from then on the load only drains.
fn last_event_started(shared: &Shared) -> bool {
    shared.max_events > 0 && shared.events_started.load(Ordering::Relaxed) >= shared.max_events
}

/// How long after the run's end (its time limit, Ctrl-C or a fatal error) workers still waiting
/// for the server are given: a server that stopped answering (SIGSTOP, a hung disk, a network
/// black hole) must not hang the run past its time limit. sysbench waits for ever. After the
/// time limit it counts from the server's last answer: an overloaded server that still answers
/// drains an open loop's backlog (or finishes its slow transactions) however long that takes,
/// rather than failing a run that measured exactly what it was asked to.
const END_GRACE: Duration = Duration::from_secs(10);

/// A stop (Ctrl-C, or a fatal error's): an interruption unless it was the error's, and the
/// workers still waiting are given `END_GRACE` from now at most. Returns when to give up.
fn stopped(shared: &Shared, give_up_at: Option<Instant>) -> Instant {
    if shared.fatal.lock().expect("fatal lock").is_none() {
        shared.interrupted.store(true, Ordering::Relaxed);
    }
    let by = Instant::now() + END_GRACE;
    give_up_at.map_or(by, |t| t.min(by))
}

/// The server answered something in this interval: a statement, a transaction or an error.
fn answered(report: &IntervalReport) -> bool {
    let c = &report.counts;
    c.transactions + c.reads + c.writes + c.others + c.errors > 0
}

async fn sleep_until_or_never(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Workers dropped after [`END_GRACE`]: their connections got no goodbye, and their
/// transactions in flight (the slowest of the run) were never measured, so the run is marked
/// failed, saying so, unless it was interrupted (then it stays interrupted).
fn report_abandoned(shared: &Shared, waiting: usize) {
    if !shared.interrupted.load(Ordering::Relaxed) {
        fail(
            shared,
            format!(
                "{waiting} connection(s) got no answer from the server for {} s after the run's end (the \
                 server stalled, hung or was stopped, or its transactions take longer than that: fewer \
                 connections or a longer --time); they were abandoned, and their transactions in flight are \
                 not in the results, so the latencies miss the slowest ones",
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
    options: Options,
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
    let totals = &reporter.totals;
    let how = load.summarising();
    let counts = totals.counts();
    let facts = RunFacts {
        workload: shared.workload.name().to_string(),
        options: e.options,
        driver: e.driver.to_string(),
        server_version: e.server.version,
        server_variables: e.server.variables,
        stop_reason,
        error,
        started_at: e.started_at,
        ended_at: epoch_s(SystemTime::now()),
        connect_s: e.connect_s,
        duration_s: e.duration_s,
        interval_s: load.interval_s(),
        warmup_s: load.warmup_s,
        rate_per_s: load.rate_per_s,
        flags: health_flags(reporter, load, e.driver, counts.client_lag_sum_ns.checked_div(counts.transactions)),
        threads,
        segments: reporter.segments.results(&how),
        tpcc: shared.workload.summary(&totals.snap.kinds, e.duration_s),
    };
    RunResult::assemble(facts, totals, reporter.kind_names(), &how)
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
    if reporter.totals.dropped > 0 {
        flags.push("open_loop_dropped_arrivals".to_string());
    }
    flags
}

/// Mean client-caused start lag above which an open-loop client is flagged as behind schedule.
const CLIENT_BEHIND_LAG_NS: u64 = 10_000_000;

/// One connection first, on an engine thread: a missing table, a bad path or too low a limit
/// fails here, before the others open.
async fn check_target(
    engine: &Spawner,
    sink: &Sink,
    target: &Target,
    workload: &Arc<Workload>,
    threads: usize,
    statements: usize,
) -> Result<ServerInfo> {
    let (target, workload, sink) = (target.clone(), Arc::clone(workload), sink.clone());
    let check = move || async move {
        let mut first = super::connect::open_one(&target, &[]).await?;
        workload.check(&mut first).await?;
        let (limits, why) = match first.limits().await {
            Ok(limits) => (limits, None),
            Err(e) => (ServerLimits::default(), Some(e.to_string())),
        };
        let unchecked = super::preflight::check(&target, &limits, threads as u64, statements as u64)?;
        if let Some(text) = super::preflight::unchecked_warning(&unchecked, why.as_deref()) {
            sink.send(Progress::Message { text });
        }
        let info = first.server_info().await;
        first.close().await;
        info.map_err(|e| EngineError::Driver(format!("cannot read the server's version: {e}")))
    };
    engine.spawn(0, "the target's check", check).join().await?
}
