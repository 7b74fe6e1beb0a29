//! sysbench.rand on the engine's generators: one xoroshiro128+ per Lua state (sysbench keeps one
//! per OS thread; oltplab's sysbench threads of one engine thread share it), the `--rand-*`
//! distributions, string templates and the run-wide unique sequence.

use std::rc::Rc;

use mlua::{FromLuaMulti, IntoLuaMulti, Lua, Table};

use super::ctx::StateShared;
use crate::rand::rand_string;

/// Registers the generators of `shared`, which each function holds: these are the hottest calls
/// of an event, and the state's data is not looked up per call.
pub fn register(lua: &Lua, host: &Table, shared: &Rc<StateShared>) -> mlua::Result<()> {
    set(lua, host, "rand_uniform", shared, |s, (a, b): (f64, f64)| Ok(s.rng.borrow_mut().uniform(a as u32, b as u32)))?;
    for name in ["default", "gaussian", "special", "pareto"] {
        set(lua, host, &format!("rand_{name}"), shared, move |s, (a, b): (f64, f64)| {
            let dist = match name {
                "default" => &s.dists.default,
                "gaussian" => &s.dists.gaussian,
                "special" => &s.dists.special,
                _ => &s.dists.pareto,
            };
            Ok(dist.sample(&mut s.rng.borrow_mut(), a as u32, b as u32))
        })?;
    }
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
