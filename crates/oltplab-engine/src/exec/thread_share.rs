//! One engine thread's share of a run: the connections dealt to it (round-robin, so that a step
//! plan's active connections stay spread over the threads), opened on the thread, run there with
//! the workload's state for the thread, and closed there once the run's clock has stopped.
//! The run (exec/run.rs) steers the shares through the steps below, all of them `Send` handles.

use std::rc::Rc;
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::task::JoinSet;

use super::connect::{close_all, open_share};
use super::engine_threads::{Handle, Spawner};
use super::shared::Shared;
use super::stop::{LocalStop, Stop};
use super::worker::{fail, run_worker, Worker};
use crate::driver::reply_wait::{Doorbell, SoleConnection};
use crate::driver::{Conn, Target};
use crate::error::Result;
use crate::rand::Rng;
use crate::stats::WorkerTotals;
use crate::workload::{WorkerInfo, Workload};

/// What a thread's share is given when the run starts it.
pub struct Share {
    /// The engine thread (its connections record into its lane, `Recorders::lane_of`).
    pub thread: usize,
    /// The run's engine threads.
    pub threads: usize,
    /// This thread's connections, by their index among the run's (0-based).
    pub connections: Vec<usize>,
    pub workload: Arc<Workload>,
    pub target: Target,
    pub sqls: Arc<[String]>,
    pub steps: Steps,
}

/// The hand-overs between a share and the run.
pub struct Steps {
    /// The share's connections are open (or could not be).
    pub connected: oneshot::Sender<Result<()>>,
    /// The load starts: what the workers share, and how to number them. Dropped: no run.
    pub go: oneshot::Receiver<Go>,
    /// Every worker of the share ended (or was abandoned).
    pub finished: oneshot::Sender<Finished>,
    /// Drop the workers still running (the run's end grace is over).
    pub abandon: Stop,
    /// The clock stopped: say goodbye.
    pub close: Stop,
    /// Rung when the run stops or abandons: a sole connection's wait for its reply ends.
    pub doorbell: Option<Doorbell>,
}

pub struct Go {
    pub shared: Arc<Shared>,
    /// Numbers the workers among every client's: `first` plus the connection's index.
    pub first: usize,
    /// sysbench's thread count, as the workload sees it.
    pub count: usize,
    pub rand_seed: u64,
}

#[derive(Debug, Default)]
pub struct Finished {
    /// One per worker that ended, for sysbench's "Threads fairness".
    pub totals: Vec<WorkerTotals>,
    /// Workers dropped while they still waited for the server.
    pub abandoned: usize,
}

/// Runs the share from its first connection to its last goodbye.
pub async fn run_share(share: Share) {
    let Share { thread, threads, connections, workload, target, sqls, steps } = share;
    let prepared = match workload.thread_state(thread, &connections).await {
        Ok(state) if workload.opens_own_connections() => {
            Ok((Rc::new(state), connections.iter().map(|_| Conn::placeholder()).collect()))
        }
        Ok(state) => open_share(&target, connections.len(), &sqls, threads).await.map(|conns| (Rc::new(state), conns)),
        Err(e) => Err(e),
    };
    let (state, conns) = match prepared {
        Ok(ready) => ready,
        Err(e) => {
            let _ = steps.connected.send(Err(e));
            return;
        }
    };
    let _ = steps.connected.send(Ok(()));
    let Ok(go) = steps.go.await else {
        close_all(conns).await;
        return;
    };
    // The thread's connections see the run's stop through this thread's own view of it.
    let local_stop = LocalStop::default();
    // A thread with one connection waits for its replies itself (`driver/reply_wait.rs`).
    let sole = steps.doorbell.as_ref().filter(|_| connections.len() == 1).map(SoleConnection::claim);
    let mut workers = JoinSet::new();
    for (local, conn) in connections.iter().zip(conns) {
        let id = go.first + local;
        let worker = Worker {
            conn,
            rng: Rng::for_stream(go.rand_seed, id as u64 + 1),
            info: WorkerInfo { id, count: go.count },
            recorder_lane: go.shared.recorders.lane_of(thread),
            thread: Rc::clone(&state),
            stop: local_stop.clone(),
        };
        workers.spawn_local(run_worker(Arc::clone(&go.shared), worker));
    }
    let mut finished = Finished::default();
    let mut ended = Vec::with_capacity(connections.len());
    let mut abandon = steps.abandon.clone();
    let mut run_stop = go.shared.stop.clone();
    loop {
        tokio::select! {
            () = run_stop.stopped(), if !local_stop.is_stopped() => local_stop.stop(),
            joined = workers.join_next() => match joined {
                Some(Ok((totals, conn))) => {
                    finished.totals.push(totals);
                    ended.push(conn);
                }
                Some(Err(e)) => fail(&go.shared, crate::panics::joined("a worker", &e).to_string()),
                None => break,
            },
            () = abandon.stopped() => {
                // Their connections get no goodbye: the server is not answering them.
                finished.abandoned = workers.len();
                workers.shutdown().await;
                break;
            }
        }
    }
    drop(sole);
    let _ = steps.finished.send(finished);
    let mut close = steps.close;
    close.stopped().await;
    close_all(ended).await;
}

