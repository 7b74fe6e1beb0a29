//! What a failed statement does in a script, as sysbench's drivers do: the error counted, an
//! ignorable error rolled back on PostgreSQL, a lost connection opened again (oltplab's
//! reconnect, docs/lua.md), a fatal error's driver lines logged; and the error fields the Lua
//! runtime raises sysbench's errors from (`runtime.lua`: `failed`).

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Lua, Value as LuaValue};

use super::sql_conn::{query, reconnect, ScriptConn};
use crate::db::{DbError, ErrorAction, Fetch};

/// sysbench's `DB_ERROR_IGNORABLE` and `DB_ERROR_FATAL`.
const IGNORABLE: i64 = 1;
const FATAL: i64 = 2;

/// Which call failed, for the driver's FATAL line (sysbench's drivers word each differently).
pub(super) enum Origin<'a> {
    Query(&'a str),
    Execute(&'a str),
    Prepare,
}

/// Counts a failed statement and acts as sysbench's drivers do (PostgreSQL's rolls back after
/// an ignorable error; a lost connection is opened again: oltplab's reconnect, docs/lua.md; a
/// fatal error is logged); returns `class, errno, state, message` as sysbench's connection
/// holds them: MySQL's error number, PostgreSQL's SQLSTATE with errno 0.
pub(super) async fn failure(
    lua: &Lua,
    conn: &Rc<RefCell<ScriptConn>>,
    e: &DbError,
    origin: Origin<'_>,
) -> mlua::Result<Vec<LuaValue>> {
    let ctx = Rc::clone(&conn.borrow().ctx);
    let shared = &ctx.shared;
    let pgsql = shared.driver_name == "pgsql";
    let class = match e.action {
        ErrorAction::Retry => {
            shared.pacer.error(ctx.tid, &e.code, false);
            if pgsql {
                let _ = query(conn, "ROLLBACK", Fetch::Discard).await;
            }
            IGNORABLE
        }
        ErrorAction::Reconnect => {
            shared.pacer.error(ctx.tid, &e.code, true);
            if reconnect(conn).await.is_ok() {
                IGNORABLE
            } else {
                FATAL
            }
        }
        ErrorAction::Fatal => {
            shared.pacer.error(ctx.tid, &e.code, false);
            FATAL
        }
    };
    if class == FATAL {
        for line in driver_lines(pgsql, e, &origin) {
            (shared.log)(&line);
        }
    }
    let errno = if pgsql { 0 } else { e.code.parse::<i64>().unwrap_or(0) };
    let state = e.sql_state.clone();
    Ok(vec![
        LuaValue::Integer(class),
        LuaValue::Integer(errno),
        LuaValue::String(lua.create_string(&state)?),
        LuaValue::String(lua.create_string(&e.message)?),
    ])
}

/// The lines sysbench's drivers log for a fatal error, before the script's own error.
fn driver_lines(pgsql: bool, e: &DbError, origin: &Origin<'_>) -> Vec<String> {
    match (pgsql, origin) {
        (false, Origin::Query(sql)) => {
            vec![format!("mysql_drv_query() returned error {} ({}) for query '{sql}'", e.code, e.message)]
        }
        (false, Origin::Execute(sql)) => {
            vec![format!("mysql_stmt_execute() returned error {} ({}) for query '{sql}'", e.code, e.message)]
        }
        (false, Origin::Prepare) => {
            vec!["mysql_stmt_prepare() failed".to_string(), format!("MySQL error: {} \"{}\"", e.code, e.message)]
        }
        (true, Origin::Query(sql)) => {
            vec![format!("PQexec() failed: 7 {}", e.message), format!("failed query was: {sql}")]
        }
        (true, Origin::Execute(_)) => vec![format!("PQexecPrepared() failed: 7 {}", e.message)],
        (true, Origin::Prepare) => vec![format!("PQprepare() failed: {}", e.message)],
    }
}
