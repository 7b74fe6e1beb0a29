//! The JSON spec that comes in, and its validation into what the executor runs.

use serde::Deserialize;

use super::steps::StepPlan;
use crate::driver::{Target, TargetOptions};
use crate::error::Result;
use crate::options::{normalise, OptDef, Options};
use crate::result::Summarising;
use crate::workload::Workload;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub workload: String,
    pub db: String,
    #[serde(default)]
    pub options: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub target: TargetOptions,
    /// Distributed runs: the wall-clock instant (seconds since the epoch, on this host's clock)
    /// at which the load starts. The connections open first, then wait for it, so that every
    /// client starts, and numbers its intervals, from the same instant.
    #[serde(default)]
    pub start_at: Option<f64>,
    /// Distributed open loop: seconds by which this client's arrival schedule is shifted, so that
    /// N clients' uniform arrivals interleave (client i by i / total rate) instead of coinciding.
    #[serde(default)]
    pub arrival_phase_s: Option<f64>,
    /// Distributed prepare: the prepare units (tables, 1-based) this client builds; all when absent.
    #[serde(default)]
    pub units: Option<Vec<usize>>,
    /// Distributed prepare, guarded as a whole by the unfinished-prepare marker: one client runs
    /// `begin` (undo an unfinished prepare or refuse existing tables, then set the marker), every
    /// client loads its `units`, and one client runs `end` (drop the marker) once all of them loaded.
    #[serde(default)]
    pub prepare_step: Option<PrepareStep>,
    /// Distributed run: this client's threads are numbered from `first` among `all` threads of
    /// every client, so that what depends on the thread number (TPC-C's home warehouses,
    /// `bulk_insert`'s tables, sysbench's per-thread key slices) is dealt as by one process.
    #[serde(default)]
    pub workers: Option<WorkerNumbers>,
}

/// See `Spec::workers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerNumbers {
    pub first: usize,
    pub all: usize,
}

/// A distributed prepare's marker steps (see `Spec::prepare_step`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrepareStep {
    Begin,
    End,
}

/// How the load is shaped: sysbench's general options.
#[derive(Debug, Clone)]
pub struct LoadShape {
    pub threads: usize,
    /// 0: no time limit.
    pub time_s: f64,
    /// 0: no event limit.
    pub events: u64,
    /// Length of an interval in intervals.csv and the hlog (and of the printed lines).
    pub report_interval_s: f64,
    /// The percentile sysbench prints (0 disables it): the first of `percentiles`.
    pub percentile: f64,
    /// Every percentile asked for, in order (empty when disabled).
    pub percentiles: Vec<f64>,
    pub histogram: bool,
    pub rand_seed: u64,
    /// Warm-up before the measured time.
    pub warmup_s: f64,
    /// Open loop when > 0. With `--rate-steps`, the mean of the steps: the target over the measured time.
    pub rate_per_s: f64,
    pub arrivals: super::schedule::Arrivals,
    pub max_backlog: usize,
    /// `--rate-steps`/`--thread-steps`: then `threads` is the largest step's and `time_s` the plan's.
    pub plan: Option<StepPlan>,
}

