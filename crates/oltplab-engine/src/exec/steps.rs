//! Step plans: `--rate-steps 100,200,400` or `--thread-steps 1,4,16` with `--step-time S`
//! run one step after another in one process, each a segment of the run with its own
//! summary. The plan is fixed when the run starts, so every part (the arrival schedule,
//! the connections, the interval boundaries) derives its step from the clock alone and
//! switches exactly at the step's start, without signalling.

use std::time::{Duration, Instant};

use crate::error::{EngineError, Result};
use crate::options::Options;

/// One step's load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Open-loop target rate; 0 in closed loop.
    pub rate_per_s: f64,
    /// Connections serving the load (the others idle).
    pub threads: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StepPlan {
    pub steps: Vec<Step>,
    pub step_s: f64,
}

/// Largest `--thread-steps` value, as `--threads`.
const MAX_THREADS: usize = 1_000_000;

impl StepPlan {
    /// The plan the options ask for, None without one. `given` tells whether the user set an
    /// option (defaults are filled in by then): `--threads` and `--time` are checked only then.
    pub fn from_options(o: &Options, given: &dyn Fn(&str) -> bool) -> Result<Option<Self>> {
        let rates = parse_list(o.str("rate_steps"), |item| {
            item.parse::<f64>().ok().filter(|r| r.is_finite() && *r > 0.0).ok_or_else(|| {
                config(format!(
                    "--rate-steps: '{item}' is not a rate above 0; give transactions per second per step, as 100,200,400"
                ))
            })
        })?;
        let threads = parse_list(o.str("thread_steps"), |item| {
            item.parse::<usize>().ok().filter(|n| (1..=MAX_THREADS).contains(n)).ok_or_else(|| {
                config(format!(
                    "--thread-steps: '{item}' is not a whole number from 1 to {MAX_THREADS}; give connections per \
                     step, as 1,4,16"
                ))
            })
        })?;
        let step_time_s = o.float("step_time");
        if rates.is_empty() && threads.is_empty() {
            if step_time_s > 0.0 {
                return Err(config("--step-time needs --rate-steps or --thread-steps: the steps it times"));
            }
            return Ok(None);
        }
        let list = if rates.is_empty() { "--thread-steps" } else { "--rate-steps" };
        if !rates.is_empty() && !threads.is_empty() && rates.len() != threads.len() {
            return Err(config(format!(
                "--rate-steps has {} steps and --thread-steps {}: give both the same number of steps, or one list",
                rates.len(),
                threads.len()
            )));
        }
        if step_time_s <= 0.0 {
            return Err(config(format!("{list} needs --step-time S: the seconds each step runs")));
        }
        if !rates.is_empty() && o.float("rate") > 0.0 {
            return Err(config("--rate and --rate-steps both set the rate: drop --rate"));
        }
        if o.uint("events") > 0 {
            return Err(config(format!(
                "--events cannot end a step plan: drop --events; {list} runs for steps × --step-time"
            )));
        }
        let count = rates.len().max(threads.len());
        let steps: Vec<Step> = (0..count)
            .map(|i| Step {
                rate_per_s: rates.get(i).copied().unwrap_or_else(|| o.float("rate")),
                threads: threads.get(i).copied().unwrap_or(o.uint("threads") as usize),
            })
            .collect();
        let plan = Self { steps, step_s: step_time_s };
        let peak = plan.max_threads();
        if !threads.is_empty() && given("threads") && o.uint("threads") as usize != peak {
            return Err(config(format!(
                "--threads {} disagrees with --thread-steps (largest step: {peak}): drop --threads; the run opens as \
                 many connections as its largest step",
                o.uint("threads")
            )));
        }
        let measured_s = plan.measured_s();
        let time_s = o.float("time");
        if given("time") && time_s > 0.0 && (time_s - measured_s).abs() > 1e-9 * measured_s.max(1.0) {
            return Err(config(format!(
                "--time {time_s} disagrees with the step plan ({count} steps × {step_time_s} s = {measured_s} s): drop \
                 --time or give --time {measured_s}"
            )));
        }
        Ok(Some(plan))
    }

