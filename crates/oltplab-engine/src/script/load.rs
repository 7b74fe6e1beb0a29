//! A script's `run` on the executor (docs/lua.md): the script as a workload ([`ScriptLoad`]),
//! one Lua state per 256 connections of an engine thread, one sysbench thread (environment + coroutine) per
//! connection. The executor decides when each event starts and times it; the thread's loop (the
//! script's `thread_run`, or sysbench's) runs in its coroutine, which the executor's worker
//! drives from one `sb_more_events` to the next `sb_event_stop`.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;

use futures_util::future::LocalBoxFuture;
use futures_util::stream::{self, StreamExt as _, TryStreamExt as _};

use super::command::{main_loaded, on_own_thread, state_shared, unique};
use super::ctx::{LocalFuture, Pacer};
use super::errors::one_line;
use super::host::{Host, OptValue, ThreadEnv};
use super::reports::Reports;
use super::{CommandSpec, ScriptSpec};
use crate::db::DbError;
use crate::driver::Target;
use crate::error::{EngineError, Result};
use crate::exec::{Sink, Spec, Stop};
use crate::rand::{rand_defs, UniqueSeq};
use crate::result::RunResult;
use crate::stats::Tally;
use crate::workload::script::{EventLane, ScriptEvent, ScriptLoad, ScriptThread, ScriptWorker};
use crate::workload::Workload;

/// Sysbench threads starting (`thread_init`) at once on one engine thread. More than the 64
/// connections the executor opens at once: a `thread_init` is mostly round trips after its
/// connect (`oltp_common` prepares 22 statements one after the other), so 64 at a time made
/// 4,096 connections 64 waves of 23 round trips (8-19 s on the 2-core host; 4.4-6.0 s at 256).
const INIT_CONCURRENCY: usize = 256;

/// Sysbench threads per Lua state. Every Lua value Rust holds (a coroutine being driven, its
/// environment, a statement in flight) takes a slot of mlua's reference stack, which LuaJIT
/// caps at `LUAI_MAXCSTACK` (8,000) per state: a waiting sysbench thread holds 4-8 of them, so
/// one state for all of an engine thread's connections panicked from 2,048 (point select) and
/// 4,096 (read-only) connections on. A state costs far less than the 256 threads it holds.
const THREADS_PER_STATE: usize = 256;

/// Lua's collector pause once the threads started, in percent of the live heap after a
/// collection: the next collection starts at once (Lua's default, kept for `thread_init`, waits
/// for the heap to double). A run's garbage is a few small objects per statement, and at 4,096
/// read-only connections the default let each state's heap reach 1.6 times its live data
/// (11 MB for 7 MB: 356-404 MB of RSS against 318-323); at 100 it stays within 1.1 times, for
/// about 15 % more client CPU per transaction there (median of 3 pairs on a loaded host; none
/// measurable at 8 connections). 150 was in between (353 MB). docs/performance.md, "Lua scripts".
const RUN_GC_PAUSE_PERCENT: i32 = 100;
/// LuaJIT's default pause, which a script that sets its own has changed.
const LUA_GC_PAUSE_PERCENT: i32 = 200;

/// Runs a script's `run` command (`spec.script`): `init` in a main state of its own, the
/// events on the executor, `done`.
pub async fn run(spec: &Spec, sink: &Sink, stop: Stop) -> Result<RunResult> {
    let script: ScriptSpec = serde_json::from_value(spec.script.clone().unwrap_or_default())?;
    let name: &'static str = Box::leak(script.test_name().to_owned().into_boxed_str());
    let cmd = CommandSpec { script, db: spec.db.clone(), options: spec.options.clone(), target: spec.target.clone() };
    let MainState { values, legacy, hooks } = main_state(&cmd, sink, "init").await?;
    let (options, target) = cmd.resolve()?;
    let unique = unique(&options);
    let load = Load { cmd: cmd.clone(), target, values, legacy, name, sink: sink.clone(), unique };
    let resolved = spec.resolve_as(rand_defs(), move |_, _| Ok(Workload::Script(Box::new(load))))?;
    // As many engine threads as a native run: a thread per connection up to 64 (each waits for
    // its replies in poll(2), as sysbench's threads), one per 4 cores above (exec/runtime.rs).
    let threads = crate::exec::engine_threads(resolved.load.threads);
    let reports = Reports::start(&cmd, sink, &hooks)?;
    let run = crate::exec::run_resolved(spec, resolved, reports.sink(), stop, threads);
    let result = reports.during(run).await?;
    reports.cumulative(&result);
    reports.finish().await;
    if result.facts.error.is_none() {
        main_state(&cmd, sink, "done").await?;
    }
    Ok(result)
}

