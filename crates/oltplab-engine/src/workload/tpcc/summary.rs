//! `summary.tpcc` of run.json: tpmC (New-Orders per minute of the measured time, rolled-back
//! ones included as clause 5.4.2 counts them), `tpm_total`, efficiency against the 12.86 tpmC
//! per warehouse ceiling of think-time runs, and per type its count, rollbacks, errors and
//! latency, all from the measured (post-warm-up) histograms.

use std::collections::BTreeMap;

use crate::result::{TpccConstants, TpccLatencyMs, TpccSummary, TpccType};
use crate::stats::Histogram;

use super::terminal::TxType;
use super::{Tpcc, ERROR_KIND, ROLLBACK_KIND, SKIPPED_KIND};

/// Clause 4.1.3's ceiling for the 45/43/4/4/4 mix with the spec's keying and think times.
pub const TPMC_PER_WAREHOUSE_CEILING: f64 = 12.86;

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn latency_ms(h: &Histogram) -> TpccLatencyMs {
    if h.is_empty() {
        return TpccLatencyMs::default();
    }
    let at = |q: f64| ms(h.value_at_quantile(q).clamp(h.min(), h.max()));
    TpccLatencyMs {
        min: ms(h.min()),
        mean: h.mean() / 1e6,
        p50: at(0.50),
        p90: at(0.90),
        p95: at(0.95),
        p99: at(0.99),
        p99_9: at(0.999),
        max: ms(h.max()),
    }
}

pub fn summary(w: &Tpcc, kinds: &[Histogram], measured_s: f64) -> TpccSummary {
    let count = |kind: usize| kinds.get(kind).map_or(0, Histogram::len);
    let minutes = measured_s.max(1e-9) / 60.0;
    let total: u64 = TxType::ALL.iter().map(|&t| count(t as usize)).sum();
    let tpmc = count(TxType::NewOrder as usize) as f64 / minutes;
    let by_type: BTreeMap<String, TpccType> = TxType::ALL
        .iter()
        .map(|&t| {
            let i = t as usize;
            let kind = TpccType {
                count: count(i),
                share_pct: if total > 0 { 100.0 * count(i) as f64 / total as f64 } else { 0.0 },
                rollbacks: if t == TxType::NewOrder { count(ROLLBACK_KIND) } else { 0 },
                errors: count(ERROR_KIND + i),
                latency_ms: kinds.get(i).map(latency_ms).unwrap_or_default(),
            };
            (t.label().to_string(), kind)
        })
        .collect();
    let ceiling = TPMC_PER_WAREHOUSE_CEILING * f64::from(w.warehouses * w.sets);
    let c = w.c_run;
    TpccSummary {
        label: "TPC-C-like, unaudited".to_string(),
        tpmc,
        tpm_total: total as f64 / minutes,
        efficiency: w.think_time.then(|| tpmc / ceiling),
        warehouses: w.warehouses,
        table_sets: w.sets,
        think_time: if w.think_time { "spec" } else { "off" }.to_string(),
        weights: w.weights,
        c_last_load: super::random::C_LAST_LOAD,
        c_run: TpccConstants { c_last: c.c_last, c_id: c.c_id, ol_i_id: c.ol_i_id },
        delivery_skipped_districts: count(SKIPPED_KIND),
        by_type,
    }
}
