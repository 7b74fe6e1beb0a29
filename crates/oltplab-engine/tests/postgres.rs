//! The pgsql driver against a real PostgreSQL server named by `OLTPLAB_TEST_PG_URL`
//! (e.g. `postgresql://sbtest:pw@127.0.0.1:5499/sbtest`, a database the user owns).
//! Without it every test prints a note and passes (fails when `CI` is set: tests/common/mod.rs). Counts are checked on the
//! server's side, in its statistics views, not only by the client's counters.
//! `OLTPLAB_TEST_PG_TLS_URL`, when set, names a server with ssl=on for the TLS test.

use std::time::Duration;

use oltplab_engine::db::{ErrorAction, Fetch, QueryClass, StmtId, Value};
use oltplab_engine::driver::{Conn, Target, TargetOptions};
use oltplab_engine::exec::{self, Progress, Sink, Spec, Stop};
use oltplab_engine::result::RunResult;
use oltplab_engine::EngineError;
use serde_json::json;
use tokio::sync::{mpsc, Mutex, MutexGuard};

/// The tests share the sbtest tables and the database-wide statistics: one at a time.
static SERIAL: Mutex<()> = Mutex::const_new(());

mod common;

/// The server's URL (see tests/common/mod.rs for a missing one) and the turn to use it.
async fn server(var: &str) -> Option<(String, MutexGuard<'static, ()>)> {
    let url = common::server_url(var)?;
    Some((url, SERIAL.lock().await))
}

fn spec(workload: &str, url: &str, options: &serde_json::Value) -> Spec {
    Spec::from_json(&json!({"workload": workload, "db": url, "options": options}).to_string()).unwrap()
}

async fn open(url: &str) -> Conn {
    Conn::open(&Target::parse(url, &TargetOptions::default()).unwrap()).await.unwrap()
}

/// The first row of `sql` as counts (the text protocol returns text).
async fn ints(conn: &mut Conn, sql: &str) -> Vec<u64> {
    let r = conn.query(sql, Fetch::Rows).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.rows[0].iter().map(|v| if let Value::Text(t) = v { t.parse().unwrap() } else { panic!("{sql}: {v:?}") }).collect()
}

async fn run(s: &Spec) -> (RunResult, Vec<Progress>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let r = exec::run(s, &Sink::new(tx), Stop::new()).await.unwrap();
    let mut events = Vec::new();
    while let Ok(p) = rx.try_recv() {
        events.push(p);
    }
    assert!(r.complete, "{:?}", r.facts.error);
    (r, events)
}

/// Server-side counters: transactions of the database, row changes of the sbtest tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stats {
    commits: u64,
    rollbacks: u64,
    ins: u64,
    upd: u64,
    del: u64,
}

impl Stats {
    /// A fresh connection each time: a backend caches its statistics snapshot.
    async fn read(url: &str) -> Self {
        let mut c = open(url).await;
        let x =
            ints(&mut c, "SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = current_database()")
                .await;
        let t = ints(
            &mut c,
            "SELECT coalesce(sum(n_tup_ins), 0), coalesce(sum(n_tup_upd), 0), coalesce(sum(n_tup_del), 0) \
             FROM pg_stat_user_tables WHERE relname LIKE 'sbtest%'",
        )
        .await;
        Self { commits: x[0], rollbacks: x[1], ins: t[0], upd: t[1], del: t[2] }
    }

    fn minus(self, o: Self) -> Self {
        Self {
            commits: self.commits.saturating_sub(o.commits),
            rollbacks: self.rollbacks.saturating_sub(o.rollbacks),
            ins: self.ins.saturating_sub(o.ins),
            upd: self.upd.saturating_sub(o.upd),
            del: self.del.saturating_sub(o.del),
        }
    }

