//! One Lua state: LuaJIT with its FFI, the engine's functions (`host`), oltplab's runtime
//! (`lua/runtime.lua`) and the script compiled once. Each sysbench thread of the state is an
//! environment of its own ([`ThreadEnv`]) whose code runs in coroutines driven as futures, so
//! that a statement, a think time or a wait for the next arrival yields to the other threads.

use std::rc::Rc;

use mlua::{Function, Lua, LuaOptions, MultiValue, ObjectLike, StdLib, Table, Value as LuaValue};

use super::ctx::{shared, CtxHandle, StateShared, ThreadCtx};
use super::errors::one_line;
use super::resume::{drive, set_async};
use crate::error::{EngineError, Result};

const RUNTIME: &str = include_str!("lua/runtime.lua");
/// What sysbench.version says, and what scripts test for.
pub const SYSBENCH_VERSION: &str = "1.0.20";

/// What the script is and how it was called (sysbench.cmdline's fields).
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The path as given (sysbench's error messages and `sysbench.cmdline.script_path` show it so).
    pub path: String,
    pub command: Option<String>,
    pub argv: Vec<String>,
}

/// A Lua state and the script loaded in it.
pub struct Host {
    lua: Lua,
    rt: Table,
    script: Function,
}

/// One sysbench thread's environment and context.
pub struct ThreadEnv {
    pub env: Table,
    pub ctx: Rc<ThreadCtx>,
}

impl Host {
    pub fn new(shared: Rc<StateShared>, inv: &Invocation) -> Result<Self> {
        // SAFETY: LuaJIT's FFI lets Lua code call C and read raw memory, which is what sysbench
        // scripts do (ffi.cdef, ffi.C.*); mlua's safe constructors refuse to load it. The code
        // run here is the user's own script, with the rights sysbench would give it.
        #[allow(unsafe_code)]
        let lua = unsafe { Lua::unsafe_new_with(StdLib::ALL, LuaOptions::default()) };
        let host = lua.create_table().map_err(internal)?;
        register(&lua, &host, &shared).map_err(internal)?;
        lua.set_app_data(shared);
        super::sql::register(&lua, &host).map_err(internal)?;
        super::execute_call::register(&host).map_err(internal)?;
        super::next_call::register(&lua, &host).map_err(internal)?;
        let info = lua.create_table().map_err(internal)?;
        let set = || -> mlua::Result<()> {
            info.set("version", SYSBENCH_VERSION)?;
            info.set("script_path", inv.path.as_str())?;
            info.set("command", inv.command.as_deref())?;
            let argv = lua.create_table()?;
            for (i, a) in inv.argv.iter().enumerate() {
                argv.raw_set(i, a.as_str())?;
            }
            info.set("argv", argv)
        };
        set().map_err(internal)?;
        let package: Table = lua.globals().get("package").map_err(internal)?;
        package.set("path", lua_path(&inv.path)).map_err(internal)?;
        let rt: Table = lua.load(RUNTIME).set_name("=[oltplab]").call((host, info)).map_err(internal)?;
        let script = rt
            .call_function::<Function>("script", (inv.path.as_str(), format!("@{}", inv.path)))
            .map_err(|e| EngineError::Config(one_line(&e)))?;
        Ok(Self { lua, rt, script })
    }

    pub fn lua(&self) -> &Lua {
        &self.lua
    }

    /// A new environment for sysbench thread `tid`.
    pub fn new_thread(&self, tid: usize) -> Result<ThreadEnv> {
        let shared = shared(&self.lua).map_err(internal)?;
        let ctx = Rc::new(ThreadCtx::new(tid, shared));
        let env: Table = self.rt.call_function("new_env", (CtxHandle(Rc::clone(&ctx)), tid)).map_err(internal)?;
        Ok(ThreadEnv { env, ctx })
    }

    /// Runs the script's top level in the thread's environment.
    pub async fn load(&self, t: &ThreadEnv) -> mlua::Result<()> {
        drive(&self.lua, self.rt.get("load_script")?, (&t.env, &self.script)).await
    }

    /// Sets the options scripts read (`sysbench.opt`), before any environment exports them.
    pub fn set_options(&self, values: &[(String, OptValue)]) -> mlua::Result<()> {
        let set: Function = self.rt.get("set_option")?;
        for (name, value) in values {
            let v = match value {
                OptValue::Bool(b) => LuaValue::Boolean(*b),
                OptValue::Number(n) => LuaValue::Number(*n),
                OptValue::Text(s) => LuaValue::String(self.lua.create_string(s)?),
                OptValue::List(items) => {
                    LuaValue::Table(self.lua.create_sequence_from(items.iter().map(String::as_str))?)
                }
            };
            set.call::<()>((name.as_str(), v))?;
        }
        Ok(())
    }

    /// `sysbench.opt` for this thread, and the legacy global options when `legacy`.
    pub fn export_options(&self, t: &ThreadEnv, legacy: bool) -> mlua::Result<()> {
        self.rt.call_function("export_options", (&t.env, legacy))
    }

