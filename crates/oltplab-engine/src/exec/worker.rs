//! One connection's loop: run events back to back (closed loop) or at the
//! schedule's intended start times (open loop) until a limit, retrying an event
//! after an ignorable error (with an explicit ROLLBACK first, which sysbench
//! omits) and reconnecting after a lost connection.

use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::db::{ErrorAction, Fetch};
use crate::driver::Conn;
use crate::rand::Rng;
use crate::stats::{EventClock, Mono, WorkerTotals};
use crate::workload::script::EventLane;
use crate::workload::{EventCtx, ThreadState, WorkerInfo, WorkerState};

use super::back_to_back::BackToBack;
use super::shared::{event_timing, record_event, Shared};
use super::stop::{LocalStop, Stop};

/// One connection, on its engine thread: its recorder lane is the thread's.
pub struct Worker {
    pub conn: Conn,
    pub rng: Rng,
    pub info: WorkerInfo,
    pub recorder_lane: usize,
    pub thread: Rc<ThreadState>,
    /// The run's stop, as this engine thread sees it.
    pub stop: LocalStop,
}

/// Runs one connection's events; returns its totals and the connection, for the run to close.
pub async fn run_worker(shared: Arc<Shared>, worker: Worker) -> (WorkerTotals, Conn) {
    let Worker { mut conn, mut rng, info: worker, recorder_lane, thread, stop } = worker;
    let mut totals = WorkerTotals::default();
    let lane = Rc::new(BackToBack::new(&shared, recorder_lane, worker.id));
    let mut state = match shared.workload.worker_state(&thread, worker, Some(Rc::clone(&lane) as Rc<dyn EventLane>)) {
        Ok(state) => state,
        Err(e) => {
            fail(&shared, format!("cannot start connection {} of {}: {e}", worker.id, shared.workload.name()));
            shared.running.fetch_sub(1, Ordering::Relaxed);
            return (totals, conn);
        }
    };
    // When this connection last became free (the end of its last event): lag beyond it is the
    // client's, not the server's.
    let mut free_since = Mono::now();
    // The latest clock read: the deadline check needs no read of its own.
    let mut now = free_since;
    // Reused by every event, so that recording allocates nothing.
    let mut latencies: Vec<(usize, u64)> = Vec::with_capacity(32);
    loop {
        if shared.ends(now) {
            break;
        }
        if let Some(timeline) = shared.timeline.as_ref().filter(|t| !t.is_active(worker.id, Instant::now())) {
            // Not needed in this step: idle (connected) until a later step needs it; end if none does.
            let Some(wake) = timeline.next_active(worker.id, Instant::now()) else { break };
            tokio::select! {
                biased;
                () = stop.stopped() => break,
                () = tokio::time::sleep_until(wake.into()) => {
                    now = Mono::now();
                    continue;
                }
            }
        }
        if !shared.takes_event() {
            break;
        }
        let intended = match &shared.schedule {
            None => None,
            Some(schedule) => {
                let t = schedule.lock().expect("schedule lock").take(Instant::now());
                if shared.deadline.is_some_and(|d| t >= d) {
                    break;
                }
                tokio::select! {
                    biased;
                    () = stop.stopped() => break,
                    () = tokio::time::sleep_until(t.into()) => {}
                }
                Some(Mono::of(t))
            }
        };
        if let Some(wait) = shared.workload.pause(&mut state, &mut rng) {
            // Keying and think time: outside the transaction's latency, and never past the end.
            let wake = Instant::now() + wait;
            let wake = shared.deadline.map_or(wake, |d| wake.min(d));
            tokio::select! {
                biased;
                () = stop.stopped() => break,
                () = tokio::time::sleep_until(wake.into()) => {}
            }
            if shared.deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
        }
        let clock = EventClock::start();
        lane.started(clock.started());
        let mut ctx = EventCtx::reusing(&mut conn, &mut rng, worker, &shared.stmt_kinds, clock, latencies);
        // Open loop only (`Shared::in_flight`).
        let counted = intended.map(|_| shared.in_flight.fetch_add(1, Ordering::Relaxed));
        // The event first: a thread's sole connection mostly completes it in this first poll
        // (its reply waited for in recv(2)), and the stop's waiter is then never registered,
        // which cost 5 % of the client's user time (docs/performance-engine.md, "User space per
        // statement"). A stopped run rings the doorbell, so the event waits in the runtime,
        // where this stop ends it.
        let outcome = {
            let event = std::pin::pin!(run_event(&shared, &mut ctx, &mut state, recorder_lane));
            stop.unless_stopped(event).await
        };
        if counted.is_some() {
            shared.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
        // The workload may have run events back to back (recorded), the last one its own start.
        let (start, recorded, turn_used) = lane.take();
        totals.events += recorded.events;
        totals.latency_sum_ns += recorded.latency_sum_ns;
        // The end of the event's last statement (the work after it takes nanoseconds).
        let end = if outcome.is_some() { ctx.clock.last() } else { Mono::now() };
        let timing = event_timing(intended, start, end, free_since);
        free_since = end;
        now = end;
        latencies = std::mem::take(&mut ctx.stmt_latencies_ns);
        record_handled(&shared, &mut ctx, recorder_lane);
        // The workload may end this connection's load (a script's loop returned): not an event.
        if outcome == Some(true) && !ctx.ended {
            record_event(&shared, recorder_lane, timing, ctx.tally, &latencies, &mut totals);
            if turn_used {
                // The workload ran events back to back: the engine thread's other connections' turn.
                tokio::task::yield_now().await;
            }
        } else {
            // Interrupted or fatal: the event is not counted, its queries are.
            shared.recorders.record_queries(recorder_lane, ctx.tally);
            break;
        }
    }
    if shared.fatal.lock().expect("fatal lock").is_none() && !shared.interrupted.load(Ordering::Relaxed) {
        let mut ctx = EventCtx::new(&mut conn, &mut rng, worker, &shared.stmt_kinds);
        finish(&shared, &mut ctx, &mut state, recorder_lane).await;
    }
    shared.running.fetch_sub(1, Ordering::Relaxed);
    (totals, conn)
}

/// The end of the run on this connection: what the workload still has to send.
async fn finish(shared: &Shared, ctx: &mut EventCtx<'_>, state: &mut WorkerState, recorder_lane: usize) {
    if let Err(e) = shared.workload.finish(ctx, state).await {
        fail(shared, format!("finishing the workload failed: {e}"));
    }
    record_handled(shared, ctx, recorder_lane);
    shared.recorders.record_queries(recorder_lane, ctx.tally);
}

/// Errors the workload handled itself (a script's restarted events) count as the run's errors.
fn record_handled(shared: &Shared, ctx: &mut EventCtx<'_>, recorder_lane: usize) {
    // Mostly none: an empty list's drain still cost 28 instructions per event.
    if ctx.handled_errors.is_empty() {
        return;
    }
    for (code, reconnect) in ctx.handled_errors.drain(..) {
        shared.recorders.record_error(recorder_lane, &code, reconnect);
    }
}

/// Runs one event to success (true), or to a fatal error or a server still down at the end (false).
async fn run_event(shared: &Shared, ctx: &mut EventCtx<'_>, state: &mut WorkerState, recorder_lane: usize) -> bool {
    loop {
        let Err(e) = shared.workload.event(ctx, state).await else { return true };
        match e.action {
            ErrorAction::Retry => {
                shared.recorders.record_error(recorder_lane, &e.code, false);
                // The transaction may be half done (a lock wait timeout rolls back one statement only).
                let _ = ctx.conn.query("ROLLBACK", Fetch::Discard).await;
                // In the event's latency, not in the next statement's.
                ctx.clock.restart();
            }
            ErrorAction::Reconnect => {
                shared.recorders.record_error(recorder_lane, &e.code, true);
                // Boxed as in the workload's reconnect: rare, and large.
                if !crate::boxed::boxed(|| reconnect(ctx.conn, &shared.stop, shared.deadline)).await {
                    // The server is still down when the run ends: give the event up (not counted).
                    return false;
                }
                ctx.clock.restart();
            }
            ErrorAction::Fatal => {
                fail(shared, shared.workload.fatal_message(&e));
                return false;
            }
        }
    }
}

/// Retries until the server is back (true), or the run stops or reaches its deadline (false).
async fn reconnect(conn: &mut Conn, stop: &Stop, deadline: Option<Instant>) -> bool {
    let mut backoff = Duration::from_millis(1);
    while !stop.is_stopped() && deadline.is_none_or(|d| Instant::now() < d) {
        if conn.reconnect().await.is_ok() {
            return true;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_millis(100));
    }
    false
}

pub fn fail(shared: &Shared, message: String) {
    let mut fatal = shared.fatal.lock().expect("fatal lock");
    if fatal.is_none() {
        *fatal = Some(message);
    }
    shared.stop.stop();
}
