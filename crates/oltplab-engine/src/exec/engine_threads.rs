//! The engine threads: a few OS threads, each running a current-thread tokio runtime with a
//! `LocalSet`. Work goes to a thread as a closure that builds its future there, so the future
//! and all it owns (connections, the workload's state) stay on that
//! thread: no statement's wake-up crosses threads, and nothing needs to be `Send`.
//! Dropping [`EngineThreads`] aborts what still runs on them and joins them.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;

use futures_util::FutureExt as _;
use tokio::sync::{mpsc, oneshot};
use tokio::task::{JoinSet, LocalSet};

use crate::error::{EngineError, Result};

type Job = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// Hands work to the engine threads. Cloned into a job that spreads work over the threads, it
/// keeps them serving until that job ends.
#[derive(Clone)]
pub struct Spawner {
    threads: Vec<mpsc::UnboundedSender<Job>>,
}

/// The threads, owned by whoever started them.
pub struct EngineThreads {
    spawner: Spawner,
    joins: Vec<std::thread::JoinHandle<()>>,
}

/// The result of work given to an engine thread, awaitable from any thread.
pub struct Handle<T> {
    rx: oneshot::Receiver<Result<T>>,
    what: &'static str,
}

impl EngineThreads {
    /// Starts `count` threads (at least one).
    pub fn start(count: usize) -> Result<Self> {
        let cannot = |e: std::io::Error| EngineError::Internal(format!("cannot start an engine thread: {e}"));
        let mut threads = Vec::new();
        let mut joins = Vec::new();
        for i in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(cannot)?;
            let (tx, rx) = mpsc::unbounded_channel();
            let join =
                std::thread::Builder::new().name(format!("oltplab-engine-{i}")).spawn(move || serve(&runtime, rx));
            joins.push(join.map_err(cannot)?);
            threads.push(tx);
        }
        Ok(Self { spawner: Spawner { threads }, joins })
    }

    pub fn spawner(&self) -> &Spawner {
        &self.spawner
    }

    pub fn len(&self) -> usize {
        self.spawner.len()
    }
}

impl Drop for EngineThreads {
    fn drop(&mut self) {
        // Without senders each thread aborts what still runs on it and ends.
        self.spawner.threads.clear();
        for join in self.joins.drain(..) {
            let _ = join.join();
        }
    }
}

impl Spawner {
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// Runs the future `make` builds on thread `thread` (modulo the count). `what` names the
    /// work in the error a panic inside it becomes.
    pub fn spawn<T, F, Fut>(&self, thread: usize, what: &'static str, make: F) -> Handle<T>
    where
        T: Send + 'static,
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = T> + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move || {
            Box::pin(async move {
                let out = AssertUnwindSafe(async move { make().await }).catch_unwind().await;
                let _ = tx.send(out.map_err(|_| crate::panics::caught(what)));
            })
        });
        // A thread that is gone drops the job: the handle then says the work was cancelled.
        let _ = self.threads[thread % self.threads.len()].send(job);
        Handle { rx, what }
    }
}

impl<T> Handle<T> {
    /// The work's output; an error when it panicked or was abandoned (its threads dropped).
    pub async fn join(self) -> Result<T> {
        self.rx.await.unwrap_or_else(|_| Err(EngineError::Internal(format!("{} was cancelled", self.what))))
    }
}

/// One thread's loop: each job becomes a local task; when the owner is gone, the tasks still
/// running are aborted here, inside the runtime, so that their connections drop in its context.
fn serve(runtime: &tokio::runtime::Runtime, mut jobs: mpsc::UnboundedReceiver<Job>) {
    LocalSet::new().block_on(runtime, async move {
        let mut running = JoinSet::new();
        loop {
            tokio::select! {
                job = jobs.recv() => match job {
                    Some(job) => drop(running.spawn_local(job())),
                    None => break,
                },
                Some(_) = running.join_next(), if !running.is_empty() => {}
            }
        }
        running.shutdown().await;
    });
}

/// Runs one piece of work on an engine thread of its own (prepare's probe, cleanup, check).
pub async fn on_a_thread<T, F, Fut>(what: &'static str, make: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<T>> + 'static,
{
    let threads = EngineThreads::start(1)?;
    let out = threads.spawner().spawn(0, what, make).join().await;
    drop(threads);
    out?
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;

    #[tokio::test]
    async fn work_stays_on_its_thread_and_needs_no_send() {
        let threads = EngineThreads::start(2).unwrap();
        let names = |thread| {
            threads.spawner().spawn(thread, "a test job", || async {
                // An Rc held across an await: this future is not Send.
                let here = Rc::new(std::thread::current().name().map(str::to_string));
                tokio::task::yield_now().await;
                let there = std::thread::current().name().map(str::to_string);
                (Rc::try_unwrap(here).unwrap(), there)
            })
        };
        let (a, b) = (names(0).join().await.unwrap(), names(3).join().await.unwrap());
        assert_eq!(a, (Some("oltplab-engine-0".into()), Some("oltplab-engine-0".into())));
        assert_eq!(b.0.as_deref(), Some("oltplab-engine-1"));
        assert_eq!(b.0, b.1);
    }

    #[tokio::test]
    async fn a_panic_is_an_error_and_dropping_the_threads_abandons_their_work() {
        let _one = crate::panics::ONE_PANIC_AT_A_TIME.lock().await;
        crate::panics::install_quiet_hook();
        let threads = EngineThreads::start(1).unwrap();
        let panicked: Handle<()> = threads.spawner().spawn(0, "a panicking job", || async { panic!("hunter2") });
        let msg = panicked.join().await.unwrap_err().to_string();
        assert!(msg.contains("a panicking job panicked") && !msg.contains("hunter2"), "{msg}");
        let forever = threads.spawner().spawn(0, "endless work", std::future::pending::<()>);
        drop(threads);
        let msg = forever.join().await.unwrap_err().to_string();
        assert!(msg.contains("endless work was cancelled"), "{msg}");
    }
}
