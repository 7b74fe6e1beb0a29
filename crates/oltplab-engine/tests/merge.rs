//! The distributed merge against a local run: two clients' runs merged by the engine give a
//! result and intervals of exactly the shape a single run of the same load gives (every key,
//! every nesting, every type), with the values that must agree equal and the counts added.

use oltplab_engine::exec::{self, Progress, Sink, Spec, Stop};
use oltplab_engine::merge::{RunEnd, RunMerge};
use oltplab_engine::result::{IntervalReport, RunResult, StopReason};
use serde_json::{json, Value};
use tokio::sync::mpsc;

const WORKLOAD: &str = "oltp_read_write";

/// Open loop, a percentile list and sysbench's histogram: every optional part of a result is there.
fn options(threads: u64, rate: f64) -> Value {
    json!({"threads": threads, "rate": rate, "time": 1.2, "report_interval": 0.5, "rand_seed": 7,
           "percentile": "50,99", "histogram": true})
}

fn spec(options: &Value) -> Spec {
    Spec::from_json(&json!({"workload": WORKLOAD, "db": "fake://", "options": options}).to_string()).unwrap()
}

async fn run(spec: &Spec) -> (RunResult, Vec<IntervalReport>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = exec::run(spec, &Sink::new(tx), Stop::new()).await.unwrap();
    let mut intervals = Vec::new();
    while let Ok(p) = rx.try_recv() {
        if let Progress::Interval(i) = p {
            intervals.push(*i);
        }
    }
    (result, intervals)
}

