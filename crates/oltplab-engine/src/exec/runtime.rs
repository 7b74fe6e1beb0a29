//! Where the engine runs: the engine threads that own the connections, and the small control
//! runtime of the caller's side.
//!
//! A benchmark client spends most of its CPU in the kernel's TCP path and in context switches
//! (`docs/performance-engine.md`). Every engine thread that runs out of ready connections parks
//! (an `epoll_wait` and a context switch) and is woken again for the next response; fewer threads
//! each find more connections ready per wake-up, so the same load costs fewer switches. One
//! engine thread per 4 cores carries our heaviest loads with room to spare (a thread handles
//! about 100,000 statements a second) and leaves the other cores to the server under test.
//!
//! The control runtime runs what is not a connection: the binding's wait for the engine's result
//! (progress and Ctrl-C on the caller's thread), a run's reporter (interval drains, its clock)
//! and the hand-over to the engine threads. One worker is plenty.

use std::num::NonZeroUsize;

/// `TOKIO_WORKER_THREADS` (tokio's own variable, as the engine threads are tokio runtimes)
/// overrides the number of engine threads.
pub const WORKERS_ENV: &str = "TOKIO_WORKER_THREADS";

/// The number of engine threads for a machine of `cores` cores.
pub fn workers_for(cores: usize) -> usize {
    cores.div_ceil(4).max(1)
}

/// [`workers_for`] this machine's cores, or `TOKIO_WORKER_THREADS` when it is set (a whole number above 0).
pub fn engine_threads() -> usize {
    let given = std::env::var(WORKERS_ENV).ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&n| n > 0);
    given.unwrap_or_else(|| workers_for(std::thread::available_parallelism().map_or(1, NonZeroUsize::get)))
}

/// The control runtime: one worker thread (not the caller's), whatever `TOKIO_WORKER_THREADS` says.
pub fn build_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().thread_name("oltplab-control").build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_per_four_cores() {
        assert_eq!([1, 2, 4, 5, 24, 64].map(workers_for), [1, 1, 1, 2, 6, 16]);
    }
}