impl LoadShape {
    /// sysbench's general options, with oltplab's defaults where they differ (`report_interval`).
    pub fn defs() -> Vec<OptDef> {
        vec![
            OptDef::int("threads", 1, 1, 1_000_000, "number of threads (connections) to use"),
            OptDef::float("time", 10.0, 0.0, 1e9, "limit for total execution time in seconds; 0: no limit"),
            OptDef::int("events", 0, 0, i64::MAX, "limit for total number of events; 0: no limit"),
            OptDef::float(
                "warmup_time",
                0.0,
                0.0,
                1e9,
                "seconds of load before the measured --time: stored, marked as warm-up and left out of the summary",
            ),
            OptDef::float(
                "rate",
                0.0,
                0.0,
                1e9,
                "target transaction rate per second (open loop: latency runs from each transaction's intended \
                 start); 0: closed loop, each connection runs transactions back to back",
            ),
            OptDef::choice("rate_arrivals", "poisson", &["poisson", "uniform"], "arrival process of --rate"),
            OptDef::list(
                "rate_steps",
                "",
                "a step plan of target rates (open loop), as 100,200,400: each step runs --step-time seconds and \
                 is a segment of the run with its own summary",
            ),
            OptDef::list(
                "thread_steps",
                "",
                "a step plan of active connections, as 1,4,16: the largest step's are opened up front, the others \
                 idle until a step needs them; with --rate-steps, one value per rate step",
            ),
            OptDef::float(
                "step_time",
                0.0,
                0.0,
                1e9,
                "seconds per step of --rate-steps or --thread-steps; the measured time is then steps × step time \
                 (--time must be 0 or equal to it); --warmup-time runs first, at the first step",
            ),
            OptDef::int(
                "rate_backlog",
                0,
                0,
                i64::MAX,
                "most arrivals that may wait for a free connection in open loop; older ones are dropped and \
                 counted; 0: ten seconds of arrivals, at least 10000",
            ),
            OptDef::float(
                "report_interval",
                1.0,
                0.0,
                86_400.0,
                "report intermediate statistics every N seconds (sub-second allowed); 0 disables the printed \
                 lines, the run directory then keeps 1-second intervals",
            ),
            OptDef::list(
                "percentile",
                "95",
                "percentile(s) to print in latency statistics: one (95) or a list (50,95,99,99.9), 0-100, \
                 fractions allowed; interval lines show the first; 0 disables them",
            ),
            OptDef::bool("histogram", false, "print the latency histogram in the report"),
            OptDef::choice("db_ps_mode", "auto", &["auto", "disable"], "prepared statements usage mode"),
            OptDef::list(
                "mysql_ignore_errors",
                crate::driver::target_defaults::MYSQL_IGNORE_ERRORS,
                "list of MySQL errors that make the event retry (after a ROLLBACK), or \"all\"",
            ),
            OptDef::choice(
                "sql_log",
                "",
                &[],
                "debugging: append every statement the database executes, with its parameters, to this \
                 file (SQLite; slows the run)",
            ),
            OptDef::choice(
                "db_password_file",
                "",
                &[],
                "read the server's password from this file (its first line) when --db holds none; else \
                 OLTPLAB_DB_PASSWORD, MYSQL_PWD or PGPASSWORD, or ~/.pgpass are read (docs/security.md)",
            ),
        ]
    }

    /// `given`: whether the user set an option (the step plan checks `--threads` and `--time` only then).
    fn from_options(o: &Options, given: &dyn Fn(&str) -> bool) -> Result<Self> {
        let percentiles = parse_percentiles(o.str("percentile"))?;
        let plan = StepPlan::from_options(o, given)?;
        let peak_rate_per_s = plan.as_ref().map_or(0.0, StepPlan::max_rate_per_s).max(o.float("rate"));
        Ok(Self {
            threads: plan.as_ref().map_or(o.uint("threads") as usize, StepPlan::max_threads),
            time_s: plan.as_ref().map_or(o.float("time"), StepPlan::measured_s),
            events: o.uint("events"),
            report_interval_s: o.float("report_interval"),
            percentile: percentiles.first().copied().unwrap_or(0.0),
            percentiles,
            histogram: o.flag("histogram"),
            rand_seed: o.uint("rand_seed"),
            warmup_s: o.float("warmup_time"),
            rate_per_s: plan.as_ref().map_or(o.float("rate"), StepPlan::mean_rate_per_s),
            arrivals: if o.str("rate_arrivals") == "uniform" {
                super::schedule::Arrivals::Uniform
            } else {
                super::schedule::Arrivals::Poisson
            },
            max_backlog: match o.uint("rate_backlog") {
                0 => ((peak_rate_per_s * 10.0) as usize).max(10_000),
                n => n as usize,
            },
            plan,
        })
    }

    pub fn is_open_loop(&self) -> bool {
        self.rate_per_s > 0.0
    }

    /// How the run's intervals and result are summarised.
    pub fn summarising(&self) -> Summarising {
        Summarising {
            percentiles: self.percentiles.clone(),
            open_loop: self.is_open_loop(),
            histogram_ms: self.histogram,
        }
    }

    /// The interval length actually recorded.
    pub fn interval_s(&self) -> f64 {
        if self.report_interval_s > 0.0 {
            self.report_interval_s.max(0.01)
        } else {
            1.0
        }
    }
}

/// A validated spec.
pub struct Resolved {
    pub workload: Workload,
    pub load: LoadShape,
    pub target: Target,
    pub options: Options,
}

impl Spec {
    pub fn from_json(json: &str) -> Result<Self> {
        Ok(serde_json::from_str(json)?)
    }

