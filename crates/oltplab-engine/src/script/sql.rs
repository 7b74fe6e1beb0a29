//! sysbench.sql's engine side: connections, prepared statements, bound parameters and result
//! rows, over the engine's [`Conn`]. Statements are counted as sysbench counts them (by their
//! result). A failed statement returns sysbench's error fields to the Lua runtime, which raises
//! sysbench's errors (`runtime.lua`: `failed`; `sql_failure.rs`); nothing here raises for a
//! database error.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{AnyUserData, LightUserData, Lua, MultiValue, UserData, Value as LuaValue};

use super::ctx::{CtxHandle, LocalFuture};
use super::resume::set_async;
use super::sql_conn::{query, reconnect, with_conn, Bulk, ScriptConn};
use super::sql_failure::{failure, Origin};
use crate::db::{DbError, Fetch, QueryClass, QueryResult, StmtId, Value};
use crate::driver::Conn;

/// sysbench's `BULK_PACKET_SIZE`: a multi-row INSERT is sent when the next row would not fit.
const BULK_PACKET_BYTES: usize = 512 * 1024;
/// sysbench's SQL type codes (`sql_bind_type_t`).
const TYPE_TINYINT: i64 = 1;
const TYPE_BIGINT: i64 = 4;
const TYPE_FLOAT: i64 = 5;
const TYPE_DOUBLE: i64 = 6;
const TYPE_CHAR: i64 = 11;
const TYPE_VARCHAR: i64 = 12;

#[derive(Clone)]
pub struct ConnHandle(Rc<RefCell<ScriptConn>>);
impl UserData for ConnHandle {}

/// A prepared statement: its id on the connection and the parameters bound to it. Its execute
/// is a C function (`execute_call.rs`), which finds it by its address: runtime.lua's statement
/// table holds that (`_p`) next to the [`StmtHandle`] that keeps it alive (`_h`).
pub struct Stmt {
    conn: Rc<RefCell<ScriptConn>>,
    id: StmtId,
    /// For the driver's error line, as sysbench's drivers print it.
    sql: Arc<str>,
    /// The parameters' values, a buffer each execution reuses.
    values: RefCell<Vec<Value>>,
    closed: Cell<bool>,
    /// An execution the C function started and left to the slow path (`host.execute`).
    started: RefCell<Option<Execution>>,
}

/// A statement's execution in flight: its outcome and the values buffer, handed back.
type Execution = LocalFuture<'static, (Result<QueryResult, DbError>, Vec<Value>)>;

impl Stmt {
    pub fn is_closed(&self) -> bool {
        self.closed.get()
    }

    /// Starts executing the statement with `values` (written into its reused buffer).
    pub fn start(&self, values: impl Iterator<Item = Value>) -> Execution {
        let mut buf = std::mem::take(&mut *self.values.borrow_mut());
        buf.clear();
        buf.extend(values);
        let (conn, id) = (Rc::clone(&self.conn), self.id);
        Box::pin(async move {
            let outcome = with_conn(&conn, |mut c| {
                Box::pin(async move {
                    let r = c.execute(id, &buf, Fetch::Discard).await;
                    (c, (r, buf))
                })
            })
            .await;
            match outcome {
                Ok(done) => done,
                Err(e) => (Err(e), Vec::new()),
            }
        })
    }

    /// An execution done without an error: its values buffer back, its statement counted.
    pub fn finished(&self, values: Vec<Value>, class: QueryClass) {
        *self.values.borrow_mut() = values;
        self.conn.borrow().ctx.count(class);
    }

    /// Leaves `op` to the slow path, which runtime.lua calls next.
    pub fn leave(&self, op: Execution) {
        *self.started.borrow_mut() = Some(op);
    }
}

#[derive(Clone)]
pub struct StmtHandle(Rc<Stmt>);
impl UserData for StmtHandle {}

/// A bound parameter's type. Its value lives in an `oltplab_param` of runtime.lua (`set` is a
/// store into it, no call into the engine) and is converted by `execute` (`execute_call.rs`).
#[derive(Clone, Copy, PartialEq)]
pub enum ParamKind {
    Int,
    Double,
    Text { max_len: usize },
}

