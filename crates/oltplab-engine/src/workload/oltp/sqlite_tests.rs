//! prepare, check, run and cleanup against a real database file (embedded `SQLite`).

use std::path::PathBuf;
use std::rc::Rc;

use serde_json::{json, Value as Json};

use super::tests::workload;
use crate::db::{Fetch, Value};
use crate::driver::{Conn, Target, TargetOptions};
use crate::error::EngineError;
use crate::rand::Rng;
use crate::workload::{EventCtx, PrepareEvent, WorkerInfo, Workload};

/// A database file in the temp dir, removed (with its WAL files) on drop.
struct TempDb(PathBuf);

impl TempDb {
    fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        Self(std::env::temp_dir().join(format!("oltplab-{tag}-{}-{nanos}.db", std::process::id())))
    }

    async fn conn(&self) -> Conn {
        let opts = TargetOptions { create: true, ..TargetOptions::default() };
        let target = Target::parse(&format!("sqlite://{}", self.0.display()), &opts).unwrap();
        Conn::open(&target).await.unwrap()
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.0.display()));
        }
    }
}

/// Prepares every table of `w`, collecting the progress events.
async fn prepare(w: &Workload, conn: &mut Conn) -> Result<Vec<PrepareEvent>, EngineError> {
    let mut events = Vec::new();
    let mut progress = |e: PrepareEvent| events.push(e);
    for t in 1..=w.prepare_units() {
        let mut rng = Rng::for_stream(5, t as u64);
        w.prepare_unit(conn, t, &mut rng, &mut progress).await?;
    }
    Ok(events)
}

async fn rows(conn: &mut Conn, sql: &str) -> Vec<Vec<Value>> {
    conn.query(sql, Fetch::Rows).await.unwrap().rows
}

async fn ints(conn: &mut Conn, sql: &str) -> Vec<i64> {
    rows(conn, sql).await[0].iter().map(|v| if let Value::Int(i) = v { *i } else { panic!("{v:?}") }).collect()
}

fn messages(events: &[PrepareEvent]) -> Vec<&str> {
    events.iter().filter_map(|e| if let PrepareEvent::Message(m) = e { Some(m.as_str()) } else { None }).collect()
}

#[tokio::test]
async fn prepare_loads_sysbench_tables_and_cleanup_drops_them() {
    let db = TempDb::new("prepare");
    let mut conn = db.conn().await;
    let w = workload("oltp_read_write", &json!({"tables": 2, "table_size": 3000}), 1).unwrap();
    assert!(matches!(w.check(&mut conn).await, Err(EngineError::NotPrepared(m)) if m.contains("sbtest1 is missing")));
    let events = prepare(&w, &mut conn).await.unwrap();
    assert_eq!(
        messages(&events)[..3],
        [
            "Creating table 'sbtest1'...",
            "Inserting 3000 records into 'sbtest1'",
            "Creating a secondary index on 'sbtest1'..."
        ]
    );
    // ~195 bytes a row: 3000 rows need two INSERTs of at most 512 KiB.
    let batches: Vec<(usize, u64, u64)> = events
        .iter()
        .filter_map(|e| {
            if let PrepareEvent::Rows { table, done, total } = e {
                Some((*table, *done, *total))
            } else {
                None
            }
        })
        .collect();
    assert_eq!(batches.len(), 4, "{batches:?}");
    assert_eq!((batches[1], batches[3]), ((1, 3000, 3000), (2, 3000, 3000)));
    for t in 1..=2 {
        // auto_inc: the rowid numbers the rows 1..N.
        assert_eq!(
            ints(&mut conn, &format!("SELECT COUNT(*), MIN(id), MAX(id) FROM sbtest{t}")).await,
            [3000, 1, 3000]
        );
        let distinct_k = ints(&mut conn, &format!("SELECT COUNT(DISTINCT k), MIN(k), MAX(k) FROM sbtest{t}")).await;
        assert!(distinct_k[0] < 2000 && distinct_k[1] >= 1 && distinct_k[2] <= 3000, "special k: {distinct_k:?}");
        for row in rows(&mut conn, &format!("SELECT c, pad FROM sbtest{t} LIMIT 50")).await {
            let [Value::Text(c), Value::Text(pad)] = &row[..] else { panic!("{row:?}") };
            assert_eq!((c.len(), pad.len()), (119, 59));
            for (s, groups) in [(c, 10), (pad, 5)] {
                assert_eq!(s.split('-').count(), groups);
                assert!(s.split('-').all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit())), "{s}");
            }
        }
    }
    let index = "SELECT COUNT(*) FROM sqlite_master WHERE type='index' AND name IN ('k_1', 'k_2')";
    assert_eq!(ints(&mut conn, index).await, [2]);
    w.check(&mut conn).await.unwrap();

    let mut dropped = Vec::new();
    w.cleanup(&mut conn, &mut |e| dropped.push(e)).await.unwrap();
    assert_eq!(messages(&dropped), ["Dropping table 'sbtest1'...", "Dropping table 'sbtest2'..."]);
    assert_eq!(ints(&mut conn, "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sbtest%'").await, [0]);
    let e = w.check(&mut conn).await.unwrap_err();
    assert!(e.to_string().contains("run `oltplab prepare oltp_read_write --tables 2 --table-size 3000`"), "{e}");
}

