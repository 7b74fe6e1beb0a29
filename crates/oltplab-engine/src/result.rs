//! The result documents the engine hands back (as JSON) to its caller.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::options::Options;
use crate::stats::{Counts, LatencySummary, WorkerTotals};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    Time,
    Events,
    Interrupted,
    Error,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub workload: String,
    /// Every option value, defaults filled in (`rand_seed`: the seed actually used).
    pub options: Options,
    pub driver: String,
    pub server_version: String,
    /// The server's global variables as read at connect time.
    pub server_variables: BTreeMap<String, String>,
    /// False when interrupted or stopped by an error.
    pub complete: bool,
    pub stop_reason: StopReason,
    pub error: Option<String>,
    /// Seconds since the Unix epoch.
    pub started_at: f64,
    pub ended_at: f64,
    /// Opening and preparing the connections (not part of the measured time).
    pub connect_s: f64,
    /// sysbench's "total time": from the start of the load to the last worker's end.
    pub duration_s: f64,
    pub interval_s: f64,
    pub transactions: u64,
    pub queries: Queries,
    pub errors: Errors,
    pub reconnects: u64,
    /// Latencies longer than an hour, recorded at one hour in the histograms.
    pub saturated: u64,
    /// Response time: from the intended start in open loop.
    pub latency_ns: LatencySummary,
    /// Open loop only: from the actual start.
    pub service_latency_ns: Option<LatencySummary>,
    /// `--percentile`'s list: (rank, response time in ns), and service time in open loop.
    pub percentiles_ns: Vec<(f64, u64)>,
    pub service_percentiles_ns: Option<Vec<(f64, u64)>>,
    /// The warm-up before the measured time (left out of every total here).
    pub warmup_s: f64,
    /// The open-loop target rate (with `--rate-steps`, their mean); 0 for closed loop.
    pub rate_per_s: f64,
    /// Open loop: transactions that started more than 2 ms after their intended start.
    pub late: u64,
    /// Open loop: arrivals dropped because every connection was busy and the backlog full.
    pub dropped: u64,
    pub lag_max_ns: u64,
    /// CPU the client process used during the measured time, in core-seconds.
    pub client_cpu_s: f64,
    /// Reasons to distrust the numbers: `client_cpu_saturated` (the client used at least 90% of
    /// every core in more than a tenth of the intervals), `client_behind_schedule` (open loop:
    /// a mean client-caused start lag above 10 ms), `open_loop_dropped_arrivals`.
    pub flags: Vec<String>,
    /// Whole-run histograms, V2 compressed base64: "" for transactions, statement kinds otherwise.
    pub histograms: BTreeMap<String, String>,
    /// sysbench's `--histogram` rows (value in ms, count), when asked for.
    pub histogram_ms: Option<Vec<(f64, u64)>>,
    /// Per connection, for sysbench's "Threads fairness".
    pub threads: Vec<WorkerTotals>,
    /// A step plan's steps, each measured on its own (the totals above cover them all);
    /// None without a plan. Only the steps reached: an interrupted run has fewer.
    pub segments: Option<Vec<Segment>>,
    /// TPC-C's own summary (tpmC, per-type counts and latency); absent for other workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<serde_json::Value>,
}

/// One step of a step plan: its measured intervals, summarised from their merged histograms.
#[derive(Debug, Clone, Serialize)]
pub struct Segment {
    /// 0-based, as the intervals' `step`.
    pub step: usize,
    /// The step's target rate; 0 in closed loop.
    pub rate_per_s: f64,
    /// Connections the step ran.
    pub threads: usize,
    /// Start and end of the step's intervals, seconds since the load (warm-up included) started.
    pub start_s: f64,
    pub end_s: f64,
    pub duration_s: f64,
    pub transactions: u64,
    pub queries: Queries,
    pub errors: Errors,
    pub reconnects: u64,
    pub latency_ns: LatencySummary,
    pub service_latency_ns: Option<LatencySummary>,
    pub percentiles_ns: Vec<(f64, u64)>,
    pub service_percentiles_ns: Option<Vec<(f64, u64)>>,
    pub late: u64,
    pub dropped: u64,
    pub lag_max_ns: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PrepareResult {
    pub workload: String,
    pub options: Options,
    pub driver: String,
    pub server_version: String,
    pub tables: usize,
    pub duration_s: f64,
}

/// Queries as sysbench classifies them (by result).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Queries {
    pub read: u64,
    pub write: u64,
    pub other: u64,
    pub total: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Errors {
    pub total: u64,
    pub by_code: BTreeMap<String, u64>,
}

impl Counts {
    pub fn queries_doc(&self) -> Queries {
        Queries { read: self.reads, write: self.writes, other: self.others, total: self.queries() }
    }

    pub fn errors_doc(&self) -> Errors {
        Errors { total: self.errors, by_code: self.errors_by_code.clone() }
    }
}
