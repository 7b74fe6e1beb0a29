//! Database drivers. A driver opens [`Conn`]s; a connection prepares a workload's
//! statements once and executes them by id. Dispatch is a plain enum (no boxing,
//! no async-trait) so the hot path stays monomorphic.

mod fake;
mod mysql;
pub mod password;
mod postgres;
mod sqlite;
mod sqlite_queue;
mod tab_text;
mod target;
pub mod url;

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

use std::fmt;
use std::time::Duration;

use crate::error::Result;

/// How long a connection's goodbye (`COM_QUIT`, `Terminate`) may take, at the end of a run or
/// before a `--reconnect`: a server that does not answer holds nothing up for longer.
const QUIT_TIMEOUT: Duration = Duration::from_secs(1);

/// A bound parameter or a fetched column value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
}

impl fmt::Display for Value {
    /// Renders the value as an SQL literal, as sysbench's `--db-ps-mode=disable` does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Int(v) => write!(f, "{v}"),
            Value::Text(s) => write!(f, "'{s}'"),
        }
    }
}

/// Index of a statement in the list a workload registered with [`Conn::prepare`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StmtId(pub usize);

/// How sysbench classifies a statement: by its result, not by its verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryClass {
    /// Returned a result set.
    Read,
    /// Returned no result set and changed at least one row.
    Write,
    /// Everything else: BEGIN, COMMIT, DDL, an UPDATE that matched no row.
    Other,
}

/// Whether the caller needs the rows or only their count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    Discard,
    Rows,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryResult {
    pub class: QueryClass,
    /// Rows returned (reads) or affected (writes).
    pub row_count: u64,
    /// Filled only with [`Fetch::Rows`].
    pub rows: Vec<Vec<Value>>,
}

impl QueryResult {
    pub fn other() -> Self {
        Self { class: QueryClass::Other, row_count: 0, rows: Vec::new() }
    }

    /// The first column of the first row as an integer, for statements such as `SELECT d_next_o_id`.
    pub fn first_int(&self) -> Option<i64> {
        match self.rows.first()?.first()? {
            Value::Int(v) => Some(*v),
            Value::Text(s) => s.trim().parse().ok(),
            Value::Null => None,
        }
    }
}

/// What the event loop does after a failed statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorAction {
    /// Count it, roll back, and run the event again (sysbench's "ignored errors").
    Retry,
    /// The connection is gone: count it, reconnect, and run the event again.
    Reconnect,
    /// The run cannot go on.
    Fatal,
}

/// A database error, classified by the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    /// The server's code as text: `1213`, `40P01`, `SQLITE_BUSY`.
    pub code: String,
    pub message: String,
    pub action: ErrorAction,
}

impl DbError {
    pub fn fatal(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self { code: code.into(), message: message.into(), action: ErrorAction::Fatal }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error {} ({})", self.code, self.message)
    }
}

pub type DbResult<T> = std::result::Result<T, DbError>;

/// One open connection to the target.
pub enum Conn {
    Sqlite(SqliteConn),
    Mysql(MysqlConn),
    Postgres(PostgresConn),
    Fake(FakeConn),
}

/// What the server says about itself, recorded in run.json.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ServerInfo {
    pub version: String,
    /// Global variables (MySQL `SHOW GLOBAL VARIABLES`, PostgreSQL `pg_settings`, SQLite pragmas).
    pub variables: std::collections::BTreeMap<String, String>,
}

/// The server's connection and statement limits, for the pre-flight check.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerLimits {
    pub max_connections: Option<u64>,
    /// Connections open now (ours included).
    pub connections_in_use: Option<u64>,
    /// MySQL's `max_prepared_stmt_count` and the count in use now.
    pub max_prepared_stmts: Option<u64>,
    pub prepared_stmts_in_use: Option<u64>,
}

impl Conn {
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

    /// Executes a prepared statement.
    pub async fn execute(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> DbResult<QueryResult> {
        match self {
            Conn::Sqlite(c) => c.execute(id, params, fetch).await,
            Conn::Mysql(c) => c.execute(id, params, fetch).await,
            Conn::Postgres(c) => c.execute(id, params, fetch).await,
            Conn::Fake(c) => c.execute(id, params, fetch).await,
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
    /// identical (COPY, LOAD DATA LOCAL INFILE, or multi-row INSERTs); returns the rows loaded.
    pub async fn bulk_load(&mut self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> DbResult<u64> {
        match self {
            Conn::Mysql(c) => c.bulk_load(table, columns, rows).await,
            Conn::Postgres(c) => c.bulk_load_text(table, columns, &TabRows::from_values(rows)).await,
            Conn::Sqlite(_) | Conn::Fake(_) => insert_batches(self, table, columns, rows).await,
        }
    }

    /// As [`Conn::bulk_load`], for rows already written as tab-separated text (a loader that
    /// writes them so builds no value per column; SQLite gets them back as quoted text).
    pub async fn bulk_load_text(&mut self, table: &str, columns: &[&str], rows: &TabRows) -> DbResult<u64> {
        match self {
            Conn::Mysql(c) => c.bulk_load_text(table, columns, rows).await,
            Conn::Postgres(c) => c.bulk_load_text(table, columns, rows).await,
            Conn::Sqlite(_) | Conn::Fake(_) => insert_batches(self, table, columns, &rows.to_values()).await,
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

/// The SQL dialects whose DDL differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Mysql,
    Postgres,
    Sqlite,
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
