//! What a database connection speaks, shared by the drivers, the workloads and the executor:
//! bound and fetched values, prepared-statement ids, results and how sysbench classifies them,
//! errors and what the run does after them, SQL dialects, and what a server says about itself.
//! Plain data and no I/O: the drivers (`driver/`) produce it, everything above reads it.

use std::fmt;

/// The table prepare writes first and drops last (`workload/unfinished_prepare.rs`); the fake
/// driver answers that it is absent, as from a database whose prepare finished.
pub const UNFINISHED_PREPARE_TABLE: &str = "oltplab_unfinished_prepare";

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
    /// A result set's columns, rows or none (sysbench's `nfields`); 0 for other statements.
    pub columns: usize,
}

impl QueryResult {
    pub fn other() -> Self {
        Self { class: QueryClass::Other, row_count: 0, rows: Vec::new(), columns: 0 }
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
    /// The SQL state the server sent with the error (MySQL's ERR packet: `42S02`), as sysbench
    /// shows it; empty when there is none.
    pub sql_state: String,
}

impl DbError {
    pub fn fatal(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self { code: code.into(), message: message.into(), action: ErrorAction::Fatal, sql_state: String::new() }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error {} ({})", self.code, self.message)
    }
}

pub type DbResult<T> = std::result::Result<T, DbError>;

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

/// The SQL dialects whose DDL differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Mysql,
    Postgres,
    Sqlite,
}
