//! The MySQL driver against a real server: runs only when `OLTPLAB_TEST_MYSQL_URL` names one
//! (e.g. `mysql://sbtest:pw@127.0.0.1:3399/sbtest`, a user that may create tables and KILL its
//! own connections); otherwise each test prints a note and passes,
//! or fails when `CI` is set (tests/common/mod.rs). The statements are checked
//! on the server side, through its `Com_*` counters, not only by the client's own counts.

use std::collections::BTreeMap;
use std::time::Duration;

use oltplab_engine::db::{Fetch, Value};
use oltplab_engine::driver::{Conn, TabRows, Target, TargetOptions};
use oltplab_engine::exec::{self, Progress, Sink, Spec, Stop};
use oltplab_engine::result::RunResult;
use oltplab_engine::EngineError;
use serde_json::json;
use tokio::sync::mpsc;

/// The tests share the server's tables and its global counters: one at a time.
static SERVER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

mod common;

fn server_url() -> Option<String> {
    common::server_url("OLTPLAB_TEST_MYSQL_URL")
}

fn spec(workload: &str, db: &str, options: &serde_json::Value, target: &serde_json::Value) -> Spec {
    Spec::from_json(&json!({"workload": workload, "db": db, "options": options, "target": target}).to_string()).unwrap()
}

async fn open(url: &str) -> Conn {
    Conn::open(&Target::parse(url, &TargetOptions::default()).unwrap()).await.unwrap()
}

async fn run(spec: &Spec, stop: Stop) -> (RunResult, Vec<Progress>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = exec::run(spec, &Sink::new(tx), stop).await.unwrap();
    let mut events = Vec::new();
    while let Ok(p) = rx.try_recv() {
        events.push(p);
    }
    (result, events)
}

async fn ints(conn: &mut Conn, sql: &str) -> Vec<i64> {
    let r = conn.query(sql, Fetch::Rows).await.unwrap();
    r.rows[0].iter().map(|v| if let Value::Int(i) = v { *i } else { panic!("{sql}: {v:?}") }).collect()
}

/// The server's statement counters (`Com_*`), global: every session's.
async fn com(conn: &mut Conn) -> BTreeMap<String, i64> {
    let sql = "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Com\\_%' OR Variable_name = 'Aborted_clients'";
    let r = conn.query(sql, Fetch::Rows).await.unwrap();
    r.rows
        .into_iter()
        .map(|row| match &row[..] {
            [Value::Text(name), Value::Text(v)] => (name.clone(), v.parse().unwrap()),
            other => panic!("{other:?}"),
        })
        .collect()
}

fn delta(after: &BTreeMap<String, i64>, before: &BTreeMap<String, i64>, name: &str) -> i64 {
    after[name] - before[name]
}

