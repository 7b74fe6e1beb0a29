//! sysbench 1.0 Lua scripts, unmodified, on the engine (docs/lua.md).
//!
//! One Lua state per engine thread; each sysbench thread of it is a coroutine with an
//! environment of its own (its globals, `sysbench` table and `require`d modules), so that a
//! script written for sysbench's state per thread sees the same thing. Every call that would
//! block in sysbench (a statement, `ffi.C.usleep`, waiting for an open loop's arrival) yields to
//! the engine instead.
//!
//! ```text
//! host.rs       the Lua state: LuaJIT + FFI, the engine's functions, `lua/runtime.lua`
//! `lua/runtime.lua`  oltplab's sysbench API in Lua: environments, require, ffi proxy, reports
//! ctx.rs        what a sysbench thread reaches in the engine: counters, the pacer, output
//! resume.rs     functions that wait (a statement, a sleep): started, awaited between yield and resume
//! sql.rs        sysbench.sql over the engine's connections
//! sql_conn.rs   a script's connection: the engine's, in a cell; a query on it, its reconnect
//! sql_failure.rs  a failed statement as sysbench's drivers handle it: counted, rolled back, logged
//! execute_call.rs  a statement's execute as a C function that LuaJIT's ffi compiles
//! next_call.rs  the hand-over to the next event as one, when it need not wait
//! rand.rs       sysbench.rand over the engine's generators
//! options.rs    the script's options: checked, exported, listed by `help`
//! command.rs    prepare, cleanup, help and custom commands (a state per command thread)
//! load.rs       `run` on the executor: the script as a workload, a state per engine thread
//! reports.rs    the report hooks during a run, in a reporting state of their own
//! harness.rs    N sysbench threads on one `LocalSet`, with a simple pacer (engine tests)
//! errors.rs     Lua errors as one line naming the script's file:line
//! ```

mod command;
mod ctx;
mod errors;
mod execute_call;
pub mod harness;
mod host;
mod load;
mod next_call;
mod options;
mod rand;
mod reports;
mod resume;
mod sql;
mod sql_conn;
mod sql_failure;

use std::collections::BTreeMap;

use serde::Deserialize;

pub use command::{command, describe, CommandOutcome, Description};
pub use ctx::{LocalFuture, Output, Pacer};
pub use host::{find_script, Host, Invocation, ThreadEnv, SYSBENCH_VERSION};
pub use load::run;
pub use options::{help_text, is_general, ArgType, ScriptOption};

use crate::driver::{Target, TargetOptions};
use crate::error::Result;
use crate::exec::LoadShape;
use crate::options::Options;
use crate::rand::rand_defs;

/// A script and how it was called, as the spec names it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptSpec {
    /// The path as the user gave it, or as found on sysbench's search path.
    pub path: String,
    /// The test as the user typed it, when that is not `path` (`kv`, found as ./kv.lua).
    #[serde(default)]
    pub name: Option<String>,
    /// `prepare`, `run`, `cleanup`, `help` or a custom command; None: none given.
    #[serde(default)]
    pub command: Option<String>,
    /// The whole command line, for `sysbench.cmdline.argv`.
    #[serde(default)]
    pub argv: Vec<String>,
    /// Options as typed, names with underscores: `--tables=2` is `"tables": "2"`, a bare
    /// `--skip-trx` is `"skip_trx": null`. The script's own and sysbench's general ones.
    #[serde(default)]
    pub args: BTreeMap<String, Option<String>>,
}

impl ScriptSpec {
    /// sysbench's name for the test (help's heading, messages): the file name of what was typed.
    pub fn test_name(&self) -> &str {
        let typed = self.name.as_deref().unwrap_or(&self.path);
        typed.rsplit('/').next().unwrap_or(typed)
    }
}

/// What a script command needs besides the script: the general options and the target.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    pub script: ScriptSpec,
    pub db: String,
    #[serde(default)]
    pub options: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub target: TargetOptions,
}

impl CommandSpec {
    pub fn from_json(json: &str) -> Result<Self> {
        Ok(serde_json::from_str(json)?)
    }

    /// The general options (threads, rand-*, ...) and the target.
    pub fn resolve(&self) -> Result<(Options, Target)> {
        let mut defs = LoadShape::defs();
        defs.extend(rand_defs());
        let options = Options::parse(&defs, &self.options, &self.script.path)?;
        let mut target_options = self.target.clone();
        target_options.db_ps_mode = options.str("db_ps_mode").to_string();
        target_options.mysql_ignore_errors = options.str("mysql_ignore_errors").to_string();
        if !options.str("db_password_file").is_empty() {
            target_options.password_file = Some(options.str("db_password_file").into());
        }
        let target = Target::parse(&self.db, &target_options)?;
        Ok((options, target))
    }

    pub fn invocation(&self) -> Invocation {
        Invocation {
            path: self.script.path.clone(),
            command: self.script.command.clone(),
            argv: self.script.argv.clone(),
        }
    }
}
