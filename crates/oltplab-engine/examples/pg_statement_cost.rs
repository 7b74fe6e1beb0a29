//! What one statement costs the client on its PostgreSQL path: heap allocations per statement
//! (a counting global allocator) and, run under callgrind, user-space instructions per statement.
//! One connection, sysbench's statement shapes, on a temporary table of its own:
//!
//!     PG_URL=postgresql://user:pw@127.0.0.1:5432/db cargo run --release -p oltplab-engine --example pg_statement_cost
//!     valgrind --tool=callgrind target/release/examples/pg_statement_cost   # instructions: divide by the count
//!
//! `KIND=0` (1, 2) runs that statement alone.
//!
//! Prints, per statement kind, the allocations and bytes allocated per execution (rows
//! dropped, as the sysbench workloads do, and rows kept, as TPC-C and scripts do).

#![allow(clippy::print_stdout)] // a benchmark's report is its output
#![allow(unsafe_code)] // a global allocator is an unsafe trait; it only counts and forwards

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use oltplab_engine::db::{Fetch, StmtId, Value};
use oltplab_engine::driver::{Conn, Target, TargetOptions};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const STATEMENTS: [(&str, &str); 3] = [
    ("point select", "SELECT c FROM cost_t WHERE id=?"),
    ("range (100 rows)", "SELECT c FROM cost_t WHERE id BETWEEN ? AND ?"),
    ("update by key", "UPDATE cost_t SET k=k+1 WHERE id=?"),
];

/// Sets the statement's parameters in place (no allocation of the benchmark's own).
fn set_params(kind: usize, i: i64, params: &mut [Value; 2]) -> &[Value] {
    let id = 1 + i % 900;
    params[0] = Value::Int(id);
    params[1] = Value::Int(id + 99);
    &params[..if kind == 1 { 2 } else { 1 }]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let url = std::env::var("PG_URL").expect("PG_URL=postgresql://user:pw@host:port/db");
    let n: i64 = std::env::var("N").ok().and_then(|n| n.parse().ok()).unwrap_or(20_000);
    // KIND=0 (point select), 1 or 2: that statement alone, e.g. for its instructions under callgrind.
    let only: Option<usize> = std::env::var("KIND").ok().and_then(|k| k.parse().ok());
    let target = Target::parse(&url, &TargetOptions::default()).expect("a postgresql:// URL");
    let mut conn = Conn::open(&target).await.expect("connect");
    let ddl = "CREATE TEMP TABLE cost_t (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, c CHAR(120) NOT NULL, \
               pad CHAR(60) NOT NULL); INSERT INTO cost_t SELECT i, i, lpad(i::text, 120, '0'), 'pad' \
               FROM generate_series(1, 1000) i";
    conn.query(ddl, Fetch::Discard).await.expect("temporary table");
    let sqls: Vec<String> = STATEMENTS.iter().map(|(_, sql)| (*sql).to_string()).collect();
    conn.prepare(&sqls).await.expect("prepare");
    let mut params = [Value::Null, Value::Null];
    println!("{n} executions each, one connection; per execution:");
    for (kind, (name, _)) in STATEMENTS.iter().enumerate().filter(|(kind, _)| only.is_none_or(|k| k == *kind)) {
        for fetch in [Fetch::Discard, Fetch::Rows] {
            // Warm: buffers grown, the statement's first run done.
            for i in 0..100 {
                conn.execute(StmtId(kind), set_params(kind, i, &mut params), fetch).await.expect("execute");
            }
            let (a0, b0) = (ALLOCS.load(Ordering::Relaxed), BYTES.load(Ordering::Relaxed));
            for i in 0..n {
                conn.execute(StmtId(kind), set_params(kind, i, &mut params), fetch).await.expect("execute");
            }
            let allocs = (ALLOCS.load(Ordering::Relaxed) - a0) as f64 / n as f64;
            let bytes = (BYTES.load(Ordering::Relaxed) - b0) as f64 / n as f64;
            println!("  {name:<18} {:<8} {allocs:>7.2} allocations {bytes:>9.0} bytes", format!("{fetch:?}"));
        }
    }
    conn.close().await;
}
