//! What recording one transaction costs the client: the clock reads, the histogram records and
//! the counters of the engine's hot path, without any database.
//!
//!     cargo run --release -p oltplab-engine --example record_bench
//!
//! Per transaction it does what `exec/worker.rs` and `workload/ctx.rs` do around a transaction of
//! `n` statements: the event's clock ([`EventClock`]: one read when the event starts, one when
//! each statement ends) and `Recorders::record_event` (transaction and service histograms, one
//! histogram per statement, the counters, under the shard's uncontended lock), into a buffer
//! reused from one event to the next. Prints nanoseconds per transaction for `oltp_point_select`
//! (1 statement) and `oltp_read_only` (16 statements), the best of a few rounds: the machine is
//! shared, and the best round is the one least disturbed.

#![allow(clippy::print_stdout)] // a benchmark's report is its output

use std::hint::black_box;
use std::time::Instant;

use oltplab_engine::stats::Tally;
use oltplab_engine::stats::{EventClock, EventTiming, Recorders};

const ROUNDS: usize = 40;
const TXNS: u64 = 200_000;

fn one_round(statements: usize, kinds: usize) -> f64 {
    let recorders = Recorders::new(1, kinds, true);
    let mut latencies: Vec<(usize, u64)> = Vec::with_capacity(32);
    let tally = Tally { reads: statements as u64, writes: 0, others: 0 };
    let t0 = Instant::now();
    for _ in 0..TXNS {
        latencies.clear();
        let mut clock = EventClock::start();
        for s in 0..statements {
            // The statement would run here.
            latencies.push((s % kinds, clock.lap_ns()));
        }
        let ns = clock.elapsed_ns();
        let timing = EventTiming { response_ns: ns, service_ns: ns, lag_ns: 0, client_lag_ns: 0 };
        black_box(recorders.record_event(0, timing, black_box(tally), &latencies));
    }
    let per_txn = t0.elapsed().as_nanos() as f64 / TXNS as f64;
    black_box(recorders.drain(false));
    per_txn
}

fn main() {
    for (name, statements, kinds) in [("oltp_point_select", 1, 1), ("oltp_read_only", 16, 7)] {
        let mut best = f64::MAX;
        for _ in 0..ROUNDS {
            best = best.min(one_round(statements, kinds));
        }
        println!(
            "{name:<18} {statements:>2} statements: {best:6.1} ns per transaction recorded (best of {ROUNDS} x {TXNS})"
        );
    }
}
