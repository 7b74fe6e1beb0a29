//! A closed loop's hand-over from one of a connection's events to the next, taken by the
//! workload itself between two events when nothing needs to wait: a script's loop calls it from
//! Lua (`script/next_call.rs`) instead of yielding to the worker's loop once per event, which
//! cost a Lua coroutine's yield and resume and a pass through that loop (docs/lua.md, "What it
//! costs"). It checks and records exactly as the worker's loop does, with the same functions.

use std::cell::Cell;
use std::sync::Arc;

use crate::stats::{Mono, Tally, WorkerTotals};
use crate::workload::script::EventLane;

use super::shared::{event_timing, record_event, Shared};

/// Events the workload runs in a row before the worker's loop takes a turn and yields to the
/// engine thread's other connections (an event that never waits, a script's without a
/// statement, would otherwise keep the thread to itself).
const IN_A_ROW: u32 = 64;

/// One connection's lane, shared by its worker's loop and its workload.
pub struct BackToBack {
    shared: Arc<Shared>,
    recorder_lane: usize,
    worker: usize,
    /// The start of the event in flight: set by the worker's loop when it starts one, and here.
    start: Cell<Mono>,
    /// Events recorded here since the worker's loop last took them into its totals.
    totals: Cell<WorkerTotals>,
    in_a_row: Cell<u32>,
}

impl BackToBack {
    pub fn new(shared: &Arc<Shared>, recorder_lane: usize, worker: usize) -> Self {
        let (start, totals, in_a_row) = (Cell::new(Mono::now()), Cell::default(), Cell::new(0));
        Self { shared: Arc::clone(shared), recorder_lane, worker, start, totals, in_a_row }
    }

    /// The worker's loop starts an event at `start`.
    pub fn started(&self, start: Mono) {
        self.start.set(start);
        self.in_a_row.set(0);
    }

    /// The start of the event that ended last (the workload may have started it here), the
    /// events recorded here since the last call, and whether they used up the turn: then the
    /// worker's loop yields.
    pub fn take(&self) -> (Mono, WorkerTotals, bool) {
        (self.start.get(), self.totals.take(), self.in_a_row.get() >= IN_A_ROW)
    }
}

impl EventLane for BackToBack {
    fn next_at_once(&self, tally: Tally) -> bool {
        let shared = &*self.shared;
        // An open loop's next event waits for its arrival: the worker's loop paces it.
        if shared.schedule.is_some() || self.in_a_row.get() >= IN_A_ROW {
            return false;
        }
        let end = Mono::now();
        if shared.ends(end) || !shared.serves(self.worker) || !shared.takes_event() {
            return false;
        }
        let start = self.start.replace(end);
        let timing = event_timing(None, start, end, end);
        let mut totals = self.totals.get();
        record_event(shared, self.recorder_lane, timing, tally, &[], &mut totals);
        self.totals.set(totals);
        self.in_a_row.set(self.in_a_row.get() + 1);
        true
    }
}