/// What `init` tells the run: the options' values for the run's states, whether the script
/// declares none (legacy: every option a global), the hooks it sets.
struct MainState {
    values: Vec<(String, OptValue)>,
    legacy: bool,
    hooks: Vec<String>,
}

/// Loads the script in a main state of its own (on a thread of its own) and calls its global
/// `function` (`init`, `done`).
async fn main_state(cmd: &CommandSpec, sink: &Sink, function: &'static str) -> Result<MainState> {
    let (cmd, sink) = (cmd.clone(), sink.clone());
    let work = move || -> LocalFuture<'static, Result<_>> {
        Box::pin(async move {
            let (main, values) = main_loaded(&cmd, &sink, &Stop::new()).await?;
            if function == "init" && !main.description.functions.iter().any(|f| f == "event") {
                // sysbench requires it even of a script with a thread_run of its own.
                let name = cmd.script.test_name();
                return Err(EngineError::Driver(format!("cannot find the event() function in {name}")));
            }
            main.host.call(&main.thread, function, ()).await.map_err(|e| EngineError::Driver(failed(function, &e)))?;
            let legacy = main.description.options.is_none();
            Ok(MainState { values, legacy, hooks: main.description.hooks })
        })
    };
    tokio::task::spawn_blocking(move || on_own_thread("oltplab-script", work))
        .await
        .unwrap_or_else(|e| Err(crate::panics::joined("a script's main state", &e)))
}

fn failed(function: &str, e: &mlua::Error) -> String {
    format!("`{function}' function failed: {}", one_line(e))
}

/// The script as the executor's workload.
struct Load {
    cmd: CommandSpec,
    target: Target,
    values: Vec<(String, OptValue)>,
    legacy: bool,
    name: &'static str,
    sink: Sink,
    /// `sysbench.rand.unique()`'s sequence, shared by every engine thread's states.
    unique: Arc<UniqueSeq>,
}

