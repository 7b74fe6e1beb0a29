//! What a run's connections share on every engine thread, and how each of them checks whether
//! another event may start and records one that ended: the worker's loop (`worker.rs`) and the
//! hand-over a workload takes itself (`back_to_back.rs`) do both the same way.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Instant;

use crate::stats::{EventTiming, Mono, Recorders, Tally, WorkerTotals};
use crate::workload::Workload;

use super::schedule::Schedule;
use super::steps::Timeline;
use super::stop::Stop;

/// What all workers share, on every engine thread.
pub struct Shared {
    pub workload: Arc<Workload>,
    pub recorders: Recorders,
    pub stmt_kinds: Vec<usize>,
    pub deadline: Option<Instant>,
    /// The same deadline on the events' clock, which every event's end is checked against.
    pub deadline_mono: Option<Mono>,
    /// 0: no limit.
    pub max_events: u64,
    pub events_started: AtomicU64,
    pub running: AtomicUsize,
    /// Open loop: connections inside an event right now (sysbench's "concurrency", which it
    /// counts in rate mode only). Not counted in a closed loop: every engine thread would write
    /// this line twice per event, and with more threads than cores it moves between the cores.
    pub in_flight: AtomicUsize,
    pub stop: Stop,
    /// The first fatal error; it stops the run.
    pub fatal: Mutex<Option<String>>,
    pub interrupted: std::sync::atomic::AtomicBool,
    /// Open loop: the arrivals connections take their start times from. One schedule for all the
    /// engine threads, not a Poisson stream per thread (whose superposition would be the same
    /// arrival process): with one queue any free connection takes the next arrival, on whichever
    /// thread it is, as with one thread; with a stream per thread, a thread whose connections are
    /// all busy would keep its arrivals waiting while another's connections idle (W queues of
    /// c/W servers, not one of c), and uniform arrivals would not stay uniform. It costs a
    /// lock per event, shared only when there are several engine threads (over 4 cores).
    pub schedule: Option<Mutex<Schedule>>,
    /// A step plan: which connections serve the load when.
    pub timeline: Option<Timeline>,
}

impl Shared {
    /// No new event at `now`: the run stops, or a closed loop reached its time limit (as
    /// sysbench; an open loop's arrivals scheduled before the deadline still run after it: the
    /// schedule ends there).
    pub fn ends(&self, now: Mono) -> bool {
        self.stop.is_stopped() || (self.schedule.is_none() && self.deadline_mono.is_some_and(|d| now >= d))
    }

    /// Counts an event as started; false once `--events` have.
    pub fn takes_event(&self) -> bool {
        self.max_events == 0 || self.events_started.fetch_add(1, Ordering::Relaxed) < self.max_events
    }

    /// Connection `worker` serves the load now (a step plan may idle it).
    pub fn serves(&self, worker: usize) -> bool {
        self.timeline.as_ref().is_none_or(|t| t.is_active(worker, Instant::now()))
    }
}

/// An event's times: it started at `start` (`intended` to, in an open loop) and ended at `end`;
/// its connection was free from `free_since`.
pub fn event_timing(intended: Option<Mono>, start: Mono, end: Mono, free_since: Mono) -> EventTiming {
    EventTiming {
        response_ns: end.ns_since(intended.unwrap_or(start)),
        service_ns: end.ns_since(start),
        lag_ns: intended.map_or(0, |t| start.ns_since(t)),
        client_lag_ns: intended.map_or(0, |t| start.ns_since(t.max(free_since))),
    }
}

/// Records a completed event, and in the connection's `totals` if the run is measuring.
pub fn record_event(
    shared: &Shared,
    recorder_lane: usize,
    timing: EventTiming,
    tally: Tally,
    stmt_latencies_ns: &[(usize, u64)],
    totals: &mut WorkerTotals,
) {
    if shared.recorders.record_event(recorder_lane, timing, tally, stmt_latencies_ns) {
        totals.events += 1;
        totals.latency_sum_ns += timing.response_ns;
    }
}
