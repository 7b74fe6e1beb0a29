//! The client's own CPU use, sampled at interval boundaries: a run whose client
//! saturated its cores measured the client, not the server.

use std::time::Instant;

/// Above this share of all the cores it can use, the client counts as saturated.
pub const SATURATED_SHARE: f64 = 0.9;

/// An interval shorter than this share of the report interval is not judged for saturation:
/// the stub a run's end leaves (a few milliseconds of its last transactions and goodbyes) says
/// nothing about the load, and the two clock reads at its edges weigh as much as its content.
pub const MIN_JUDGED_SHARE: f64 = 0.5;

/// The process's CPU time (user + system, every thread), in seconds, from
/// `CLOCK_PROCESS_CPUTIME_ID`: nanosecond resolution, where /proc's process times come in
/// 10 ms ticks (a 4 ms interval could read 0% or 250% of a core).
pub fn process_cpu_s() -> f64 {
    crate::stats::clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID) as f64 * 1e-9
}

/// CPU used between samples, as a percentage of one core (200 = two cores busy).
pub struct CpuMeter {
    last_s: f64,
    last_at: Instant,
    /// The cores the client can use: the machine's, at most one per engine thread.
    pub cores: usize,
}

impl CpuMeter {
    /// The engine threads are all the engine can keep busy (exec/runtime.rs).
    pub fn new(now: Instant, engine_threads: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        Self { last_s: process_cpu_s(), last_at: now, cores: cores.min(engine_threads).max(1) }
    }

    /// The client's CPU since the last sample, in percent of one core.
    pub fn sample(&mut self, now: Instant) -> f64 {
        let current = process_cpu_s();
        let elapsed_s = (now - self.last_at).as_secs_f64();
        let pct = if elapsed_s > 0.0 { 100.0 * (current - self.last_s) / elapsed_s } else { 0.0 };
        self.last_s = current;
        self.last_at = now;
        pct
    }

    /// Whether `pct` (of one core) means every core was busy.
    pub fn saturated(&self, pct: f64) -> bool {
        pct >= SATURATED_SHARE * 100.0 * self.cores as f64
    }
}

/// The measured intervals' verdicts: a run's client was saturated when more than a tenth of
/// the intervals long enough to judge saturated it.
#[derive(Debug, Default)]
pub struct Saturation {
    judged: u64,
    saturated: u64,
}

impl Saturation {
    /// Adds a measured interval of `interval_s` (the report interval: `nominal_s`) in which
    /// the client used `saturated` (its meter's verdict).
    pub fn add(&mut self, saturated: bool, interval_s: f64, nominal_s: f64) {
        if interval_s >= MIN_JUDGED_SHARE * nominal_s {
            self.judged += 1;
            self.saturated += u64::from(saturated);
        }
    }

    pub fn flagged(&self) -> bool {
        self.saturated * 10 > self.judged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_as_cpu() {
        let start = Instant::now();
        // As many engine threads as cores: the meter's bound is every core.
        let mut meter = CpuMeter::new(start, usize::MAX);
        let before = process_cpu_s();
        // Spin until the process has used 0.2 s of CPU (however loaded the machine is); the
        // other tests' threads count too, so the bound allows every core plus a margin.
        let mut x = 0u64;
        while process_cpu_s() - before < 0.2 && start.elapsed().as_secs() < 20 {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        let pct = meter.sample(Instant::now());
        assert!(pct > 0.0 && pct <= 100.0 * meter.cores as f64 + 20.0, "{pct}");
        assert!(!meter.saturated(10.0));
        assert!(meter.saturated(100.0 * meter.cores as f64));
    }

    #[test]
    fn the_clock_resolves_far_below_a_tick() {
        // /proc's process times move in 10 ms steps; this clock's smallest step between two
        // reads is nanoseconds (other tests' threads may add to a step, never take away).
        let mut smallest = f64::INFINITY;
        let mut last = process_cpu_s();
        for _ in 0..1000 {
            let now = process_cpu_s();
            if now > last {
                smallest = smallest.min(now - last);
            }
            last = now;
        }
        assert!(smallest < 0.001, "{smallest}");
    }

    #[test]
    fn a_short_last_interval_is_not_judged() {
        // The threadpool example's run: 1-s intervals at 47% of its one core, then the 4-ms
        // stub of the run's end, which read 241% with /proc's ticks.
        let mut run = Saturation::default();
        for _ in 0..5 {
            run.add(false, 1.0, 1.0);
        }
        run.add(true, 0.004, 1.0);
        assert!(!run.flagged());
        // Judged, the same stub would have flagged the run (1 of 6 intervals > a tenth).
        let mut judged_alike = Saturation::default();
        for _ in 0..5 {
            judged_alike.add(false, 1.0, 1.0);
        }
        judged_alike.add(true, 1.0, 1.0);
        assert!(judged_alike.flagged());
        // A saturated client is still flagged, whatever its stub; sub-second intervals too.
        let mut busy = Saturation::default();
        for _ in 0..8 {
            busy.add(true, 0.25, 0.25);
        }
        busy.add(false, 0.003, 0.25);
        assert!(busy.flagged());
    }
}