    /// The measured time: every step once.
    pub fn measured_s(&self) -> f64 {
        self.steps.len() as f64 * self.step_s
    }

    /// Connections to open: the largest step's.
    pub fn max_threads(&self) -> usize {
        self.steps.iter().map(|s| s.threads).max().unwrap_or(1)
    }

    /// The target rate over the measured time (steps last equally long).
    pub fn mean_rate_per_s(&self) -> f64 {
        self.steps.iter().map(|s| s.rate_per_s).sum::<f64>() / self.steps.len().max(1) as f64
    }

    /// The highest target rate (it sizes the backlog).
    pub fn max_rate_per_s(&self) -> f64 {
        self.steps.iter().map(|s| s.rate_per_s).fold(0.0, f64::max)
    }

    /// The plan on the clock, from the start of the measured time.
    pub fn timeline(&self, measured_start: Instant) -> Timeline {
        Timeline {
            measured_start,
            step_ns: (self.step_s * 1e9).round().max(1.0) as u64,
            threads: self.steps.iter().map(|s| s.threads).collect(),
        }
    }
}

/// Step starts and active connections in time. The warm-up, before the measured time,
/// runs at the first step's setting. Times are whole nanoseconds from the measured start,
/// so that every part computes the same boundaries.
#[derive(Debug, Clone)]
pub struct Timeline {
    measured_start: Instant,
    step_ns: u64,
    threads: Vec<usize>,
}

impl Timeline {
    /// The step running at `t`.
    pub fn step_at(&self, t: Instant) -> usize {
        let since_ns = t.saturating_duration_since(self.measured_start).as_nanos();
        usize::try_from(since_ns / u128::from(self.step_ns)).unwrap_or(usize::MAX).min(self.threads.len() - 1)
    }

    /// When step `i` starts.
    pub fn start_of(&self, i: usize) -> Instant {
        self.measured_start + Duration::from_nanos(self.step_ns.saturating_mul(i as u64))
    }

    /// When each step after the first starts: the boundaries between segments.
    pub fn boundaries(&self) -> impl Iterator<Item = Instant> + '_ {
        (1..self.threads.len()).map(|i| self.start_of(i))
    }

    /// Whether connection `id` (0-based) serves the load at `t`.
    pub fn is_active(&self, id: usize, t: Instant) -> bool {
        id < self.threads[self.step_at(t)]
    }

    /// The start of the next step after `t` that needs connection `id`; None if none does.
    pub fn next_active(&self, id: usize, t: Instant) -> Option<Instant> {
        (self.step_at(t) + 1..self.threads.len()).find(|&i| id < self.threads[i]).map(|i| self.start_of(i))
    }
}

fn config(msg: impl Into<String>) -> EngineError {
    EngineError::config(msg)
}

fn parse_list<T>(text: &str, parse: impl Fn(&str) -> Result<T>) -> Result<Vec<T>> {
    text.split(',').map(str::trim).filter(|i| !i.is_empty()).map(parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeline_switches_connections_at_step_starts() {
        let steps = [1, 4, 2].map(|threads| Step { rate_per_s: 0.0, threads }).to_vec();
        let p = StepPlan { steps, step_s: 1.0 };
        let t0 = Instant::now();
        let tl = p.timeline(t0);
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        // The warm-up, before t0, runs at the first step.
        assert_eq!(tl.step_at(t0.checked_sub(Duration::from_secs(1)).unwrap_or(t0)), 0);
        assert_eq!(tl.step_at(at(1.0)), 1);
        assert_eq!(tl.step_at(at(9.0)), 2);
        assert!(tl.is_active(0, at(0.5)) && !tl.is_active(1, at(0.5)));
        assert_eq!(tl.next_active(3, at(0.5)), Some(tl.start_of(1)));
        assert_eq!(tl.next_active(3, at(1.5)), None);
        assert!(tl.is_active(3, tl.start_of(1)) && !tl.is_active(3, tl.start_of(2)));
        assert_eq!(tl.boundaries().collect::<Vec<_>>(), [at(1.0), at(2.0)]);
    }
}
