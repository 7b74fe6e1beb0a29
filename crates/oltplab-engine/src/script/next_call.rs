//! The hand-over from one event to the next as a C function that runtime.lua's loop calls
//! through LuaJIT's ffi, as `execute_call.rs` does a statement: when the executor says the next
//! event may start at once (a closed loop with nothing to wait for: `exec/back_to_back.rs`), the
//! ended event is recorded and the next one timed from here, with no Lua C API crossing and no
//! coroutine yield to the executor's worker (they cost ~1 us an event; docs/lua.md, "What it
//! costs"). Otherwise it does nothing and the loop takes `host.next_event`, which yields as
//! before. Nothing here runs Lua code, raises a Lua error or unwinds into LuaJIT's frames.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use mlua::{AnyUserData, LightUserData, Lua, Table};

use super::ctx::{CtxHandle, ThreadCtx};

/// [`next_event`]'s answers: the next event started; or nothing done, take the slow path.
const STARTED: i32 = 1;
const SLOW_PATH: i32 = 0;

/// Hands runtime.lua the C function, which it casts to its ffi type, and the address of a
/// sysbench thread's context, which it passes to it.
pub fn register(lua: &Lua, host: &Table) -> mlua::Result<()> {
    let f: NextEvent = next_event;
    host.set("next_call", LightUserData(f as *mut c_void))?;
    let address = lua.create_function(|_, ud: AnyUserData| {
        Ok(LightUserData(Rc::as_ptr(&ud.borrow::<CtxHandle>()?.0).cast_mut().cast::<c_void>()))
    })?;
    host.set("ctx_address", address)
}

type NextEvent = extern "C" fn(*const ThreadCtx) -> i32;

/// Ends the thread's event and starts its next when it may start at once.
extern "C" fn next_event(ctx: *const ThreadCtx) -> i32 {
    // A panic is the slow path: never an unwind into LuaJIT.
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: runtime.lua's loop passes the address `ctx_address` gave it of its thread's
        // context, which the loop's `ctx` (its userdata) keeps alive while the loop runs, in
        // this thread's Lua state, whose code is not running while this function does.
        #[allow(unsafe_code)]
        let ctx = unsafe { &*ctx };
        if ctx.next_at_once() {
            STARTED
        } else {
            SLOW_PATH
        }
    }))
    .unwrap_or(SLOW_PATH)
}
