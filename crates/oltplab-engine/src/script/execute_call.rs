//! A prepared statement's execute as a C function that runtime.lua calls through LuaJIT's ffi,
//! as sysbench's `execute` is: LuaJIT compiles the call into the event's trace, with no Lua C
//! API crossing (mlua's argument conversion, userdata borrow and protected call cost ~0.7 us an
//! event; docs/lua.md, "What it costs").
//!
//! A parameter is a [`ParamSlot`] (LuaJIT's memory, as sysbench's is a C buffer), which its
//! `set` writes with no call; [`execute`] reads them, starts the statement and, on an engine
//! thread with one connection, polls it once (`resume.rs`'s `done_at_once`). Done without an
//! error and without rows to hand over (a prepared statement's are discarded), it returns at
//! once; anything else (not done, an error, a closed statement) is left in the statement's
//! `started` slot and the Lua side takes the slow path, `host.execute` (sql.rs), which yields,
//! raises or reconnects as before. Nothing here runs Lua code, raises a Lua error or unwinds
//! into LuaJIT's frames.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use mlua::{LightUserData, Table};

use super::resume::done_at_once;
use super::sql::{ParamKind, Stmt};
use crate::db::{QueryClass, Value};

/// A bound parameter: runtime.lua's `oltplab_param`, a struct with its text buffer at its end.
#[repr(C)]
pub struct ParamSlot {
    /// 0 for nil (a parameter never set: LuaJIT zero-fills a new struct), [`NUMBER`] or [`STRING`].
    tag: i32,
    /// [`ParamKind::code`]: the text buffer's size for a text.
    kind: i32,
    number: f64,
    text_len: usize,
    /// The first of the buffer's `kind` bytes (`param:set` copies at most that many).
    text: [u8; 0],
}

/// A statement's call: runtime.lua's `oltplab_call`, the statement's address and its
/// parameters'.
#[repr(C)]
pub struct Call {
    stmt: *const Stmt,
    n: u32,
    params: [*const ParamSlot; 0],
}

const NUMBER: i32 = 1;
const STRING: i32 = 2;

/// [`execute`]'s answers: done, its counts written (`nrows`, `nfields`); done, not a result set;
/// or take the slow path.
const DONE_RESULT_SET: i32 = 1;
const DONE: i32 = 0;
const SLOW_PATH: i32 = -1;

/// Hands runtime.lua the C function, which it casts to its ffi type.
pub fn register(host: &Table) -> mlua::Result<()> {
    let f: Execute = execute;
    host.set("execute_call", LightUserData(f as *mut c_void))
}

type Execute = extern "C" fn(*const Call, *mut f64) -> i32;

/// Executes `call`'s statement with its parameters; writes a result set's row and field counts
/// into `counts[0..2]`.
extern "C" fn execute(call: *const Call, counts: *mut f64) -> i32 {
    // A panic is the slow path's "internal error" (nothing started): never an unwind into LuaJIT.
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: runtime.lua passes its statement table's `_call`, which holds the address of
        // the `Stmt` that the same table's `_h` (its userdata) keeps alive, and `n` pointers to
        // the `oltplab_param`s that the table's `_params` keeps alive; `counts`, a `double[2]` of
        // the runtime. All of them live in this thread's Lua state, whose code is not running
        // while this function does (it calls no Lua).
        #[allow(unsafe_code)]
        let (stmt, params, counts) = unsafe {
            let call = &*call;
            let params = std::slice::from_raw_parts(std::ptr::addr_of!(call.params).cast(), call.n as usize);
            (&*call.stmt, params.iter().map(|&p: &*const ParamSlot| &*p), &mut *counts.cast::<[f64; 2]>())
        };
        if stmt.is_closed() {
            return SLOW_PATH;
        }
        let mut op = stmt.start(params.map(bound));
        match done_at_once(&mut op) {
            Some((Ok(result), values)) if result.rows.is_empty() => {
                stmt.finished(values, result.class);
                if result.class != QueryClass::Read {
                    return DONE;
                }
                *counts = [result.row_count as f64, result.columns as f64];
                return DONE_RESULT_SET;
            }
            // An error or rows: the slow path's, with the outcome (the future is spent).
            Some(done) => op = Box::pin(std::future::ready(done)),
            None => {}
        }
        stmt.leave(op);
        SLOW_PATH
    }))
    .unwrap_or(SLOW_PATH)
}

