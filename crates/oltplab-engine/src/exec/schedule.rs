//! Open-loop arrivals: a schedule of intended start times at a target rate.
//! Connections take the next arrival when they are free; an arrival that finds
//! every connection busy waits in the backlog, and its latency runs from its
//! intended start (coordinated omission corrected). The backlog is bounded:
//! arrivals beyond the bound are dropped and counted, never a crash (sysbench
//! exits when its event queue is full).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::rand::Rng;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrivals {
    /// Exponential gaps: independent arrivals, as sysbench's `--rate`.
    Poisson,
    /// Equal gaps.
    Uniform,
}

pub struct Schedule {
    rate_per_s: f64,
    arrivals: Arrivals,
    rng: Rng,
    origin: Instant,
    /// Seconds from `origin` of `next`.
    next_s: f64,
    /// The earliest arrival not yet in the backlog.
    next: Instant,
    /// Arrivals due but not yet taken by a connection, oldest first.
    pending: VecDeque<Instant>,
    max_backlog: usize,
    /// Arrivals dropped because the backlog was full, since the last `take_dropped`.
    dropped: u64,
    /// Rate changes still ahead (a step plan): seconds from `origin` and the new rate.
    changes: VecDeque<(f64, f64)>,
    /// No arrival is scheduled at or after this (the end of the measured time).
    end: Option<Instant>,
}

impl Schedule {
    /// Starts at `rate_per_s`, then switches to each `(from, rate)` of `changes` (in time order).
    /// The changes are known up front, so each applies exactly at its time, however late the
    /// connections take their arrivals.
    pub fn new(
        rate_per_s: f64,
        changes: &[(Instant, f64)],
        arrivals: Arrivals,
        rng: Rng,
        origin: Instant,
        max_backlog: usize,
    ) -> Self {
        let changes = changes.iter().map(|&(at, rate)| (at.saturating_duration_since(origin).as_secs_f64(), rate));
        let mut s = Self {
            rate_per_s,
            arrivals,
            rng,
            origin,
            next_s: 0.0,
            next: origin,
            pending: VecDeque::new(),
            max_backlog: max_backlog.max(1),
            dropped: 0,
            changes: changes.collect(),
            end: None,
        };
        s.advance();
        s
    }

    /// Draws the gap to the following arrival. A gap that crosses a rate change is drawn again
    /// from the change at the new rate: Poisson arrivals are memoryless, so this is exact.
    fn advance(&mut self) {
        loop {
            let next_s = self.next_s
                + match self.arrivals {
                    // 1 - u is in (0, 1], so the logarithm is finite.
                    Arrivals::Poisson => -(1.0 - self.rng.uniform_f64()).ln() / self.rate_per_s,
                    Arrivals::Uniform => 1.0 / self.rate_per_s,
                };
            match self.changes.front() {
                Some(&(at_s, rate_per_s)) if next_s >= at_s => {
                    self.changes.pop_front();
                    self.rate_per_s = rate_per_s;
                    self.next_s = at_s;
                }
                _ => {
                    self.next_s = next_s;
                    break;
                }
            }
        }
        self.next = self.origin + Duration::from_secs_f64(self.next_s);
    }

    /// Schedules nothing at or after `end`: arrivals before it still run after it, however
    /// late (a stall at the end of the run must show in the numbers), later ones never exist.
    pub fn set_end(&mut self, end: Instant) {
        self.end = Some(end);
    }

    /// Moves every arrival due by `now` into the backlog, dropping the oldest beyond its bound.
    fn fill_until(&mut self, now: Instant) {
        while self.next <= now && self.end.is_none_or(|e| self.next < e) {
            self.pending.push_back(self.next);
            if self.pending.len() > self.max_backlog {
                self.pending.pop_front();
                self.dropped += 1;
            }
            self.advance();
        }
    }

    /// The next arrival's intended start: in the past when the connection is late.
    pub fn take(&mut self, now: Instant) -> Instant {
        self.fill_until(now);
        self.pending.pop_front().unwrap_or_else(|| {
            let t = self.next;
            self.advance();
            t
        })
    }

