//! The clock of one event: one clock read when the event starts and one when each of its
//! statements ends. A clock read costs 20-70 ns on our (virtual) machines, and `oltp_read_only`
//! runs 16 statements per event: reading the clock twice per statement, as a stopwatch around
//! each one would, was most of the recording path's cost (`examples/record_bench.rs`).
//!
//! A statement's latency runs from the previous read (the event's start, or the end of the
//! previous statement) to its end, so it includes drawing its parameters: tens of nanoseconds
//! against tens of microseconds of round trip, below the histograms' 0.1 % resolution. Work
//! that is not a timed statement (a ROLLBACK before a retry, a reconnect) calls [`restart`]
//! so that its time is not added to the next statement.
//!
//! [`restart`]: EventClock::restart

use std::time::{Instant, SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, Copy)]
pub struct EventClock {
    start: Instant,
    last: Instant,
}

impl EventClock {
    /// Reads the clock: the event starts now.
    pub fn start() -> Self {
        Self::start_at(Instant::now())
    }

    /// The event starts at `now`, a time the caller has just read.
    pub fn start_at(now: Instant) -> Self {
        Self { start: now, last: now }
    }

    /// Reads the clock at the end of a statement; returns the statement's latency in ns.
    pub fn lap_ns(&mut self) -> u64 {
        let now = Instant::now();
        let ns = now.saturating_duration_since(self.last).as_nanos() as u64;
        self.last = now;
        ns
    }

    /// Reads the clock after untimed work: the next statement's latency starts here.
    pub fn restart(&mut self) {
        self.last = Instant::now();
    }

    pub fn started(&self) -> Instant {
        self.start
    }

    /// The last clock read: the end of the event once its last statement has ended.
    pub fn last(&self) -> Instant {
        self.last
    }
}

/// Wall-clock seconds since the Unix epoch, as run.json records instants.
pub fn epoch_s(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn laps_chain_from_the_start() {
        let mut c = EventClock::start();
        std::thread::sleep(Duration::from_millis(2));
        let first = c.lap_ns();
        let second = c.lap_ns();
        assert!(first >= 2_000_000, "{first}");
        assert!(second < first);
        assert_eq!((c.last() - c.started()).as_nanos() as u64, first + second);
    }

    #[test]
    fn restart_leaves_untimed_work_out() {
        let mut c = EventClock::start();
        std::thread::sleep(Duration::from_millis(2));
        c.restart();
        assert!(c.lap_ns() < 2_000_000);
    }
}