    pub fn resolve(&self) -> Result<Resolved> {
        let mut defs = LoadShape::defs();
        defs.extend(Workload::defs(&self.workload)?);
        let mut options = Options::parse(&defs, &self.options, &self.workload)?;
        let given = |name: &str| self.options.keys().any(|k| normalise(k) == name);
        let mut load = LoadShape::from_options(&options, &given)?;
        if load.rand_seed == 0 {
            // sysbench seeds from the clock when --rand-seed is 0; record the seed used so the run can be repeated.
            load.rand_seed = clock_seed();
        }
        options.force("rand_seed", load.rand_seed);
        if load.plan.is_some() {
            // What the plan implies is recorded, and the recorded options repeat the run.
            options.force("threads", load.threads as u64);
            options.force("time", load.time_s);
        }
        let workload = Workload::new(&self.workload, &options, load.threads)?;
        let mut target_options = self.target.clone();
        if !options.str("sql_log").is_empty() {
            target_options.sql_log = Some(options.str("sql_log").into());
        }
        if !options.str("db_password_file").is_empty() {
            target_options.password_file = Some(options.str("db_password_file").into());
        }
        target_options.db_ps_mode = options.str("db_ps_mode").to_string();
        target_options.mysql_ignore_errors = options.str("mysql_ignore_errors").to_string();
        let target = Target::parse(&self.db, &target_options)?;
        Ok(Resolved { workload, load, target, options })
    }
}

/// `95` or `50,95,99,99.9`; `0` disables percentiles.
fn parse_percentiles(text: &str) -> Result<Vec<f64>> {
    let bad = |item: &str| {
        crate::error::EngineError::config(format!(
            "--percentile: '{item}' is not a number from 0 to 100; give one (95) or a list (50,95,99,99.9)"
        ))
    };
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let p: f64 = item.parse().map_err(|_| bad(item))?;
        if !(0.0..=100.0).contains(&p) {
            return Err(bad(item));
        }
        if p > 0.0 {
            out.push(p);
        }
    }
    Ok(out)
}

fn clock_seed() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (now.as_secs() << 20) ^ u64::from(now.subsec_nanos())
}

/// Step plans as the spec reads them from the general options.
#[cfg(test)]
mod step_plan_tests {
    use super::*;
    use crate::exec::steps::Step;
    use serde_json::json;

    fn plan(given: &serde_json::Value) -> Result<Option<StepPlan>> {
        let o = Options::parse(&LoadShape::defs(), given.as_object().unwrap(), "w").unwrap();
        let names: Vec<String> = given.as_object().unwrap().keys().cloned().collect();
        StepPlan::from_options(&o, &|n| names.iter().any(|g| g == n))
    }

    fn err(given: &serde_json::Value) -> String {
        plan(given).unwrap_err().to_string()
    }

    #[test]
    fn rate_steps_keep_the_threads_and_time_follows_the_plan() {
        let p = plan(&json!({"rate_steps": "100, 200,400", "step_time": 30, "threads": 8})).unwrap().unwrap();
        assert_eq!(p.steps.iter().map(|s| s.rate_per_s).collect::<Vec<_>>(), [100.0, 200.0, 400.0]);
        assert!(p.steps.iter().all(|s| s.threads == 8));
        assert!((p.measured_s() - 90.0).abs() < 1e-9);
        assert!((p.mean_rate_per_s() - 700.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn thread_steps_keep_the_rate_and_accept_a_matching_time() {
        let p = plan(&json!({"thread_steps": "1,4", "step_time": 2, "rate": 50, "time": 4})).unwrap().unwrap();
        assert_eq!(p.steps, [Step { rate_per_s: 50.0, threads: 1 }, Step { rate_per_s: 50.0, threads: 4 }]);
        assert_eq!(p.max_threads(), 4);
        assert!(plan(&json!({"thread_steps": "1,4", "step_time": 2, "threads": 4, "time": 0})).unwrap().is_some());
        assert!(plan(&json!({})).unwrap().is_none());
    }

    #[test]
    fn bad_combinations_say_what_to_change() {
        assert!(err(&json!({"rate_steps": "100,x", "step_time": 1})).contains("'x' is not a rate above 0"));
        assert!(err(&json!({"thread_steps": "0", "step_time": 1})).contains("'0' is not a whole number"));
        assert!(err(&json!({"rate_steps": "100"})).contains("--rate-steps needs --step-time"));
        assert!(err(&json!({"step_time": 5})).contains("--step-time needs --rate-steps or --thread-steps"));
        assert!(err(&json!({"rate_steps": "1,2", "thread_steps": "1", "step_time": 1})).contains("same number"));
        assert!(err(&json!({"rate_steps": "1", "rate": 5, "step_time": 1})).contains("drop --rate"));
        assert!(err(&json!({"rate_steps": "1", "events": 5, "step_time": 1})).contains("drop --events"));
        assert!(err(&json!({"thread_steps": "1,4", "threads": 2, "step_time": 1})).contains("drop --threads"));
        let e = err(&json!({"rate_steps": "1,2,3", "step_time": 30, "time": 60}));
        assert!(e.contains("3 steps × 30 s = 90 s") && e.contains("--time 90"), "{e}");
    }
}