    /// Arrivals due by `now` that no connection has started: the queue depth.
    pub fn backlog(&mut self, now: Instant) -> usize {
        self.fill_until(now);
        self.pending.len()
    }

    pub fn take_dropped(&mut self) -> u64 {
        std::mem::take(&mut self.dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrivals_in(s: &mut Schedule, origin: Instant, seconds: f64) -> usize {
        let end = origin + Duration::from_secs_f64(seconds);
        let mut n = 0;
        while s.take(origin) < end {
            n += 1;
        }
        n
    }

    #[test]
    fn poisson_arrivals_average_the_rate() {
        let origin = Instant::now();
        let mut s = Schedule::new(1000.0, &[], Arrivals::Poisson, Rng::seeded(1), origin, 1_000_000);
        let n = arrivals_in(&mut s, origin, 100.0);
        assert!((99_000..=101_000).contains(&n), "{n}");
    }

    #[test]
    fn nothing_is_scheduled_after_the_end() {
        let origin = Instant::now();
        let mut s = Schedule::new(1000.0, &[], Arrivals::Uniform, Rng::seeded(1), origin, 10_000);
        s.set_end(origin + Duration::from_millis(100));
        // Long after the end: only the arrivals before it are waiting (1 ms .. 99 ms, and 100 ms
        // itself is excluded), and the next one handed out lies at or past the end.
        let later = origin + Duration::from_secs(5);
        assert!((99..=100).contains(&s.backlog(later)), "{}", s.backlog(later));
        while s.backlog(later) > 0 {
            assert!(s.take(later) < origin + Duration::from_millis(100));
        }
        assert!(s.take(later) >= origin + Duration::from_millis(100));
    }

    #[test]
    fn uniform_arrivals_are_evenly_spaced() {
        let origin = Instant::now();
        let mut s = Schedule::new(200.0, &[], Arrivals::Uniform, Rng::seeded(1), origin, 10);
        let a = s.take(origin);
        let b = s.take(origin);
        assert_eq!(b - a, Duration::from_millis(5));
    }

    #[test]
    fn backlog_counts_due_arrivals_and_drops_beyond_the_bound() {
        let origin = Instant::now();
        let mut s = Schedule::new(1000.0, &[], Arrivals::Uniform, Rng::seeded(1), origin, 100);
        // One second with nobody taking work: 1000 arrivals due, 100 kept, 900 dropped.
        let later = origin + Duration::from_secs(1);
        assert_eq!(s.backlog(later), 100);
        let dropped = s.take_dropped();
        assert!((899..=900).contains(&dropped), "{dropped}");
        assert_eq!(s.take_dropped(), 0);
        // The oldest kept arrival is late by about 0.1 s.
        let lag = later - s.take(later);
        assert!(lag <= Duration::from_millis(100) && lag >= Duration::from_millis(98), "{lag:?}");
    }

    #[test]
    fn a_rate_change_applies_exactly_at_its_time() {
        let origin = Instant::now();
        let change = origin + Duration::from_secs(1);
        let mut s = Schedule::new(8.0, &[(change, 1000.0)], Arrivals::Uniform, Rng::seeded(1), origin, 100);
        // 125 ms apart until the change (the 8th would fall on it), then 1 ms apart from it.
        let before: Vec<Instant> = (0..7).map(|_| s.take(origin)).collect();
        assert_eq!(before[6] - origin, Duration::from_millis(875));
        assert_eq!(s.take(origin) - change, Duration::from_millis(1));
    }

    #[test]
    fn poisson_steps_average_each_rate() {
        let origin = Instant::now();
        let change = origin + Duration::from_secs(50);
        let mut s = Schedule::new(100.0, &[(change, 1000.0)], Arrivals::Poisson, Rng::seeded(7), origin, 1_000_000);
        let first = arrivals_in(&mut s, origin, 50.0);
        let second = arrivals_in(&mut s, change, 50.0);
        assert!((4_700..=5_300).contains(&first), "{first}");
        assert!((48_500..=51_500).contains(&second), "{second}");
    }
}
