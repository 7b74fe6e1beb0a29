//! Database drivers. A driver opens [`Conn`]s; a connection prepares a workload's
//! statements once and executes them by id (what it speaks, values, results and errors, is
//! the vocabulary in [`crate::db`]). Dispatch is a plain enum (no boxing,
//! no async-trait) so the hot path stays monomorphic.

mod fake;
mod mysql;
pub mod password;
mod postgres;
pub mod reply_wait;
mod share;
mod sqlite;
mod sqlite_queue;
mod stream;
mod tab_text;
mod target;
mod tls;
pub mod url;

#[cfg(test)]
mod execute_now_tests;

/// Defaults shared with the option catalogue.
pub mod target_defaults {
    pub const MYSQL_IGNORE_ERRORS: &str = super::target::DEFAULT_MYSQL_IGNORE_ERRORS;
}

pub use fake::FakeConn;
pub use mysql::MysqlConn;
pub use postgres::PostgresConn;
pub use sqlite::SqliteConn;
pub use tab_text::{int_bytes, push_int, TabRows};
pub use target::{MysqlTarget, PostgresTarget, PsMode, SqliteTarget, Target, TargetOptions};

use std::sync::Arc;
use std::time::Duration;

use crate::db::{DbError, DbResult, Dialect, Fetch, QueryResult, ServerInfo, ServerLimits, StmtId, Value};
use crate::error::Result;

/// How long a connection's goodbye (`COM_QUIT`, `Terminate`) may take, at the end of a run or
/// before a `--reconnect`: a server that does not answer holds nothing up for longer.
const QUIT_TIMEOUT: Duration = Duration::from_secs(1);

/// What [`Conn::execute_now`] did.
pub enum Now {
    /// The statement ran: its result.
    Done(DbResult<QueryResult>),
    /// It was sent, or partly, and its reply is not all there: [`Conn::finish`] awaits the rest.
    Wait(Pending),
    /// Nothing was done: [`Conn::execute`] runs it.
    Later,
}

/// A statement's state between [`Conn::execute_now`] and [`Conn::finish`].
pub enum Pending {
    Mysql(mysql::Pending),
    Postgres(postgres::Pending),
}

/// One open connection to the target.
pub enum Conn {
    Sqlite(SqliteConn),
    Mysql(MysqlConn),
    Postgres(PostgresConn),
    Fake(FakeConn),
}

impl Conn {
    /// An inert connection for the executor's slot when the workload opens its own (a script
    /// connects in its `thread_init`): never opened, nothing is ever sent on it.
    pub fn placeholder() -> Self {
        Conn::Fake(FakeConn::new(fake::FakeTarget::default()))
    }

    /// Opens one connection. Errors here are [`EngineError::Connect`]: nothing has run yet.
    pub async fn open(target: &Target) -> Result<Self> {
        match target {
            Target::Sqlite(t) => Ok(Conn::Sqlite(SqliteConn::open(t).await?)),
            Target::Mysql(t) => Ok(Conn::Mysql(MysqlConn::open(t).await?)),
            Target::Postgres(t) => Ok(Conn::Postgres(PostgresConn::open(t).await?)),
            Target::Fake(t) => Ok(Conn::Fake(FakeConn::new(t.clone()))),
        }
    }

