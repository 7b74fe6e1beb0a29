//! `sysbench.hooks.report_intermediate` and `report_cumulative` during a script's run, as
//! sysbench 1.0.20 calls them: in a Lua state of their own (sysbench's reporting thread's: the
//! script loaded, its options exported), with sysbench's stat table in its units (seconds,
//! counts of the interval or of the run). The run's progress passes through here on its way
//! to the caller: each interval sysbench would print becomes a call of the intermediate hook;
//! the run's result, of the cumulative one (which replaces the final report, docs/lua.md).

use std::future::Future;
use std::sync::Mutex;
use std::thread::JoinHandle;

use tokio::sync::mpsc;

use super::command::{join_own_thread, main_loaded, spawn_own_thread};
use super::ctx::LocalFuture;
use super::errors::one_line;
use super::CommandSpec;
use crate::error::Result;
use crate::exec::{LogLevel, Progress, Sink, Stop};
use crate::result::{IntervalReport, RunResult};

const INTERMEDIATE: &str = "report_intermediate";
const CUMULATIVE: &str = "report_cumulative";

/// An interval shorter than this share of `--report-interval` is the run's last, partial one:
/// sysbench, which reports on a timer, makes no report of it (as cli/display.py prints no line).
const REPORTED_SHARE: f64 = 0.9;

/// A hook's call: its name and the stat table's fields.
struct Call {
    hook: &'static str,
    stat: Vec<(&'static str, f64)>,
}

pub struct Reports {
    /// Where the caller wants the run's progress.
    outer: Sink,
    /// What the run sends to, and where this reads it (None: the script sets no report hook).
    inner: Option<(Sink, Mutex<Option<mpsc::UnboundedReceiver<Progress>>>)>,
    calls: Mutex<Option<mpsc::UnboundedSender<Call>>>,
    thread: Mutex<Option<JoinHandle<Result<()>>>>,
    intermediate: bool,
    cumulative: bool,
    report_interval_s: f64,
}

impl Reports {
    /// Starts the reporting state when the script sets a report hook (`hooks`, as its main
    /// state read them after loading it, as sysbench does).
    pub fn start(cmd: &CommandSpec, sink: &Sink, hooks: &[String]) -> Result<Self> {
        let has = |name: &str| hooks.iter().any(|h| h == name);
        let (intermediate, cumulative) = (has(INTERMEDIATE), has(CUMULATIVE));
        let report_interval_s = cmd.resolve()?.0.float("report_interval");
        let mut reports = Self {
            outer: sink.clone(),
            inner: None,
            calls: Mutex::new(None),
            thread: Mutex::new(None),
            intermediate: intermediate && report_interval_s > 0.0,
            cumulative,
            report_interval_s,
        };
        if !(reports.intermediate || reports.cumulative) {
            return Ok(reports);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        reports.inner = Some((Sink::new(tx), Mutex::new(Some(rx))));
        let (calls_tx, calls_rx) = mpsc::unbounded_channel();
        let (cmd, sink) = (cmd.clone(), sink.clone());
        let thread = spawn_own_thread("oltplab-report", move || reporting_state(cmd, sink, calls_rx))?;
        *reports.calls.lock().expect("calls lock") = Some(calls_tx);
        *reports.thread.lock().expect("thread lock") = Some(thread);
        Ok(reports)
    }

    /// The sink the run sends its progress to.
    pub fn sink(&self) -> &Sink {
        self.inner.as_ref().map_or(&self.outer, |(sink, _)| sink)
    }

    /// Runs `run`, passing its progress on and calling the intermediate hook for its intervals.
    pub async fn during<T>(&self, run: impl Future<Output = T>) -> T {
        let Some(mut rx) = self.inner.as_ref().and_then(|(_, rx)| rx.lock().expect("progress lock").take()) else {
            return run.await;
        };
        tokio::pin!(run);
        loop {
            tokio::select! {
                biased;
                Some(p) = rx.recv() => self.forward(p),
                out = &mut run => {
                    while let Ok(p) = rx.try_recv() {
                        self.forward(p);
                    }
                    return out;
                }
            }
        }
    }

    fn forward(&self, p: Progress) {
        if let Progress::Interval(r) = &p {
            if self.intermediate && r.interval_s >= REPORTED_SHARE * self.report_interval_s {
                self.call(INTERMEDIATE, intermediate_stat(r));
            }
        }
        self.outer.send(p);
    }

    /// Calls the cumulative hook with the run's totals, when the run did what it was asked
    /// (sysbench makes no final report of an interrupted or failed run).
    pub fn cumulative(&self, result: &RunResult) {
        if self.cumulative && result.facts.stop_reason.is_complete() {
            self.call(CUMULATIVE, cumulative_stat(result));
        }
    }

    fn call(&self, hook: &'static str, stat: Vec<(&'static str, f64)>) {
        if let Some(calls) = self.calls.lock().expect("calls lock").as_ref() {
            let _ = calls.send(Call { hook, stat });
        }
    }

