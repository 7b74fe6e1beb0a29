//! Runs a script's sysbench threads as coroutines on one `LocalSet` with a simple pacer (an event
//! limit, a time limit, counts): the engine's tests drive scripts through it against real servers.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::command::{load, option_values, state_shared, unique};
use super::ctx::{LocalFuture, Pacer};
use super::errors::one_line;
use super::CommandSpec;
use crate::error::{EngineError, Result};
use crate::exec::{Sink, Stop};
use crate::stats::Tally;

/// What a harness run counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub events: u64,
    /// Statements of the events (failed attempts included).
    pub in_events: Tally,
    /// Statements outside events (`thread_init`, `thread_done`).
    pub outside: Tally,
    pub errors: u64,
    pub reconnects: u64,
    /// Events per thread.
    pub per_thread: Vec<u64>,
}

/// A pacer that stops after `max_events` events or `max_time`.
pub struct SimplePacer {
    max_events: u64,
    deadline: Option<Instant>,
    started: Cell<u64>,
    counts: RefCell<Counts>,
    stop: Stop,
}

impl Pacer for SimplePacer {
    fn more_events(&self, _: usize) -> LocalFuture<'_, bool> {
        let more = !self.stop.is_stopped()
            && self.deadline.is_none_or(|d| Instant::now() < d)
            && (self.max_events == 0 || self.started.get() < self.max_events);
        if more {
            self.started.set(self.started.get() + 1);
        }
        Box::pin(async move {
            // Let the other threads run, as a scheduler would between events.
            tokio::task::yield_now().await;
            more
        })
    }
    fn event_start(&self, _: usize) {}
    fn event_stop(&self, tid: usize, tally: Tally) {
        let mut c = self.counts.borrow_mut();
        c.events += 1;
        c.in_events.reads += tally.reads;
        c.in_events.writes += tally.writes;
        c.in_events.others += tally.others;
        c.per_thread[tid] += 1;
    }
    fn queries(&self, _: usize, tally: Tally) {
        let mut c = self.counts.borrow_mut();
        c.outside.reads += tally.reads;
        c.outside.writes += tally.writes;
        c.outside.others += tally.others;
    }
    fn error(&self, _: usize, _: &str, reconnect: bool) {
        let mut c = self.counts.borrow_mut();
        if reconnect {
            c.reconnects += 1;
        } else {
            c.errors += 1;
        }
    }
    fn stopping(&self) -> bool {
        self.stop.is_stopped()
    }
}

/// Runs the script's `run` on `--threads` coroutines of one state until `max_events` events or
/// `max_time`, as sysbench would (init, `thread_init` everywhere, the event loops, `thread_done`,
/// done). The first thread error stops the others and is returned.
pub fn run(spec: &CommandSpec, max_events: u64, max_time: Duration, sink: &Sink) -> Result<Counts> {
    let (spec, sink) = (spec.clone(), sink.clone());
    super::command::on_own_thread("oltplab-harness", move || {
        Box::pin(async move { run_local(&spec, max_events, max_time, &sink).await })
    })
}

async fn run_local(spec: &CommandSpec, max_events: u64, max_time: Duration, sink: &Sink) -> Result<Counts> {
    let (options, target) = spec.resolve()?;
    let threads = options.uint("threads").max(1) as usize;
    let stop = Stop::new();
    let pacer = Rc::new(SimplePacer {
        max_events,
        deadline: Some(Instant::now() + max_time),
        started: Cell::new(0),
        counts: RefCell::new(Counts { per_thread: vec![0; threads], ..Counts::default() }),
        stop: stop.clone(),
    });
    let shared = state_shared(&target, &options, Rc::clone(&pacer) as Rc<dyn Pacer>, sink, 0, unique(&options))?;
    // Thread 0's environment doubles as sysbench's main state (init, done).
    let main = load(spec, Rc::clone(&shared), 0, None).await?;
    let values = option_values(spec, main.description.options.as_deref(), &options)?;
    main.host.set_options(&values).map_err(|e| EngineError::Config(one_line(&e)))?;
    let legacy = main.description.options.is_none();
    main.host.export_options(&main.thread, legacy).map_err(|e| EngineError::Config(one_line(&e)))?;
    main.host.call(&main.thread, "init", ()).await.map_err(|e| failed("init", &e))?;
    let host = Rc::new(main.host);
    let mut envs = Vec::with_capacity(threads);
    for tid in 0..threads {
        let t = host.new_thread(tid)?;
        host.load(&t).await.map_err(|e| EngineError::Config(one_line(&e)))?;
        host.export_options(&t, legacy).map_err(|e| EngineError::Config(one_line(&e)))?;
        host.call(&t, "thread_init", tid).await.map_err(|e| failed("thread_init", &e))?;
        envs.push(t);
    }
    let mut tasks = Vec::new();
    for t in envs {
        let (host, stop) = (Rc::clone(&host), stop.clone());
        tasks.push(tokio::task::spawn_local(async move {
            let r = host.run_thread(&t).await.map_err(|e| failed("thread_run", &e));
            if r.is_err() {
                stop.stop();
                return r;
            }
            let done = host.call(&t, "thread_done", t.ctx.tid).await.map(drop).map_err(|e| failed("thread_done", &e));
            t.ctx.flush_outside();
            done
        }));
    }
    let mut first = None;
    for task in tasks {
        if let Err(e) = task.await.map_err(|e| EngineError::Internal(e.to_string()))? {
            first.get_or_insert(e);
        }
    }
    if let Some(e) = first {
        return Err(e);
    }
    host.call(&main.thread, "done", ()).await.map_err(|e| failed("done", &e))?;
    let counts = pacer.counts.borrow().clone();
    Ok(counts)
}

fn failed(name: &str, e: &mlua::Error) -> EngineError {
    EngineError::Driver(format!("`{name}' function failed: {}", one_line(e)))
}
