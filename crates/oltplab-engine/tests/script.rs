//! sysbench scripts on real servers through the engine's script runtime: Debian's own scripts
//! (copied under names that are not built-in workloads) and small scripts of our own. Runs when
//! `OLTPLAB_TEST_MYSQL_URL` / `OLTPLAB_TEST_PG_URL` name servers (tests/common/mod.rs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use oltplab_engine::exec::{Progress, Sink, Stop};
use oltplab_engine::script::{self, harness, CommandSpec, ScriptSpec};
use tokio::sync::mpsc;

mod common;

/// The tests share the servers' tables: one at a time.
static SERVER: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("oltplab-script-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    /// A Debian script copied under another name, with `oltp_common` beside it.
    fn debian(&self, script: &str, as_name: &str) -> String {
        let from = Path::new("/usr/share/sysbench");
        std::fs::copy(from.join("oltp_common.lua"), self.0.join("oltp_common.lua")).unwrap();
        let to = self.0.join(as_name);
        std::fs::copy(from.join(script), &to).unwrap();
        to.display().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn spec(path: &str, command: &str, db: &str, threads: u64, args: &[(&str, Option<&str>)]) -> CommandSpec {
    CommandSpec {
        script: ScriptSpec {
            path: path.to_owned(),
            name: None,
            command: Some(command.to_owned()),
            argv: vec!["sysbench".into(), path.to_owned(), command.to_owned()],
            args: args.iter().map(|(n, v)| ((*n).to_owned(), v.map(str::to_owned))).collect::<BTreeMap<_, _>>(),
        },
        db: db.to_owned(),
        options: serde_json::json!({"threads": threads}).as_object().unwrap().clone(),
        target: oltplab_engine::driver::TargetOptions::default(),
    }
}

/// A sink and what came through it: the script's output, and its FATAL lines.
struct Collected {
    sink: Sink,
    rx: mpsc::UnboundedReceiver<Progress>,
}

impl Collected {
    fn new() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self { sink: Sink::new(tx), rx }
    }

    fn output(&mut self) -> (String, Vec<String>) {
        let (mut out, mut log) = (String::new(), Vec::new());
        while let Ok(p) = self.rx.try_recv() {
            match p {
                Progress::Output { text } => out.push_str(&text),
                Progress::Log { text, .. } => log.push(text),
                _ => {}
            }
        }
        (out, log)
    }
}

fn oltp_read_only_runs_unmodified(url: &str) {
    let dir = Dir::new("ro");
    let path = dir.debian("oltp_read_only.lua", "my_read_only.lua");
    let data = [("tables", Some("2")), ("table_size", Some("100"))];
    let mut c = Collected::new();
    let stop = Stop::new();
    script::command(&spec(&path, "cleanup", url, 1, &data), &c.sink, &stop).unwrap();
    c.output();
    let done = script::command(&spec(&path, "prepare", url, 2, &data), &c.sink, &stop).unwrap();
    assert!(done.ok);
    let (out, log) = c.output();
    assert!(log.is_empty(), "{log:?}");
    for line in [
        "Creating table 'sbtest1'...",
        "Inserting 100 records into 'sbtest2'",
        "Creating a secondary index on 'sbtest2'...",
    ] {
        assert!(out.contains(line), "{line} not in {out}");
    }
    let counts = harness::run(&spec(&path, "run", url, 2, &data), 40, Duration::from_secs(60), &c.sink).unwrap();
    assert_eq!(counts.events, 40);
    // oltp_read_only: BEGIN, 10 point selects, 4 ranges, COMMIT per event.
    assert_eq!((counts.in_events.reads, counts.in_events.writes, counts.in_events.others), (40 * 14, 0, 40 * 2));
    assert_eq!(counts.per_thread.iter().sum::<u64>(), 40);
    assert!(counts.per_thread.iter().all(|&n| n > 0), "both threads ran: {:?}", counts.per_thread);
    script::command(&spec(&path, "cleanup", url, 1, &data), &c.sink, &stop).unwrap();
    let (out, _) = c.output();
    assert!(out.contains("Dropping table 'sbtest2'..."), "{out}");
}

#[test]
fn debian_oltp_read_only_on_mysql() {
    let Some(url) = common::server_url("OLTPLAB_TEST_MYSQL_URL") else { return };
    let _one = SERVER.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    oltp_read_only_runs_unmodified(&url);
}

#[test]
fn debian_oltp_read_only_on_postgres() {
    let Some(url) = common::server_url("OLTPLAB_TEST_PG_URL") else { return };
    let _one = SERVER.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    oltp_read_only_runs_unmodified(&url);
}

#[test]
fn a_lua_error_names_the_script_line_and_per_thread_globals_stay_apart() {
    let dir = Dir::new("errors");
    let path = dir.file(
        "t.lua",
        "function thread_init() mine = sysbench.tid * 10 end\n\
         function event()\n  assert(mine == sysbench.tid * 10, 'globals leaked')\n  if sysbench.tid == 1 then local x = nil; return x.y end\nend\n",
    );
    let c = Collected::new();
    let e = harness::run(&spec(&path, "run", "fake://", 2, &[]), 100, Duration::from_secs(10), &c.sink).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("`thread_run' function failed: {path}:4: attempt to index local 'x' (a nil value)")
    );
}
