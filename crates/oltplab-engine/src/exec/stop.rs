//! A stop signal shared by the caller (Ctrl-C), the workers (a fatal error) and
//! the run itself, and each engine thread's own view of it.

use std::cell::Cell;
use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Poll, Waker};

use tokio::sync::{watch, Notify};

#[derive(Clone)]
pub struct Stop {
    tx: Arc<watch::Sender<bool>>,
    rx: watch::Receiver<bool>,
    /// The same fact for a check at every event: a plain load of a line that is only ever
    /// written once, where the channel's value sits behind a lock all the threads would write.
    stopped: Arc<AtomicBool>,
}

impl Default for Stop {
    fn default() -> Self {
        Self::new()
    }
}

impl Stop {
    pub fn new() -> Self {
        let (tx, rx) = watch::channel(false);
        Self { tx: Arc::new(tx), rx, stopped: Arc::default() }
    }

    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        self.tx.send_replace(true);
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Resolves once `stop` has been called (at once if it already was).
    pub async fn stopped(&mut self) {
        let _ = self.rx.wait_for(|s| *s).await;
    }
}

/// One engine thread's view of a [`Stop`], for its connections to check at every event: a plain
/// flag and a waiter list that no other thread touches. Waiting on the shared [`Stop`] at every
/// event registered and dropped a waiter in a channel all the engine threads share, and read its
/// lock (about 2 % of the client's CPU at 8 connections: docs/performance-engine.md). The
/// thread's share (`exec/thread_share.rs`) waits on the shared stop once and passes it on here.
#[derive(Clone, Default)]
pub struct LocalStop(Rc<LocalState>);

#[derive(Default)]
struct LocalState {
    stopped: Cell<bool>,
    notify: Notify,
}

impl LocalStop {
    pub fn stop(&self) {
        self.0.stopped.set(true);
        self.0.notify.notify_waiters();
    }

    pub fn is_stopped(&self) -> bool {
        self.0.stopped.get()
    }

    /// Resolves once `stop` has been called (at once if it already was).
    pub async fn stopped(&self) {
        // Created before the check: a `notify_waiters` after it still reaches this waiter.
        let notified = self.0.notify.notified();
        if !self.is_stopped() {
            notified.await;
        }
    }

    /// Runs `fut` to its end (`Some`) unless the stop comes first (`None`); `fut` is polled first,
    /// as a `biased` select would. The stop's waiter is registered when `fut` first waits and not
    /// polled again at every wake-up of `fut`, only when the task's waker changed: a select on
    /// [`LocalStop::stopped`] took the waiter list's lock at every statement's wake-up, about 5 %
    /// of the client's user time at 4,096 connections (docs/performance-engine.md, "Profile at
    /// 4,096 connections").
    /// `fut` is pinned by the caller: moved in here, it took a second place in the task's
    /// state (about 2 KiB per connection: 8 MB of peak RSS at 4,096 connections).
    /// The waiter itself is made only when `fut` first waits (a thread's sole connection's
    /// event mostly does not): the stop is this thread's, so it cannot come between the check of
    /// the flag and the waiter's creation, which sees every `notify_waiters` after it.
    pub async fn unless_stopped<F: Future>(&self, mut fut: Pin<&mut F>) -> Option<F::Output> {
        let mut notified = pin!(None);
        let mut registered: Option<Waker> = None;
        poll_fn(|cx| {
            if let Poll::Ready(out) = fut.as_mut().poll(cx) {
                return Poll::Ready(Some(out));
            }
            if self.is_stopped() {
                return Poll::Ready(None);
            }
            if !registered.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                if notified.is_none() {
                    notified.set(Some(self.0.notify.notified()));
                }
                let waiter = notified.as_mut().as_pin_mut().expect("the waiter was just made");
                if waiter.poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                registered = Some(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_local_stop_wakes_its_waiters_and_stays_set() {
        let local = LocalStop::default();
        let waiting = local.clone();
        let set = tokio::task::LocalSet::new();
        let waiter = set.spawn_local(async move { waiting.stopped().await });
        set.run_until(async {
            tokio::task::yield_now().await;
            assert!(!waiter.is_finished() && !local.is_stopped());
            local.stop();
            waiter.await.unwrap();
        })
        .await;
        assert!(local.is_stopped());
        local.stopped().await;
    }

    #[tokio::test]
    async fn work_unless_stopped_ends_with_its_output_or_at_the_stop() {
        let local = LocalStop::default();
        assert_eq!(local.unless_stopped(pin!(async { 7 })).await, Some(7));
        let waiting = local.clone();
        let set = tokio::task::LocalSet::new();
        // Work that waits (on a channel nobody sends to) until the stop ends it.
        let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
        let waiter = set.spawn_local(async move { waiting.unless_stopped(pin!(rx)).await });
        set.run_until(async {
            for _ in 0..3 {
                tokio::task::yield_now().await;
            }
            assert!(!waiter.is_finished());
            local.stop();
            assert!(waiter.await.unwrap().is_none());
        })
        .await;
        // Already stopped: finished work still gives its output, waiting work ends at once.
        assert_eq!(local.unless_stopped(pin!(async { 8 })).await, Some(8));
        assert!(local.unless_stopped(pin!(std::future::pending::<()>())).await.is_none());
    }
}