/// Fails naming the path of the first key, nesting or JSON type where `a` and `b` differ.
fn assert_same_shape(path: &str, a: &Value, b: &Value) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let (kx, ky): (Vec<_>, Vec<_>) = (x.keys().collect(), y.keys().collect());
            assert_eq!(kx, ky, "the keys of {path} differ");
            for (k, v) in x {
                assert_same_shape(&format!("{path}.{k}"), v, &y[k]);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.is_empty(), y.is_empty(), "{path}: one list is empty, the other not");
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                assert_same_shape(&format!("{path}[{i}]"), v, w);
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            assert_eq!(x.is_f64(), y.is_f64(), "{path}: {x} and {y} are not numbers of one type");
        }
        _ => assert_eq!(
            std::mem::discriminant(a),
            std::mem::discriminant(b),
            "{path}: {a} and {b} are not of one JSON type"
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_merged_have_the_shape_and_sums_of_one_run() {
    let (single, single_intervals) = run(&spec(&options(4, 400.0))).await;
    let (a, a_intervals) = run(&spec(&options(2, 200.0))).await;
    let (b, b_intervals) = run(&spec(&options(2, 200.0))).await;

    let mut merge = RunMerge::new(&spec(&options(4, 400.0))).unwrap();
    let mut merged_intervals = Vec::new();
    for i in 0..a_intervals.len().max(b_intervals.len()) {
        let group: Vec<IntervalReport> =
            [&a_intervals, &b_intervals].iter().filter_map(|c| c.get(i).cloned()).collect();
        merged_intervals.push(merge.interval(&group).unwrap());
    }
    let end = RunEnd { started_at: a.facts.started_at, ended_at: b.facts.ended_at, ..RunEnd::default() };
    let merged = merge.finish(&[a.clone(), b.clone()], end);

    // The client count of a merged interval is its one addition.
    let mut merged_interval = serde_json::to_value(&merged_intervals[0]).unwrap();
    assert_eq!(merged_interval.as_object_mut().unwrap().remove("clients"), Some(json!(2)));
    assert_same_shape("interval", &merged_interval, &serde_json::to_value(&single_intervals[0]).unwrap());
    let merged_json = serde_json::to_value(&merged).unwrap();
    assert_same_shape("result", &merged_json, &serde_json::to_value(&single).unwrap());
    // And the merged result reads back as the engine's own type.
    let _: RunResult = serde_json::from_value(merged_json).unwrap();

    for key in ["workload", "options", "driver", "interval_s", "warmup_s", "rate_per_s", "complete", "stop_reason"] {
        let (m, s) = (serde_json::to_value(&merged).unwrap(), serde_json::to_value(&single).unwrap());
        assert_eq!(m[key], s[key], "{key}");
    }
    assert_eq!(merged.facts.stop_reason, StopReason::Time);
    let (ma, mb, m) = (&a.measured, &b.measured, &merged.measured);
    assert_eq!(m.transactions, ma.transactions + mb.transactions);
    assert_eq!(m.queries.total, ma.queries.total + mb.queries.total);
    assert_eq!(m.latency_ns.min, ma.latency_ns.min.min(mb.latency_ns.min));
    assert_eq!(m.latency_ns.max, ma.latency_ns.max.max(mb.latency_ns.max));
    assert_eq!(m.latency_ns.sum, ma.latency_ns.sum + mb.latency_ns.sum);
    assert_eq!(merged.facts.threads.len(), 4);
    assert_eq!(merged.histogram_ms.as_ref().unwrap().iter().map(|r| r.1).sum::<u64>(), m.transactions);
    let interval_sum: u64 = merged_intervals.iter().map(|i| i.counts.transactions).sum();
    assert_eq!(interval_sum, m.transactions);
    // Client CPU: every client's, on the merged interval grid.
    let cpu_s: f64 = merged_intervals.iter().map(|i| i.client_cpu_pct / 100.0 * i.interval_s).sum();
    assert!((merged.client_cpu_s - cpu_s).abs() < 1e-9 && cpu_s > 0.0, "{} vs {cpu_s}", merged.client_cpu_s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_client_or_ctrl_c_makes_the_merged_run_incomplete() {
    let (a, a_intervals) = run(&spec(&options(2, 200.0))).await;
    let mut merge = RunMerge::new(&spec(&options(4, 400.0))).unwrap();
    for i in &a_intervals {
        merge.interval(std::slice::from_ref(i)).unwrap();
    }
    let lost = RunEnd { error: Some("client 1 lost".into()), flags: vec!["client_lost".into()], ..RunEnd::default() };
    let r = merge.finish(std::slice::from_ref(&a), lost);
    assert_eq!((r.facts.stop_reason, r.complete), (StopReason::Error, false));
    assert_eq!(r.facts.error.as_deref(), Some("client 1 lost"));
    assert_eq!(r.facts.flags.last().map(String::as_str), Some("client_lost"));
    assert_eq!(r.measured.transactions, a.measured.transactions);
    let stopped = merge.finish(&[a], RunEnd { interrupted: true, ..RunEnd::default() });
    assert_eq!((stopped.facts.stop_reason, stopped.complete), (StopReason::Interrupted, false));
}

#[test]
fn a_histogram_of_another_workload_is_refused() {
    let report = json!({"t_s": 1.0, "interval_s": 1.0, "phase": "run", "step": null, "threads_running": 1,
        "transactions": 0, "reads": 0, "writes": 0, "others": 0, "errors": 0, "reconnects": 0,
        "errors_by_code": {}, "latency_sum_ns": 0, "latency_min_ns": 0, "latency_max_ns": 0, "saturated": 0,
        "lag_sum_ns": 0, "lag_max_ns": 0, "late": 0, "client_lag_sum_ns": 0,
        "latency_ns": {"min": 0, "mean": 0.0, "max": 0, "sum": 0, "p50": 0, "p95": 0, "p99": 0, "p99_9": 0, "pct": 0},
        "service_latency_ns": null, "lag_mean_ns": 0, "backlog": 0, "in_flight": 0, "dropped": 0,
        "client_cpu_pct": 0.0,
        "histograms": [{"tag": "new_order", "start_s": 0.0, "interval_s": 1.0, "max_ns": 0, "encoded": ""}]});
    let report: IntervalReport = serde_json::from_value(report).unwrap();
    let mut merge = RunMerge::new(&spec(&options(1, 0.0))).unwrap();
    let err = merge.interval(&[report]).unwrap_err().to_string();
    assert!(err.contains("'new_order'") && err.contains("same oltplab version"), "{err}");
}
