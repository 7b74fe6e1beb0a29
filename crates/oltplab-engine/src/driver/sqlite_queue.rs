//! A FIFO queue for SQLite's single write lock. SQLite makes a blocked writer
//! sleep and poll, so under contention some writers win again and again while
//! one waits seconds; a server queues lock waiters instead. All connections to
//! one file live in this process, so they take turns here, in arrival order,
//! and the latencies measured are those of a fair queue, not of polling luck.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// A ticket lock: writers are served in the order they asked.
#[derive(Default)]
pub struct WriteQueue {
    /// (next ticket to hand out, ticket being served)
    tickets: Mutex<(u64, u64)>,
    turn: Condvar,
}

impl WriteQueue {
    /// Blocks the calling (connection) thread until it is this writer's turn.
    pub fn acquire(&self) {
        let mut t = self.tickets.lock().expect("write queue lock");
        let mine = t.0;
        t.0 += 1;
        while t.1 != mine {
            t = self.turn.wait(t).expect("write queue lock");
        }
    }

    pub fn release(&self) {
        let mut t = self.tickets.lock().expect("write queue lock");
        t.1 += 1;
        self.turn.notify_all();
    }
}

/// The queue shared by every connection of this process to `path`.
pub fn queue_for(path: &Path) -> Arc<WriteQueue> {
    static QUEUES: OnceLock<Mutex<HashMap<PathBuf, Arc<WriteQueue>>>> = OnceLock::new();
    let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut queues = QUEUES.get_or_init(Mutex::default).lock().expect("queue registry lock");
    queues.entry(key).or_default().clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn writers_are_served_one_at_a_time_in_ticket_order() {
        let q = Arc::new(WriteQueue::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let order = Arc::new(Mutex::new(Vec::new()));
        q.acquire(); // hold the lock while the others queue up
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let (q, inside, order) = (q.clone(), inside.clone(), order.clone());
                std::thread::sleep(std::time::Duration::from_millis(20)); // queue in order 0..4
                std::thread::spawn(move || {
                    q.acquire();
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two writers inside");
                    order.lock().unwrap().push(i);
                    inside.fetch_sub(1, Ordering::SeqCst);
                    q.release();
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(50));
        q.release();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn one_queue_per_file() {
        let a = queue_for(Path::new("/tmp/oltplab-queue-a.db"));
        let b = queue_for(Path::new("/tmp/oltplab-queue-b.db"));
        assert!(Arc::ptr_eq(&a, &queue_for(Path::new("/tmp/oltplab-queue-a.db"))));
        assert!(!Arc::ptr_eq(&a, &b));
    }
}