impl ScriptLoad for Load {
    fn name(&self) -> &'static str {
        self.name
    }

    fn thread_state<'a>(
        &'a self,
        thread: usize,
        connections: &'a [usize],
    ) -> LocalBoxFuture<'a, Result<Box<dyn ScriptThread>>> {
        Box::pin(async move {
            let (options, _) = self.cmd.resolve()?;
            let pacer = Rc::new(ExecPacer::default());
            let (mut states, mut hosts) = (Vec::new(), Vec::new());
            for (chunk, tids) in connections.chunks(THREADS_PER_STATE).enumerate() {
                // The first state's generators are the engine thread's stream, as with one state.
                let stream = thread + (chunk << 32);
                let pacer = Rc::clone(&pacer) as Rc<dyn Pacer>;
                let shared = state_shared(&self.target, &options, pacer, &self.sink, stream, Arc::clone(&self.unique))?;
                let host = Rc::new(Host::new(shared, &self.cmd.invocation())?);
                host.set_options(&self.values).map_err(|e| EngineError::Config(one_line(&e)))?;
                hosts.extend(tids.iter().map(|&tid| (tid, Rc::clone(&host))));
                states.push(host);
            }
            let envs: Vec<(Rc<Host>, ThreadEnv)> = stream::iter(hosts)
                .map(|(tid, host)| async move {
                    let t = host.new_thread(tid)?;
                    host.load(&t).await.map_err(|e| EngineError::Config(one_line(&e)))?;
                    host.export_options(&t, self.legacy).map_err(|e| EngineError::Config(one_line(&e)))?;
                    host.call(&t, "thread_init", tid)
                        .await
                        .map_err(|e| EngineError::Driver(failed("thread_init", &e)))?;
                    Ok::<_, EngineError>((host, t))
                })
                .buffer_unordered(INIT_CONCURRENCY)
                .try_collect()
                .await?;
            for host in states {
                let before = host.lua().gc_set_pause(RUN_GC_PAUSE_PERCENT);
                if before != LUA_GC_PAUSE_PERCENT {
                    host.lua().gc_set_pause(before); // the script's own (`collectgarbage("setpause")`)
                }
                // A pause counts from the end of a cycle: the cycle under way began with
                // `thread_init`'s pause of 200 and would let the heap double before the run's
                // took over. A full cycle now frees what `thread_init` left behind and starts
                // the run's pause at its live data: 4,096 read-only connections peaked 15-20 MB
                // lower, for a few milliseconds per state once (docs/lua.md, "What it costs").
                host.lua().gc_collect().map_err(|e| EngineError::Internal(one_line(&e)))?;
            }
            let envs = envs.into_iter().map(|(host, t)| (t.ctx.tid, (host, t))).collect();
            Ok(Box::new(EngineThread { pacer, envs: RefCell::new(envs) }) as Box<dyn ScriptThread>)
        })
    }
}

/// One engine thread's states and the sysbench threads not yet handed to a worker (each with
/// its state).
struct EngineThread {
    pacer: Rc<ExecPacer>,
    envs: RefCell<HashMap<usize, (Rc<Host>, ThreadEnv)>>,
}

impl ScriptThread for EngineThread {
    fn worker(&self, tid: usize, lane: Option<Rc<dyn EventLane>>) -> Result<Box<dyn ScriptWorker>> {
        let (host, t) = self.envs.borrow_mut().remove(&tid).ok_or_else(|| {
            EngineError::Internal(format!(
                "no sysbench thread {tid} on this engine thread (distributed script runs are not supported)"
            ))
        })?;
        let slot = self.pacer.slot(tid);
        if let Some(lane) = lane {
            slot.lane.set(lane).map_err(|_| EngineError::Internal(format!("sysbench thread {tid} has two workers")))?;
        }
        let run = async move {
            host.run_thread(&t).await.map_err(|e| failed("thread_run", &e))?;
            host.call(&t, "thread_done", t.ctx.tid).await.map_err(|e| failed("thread_done", &e))?;
            t.ctx.flush_outside();
            Ok(())
        };
        Ok(Box::new(ThreadLoop { run: Some(Box::pin(run)), slot }))
    }
}

/// What the executor's worker and a sysbench thread's loop hand each other.
#[derive(Default)]
struct Slot {
    /// The worker's answer to the loop's next `sb_more_events`: another event, or the end.
    go: Cell<Option<bool>>,
    /// The loop waits in `sb_more_events` for an answer.
    waiting: Cell<bool>,
    /// `sb_event_stop`: the event's statements.
    stopped: Cell<Option<Tally>>,
    /// Statements outside events (`thread_done`, a custom `thread_run`'s own).
    outside: Cell<Tally>,
    errors: RefCell<Vec<(String, bool)>>,
    /// The executor's hand-over to the next event, which the loop takes itself when it may.
    lane: OnceCell<Rc<dyn EventLane>>,
}

/// The pacer of one engine thread's sysbench threads: each talks to its worker by its slot.
#[derive(Default)]
struct ExecPacer {
    slots: RefCell<HashMap<usize, Rc<Slot>, BuildHasherDefault<TidHasher>>>,
}

/// A thread id's hash: the id spread by a multiplication. The pacer looks a slot up twice per
/// event, where the default hasher showed in profiles (docs/lua.md, "What it costs").
#[derive(Default)]
struct TidHasher(u64);