    /// Prepares `sqls` (with `?` placeholders); [`StmtId`] `i` names `sqls[i]` afterwards.
    pub async fn prepare(&mut self, sqls: &[String]) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => c.prepare(sqls).await,
            Conn::Mysql(c) => c.prepare(sqls).await,
            Conn::Postgres(c) => c.prepare(sqls).await,
            Conn::Fake(c) => c.prepare(sqls),
        }
    }

    /// Prepares one more statement, after those of [`Conn::prepare`] and earlier calls: a script
    /// prepares its statements one at a time. A reconnect prepares it again with the others.
    /// The text is shared: thousands of connections prepare the same few (script/sql.rs).
    pub async fn prepare_more(&mut self, sql: &Arc<str>) -> DbResult<StmtId> {
        match self {
            Conn::Sqlite(c) => c.prepare_more(sql).await,
            Conn::Mysql(c) => c.prepare_more(sql).await,
            Conn::Postgres(c) => c.prepare_more(sql).await,
            Conn::Fake(c) => Ok(c.prepare_more(sql)),
        }
    }

    /// Closes one prepared statement on the server, as sysbench's `stmt:close()` does (MySQL's
    /// `COM_STMT_CLOSE`; PostgreSQL's driver and SQLite's keep theirs, as sysbench's pgsql driver
    /// does). `id` must not be executed afterwards.
    pub async fn close_statement(&mut self, id: StmtId) -> DbResult<()> {
        match self {
            Conn::Mysql(c) => c.close_statement(id).await,
            Conn::Sqlite(_) | Conn::Postgres(_) | Conn::Fake(_) => Ok(()),
        }
    }

    /// Executes a prepared statement.
    pub async fn execute(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> DbResult<QueryResult> {
        match self {
            Conn::Sqlite(c) => c.execute(id, params, fetch).await,
            Conn::Mysql(c) => c.execute(id, params, fetch).await,
            Conn::Postgres(c) => c.execute(id, params, fetch).await,
            Conn::Fake(c) => c.execute(id, params, fetch).await,
        }
    }

    /// A prepared statement run as far as it goes without an await, on a thread's sole
    /// connection (`reply_wait.rs`): mostly the whole statement, without the futures of
    /// [`Conn::execute`]. What it returns says how to go on.
    pub fn execute_now(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> Now {
        // A connection that shares its thread waits through the runtime: its statement could
        // not be done here, and the state handed over would only be copied from future to future.
        if !reply_wait::sole_connection() {
            return Now::Later;
        }
        match self {
            Conn::Mysql(c) => c.execute_now(id, params, fetch),
            Conn::Postgres(c) => c.execute_now(id, params, fetch),
            Conn::Sqlite(_) | Conn::Fake(_) => Now::Later,
        }
    }

    /// The rest of a statement [`Conn::execute_now`] began.
    pub async fn finish(&mut self, pending: Pending) -> DbResult<QueryResult> {
        match (self, pending) {
            (Conn::Mysql(c), Pending::Mysql(p)) => c.finish(p).await,
            (Conn::Postgres(c), Pending::Postgres(p)) => c.finish(p).await,
            (_, _) => Err(DbError::fatal("OLTPLAB", "a statement finished on another driver's connection")),
        }
    }

    /// Sends one statement as text (DDL, multi-row INSERT, `ROLLBACK`).
    pub async fn query(&mut self, sql: &str, fetch: Fetch) -> DbResult<QueryResult> {
        match self {
            Conn::Sqlite(c) => c.query(sql, fetch).await,
            Conn::Mysql(c) => c.query(sql, fetch).await,
            Conn::Postgres(c) => c.query(sql, fetch).await,
            Conn::Fake(c) => c.query(sql, fetch).await,
        }
    }

    /// Ends the connection as sysbench's drivers do at the end of a thread (`mysql_close()`,
    /// `PQfinish()`): a server sees a client that said goodbye, not an aborted one (which
    /// MariaDB counts in `Aborted_clients` and, at its default `log_warnings=2`, logs once per
    /// connection). Waits at most a second for a server that does not answer.
    pub async fn close(self) {
        match self {
            Conn::Mysql(c) => c.close().await,
            Conn::Postgres(c) => c.close().await,
            Conn::Sqlite(_) | Conn::Fake(_) => {}
        }
    }

    /// Re-opens a lost connection and prepares its statements again.
    pub async fn reconnect(&mut self) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => c.reconnect().await,
            Conn::Mysql(c) => c.reconnect().await,
            Conn::Postgres(c) => c.reconnect().await,
            Conn::Fake(c) => c.reconnect(),
        }
    }

    /// Version and global variables, as run.json records them.
    pub async fn server_info(&mut self) -> DbResult<ServerInfo> {
        match self {
            Conn::Mysql(c) => c.server_info().await,
            Conn::Postgres(c) => c.server_info().await,
            Conn::Sqlite(_) | Conn::Fake(_) => {
                let mut info =
                    ServerInfo { version: self.scalar("SELECT sqlite_version()").await?, ..ServerInfo::default() };
                for pragma in ["journal_mode", "synchronous", "page_size", "cache_size", "busy_timeout"] {
                    let value = self.scalar(&format!("PRAGMA {pragma}")).await?;
                    info.variables.insert(pragma.to_string(), value);
                }
                Ok(info)
            }
        }
    }

    /// Connection and statement limits, for the pre-flight check (none for an embedded database).
    pub async fn limits(&mut self) -> DbResult<ServerLimits> {
        match self {
            Conn::Mysql(c) => c.limits().await,
            Conn::Postgres(c) => c.limits().await,
            Conn::Sqlite(_) | Conn::Fake(_) => Ok(ServerLimits::default()),
        }
    }

    /// Loads `rows` into `table` by the fastest path the server offers that keeps the data
    /// identical (COPY, LOAD DATA LOCAL INFILE, SQLite's prepared INSERT, or multi-row INSERTs);
    /// returns the rows loaded.
    pub async fn bulk_load(&mut self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> DbResult<u64> {
        match self {
            Conn::Mysql(c) => c.bulk_load(table, columns, rows).await,
            Conn::Postgres(c) => c.bulk_load_text(table, columns, &TabRows::from_values(rows)).await,
            Conn::Sqlite(c) => c.insert_rows(table, columns, rows.to_vec()).await,
            Conn::Fake(_) => insert_batches(self, table, columns, rows).await,
        }
    }

    /// As [`Conn::bulk_load`], for rows already written as tab-separated text (a loader that
    /// writes them so builds no value per column; SQLite gets them back as text values, which its
    /// columns' types turn into numbers as they would quoted literals).
    pub async fn bulk_load_text(&mut self, table: &str, columns: &[&str], rows: &TabRows) -> DbResult<u64> {
        match self {
            Conn::Mysql(c) => c.bulk_load_text(table, columns, rows).await,
            Conn::Postgres(c) => c.bulk_load_text(table, columns, rows).await,
            Conn::Sqlite(c) => c.insert_rows(table, columns, rows.to_values()).await,
            Conn::Fake(_) => insert_batches(self, table, columns, &rows.to_values()).await,
        }
    }

    /// The first column of the first row, as text.
    pub async fn scalar(&mut self, sql: &str) -> DbResult<String> {
        let r = self.query(sql, Fetch::Rows).await?;
        Ok(match r.rows.first().and_then(|row| row.first()) {
            Some(Value::Text(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        })
    }

    /// SQL dialect, for the few statements that differ between servers (DDL).
    pub fn dialect(&self) -> Dialect {
        match self {
            Conn::Sqlite(_) => Dialect::Sqlite,
            // The fake stands in for sysbench's reference server, so it speaks MySQL's SQL.
            Conn::Mysql(_) | Conn::Fake(_) => Dialect::Mysql,
            Conn::Postgres(_) => Dialect::Postgres,
        }
    }
}

/// The portable bulk load: multi-row INSERTs of at most 512 KiB each (sysbench's batches).
pub async fn insert_batches(conn: &mut Conn, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> DbResult<u64> {
    let mut batches = InsertBatches::new(table, columns, rows);
    let mut loaded = 0;
    while let Some((sql, n)) = batches.next_batch() {
        conn.query(sql, Fetch::Discard).await?;
        loaded += n;
    }
    Ok(loaded)
}

/// The statements of [`insert_batches`], one at a time in one reused buffer, for drivers that
/// fall back to them from inside their own `bulk_load` (where no [`Conn`] is at hand).
pub struct InsertBatches<'a> {
    head: String,
    rows: std::slice::Iter<'a, Vec<Value>>,
    sql: String,
    /// The next row's `(...)` text: the row that did not fit into the previous batch.
    row: String,
}

impl<'a> InsertBatches<'a> {
    const BATCH_BYTES: usize = 512 * 1024;

    pub fn new(table: &str, columns: &[&str], rows: &'a [Vec<Value>]) -> Self {
        Self {
            head: format!("INSERT INTO {table}({}) VALUES ", columns.join(", ")),
            rows: rows.iter(),
            sql: String::new(),
            row: String::new(),
        }
    }

    /// The next INSERT and how many rows it holds; None when every row was sent.
    pub fn next_batch(&mut self) -> Option<(&str, u64)> {
        use std::fmt::Write as _;
        self.sql.clear();
        let mut n = 0;
        loop {
            if self.row.is_empty() {
                let Some(row) = self.rows.next() else { break };
                self.row.push('(');
                for (i, v) in row.iter().enumerate() {
                    let _ = if i == 0 { write!(self.row, "{v}") } else { write!(self.row, ", {v}") };
                }
                self.row.push(')');
            }
            if n > 0 && self.sql.len() + self.row.len() + 1 > Self::BATCH_BYTES {
                break;
            }
            self.sql.push_str(if n == 0 { &self.head } else { "," });
            self.sql.push_str(&self.row);
            self.row.clear();
            n += 1;
        }
        (n > 0).then_some((self.sql.as_str(), n))
    }
}
