//! sysbench.rand on the engine's generators: one xoroshiro128+ per Lua state (sysbench keeps one
//! per OS thread; oltplab's sysbench threads of one engine thread share it), the `--rand-*`
//! distributions, string templates and the run-wide unique sequence.

use mlua::{Lua, Table};

use super::ctx::shared;
use crate::rand::rand_string;

pub fn register(lua: &Lua, host: &Table) -> mlua::Result<()> {
    host.set(
        "rand_uniform",
        lua.create_function(|lua, (a, b): (f64, f64)| {
            let s = shared(lua)?;
            let v = s.rng.borrow_mut().uniform(a as u32, b as u32);
            Ok(v)
        })?,
    )?;
    for name in ["default", "gaussian", "special", "pareto"] {
        host.set(
            format!("rand_{name}"),
            lua.create_function(move |lua, (a, b): (f64, f64)| {
                let s = shared(lua)?;
                let dist = match name {
                    "default" => &s.dists.default,
                    "gaussian" => &s.dists.gaussian,
                    "special" => &s.dists.special,
                    _ => &s.dists.pareto,
                };
                let v = dist.sample(&mut s.rng.borrow_mut(), a as u32, b as u32);
                Ok(v)
            })?,
        )?;
    }
    host.set("rand_unique", lua.create_function(|lua, ()| Ok(shared(lua)?.unique.next()))?)?;
    host.set(
        "rand_string",
        lua.create_function(|lua, fmt: mlua::String| {
            let s = shared(lua)?;
            let text = rand_string(&mut s.rng.borrow_mut(), &fmt.to_str()?);
            Ok(text)
        })?,
    )?;
    host.set(
        "rand_uniform_double",
        lua.create_function(|lua, ()| {
            let s = shared(lua)?;
            let v = s.rng.borrow_mut().uniform_f64();
            Ok(v)
        })?,
    )?;
    // The draw's high and low 32 bits: a Lua number holds 53, runtime.lua makes sysbench's uint64_t.
    host.set(
        "rand_uniform_uint64",
        lua.create_function(|lua, ()| {
            let s = shared(lua)?;
            let v = s.rng.borrow_mut().next_u64();
            Ok(((v >> 32) as u32, v as u32))
        })?,
    )?;
    Ok(())
}