async fn prepare(url: &str, workload: &str, options: &serde_json::Value) {
    let (tx, _rx) = mpsc::unbounded_channel();
    exec::cleanup(&spec(workload, url, options, &json!({})), &Sink::new(tx.clone())).await.unwrap();
    exec::prepare(&spec(workload, url, options, &json!({})), &Sink::new(tx), Stop::new()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_write_sends_sysbench_statements_as_the_server_counts_them() {
    let Some(url) = server_url() else { return };
    let _one = SERVER.lock().await;
    let options = json!({"tables": 2, "table_size": 1000, "threads": 2});
    prepare(&url, "oltp_read_write", &options).await;
    let mut conn = open(&url).await;
    // sysbench's data: ids 1..N, c and pad of digit groups, k from the special distribution.
    for t in 1..=2 {
        assert_eq!(
            ints(&mut conn, &format!("SELECT COUNT(*), MIN(id), MAX(id) FROM sbtest{t}")).await,
            [1000, 1, 1000]
        );
        let lengths =
            format!("SELECT MIN(LENGTH(c)), MAX(LENGTH(c)), MIN(LENGTH(pad)), MAX(LENGTH(pad)) FROM sbtest{t}");
        assert_eq!(ints(&mut conn, &lengths).await, [119, 119, 59, 59]);
        let k = ints(&mut conn, &format!("SELECT MIN(k), MAX(k), COUNT(DISTINCT k) FROM sbtest{t}")).await;
        assert!(k[0] >= 1 && k[1] <= 1000 && k[2] < 800, "{k:?}");
        let index = format!("SHOW INDEX FROM sbtest{t} WHERE Key_name = 'k_{t}'");
        assert_eq!(conn.query(&index, Fetch::Rows).await.unwrap().row_count, 1);
    }
    let limits = conn.limits().await.unwrap();
    assert!(limits.max_connections.unwrap() > 0 && limits.connections_in_use.unwrap() >= 1, "{limits:?}");
    assert!(limits.max_prepared_stmts.is_some() && limits.prepared_stmts_in_use.is_some(), "{limits:?}");
    let info = conn.server_info().await.unwrap();
    assert!(!info.version.is_empty() && info.variables.contains_key("max_connections"), "{}", info.version);

    for ps_mode in ["auto", "disable"] {
        let events = 200;
        let options = json!({"tables": 2, "table_size": 1000, "threads": 2, "events": events, "time": 0,
                             "db_ps_mode": ps_mode});
        let s = spec("oltp_read_write", &url, &options, &json!({}));
        let before = com(&mut conn).await;
        let (r, _) = run(&s, Stop::new()).await;
        let after = com(&mut conn).await;
        let d = |name: &str| delta(&after, &before, name);
        assert!(r.complete, "{:?}", r.facts.error);
        // Every connection, the pre-flight one included, said goodbye (COM_QUIT).
        assert_eq!(d("Aborted_clients"), 0, "{ps_mode}");
        let signed = |n: u64| i64::try_from(n).unwrap();
        let (reads, writes, others) =
            (signed(r.measured.queries.read), signed(r.measured.queries.write), signed(r.measured.queries.other));
        let errors = signed(r.measured.errors.total);
        assert_eq!(signed(r.measured.transactions), events);
        // Before the run: one `SELECT id FROM sbtestN LIMIT 1` per table (the check).
        let checks = 2;
        if errors == 0 {
            // sysbench's 14 reads, 4 writes and 2 others per event, as the client counted them...
            assert_eq!((reads, writes, others), (14 * events, 4 * events, 2 * events));
            // ...and as the server executed them.
            assert_eq!(d("Com_select"), 14 * events + checks, "{ps_mode}");
            assert_eq!((d("Com_update"), d("Com_delete"), d("Com_insert")), (2 * events, events, events));
            assert_eq!((d("Com_begin"), d("Com_commit"), d("Com_rollback")), (events, events, 0));
        } else {
            // A deadlock retried: the failed statement ran on the server but is not counted by the
            // client, and the ROLLBACK before the retry is one more statement.
            let server: i64 = ["Com_select", "Com_update", "Com_delete", "Com_insert", "Com_begin", "Com_commit"]
                .iter()
                .map(|n| d(n))
                .sum();
            assert_eq!(server, reads + writes + others + checks + errors, "{ps_mode}: {:?}", r.measured.errors);
            assert_eq!(d("Com_rollback"), errors);
        }
        let executed = d("Com_stmt_execute");
        if ps_mode == "auto" {
            assert_eq!(executed, reads + writes + others + errors, "prepared statements");
            // Each connection prepares every statement once (9 kinds x 2 tables + BEGIN + COMMIT).
            assert_eq!(d("Com_stmt_prepare"), 2 * 20);
        } else {
            assert_eq!((executed, d("Com_stmt_prepare")), (0, 0), "text statements");
        }
    }

    let (tx, _rx) = mpsc::unbounded_channel();
    exec::cleanup(&spec("oltp_read_write", &url, &options, &json!({})), &Sink::new(tx)).await.unwrap();
    assert_eq!(conn.query("SHOW TABLES LIKE 'sbtest%'", Fetch::Rows).await.unwrap().row_count, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_load_into_a_latin1_table_keeps_ascii_and_converts_the_rest() {
    let Some(url) = server_url() else { return };
    let _one = SERVER.lock().await;
    let mut conn = open(&url).await;
    conn.query("DROP TABLE IF EXISTS oltplab_latin1", Fetch::Discard).await.unwrap();
    conn.query("CREATE TABLE oltplab_latin1 (id INTEGER PRIMARY KEY, s CHAR(20)) CHARACTER SET latin1", Fetch::Discard)
        .await
        .unwrap();
    // All ASCII: sent as CHARACTER SET binary, unconverted. Then text that latin1 holds but
    // whose UTF-8 bytes differ from latin1's: declared as utf8mb4, converted by the server.
    for texts in [["plain-123", "with\tab"], ["café", "naïve"]] {
        let rows: Vec<Vec<Value>> =
            (0..).zip(texts).map(|(i, s)| vec![Value::Int(i), Value::Text(s.to_string())]).collect();
        assert_eq!(conn.bulk_load("oltplab_latin1", &["id", "s"], &rows).await.unwrap(), 2);
        let back = conn.query("SELECT id, s FROM oltplab_latin1 ORDER BY id", Fetch::Rows).await.unwrap();
        assert_eq!(back.rows, rows);
        let lengths = conn.query("SELECT LENGTH(s) FROM oltplab_latin1 ORDER BY id", Fetch::Rows).await.unwrap();
        // latin1 stores one byte per character: a UTF-8 string stored unconverted would be longer.
        let expected: Vec<Vec<Value>> =
            texts.iter().map(|s| vec![Value::Int(i64::try_from(s.chars().count()).unwrap())]).collect();
        assert_eq!(lengths.rows, expected);
        conn.query("TRUNCATE TABLE oltplab_latin1", Fetch::Discard).await.unwrap();
    }
    conn.query("DROP TABLE oltplab_latin1", Fetch::Discard).await.unwrap();

    // In UTF-16 ASCII bytes are not ASCII text: such a table always gets its text converted.
    conn.query("CREATE TABLE oltplab_utf16 (id INTEGER PRIMARY KEY, s CHAR(20) CHARACTER SET utf16)", Fetch::Discard)
        .await
        .unwrap();
    let rows = vec![vec![Value::Int(1), Value::Text("plain-123".into())]];
    assert_eq!(conn.bulk_load("oltplab_utf16", &["id", "s"], &rows).await.unwrap(), 1);
    assert_eq!(conn.query("SELECT id, s FROM oltplab_utf16", Fetch::Rows).await.unwrap().rows, rows);
    conn.query("DROP TABLE oltplab_utf16", Fetch::Discard).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_load_keeps_every_byte_and_falls_back_to_inserts() {
    let Some(url) = server_url() else { return };
    let _one = SERVER.lock().await;
    let mut conn = open(&url).await;
    conn.query("DROP TABLE IF EXISTS oltplab_bulk", Fetch::Discard).await.unwrap();
    conn.query(
        "CREATE TABLE oltplab_bulk (id INTEGER PRIMARY KEY, k INTEGER, s VARCHAR(40)) CHARACTER SET utf8mb4",
        Fetch::Discard,
    )
    .await
    .unwrap();
    let tricky = ["tab\there", "new\nline", "back\\slash", "cr\rhere", "naïve ✓", ""];
    let mut rows: Vec<Vec<Value>> =
        (0..5000i64).map(|i| vec![Value::Int(i), Value::Int(-i), Value::Text(format!("{i:011}-{i:011}"))]).collect();
    for (i, s) in tricky.iter().enumerate() {
        rows[i][2] = Value::Text((*s).to_string());
    }
    rows[10][1] = Value::Null;
    let before = com(&mut conn).await;
    assert_eq!(conn.bulk_load("oltplab_bulk", &["id", "k", "s"], &rows).await.unwrap(), 5000);
    let after = com(&mut conn).await;
    // One LOAD DATA LOCAL INFILE, no INSERT.
    assert_eq!((delta(&after, &before, "Com_load"), delta(&after, &before, "Com_insert")), (1, 0));
    let back = conn.query("SELECT id, k, s FROM oltplab_bulk ORDER BY id", Fetch::Rows).await.unwrap();
    assert_eq!(back.rows, rows);

    // Without local infile on the server the same rows go in as multi-row INSERTs.
    if conn.query("SET GLOBAL local_infile = 0", Fetch::Discard).await.is_ok() {
        conn.query("TRUNCATE TABLE oltplab_bulk", Fetch::Discard).await.unwrap();
        let mut fresh = open(&url).await;
        let plain: Vec<Vec<Value>> = rows[tricky.len()..].to_vec();
        let before = com(&mut conn).await;
        let loaded = fresh.bulk_load("oltplab_bulk", &["id", "k", "s"], &plain).await;
        let after = com(&mut conn).await;
        conn.query("SET GLOBAL local_infile = 1", Fetch::Discard).await.unwrap();
        assert_eq!(loaded.unwrap(), plain.len() as u64);
        // The refused LOAD DATA, then the rows in one multi-row INSERT (under 512 KiB).
        assert_eq!((delta(&after, &before, "Com_load"), delta(&after, &before, "Com_insert")), (1, 1));
        let back = conn.query("SELECT id, k, s FROM oltplab_bulk ORDER BY id", Fetch::Rows).await.unwrap();
        assert_eq!(back.rows, plain);

        // Rows written as text (TPC-C's loaders) fall back the same way, NULL kept: the text comes
        // back as values and the columns' types read the numbers. (INSERT literals are quoted as
        // sysbench quotes them, unescaped, so the tricky rows stay out here too.)
        conn.query("SET GLOBAL local_infile = 0", Fetch::Discard).await.unwrap();
        conn.query("TRUNCATE TABLE oltplab_bulk", Fetch::Discard).await.unwrap();
        let text_rows = &rows[tricky.len()..tricky.len() + 100];
        let mut fresh = open(&url).await;
        let before = com(&mut conn).await;
        let loaded = fresh.bulk_load_text("oltplab_bulk", &["id", "k", "s"], &TabRows::from_values(text_rows)).await;
        let after = com(&mut conn).await;
        conn.query("SET GLOBAL local_infile = 1", Fetch::Discard).await.unwrap();
        assert_eq!(loaded.unwrap(), 100);
        assert_eq!((delta(&after, &before, "Com_load"), delta(&after, &before, "Com_insert")), (1, 1));
        let back = conn.query("SELECT id, k, s FROM oltplab_bulk ORDER BY id", Fetch::Rows).await.unwrap();
        assert_eq!(back.rows, text_rows);
    } else {
        eprintln!("note: cannot SET GLOBAL local_infile; the INSERT fallback is not tested");
    }
    conn.query("DROP TABLE oltplab_bulk", Fetch::Discard).await.unwrap();

    // Ids left to AUTO_INCREMENT: LOAD DATA would leave gaps after each chunk, INSERTs give 1..N.
    conn.query("CREATE TABLE oltplab_bulk (id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY, k INTEGER)", Fetch::Discard)
        .await
        .unwrap();
    let rows: Vec<Vec<Value>> = (0..3000).map(|i| vec![Value::Int(i)]).collect();
    let before = com(&mut conn).await;
    for chunk in rows.chunks(1000) {
        assert_eq!(conn.bulk_load("oltplab_bulk", &["k"], chunk).await.unwrap(), 1000);
    }
    let after = com(&mut conn).await;
    assert_eq!((delta(&after, &before, "Com_load"), delta(&after, &before, "Com_insert")), (0, 3));
    assert_eq!(ints(&mut conn, "SELECT COUNT(*), MIN(id), MAX(id) FROM oltplab_bulk").await, [3000, 1, 3000]);
    conn.query("DROP TABLE oltplab_bulk", Fetch::Discard).await.unwrap();
}

#[tokio::test]
async fn connection_problems_are_one_line_with_the_fix() {
    let Some(url) = server_url() else { return };
    let target = |u: &str| Target::parse(u, &TargetOptions::default()).unwrap();
    let Target::Mysql(good) = target(&url) else { panic!("{url} is not a mysql:// URL") };
    let net = &good.net;
    let host = format!("{}:{}", net.host, net.port);
    let cases = [
        (format!("mysql://{}:wrong-Pa55@{host}/{}", net.user, net.database), "the password came from --db"),
        // MariaDB says "unknown database" (1049) to a user with global rights, "access denied to
        // database" (1044) to one with rights on sbtest only: both messages say to fix the /db part.
        (format!("mysql://{}:{}@{host}/no_such_db_oltplab", net.user, net.password), "/db part"),
        (format!("mysql://{}:{}@127.0.0.1:1/{}", net.user, net.password, net.database), "connection refused"),
    ];
    for (bad, want) in cases {
        let Err(e) = Conn::open(&target(&bad)).await else { panic!("{want}: connected") };
        let msg = e.to_string();
        assert!(matches!(e, EngineError::Connect(_)), "{msg}");
        assert!(msg.contains(want), "{msg}");
        assert!(!msg.contains("wrong-Pa55") && !msg.contains('\n'), "{msg}");
        if !net.password.is_empty() {
            assert!(!msg.contains(&net.password), "{msg}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_connections_are_counted_reconnected_and_the_run_goes_on() {
    let Some(url) = server_url() else { return };
    let _one = SERVER.lock().await;
    let options = json!({"tables": 1, "table_size": 1000, "threads": 1});
    prepare(&url, "oltp_point_select", &options).await;
    let s = spec(
        "oltp_point_select",
        &url,
        &json!({"tables": 1, "table_size": 1000, "threads": 2, "time": 2.0, "report_interval": 0.25}),
        &json!({}),
    );
    // Kill once the run has started and its statements are prepared.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let running = tokio::spawn(async move { exec::run(&s, &Sink::new(tx), Stop::new()).await.unwrap() });
    let mut events = Vec::new();
    while let Some(p) = rx.recv().await {
        let started = matches!(p, Progress::Started { .. });
        events.push(p);
        if started {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut admin = open(&url).await;
    let me = ints(&mut admin, "SELECT CONNECTION_ID()").await[0];
    let user = admin.scalar("SELECT SUBSTRING_INDEX(USER(), '@', 1)").await.unwrap();
    let list = admin.query("SHOW PROCESSLIST", Fetch::Rows).await.unwrap();
    let mut killed = 0;
    for row in &list.rows {
        if let [Value::Int(id), Value::Text(u), ..] = &row[..] {
            if *id != me && *u == user {
                admin.query(&format!("KILL {id}"), Fetch::Discard).await.unwrap();
                killed += 1;
            }
        }
    }
    assert!(killed >= 2, "the run's two connections: {:?}", list.rows);
    let r = running.await.unwrap();
    while let Ok(p) = rx.try_recv() {
        events.push(p);
    }
    eprintln!("killed {killed}: errors {:?}, reconnects {}", r.measured.errors.by_code, r.measured.reconnects);
    assert!(r.complete, "{:?}", r.facts.error);
    assert!(r.measured.reconnects >= 2, "reconnects: {}, errors: {:?}", r.measured.reconnects, r.measured.errors);
    assert!(r.measured.errors.total >= 2, "{:?}", r.measured.errors);
    // The load resumed: the last intervals (well after the kill) still ran transactions.
    let late: u64 = events
        .iter()
        .filter_map(|p| if let Progress::Interval(i) = p { Some(i) } else { None })
        .filter(|i| i.t_s > 1.25)
        .map(|i| i.counts.transactions)
        .sum();
    assert!(late > 0, "no transactions after the kill");
    let (tx, _rx) = mpsc::unbounded_channel();
    exec::cleanup(&spec("oltp_point_select", &url, &options, &json!({})), &Sink::new(tx)).await.unwrap();
}
