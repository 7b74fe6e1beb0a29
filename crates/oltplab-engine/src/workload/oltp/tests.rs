//! Each script sends sysbench's statements, in sysbench's order and counts,
//! checked on the fake driver's statement log.

use std::rc::Rc;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value as Json};

use crate::db::Dialect;
use crate::driver::{Conn, Target, TargetOptions};
use crate::error::EngineError;
use crate::options::Options;
use crate::rand::Rng;
use crate::workload::{EventCtx, WorkerInfo, Workload};

pub(super) fn workload(name: &str, given: &Json, threads: usize) -> Result<Workload, EngineError> {
    let defs = Workload::defs(name)?;
    let opts = Options::parse(&defs, given.as_object().expect("options object"), name)?;
    Workload::new(name, &opts, threads)
}

async fn fake_conn() -> (Conn, Arc<Mutex<Vec<String>>>) {
    let Target::Fake(fake) = Target::parse("fake://", &TargetOptions::default()).unwrap() else { panic!("not fake") };
    let log = fake.log.clone();
    (Conn::open(&Target::Fake(fake)).await.unwrap(), log)
}

/// Runs `events` events of `name` as worker `worker` on the fake driver; returns the log.
async fn run(name: &str, given: Json, events: usize, worker: WorkerInfo) -> Vec<String> {
    let w = workload(name, &given, worker.count).unwrap();
    let (mut conn, log) = fake_conn().await;
    let stmts = w.statements(conn.dialect());
    let sqls: Vec<String> = stmts.iter().map(|(s, _)| s.clone()).collect();
    let kinds: Vec<usize> = stmts.iter().map(|&(_, k)| k).collect();
    conn.prepare(&sqls).await.unwrap();
    let mut rng = Rng::seeded(11);
    let mut state = w.worker_state(&Rc::default(), worker, None).unwrap();
    let mut ctx = EventCtx::new(&mut conn, &mut rng, worker, &kinds);
    for _ in 0..events {
        w.event(&mut ctx, &mut state).await.unwrap();
    }
    w.finish(&mut ctx, &mut state).await.unwrap();
    let out = log.lock().unwrap().clone();
    out
}

const ONE: WorkerInfo = WorkerInfo { id: 0, count: 1 };

/// Replaces numbers and quoted strings so that statement shapes can be compared.
fn shape(sql: &str) -> String {
    let mut out = String::new();
    let mut chars = sql.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '\'' {
            for c in chars.by_ref() {
                if c == '\'' {
                    break;
                }
            }
            out.push_str("'s'");
        } else if ch.is_ascii_digit() && !out.ends_with("sbtest") && !out.ends_with('+') {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(ch);
        }
    }
    out
}

fn shapes(log: &[String]) -> Vec<String> {
    log.iter().map(|s| shape(s)).collect()
}

fn repeat(s: &str, n: usize) -> Vec<String> {
    vec![s.to_string(); n]
}

fn read_write_shapes(point_selects: usize) -> Vec<String> {
    let mut v = vec!["BEGIN".to_string()];
    v.extend(repeat("SELECT c FROM sbtest1 WHERE id=N", point_selects));
    v.extend(
        [
            "SELECT c FROM sbtest1 WHERE id BETWEEN N AND N",
            "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN N AND N",
            "SELECT c FROM sbtest1 WHERE id BETWEEN N AND N ORDER BY c",
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN N AND N ORDER BY c",
            "UPDATE sbtest1 SET k=k+1 WHERE id=N",
            "UPDATE sbtest1 SET c='s' WHERE id=N",
            "DELETE FROM sbtest1 WHERE id=N",
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (N, N, 's', 's')",
            "COMMIT",
        ]
        .map(String::from),
    );
    v
}

#[tokio::test]
async fn read_write_default_is_sysbenchs_transaction() {
    let log = run("oltp_read_write", json!({}), 1, ONE).await;
    assert_eq!(shapes(&log), read_write_shapes(10));
    // The DELETE+INSERT pair re-inserts the id it deleted; ranges span range_size ids.
    let id_of = |s: &str| s.rsplit_once('=').unwrap().1.to_string();
    let insert_id = log[18].split_once("VALUES (").unwrap().1.split(',').next().unwrap().to_string();
    assert_eq!(id_of(&log[17]), insert_id);
    let nums: Vec<i64> = log[11].split(' ').filter_map(|w| w.parse().ok()).collect();
    assert_eq!(nums[1] - nums[0], 99);
    let c = log[16].split('\'').nth(1).unwrap();
    assert!(c.len() == 119 && c.split('-').all(|g| g.len() == 11));
}

