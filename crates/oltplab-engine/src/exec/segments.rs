//! Segments of a step plan: each step's measured intervals merged into its own totals,
//! from which its summary is computed (from merged histograms, never averaged percentiles).

use super::spec::LoadShape;
use super::steps::Step;
use crate::result::Segment;
use crate::stats::{LatencySummary, Snapshot};

/// The latency fields of a summary, from merged histograms.
#[allow(clippy::struct_field_names)] // named as the fields of RunResult and Segment they fill
pub struct Latencies {
    pub latency_ns: LatencySummary,
    pub service_latency_ns: Option<LatencySummary>,
    pub percentiles_ns: Vec<(f64, u64)>,
    pub service_percentiles_ns: Option<Vec<(f64, u64)>>,
}

impl Latencies {
    pub fn of(s: &Snapshot, load: &LoadShape) -> Self {
        let c = &s.counts;
        let open_loop = load.is_open_loop();
        Self {
            latency_ns: LatencySummary::new(&s.transactions, c, load.percentile),
            service_latency_ns: open_loop.then(|| LatencySummary::of(&s.service, load.percentile)),
            percentiles_ns: LatencySummary::percentiles(
                &s.transactions,
                &load.percentiles,
                c.latency_min_ns,
                c.latency_max_ns,
            ),
            service_percentiles_ns: open_loop
                .then(|| LatencySummary::percentiles(&s.service, &load.percentiles, s.service.min(), s.service.max())),
        }
    }
}

/// One step's measured totals so far.
struct Totals {
    /// Transactions, service time and counts; statement kinds are left to the whole run.
    snap: Snapshot,
    dropped: u64,
    start_s: f64,
    end_s: f64,
}

/// The steps of a plan and what each measured; empty without a plan.
pub struct Segments {
    plan: Vec<Step>,
    /// The step running now (the warm-up runs at the first).
    current: usize,
    /// One per step reached, in order.
    reached: Vec<Totals>,
}

impl Segments {
    pub fn new(plan: Vec<Step>) -> Self {
        Self { plan, current: 0, reached: Vec::new() }
    }

    /// The step running now; None without a plan.
    pub fn step(&self) -> Option<usize> {
        (!self.plan.is_empty()).then_some(self.current)
    }

    /// Connections the current step runs; None without a plan.
    pub fn threads(&self) -> Option<usize> {
        self.plan.get(self.current).map(|s| s.threads)
    }

    /// Adds a measured interval, from `start_s` to `end_s` (seconds since the load started), to the current step.
    pub fn add(&mut self, snap: &Snapshot, dropped: u64, start_s: f64, end_s: f64) {
        if self.plan.is_empty() {
            return;
        }
        if self.reached.len() <= self.current {
            self.reached.push(Totals { snap: Snapshot::new(0), dropped: 0, start_s, end_s });
        }
        let t = self.reached.last_mut().expect("the current step has totals");
        t.snap.merge(snap);
        t.dropped += dropped;
        t.end_s = end_s;
    }

    /// The next interval belongs to the next step.
    pub fn next_step(&mut self) {
        self.current = (self.current + 1).min(self.plan.len().saturating_sub(1));
    }

    /// One summary per step reached (an interrupted run stops early); None without a plan.
    pub fn results(&self, load: &LoadShape) -> Option<Vec<Segment>> {
        (!self.plan.is_empty()).then(|| {
            self.reached.iter().zip(&self.plan).enumerate().map(|(step, (t, s))| segment(step, s, t, load)).collect()
        })
    }
}

fn segment(step: usize, s: &Step, t: &Totals, load: &LoadShape) -> Segment {
    let c = &t.snap.counts;
    let Latencies { latency_ns, service_latency_ns, percentiles_ns, service_percentiles_ns } =
        Latencies::of(&t.snap, load);
    Segment {
        step,
        rate_per_s: s.rate_per_s,
        threads: s.threads,
        start_s: t.start_s,
        end_s: t.end_s,
        duration_s: t.end_s - t.start_s,
        transactions: c.transactions,
        queries: c.queries_doc(),
        errors: c.errors_doc(),
        reconnects: c.reconnects,
        latency_ns,
        service_latency_ns,
        percentiles_ns,
        service_percentiles_ns,
        late: c.late,
        dropped: t.dropped,
        lag_max_ns: c.lag_max_ns,
    }
}
