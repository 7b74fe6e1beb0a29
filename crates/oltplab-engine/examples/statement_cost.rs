//! What one statement costs the client, driver included, on one connection to a real server:
//! heap allocations (a counting global allocator), and user and system CPU (getrusage) per
//! statement, for sysbench's point select and 100-row range select, prepared or as text.
//!
//!     cargo run --release -p oltplab-engine --example statement_cost -- URL [STATEMENTS]
//!
//! URL is a `mysql://` or `postgresql://` URL of a database prepared with `oltplab prepare
//! oltp_point_select --tables 1 --table-size 10000` (sbtest1). Run it under `strace -c -f` for
//! the system calls per statement, or `valgrind --tool=callgrind` for instructions. One
//! connection, one statement at a time, the rows dropped undecoded (`Fetch::Discard`), as the
//! OLTP workloads run them, on a thread that owns its connection as an engine thread with up to
//! 64 connections does (its replies waited for outside the runtime: `driver/reply_wait.rs`);
//! `SHARED=1` measures a connection that shares its thread (the runtime's readiness).
//! `ONLY_POINT=1` runs the prepared point select alone (callgrind's counts are then its own).

#![allow(clippy::print_stdout)] // a benchmark's report is its output
#![allow(unsafe_code)] // a counting global allocator and getrusage: a measuring tool, not the engine

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use oltplab_engine::db::{Fetch, StmtId, Value};
use oltplab_engine::driver::reply_wait::{Doorbell, SoleConnection};
use oltplab_engine::driver::{Conn, Target, TargetOptions};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static ALLOCATED_BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// User and system CPU of this process so far, in microseconds.
fn cpu_us() -> (f64, f64) {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let usage = unsafe {
        let mut u = std::mem::zeroed::<libc_rusage::Rusage>();
        libc_rusage::getrusage(0, &raw mut u);
        u
    };
    let us = |t: libc_rusage::Timeval| t.sec as f64 * 1e6 + t.usec as f64;
    (us(usage.utime), us(usage.stime))
}

/// The one libc call this needs, declared here rather than adding a crate for it.
mod libc_rusage {
    #[repr(C)]
    #[derive(Clone, Copy)]
    pub struct Timeval {
        pub sec: i64,
        pub usec: i64,
    }

    #[repr(C)]
    pub struct Rusage {
        pub utime: Timeval,
        pub stime: Timeval,
        pub rest: [i64; 14],
    }

    extern "C" {
        pub fn getrusage(who: i32, usage: *mut Rusage) -> i32;
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(url) = args.next() else {
        eprintln!("usage: statement_cost URL [STATEMENTS]");
        std::process::exit(2);
    };
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let doorbell = Doorbell::new().expect("an eventfd");
    let _sole = std::env::var_os("SHARED").is_none().then(|| SoleConnection::claim(&doorbell));
    let only_point = std::env::var_os("ONLY_POINT").is_some();
    rt.block_on(async {
        println!("{:<28} {:>10} {:>12} {:>10} {:>10}", "statement", "allocs", "alloc bytes", "user µs", "sys µs");
        for ps_mode in ["auto", "disable"] {
            let opts = TargetOptions { db_ps_mode: ps_mode.into(), ..TargetOptions::default() };
            let target = Target::parse(&url, &opts).expect("a database URL");
            let mut conn = Conn::open(&target).await.expect("a connection");
            let sqls = [
                "SELECT c FROM sbtest1 WHERE id=?".to_string(),
                "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?".to_string(),
            ];
            conn.prepare(&sqls).await.expect("prepared statements");
            for (name, id, range) in [("point select", 0, 0), ("range select (100 rows)", 1, 99)] {
                if only_point && (range != 0 || ps_mode != "auto") {
                    continue;
                }
                let mut key = 0i64;
                let params = |k: &mut i64| {
                    *k = *k % 9_000 + 1;
                    if range == 0 {
                        vec![Value::Int(*k)]
                    } else {
                        vec![Value::Int(*k), Value::Int(*k + range)]
                    }
                };
                for _ in 0..1_000 {
                    let p = params(&mut key);
                    conn.execute(StmtId(id), &p, Fetch::Discard).await.expect("a warm-up statement");
                }
                let all: Vec<Vec<Value>> = (0..n).map(|_| params(&mut key)).collect();
                let (a0, b0) = (ALLOCATIONS.load(Ordering::Relaxed), ALLOCATED_BYTES.load(Ordering::Relaxed));
                let (u0, s0) = cpu_us();
                for p in &all {
                    conn.execute(StmtId(id), p, Fetch::Discard).await.expect("a statement");
                }
                let (u1, s1) = cpu_us();
                let (a1, b1) = (ALLOCATIONS.load(Ordering::Relaxed), ALLOCATED_BYTES.load(Ordering::Relaxed));
                let per = |x: f64| x / n as f64;
                println!(
                    "{:<28} {:>10.2} {:>12.1} {:>10.2} {:>10.2}",
                    format!("{name}, {ps_mode}"),
                    per((a1 - a0) as f64),
                    per((b1 - b0) as f64),
                    per(u1 - u0),
                    per(s1 - s0)
                );
            }
            conn.close().await;
        }
    });
}
