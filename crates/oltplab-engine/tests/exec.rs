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

/// Engine threads for these runs: more than one (the default on machines of up to 4 cores), so
/// that connections are spread over threads; the Python tests run the default.
const ENGINE_THREADS: usize = 2;

async fn run_collect(spec: &Spec, stop: Stop) -> (RunResult, Vec<Progress>) {
    run_on(spec, stop, ENGINE_THREADS).await
}

async fn run_on(spec: &Spec, stop: Stop, threads: usize) -> (RunResult, Vec<Progress>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = exec::run_on_threads(spec, &Sink::new(tx), stop, threads).await.unwrap();
    let mut events = Vec::new();
    while let Ok(p) = rx.try_recv() {
        events.push(p);
    }
    (result, events)
}

fn intervals(events: &[Progress]) -> Vec<&oltplab_engine::result::IntervalReport> {
    events.iter().filter_map(|p| if let Progress::Interval(i) = p { Some(i.as_ref()) } else { None }).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_limit_is_exact_and_intervals_add_up() {
    let s =
        spec("oltp_read_write", "fake://", &json!({"threads": 4, "events": 500, "time": 0, "report_interval": 0.05}));
    let (r, events) = run_collect(&s, Stop::new()).await;
    assert_eq!(r.facts.stop_reason, StopReason::Events);
    assert!(r.complete);
    assert_eq!(r.measured.transactions, 500);
    assert_eq!(r.facts.threads.iter().map(|t| t.events).sum::<u64>(), 500);
    // sysbench's counts per oltp_read_write event: 14 reads, 4 writes, 2 others.
    assert_eq!(
        (r.measured.queries.read, r.measured.queries.write, r.measured.queries.other),
        (14 * 500, 4 * 500, 2 * 500)
    );
    let iv = intervals(&events);
    assert!(!iv.is_empty());
    assert_eq!(iv.iter().map(|i| i.counts.transactions).sum::<u64>(), 500);
    assert_eq!(iv.iter().map(|i| i.counts.reads).sum::<u64>(), r.measured.queries.read);
    let covered: f64 = iv.iter().map(|i| i.interval_s).sum();
    assert!((covered - r.facts.duration_s).abs() < 0.01, "{covered} vs {}", r.facts.duration_s);
    assert!(
        r.measured.latency_ns.min <= r.measured.latency_ns.p50
            && r.measured.latency_ns.p99 <= r.measured.latency_ns.max
    );
    assert!(matches!(events.first(), Some(Progress::Started { threads: 4, .. })));
}

/// Seven connections over one and over three engine threads: the same exact totals, every
/// connection ran events, and none ran a statement off its thread (the fake fails it).
#[tokio::test]
async fn connections_spread_over_engine_threads_count_as_on_one() {
    let s = spec("oltp_read_only", "fake://?latency_us=50", &json!({"threads": 7, "events": 700, "time": 0}));
    for threads in [1, 3] {
        let (r, _) = run_on(&s, Stop::new(), threads).await;
        assert_eq!((r.facts.stop_reason, r.facts.error.as_deref()), (StopReason::Events, None), "{threads} threads");
        assert_eq!(r.measured.transactions, 700);
        assert_eq!(r.facts.threads.len(), 7);
        assert!(r.facts.threads.iter().all(|t| t.events > 0), "{:?}", r.facts.threads);
        assert_eq!(r.facts.threads.iter().map(|t| t.events).sum::<u64>(), 700);
        assert_eq!(r.measured.queries.total, 16 * 700);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignorable_errors_are_counted_and_the_event_retried() {
    // Every 37th statement fails: about half the 16-statement events need a retry, all 200 complete.
    let s = spec("oltp_read_only", "fake://?fail_every=37", &json!({"threads": 2, "events": 200, "time": 0}));
    let (r, _) = run_collect(&s, Stop::new()).await;
    assert_eq!(r.measured.transactions, 200);
    assert!(r.measured.errors.total > 0);
    assert_eq!(r.measured.errors.by_code["FAKE"], r.measured.errors.total);
    // Failed attempts' queries are counted too, so there are more than 16 per event.
    assert!(r.measured.queries.total > 16 * 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_limit_ends_the_run() {
    let s = spec("oltp_point_select", "fake://?latency_us=100", &json!({"threads": 2, "time": 0.3}));
    let (r, events) = run_collect(&s, Stop::new()).await;
    assert_eq!(r.facts.stop_reason, StopReason::Time);
    assert!(r.facts.duration_s >= 0.3 && r.facts.duration_s < 1.0, "{}", r.facts.duration_s);
    assert!(r.measured.transactions > 0);
    assert_eq!(intervals(&events).iter().map(|i| i.counts.transactions).sum::<u64>(), r.measured.transactions);
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
    assert_eq!(r.facts.stop_reason, StopReason::Interrupted);
    assert!(!r.complete);
    assert!(r.measured.transactions > 0);
    assert_eq!(intervals(&events).iter().map(|i| i.counts.transactions).sum::<u64>(), r.measured.transactions);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_holds_the_target_rate() {
    let s = spec("oltp_point_select", "fake://", &json!({"threads": 2, "time": 1, "rate": 400}));
    let (r, events) = run_collect(&s, Stop::new()).await;
    assert!((340..=460).contains(&r.measured.transactions), "{}", r.measured.transactions);
    assert_eq!(r.measured.dropped, 0);
    assert!(r.measured.service_latency_ns.is_some());
    let iv = intervals(&events);
    assert!(iv.iter().all(|i| i.service_latency_ns.is_some()));
    assert!(iv[0].histograms.iter().any(|h| h.tag.as_deref() == Some("service")));
}

/// One statement stalls 500 ms: in open loop the arrivals that queue behind it see it in their
/// response time, the service time does not; in closed loop one slow transaction hides it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_response_time_covers_a_stall_that_closed_loop_hides() {
    let db = "fake://?latency_us=1000&stall_at=50&stall_ms=500";
    let open =
        spec("oltp_point_select", db, &json!({"threads": 1, "time": 2, "rate": 100, "rate_arrivals": "uniform"}));
    let (r, _) = run_collect(&open, Stop::new()).await;
    let service = r.measured.service_latency_ns.unwrap();
    assert!(r.measured.latency_ns.p99 >= 400_000_000, "response p99 {} ns", r.measured.latency_ns.p99);
    assert!(service.p99 < 100_000_000, "service p99 {} ns", service.p99);
    assert!(r.measured.late > 10, "{}", r.measured.late);

    let closed = spec("oltp_point_select", db, &json!({"threads": 1, "time": 2}));
    let (c, _) = run_collect(&closed, Stop::new()).await;
    assert!(c.measured.latency_ns.max >= 500_000_000);
    assert!(c.measured.latency_ns.p99 < 100_000_000, "closed-loop p99 {} ns", c.measured.latency_ns.p99);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warmup_is_reported_but_left_out_of_the_summary() {
    let s = spec(
        "oltp_point_select",
        "fake://?latency_us=500",
        &json!({"threads": 2, "time": 0.6, "warmup_time": 0.4, "report_interval": 0.25}),
    );
    let (r, events) = run_collect(&s, Stop::new()).await;
    let iv = intervals(&events);
    let warm: u64 =
        iv.iter().filter(|i| i.phase == oltplab_engine::result::Phase::Warmup).map(|i| i.counts.transactions).sum();
    let measured: u64 =
        iv.iter().filter(|i| i.phase == oltplab_engine::result::Phase::Run).map(|i| i.counts.transactions).sum();
    assert!(warm > 0);
    assert_eq!(measured, r.measured.transactions);
    assert!((r.facts.duration_s - 0.6).abs() < 0.1, "{}", r.facts.duration_s);
    assert_eq!(r.facts.threads.iter().map(|t| t.events).sum::<u64>(), r.measured.transactions);
    // The warm-up ends on an interval boundary: 0.25, 0.4, then measured intervals from 0.4.
    let warm_end =
        iv.iter().filter(|i| i.phase == oltplab_engine::result::Phase::Warmup).map(|i| i.t_s).fold(0.0, f64::max);
    assert!((warm_end - 0.4).abs() < 0.05, "{warm_end}");
}

fn tps(s: &oltplab_engine::result::Segment) -> f64 {
    s.measured.transactions as f64 / s.duration_s
}

/// A rate plan after a warm-up: each step is a segment of whole intervals with its own totals.
/// (Uniform arrivals: Poisson counts over one second vary by ±10% at 100/s.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_steps_are_separate_segments() {
    let options = json!({
        "threads": 4, "rate_steps": "100,300", "step_time": 1, "warmup_time": 0.5, "report_interval": 0.3,
        "rate_arrivals": "uniform",
    });
    let s = spec("oltp_point_select", "fake://?latency_us=200", &options);
    let (r, events) = run_collect(&s, Stop::new()).await;
    assert_eq!(r.facts.stop_reason, StopReason::Time);
    assert!((r.facts.duration_s - 2.0).abs() < 0.1, "{}", r.facts.duration_s);
    assert!((r.facts.rate_per_s - 200.0).abs() < 1e-9, "the mean target: {}", r.facts.rate_per_s);
    assert_eq!(r.facts.options.as_map()["time"], json!(2.0));
    let segments = r.facts.segments.as_ref().expect("a plan has segments");
    assert_eq!(
        segments.iter().map(|s| (s.step, s.rate_per_s, s.threads)).collect::<Vec<_>>(),
        [(0, 100.0, 4), (1, 300.0, 4)]
    );
    assert!((75.0..=125.0).contains(&tps(&segments[0])), "{}", tps(&segments[0]));
    assert!((250.0..=350.0).contains(&tps(&segments[1])), "{}", tps(&segments[1]));
    assert!(segments
        .iter()
        .all(|s| s.measured.service_latency_ns.is_some() && s.measured.latency_ns.max <= r.measured.latency_ns.max));
    assert_eq!(segments.iter().map(|s| s.measured.transactions).sum::<u64>(), r.measured.transactions);
    // Segments tile the measured time: the first starts as the warm-up ends, each where the last ended.
    assert!((segments[0].start_s - 0.5).abs() < 0.05, "{}", segments[0].start_s);
    assert!((segments[1].start_s - segments[0].end_s).abs() < 1e-9);
    assert!((segments[1].start_s - 1.5).abs() < 0.05, "{}", segments[1].start_s);

    let iv = intervals(&events);
    assert!(iv.iter().filter(|i| i.phase == oltplab_engine::result::Phase::Warmup).all(|i| i.step.is_none()));
    for seg in segments {
        let mine: Vec<_> = iv.iter().filter(|i| i.step == Some(seg.step)).collect();
        assert!(mine.len() >= 4, "step {}: {} intervals", seg.step, mine.len());
        assert_eq!(mine.iter().map(|i| i.counts.transactions).sum::<u64>(), seg.measured.transactions);
        assert_eq!(mine.iter().map(|i| i.counts.reads).sum::<u64>(), seg.measured.queries.read);
        assert!((mine.last().unwrap().t_s - seg.end_s).abs() < 1e-9);
    }
}

/// A thread plan on a fake with a fixed latency: four connections do about four times the work of one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thread_steps_change_the_active_connections() {
    let s = spec(
        "oltp_point_select",
        "fake://?latency_us=5000",
        &json!({"thread_steps": "1,4", "step_time": 1, "report_interval": 0.25}),
    );
    let (r, events) = run_collect(&s, Stop::new()).await;
    assert!(
        matches!(events.first(), Some(Progress::Started { threads: 4, .. })),
        "the largest step's connections open"
    );
    assert_eq!(r.facts.threads.len(), 4);
    let segments = r.facts.segments.as_ref().unwrap();
    assert_eq!(segments.iter().map(|s| s.threads).collect::<Vec<_>>(), [1, 4]);
    assert!(segments.iter().all(|s| s.measured.service_latency_ns.is_none()));
    let ratio = tps(&segments[1]) / tps(&segments[0]);
    assert!((3.0..=5.0).contains(&ratio), "{} vs {} tps", tps(&segments[1]), tps(&segments[0]));
    // The intervals that end before the connections do (at the 2 s deadline).
    let iv = intervals(&events);
    let full: Vec<_> = iv.iter().filter(|i| i.t_s < 1.9).collect();
    assert!(full.iter().filter(|i| i.step == Some(0)).all(|i| i.threads_running == 1));
    assert!(full.iter().filter(|i| i.step == Some(1)).all(|i| i.threads_running == 4));
}

#[tokio::test]
async fn a_bad_step_plan_is_a_config_error() {
    for (options, message) in [
        (json!({"rate_steps": "100,200"}), "--rate-steps needs --step-time"),
        (json!({"thread_steps": "1,2", "step_time": 5, "time": 7}), "give --time 10"),
        (json!({"rate_steps": "100", "rate": 50, "step_time": 1}), "drop --rate"),
    ] {
        let s = spec("oltp_point_select", "fake://", &options);
        let e = exec::run(&s, &Sink::none(), Stop::new()).await.unwrap_err();
        assert!(matches!(e, oltplab_engine::EngineError::Config(_)), "{e:?}");
        assert!(e.to_string().contains(message), "{e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_plan_there_are_no_segments() {
    let s = spec("oltp_point_select", "fake://", &json!({"events": 10, "time": 0}));
    let (r, events) = run_collect(&s, Stop::new()).await;
    assert!(r.facts.segments.is_none());
    assert!(intervals(&events).iter().all(|i| i.step.is_none()));
}

/// A stall that runs past the end of --time: the arrivals scheduled before the end still run
/// (late), so the stall shows in the numbers instead of vanishing with the discarded backlog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_runs_every_arrival_scheduled_before_the_end() {
    let db = "fake://?stall_at=80&stall_ms=600";
    let s = spec("oltp_point_select", db, &json!({"threads": 1, "time": 1, "rate": 100, "rate_arrivals": "uniform"}));
    let (r, _) = run_collect(&s, Stop::new()).await;
    // Arrivals at 10 ms, 20 ms, ... 990 ms: 99 of them are before the end at 1 s.
    assert!((99..=100).contains(&r.measured.transactions), "{}", r.measured.transactions);
    assert!(r.measured.latency_ns.p99 >= 300_000_000, "response p99 {} ns", r.measured.latency_ns.p99);
    assert!(r.facts.duration_s >= 1.4, "{}", r.facts.duration_s);
}

/// A server that keeps answering, only slower than the arrivals, leaves a backlog that takes
/// longer than the 10-s grace to drain after --time: it is drained (the grace runs from the
/// last answer), not abandoned as if the server had hung.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overloaded_server_that_still_answers_drains_its_backlog() {
    // One connection at 100 ms a transaction serves 10/s; 150/s for 1 s leaves ~140 arrivals
    // at the end: 14 s of draining.
    let db = "fake://?latency_us=100000";
    let options = json!({"threads": 1, "time": 1, "rate": 150, "rate_arrivals": "uniform"});
    let (r, _) = run_collect(&spec("oltp_point_select", db, &options), Stop::new()).await;
    assert_eq!(r.facts.stop_reason, StopReason::Time, "{:?}", r.facts.error);
    assert!((149..=150).contains(&r.measured.transactions), "{}", r.measured.transactions);
    assert!(r.facts.duration_s > 12.0, "{}", r.facts.duration_s);
    assert!(r.measured.latency_ns.max >= 12_000_000_000, "response max {} ns", r.measured.latency_ns.max);
}

/// The server goes away for good mid-run: the run still ends at --time, complete, with the
/// lost connections counted, instead of reconnecting for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_comes_back_does_not_hold_the_run_past_its_time() {
    let s = spec("oltp_point_select", "fake://?latency_us=100&down_at=20", &json!({"threads": 2, "time": 0.5}));
    let started = Instant::now();
    let (r, _) = run_collect(&s, Stop::new()).await;
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(r.facts.stop_reason, StopReason::Time);
    assert!(r.measured.errors.by_code["FAKE_GONE"] >= 2);
    assert_eq!(r.measured.reconnects, r.measured.errors.by_code["FAKE_GONE"]);
}
