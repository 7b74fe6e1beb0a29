//! Progress events the engine emits while it works: a few a second at most,
//! never one per query. The binding forwards them to Python as JSON.

use std::collections::BTreeMap;

use serde::Serialize;
use tokio::sync::mpsc;

use crate::stats::LatencySummary;

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Progress {
    Message {
        text: String,
    },
    /// A script's own output (`print`, `io.write`): text to show as it is, newlines included.
    Output {
        text: String,
    },
    /// A script run's FATAL or WARNING line, without the prefix (the drop-in prints it on stderr).
    Log {
        level: LogLevel,
        text: String,
    },
    Rows {
        table: usize,
        done: u64,
        total: u64,
    },
    /// `planned_s`: warm-up plus measured time, 0 when only `--events` or Ctrl-C ends the run.
    Started {
        threads: usize,
        connect_s: f64,
        started_at: f64,
        planned_s: f64,
    },
    Interval(Box<IntervalReport>),
}

/// How grave a [`Progress::Log`] line is: sysbench's `FATAL:` or `WARNING:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Fatal,
    Warning,
}

/// Which part of the run an interval belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// `--warmup-time`: stored, left out of the summary.
    Warmup,
    /// The measured `--time`.
    Run,
}

/// One interval of a run, as intervals.csv and latency.hlog store it.
#[derive(Debug, Clone, Serialize)]
pub struct IntervalReport {
    /// End of the interval, seconds since the run (warm-up included) started.
    pub t_s: f64,
    pub interval_s: f64,
    pub phase: Phase,
    /// A step plan's step (0-based) of a measured interval; None in warm-up and without a plan.
    pub step: Option<usize>,
    /// Connections serving the load at the interval's end.
    pub threads_running: usize,
    pub transactions: u64,
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    pub errors: u64,
    pub reconnects: u64,
    pub errors_by_code: BTreeMap<String, u64>,
    /// Response time: from the intended start in open loop, the actual start in closed loop.
    pub latency_ns: LatencySummary,
    /// Open loop only: from the actual start.
    pub service_latency_ns: Option<LatencySummary>,
    /// Open loop: how late transactions started, on average and at most.
    pub lag_mean_ns: u64,
    pub lag_max_ns: u64,
    /// Open loop: transactions that started more than 2 ms late.
    pub late: u64,
    /// Open loop: arrivals waiting for a free connection at the interval's end.
    pub backlog: usize,
    /// Connections inside a transaction at the interval's end.
    pub in_flight: usize,
    /// Open loop: arrivals dropped because the backlog was full.
    pub dropped: u64,
    /// The client process's CPU in the interval, in percent of one core (200 = two cores).
    pub client_cpu_pct: f64,
    pub histograms: Vec<EncodedHistogram>,
}

/// One hlog line's worth of histogram.
#[derive(Debug, Clone, Serialize)]
pub struct EncodedHistogram {
    /// None for transactions; the statement kind otherwise.
    pub tag: Option<String>,
    pub start_s: f64,
    pub interval_s: f64,
    pub max_ns: u64,
    pub encoded: String,
}

/// Where progress goes. Sending never blocks the load; a closed receiver is ignored.
#[derive(Clone)]
pub struct Sink(Option<mpsc::UnboundedSender<Progress>>);

impl Sink {
    pub fn new(tx: mpsc::UnboundedSender<Progress>) -> Self {
        Self(Some(tx))
    }

    /// A sink that drops everything (tests, library callers that do not care).
    pub fn none() -> Self {
        Self(None)
    }

    pub fn send(&self, p: Progress) {
        if let Some(tx) = &self.0 {
            let _ = tx.send(p);
        }
    }

    pub fn message(&self, text: impl Into<String>) {
        self.send(Progress::Message { text: text.into() });
    }
}
