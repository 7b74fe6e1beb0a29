//! `summary.tpcc` of run.json: TPC-C's own summary, filled by the workload
//! (workload/tpcc/summary.rs) from the measured statement-kind histograms.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TpccSummary {
    /// "TPC-C-like, unaudited": the numbers are not an audited TPC-C result.
    pub label: String,
    /// New-Orders per minute of the measured time, rolled-back ones included (clause 5.4.2).
    #[serde(rename = "tpmC")]
    pub tpmc: f64,
    /// Transactions of every type per minute.
    pub tpm_total: f64,
    /// tpmC against the 12.86 per warehouse ceiling of think-time runs; None without think times.
    pub efficiency: Option<f64>,
    pub warehouses: u32,
    pub table_sets: u32,
    /// "spec" (clause 5.2.5's keying and think times) or "off".
    pub think_time: String,
    /// The deck of cards: New-Order, Payment, Order-Status, Delivery, Stock-Level.
    pub weights: [u32; 5],
    pub c_last_load: u32,
    /// The run's C constants (clause 2.1.6).
    pub c_run: TpccConstants,
    pub delivery_skipped_districts: u64,
    /// Per transaction type, by its label (`new_order`, `payment`, ...).
    pub by_type: BTreeMap<String, TpccType>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TpccConstants {
    pub c_last: u32,
    pub c_id: u32,
    pub ol_i_id: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TpccType {
    pub count: u64,
    /// Percent of all transactions.
    pub share_pct: f64,
    /// New-Order's intended rollbacks (1 % of them); 0 for the other types.
    pub rollbacks: u64,
    pub errors: u64,
    pub latency_ms: TpccLatencyMs,
}

/// A type's latency in milliseconds (0 when none ran), with TPC-C's 90th percentile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccLatencyMs {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    pub max: f64,
}
