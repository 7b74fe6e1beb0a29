//! A prepared statement's execute as a C function that runtime.lua calls through LuaJIT's ffi,
//! as sysbench's `execute` is: LuaJIT compiles the call into the event's trace, with no Lua C
//! API crossing (mlua's argument conversion, userdata borrow and protected call cost ~0.7 us an
//! event; docs/lua.md, "What it costs").
//!
//! A parameter's `set` writes its value into a [`ParamSlot`] (a struct of LuaJIT's memory, no
//! call); [`execute`] reads the slots, starts the statement and, on an engine thread with one
//! connection, polls it once (as `resume.rs` does). Done without an error and without rows to
//! hand over (a prepared statement's are discarded), it returns at once; anything else (not
//! done, an error, a closed statement) is left in the statement's `started` slot and the Lua
//! side takes the slow path, `host.execute` (sql.rs), which yields, raises or reconnects as
//! before. Nothing here runs Lua code, raises a Lua error or unwinds into LuaJIT's frames.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::task::{Context, Poll, Waker};

use mlua::{LightUserData, Table};

use super::sql::{ParamKind, Stmt};
use crate::db::{QueryClass, Value};
use crate::driver::reply_wait;

/// A parameter's value as runtime.lua's `oltplab_param` holds it (`param:set`).
#[repr(C)]
pub struct ParamSlot {
    /// 0 for nil (a parameter never set: LuaJIT zero-fills a new struct), [`NUMBER`] or [`STRING`].
    tag: i32,
    number: f64,
    /// A Lua string's bytes, which the parameter's table keeps alive (its `_value`).
    text: *const u8,
    text_len: usize,
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

type Execute = extern "C" fn(*const Stmt, *const *const ParamSlot, u32, *mut f64) -> i32;

/// Executes the statement `stmt` with the `n` parameters `slots` point to; writes a result
/// set's row and field counts into `counts[0..2]`.
extern "C" fn execute(stmt: *const Stmt, slots: *const *const ParamSlot, n: u32, counts: *mut f64) -> i32 {
    // A panic is the slow path's "internal error" (nothing started): never an unwind into LuaJIT.
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: runtime.lua passes `stmt` as its statement table's `_p`, the address of the
        // `Stmt` that the same table's `_h` (its userdata) keeps alive; `slots` points to the
        // table's `_slots`, `n` pointers to the `oltplab_param` structs its parameters keep alive;
        // `counts` to a `double[2]` of the runtime. All of them live in this thread's Lua state,
        // whose code is not running while this function does (it calls no Lua).
        #[allow(unsafe_code)]
        let (stmt, slots, counts) = unsafe {
            let slots: &[*const ParamSlot] =
                if n == 0 || slots.is_null() { &[] } else { std::slice::from_raw_parts(slots, n as usize) };
            (&*stmt, slots.iter().map(|&p| &*p), &mut *counts.cast::<[f64; 2]>())
        };
        if stmt.is_closed() {
            return SLOW_PATH;
        }
        let mut op = stmt.start(stmt.params().iter().zip(slots).map(|(&kind, slot)| bound(kind, slot)));
        if reply_wait::sole_connection() {
            if let Poll::Ready(done) = op.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
                match done {
                    (Ok(result), values) if result.rows.is_empty() => {
                        stmt.finished(values, result.class);
                        if result.class != QueryClass::Read {
                            return DONE;
                        }
                        *counts = [result.row_count as f64, result.columns as f64];
                        return DONE_RESULT_SET;
                    }
                    // An error or rows: the slow path's, with the outcome (the future is spent).
                    done => op = Box::pin(std::future::ready(done)),
                }
            }
        }
        stmt.leave(op);
        SLOW_PATH
    }))
    .unwrap_or(SLOW_PATH)
}

/// The value a slot binds to a parameter of type `kind`, as sysbench's buffer would hold it.
fn bound(kind: ParamKind, slot: &ParamSlot) -> Value {
    match (slot.tag, kind) {
        (NUMBER, ParamKind::Int) => Value::Int(slot.number as i64), // truncated, as LuaJIT's int64
        (NUMBER, ParamKind::Double) => Value::Text(number_text(slot.number)),
        (NUMBER, ParamKind::Text { max_len }) => Value::Text(truncated(&number_text(slot.number), max_len)),
        (STRING, ParamKind::Text { max_len }) => {
            // SAFETY: `text` and `text_len` are the bytes of a Lua string that the parameter's
            // table holds (runtime.lua's `param:set`), so alive during this call.
            #[allow(unsafe_code)]
            let bytes = unsafe { std::slice::from_raw_parts(slot.text, slot.text_len) };
            Value::Text(truncated(&String::from_utf8_lossy(bytes), max_len))
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

/// The first `max_len` bytes of `s`, cut at a character boundary.
fn truncated(s: &str, max_len: usize) -> String {
    let mut end = s.len().min(max_len);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot_number(n: f64) -> ParamSlot {
        ParamSlot { tag: NUMBER, number: n, text: std::ptr::null(), text_len: 0 }
    }

    #[test]
    fn numbers_bind_as_sysbench_buffers_hold_them() {
        assert!(matches!(bound(ParamKind::Int, &slot_number(42.9)), Value::Int(42)));
        assert!(matches!(bound(ParamKind::Int, &slot_number(-3.5)), Value::Int(-3)));
        let text = |kind, n| match bound(kind, &slot_number(n)) {
            Value::Text(s) => s,
            _ => panic!("not text"),
        };
        assert_eq!(text(ParamKind::Double, 3.0), "3");
        assert_eq!(text(ParamKind::Double, 0.25), "0.25");
        assert_eq!(text(ParamKind::Double, -0.0), "-0");
        assert_eq!(text(ParamKind::Text { max_len: 3 }, 123_456.0), "123");
        assert!(matches!(bound(ParamKind::Int, &ParamSlot { tag: 0, ..slot_number(1.0) }), Value::Null));
    }

    #[test]
    fn strings_are_copied_and_cut_at_a_character() {
        let s = "héllo";
        let slot = ParamSlot { tag: STRING, number: 0.0, text: s.as_ptr(), text_len: s.len() };
        assert!(matches!(bound(ParamKind::Text { max_len: 2 }, &slot), Value::Text(t) if t == "h"));
        assert!(matches!(bound(ParamKind::Text { max_len: 10 }, &slot), Value::Text(t) if t == s));
    }
}
