//! Lua functions whose Rust side waits (a statement, a sleep, the next event): mlua's
//! `create_async_function`, with the function's own future in a heap block that is freed as
//! soon as it completes.
//!
//! mlua boxes each call's future into a userdata and keeps it, finished, until Lua's collector
//! frees that userdata; the collector counts only the userdata's few bytes, not the box behind
//! it, so it runs far too rarely to bound them. With the futures inline (a statement's future
//! holds the driver's reconnect path) 4,096 read-only connections kept hundreds of MB of
//! finished calls (docs/lua.md, "What it costs"); boxed here, what waits for the collector is a
//! pointer's worth.

use std::future::Future;

use mlua::{FromLuaMulti, Function, IntoLuaMulti, Lua};

/// `lua.create_async_function(func)`, the future boxed and dropped when it completes.
pub fn async_fn<F, A, FR, R>(lua: &Lua, func: F) -> mlua::Result<Function>
where
    F: Fn(Lua, A) -> FR + 'static,
    A: FromLuaMulti,
    FR: Future<Output = mlua::Result<R>> + 'static,
    R: IntoLuaMulti,
{
    // mlua's own future awaits the box, which drops it on completion.
    lua.create_async_function(move |lua, args: A| Box::pin(func(lua, args)))
}
