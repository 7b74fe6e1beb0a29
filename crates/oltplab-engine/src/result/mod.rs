//! The result documents the engine hands back (as JSON) to its caller: the one definition of
//! what a run measured. A local run and the distributed merge build them with the same code
//! ([`RunResult::assemble`], [`IntervalReport::of`]), so a merged run cannot drift from a
//! local one; every type reads back from its JSON (the merge reads its clients' results).

mod interval;
mod measured;
mod tpcc;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use interval::{EncodedHistogram, Gauges, IntervalReport, Phase, Span, SERVICE_TAG};
pub use measured::{Errors, Measured, Queries, Summarising, Totals};
pub use tpcc::{TpccConstants, TpccLatencyMs, TpccSummary, TpccType};

use crate::options::Options;
use crate::stats::{encode_base64, sysbench_buckets_ms, WorkerTotals};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    Time,
    Events,
    Interrupted,
    Error,
}

impl StopReason {
    /// The run did what it was asked: ran its time or its events.
    pub fn is_complete(self) -> bool {
        matches!(self, StopReason::Time | StopReason::Events)
    }
}

/// A run's result: what it knows of itself (`facts`), what its measured intervals add up to
/// (`measured` and what follows), flattened into one JSON object.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    #[serde(flatten)]
    pub facts: RunFacts,
    /// False when interrupted or stopped by an error.
    pub complete: bool,
    /// Transactions, queries, errors, latency and open-loop lateness of the measured time.
    #[serde(flatten)]
    pub measured: Measured,
    /// Latencies longer than an hour, recorded at one hour in the histograms.
    pub saturated: u64,
    /// CPU the client process used during the measured time, in core-seconds.
    pub client_cpu_s: f64,
    /// Whole-run histograms, V2 compressed base64: "" for transactions, statement kinds otherwise.
    pub histograms: BTreeMap<String, String>,
    /// sysbench's `--histogram` rows (value in ms, count), when asked for.
    pub histogram_ms: Option<Vec<(f64, u64)>>,
}

/// One step of a step plan: its measured intervals, summarised from their merged histograms.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    #[serde(flatten)]
    pub measured: Measured,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrepareResult {
    pub workload: String,
    pub options: Options,
    pub driver: String,
    pub server_version: String,
    pub tables: usize,
    pub duration_s: f64,
}

/// What a run knows besides what its measured intervals recorded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFacts {
    pub workload: String,
    /// Every option value, defaults filled in (`rand_seed`: the seed actually used).
    pub options: Options,
    pub driver: String,
    pub server_version: String,
    /// The server's global variables as read at connect time.
    pub server_variables: BTreeMap<String, String>,
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
    /// The warm-up before the measured time (left out of every total here).
    pub warmup_s: f64,
    /// The open-loop target rate (with `--rate-steps`, their mean); 0 for closed loop.
    pub rate_per_s: f64,
    /// Reasons to distrust the numbers: `client_cpu_saturated` (the client used at least 90% of
    /// every core in more than a tenth of the intervals), `client_behind_schedule` (open loop:
    /// a mean client-caused start lag above 10 ms), `open_loop_dropped_arrivals`; a distributed
    /// run adds `client_lost` and `client_started_late`.
    pub flags: Vec<String>,
    /// Per connection, for sysbench's "Threads fairness".
    pub threads: Vec<WorkerTotals>,
    /// A step plan's steps, each measured on its own (the totals above cover them all);
    /// None without a plan. Only the steps reached: an interrupted run has fewer.
    pub segments: Option<Vec<Segment>>,
    /// TPC-C's own summary (tpmC, per-type counts and latency); absent for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<TpccSummary>,
}

impl RunResult {
    /// The result of a run whose measured intervals add up to `totals` (`kinds`: the names of
    /// its statement-kind histograms).
    pub fn assemble(facts: RunFacts, totals: &Totals, kinds: &[String], how: &Summarising) -> Self {
        let snap = &totals.snap;
        let kind_histograms = kinds.iter().zip(&snap.kinds).filter(|(_, h)| !h.is_empty());
        let histograms = std::iter::once((String::new(), encode_base64(&snap.transactions)))
            .chain(kind_histograms.map(|(k, h)| (k.clone(), encode_base64(h))))
            .collect();
        RunResult {
            complete: facts.stop_reason.is_complete(),
            facts,
            measured: Measured::of(snap, totals.dropped, how),
            saturated: snap.counts.saturated,
            client_cpu_s: totals.client_cpu_s,
            histograms,
            histogram_ms: how.histogram_ms.then(|| sysbench_buckets_ms(&snap.transactions)),
        }
    }
}
