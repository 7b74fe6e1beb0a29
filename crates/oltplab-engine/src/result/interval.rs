//! One interval of a run, as intervals.csv and latency.hlog store it: made from the recorders'
//! drain by a local run, and from the clients' own reports by the distributed merge, with the
//! same code. A report carries its exact counters and its encoded histograms, so that reports
//! of the same span add up exactly ([`IntervalReport::snapshot`]).

use serde::{Deserialize, Serialize};

use super::measured::Summarising;
use crate::stats::{encode_base64, Counts, Decoder, Histogram, LatencySummary, Snapshot};

/// The tag of the open-loop service-time histogram (transactions are untagged).
pub const SERVICE_TAG: &str = "service";

/// Which part of the run an interval belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// `--warmup-time`: stored, left out of the summary.
    Warmup,
    /// The measured `--time`.
    Run,
}

/// Where an interval lies in the run.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// End of the interval, seconds since the run (warm-up included) started.
    pub t_s: f64,
    pub interval_s: f64,
    pub phase: Phase,
    /// A step plan's step (0-based) of a measured interval; None in warm-up and without a plan.
    pub step: Option<usize>,
}

/// What is read at an interval's end besides the recordings.
#[derive(Debug, Clone, Copy, Default)]
pub struct Gauges {
    /// Connections serving the load.
    pub threads_running: usize,
    /// Open loop: arrivals waiting for a free connection.
    pub backlog: usize,
    /// Open loop: connections inside a transaction (0 in a closed loop, as sysbench's
    /// "concurrency").
    pub in_flight: usize,
    /// Open loop: arrivals dropped in the interval because the backlog was full.
    pub dropped: u64,
    /// The client's CPU in the interval, in percent of one core (200 = two cores).
    pub client_cpu_pct: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntervalReport {
    pub t_s: f64,
    pub interval_s: f64,
    pub phase: Phase,
    pub step: Option<usize>,
    pub threads_running: usize,
    /// The exact counters: transactions, reads, writes, others, errors (by code), reconnects,
    /// latency sum/min/max, saturated, lag sums and max, late (`latency_min_ns` is
    /// `u64::MAX` when nothing completed).
    #[serde(flatten)]
    pub counts: Counts,
    /// Response time: from the intended start in open loop, the actual start in closed loop.
    pub latency_ns: LatencySummary,
    /// Open loop only: from the actual start.
    pub service_latency_ns: Option<LatencySummary>,
    /// Open loop: how late transactions started, on average.
    pub lag_mean_ns: u64,
    pub backlog: usize,
    pub in_flight: usize,
    pub dropped: u64,
    pub client_cpu_pct: f64,
    pub histograms: Vec<EncodedHistogram>,
    /// A distributed run's merged interval: how many clients it adds up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<usize>,
}

/// One hlog line's worth of histogram.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EncodedHistogram {
    /// None for transactions; `service` or a statement kind otherwise.
    pub tag: Option<String>,
    pub start_s: f64,
    pub interval_s: f64,
    pub max_ns: u64,
    pub encoded: String,
}

impl IntervalReport {
    /// The report of `snap`, what the recorders took in the interval `at` (`kinds`: the names
    /// of its statement-kind histograms). Service time is kept in open loop only; empty
    /// statement kinds are left out.
    pub fn of(snap: &Snapshot, kinds: &[String], how: &Summarising, at: Span, gauges: Gauges) -> Self {
        let start_s = at.t_s - at.interval_s;
        let encode = |tag: Option<&str>, h: &Histogram| EncodedHistogram {
            tag: tag.map(str::to_string),
            start_s,
            interval_s: at.interval_s,
            max_ns: h.max(),
            encoded: encode_base64(h),
        };
        let mut histograms = vec![encode(None, &snap.transactions)];
        if how.open_loop {
            histograms.push(encode(Some(SERVICE_TAG), &snap.service));
        }
        for (kind, h) in kinds.iter().zip(&snap.kinds) {
            if !h.is_empty() {
                histograms.push(encode(Some(kind), h));
            }
        }
        let c = &snap.counts;
        let percentile = how.percentile();
        Self {
            t_s: at.t_s,
            interval_s: at.interval_s,
            phase: at.phase,
            step: at.step,
            threads_running: gauges.threads_running,
            counts: c.clone(),
            latency_ns: LatencySummary::new(&snap.transactions, c, percentile),
            service_latency_ns: how.open_loop.then(|| LatencySummary::of(&snap.service, percentile)),
            lag_mean_ns: c.lag_sum_ns.checked_div(c.transactions).unwrap_or(0),
            backlog: gauges.backlog,
            in_flight: gauges.in_flight,
            dropped: gauges.dropped,
            client_cpu_pct: gauges.client_cpu_pct,
            histograms,
            clients: None,
        }
    }

