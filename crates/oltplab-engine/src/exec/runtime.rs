//! The async runtime the engine runs on, sized for a client that leaves the server its CPU.
//!
//! A benchmark client spends most of its CPU in the kernel's TCP path and in context switches
//! (`docs/performance-engine.md`). Every runtime worker that runs out of ready connections parks
//! (a futex wait and a context switch) and is woken again for the next response; fewer workers
//! each find more connections ready per wake-up, so the same load costs fewer switches.
//! One worker per 4 cores carries our heaviest loads with room to spare (a worker handles
//! about 100,000 statements a second) and leaves the other cores to the server under test.

use std::num::NonZeroUsize;

/// `TOKIO_WORKER_THREADS` (tokio's own variable) overrides the size.
pub const WORKERS_ENV: &str = "TOKIO_WORKER_THREADS";

/// The number of runtime worker threads for a machine of `cores` cores.
pub fn workers_for(cores: usize) -> usize {
    cores.div_ceil(4).max(1)
}

/// A multi-threaded runtime of [`workers_for`] this machine's cores, or of
/// `TOKIO_WORKER_THREADS` when it is set.
pub fn build_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_name("oltplab-engine");
    if std::env::var_os(WORKERS_ENV).is_none() {
        let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        builder.worker_threads(workers_for(cores));
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_per_four_cores() {
        assert_eq!([1, 2, 4, 5, 24, 64].map(workers_for), [1, 1, 1, 2, 6, 16]);
    }
}
