//! Latency summaries in nanoseconds. min, max, mean and sum are exact; percentiles
//! come from the histogram and are clamped into [min, max], so that a percentile
//! can never exceed the maximum (sysbench's can: its GH-486).

use serde::{Deserialize, Serialize};

use super::histogram::Histogram;
use super::recorder::Counts;

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub min: u64,
    pub mean: f64,
    pub max: u64,
    pub sum: u64,
    pub p50: u64,
    pub p95: u64,
    pub p99: u64,
    pub p99_9: u64,
    /// The value at the `--percentile` option (0 when the option is 0).
    pub pct: u64,
}

impl LatencySummary {
    pub fn new(h: &Histogram, counts: &Counts, percentile: f64) -> Self {
        if counts.transactions == 0 {
            return Self::default();
        }
        let (min, max) = (counts.latency_min_ns, counts.latency_max_ns);
        let at = |q: f64| h.value_at_quantile(q).clamp(min, max);
        Self {
            min,
            max,
            sum: counts.latency_sum_ns,
            mean: counts.latency_sum_ns as f64 / counts.transactions as f64,
            p50: at(0.50),
            p95: at(0.95),
            p99: at(0.99),
            p99_9: at(0.999),
            pct: if percentile > 0.0 { at(percentile / 100.0) } else { 0 },
        }
    }

    /// (rank, value) for each percentile, clamped into the histogram's [min, max] like the others.
    pub fn percentiles(h: &Histogram, ranks: &[f64], min: u64, max: u64) -> Vec<(f64, u64)> {
        if h.is_empty() {
            return ranks.iter().map(|&r| (r, 0)).collect();
        }
        ranks.iter().map(|&r| (r, h.value_at_quantile(r / 100.0).clamp(min, max))).collect()
    }

    /// From a histogram alone (service times: no exact counters), within its precision.
    pub fn of(h: &Histogram, percentile: f64) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let at = |q: f64| h.value_at_quantile(q).clamp(h.min(), h.max());
        Self {
            min: h.min(),
            max: h.max(),
            sum: (h.mean() * h.len() as f64) as u64,
            mean: h.mean(),
            p50: at(0.50),
            p95: at(0.95),
            p99: at(0.99),
            p99_9: at(0.999),
            pct: if percentile > 0.0 { at(percentile / 100.0) } else { 0 },
        }
    }
}