/// The value a parameter binds, as sysbench's buffer would hold it.
fn bound(slot: &ParamSlot) -> Value {
    match (slot.tag, ParamKind::of_code(i64::from(slot.kind))) {
        (NUMBER, ParamKind::Int) => Value::Int(slot.number as i64), // truncated, as LuaJIT's int64
        (NUMBER, ParamKind::Double) => Value::Text(number_text(slot.number)),
        (NUMBER, ParamKind::Text { max_len }) => Value::Text(text(number_text(slot.number).as_bytes(), max_len)),
        (STRING, ParamKind::Text { max_len }) => {
            // SAFETY: the buffer holds `kind` bytes (`max_len`), of which `param:set` wrote
            // `text_len`; a script that wrote a larger `text_len` itself reads no further.
            #[allow(unsafe_code)]
            let bytes = unsafe {
                std::slice::from_raw_parts(std::ptr::addr_of!(slot.text).cast::<u8>(), slot.text_len.min(max_len))
            };
            Value::Text(text(bytes, max_len))
        }
        // `param:set` stores nothing else (a string for a number parameter is refused there).
        _ => Value::Null,
    }
}

/// A Lua number as text: an integral one without a fraction, as Lua prints it (and as mlua
/// converted it before: an integer when it is one exactly, -0 not).
fn number_text(n: f64) -> String {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if (-TWO_63..TWO_63).contains(&n) && ((n as i64) as f64).to_bits() == n.to_bits() {
        (n as i64).to_string()
    } else {
        n.to_string()
    }
}

/// `bytes` as text, a character its cut split left out, as before (the engine cut the whole
/// string at a character boundary).
fn text(bytes: &[u8], max_len: usize) -> String {
    let bytes = &bytes[..bytes.len().min(max_len)];
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(e) if e.error_len().is_none() => String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(tag: i32, kind: ParamKind, number: f64) -> ParamSlot {
        ParamSlot { tag, kind: kind.code() as i32, number, text_len: 0, text: [] }
    }

    fn as_text(v: Value) -> String {
        match v {
            Value::Text(s) => s,
            _ => panic!("not text"),
        }
    }

    #[test]
    fn numbers_bind_as_sysbench_buffers_hold_them() {
        assert!(matches!(bound(&slot(NUMBER, ParamKind::Int, 42.9)), Value::Int(42)));
        assert!(matches!(bound(&slot(NUMBER, ParamKind::Int, -3.5)), Value::Int(-3)));
        assert_eq!(as_text(bound(&slot(NUMBER, ParamKind::Double, 3.0))), "3");
        assert_eq!(as_text(bound(&slot(NUMBER, ParamKind::Double, 0.25))), "0.25");
        assert_eq!(as_text(bound(&slot(NUMBER, ParamKind::Double, -0.0))), "-0");
        assert_eq!(as_text(bound(&slot(NUMBER, ParamKind::Text { max_len: 3 }, 123_456.0))), "123");
        assert!(matches!(bound(&slot(0, ParamKind::Int, 1.0)), Value::Null));
    }

    #[test]
    fn a_text_cut_inside_a_character_leaves_it_out() {
        let s = "héllo".as_bytes();
        assert_eq!(text(s, 2), "h");
        assert_eq!(text(s, 3), "hé");
        assert_eq!(text(s, 10), "héllo");
        assert_eq!(text(b"a\xffb", 3), "a\u{fffd}b");
    }
}