    /// Backends report their counts when they exit, a moment after the run ends.
    async fn settled(url: &str, before: Self, done: impl Fn(&Self) -> bool) -> Self {
        for _ in 0..100 {
            let d = Self::read(url).await.minus(before);
            if done(&d) {
                return d;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Self::read(url).await.minus(before)
    }
}

fn code(r: &RunResult, code: &str) -> u64 {
    r.measured.errors.by_code.get(code).copied().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oltp_read_write_counts_match_the_server() {
    let Some((url, _serial)) = server("OLTPLAB_TEST_PG_URL").await else { return };
    let data = json!({"tables": 2, "table_size": 1000, "threads": 2});
    exec::cleanup(&spec("oltp_read_write", &url, &data), &Sink::none()).await.unwrap();
    exec::prepare(&spec("oltp_read_write", &url, &data), &Sink::none(), Stop::new()).await.unwrap();

    // The data sysbench's prepare makes: SERIAL ids 1..N (the sequence at N) and the secondary index k_N.
    let mut c = open(&url).await;
    for t in 1..=2 {
        let got = ints(&mut c, &format!("SELECT count(*), min(id), max(id), count(DISTINCT id) FROM sbtest{t}")).await;
        assert_eq!(got, [1000, 1, 1000, 1000]);
        assert_eq!(ints(&mut c, &format!("SELECT last_value FROM sbtest{t}_id_seq")).await, [1000]);
        let idx = format!("SELECT count(*) FROM pg_indexes WHERE tablename = 'sbtest{t}' AND indexname = 'k_{t}'");
        assert_eq!(ints(&mut c, &idx).await, [1]);
    }
    drop(c);

    // One thread: every UPDATE and DELETE finds its row, so sysbench's counts per event are exact.
    for ps_mode in ["auto", "disable"] {
        let before = Stats::read(&url).await;
        let opts =
            json!({"tables": 2, "table_size": 1000, "threads": 1, "events": 100, "time": 0, "db_ps_mode": ps_mode});
        let (r, _) = run(&spec("oltp_read_write", &url, &opts)).await;
        assert_eq!(r.measured.transactions, 100);
        assert_eq!(
            (r.measured.queries.read, r.measured.queries.write, r.measured.queries.other),
            (1400, 400, 200),
            "{ps_mode}"
        );
        let d = Stats::settled(&url, before, |d| d.upd >= 200 && d.commits >= 100).await;
        assert_eq!((d.upd, d.del, d.ins), (200, 100, 100), "{ps_mode}: {d:?}");
        // Besides the 100 COMMITs: the run's table check, server-info queries and these reads.
        assert!((100..300).contains(&d.commits), "{ps_mode}: {d:?}");
    }

    // Four threads: contention brings 0-row UPDATEs and DELETEs (other), 23505 and 40P01 (retried after a ROLLBACK).
    let before = Stats::read(&url).await;
    let opts = json!({"tables": 2, "table_size": 1000, "threads": 4, "events": 400, "time": 0, "rand_type": "pareto"});
    let (r, _) = run(&spec("oltp_read_write", &url, &opts)).await;
    assert_eq!(r.measured.transactions, 400);
    assert_eq!(r.measured.errors.total, r.measured.errors.by_code.values().sum::<u64>());
    assert!(
        r.measured.errors.by_code.keys().all(|k| ["23505", "40P01"].contains(&k.as_str())),
        "{:?}",
        r.measured.errors
    );
    let writes = r.measured.queries.write;
    // The server counts the heap insert of an INSERT that then fails with 23505; the client does not.
    // Nor does it count an INSERT that deadlocks (40P01) while its unique check waits for another
    // transaction's row, after the heap insert: seen once in about 20 runs.
    let want = writes + code(&r, "23505");
    let d =
        Stats::settled(&url, before, |d| d.ins + d.upd + d.del >= want && d.rollbacks >= r.measured.errors.total).await;
    eprintln!("4 threads: {:?}, errors {:?}; server: {d:?}", r.measured.queries, r.measured.errors.by_code);
    let server_writes = d.ins + d.upd + d.del;
    assert!((want..=want + code(&r, "40P01")).contains(&server_writes), "{d:?} {:?}", r.measured.queries);
    assert_eq!(d.rollbacks, r.measured.errors.total, "{d:?}: one ROLLBACK per retried event");
    // The 14 SELECTs come before the writes that fail, so every attempt made all of them.
    assert_eq!(r.measured.queries.read, 14 * (400 + r.measured.errors.total));

    exec::cleanup(&spec("oltp_read_write", &url, &data), &Sink::none()).await.unwrap();
    let mut c = open(&url).await;
    let left = "SELECT count(*) FROM pg_tables WHERE tablename IN ('sbtest1', 'sbtest2')";
    assert_eq!(ints(&mut c, left).await, [0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminated_connections_are_counted_and_reconnected() {
    let Some((url, _serial)) = server("OLTPLAB_TEST_PG_URL").await else { return };
    let data = json!({"tables": 1, "table_size": 1000, "threads": 1});
    exec::cleanup(&spec("oltp_read_write", &url, &data), &Sink::none()).await.unwrap();
    exec::prepare(&spec("oltp_read_write", &url, &data), &Sink::none(), Stop::new()).await.unwrap();
    let killer_url = url.clone();
    let killer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let mut c = open(&killer_url).await;
        let kill = "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'oltplab' \
                    AND pid <> pg_backend_pid() AND datname = current_database()";
        ints(&mut c, kill).await[0]
    });
    let opts = json!({"tables": 1, "table_size": 1000, "threads": 2, "time": 2.5, "report_interval": 0.5});
    let (r, events) = run(&spec("oltp_read_write", &url, &opts)).await;
    let terminated = killer.await.unwrap();
    assert_eq!(terminated, 2, "both workers' backends were terminated");
    eprintln!("terminated: errors {:?}, reconnects {}", r.measured.errors.by_code, r.measured.reconnects);
    assert_eq!(r.measured.reconnects, 2, "{:?}", r.measured.errors);
    // Terminated mid-statement: 57P01 from the server; between statements: the socket closes (08006).
    assert_eq!(code(&r, "57P01") + code(&r, "08006"), 2, "{:?}", r.measured.errors);
    let after_kill: u64 = events
        .iter()
        .filter_map(|p| if let Progress::Interval(i) = p { Some(i) } else { None })
        .filter(|i| i.t_s > 1.6)
        .map(|i| i.counts.transactions)
        .sum();
    assert!(after_kill > 0, "the load resumed after the reconnect");
    exec::cleanup(&spec("oltp_read_write", &url, &data), &Sink::none()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_are_classified_by_result_and_typed() {
    let Some((url, _serial)) = server("OLTPLAB_TEST_PG_URL").await else { return };
    let mut c = open(&url).await;
    c.query("CREATE TEMP TABLE cls (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, c CHAR(10) NOT NULL)", Fetch::Discard)
        .await
        .unwrap();
    let sqls = [
        "INSERT INTO cls (id, k, c) VALUES (?, ?, ?)",
        "SELECT id, k, c FROM cls WHERE id = ?",
        "UPDATE cls SET k = k + 1 WHERE id = ?",
        "BEGIN",
        "COMMIT",
        "SELECT ?::numeric, ?::int8, NULL::int4, true, 'x?'::text",
    ];
    c.prepare(&sqls.map(String::from)).await.unwrap();
    let exec = |id: usize, params: Vec<Value>| (StmtId(id), params);
    let steps = [
        (exec(3, vec![]), QueryClass::Other, 0),
        (exec(0, vec![Value::Int(1), Value::Int(7), Value::Text("ab".into())]), QueryClass::Write, 1),
        (exec(1, vec![Value::Int(2)]), QueryClass::Read, 0),
        (exec(2, vec![Value::Int(2)]), QueryClass::Other, 0),
        (exec(2, vec![Value::Int(1)]), QueryClass::Write, 1),
        (exec(1, vec![Value::Int(1)]), QueryClass::Read, 1),
        (exec(4, vec![]), QueryClass::Other, 0),
    ];
    for ((id, params), class, rows) in steps {
        let r = c.execute(id, &params, Fetch::Rows).await.unwrap();
        assert_eq!((r.class, r.row_count), (class, rows), "statement {}", id.0);
    }
    let r = c.execute(StmtId(1), &[Value::Int(1)], Fetch::Rows).await.unwrap();
    assert_eq!(r.rows, [[Value::Int(1), Value::Int(8), Value::Text("ab        ".into())]]);
    let r =
        c.execute(StmtId(5), &[Value::Text("-12345678.90".into()), Value::Int(1 << 40)], Fetch::Rows).await.unwrap();
    // A text parameter becomes NUMERIC on the server; NUMERIC comes back as its text.
    let want =
        [Value::Text("-12345678.90".into()), Value::Int(1 << 40), Value::Null, Value::Int(1), Value::Text("x?".into())];
    assert_eq!(r.rows, [want]);

    let info = c.server_info().await.unwrap();
    assert!(info.version.starts_with(char::is_numeric), "{}", info.version);
    assert!(info.variables.contains_key("max_connections") && info.variables.contains_key("shared_buffers"));
    let limits = c.limits().await.unwrap();
    assert!(limits.max_connections.unwrap() > 0 && limits.connections_in_use.unwrap() >= 1, "{limits:?}");
    assert_eq!(limits.max_prepared_stmts, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retryable_errors_leave_a_transaction_that_rollback_clears() {
    let Some((url, _serial)) = server("OLTPLAB_TEST_PG_URL").await else { return };
    let (mut a, mut b) = (open(&url).await, open(&url).await);
    a.query("DROP TABLE IF EXISTS retry_t; CREATE TABLE retry_t (id INTEGER PRIMARY KEY, k INTEGER)", Fetch::Discard)
        .await
        .unwrap();
    a.query("INSERT INTO retry_t VALUES (1, 0), (2, 0)", Fetch::Discard).await.unwrap();

    b.query("BEGIN", Fetch::Discard).await.unwrap();
    let e = b.query("INSERT INTO retry_t VALUES (1, 1)", Fetch::Discard).await.unwrap_err();
    assert_eq!((e.code.as_str(), e.action), ("23505", ErrorAction::Retry), "{e}");
    // Without the executor's ROLLBACK the transaction refuses everything.
    let e = b.query("SELECT 1", Fetch::Discard).await.unwrap_err();
    assert_eq!((e.code.as_str(), e.action), ("25P02", ErrorAction::Fatal), "{e}");
    b.query("ROLLBACK", Fetch::Discard).await.unwrap();
    assert_eq!(b.query("SELECT 1", Fetch::Discard).await.unwrap().class, QueryClass::Read);

    // A deadlock: each holds one row and wants the other's; the server aborts one (after deadlock_timeout).
    a.query("BEGIN; UPDATE retry_t SET k = 1 WHERE id = 1", Fetch::Discard).await.unwrap();
    b.query("BEGIN; UPDATE retry_t SET k = 2 WHERE id = 2", Fetch::Discard).await.unwrap();
    let (ra, rb) = tokio::join!(
        a.query("UPDATE retry_t SET k = 1 WHERE id = 2", Fetch::Discard),
        b.query("UPDATE retry_t SET k = 2 WHERE id = 1", Fetch::Discard)
    );
    let e = ra.err().or(rb.err()).expect("one of them is the deadlock's victim");
    assert_eq!((e.code.as_str(), e.action), ("40P01", ErrorAction::Retry), "{e}");
    for c in [&mut a, &mut b] {
        c.query("ROLLBACK", Fetch::Discard).await.unwrap();
    }
    a.query("DROP TABLE retry_t", Fetch::Discard).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_stores_what_inserts_store() {
    let Some((url, _serial)) = server("OLTPLAB_TEST_PG_URL").await else { return };
    let mut c = open(&url).await;
    let ddl = "CREATE TEMP TABLE {t} (id SERIAL PRIMARY KEY, k INTEGER DEFAULT '0' NOT NULL, \
               c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, note TEXT)";
    for t in ["by_copy", "by_insert"] {
        c.query(&ddl.replace("{t}", t), Fetch::Discard).await.unwrap();
    }
    let rows: Vec<Vec<Value>> = (0..5000)
        .map(|i| {
            let note = if i % 7 == 0 { Value::Null } else { Value::Text(format!("n-{i}")) };
            vec![
                Value::Int(i * 37 % 1000),
                Value::Text(format!("{i:011}-{:011}", i * 3)),
                Value::Text("pad ".into()),
                note,
            ]
        })
        .collect();
    let columns = ["k", "c", "pad", "note"];
    assert_eq!(c.bulk_load("by_copy", &columns, &rows).await.unwrap(), 5000);
    oltplab_engine::driver::insert_batches(&mut c, "by_insert", &columns, &rows).await.unwrap();
    assert_eq!(ints(&mut c, "SELECT count(*), min(id), max(id) FROM by_copy").await, [5000, 1, 5000]);
    let diff = "SELECT (SELECT count(*) FROM (TABLE by_copy EXCEPT TABLE by_insert) a) + \
                (SELECT count(*) FROM (TABLE by_insert EXCEPT TABLE by_copy) b)";
    assert_eq!(ints(&mut c, diff).await, [0]);

    // COPY's escapes: what goes in comes back, byte for byte.
    c.query("CREATE TEMP TABLE odd (id SERIAL, note TEXT)", Fetch::Discard).await.unwrap();
    let odd = ["tab\there", "line\nbreak", "cr\rx", "back\\slash", "\\N", "\\.", "quote's", "ünïcode", ""];
    let rows: Vec<Vec<Value>> = odd.iter().map(|s| vec![Value::Text((*s).into())]).chain([vec![Value::Null]]).collect();
    assert_eq!(c.bulk_load("odd", &["note"], &rows).await.unwrap(), rows.len() as u64);
    c.prepare(&["SELECT note FROM odd ORDER BY id".to_string()]).await.unwrap();
    let back = c.execute(StmtId(0), &[], Fetch::Rows).await.unwrap().rows;
    assert_eq!(back, rows);
}

#[tokio::test]
async fn connection_problems_are_one_line_connect_errors() {
    let Some((url, _serial)) = server("OLTPLAB_TEST_PG_URL").await else { return };
    let t = Target::parse(&url, &TargetOptions::default()).unwrap();
    let Target::Postgres(pg) = &t else { panic!("{url} is not a PostgreSQL URL") };
    let n = &pg.net;
    let with =
        |user: &str, pass: &str, port: u16, db: &str| format!("postgresql://{user}:{pass}@{}:{port}/{db}", n.host);
    let cases = [
        (with(&n.user, "Wr0ngSecret", n.port, &n.database), "password authentication failed"),
        (with(&n.user, &n.password, 1, &n.database), "connection refused"),
        (with(&n.user, &n.password, n.port, "no_such_db_x"), "database 'no_such_db_x' does not exist"),
    ];
    for (bad, want) in cases {
        let e = Conn::open(&Target::parse(&bad, &TargetOptions::default()).unwrap()).await.err().unwrap();
        let msg = e.to_string();
        assert!(matches!(e, EngineError::Connect(_)), "{msg}");
        assert!(msg.contains(want) && !msg.contains('\n'), "{msg}");
        assert!(!msg.contains("Wr0ngSecret") && (n.password.is_empty() || !msg.contains(&n.password)), "{msg}");
    }
}

#[tokio::test]
async fn tls_when_requested() {
    let Some((url, _serial)) = server("OLTPLAB_TEST_PG_TLS_URL").await else { return };
    let mut c = open(&url).await;
    let ssl = c.query("SELECT ssl::int FROM pg_stat_ssl WHERE pid = pg_backend_pid()", Fetch::Rows).await.unwrap();
    assert_eq!(ssl.rows, [[Value::Text("1".into())]], "{url} should ask for sslmode=require");
}