    /// Calls the script's global function `name` if it defines it.
    pub async fn call(&self, t: &ThreadEnv, name: &str, args: impl mlua::IntoLuaMulti) -> mlua::Result<MultiValue> {
        let mut all = vec![LuaValue::Table(t.env.clone()), LuaValue::String(self.lua.create_string(name)?)];
        all.extend(args.into_lua_multi(&self.lua)?);
        drive(&self.lua, self.rt.get("call")?, MultiValue::from_vec(all)).await
    }

    pub async fn call_hook(&self, t: &ThreadEnv, name: &str, arg: impl mlua::IntoLua) -> mlua::Result<()> {
        drive(&self.lua, self.rt.get("call_hook")?, (&t.env, name, arg)).await
    }

    /// Runs custom command `name`; false when it returned false.
    pub async fn call_command(&self, t: &ThreadEnv, name: &str) -> mlua::Result<bool> {
        drive(&self.lua, self.rt.get("call_command")?, (&t.env, name)).await
    }

    /// The thread's event loop: the script's `thread_run`, or sysbench's default one.
    pub async fn run_thread(&self, t: &ThreadEnv) -> mlua::Result<()> {
        drive(&self.lua, self.rt.get("run_thread")?, (&t.env, t.ctx.tid)).await
    }

    pub fn has_function(&self, t: &ThreadEnv, name: &str) -> mlua::Result<bool> {
        self.rt.call_function("has_function", (&t.env, name))
    }

    pub fn has_hook(&self, t: &ThreadEnv, name: &str) -> mlua::Result<bool> {
        self.rt.call_function("has_hook", (&t.env, name))
    }

    pub fn runtime(&self) -> &Table {
        &self.rt
    }

    /// Runs what the script asked to run at the end (`report_json`'s closing bracket).
    pub fn at_exit(&self) -> mlua::Result<()> {
        let pending = self.lua.app_data_mut::<AtExit>().map(|mut a| std::mem::take(&mut a.0)).unwrap_or_default();
        for f in pending {
            f.call::<()>(())?;
        }
        Ok(())
    }
}

/// A value of `sysbench.opt`, as sysbench exports each option type.
#[derive(Debug, Clone, PartialEq)]
pub enum OptValue {
    Bool(bool),
    Number(f64),
    Text(String),
    List(Vec<String>),
}

#[derive(Default)]
struct AtExit(Vec<Function>);

#[allow(clippy::needless_pass_by_value)] // used as map_err(internal)
fn internal(e: mlua::Error) -> EngineError {
    EngineError::Internal(format!("the Lua runtime: {}", one_line(&e)))
}

