//! A prepare that did not finish, on SQLite (tests/faults/ kills real servers mid-prepare):
//! `run` refuses its tables, `prepare` again drops them and loads everything, and a finished
//! database is refused by `prepare` as sysbench refuses it.

use oltplab_engine::driver::{Conn, Target, TargetOptions};
use oltplab_engine::exec::{self, Progress, Sink, Spec, Stop};
use oltplab_engine::workload::unfinished_prepare;
use oltplab_engine::EngineError;
use serde_json::json;
use tokio::sync::mpsc;

fn spec(db: &str, create: bool) -> Spec {
    let options = json!({"tables": 2, "table_size": 50, "time": 0, "events": 20});
    let text = json!({"workload": "oltp_read_only", "db": db, "options": options, "target": {"create": create}});
    Spec::from_json(&text.to_string()).unwrap()
}

async fn prepare(db: &str) -> (Result<(), EngineError>, Vec<String>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let r = exec::prepare(&spec(db, true), &Sink::new(tx), Stop::new()).await.map(drop);
    let mut messages = Vec::new();
    while let Ok(p) = rx.try_recv() {
        if let Progress::Message { text } = p {
            messages.push(text);
        }
    }
    (r, messages)
}

async fn run(db: &str) -> Result<(), EngineError> {
    let (tx, _rx) = mpsc::unbounded_channel();
    exec::run(&spec(db, false), &Sink::new(tx), Stop::new()).await.map(drop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfinished_prepare_is_refused_by_run_and_redone_by_prepare() {
    let dir = std::env::temp_dir().join(format!("oltplab-unfinished-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}/x.db", dir.display());
    let _ = std::fs::remove_file(dir.join("x.db"));

    prepare(&db).await.0.unwrap();
    run(&db).await.unwrap();
    // A finished database: prepare refuses it, as sysbench's does, and keeps it.
    let e = prepare(&db).await.0.unwrap_err().to_string();
    assert!(e.contains("already exist") && e.contains("oltplab cleanup"), "{e}");
    run(&db).await.unwrap();

    // A prepare cut short after its marker: what a crash mid-load leaves (the tables are there).
    let mut conn = Conn::open(&Target::parse(&db, &TargetOptions::default()).unwrap()).await.unwrap();
    unfinished_prepare::begin(&mut conn, "oltp_read_only", "{\"tables\": 3}").await.unwrap();
    conn.close().await;
    let e = run(&db).await.unwrap_err();
    assert!(matches!(&e, EngineError::NotPrepared(m) if m.contains("did not finish")), "{e}");

    let (r, messages) = prepare(&db).await;
    r.unwrap();
    assert!(messages.iter().any(|m| m.contains("An earlier prepare did not finish")), "{messages:?}");
    // The unfinished prepare's own options (3 tables) decided what was dropped.
    assert!(messages.iter().any(|m| m == "Dropping table 'sbtest3'..."), "{messages:?}");
    run(&db).await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

async fn step(db: &str, extra: serde_json::Value) -> Result<usize, EngineError> {
    let mut text = serde_json::to_value(json!({"workload": "oltp_read_only", "db": db,
        "options": {"tables": 2, "table_size": 50}, "target": {"create": true}}))
    .unwrap();
    text.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let (tx, _rx) = mpsc::unbounded_channel();
    exec::prepare(&Spec::from_json(&text.to_string()).unwrap(), &Sink::new(tx), Stop::new()).await.map(|r| r.tables)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_distributed_prepare_is_marked_from_its_begin_step_to_its_end_step() {
    let dir = std::env::temp_dir().join(format!("oltplab-steps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}/x.db", dir.display());
    let _ = std::fs::remove_file(dir.join("x.db"));

    assert_eq!(step(&db, json!({"prepare_step": "begin"})).await.unwrap(), 2, "units to load");
    assert_eq!(step(&db, json!({"units": [1]})).await.unwrap(), 1);
    // One client loaded, another has not yet (or died): the database is refused.
    let e = run(&db).await.unwrap_err();
    assert!(matches!(&e, EngineError::NotPrepared(m) if m.contains("did not finish")), "{e}");
    assert_eq!(step(&db, json!({"units": [2]})).await.unwrap(), 1);
    assert!(run(&db).await.is_err(), "still marked until the end step");
    step(&db, json!({"prepare_step": "end"})).await.unwrap();
    run(&db).await.unwrap();
    // A begin over finished tables is refused, as a whole prepare is.
    let e = step(&db, json!({"prepare_step": "begin"})).await.unwrap_err().to_string();
    assert!(e.contains("already exist"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
