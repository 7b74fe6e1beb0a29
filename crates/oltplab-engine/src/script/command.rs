//! What sysbench runs outside its event loop: reading a script (its options, commands and
//! functions), `help`, `prepare`, `cleanup` and custom commands. As in sysbench, the main state
//! is thread 0, and a parallel custom command (`oltp_common`'s `prepare`) runs on `--threads` OS
//! threads, each with a Lua state of its own: these are short, and a blocking call in one
//! (sysbench-tpcc's `os.execute("sleep 30")`) holds up nothing else.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{ObjectLike, Table};

use super::ctx::{Dists, LocalFuture, Output, Pacer, StateShared};
use super::errors::one_line;
use super::host::{Host, OptValue, ThreadEnv};
use super::options::{export, help_text, invalid_option, is_general, ArgType, ScriptOption};
use super::CommandSpec;
use crate::driver::Target;
use crate::error::{EngineError, Result};
use crate::exec::{LogLevel, Progress, Sink, Stop};
use crate::options::Options;
use crate::rand::{Distribution, Rng, UniqueSeq};
use crate::stats::Tally;

/// What a script defines, read from its top level in thread 0's state.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Description {
    /// `sysbench.cmdline.options`; None when the script declares none (it then takes any option).
    pub options: Option<Vec<ScriptOption>>,
    /// Custom commands: name -> whether it runs on every thread (`PARALLEL_COMMAND`).
    pub commands: BTreeMap<String, bool>,
    /// Which of sysbench's entry points the script defines as global functions.
    pub functions: Vec<String>,
    /// Which of `sysbench.hooks` it sets.
    pub hooks: Vec<String>,
}

/// How a command ended (an error is an [`EngineError`]).
#[derive(Debug, Clone, serde::Serialize)]
pub struct CommandOutcome {
    pub command: String,
    /// A custom command that returned false (sysbench's exit code 1).
    pub ok: bool,
}

const ENTRY_POINTS: [&str; 10] =
    ["event", "thread_init", "thread_done", "thread_run", "init", "done", "prepare", "cleanup", "help", "cmd_prepare"];
const HOOKS: [&str; 4] = ["report_intermediate", "report_cumulative", "sql_error_ignorable", "before_restart_event"];

/// A command's states count nothing: their statements are not a measurement.
pub struct CommandPacer {
    pub stop: Stop,
}

impl Pacer for CommandPacer {
    fn more_events(&self, _: usize) -> LocalFuture<'_, bool> {
        Box::pin(async { false })
    }
    fn event_start(&self, _: usize) {}
    fn event_stop(&self, _: usize, _: Tally) {}
    fn queries(&self, _: usize, _: Tally) {}
    fn error(&self, _: usize, _: &str, _: bool) {}
    fn stopping(&self) -> bool {
        self.stop.is_stopped()
    }
}

/// The state-wide parts: the target, the generators seeded for thread `tid`, output to `sink`.
pub fn state_shared(
    target: &Target,
    options: &Options,
    pacer: Rc<dyn Pacer>,
    sink: &Sink,
    tid: usize,
    unique: Arc<UniqueSeq>,
) -> Result<Rc<StateShared>> {
    let out = sink.clone();
    let output: Output = Rc::new(move |text: &str| out.send(Progress::Output { text: text.to_owned() }));
    let log_sink = sink.clone();
    let log: Output =
        Rc::new(move |text: &str| log_sink.send(Progress::Log { level: LogLevel::Fatal, text: text.to_owned() }));
    let iter = options.uint("rand_spec_iter") as u32;
    let dists = Dists {
        default: Distribution::from_options(options)?,
        gaussian: Distribution::Gaussian { iter },
        special: Distribution::Special {
            iter,
            pct: options.uint("rand_spec_pct") as u32,
            res: options.uint("rand_spec_res") as u32,
        },
        pareto: Distribution::pareto(options.float("rand_pareto_h")),
    };
    let driver_sink = sink.clone();
    let announced = std::cell::Cell::new(false);
    let driver_created: Rc<dyn Fn()> = Rc::new(move || {
        if !announced.replace(true) {
            driver_sink.send(Progress::SqlDriver);
        }
    });
    Ok(Rc::new(StateShared {
        target: target.clone(),
        pacer,
        output,
        log,
        rng: std::cell::RefCell::new(Rng::for_stream(options.uint("rand_seed"), tid as u64 + 1)),
        dists,
        unique,
        driver_name: match target.driver_name() {
            "fake" => "mysql",
            other => other,
        },
        driver_created,
    }))
}