impl ParamKind {
    /// `bind_create`'s code for runtime.lua: -1 an integer, -2 a double, else a text's length.
    pub fn code(self) -> i64 {
        match self {
            Self::Int => -1,
            Self::Double => -2,
            Self::Text { max_len } => i64::try_from(max_len).unwrap_or(i64::MAX),
        }
    }

    pub fn of_code(code: i64) -> Self {
        match code {
            -1 => Self::Int,
            -2 => Self::Double,
            n => Self::Text { max_len: usize::try_from(n).unwrap_or(0) },
        }
    }
}

/// The statement texts a state's connections prepared, one copy each, which the statements and
/// the driver share: every sysbench thread prepares the same ones (`oltp_common`'s 22 at 4,096
/// connections were 90,000 copies in the statements and as many in the driver, 10 MB of heap).
#[derive(Default)]
struct SqlTexts(RefCell<HashSet<Arc<str>>>);

impl SqlTexts {
    fn get(lua: &Lua, sql: &str) -> mlua::Result<Arc<str>> {
        let texts = lua.app_data_ref::<Self>().ok_or_else(|| mlua::Error::runtime("internal error: no SqlTexts"))?;
        let mut set = texts.0.borrow_mut();
        if let Some(same) = set.get(sql) {
            return Ok(Arc::clone(same));
        }
        let fresh: Arc<str> = Arc::from(sql);
        set.insert(Arc::clone(&fresh));
        Ok(fresh)
    }
}

/// Rows of a result set, fetched one at a time as tables of strings.
pub struct Rows(Vec<Vec<Value>>);
impl UserData for Rows {}

/// Registers the SQL functions into `host`.
pub fn register(lua: &Lua, host: &mlua::Table) -> mlua::Result<()> {
    lua.set_app_data(SqlTexts::default());
    register_connections(lua, host)?;
    register_statements(lua, host)?;
    register_bulk(lua, host)
}

fn register_connections(lua: &Lua, host: &mlua::Table) -> mlua::Result<()> {
    host.set(
        "driver",
        lua.create_function(|lua, name: Option<String>| {
            let shared = super::ctx::shared(lua)?;
            match name {
                Some(n) if n != shared.driver_name => {
                    Err(mlua::Error::runtime(format!("invalid database driver name: '{n}'")))
                }
                _ => {
                    (shared.driver_created)();
                    Ok(shared.driver_name)
                }
            }
        })?,
    )?;
    set_async(lua, host, "connect", |lua, ctx: AnyUserData| async move { connect(&lua, &ctx).await })?;
    set_async(lua, host, "query", |lua, (con, sql): (AnyUserData, mlua::String)| async move {
        let conn = Rc::clone(&con.borrow::<ConnHandle>()?.0);
        let sql = sql.to_str()?.to_owned();
        let r = query(&conn, &sql, Fetch::Rows).await;
        answer(&lua, &conn, r, Origin::Query(&sql)).await
    })?;
    set_async(lua, host, "prepare", |lua, (con, sql): (AnyUserData, mlua::String)| async move {
        let conn = Rc::clone(&con.borrow::<ConnHandle>()?.0);
        let sql = SqlTexts::get(&lua, &sql.to_str()?)?;
        match with_conn(&conn, |mut c| {
            let sql = &sql;
            Box::pin(async move {
                let r = c.prepare_more(sql).await;
                (c, r)
            })
        })
        .await
        .and_then(|r| r)
        {
            Ok(id) => {
                let stmt = Stmt {
                    conn,
                    id,
                    sql,
                    values: RefCell::default(),
                    closed: Cell::new(false),
                    started: RefCell::default(),
                };
                let stmt = Rc::new(stmt);
                let address = LightUserData(Rc::as_ptr(&stmt).cast_mut().cast());
                Ok(MultiValue::from_vec(vec![
                    LuaValue::UserData(lua.create_userdata(StmtHandle(stmt))?),
                    LuaValue::LightUserData(address),
                ]))
            }
            Err(e) => {
                let mut values = vec![LuaValue::Nil];
                values.extend(Box::pin(failure(&lua, &conn, &e, Origin::Prepare)).await?);
                Ok(MultiValue::from_vec(values))
            }
        }
    })?;
    set_async(lua, host, "disconnect", |_, con: AnyUserData| async move {
        let conn = Rc::clone(&con.borrow::<ConnHandle>()?.0);
        let taken = conn.borrow_mut().conn.take();
        if let Some(c) = taken {
            conn.borrow().ctx.flush_outside();
            c.close().await;
        }
        Ok(())
    })?;
    set_async(lua, host, "reconnect", |_, con: AnyUserData| async move {
        let conn = Rc::clone(&con.borrow::<ConnHandle>()?.0);
        reconnect(&conn).await.map_err(|e| mlua::Error::runtime(format!("reconnect failed: {e}")))
    })?;
    Ok(())
}