/// The engine functions every state has: the event loop, counters, sleeps, output, random
/// numbers and the compiler of script files.
fn register(lua: &Lua, host: &Table, state: &Rc<StateShared>) -> mlua::Result<()> {
    let ctx_of =
        |ud: &mlua::AnyUserData| -> mlua::Result<Rc<ThreadCtx>> { Ok(Rc::clone(&ud.borrow::<CtxHandle>()?.0)) };
    set_async(lua, host, "more_events", |_, (ud, _tid): (mlua::AnyUserData, LuaValue)| async move {
        let ctx = Rc::clone(&ud.borrow::<CtxHandle>()?.0);
        Ok(ctx.more_events().await)
    })?;
    // sysbench's loop in one crossing per event: the previous event's stop (when one ran), the
    // wait for the next, its start (sb_event_stop, sb_more_events, sb_event_start).
    set_async(lua, host, "next_event", |_, (ud, _tid, stop_previous): (mlua::AnyUserData, LuaValue, bool)| {
        let ctx = ud.borrow::<CtxHandle>().map(|h| Rc::clone(&h.0));
        if let (Ok(ctx), true) = (&ctx, stop_previous) {
            ctx.event_stop(); // now: the event's time ends here, not when the coroutine yields
        }
        async move {
            let ctx = ctx?;
            let more = ctx.more_events().await;
            if more {
                ctx.event_start();
            }
            Ok(more)
        }
    })?;
    host.set(
        "event_start",
        lua.create_function(move |_, (ud, _tid): (mlua::AnyUserData, LuaValue)| {
            ctx_of(&ud)?.event_start();
            Ok(())
        })?,
    )?;
    host.set(
        "event_stop",
        lua.create_function(move |_, (ud, _tid): (mlua::AnyUserData, LuaValue)| {
            ctx_of(&ud)?.event_stop();
            Ok(())
        })?,
    )?;
    host.set("event_restart", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    host.set(
        "counter_inc",
        lua.create_function(move |_, (ud, _tid, counter): (mlua::AnyUserData, LuaValue, i64)| {
            let ctx = ctx_of(&ud)?;
            match counter {
                0 => ctx.count(crate::db::QueryClass::Other),
                1 => ctx.count(crate::db::QueryClass::Read),
                2 => ctx.count(crate::db::QueryClass::Write),
                4 => ctx.shared.pacer.error(ctx.tid, "script", false),
                5 => ctx.shared.pacer.error(ctx.tid, "script", true),
                // SB_CNT_TRX: sysbench counts it with the events; oltplab's events are timed ones.
                _ => {}
            }
            Ok(())
        })?,
    )?;
    host.set("counter_val", lua.create_function(|_, _: MultiValue| Ok(0))?)?;
    set_async(lua, host, "sleep", |_, seconds: f64| async move {
        if seconds > 0.0 && seconds.is_finite() {
            tokio::time::sleep(std::time::Duration::from_secs_f64(seconds)).await;
        }
        Ok(())
    })?;
    host.set(
        "write",
        lua.create_function(|lua, text: mlua::String| {
            (shared(lua)?.output)(&text.to_str()?);
            Ok(())
        })?,
    )?;
    host.set(
        "at_exit",
        lua.create_function(|lua, f: Function| {
            if lua.app_data_ref::<AtExit>().is_none() {
                lua.set_app_data(AtExit::default());
            }
            if let Some(mut a) = lua.app_data_mut::<AtExit>() {
                a.0.push(f);
            }
            Ok(())
        })?,
    )?;
    host.set(
        "print_test_options",
        lua.create_function(|lua, ()| {
            let text = lua.app_data_ref::<HelpText>().map(|h| h.0.clone()).unwrap_or_default();
            (shared(lua)?.output)(&text);
            Ok(())
        })?,
    )?;
    host.set(
        "compile",
        lua.create_function(|lua, (path, name): (String, String)| match std::fs::read(&path) {
            Ok(source) => match lua.load(wrapped(&source)).set_name(name).into_function() {
                Ok(f) => Ok((Some(f), None)),
                Err(e) => Ok((None, Some(one_line(&e)))),
            },
            Err(e) => Ok((None, Some(format!("cannot open {path}: {e}")))),
        })?,
    )?;
    super::rand::register(lua, host, state)
}

/// Where `require` looks: sysbench's search path (the current directory, those of `LuaRocks`, the system's
/// and sysbench's own, Debian's /usr/share/sysbench), with the script's directory after the
/// current one (so that sysbench-tpcc finds its modules from anywhere), and `LUA_PATH` as Lua
/// reads it (`;;` stands for the default).
pub fn lua_path(script: &str) -> String {
    let mut parts = vec!["./?.lua".to_owned(), "./?/init.lua".to_owned()];
    if let Some(dir) = std::path::Path::new(script).parent().filter(|d| !d.as_os_str().is_empty()) {
        parts.push(format!("{}/?.lua", dir.display()));
    }
    parts.push("./src/lua/?.lua".to_owned());
    if let Some(home) = std::env::var_os("HOME") {
        let home = home.to_string_lossy();
        for p in ["share/lua/5.1/?.lua", "share/lua/5.1/?/init.lua", "share/lua/?.lua", "share/lua/?/init.lua"] {
            parts.push(format!("{home}/.luarocks/{p}"));
        }
    }
    parts.extend(
        ["/usr/local/share/lua/5.1/?.lua", "/usr/share/lua/5.1/?.lua", "/usr/share/sysbench/?.lua"].map(String::from),
    );
    let default = parts.join(";");
    match std::env::var("LUA_PATH") {
        Ok(path) => path.replace(";;", &format!(";{default};")),
        Err(_) => default,
    }
}

/// Where sysbench finds a test given by name without a path that is not a file in the current
/// directory: as a module on its Lua search path (`require(name)`: dots become slashes).
pub fn find_script(name: &str) -> Option<std::path::PathBuf> {
    let module = name.replace('.', "/");
    lua_path("")
        .split(';')
        .filter(|t| !t.is_empty())
        .map(|t| std::path::PathBuf::from(t.replace('?', &module)))
        .find(|p| p.is_file())
}

/// The help text `sysbench.cmdline.print_test_options()` prints.
pub struct HelpText(pub String);

/// A script file as a function that returns a fresh closure of its main chunk: compiled once
/// per state, instantiated once per environment (whose globals it then uses). A first line
/// starting with `#` (`#!/usr/bin/env sysbench`) is blanked, as Lua's loadfile skips it; the
/// wrapper stays on the first line so that line numbers are the file's.
fn wrapped(source: &[u8]) -> Vec<u8> {
    let mut out = b"return function(...) ".to_vec();
    if source.first() == Some(&b'#') {
        let end = source.iter().position(|&b| b == b'\n').unwrap_or(source.len());
        out.extend_from_slice(&source[end..]);
    } else {
        out.extend_from_slice(source);
    }
    out.extend_from_slice(b"\nend");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shebang_line_is_blanked_and_lines_keep_their_numbers() {
        let w = String::from_utf8(wrapped(b"#!/usr/bin/env sysbench\nx = 1\n")).unwrap();
        assert_eq!(w, "return function(...) \nx = 1\n\nend");
        let w = String::from_utf8(wrapped(b"x = 1")).unwrap();
        assert_eq!(w, "return function(...) x = 1\nend");
    }
}
