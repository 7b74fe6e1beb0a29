//! What a sysbench thread's Lua code reaches in the engine: its counters, the pacer that
//! decides when its events run and records them, the target to connect to, and the output.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;

use crate::db::QueryClass;
use crate::driver::Target;
use crate::rand::{Distribution, Rng, UniqueSeq};
use crate::stats::Tally;

/// A boxed future that stays on its thread.
pub type LocalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// The engine side of sysbench's event loop (`sb_more_events`, `sb_event_start`,
/// `sb_event_stop`), for every sysbench thread of one Lua state. The harness of the engine's
/// tests and the exec layer each provide one.
pub trait Pacer {
    /// Whether thread `tid` may start another event; may wait (an open loop's next arrival).
    fn more_events(&self, tid: usize) -> LocalFuture<'_, bool>;
    fn event_start(&self, tid: usize);
    /// The event ended; `tally` holds its statements (failed attempts included).
    fn event_stop(&self, tid: usize, tally: Tally);
    /// The event ended now, with `tally`: when the next may start at once, records this one and
    /// starts the next (true); otherwise does nothing (false: `event_stop` and `more_events` follow).
    fn next_at_once(&self, _tid: usize, _tally: Tally) -> bool {
        false
    }
    /// Statements outside any event (`thread_init`, `thread_done`, a custom `thread_run`'s own).
    fn queries(&self, tid: usize, tally: Tally);
    /// A statement failed; `reconnect` when the connection was lost and opened again.
    fn error(&self, tid: usize, code: &str, reconnect: bool);
    /// Whether the run is stopping (Ctrl-C, a fatal error, the time limit): reconnects give up.
    fn stopping(&self) -> bool;
}

/// Where the script's `print` and `io.write` go.
pub type Output = Rc<dyn Fn(&str)>;

/// What every sysbench thread of one Lua state shares.
pub struct StateShared {
    pub target: Target,
    pub pacer: Rc<dyn Pacer>,
    pub output: Output,
    /// sysbench's FATAL and WARNING lines (without the prefix): the drop-in prints them on stderr.
    pub log: Output,
    pub rng: RefCell<Rng>,
    pub dists: Dists,
    /// `sysbench.rand.unique()`'s sequence: one per run or command, as sysbench's per process.
    pub unique: Arc<UniqueSeq>,
    /// The driver's sysbench name: `mysql`, `pgsql` (or `sqlite`).
    pub driver_name: &'static str,
    /// Called when the script creates the driver: sends [`crate::exec::Progress::SqlDriver`] once.
    pub driver_created: Rc<dyn Fn()>,
}

/// sysbench.rand's distributions: `--rand-type`'s for `default`, and each one by name with the
/// `--rand-*` parameters.
pub struct Dists {
    pub default: Distribution,
    pub gaussian: Distribution,
    pub special: Distribution,
    pub pareto: Distribution,
}

/// One sysbench thread: its id and the statements it sent since the last event ended.
pub struct ThreadCtx {
    pub tid: usize,
    pub shared: Rc<StateShared>,
    tally: Cell<Tally>,
    in_event: Cell<bool>,
}

impl ThreadCtx {
    pub fn new(tid: usize, shared: Rc<StateShared>) -> Self {
        Self { tid, shared, tally: Cell::new(Tally::default()), in_event: Cell::new(false) }
    }

    pub fn count(&self, class: QueryClass) {
        let mut t = self.tally.get();
        t.add(class);
        self.tally.set(t);
    }

    pub fn event_start(&self) {
        self.flush_outside();
        self.in_event.set(true);
        self.shared.pacer.event_start(self.tid);
    }

    pub fn event_stop(&self) {
        self.in_event.set(false);
        self.shared.pacer.event_stop(self.tid, self.tally.take());
    }

    /// sysbench's `sb_event_stop`, `sb_more_events` and `sb_event_start` at once, when the next
    /// event may start without a wait (`next_call.rs`); false, with nothing done, when it must wait.
    pub fn next_at_once(&self) -> bool {
        if !self.in_event.get() || !self.shared.pacer.next_at_once(self.tid, self.tally.get()) {
            return false;
        }
        self.tally.take();
        true
    }

    /// sysbench's `sb_more_events`: whether this thread runs another event (waiting for it in
    /// an open loop), after handing the pacer what was counted outside events.
    pub async fn more_events(&self) -> bool {
        self.flush_outside();
        self.shared.pacer.more_events(self.tid).await
    }

    /// Hands statements counted outside events to the pacer.
    pub fn flush_outside(&self) {
        if !self.in_event.get() {
            let t = self.tally.take();
            if t.total() > 0 {
                self.shared.pacer.queries(self.tid, t);
            }
        }
    }
}

/// The Lua handle of a [`ThreadCtx`].
#[derive(Clone)]
pub struct CtxHandle(pub Rc<ThreadCtx>);

impl mlua::UserData for CtxHandle {}

/// The state's shared parts, for the host functions.
pub fn shared(lua: &mlua::Lua) -> mlua::Result<Rc<StateShared>> {
    lua.app_data_ref::<Rc<StateShared>>()
        .map(|s| Rc::clone(&s))
        .ok_or_else(|| mlua::Error::runtime("internal error: no engine state"))
}