    pub fn span(&self) -> Span {
        Span { t_s: self.t_s, interval_s: self.interval_s, phase: self.phase, step: self.step }
    }

    pub fn gauges(&self) -> Gauges {
        Gauges {
            threads_running: self.threads_running,
            backlog: self.backlog,
            in_flight: self.in_flight,
            dropped: self.dropped,
            client_cpu_pct: self.client_cpu_pct,
        }
    }

    /// The recordings back from the report, its histograms decoded into `out` (reset first).
    /// A histogram of another shape, or a tag the run's workload does not have, is refused:
    /// it could only be added approximately.
    pub fn snapshot_into(&self, kinds: &[String], out: &mut Snapshot, decoder: &mut Decoder) -> Result<(), String> {
        out.reset();
        out.counts = self.counts.clone();
        for h in &self.histograms {
            let target = match h.tag.as_deref() {
                None => &mut out.transactions,
                Some(SERVICE_TAG) => &mut out.service,
                Some(tag) => {
                    let i = kinds.iter().position(|k| k == tag).ok_or_else(|| {
                        format!(
                            "an interval has a histogram of '{tag}', which this workload does not record: every \
                             client must run the same oltplab version"
                        )
                    })?;
                    &mut out.kinds[i]
                }
            };
            decoder.add(&h.encoded, target)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{EventTiming, Recorders, Tally};

    fn recorded(values_ns: &[u64]) -> Snapshot {
        let r = Recorders::new(1, 2, true);
        for &ns in values_ns {
            let timing = EventTiming { response_ns: ns, service_ns: ns / 2, lag_ns: ns / 4, client_lag_ns: 0 };
            r.record_event(0, timing, Tally { reads: 1, writes: 0, others: 0 }, &[(1, ns / 3)]);
        }
        r.record_error(0, "1213", false);
        r.drain(false)
    }

    #[test]
    fn a_report_reads_back_into_what_it_was_made_of() {
        let kinds = vec!["reads".to_string(), "writes".to_string()];
        let how = Summarising { percentiles: vec![95.0], open_loop: true, histogram_ms: false };
        let snap = recorded(&[1_000, 20_000, 300_000]);
        let at = Span { t_s: 2.0, interval_s: 1.0, phase: Phase::Run, step: None };
        let report = IntervalReport::of(&snap, &kinds, &how, at, Gauges::default());
        let json = serde_json::to_string(&report).unwrap();
        let back: IntervalReport = serde_json::from_str(&json).unwrap();
        let mut again = Snapshot::new(kinds.len());
        back.snapshot_into(&kinds, &mut again, &mut Decoder::default()).unwrap();
        assert_eq!(again.counts, snap.counts);
        assert_eq!(again.transactions, snap.transactions);
        assert_eq!(again.service, snap.service);
        assert_eq!(again.kinds[1], snap.kinds[1]);
        assert!(again.kinds[0].is_empty());
        assert_eq!(back.latency_ns, report.latency_ns);
    }

    #[test]
    fn an_unknown_tag_is_refused() {
        let kinds = vec!["reads".to_string(), "writes".to_string()];
        let how = Summarising::default();
        let at = Span { t_s: 1.0, interval_s: 1.0, phase: Phase::Run, step: None };
        let report = IntervalReport::of(&recorded(&[5_000]), &kinds, &how, at, Gauges::default());
        let mut out = Snapshot::new(1);
        let err = report.snapshot_into(&kinds[..1], &mut out, &mut Decoder::default()).unwrap_err();
        assert!(err.contains("'writes'") && err.contains("same oltplab version"), "{err}");
    }
}
