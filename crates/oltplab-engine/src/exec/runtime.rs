//! Where the engine runs: the engine threads that own the connections, and the small control
//! runtime of the caller's side.
//!
//! A benchmark client spends most of its CPU in the kernel's TCP path, in waking the server's
//! threads and in context switches (`docs/performance-engine.md`). How many engine threads share
//! the connections decides how those wake-ups are paid:
//!
//! - **A few connections: one engine thread each**, as sysbench runs them. A thread sends its
//!   statement and parks on its one socket, which is what the kernel's wake-up of the server's
//!   thread expects (a TCP wake-up is a "sync" one: the waker is about to sleep, so the woken
//!   thread may take its CPU). A thread that owns several connections keeps running after
//!   each send, and every send's wake-up of the server's thread costs more (most likely a
//!   cross-CPU interrupt, which a virtual machine pays dearly): at 8 connections on 2 cores,
//!   one thread for all 8 spent 28 % of its CPU in those wake-ups against 10 % for sysbench
//!   and for one thread per connection (`docs/performance-engine.md`, "Profile at 8
//!   connections").
//! - **Many connections: one engine thread per 4 cores.** Each thread finds many connections
//!   ready per wake-up, so the same load costs far fewer switches than a thread per connection
//!   (sysbench's 4,096 threads cost it 3x oltplab's CPU per transaction), and a thread
//!   handles about 100,000 statements a second, leaving the other cores to the server.
//!
//! The control runtime runs what is not a connection: the binding's wait for the engine's result
//! (progress and Ctrl-C on the caller's thread), a run's reporter (interval drains, its clock)
//! and the hand-over to the engine threads. One worker is plenty.

use std::num::NonZeroUsize;

/// `TOKIO_WORKER_THREADS` (tokio's own variable, as the engine threads are tokio runtimes)
/// overrides the number of engine threads.
pub const WORKERS_ENV: &str = "TOKIO_WORKER_THREADS";

/// Up to this many connections, each has an engine thread of its own.
pub const THREAD_PER_CONNECTION_UP_TO: usize = 64;

/// The number of engine threads for `connections` on a machine of `cores` cores: one per
/// connection up to [`THREAD_PER_CONNECTION_UP_TO`], else one per 4 cores (never more than
/// connections).
pub fn workers_for(cores: usize, connections: usize) -> usize {
    let threads = if connections <= THREAD_PER_CONNECTION_UP_TO { connections } else { per_cores(cores) };
    threads.min(connections).max(1)
}

/// The engine threads for a run of `connections`: [`workers_for`] this machine, or
/// `TOKIO_WORKER_THREADS` when it is set (a whole number above 0; never more than connections).
pub fn engine_threads(connections: usize) -> usize {
    overridden(connections).unwrap_or_else(|| workers_for(cores(), connections))
}

/// The recorder shards for `threads` engine threads: one per thread, but at most one per 4
/// cores (threads beyond share them, dealt round-robin). A shard's histograms become resident
/// in full at their first reset (264 KiB each: a reset writes every bucket), so a shard per
/// connection cost a 64-connection `oltp_read_write` run 263 MB of RSS instead of 44. The threads
/// that share a shard do not meet on its lock per event: each records into a lane of its own,
/// folded into the shard every few hundred latencies (stats/recorder.rs).
pub fn recorder_shards(threads: usize) -> usize {
    threads.min(per_cores(cores())).max(1)
}

fn per_cores(cores: usize) -> usize {
    cores.div_ceil(4)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

fn overridden(connections: usize) -> Option<usize> {
    let given = std::env::var(WORKERS_ENV).ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&n| n > 0);
    given.map(|n| n.min(connections).max(1))
}

/// The control runtime: one worker thread (not the caller's), whatever `TOKIO_WORKER_THREADS` says.
pub fn build_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().thread_name("oltplab-control").build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_per_connection_then_per_four_cores() {
        assert_eq!([0, 1, 8, 64].map(|c| workers_for(2, c)), [1, 1, 8, 64]);
        assert_eq!([1, 2, 4, 5, 24, 64].map(|cores| workers_for(cores, 4096)), [1, 1, 1, 2, 6, 16]);
        assert_eq!(workers_for(64, 65), 16);
    }
}
