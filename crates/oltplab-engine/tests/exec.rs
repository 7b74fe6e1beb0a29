//! The executor end to end on the deterministic fake driver: stop conditions,
//! retries, intervals that add up to the totals, and a graceful stop.

use std::time::{Duration, Instant};

use oltplab_engine::exec::{self, Progress, Sink, Spec, Stop};
use oltplab_engine::result::{RunResult, StopReason};
use serde_json::json;
use tokio::sync::mpsc;

fn spec(workload: &str, db: &str, options: &serde_json::Value) -> Spec {
    Spec::from_json(&json!({"workload": workload, "db": db, "options": options}).to_string()).unwrap()
}

async fn run_collect(spec: &Spec, stop: Stop) -> (RunResult, Vec<Progress>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = exec::run(spec, &Sink::new(tx), stop).await.unwrap();
    let mut events = Vec::new();
    while let Ok(p) = rx.try_recv() {
        events.push(p);
    }
    (result, events)
}

fn intervals(events: &[Progress]) -> Vec<&exec::IntervalReport> {
    events.iter().filter_map(|p| if let Progress::Interval(i) = p { Some(i) } else { None }).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_limit_is_exact_and_intervals_add_up() {
    let s =
        spec("oltp_read_write", "fake://", &json!({"threads": 4, "events": 500, "time": 0, "report_interval": 0.05}));
    let (r, events) = run_collect(&s, Stop::new()).await;
    assert_eq!(r.stop_reason, StopReason::Events);
    assert!(r.complete);
    assert_eq!(r.transactions, 500);
    assert_eq!(r.threads.iter().map(|t| t.events).sum::<u64>(), 500);
    // sysbench's counts per oltp_read_write event: 14 reads, 4 writes, 2 others.
    assert_eq!((r.queries.read, r.queries.write, r.queries.other), (14 * 500, 4 * 500, 2 * 500));
    let iv = intervals(&events);
    assert!(!iv.is_empty());
    assert_eq!(iv.iter().map(|i| i.transactions).sum::<u64>(), 500);
    assert_eq!(iv.iter().map(|i| i.reads).sum::<u64>(), r.queries.read);
    let covered: f64 = iv.iter().map(|i| i.interval_s).sum();
    assert!((covered - r.duration_s).abs() < 0.01, "{covered} vs {}", r.duration_s);
    assert!(r.latency_ns.min <= r.latency_ns.p50 && r.latency_ns.p99 <= r.latency_ns.max);
    assert!(matches!(events.first(), Some(Progress::Started { threads: 4, .. })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignorable_errors_are_counted_and_the_event_retried() {
    // Every 37th statement fails: about half the 16-statement events need a retry, all 200 complete.
    let s = spec("oltp_read_only", "fake://?fail_every=37", &json!({"threads": 2, "events": 200, "time": 0}));
    let (r, _) = run_collect(&s, Stop::new()).await;
    assert_eq!(r.transactions, 200);
    assert!(r.errors.total > 0);
    assert_eq!(r.errors.by_code["FAKE"], r.errors.total);
    // Failed attempts' queries are counted too, so there are more than 16 per event.
    assert!(r.queries.total > 16 * 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_limit_ends_the_run() {
    let s = spec("oltp_point_select", "fake://?latency_us=100", &json!({"threads": 2, "time": 0.3}));
    let (r, events) = run_collect(&s, Stop::new()).await;
    assert_eq!(r.stop_reason, StopReason::Time);
    assert!(r.duration_s >= 0.3 && r.duration_s < 1.0, "{}", r.duration_s);
    assert!(r.transactions > 0);
    assert_eq!(intervals(&events).iter().map(|i| i.transactions).sum::<u64>(), r.transactions);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_signal_returns_a_partial_result_quickly() {
    let s = spec("oltp_point_select", "fake://?latency_us=200", &json!({"threads": 3, "time": 60}));
    let stop = Stop::new();
    let stopper = stop.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.stop();
    });
    let started = Instant::now();
    let (r, events) = run_collect(&s, stop).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(r.stop_reason, StopReason::Interrupted);
    assert!(!r.complete);
    assert!(r.transactions > 0);
    assert_eq!(intervals(&events).iter().map(|i| i.transactions).sum::<u64>(), r.transactions);
}

#[tokio::test]
async fn bad_options_are_config_errors() {
    let s = spec("oltp_read_write", "fake://", &json!({"threads": 0}));
    let e = exec::run(&s, &Sink::none(), Stop::new()).await.unwrap_err();
    assert!(e.to_string().contains("--threads must be an integer from 1"), "{e}");
    let s = spec("oltp_nonsense", "fake://", &json!({}));
    let e = exec::run(&s, &Sink::none(), Stop::new()).await.unwrap_err();
    assert!(e.to_string().contains("unknown workload"), "{e}");
}
