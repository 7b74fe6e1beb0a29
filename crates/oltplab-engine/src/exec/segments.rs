//! Segments of a step plan: each step's measured intervals merged into its own totals,
//! from which its summary is computed (from merged histograms, never averaged percentiles).

use super::steps::Step;
use crate::result::{Measured, Segment, Summarising};
use crate::stats::Snapshot;

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
    pub fn results(&self, how: &Summarising) -> Option<Vec<Segment>> {
        (!self.plan.is_empty()).then(|| {
            self.reached.iter().zip(&self.plan).enumerate().map(|(step, (t, s))| segment(step, s, t, how)).collect()
        })
    }
}

fn segment(step: usize, s: &Step, t: &Totals, how: &Summarising) -> Segment {
    Segment {
        step,
        rate_per_s: s.rate_per_s,
        threads: s.threads,
        start_s: t.start_s,
        end_s: t.end_s,
        duration_s: t.end_s - t.start_s,
        measured: Measured::of(&t.snap, t.dropped, how),
    }
}