/// The run's side of all its shares.
pub struct Shares {
    handles: Vec<Handle<()>>,
    connected: Vec<oneshot::Receiver<Result<()>>>,
    go: Vec<oneshot::Sender<Go>>,
    finished: Vec<oneshot::Receiver<Finished>>,
    abandon: Stop,
    close: Stop,
    /// End the waits for a reply of threads that own one connection (`driver/reply_wait.rs`):
    /// one per thread, as every wait adds itself to its doorbell's wait queue, which threads
    /// sharing one would all lock; a thread without one (no eventfd to be had) waits in the
    /// runtime for every reply.
    doorbells: Vec<Doorbell>,
}

impl Shares {
    /// Deals `connections` round-robin over the engine threads and starts each thread's share.
    pub fn start(
        engine: &Spawner,
        connections: usize,
        workload: &Arc<Workload>,
        target: &Target,
        sqls: &Arc<[String]>,
    ) -> Self {
        let threads = engine.len().min(connections).max(1);
        let (abandon, close) = (Stop::new(), Stop::new());
        let mut shares = Self {
            handles: Vec::new(),
            connected: Vec::new(),
            go: Vec::new(),
            finished: Vec::new(),
            abandon: abandon.clone(),
            close: close.clone(),
            doorbells: Vec::new(),
        };
        for thread in 0..threads {
            let doorbell = Doorbell::new().ok();
            shares.doorbells.extend(doorbell.clone());
            let (connected, connected_rx) = oneshot::channel();
            let (go_tx, go) = oneshot::channel();
            let (finished, finished_rx) = oneshot::channel();
            let steps = Steps { connected, go, finished, abandon: abandon.clone(), close: close.clone(), doorbell };
            let share = Share {
                thread,
                threads,
                connections: dealt(connections, threads, thread),
                workload: Arc::clone(workload),
                target: target.clone(),
                sqls: Arc::clone(sqls),
                steps,
            };
            shares.handles.push(engine.spawn(thread, SHARE, move || run_share(share)));
            shares.connected.push(connected_rx);
            shares.go.push(go_tx);
            shares.finished.push(finished_rx);
        }
        shares
    }

    /// Waits until every share's connections are open; the first error otherwise.
    pub async fn connected(&mut self) -> Result<()> {
        for rx in self.connected.drain(..) {
            // No word from a share: it panicked.
            rx.await.unwrap_or_else(|_| Err(crate::panics::caught(SHARE)))?;
        }
        Ok(())
    }

    /// Starts the load on every thread.
    pub fn go(&mut self, shared: &Arc<Shared>, first: usize, count: usize, rand_seed: u64) {
        for tx in self.go.drain(..) {
            let _ = tx.send(Go { shared: Arc::clone(shared), first, count, rand_seed });
        }
    }

    /// Resolves once every share's workers ended (or were abandoned): all their totals.
    pub fn finished(&mut self) -> impl std::future::Future<Output = Finished> + Send + 'static {
        let receivers = std::mem::take(&mut self.finished);
        async move {
            let mut all = Finished::default();
            // A share that ended without a word panicked; its handle reports it at close.
            for f in futures_util::future::join_all(receivers).await.into_iter().flatten() {
                all.totals.extend(f.totals);
                all.abandoned += f.abandoned;
            }
            all
        }
    }

    /// Drops the workers still waiting for the server.
    pub fn abandon(&self) {
        self.wake();
        self.abandon.stop();
    }

    /// Hands every thread back to its runtime (the run stops): a worker waiting for its reply
    /// itself waits in the runtime instead, where the stop reaches it.
    pub fn wake(&self) {
        for doorbell in &self.doorbells {
            doorbell.ring();
        }
    }

    /// Says goodbye on every thread, and waits for it; a share's panic is an error.
    pub async fn close(mut self) -> Result<()> {
        self.close.stop();
        let mut first_error = Ok(());
        for handle in std::mem::take(&mut self.handles) {
            if let (Err(e), Ok(())) = (handle.join().await, &first_error) {
                first_error = Err(e);
            }
        }
        first_error
    }
}

impl Drop for Shares {
    /// A run that ends early (an error, its future dropped) leaves no thread waiting outside the
    /// runtime.
    fn drop(&mut self) {
        self.wake();
    }
}

const SHARE: &str = "an engine thread's connections";

/// The connections (by index) thread `thread` of `threads` owns: dealt round-robin, so that the
/// first N of them, a step plan's active ones, are spread evenly over the threads.
fn dealt(connections: usize, threads: usize, thread: usize) -> Vec<usize> {
    (thread..connections).step_by(threads).collect()
}

#[cfg(test)]
mod tests {
    use super::dealt;

    #[test]
    fn connections_are_dealt_round_robin() {
        assert_eq!((0..2).map(|t| dealt(5, 2, t)).collect::<Vec<_>>(), [vec![0, 2, 4], vec![1, 3]]);
        assert_eq!(dealt(3, 1, 0), [0, 1, 2]);
    }
}
