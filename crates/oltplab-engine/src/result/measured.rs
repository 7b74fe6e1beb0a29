//! What a stretch of a run measured — the whole run, or one step of a step plan — and the
//! measured intervals added up that it is computed from. One definition, used by a local run
//! and by the distributed merge alike: percentiles come from merged histograms, min, max, mean
//! and sum from exact counters, never from averaged percentiles.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::{Counts, LatencySummary, Snapshot};

/// How a run is summarised: its `--percentile` list, whether it keeps service time (open loop)
/// and sysbench's `--histogram` buckets.
#[derive(Debug, Clone, Default)]
pub struct Summarising {
    /// Every percentile asked for, in order (empty when disabled); the first is sysbench's.
    pub percentiles: Vec<f64>,
    pub open_loop: bool,
    pub histogram_ms: bool,
}

impl Summarising {
    /// The percentile sysbench prints (`pct` of a summary); 0 when disabled.
    pub fn percentile(&self) -> f64 {
        self.percentiles.first().copied().unwrap_or(0.0)
    }
}

/// Queries as sysbench classifies them (by result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queries {
    pub read: u64,
    pub write: u64,
    pub other: u64,
    pub total: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Errors {
    pub total: u64,
    pub by_code: BTreeMap<String, u64>,
}

/// The measured block that a run and each of its segments carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub transactions: u64,
    pub queries: Queries,
    pub errors: Errors,
    pub reconnects: u64,
    /// Response time: from the intended start in open loop.
    pub latency_ns: LatencySummary,
    /// Open loop only: from the actual start.
    pub service_latency_ns: Option<LatencySummary>,
    /// `--percentile`'s list: (rank, response time in ns), and service time in open loop.
    pub percentiles_ns: Vec<(f64, u64)>,
    pub service_percentiles_ns: Option<Vec<(f64, u64)>>,
    /// Open loop: transactions that started more than 2 ms after their intended start.
    pub late: u64,
    /// Open loop: arrivals dropped because every connection was busy and the backlog full.
    pub dropped: u64,
    pub lag_max_ns: u64,
}

impl Measured {
    /// The summary of `s` (measured intervals merged); `dropped`: their dropped arrivals.
    pub fn of(s: &Snapshot, dropped: u64, how: &Summarising) -> Self {
        let c = &s.counts;
        let percentile = how.percentile();
        let ranks = &how.percentiles;
        Self {
            transactions: c.transactions,
            queries: Queries { read: c.reads, write: c.writes, other: c.others, total: c.queries() },
            errors: Errors { total: c.errors, by_code: c.errors_by_code.clone() },
            reconnects: c.reconnects,
            latency_ns: LatencySummary::new(&s.transactions, c, percentile),
            service_latency_ns: how.open_loop.then(|| LatencySummary::of(&s.service, percentile)),
            percentiles_ns: LatencySummary::percentiles(&s.transactions, ranks, c.latency_min_ns, c.latency_max_ns),
            service_percentiles_ns: how
                .open_loop
                .then(|| LatencySummary::percentiles(&s.service, ranks, s.service.min(), s.service.max())),
            late: c.late,
            dropped,
            lag_max_ns: c.lag_max_ns,
        }
    }
}

/// The measured intervals added up (warm-up left out): what a run's summary comes from.
pub struct Totals {
    pub snap: Snapshot,
    /// Open-loop arrivals dropped.
    pub dropped: u64,
    /// CPU the client used, in core-seconds (every client's, in a distributed run).
    pub client_cpu_s: f64,
}

impl Totals {
    pub fn new(kinds: usize) -> Self {
        Self { snap: Snapshot::new(kinds), dropped: 0, client_cpu_s: 0.0 }
    }

    /// Adds a measured interval: its recordings, dropped arrivals and client CPU.
    pub fn add(&mut self, snap: &Snapshot, dropped: u64, client_cpu_pct: f64, interval_s: f64) {
        self.snap.merge(snap);
        self.dropped += dropped;
        self.client_cpu_s += client_cpu_pct / 100.0 * interval_s;
    }

    pub fn counts(&self) -> &Counts {
        &self.snap.counts
    }
}