fn register_statements(lua: &Lua, host: &mlua::Table) -> mlua::Result<()> {
    // The slow path of execute_call.rs's C function: what it started and did not finish.
    set_async(lua, host, "execute", |lua, stmt: AnyUserData| async move {
        let stmt = Rc::clone(&stmt.borrow::<StmtHandle>()?.0);
        let started = stmt.started.borrow_mut().take();
        let Some(op) = started else {
            return Err(mlua::Error::runtime(if stmt.is_closed() {
                "attempt to execute a closed statement"
            } else {
                "internal error: the statement's execute failed (see the log)"
            }));
        };
        let (r, values) = op.await;
        *stmt.values.borrow_mut() = values;
        answer(&lua, &stmt.conn, r, Origin::Execute(&stmt.sql)).await
    })?;
    host.set(
        "bind_create",
        lua.create_function(|_, (btype, max_len): (i64, Option<usize>)| {
            let kind = match btype {
                TYPE_TINYINT..=TYPE_BIGINT => ParamKind::Int,
                TYPE_FLOAT | TYPE_DOUBLE => ParamKind::Double,
                TYPE_CHAR | TYPE_VARCHAR => ParamKind::Text { max_len: max_len.unwrap_or(0).min(i32::MAX as usize) },
                other => return Err(mlua::Error::runtime(format!("Unsupported argument type: {other}"))),
            };
            Ok(kind.code())
        })?,
    )?;
    set_async(lua, host, "close", |_, stmt: AnyUserData| async move {
        let (conn, id) = {
            let s = &stmt.borrow::<StmtHandle>()?.0;
            if s.closed.replace(true) {
                return Ok(());
            }
            (Rc::clone(&s.conn), s.id)
        };
        // As mysql_stmt_close(): the server forgets it (a closed connection has nothing to close).
        let _ = with_conn(&conn, |mut c| {
            Box::pin(async move {
                let r = c.close_statement(id).await;
                (c, r)
            })
        })
        .await;
        Ok(())
    })?;
    host.set(
        "fetch_row",
        lua.create_function(|lua, (rows, n): (AnyUserData, usize)| {
            let rows = rows.borrow::<Rows>()?;
            let Some(row) = n.checked_sub(1).and_then(|i| rows.0.get(i)) else { return Ok(LuaValue::Nil) };
            let t = lua.create_table_with_capacity(row.len(), 0)?;
            for (i, v) in row.iter().enumerate() {
                match v {
                    Value::Null => {}
                    Value::Int(x) => t.raw_set(i + 1, x.to_string())?,
                    Value::Text(s) => t.raw_set(i + 1, s.as_str())?,
                }
            }
            Ok(LuaValue::Table(t))
        })?,
    )?;
    Ok(())
}

