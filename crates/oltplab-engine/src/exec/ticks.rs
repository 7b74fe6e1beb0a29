//! When intervals end: every interval length, and at each segment boundary (the end of
//! the warm-up, the start of a step), after which intervals restart so that every
//! segment is made of whole intervals (the last one of a segment may be short).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

pub struct Ticks {
    interval: Duration,
    /// Segment boundaries not yet reached, in time order.
    boundaries: VecDeque<Instant>,
    next: Instant,
}

impl Ticks {
    pub fn new(start: Instant, interval: Duration, boundaries: impl IntoIterator<Item = Instant>) -> Self {
        let mut ticks = Self { interval, boundaries: boundaries.into_iter().collect(), next: start + interval };
        ticks.clamp();
        ticks
    }

    /// When the current interval ends.
    pub fn next(&self) -> Instant {
        self.next
    }

    /// The interval ended at `now`; returns whether it ended a segment.
    pub fn fired(&mut self, now: Instant) -> bool {
        let boundary = self.boundaries.front().copied().filter(|&b| now >= b);
        match boundary {
            Some(b) => {
                self.boundaries.pop_front();
                self.next = b + self.interval;
            }
            None => self.next += self.interval,
        }
        // A reporter that was held up (a slow progress consumer) skips the ticks it missed
        // rather than firing them back to back as a burst of near-empty intervals.
        while self.next <= now {
            self.next += self.interval;
        }
        self.clamp();
        boundary.is_some()
    }

    fn clamp(&mut self) {
        if let Some(&b) = self.boundaries.front() {
            self.next = self.next.min(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missed_ticks_are_skipped() {
        let start = Instant::now();
        let s = Duration::from_secs(1);
        let mut t = Ticks::new(start, s, []);
        // Held up for 3.5 s: the next interval ends at 4 s, not at 2 s and 3 s in a burst.
        t.fired(start + Duration::from_millis(3500));
        assert_eq!(t.next(), start + 4 * s);
    }

    #[test]
    fn intervals_restart_at_each_boundary() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut t = Ticks::new(t0, Duration::from_millis(250), [ms(400), ms(900)]);
        let mut ends = Vec::new();
        for _ in 0..7 {
            let at = t.next();
            let segment_ends = t.fired(at);
            ends.push(((at - t0).as_millis(), segment_ends));
        }
        let expected =
            [(250, false), (400, true), (650, false), (900, true), (1150, false), (1400, false), (1650, false)];
        assert_eq!(ends, expected);
    }
}
