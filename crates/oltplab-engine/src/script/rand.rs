//! sysbench.rand on the engine's generators: one xoroshiro128+ per Lua state (sysbench keeps one
//! per OS thread; oltplab's sysbench threads of one engine thread share it), the `--rand-*`
//! distributions, string templates and the run-wide unique sequence.

use std::ffi::c_void;
use std::rc::Rc;

use mlua::{FromLuaMulti, IntoLuaMulti, LightUserData, Lua, Table};

use super::ctx::StateShared;
use crate::rand::{rand_string, Distribution};

/// Registers the generators of `shared`, which each function holds: these are the hottest calls
/// of an event, and the state's data is not looked up per call.
pub fn register(lua: &Lua, host: &Table, shared: &Rc<StateShared>) -> mlua::Result<()> {
    // The draws in [a, b], as C functions that runtime.lua calls through LuaJIT's ffi.
    host.set("rand_state", LightUserData(Rc::as_ptr(shared).cast_mut().cast()))?;
    let draws = lua.create_table()?;
    let by_name: [(&str, Draw); 5] = [
        ("uniform", draw_uniform),
        ("default", draw_default),
        ("gaussian", draw_gaussian),
        ("special", draw_special),
        ("pareto", draw_pareto),
    ];
    for (name, draw) in by_name {
        draws.set(name, LightUserData(draw as *mut c_void))?;
    }
    host.set("rand_draws", draws)?;
    set(lua, host, "rand_unique", shared, |s, ()| Ok(s.unique.next()))?;
    set(lua, host, "rand_string", shared, |s, fmt: mlua::String| {
        Ok(rand_string(&mut s.rng.borrow_mut(), &fmt.to_str()?))
    })?;
    set(lua, host, "rand_uniform_double", shared, |s, ()| Ok(s.rng.borrow_mut().uniform_f64()))?;
    // The draw's high and low 32 bits: a Lua number holds 53, runtime.lua makes sysbench's uint64_t.
    set(lua, host, "rand_uniform_uint64", shared, |s, ()| {
        let v = s.rng.borrow_mut().next_u64();
        Ok(((v >> 32) as u32, v as u32))
    })
}

/// `host[name]`: `f` called with the state's shared data.
fn set<A, R>(
    lua: &Lua,
    host: &Table,
    name: &str,
    shared: &Rc<StateShared>,
    f: impl Fn(&StateShared, A) -> mlua::Result<R> + 'static,
) -> mlua::Result<()>
where
    A: FromLuaMulti,
    R: IntoLuaMulti,
{
    let s = Rc::clone(shared);
    host.set(name, lua.create_function(move |_, args: A| f(&s, args))?)
}

/// A draw in `[a, b]` from the generator of the state whose [`StateShared`] is `s`, in C's
/// calling convention: sysbench's scripts call sysbench's own (`sb_rand_*`) through LuaJIT's
/// ffi, whose calls LuaJIT compiles into its traces; a call of a Lua C function (mlua's) ends
/// the trace. runtime.lua's `sysbench.rand` calls these the same way.
type Draw = extern "C" fn(s: *const StateShared, a: u32, b: u32) -> u32;

extern "C" fn draw_uniform(s: *const StateShared, a: u32, b: u32) -> u32 {
    sample(s, a, b, |_| &Distribution::Uniform)
}

extern "C" fn draw_default(s: *const StateShared, a: u32, b: u32) -> u32 {
    sample(s, a, b, |s| &s.dists.default)
}

extern "C" fn draw_gaussian(s: *const StateShared, a: u32, b: u32) -> u32 {
    sample(s, a, b, |s| &s.dists.gaussian)
}

extern "C" fn draw_special(s: *const StateShared, a: u32, b: u32) -> u32 {
    sample(s, a, b, |s| &s.dists.special)
}

extern "C" fn draw_pareto(s: *const StateShared, a: u32, b: u32) -> u32 {
    sample(s, a, b, |s| &s.dists.pareto)
}

fn sample(s: *const StateShared, a: u32, b: u32, dist: impl Fn(&StateShared) -> &Distribution) -> u32 {
    // SAFETY: `s` is `host.rand_state`, the state's own StateShared, which the state's app data
    // holds as long as the state lives, so as long as any of its Lua code can call this
    // (runtime.lua hands the pointer to no script). A draw runs no Lua code: the generator's
    // RefCell is never borrowed twice, and nothing here unwinds across the C boundary.
    #[allow(unsafe_code)]
    let s = unsafe { &*s };
    dist(s).sample(&mut s.rng.borrow_mut(), a, b)
}
