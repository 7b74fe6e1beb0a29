//! The client's own CPU use, sampled at interval boundaries: a run whose client
//! saturated its cores measured the client, not the server.

use std::time::Instant;

/// Linux reports process times in `USER_HZ` ticks, 100 per second on every mainstream
/// architecture (the kernel ABI fixes it, whatever the kernel's internal HZ).
const TICKS_PER_S: f64 = 100.0;

/// Above this share of all the cores it can use, the client counts as saturated.
pub const SATURATED_SHARE: f64 = 0.9;

/// Process CPU seconds (user, system) so far; None where /proc is not there.
pub fn process_cpu_s() -> Option<(f64, f64)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) may hold spaces; fields after its closing ')' are plain.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let user = fields.nth(11)?.parse::<f64>().ok()?;
    let sys = fields.next()?.parse::<f64>().ok()?;
    Some((user / TICKS_PER_S, sys / TICKS_PER_S))
}

/// CPU used between samples, as a percentage of one core (200 = two cores busy).
pub struct CpuMeter {
    last_s: Option<(f64, f64)>,
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
        let pct = match (self.last_s, current) {
            (Some((u0, s0)), Some((u1, s1))) if elapsed_s > 0.0 => 100.0 * ((u1 - u0) + (s1 - s0)) / elapsed_s,
            _ => 0.0,
        };
        self.last_s = current;
        self.last_at = now;
        pct
    }

    /// Whether `pct` (of one core) means every core was busy.
    pub fn saturated(&self, pct: f64) -> bool {
        pct >= SATURATED_SHARE * 100.0 * self.cores as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_as_cpu() {
        let start = Instant::now();
        let mut meter = CpuMeter::new(start, 2);
        let cpu = || process_cpu_s().map(|(u, s)| u + s).unwrap();
        let before = cpu();
        // Spin until the process has used 0.5 s of CPU (however loaded the machine is). Process
        // times come in 10 ms ticks and include the other tests' threads: over 0.1 s the two
        // ends' ticks alone could add 20 points to two busy cores' 200% and fail the bound.
        let mut x = 0u64;
        while cpu() - before < 0.5 && start.elapsed().as_secs() < 20 {
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
}
