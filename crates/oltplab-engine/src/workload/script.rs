//! A sysbench Lua script as a workload: the executor drives its events like the native ones,
//! through what a script runtime (`crate::script`, which builds this workload) implements here.
//! The workload layer names no Lua: the runtime sits above it and plugs in by these traits.

use std::fmt;
use std::rc::Rc;

use futures_util::future::LocalBoxFuture;

use crate::db::DbError;
use crate::error::Result;
use crate::stats::Tally;

/// The script, shared by the engine threads.
pub trait ScriptLoad: Send + Sync {
    /// The script's name, as run.json and messages show it.
    fn name(&self) -> &'static str;
    /// Engine thread `thread`'s Lua state with a sysbench thread for each of its `connections`
    /// (their indices, sysbench's thread ids), each through its `thread_init` (where a script
    /// connects): sysbench runs these before its clock starts, as the executor opens connections.
    fn thread_state<'a>(
        &'a self,
        thread: usize,
        connections: &'a [usize],
    ) -> LocalBoxFuture<'a, Result<Box<dyn ScriptThread>>>;
}

/// One engine thread's Lua state and its sysbench threads (not `Send`: it stays on its thread).
pub trait ScriptThread {
    /// Sysbench thread `tid`'s event loop, ready to run its first event; `lane`, the executor's
    /// hand-over between its events.
    fn worker(&self, tid: usize, lane: Option<Rc<dyn EventLane>>) -> Result<Box<dyn ScriptWorker>>;
}

/// The executor's hand-over from one of a connection's events to the next, which a script's
/// loop takes itself when nothing needs to wait (`script/next_call.rs`): no return to the
/// executor's loop and no coroutine yield per event.
pub trait EventLane {
    /// The event in flight ended now, with `tally`. When the next may start at once (a closed
    /// loop, not stopping, before the time limit and `--events`, the connection in its step, the
    /// executor's turn not due), records the ended event as the executor's loop would, starts
    /// the next and returns true; otherwise does nothing and returns false (the loop then hands
    /// the event to the executor, which waits as it must).
    fn next_at_once(&self, tally: Tally) -> bool;
}

/// One sysbench thread's event loop, run one event at a time.
pub trait ScriptWorker {
    /// Runs the thread's loop up to the end of its next event (`sb_event_stop`).
    fn event(&mut self) -> LocalBoxFuture<'_, std::result::Result<ScriptEvent, DbError>>;
    /// Tells the loop there are no more events and runs it to its end (`thread_done`).
    fn finish(&mut self) -> LocalBoxFuture<'_, std::result::Result<ScriptEvent, DbError>>;
}

/// What an event (or the loop's end) did.
#[derive(Debug, Default)]
pub struct ScriptEvent {
    /// Its statements and those sent outside events since the last one.
    pub tally: Tally,
    /// Errors the script handled itself (an ignorable error restarts the event in Lua):
    /// statement error codes, and whether the connection was opened again.
    pub errors: Vec<(String, bool)>,
    /// The thread's loop ended (its `event` returned true, its own `thread_run` returned, or
    /// `finish`): what ran since the last event is not an event.
    pub ended: bool,
}

/// A connection's script state, as the executor holds it.
pub struct ScriptState(pub Box<dyn ScriptWorker>);

impl fmt::Debug for ScriptState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ScriptState")
    }
}