/// A script error as the engine reports it: at load time, bad input; later, a failed command.
fn load_error(e: &mlua::Error) -> EngineError {
    EngineError::Config(one_line(e))
}

fn call_error(name: &str, e: &mlua::Error) -> EngineError {
    EngineError::Driver(format!("`{name}' function failed: {}", one_line(e)))
}

/// A Lua state for thread `tid` with the script's top level run and the options exported.
pub struct Loaded {
    pub host: Host,
    pub thread: ThreadEnv,
    pub description: Description,
}

/// Creates a state, runs the script's top level in thread `tid`'s environment and reads what
/// it defines; with `values`, exports them as `sysbench.opt` (None: before they are known).
pub async fn load(
    spec: &CommandSpec,
    shared: Rc<StateShared>,
    tid: usize,
    values: Option<&[(String, OptValue)]>,
) -> Result<Loaded> {
    let host = Host::new(shared, &spec.invocation())?;
    let thread = host.new_thread(tid)?;
    host.load(&thread).await.map_err(|e| load_error(&e))?;
    let description = read_description(&host, &thread).map_err(|e| load_error(&e))?;
    if let Some(values) = values {
        host.set_options(values).map_err(|e| load_error(&e))?;
        host.export_options(&thread, description.options.is_none()).map_err(|e| load_error(&e))?;
    }
    Ok(Loaded { host, thread, description })
}

fn read_description(host: &Host, t: &ThreadEnv) -> mlua::Result<Description> {
    let rt = host.runtime();
    let declared: Option<Table> = rt.call_function("declared_options", &t.env)?;
    let options = match declared {
        None => None,
        Some(table) => {
            let mut out = Vec::new();
            for pair in table.pairs::<String, Table>() {
                let (name, def) = pair?;
                let code: i64 = def.get(3)?;
                let kind = ArgType::from_code(code)
                    .ok_or_else(|| mlua::Error::runtime(format!("cannot determine type for option {name}")))?;
                out.push(ScriptOption { name, description: def.get(1)?, default: def.get(2)?, kind });
            }
            out.sort_by(|a, b| a.name.cmp(&b.name));
            Some(out)
        }
    };
    let commands: Table = rt.call_function("commands", &t.env)?;
    let commands = commands.pairs::<String, bool>().collect::<mlua::Result<BTreeMap<_, _>>>()?;
    let mut functions = Vec::new();
    for name in ENTRY_POINTS {
        if host.has_function(t, name)? {
            functions.push(name.to_owned());
        }
    }
    let mut hooks = Vec::new();
    for name in HOOKS {
        if host.has_hook(t, name)? {
            hooks.push(name.to_owned());
        }
    }
    Ok(Description { options, commands, functions, hooks })
}

/// `sysbench.opt`'s values: the options given, checked against the script's declarations,
/// with the general ones the engine resolved (its defaults are the run's). oltplab's own run
/// options that sysbench lacks (`--warmup-time`, step plans, arrivals) are the engine's alone:
/// neither exported nor refused as unknown to the script.
pub fn option_values(
    spec: &CommandSpec,
    declared: Option<&[ScriptOption]>,
    options: &Options,
) -> Result<Vec<(String, OptValue)>> {
    let engine_only = |name: &str| options.as_map().contains_key(name) && !is_general(name);
    let given = spec.script.args.iter().filter(|(name, _)| !engine_only(name));
    let given: BTreeMap<_, _> = given.map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut values = export(declared, &given, &spec.script.argv)?;
    for (name, value) in &mut values {
        let resolved = match name.as_str() {
            "threads" | "events" | "rand_spec_iter" | "rand_spec_pct" | "rand_spec_res" | "rand_seed" => {
                OptValue::Number(options.uint(name) as f64)
            }
            "time" | "rate" | "report_interval" | "rand_pareto_h" => OptValue::Number(options.float(name)),
            "percentile" => OptValue::Number(
                options.str("percentile").split(',').next().and_then(|p| p.trim().parse().ok()).unwrap_or(95.0),
            ),
            "histogram" => OptValue::Bool(options.flag("histogram")),
            "rand_type" | "db_ps_mode" => OptValue::Text(options.str(name).to_owned()),
            _ => continue,
        };
        *value = resolved;
    }
    Ok(values)
}

