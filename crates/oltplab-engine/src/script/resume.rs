//! The engine's asynchronous host functions (a statement, a connect, a sleep, the wait for the
//! next event) and the driver of the coroutines that call them, without mlua's async machinery.
//!
//! A host function registered with [`set_async`] is a plain function: it starts its operation
//! and, on an engine thread whose one connection waits for its replies in `poll(2)`
//! (`driver/reply_wait.rs`), polls it once right away: a statement there completes in that poll,
//! and the function returns its outcome (`true, values...` or `false, message`, which
//! runtime.lua's wrapper raises at the script's line) without a yield. Otherwise, or when the
//! operation is not ready (the next event, a sleep, a stop ringing the doorbell), it leaves the
//! operation in the state's [`Pending`] slot and returns nil; the wrapper then yields, and
//! [`drive`], which resumed the coroutine, awaits the operation and resumes the coroutine with
//! its outcome. mlua's `create_async_function` costs a boxed future and a userdata per call, two
//! protected C calls to poll it and a table for more than two results (docs/lua.md, "Cost").

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use mlua::{FromLuaMulti, Function, IntoLuaMulti, Lua, MultiValue, Table, ThreadStatus};

use super::ctx::LocalFuture;
use super::errors::one_line;
use crate::driver::reply_wait;

/// An operation a host function started, and the values it resumes the coroutine with.
type Op = LocalFuture<'static, mlua::Result<MultiValue>>;

/// The operation started since the running coroutine was last resumed (one at most: the
/// wrapper yields right after starting it). Each host function holds the slot; [`drive`] finds
/// it in the state's app data.
#[derive(Default, Clone)]
struct Pending(Rc<RefCell<Option<Op>>>);

impl Pending {
    /// The state's slot, made by the first host function registered.
    fn of(lua: &Lua) -> Self {
        if let Some(p) = lua.app_data_ref::<Self>() {
            return p.clone();
        }
        let p = Self::default();
        lua.set_app_data(p.clone());
        p
    }
}

/// An operation's outcome as its wrapper receives it: `true, values...`, or `false, message`.
/// A tuple, which mlua pushes value by value (a `MultiValue` with `true` put in front would be
/// grown, a copy per call).
fn outcome(lua: &Lua, done: mlua::Result<MultiValue>) -> mlua::Result<(bool, MultiValue)> {
    match done {
        Ok(values) => Ok((true, values)),
        Err(e) => Ok((false, one_line(&e).into_lua_multi(lua)?)),
    }
}

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
    let pending = Pending::of(lua);
    let start = lua.create_function(move |lua, args: A| {
        let (fut, owned) = (f(lua.clone(), args), lua.clone());
        let mut op: Op = Box::pin(async move { fut.await?.into_lua_multi(&owned) });
        if let Some(done) = done_at_once(&mut op) {
            let (ok, values) = outcome(lua, done)?;
            return Ok((Some(ok), values));
        }
        *pending.0.borrow_mut() = Some(op);
        Ok((None, MultiValue::new())) // nil: the wrapper yields
    })?;
    started.set(name, start)
}

/// `op`'s outcome if its first poll finishes it. Polled only on an engine thread whose one
/// connection waits for its replies itself (`driver/reply_wait.rs`), where a statement is done
/// in that poll; elsewhere the first poll is a waste. The no-op waker is sound: a resource that
/// is not ready registers the waker of its latest poll, which is `drive`'s with the task's own,
/// and keeps readiness that came between.
pub fn done_at_once<F: Future + Unpin>(op: &mut F) -> Option<F::Output> {
    if !reply_wait::sole_connection() {
        return None;
    }
    match Pin::new(op).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(done) => Some(done),
        Poll::Pending => None,
    }
}

/// Calls `f(args)` in a coroutine of its own, awaiting the operations it starts, until it returns.
pub async fn drive<R: FromLuaMulti>(lua: &Lua, f: Function, args: impl IntoLuaMulti) -> mlua::Result<R> {
    let pending = Pending::of(lua);
    let thread = lua.create_thread(f)?;
    let mut output = thread.resume::<MultiValue>(args);
    loop {
        // Taken even when the coroutine failed: the slot must not keep an operation (and the
        // state it holds) that nobody awaits.
        let op = pending.0.borrow_mut().take();
        let values = output?;
        if thread.status() != ThreadStatus::Resumable {
            return R::from_lua_multi(values, lua);
        }
        let Some(op) = op else {
            return Err(mlua::Error::runtime(
                "coroutine.yield() outside a coroutine of the script's own: oltplab's threads cannot yield",
            ));
        };
        output = thread.resume(outcome(lua, op.await)?);
    }
}
