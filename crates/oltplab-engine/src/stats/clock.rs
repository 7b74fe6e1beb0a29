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

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A reading of the monotonic clock (the one `Instant` reads, `CLOCK_MONOTONIC`) in
/// nanoseconds, so that a latency is one subtraction: `Instant - Instant` normalises seconds
/// and nanoseconds and checks both ways, about 37 instructions, and an event took three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mono(u64);

impl Mono {
    pub fn now() -> Self {
        Self(clock_ns(libc::CLOCK_MONOTONIC))
    }

    /// Nanoseconds from `earlier` to this reading (0 if `earlier` is later).
    pub fn ns_since(self, earlier: Mono) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// `t` on this clock, through one pair of readings of both taken once (the rare paths:
    /// a deadline, an open loop's intended start).
    pub fn of(t: Instant) -> Self {
        static ANCHOR: OnceLock<(Instant, u64)> = OnceLock::new();
        let &(at, ns) = ANCHOR.get_or_init(|| {
            // The Instant read between two readings of this clock, placed at their midpoint.
            let (before, at, after) =
                (clock_ns(libc::CLOCK_MONOTONIC), Instant::now(), clock_ns(libc::CLOCK_MONOTONIC));
            (at, before + (after - before) / 2)
        });
        match t.checked_duration_since(at) {
            Some(d) => Self(ns.saturating_add(d.as_nanos() as u64)),
            None => Self(ns.saturating_sub(at.duration_since(t).as_nanos() as u64)),
        }
    }
}

/// Clock `id`'s time in nanoseconds. Through libc, as `Instant::now` is, rather than rustix:
/// rustix finds `clock_gettime` by parsing the vDSO itself, which crashes under valgrind (whose
/// vDSO image is not fully mapped), and the engine is profiled with callgrind
/// (docs/performance-engine.md).
#[allow(unsafe_code)]
pub fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec; an unknown clock id only makes the call fail.
    if unsafe { libc::clock_gettime(id, &raw mut t) } != 0 {
        return 0;
    }
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[derive(Debug, Clone, Copy)]
pub struct EventClock {
    start: Mono,
    last: Mono,
}

impl EventClock {
    /// Reads the clock: the event starts now.
    pub fn start() -> Self {
        let now = Mono::now();
        Self { start: now, last: now }
    }

    /// Reads the clock at the end of a statement; returns the statement's latency in ns.
    pub fn lap_ns(&mut self) -> u64 {
        let now = Mono::now();
        let ns = now.ns_since(self.last);
        self.last = now;
        ns
    }

    /// Reads the clock after untimed work: the next statement's latency starts here.
    pub fn restart(&mut self) {
        self.last = Mono::now();
    }

    pub fn started(&self) -> Mono {
        self.start
    }

    /// The last clock read: the end of the event once its last statement has ended.
    pub fn last(&self) -> Mono {
        self.last
    }

    /// From the event's start to the last clock read.
    pub fn elapsed_ns(&self) -> u64 {
        self.last.ns_since(self.start)
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
        assert_eq!(c.elapsed_ns(), first + second);
    }

    #[test]
    fn restart_leaves_untimed_work_out() {
        let mut c = EventClock::start();
        std::thread::sleep(Duration::from_millis(2));
        c.restart();
        assert!(c.lap_ns() < 2_000_000);
    }

    #[test]
    fn instants_map_onto_the_clock_with_their_distances() {
        // The anchor is taken by the first conversion: then one instant before it, one after.
        let (before, mapped, after) = (Mono::now(), Mono::of(Instant::now()), Mono::now());
        assert!(before.ns_since(mapped) < 1_000_000 && mapped.ns_since(after) < 1_000_000);
        let now = Instant::now();
        let earlier = Mono::of(now.checked_sub(Duration::from_millis(3)).expect("the machine is up"));
        let later = Mono::of(now + Duration::from_millis(5));
        // Exact up to the rounding of each conversion to whole nanoseconds.
        assert!(later.ns_since(earlier).abs_diff(8_000_000) <= 1, "{later:?} {earlier:?}");
        assert_eq!(earlier.ns_since(later), 0);
    }
}