fn register_bulk(lua: &Lua, host: &mlua::Table) -> mlua::Result<()> {
    host.set(
        "bulk_insert_init",
        lua.create_function(|_, (con, sql): (AnyUserData, mlua::String)| {
            let conn = Rc::clone(&con.borrow::<ConnHandle>()?.0);
            let sql = sql.to_str()?.to_owned();
            if sql.len() + 1 > BULK_PACKET_BYTES {
                return Err(mlua::Error::runtime(format!(
                    "Query length exceeds the maximum value ({BULK_PACKET_BYTES}), aborting"
                )));
            }
            let head_len = sql.len();
            conn.borrow_mut().bulk = Some(Bulk { sql, head_len, rows: 0 });
            Ok(())
        })?,
    )?;
    set_async(lua, host, "bulk_insert_next", |lua, (con, row): (AnyUserData, mlua::String)| async move {
        let conn = Rc::clone(&con.borrow::<ConnHandle>()?.0);
        let row = row.to_str()?;
        let full = {
            let c = conn.borrow();
            let bulk = c
                .bulk
                .as_ref()
                .ok_or_else(|| mlua::Error::runtime("attempt to call bulk_insert_next() before bulk_insert_init()"))?;
            bulk.sql.len() + row.len() + 1 + usize::from(bulk.rows > 0) > BULK_PACKET_BYTES
        };
        if full {
            if let Some(failed) = flush(&lua, &conn).await? {
                return Ok(failed);
            }
        }
        let mut c = conn.borrow_mut();
        let bulk = c.bulk.as_mut().expect("checked above");
        if bulk.rows > 0 {
            bulk.sql.push(',');
        }
        bulk.sql.push_str(&row);
        bulk.rows += 1;
        Ok(MultiValue::new())
    })?;
    set_async(lua, host, "bulk_insert_done", |lua, con: AnyUserData| async move {
        let conn = Rc::clone(&con.borrow::<ConnHandle>()?.0);
        let failed = flush(&lua, &conn).await?;
        conn.borrow_mut().bulk = None;
        Ok(failed.unwrap_or_default())
    })?;
    Ok(())
}

async fn connect(lua: &Lua, ctx: &AnyUserData) -> mlua::Result<AnyUserData> {
    let ctx = Rc::clone(&ctx.borrow::<CtxHandle>()?.0);
    let conn = Conn::open(&ctx.shared.target).await.map_err(|e| mlua::Error::runtime(e.to_string()))?;
    lua.create_userdata(ConnHandle(Rc::new(RefCell::new(ScriptConn { conn: Some(conn), ctx, bulk: None }))))
}

/// A statement's outcome for the Lua runtime: `nrows, nfields, rows` for a result set (`rows`
/// false when it holds none), nothing for other statements, or `nil, nil, nil, class, errno,
/// state, message` for an error.
async fn answer(
    lua: &Lua,
    conn: &Rc<RefCell<ScriptConn>>,
    r: Result<QueryResult, DbError>,
    origin: Origin<'_>,
) -> mlua::Result<MultiValue> {
    match r {
        Ok(result) => {
            conn.borrow().ctx.count(result.class);
            if result.class != QueryClass::Read {
                return Ok(MultiValue::new());
            }
            // No rows (a prepared statement's, which are discarded): no userdata for the GC.
            let rows = if result.rows.is_empty() {
                LuaValue::Boolean(false)
            } else {
                LuaValue::UserData(lua.create_userdata(Rows(result.rows))?)
            };
            Ok(MultiValue::from_vec(vec![
                LuaValue::Integer(i64::try_from(result.row_count).unwrap_or(i64::MAX)),
                LuaValue::Integer(i64::try_from(result.columns).unwrap_or(i64::MAX)),
                rows,
            ]))
        }
        Err(e) => {
            let mut values = vec![LuaValue::Nil, LuaValue::Nil, LuaValue::Nil];
            // Boxed: the error path (a reconnect, with its retries) would otherwise make every
            // statement in flight carry its state (execute's future was 1,232 bytes).
            values.extend(Box::pin(failure(lua, conn, &e, origin)).await?);
            Ok(MultiValue::from_vec(values))
        }
    }
}

/// Sends the buffered rows as one INSERT, if any; on an error, `answer`'s error values.
async fn flush(lua: &Lua, conn: &Rc<RefCell<ScriptConn>>) -> mlua::Result<Option<MultiValue>> {
    let sql = {
        let mut c = conn.borrow_mut();
        match c.bulk.as_mut() {
            Some(b) if b.rows > 0 => {
                let sql = b.sql.clone();
                b.sql.truncate(b.head_len);
                b.rows = 0;
                sql
            }
            _ => return Ok(None),
        }
    };
    let r = query(conn, &sql, Fetch::Discard).await;
    let values = answer(lua, conn, r, Origin::Query(&sql)).await?;
    Ok((!values.is_empty()).then_some(values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_keeps_one_copy_of_each_statement_text() {
        let lua = Lua::new();
        lua.set_app_data(SqlTexts::default());
        let a = SqlTexts::get(&lua, "SELECT 1").unwrap();
        let b = SqlTexts::get(&lua, "SELECT 1").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let c = SqlTexts::get(&lua, "SELECT 2").unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(&*c, "SELECT 2");
    }
}
