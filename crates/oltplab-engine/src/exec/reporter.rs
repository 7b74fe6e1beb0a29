//! Turns recorder drains into interval reports, and keeps the measured totals:
//! warm-up intervals are reported (and stored) but left out of the totals; with a step
//! plan, each measured interval also adds to its step's segment.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::client_cpu::{CpuMeter, Saturation};
use super::schedule::Schedule;
use super::segments::Segments;
use super::shared::Shared;
use super::steps::Step;
use crate::result::{Gauges, IntervalReport, Phase, Span, Summarising, Totals};
use crate::stats::Snapshot;

pub struct Reporter {
    kinds: Vec<String>,
    how: Summarising,
    /// End of the last interval, seconds since the start of the load.
    pub last_s: f64,
    pub intervals: u64,
    pub phase: Phase,
    /// Measured totals (warm-up excluded).
    pub totals: Totals,
    /// The interval being reported, reused from one interval to the next.
    snap: Snapshot,
    cpu: CpuMeter,
    /// The report interval (the intervals' nominal length).
    interval_s: f64,
    /// Which measured intervals saturated the client's CPU.
    saturation: Saturation,
    /// Connections running at the end of the last interval reported.
    threads_running: usize,
    pub segments: Segments,
}

impl Reporter {
    /// `plan`: a step plan's steps (empty without one); `cpu` samples from the load's start.
    pub fn new(
        kinds: Vec<String>,
        how: Summarising,
        phase: Phase,
        plan: Vec<Step>,
        interval: Duration,
        cpu: CpuMeter,
    ) -> Self {
        let (totals, snap) = (Totals::new(kinds.len()), Snapshot::new(kinds.len()));
        Self {
            kinds,
            how,
            last_s: 0.0,
            intervals: 0,
            phase,
            totals,
            snap,
            cpu,
            interval_s: interval.as_secs_f64(),
            saturation: Saturation::default(),
            threads_running: 0,
            segments: Segments::new(plan),
        }
    }

    /// The client used at least 90% of every core in more than a tenth of the measured intervals
    /// (those long enough to judge: `client_cpu.rs`).
    pub fn client_saturated(&self) -> bool {
        self.saturation.flagged()
    }

    pub fn kind_names(&self) -> &[String] {
        &self.kinds
    }

    /// Drains the recorders into the interval that ends at `t_s` (seconds since the start).
    /// With `ends_segment`, this interval ends the warm-up (the intervals after it are measured)
    /// or a step (the intervals after it belong to the next step).
    pub fn interval(&mut self, shared: &Shared, now: Instant, t_s: f64, ends_segment: bool) -> IntervalReport {
        // First, as close to `now` as can be: the draining below costs CPU of its own.
        let client_cpu_pct = self.cpu.sample(now);
        let ends_warmup = ends_segment && self.phase == Phase::Warmup;
        shared.recorders.drain_into(&mut self.snap, ends_warmup);
        let (backlog, dropped) = shared.schedule.as_ref().map_or((0, 0), |s| {
            let mut s: std::sync::MutexGuard<'_, Schedule> = s.lock().expect("schedule lock");
            (s.backlog(now), s.take_dropped())
        });
        let (start_s, interval_s) = (self.last_s, t_s - self.last_s);
        // The last interval ends after every worker did: it reports the connections that ran it.
        let running = shared.running.load(Ordering::Relaxed);
        self.threads_running = if running == 0 { self.threads_running } else { running };
        let gauges = Gauges {
            // Connections beyond the step's count are open but idle.
            threads_running: self.threads_running.min(self.segments.threads().unwrap_or(usize::MAX)),
            backlog,
            in_flight: shared.in_flight.load(Ordering::Relaxed),
            dropped,
            client_cpu_pct,
        };
        let step = self.segments.step().filter(|_| self.phase == Phase::Run);
        let span = Span { t_s, interval_s, phase: self.phase, step };
        let report = IntervalReport::of(&self.snap, &self.kinds, &self.how, span, gauges);
        if self.phase == Phase::Run {
            self.totals.add(&self.snap, dropped, client_cpu_pct, interval_s);
            self.saturation.add(self.cpu.saturated(client_cpu_pct), interval_s, self.interval_s);
            self.segments.add(&self.snap, dropped, start_s, t_s);
        }
        self.last_s = t_s;
        self.intervals += 1;
        if ends_warmup {
            self.phase = Phase::Run;
        } else if ends_segment {
            self.segments.next_step();
        }
        report
    }
}
