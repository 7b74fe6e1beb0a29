//! A script run's Lua states (docs/lua.md, "How it runs"), on the fake driver: no server.
//! A test binary of its own, since it sets the process's engine threads.

use oltplab_engine::exec::{Sink, Spec, Stop};
use oltplab_engine::result::RunResult;
use oltplab_engine::script;
use serde_json::json;
use tokio::sync::mpsc;

/// Runs `script` (a file of that text) with `threads` sysbench threads for `events` events on
/// one engine thread.
fn run(name: &str, script: &str, threads: u64, events: u64) -> RunResult {
    static ONE_ENGINE_THREAD: std::sync::Once = std::sync::Once::new();
    // Once, before any test reads it (every test of this binary comes here first).
    ONE_ENGINE_THREAD.call_once(|| std::env::set_var("TOKIO_WORKER_THREADS", "1"));
    let dir = std::env::temp_dir().join(format!("oltplab-script-states-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.lua"));
    std::fs::write(&path, script).unwrap();
    let path = path.display().to_string();
    let spec = Spec::from_json(
        &json!({
            "workload": "",
            "db": "fake://?latency_us=5000",
            "options": {"threads": threads, "events": events, "time": 0, "report_interval": 0},
            "script": {"path": path, "command": "run", "argv": ["sysbench", path, "run"], "args": {}},
        })
        .to_string(),
    )
    .unwrap();
    let (tx, _rx) = mpsc::unbounded_channel();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let result = runtime.block_on(script::run(&spec, &Sink::new(tx), Stop::new()));
    let _ = std::fs::remove_dir_all(&dir);
    result.unwrap()
}

/// Every Lua value Rust holds takes a slot of its state's reference stack, which LuaJIT caps at
/// 8,000, and a waiting sysbench thread holds several: one state for all of an engine thread's
/// connections panicked from 2,048 connections on. The run spreads them over states of 256.
#[test]
fn thousands_of_connections_share_one_engine_thread() {
    // Each thread keeps a connection and a prepared statement, and waits in it.
    let script = "function thread_init()\n  con = sysbench.sql.driver():connect()\n  \
                  stmt = con:prepare('SELECT 1')\nend\nfunction event()\n  stmt:execute()\nend\n";
    let result = run("many", script, 3_000, 6_000);
    assert_eq!(result.facts.error, None);
    assert_eq!(result.measured.transactions, 6_000);
}

/// Once the threads started, a state collects at a pause of 100 (Lua's default of 200 let a
/// run's heap grow to 1.6 times its live data), unless the script set a pause of its own.
#[test]
fn the_run_collects_sooner_unless_the_script_chose() {
    let event = "function event()\n  local pause = collectgarbage('setpause', EXPECTED)\n  \
                 if pause ~= EXPECTED then error('the pause is ' .. pause) end\nend\n";
    let ours = format!("EXPECTED = 100\n{event}");
    let theirs = format!("EXPECTED = 150\nfunction thread_init() collectgarbage('setpause', 150) end\n{event}");
    for script in [ours, theirs] {
        let result = run("pause", &script, 4, 40);
        assert_eq!(result.facts.error, None, "{script}");
        assert_eq!(result.measured.transactions, 40);
    }
}

/// What `thread_init` leaves behind is collected before the first event, in a full cycle that
/// starts the run's pause at the live data (the cycle under way would let the heap double).
#[test]
fn thread_init_garbage_is_collected_before_the_run() {
    let script = "function thread_init()\n  local junk = {}\n  for i = 1, 100000 do junk[i] = { i } end\nend\n\
                  function event()\n  local kb = collectgarbage('count')\n  \
                  if kb > 4096 then error('the heap holds ' .. kb .. ' KB') end\nend\n";
    let result = run("init_garbage", script, 4, 8);
    assert_eq!(result.facts.error, None);
    assert_eq!(result.measured.transactions, 8);
}

/// A script's loop starts its next event itself when nothing needs to wait (`script/next_call.rs`,
/// `exec/back_to_back.rs`): each event is still recorded once, `--events` is exact, and a loop
/// that never waits (no statement) still hands its engine thread to the others in turn.
#[test]
fn events_started_back_to_back_are_each_recorded_and_share_the_thread() {
    let script = "function event()\n  local x = 0\n  for i = 1, 10 do x = x + i end\nend\n";
    let result = run("back_to_back", script, 3, 3_001);
    assert_eq!(result.facts.error, None);
    assert_eq!(result.measured.transactions, 3_001);
    let per_thread: Vec<u64> = result.facts.threads.iter().map(|t| t.events).collect();
    assert_eq!(per_thread.iter().sum::<u64>(), 3_001, "{per_thread:?}");
    assert!(per_thread.iter().all(|&n| n > 0), "a thread never ran: {per_thread:?}");
    let latency_sum_ns: u64 = result.facts.threads.iter().map(|t| t.latency_sum_ns).sum();
    assert!(latency_sum_ns > 0);
}
