//! The engine's asynchronous host functions (a statement, a connect, a sleep, the wait for the
//! next event) and the driver of the coroutines that call them, without mlua's async machinery.
//!
//! A host function registered with [`set_async`] is a plain function: it starts its operation,
//! leaves it in the state's [`Pending`] slot and returns; runtime.lua's wrapper then yields, and
//! [`drive`], which resumed the coroutine, awaits the operation and resumes the coroutine with
//! its outcome (`true, values...` or `false, message`, which the wrapper raises at the script's
//! line). mlua's `create_async_function` costs a boxed future and a userdata per call, two
//! protected C calls to poll it and a table for more than two results (docs/lua.md, "Cost").

use std::cell::RefCell;
use std::future::Future;

use mlua::{FromLuaMulti, Function, IntoLuaMulti, Lua, MultiValue, Table, ThreadStatus};

use super::ctx::LocalFuture;
use super::errors::one_line;

/// An operation a host function started, and the values it resumes the coroutine with.
type Op = LocalFuture<'static, mlua::Result<MultiValue>>;

/// The operation started since the running coroutine was last resumed (one at most: the
/// wrapper yields right after starting it).
#[derive(Default)]
pub struct Pending(RefCell<Option<Op>>);

/// The table of `host` that holds the asynchronous functions, which runtime.lua wraps.
const STARTED: &str = "started";

/// Registers `host.started[name]`: `f`'s future is awaited by [`drive`] between the coroutine's
/// yield and its resumption.
pub fn set_async<A, F, Fut, R>(lua: &Lua, host: &Table, name: &str, f: F) -> mlua::Result<()>
where
    A: FromLuaMulti,
    F: Fn(Lua, A) -> Fut + 'static,
    Fut: Future<Output = mlua::Result<R>> + 'static,
    R: IntoLuaMulti,
{
    let started = if let Some(t) = host.get::<Option<Table>>(STARTED)? {
        t
    } else {
        let t = lua.create_table()?;
        host.set(STARTED, &t)?;
        t
    };
    let start = lua.create_function(move |lua, args: A| {
        let (fut, owned) = (f(lua.clone(), args), lua.clone());
        let op: Op = Box::pin(async move { fut.await?.into_lua_multi(&owned) });
        let pending = lua.app_data_ref::<Pending>().ok_or_else(|| mlua::Error::runtime("internal error: no slot"))?;
        *pending.0.borrow_mut() = Some(op);
        Ok(())
    })?;
    started.set(name, start)
}

/// Calls `f(args)` in a coroutine of its own, awaiting the operations it starts, until it returns.
pub async fn drive<R: FromLuaMulti>(lua: &Lua, f: Function, args: impl IntoLuaMulti) -> mlua::Result<R> {
    let thread = lua.create_thread(f)?;
    let mut output = thread.resume::<MultiValue>(args);
    loop {
        // Taken even when the coroutine failed: the slot must not keep an operation (and the
        // state it holds) that nobody awaits.
        let op = lua.app_data_ref::<Pending>().and_then(|p| p.0.borrow_mut().take());
        let values = output?;
        if thread.status() != ThreadStatus::Resumable {
            return R::from_lua_multi(values, lua);
        }
        let Some(op) = op else {
            return Err(mlua::Error::runtime(
                "coroutine.yield() outside a coroutine of the script's own: oltplab's threads cannot yield",
            ));
        };
        output = match op.await {
            Ok(values) => thread.resume((true, values)),
            Err(e) => thread.resume((false, one_line(&e))),
        };
    }
}