impl Hasher for TidHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

impl ExecPacer {
    fn slot(&self, tid: usize) -> Rc<Slot> {
        Rc::clone(self.slots.borrow_mut().entry(tid).or_default())
    }
}

impl Pacer for ExecPacer {
    /// Waits for the worker's answer; the worker polls the loop again once it set one, so the
    /// future needs no waker.
    fn more_events(&self, tid: usize) -> LocalFuture<'_, bool> {
        let slot = self.slot(tid);
        Box::pin(std::future::poll_fn(move |_| {
            let answer = slot.go.take();
            slot.waiting.set(answer.is_none());
            answer.map_or(Poll::Pending, Poll::Ready)
        }))
    }
    fn event_start(&self, _: usize) {}
    fn event_stop(&self, tid: usize, tally: Tally) {
        self.slot(tid).stopped.set(Some(tally));
    }
    fn next_at_once(&self, tid: usize, tally: Tally) -> bool {
        let slot = self.slot(tid);
        // Handled errors and statements outside events go to the executor with an event, as before.
        if !slot.errors.borrow().is_empty() || slot.outside.get().total() > 0 {
            return false;
        }
        slot.lane.get().is_some_and(|lane| lane.next_at_once(tally))
    }
    fn queries(&self, tid: usize, tally: Tally) {
        let slot = self.slot(tid);
        slot.outside.set(add(slot.outside.get(), tally));
    }
    fn error(&self, tid: usize, code: &str, reconnect: bool) {
        self.slot(tid).errors.borrow_mut().push((code.to_owned(), reconnect));
    }
    fn stopping(&self) -> bool {
        false // the executor stops a connection by no longer driving its loop
    }
}

fn add(a: Tally, b: Tally) -> Tally {
    Tally { reads: a.reads + b.reads, writes: a.writes + b.writes, others: a.others + b.others }
}

/// One sysbench thread's loop, driven by its worker.
struct ThreadLoop {
    run: Option<LocalBoxFuture<'static, std::result::Result<(), String>>>,
    slot: Rc<Slot>,
}

impl ThreadLoop {
    /// Drives the loop until its event stops, it waits for the next answer, or it ends.
    async fn drive(&mut self) -> std::result::Result<ScriptEvent, DbError> {
        let Some(run) = self.run.as_mut() else {
            return Ok(ScriptEvent { ended: true, ..ScriptEvent::default() });
        };
        let slot = Rc::clone(&self.slot);
        let end = std::future::poll_fn(|cx| match run.as_mut().poll(cx) {
            Poll::Ready(r) => Poll::Ready(Some(r)),
            Poll::Pending if slot.stopped.get().is_some() || (slot.waiting.get() && slot.go.get().is_none()) => {
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        })
        .await;
        let stopped = slot.stopped.take();
        let mut event = ScriptEvent {
            tally: add(stopped.unwrap_or_default(), slot.outside.take()),
            errors: slot.errors.take(),
            ended: false,
        };
        match end {
            None => Ok(event),
            Some(Ok(())) => {
                self.run = None;
                event.ended = stopped.is_none();
                Ok(event)
            }
            Some(Err(message)) => {
                self.run = None;
                Err(DbError::fatal("LUA", message))
            }
        }
    }
}

impl ScriptWorker for ThreadLoop {
    fn event(&mut self) -> LocalBoxFuture<'_, std::result::Result<ScriptEvent, DbError>> {
        self.slot.go.set(Some(true));
        Box::pin(self.drive())
    }

    fn finish(&mut self) -> LocalBoxFuture<'_, std::result::Result<ScriptEvent, DbError>> {
        Box::pin(async move {
            let mut all = ScriptEvent::default();
            while self.run.is_some() {
                self.slot.go.set(Some(false));
                let e = self.drive().await?;
                all.tally = add(all.tally, e.tally);
                all.errors.extend(e.errors);
            }
            all.ended = true;
            Ok(all)
        })
    }
}