/// Runs `work` on an OS thread of its own with a current-thread runtime (Lua states stay on
/// the thread that made them), and waits for it.
pub fn on_own_thread<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> LocalFuture<'static, Result<T>> + Send + 'static,
) -> Result<T> {
    join_own_thread(spawn_own_thread(name, work)?)
}

/// Starts `work` on a thread of its own (see [`on_own_thread`]); [`join_own_thread`] waits for it.
pub fn spawn_own_thread<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> LocalFuture<'static, Result<T>> + Send + 'static,
) -> Result<std::thread::JoinHandle<Result<T>>> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| EngineError::Internal(format!("cannot start a runtime: {e}")))?;
            let local = tokio::task::LocalSet::new();
            local.block_on(&rt, work())
        })
        .map_err(|e| EngineError::Internal(format!("cannot start a thread: {e}")))
}

pub fn join_own_thread<T>(handle: std::thread::JoinHandle<Result<T>>) -> Result<T> {
    handle.join().map_err(|_| EngineError::Internal("a script thread panicked".into()))?
}

/// The script in a main state of its own (on the calling thread), its options checked and
/// exported, as sysbench's main state (and its reporting thread's) has them.
/// The script's validators (`def[4]`) have the values given.
pub async fn main_loaded(cmd: &CommandSpec, sink: &Sink, stop: &Stop) -> Result<(Loaded, Vec<(String, OptValue)>)> {
    let (options, target) = cmd.resolve()?;
    let pacer = Rc::new(CommandPacer { stop: stop.clone() });
    let shared = state_shared(&target, &options, pacer, sink, 0, unique(&options))?;
    let main = load(cmd, shared, 0, None).await?;
    let values = option_values(cmd, main.description.options.as_deref(), &options)?;
    validate(&main, &cmd.script.args, &cmd.script.argv)?;
    main.host.set_options(&values).map_err(|e| load_error(&e))?;
    let legacy = main.description.options.is_none();
    main.host.export_options(&main.thread, legacy).map_err(|e| load_error(&e))?;
    Ok((main, values))
}

/// Calls the validator of each declared option given a value, as sysbench's `set_option` does:
/// one that returns false refuses the value.
fn validate(main: &Loaded, given: &BTreeMap<String, Option<String>>, argv: &[String]) -> Result<()> {
    if main.description.options.is_none() {
        return Ok(());
    }
    for (name, value) in given {
        let ok: bool = main
            .host
            .runtime()
            .call_function("validate_option", (&main.thread.env, name.as_str(), value.as_deref()))
            .map_err(|e| EngineError::Config(format!("the validator of --{name} failed: {}", one_line(&e))))?;
        if !ok {
            return Err(invalid_option(name, value.as_deref(), argv));
        }
    }
    Ok(())
}

/// What the script defines (for `help` and the command line's checks).
pub fn describe(spec: &CommandSpec) -> Result<Description> {
    let spec = spec.clone();
    on_own_thread("oltplab-script", move || {
        Box::pin(async move {
            let (options, target) = spec.resolve()?;
            let stop = Stop::new();
            let shared =
                state_shared(&target, &options, Rc::new(CommandPacer { stop }), &Sink::none(), 0, unique(&options))?;
            Ok(load(&spec, shared, 0, None).await?.description)
        })
    })
}

/// `sysbench.rand.unique()`'s sequence, one per run as sysbench has one per process.
pub(super) fn unique(options: &Options) -> Arc<UniqueSeq> {
    Arc::new(UniqueSeq::new(options.uint("rand_seed")))
}