#[tokio::test]
async fn options_change_the_counts_and_drop_groups() {
    let log =
        run("oltp_read_write", json!({"point_selects": 3, "skip_trx": "on", "range_selects": "off"}), 1, ONE).await;
    let mut expect = read_write_shapes(3);
    expect.retain(|s| s != "BEGIN" && s != "COMMIT" && !s.contains("BETWEEN"));
    assert_eq!(shapes(&log), expect);

    let log = run("oltp_read_write", json!({"sum_ranges": 2, "index_updates": 0, "delete_inserts": 3}), 1, ONE).await;
    let count = |p: &str| log.iter().filter(|s| s.starts_with(p)).count();
    assert_eq!((count("SELECT SUM"), count("UPDATE sbtest1 SET k"), count("DELETE"), count("INSERT")), (2, 0, 3, 3));
    assert_eq!(log.len(), 1 + 10 + 5 + 1 + 6 + 1);

    let log = run("oltp_read_write", json!({"range_size": 10}), 1, ONE).await;
    let nums: Vec<i64> = log[11].split(' ').filter_map(|w| w.parse().ok()).collect();
    assert_eq!(nums[1] - nums[0], 9);
}

#[tokio::test]
async fn read_only_and_write_only_compose_their_parts() {
    let log = run("oltp_read_only", json!({}), 1, ONE).await;
    let mut expect = read_write_shapes(10);
    expect.retain(|s| !s.starts_with("UPDATE") && !s.starts_with("DELETE") && !s.starts_with("INSERT"));
    assert_eq!(shapes(&log), expect);
    assert_eq!(log.len(), 16);

    let log = run("oltp_write_only", json!({}), 1, ONE).await;
    let mut expect = read_write_shapes(0);
    expect.retain(|s| !s.starts_with("SELECT"));
    assert_eq!(shapes(&log), expect);
}

#[tokio::test]
async fn single_statement_scripts_send_one_statement_without_a_transaction() {
    let cases = [
        ("oltp_point_select", json!({"point_selects": 5}), "SELECT c FROM sbtest1 WHERE id=N"),
        ("oltp_update_index", json!({}), "UPDATE sbtest1 SET k=k+1 WHERE id=N"),
        ("oltp_update_non_index", json!({}), "UPDATE sbtest1 SET c='s' WHERE id=N"),
        ("oltp_delete", json!({"delete_inserts": 4}), "DELETE FROM sbtest1 WHERE id=N"),
        ("oltp_insert", json!({}), "INSERT INTO sbtest1 (id, k, c, pad) VALUES (N, N, 's', 's')"), // MySQL: id 0
    ];
    for (name, given, expect) in cases {
        let log = run(name, given, 3, ONE).await;
        assert_eq!(shapes(&log), repeat(expect, 3), "{name}");
    }
    let w = workload("oltp_update_index", &json!({"index_updates": 2}), 1).unwrap();
    assert_eq!(w.kinds(), ["index_updates"]);
    let log = run("oltp_update_index", json!({"index_updates": 2}), 1, ONE).await;
    assert_eq!(log.len(), 2);
}

#[tokio::test]
async fn insert_without_auto_inc_uses_unique_ids_in_int_range() {
    let log = run("oltp_insert", json!({"auto_inc": "off", "tables": 3}), 200, ONE).await;
    let ids: std::collections::HashSet<i64> = log
        .iter()
        .map(|s| {
            let (head, values) = s.split_once(" VALUES (").unwrap();
            assert!(head.starts_with("INSERT INTO sbtest") && head.ends_with(" (id, k, c, pad)"), "{s}");
            values.split(',').next().unwrap().parse().unwrap()
        })
        .collect();
    assert_eq!(ids.len(), 200);
    assert!(ids.iter().any(|&i| i < 0), "ids are shifted by -2^31");
    let w = workload("oltp_insert", &json!({}), 1).unwrap();
    assert!(w.statements(Dialect::Sqlite).is_empty());
    assert_eq!(w.kinds(), ["inserts"]);
}

#[tokio::test]
async fn groups_pick_one_table_each() {
    let w = workload("oltp_read_write", &json!({"tables": 4}), 1).unwrap();
    let stmts = w.statements(Dialect::Mysql);
    assert_eq!(stmts.len(), 2 + 4 * 9);
    assert!(stmts.iter().all(|&(_, k)| k < w.kinds().len()));
    assert_eq!(stmts[0].0, "BEGIN");
    assert_eq!(w.kinds()[stmts[2].1], "point_selects");
    let log = run("oltp_read_write", json!({"tables": 4}), 50, ONE).await;
    let table_of = |s: &str| s.split("sbtest").nth(1).unwrap().chars().next().unwrap();
    let mut tables_seen = std::collections::HashSet::new();
    for event in log.chunks(20) {
        let point: Vec<char> = event[1..11].iter().map(|s| table_of(s)).collect();
        assert!(point.iter().all(|&t| t == point[0]), "{point:?}");
        assert_eq!(table_of(&event[17]), table_of(&event[18]));
        tables_seen.extend(point);
    }
    assert_eq!(tables_seen.len(), 4);
}

