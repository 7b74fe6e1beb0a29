//! When intervals end: every interval length, and at each segment boundary (the end of
//! the warm-up, the start of a step), after which intervals restart so that every
//! segment is made of whole intervals (the last one of a segment may be short).
//!
//! At the load's end (its time limit, the last of `--events` started, a stop) no new
//! transaction starts and those in flight finish within milliseconds. The first tick at or after
//! the end waits half an interval more, so that they extend the last interval rather than
//! leave a stub of a few milliseconds after it, which every reader of intervals.csv would take
//! for a plunge of throughput (it is the drain of the last transactions, no new one starting).
//! A longer drain (workers waiting on a stalled server) goes on in intervals of its own.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

pub struct Ticks {
    interval: Duration,
    /// Segment boundaries not yet reached, in time order.
    boundaries: VecDeque<Instant>,
    next: Instant,
    /// When the load stops starting transactions, once known.
    end: Option<Instant>,
    /// The tick after the end fired: the grid goes on as usual.
    past_end: bool,
}

impl Ticks {
    /// `end`: the load's time limit, if it has one (a stop or the last event: `end_at`).
    pub fn new(
        start: Instant,
        interval: Duration,
        boundaries: impl IntoIterator<Item = Instant>,
        end: Option<Instant>,
    ) -> Self {
        let next = start + interval;
        let mut ticks = Self { interval, boundaries: boundaries.into_iter().collect(), next, end, past_end: false };
        ticks.clamp();
        ticks
    }

    /// When the current interval ends.
    pub fn next(&self) -> Instant {
        match self.end {
            Some(end) if !self.past_end && self.next >= end => self.next + self.interval / 2,
            _ => self.next,
        }
    }

    /// The load stopped starting transactions at `at` (a stop, the last of `--events`), if it
    /// had not before; returns whether the current interval now ends later than `at`.
    pub fn end_at(&mut self, at: Instant) -> bool {
        if !self.past_end {
            self.end = Some(self.end.map_or(at, |end| end.min(at)));
        }
        self.next() > at
    }

    /// The interval ended at `now`; returns whether it ended a segment.
    pub fn fired(&mut self, now: Instant) -> bool {
        self.past_end |= self.end.is_some_and(|end| now >= end);
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
        let mut t = Ticks::new(start, s, [], None);
        // Held up for 3.5 s: the next interval ends at 4 s, not at 2 s and 3 s in a burst.
        t.fired(start + Duration::from_millis(3500));
        assert_eq!(t.next(), start + 4 * s);
    }

    #[test]
    fn intervals_restart_at_each_boundary() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut t = Ticks::new(t0, Duration::from_millis(250), [ms(400), ms(900)], None);
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

    #[test]
    fn the_tick_at_the_end_waits_half_an_interval() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        // A 3-s run: ticks at 1 s and 2 s; the one at the end (3 s) waits until 3.5 s, so
        // workers finishing at 3.004 s close a last interval of 1.004 s, not a 4-ms stub.
        let mut t = Ticks::new(t0, s, [], Some(t0 + 3 * s));
        let mut ends = Vec::new();
        for _ in 0..4 {
            let at = t.next();
            t.fired(at);
            ends.push((at - t0).as_millis());
        }
        // A drain longer than that (a stalled server) goes on on the grid.
        assert_eq!(ends, [1000, 2000, 3500, 4000]);
    }

    #[test]
    fn a_stop_or_the_last_event_ends_the_load_when_it_comes() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut t = Ticks::new(t0, s, [], None);
        t.fired(t.next()); // 1 s
                           // The last event started at 1.7 s: the tick at 2 s waits until 2.5 s.
        assert!(t.end_at(t0 + Duration::from_millis(1700)));
        assert_eq!(t.next(), t0 + Duration::from_millis(2500));
        // Found only when the tick at 2 s fired: the same.
        let mut late = Ticks::new(t0, s, [], None);
        late.fired(late.next());
        assert!(late.end_at(t0 + 2 * s));
        assert_eq!(late.next(), t0 + Duration::from_millis(2500));
        late.fired(late.next());
        // Past the end, nothing moves the grid again.
        assert!(!late.end_at(t0 + 3 * s));
        assert_eq!(late.next(), t0 + 3 * s);
    }
}