    /// Waits for the hooks' last call and closes the reporting state (`report_json`'s `]`).
    pub async fn finish(&self) {
        drop(self.calls.lock().expect("calls lock").take());
        let Some(thread) = self.thread.lock().expect("thread lock").take() else { return };
        let joined = tokio::task::spawn_blocking(move || join_own_thread(thread)).await;
        if let Ok(Err(e)) = joined {
            self.outer.send(Progress::Log { level: LogLevel::Fatal, text: e.to_string() });
        }
    }
}

/// The reporting thread: the script in a state of its own, each call as it comes.
fn reporting_state(
    cmd: CommandSpec,
    sink: Sink,
    mut calls: mpsc::UnboundedReceiver<Call>,
) -> LocalFuture<'static, Result<()>> {
    Box::pin(async move {
        let (main, _) = main_loaded(&cmd, &sink, &Stop::new()).await?;
        while let Some(call) = calls.recv().await {
            let called = async {
                let stat = main.host.lua().create_table()?;
                for (name, value) in call.stat {
                    stat.set(name, value)?;
                }
                main.host.call_hook(&main.thread, call.hook, stat).await
            };
            if let Err(e) = called.await {
                // sysbench logs a failed hook and goes on.
                let text = format!("`{}' function failed: {}", call.hook, one_line(&e));
                sink.send(Progress::Log { level: LogLevel::Fatal, text });
            }
        }
        if let Err(e) = main.host.at_exit() {
            sink.send(Progress::Log { level: LogLevel::Fatal, text: one_line(&e) });
        }
        Ok(())
    })
}

const NS_PER_S: f64 = 1e9;

/// sysbench's fields common to both reports (`stat_to_lua_table`).
#[allow(clippy::cast_precision_loss)] // counts far below 2^53
fn common(
    threads_running: usize,
    time_interval_s: f64,
    time_total_s: f64,
    latency_pct_ns: u64,
    counts: [u64; 6],
) -> Vec<(&'static str, f64)> {
    let [events, reads, writes, other, errors, reconnects] = counts.map(|c| c as f64);
    vec![
        ("threads_running", threads_running as f64),
        ("time_interval", time_interval_s),
        ("time_total", time_total_s),
        ("latency_pct", latency_pct_ns as f64 / NS_PER_S),
        ("events", events),
        ("reads", reads),
        ("writes", writes),
        ("other", other),
        ("errors", errors),
        ("reconnects", reconnects),
    ]
}

#[allow(clippy::cast_precision_loss)]
fn intermediate_stat(r: &IntervalReport) -> Vec<(&'static str, f64)> {
    let c = &r.counts;
    let counts = [c.transactions, c.reads, c.writes, c.others, c.errors, c.reconnects];
    let mut stat = common(r.threads_running, r.interval_s, r.t_s, r.latency_ns.pct, counts);
    // sysbench fills these in rate mode only; they are 0 otherwise.
    stat.extend([("queue_length", r.backlog as f64), ("concurrency", r.in_flight as f64)]);
    stat
}

#[allow(clippy::cast_precision_loss)]
fn cumulative_stat(result: &RunResult) -> Vec<(&'static str, f64)> {
    let m = &result.measured;
    let q = &m.queries;
    let counts = [m.transactions, q.read, q.write, q.other, m.errors.total, m.reconnects];
    let duration_s = result.facts.duration_s;
    // The workers have ended when sysbench reports: none is running.
    let mut stat = common(0, duration_s, duration_s, m.latency_ns.pct, counts);
    let l = &m.latency_ns;
    stat.extend([
        ("latency_min", l.min as f64 / NS_PER_S),
        ("latency_max", l.max as f64 / NS_PER_S),
        ("latency_avg", l.mean / NS_PER_S),
        ("latency_sum", l.sum as f64 / NS_PER_S),
    ]);
    stat
}