#[tokio::test]
async fn select_random_scripts_stay_in_their_thread_slice() {
    let worker = WorkerInfo { id: 1, count: 4 };
    let log = run("select_random_points", json!({"rand_type": "uniform"}), 20, worker).await;
    for s in &log {
        let (head, list) = s.split_once(" IN (").unwrap();
        assert_eq!(head, "SELECT id, k, c, pad FROM sbtest1 WHERE k");
        let ks: Vec<u32> = list.trim_end_matches(')').split(", ").map(|v| v.parse().unwrap()).collect();
        assert_eq!(ks.len(), 10);
        assert!(ks.iter().all(|k| (2500..=5000).contains(k)), "{ks:?}");
    }
    let log = run("select_random_ranges", json!({"number_of_ranges": 3, "delta": 7}), 5, worker).await;
    for s in &log {
        assert!(s.starts_with("SELECT count(k) FROM sbtest1 WHERE k BETWEEN "), "{s}");
        let nums: Vec<i64> = s.split(' ').filter_map(|w| w.parse().ok()).collect();
        assert_eq!(nums.len(), 6);
        assert!(nums.chunks(2).all(|p| p[1] - p[0] == 7 && (2500..=5000).contains(&p[0])));
    }
}

#[tokio::test]
async fn seeded_runs_repeat_exactly() {
    let a = run("oltp_read_write", json!({"tables": 3}), 5, ONE).await;
    assert_eq!(a, run("oltp_read_write", json!({"tables": 3}), 5, ONE).await);
    let b = run("oltp_read_write", json!({"tables": 3, "rand_type": "pareto"}), 5, ONE).await;
    assert_ne!(a, b);
}

#[tokio::test]
async fn tally_counts_sysbench_classes() {
    let w = workload("oltp_read_write", &json!({}), 1).unwrap();
    let (mut conn, _log) = fake_conn().await;
    let stmts = w.statements(Dialect::Mysql);
    conn.prepare(&stmts.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>()).await.unwrap();
    let kinds: Vec<usize> = stmts.iter().map(|&(_, k)| k).collect();
    let mut rng = Rng::seeded(1);
    let mut state = w.worker_state(&Rc::default(), ONE, None).unwrap();
    let mut ctx = EventCtx::new(&mut conn, &mut rng, ONE, &kinds);
    w.event(&mut ctx, &mut state).await.unwrap();
    assert_eq!((ctx.tally.reads, ctx.tally.writes, ctx.tally.others), (14, 4, 2));
    let labels = w.kinds();
    let per_kind: Vec<&str> = ctx.stmt_latencies_ns.iter().map(|&(k, _)| labels[k]).collect();
    assert_eq!(per_kind.iter().filter(|&&l| l == "point_selects").count(), 10);
    assert_eq!((per_kind[0], per_kind[19]), ("begin", "commit"));
}

#[test]
fn workloads_can_be_shared_by_the_engine_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Workload>();
}

#[test]
fn configuration_errors_say_how_to_fix() {
    let e = workload("oltp_read_wirte", &json!({}), 1).err().unwrap();
    assert!(e.to_string().starts_with("unknown workload 'oltp_read_wirte'; choose one of oltp_read_only, "), "{e}");
    let e = workload("select_random_points", &json!({"tables": 2}), 1).err().unwrap();
    assert!(matches!(&e, EngineError::Config(m) if m.contains("--tables")), "{e}");
    let e = workload("oltp_read_only", &json!({"rand_type": "pareto", "rand_pareto_h": 1.0}), 1).err().unwrap();
    assert!(e.to_string().contains("--rand-pareto-h"), "{e}");
    assert!(workload("oltp_read_only", &json!({"random_points": 3}), 1).is_err());
    assert_eq!(Workload::names().len(), 12); // the sysbench scripts, bulk_insert and tpcc
    for name in Workload::names() {
        assert!(Workload::description(name).is_some(), "{name}");
        let defs = Workload::defs(name).unwrap();
        assert!(defs.iter().any(|d| d.name == "rand_type"));
        let mut names: Vec<&str> = defs.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), defs.len(), "duplicate option in {name}");
        assert!(workload(name, &json!({}), 2).is_ok(), "{name}");
    }
}