/// Runs `help`, `prepare`, `cleanup` or a custom command, as sysbench 1.0.20 runs it.
pub fn command(spec: &CommandSpec, sink: &Sink, stop: &Stop) -> Result<CommandOutcome> {
    let name = spec.script.command.clone().ok_or_else(|| EngineError::config("Command is required"))?;
    let (spec, sink, stop) = (spec.clone(), sink.clone(), stop.clone());
    let main = {
        let (spec, sink, stop) = (spec.clone(), sink.clone(), stop.clone());
        on_own_thread("oltplab-script", move || Box::pin(async move { main_thread(&spec, &sink, &stop).await }))?
    };
    match main {
        Step::Done(ok) => Ok(CommandOutcome { command: name, ok }),
        Step::Parallel { threads } => {
            sink.send(Progress::Output { text: "Initializing worker threads...\n\n".into() });
            let sequence = unique(&spec.resolve()?.0);
            let workers: Vec<_> = (0..threads)
                .map(|tid| {
                    let (spec, sink, stop, name) = (spec.clone(), sink.clone(), stop.clone(), name.clone());
                    let sequence = Arc::clone(&sequence);
                    std::thread::spawn(move || {
                        on_own_thread("oltplab-command", move || {
                            Box::pin(async move { command_thread(&spec, &sink, &stop, tid, &name, sequence).await })
                        })
                    })
                })
                .collect();
            let mut ok = true;
            let mut first_error = None;
            for w in workers {
                match w.join().map_err(|_| EngineError::Internal("a command thread panicked".into()))? {
                    Ok(done) => ok &= done,
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            match first_error {
                Some(e) => Err(e),
                None => Ok(CommandOutcome { command: name, ok }),
            }
        }
    }
}

/// What thread 0 decided: the command is done, or it runs on every thread.
enum Step {
    Done(bool),
    Parallel { threads: usize },
}

async fn main_thread(spec: &CommandSpec, sink: &Sink, stop: &Stop) -> Result<Step> {
    let (options, _) = spec.resolve()?;
    let name = spec.script.command.clone().unwrap_or_default();
    let (Loaded { host, thread, description }, _) = main_loaded(spec, sink, stop).await?;
    let threads = options.uint("threads").max(1) as usize;
    if let Some(&parallel) = description.commands.get(&name) {
        if parallel && threads > 1 {
            return Ok(Step::Parallel { threads });
        }
        let ok =
            host.call_command(&thread, &name).await.map_err(|e| call_error("sysbench.cmdline.call_command", &e))?;
        return Ok(Step::Done(ok));
    }
    let sname = spec.script.test_name();
    match name.as_str() {
        "help" => {
            if description.functions.iter().any(|f| f == "help") {
                host.call(&thread, "help", ()).await.map_err(|e| call_error("help", &e))?;
            } else if let Some(declared) = &description.options {
                sink.send(Progress::Output { text: format!("{sname} options:\n{}", help_text(declared)) });
            } else {
                return Err(EngineError::config(format!("'{sname}' test does not implement the 'help' command.")));
            }
        }
        "prepare" | "cleanup" => {
            if !description.functions.iter().any(|f| f == &name) {
                return Err(EngineError::config(format!("'{sname}' test does not implement the '{name}' command.")));
            }
            host.call(&thread, &name, ()).await.map_err(|e| call_error(&name, &e))?;
        }
        other => return Err(EngineError::config(format!("Unknown command: {other}"))),
    }
    host.at_exit().map_err(|e| call_error(&name, &e))?;
    Ok(Step::Done(true))
}

/// One thread of a parallel custom command: a state of its own, sysbench.tid = `tid`.
async fn command_thread(
    spec: &CommandSpec,
    sink: &Sink,
    stop: &Stop,
    tid: usize,
    name: &str,
    sequence: Arc<UniqueSeq>,
) -> Result<bool> {
    let (options, target) = spec.resolve()?;
    let shared = state_shared(&target, &options, Rc::new(CommandPacer { stop: stop.clone() }), sink, tid, sequence)?;
    let probe = load(spec, Rc::clone(&shared), tid, None).await?;
    let values = option_values(spec, probe.description.options.as_deref(), &options)?;
    probe.host.set_options(&values).map_err(|e| load_error(&e))?;
    probe.host.export_options(&probe.thread, probe.description.options.is_none()).map_err(|e| load_error(&e))?;
    probe.host.call_command(&probe.thread, name).await.map_err(|e| call_error("sysbench.cmdline.call_command", &e))
}