#[tokio::test]
async fn client_ids_secondary_and_a_second_prepare() {
    let db = TempDb::new("ids");
    let mut conn = db.conn().await;
    let given = json!({"table_size": 500, "auto_inc": "off", "secondary": "on", "create_secondary": "off"});
    let w = workload("oltp_read_only", &given, 1).unwrap();
    let events = prepare(&w, &mut conn).await.unwrap();
    assert_eq!(messages(&events), ["Creating table 'sbtest1'...", "Inserting 500 records into 'sbtest1'"]);
    assert_eq!(ints(&mut conn, "SELECT COUNT(DISTINCT id), MIN(id), MAX(id) FROM sbtest1").await, [500, 1, 500]);
    let names = rows(&mut conn, "SELECT name FROM sqlite_master WHERE type='index'").await;
    assert_eq!(names, [[Value::Text("xid_1".into())]]);
    // A second prepare says what to do.
    let e = prepare(&w, &mut conn).await.unwrap_err();
    assert!(matches!(&e, EngineError::NotPrepared(m) if m.contains("oltplab cleanup oltp_read_only")), "{e}");
    // --secondary needs client ids on SQLite.
    let w = workload("oltp_read_only", &json!({"secondary": "on"}), 1).unwrap();
    assert!(matches!(prepare(&w, &mut conn).await, Err(EngineError::Config(m)) if m.contains("--auto-inc=off")));
}

/// Runs `events` events of a prepared workload; returns (reads, writes, others).
async fn run_on(conn: &mut Conn, w: &Workload, events: usize, worker: WorkerInfo) -> (u64, u64, u64) {
    let stmts = w.statements(conn.dialect());
    conn.prepare(&stmts.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>()).await.unwrap();
    let kinds: Vec<usize> = stmts.iter().map(|&(_, k)| k).collect();
    let mut rng = Rng::for_stream(9, worker.id as u64);
    let mut state = w.worker_state(&Rc::default(), worker, None).unwrap();
    let mut ctx = EventCtx::new(conn, &mut rng, worker, &kinds);
    for _ in 0..events {
        w.event(&mut ctx, &mut state).await.unwrap();
    }
    w.finish(&mut ctx, &mut state).await.unwrap();
    (ctx.tally.reads, ctx.tally.writes, ctx.tally.others)
}

#[tokio::test]
async fn every_script_runs_on_sqlite() {
    let db = TempDb::new("run");
    let mut conn = db.conn().await;
    let one = WorkerInfo { id: 0, count: 1 };
    let base = json!({"table_size": 1000});
    let w = workload("oltp_read_write", &base, 1).unwrap();
    prepare(&w, &mut conn).await.unwrap();
    assert_eq!(run_on(&mut conn, &w, 20, one).await, (20 * 14, 20 * 4, 20 * 2));
    for name in ["oltp_read_only", "oltp_write_only", "oltp_point_select", "oltp_update_index", "oltp_update_non_index"]
    {
        let (r, wr, _) = run_on(&mut conn, &workload(name, &base, 1).unwrap(), 10, one).await;
        assert!(r + wr >= 10, "{name}");
    }
    let (r, _, _) = run_on(&mut conn, &workload("select_random_points", &base, 2).unwrap(), 5, one).await;
    assert_eq!(r, 5);
    let (r, _, _) = run_on(&mut conn, &workload("select_random_ranges", &base, 2).unwrap(), 5, one).await;
    assert_eq!(r, 5);
    let (_, wr, _) = run_on(&mut conn, &workload("oltp_insert", &base, 1).unwrap(), 10, one).await;
    assert_eq!(wr, 10);
    let (_, _, _) = run_on(&mut conn, &workload("oltp_delete", &base, 1).unwrap(), 10, one).await;
    // The rows count moved by the inserts and deletes only: read_write's DELETE+INSERT keeps it.
    let count = ints(&mut conn, "SELECT COUNT(*) FROM sbtest1").await[0];
    assert!((1000..=1010).contains(&count), "{count}");
}

#[tokio::test]
async fn insert_without_auto_inc_prepares_empty_tables() {
    let db = TempDb::new("insert");
    let mut conn = db.conn().await;
    let w = workload("oltp_insert", &json!({"auto_inc": "off"}), 1).unwrap();
    let events = prepare(&w, &mut conn).await.unwrap();
    assert_eq!(messages(&events), ["Creating table 'sbtest1'...", "Creating a secondary index on 'sbtest1'..."]);
    let (_, writes, _) = run_on(&mut conn, &w, 50, WorkerInfo { id: 0, count: 1 }).await;
    assert_eq!(writes, 50);
    assert_eq!(ints(&mut conn, "SELECT COUNT(*) FROM sbtest1").await, [50]);
}

#[tokio::test]
async fn bulk_insert_prepares_one_table_per_thread_and_refuses_leftovers() {
    let db = TempDb::new("bulk");
    let mut conn = db.conn().await;
    let w = workload("bulk_insert", &Json::Object(serde_json::Map::new()), 2).unwrap();
    assert_eq!(w.prepare_units(), 2);
    let events = prepare(&w, &mut conn).await.unwrap();
    assert_eq!(messages(&events), ["Creating table 'sbtest1'...", "Creating table 'sbtest2'..."]);
    w.check(&mut conn).await.unwrap();
    let (_, writes, _) = run_on(&mut conn, &w, 1000, WorkerInfo { id: 1, count: 2 }).await;
    assert_eq!(writes, 1);
    assert_eq!(ints(&mut conn, "SELECT COUNT(*), MIN(id), MAX(k) FROM sbtest2").await, [1000, 1, 1000]);
    let e = w.check(&mut conn).await.unwrap_err();
    assert!(e.to_string().contains("already holds rows"), "{e}");
    w.cleanup(&mut conn, &mut |_| {}).await.unwrap();
    assert!(matches!(w.check(&mut conn).await, Err(EngineError::NotPrepared(_))));
}
