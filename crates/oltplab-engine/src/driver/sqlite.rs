//! Embedded SQLite (rusqlite, bundled). rusqlite blocks, so each connection lives
//! on a thread of its own and async callers hand it closures: the tokio workers
//! never block on SQLite.

use std::io::Write as _;
use std::path::Path;
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{ErrorCode, OpenFlags, ToSql};

use super::sqlite_queue::{queue_for, WriteQueue};
use super::target::SqliteTarget;
use crate::db::{DbError, DbResult, ErrorAction, Fetch, QueryClass, QueryResult, StmtId, Value};
use crate::error::{EngineError, Result};

type Job = Box<dyn FnOnce(&mut Session) + Send>;

/// The state owned by the connection's thread.
struct Session {
    conn: rusqlite::Connection,
    sqls: Vec<String>,
    sql_log: Option<std::fs::File>,
    turn: WriteTurn,
}

/// This connection's place in the file's write queue.
struct WriteTurn {
    queue: Arc<WriteQueue>,
    /// This connection holds its turn.
    held: bool,
}

impl WriteTurn {
    /// A statement that may write waits for its turn, unless its transaction already has it.
    fn before(&mut self, readonly: bool) {
        if !readonly && !self.held {
            self.queue.acquire();
            self.held = true;
        }
    }

    /// The turn ends with the transaction (or with the autocommit statement).
    fn after(&mut self, autocommit: bool) {
        if self.held && autocommit {
            self.held = false;
            self.queue.release();
        }
    }
}

impl Drop for WriteTurn {
    fn drop(&mut self) {
        if self.held {
            self.queue.release();
        }
    }
}

pub struct SqliteConn {
    jobs: mpsc::Sender<Job>,
}

impl SqliteConn {
    pub async fn open(target: &SqliteTarget) -> Result<Self> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
        let target = target.clone();
        thread::Builder::new()
            .name("oltplab-sqlite".into())
            .stack_size(256 * 1024)
            .spawn(move || match open_session(&target) {
                Ok(mut session) => {
                    let _ = ready_tx.send(Ok(()));
                    // Ends when the SqliteConn (the only sender) is dropped.
                    for job in inbox {
                        job(&mut session);
                    }
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            })
            .map_err(|e| EngineError::Connect(format!("cannot start a SQLite connection thread: {e}")))?;
        ready_rx.await.map_err(|_| EngineError::Internal("SQLite connection thread died while opening".into()))??;
        Ok(Self { jobs })
    }

    async fn call<R: Send + 'static>(&self, f: impl FnOnce(&mut Session) -> R + Send + 'static) -> DbResult<R> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.jobs
            .send(Box::new(move |s| {
                let _ = tx.send(f(s));
            }))
            .map_err(|_| DbError::fatal("SQLITE_THREAD", "the SQLite connection thread is gone"))?;
        rx.await.map_err(|_| DbError::fatal("SQLITE_THREAD", "the SQLite connection thread panicked"))
    }

    pub async fn prepare(&mut self, sqls: &[String]) -> DbResult<()> {
        let sqls = sqls.to_vec();
        self.call(move |s| {
            s.conn.set_prepared_statement_cache_capacity(sqls.len().max(16));
            for sql in &sqls {
                s.conn.prepare_cached(sql).map_err(|e| db_error(&e))?;
            }
            s.sqls = sqls;
            Ok(())
        })
        .await?
    }

    pub async fn prepare_more(&mut self, sql: &str) -> DbResult<StmtId> {
        let sql = sql.to_owned();
        self.call(move |s| {
            s.conn.set_prepared_statement_cache_capacity((s.sqls.len() + 1).max(16));
            s.conn.prepare_cached(&sql).map_err(|e| db_error(&e))?;
            s.sqls.push(sql);
            Ok(StmtId(s.sqls.len() - 1))
        })
        .await?
    }

    pub async fn execute(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> DbResult<QueryResult> {
        let params = params.to_vec();
        self.call(move |s| {
            let Session { conn, sqls, sql_log, turn } = s;
            let sql = sqls.get(id.0).ok_or_else(|| DbError::fatal("OLTPLAB", format!("no statement {}", id.0)))?;
            let mut stmt = conn.prepare_cached(sql).map_err(|e| db_error(&e))?;
            turn.before(stmt.readonly());
            let before = conn.total_changes();
            let result = run_statement(&mut stmt, &params, fetch, before, conn);
            if let Some(file) = sql_log {
                log_line(file, &stmt.expanded_sql().unwrap_or_default());
            }
            drop(stmt);
            turn.after(conn.is_autocommit());
            result.map_err(|e| db_error(&e))
        })
        .await?
    }

    pub async fn query(&mut self, sql: &str, fetch: Fetch) -> DbResult<QueryResult> {
        let sql = sql.to_owned();
        self.call(move |s| {
            let Session { conn, sql_log, turn, .. } = s;
            let mut stmt = conn.prepare(&sql).map_err(|e| db_error(&e))?;
            turn.before(stmt.readonly());
            let before = conn.total_changes();
            let result = run_statement(&mut stmt, &[], fetch, before, conn);
            if let Some(file) = sql_log {
                log_line(file, &sql);
            }
            drop(stmt);
            turn.after(conn.is_autocommit());
            result.map_err(|e| db_error(&e))
        })
        .await?
    }

    /// Inserts `rows` with one prepared INSERT, in a transaction of its own unless the caller's
    /// is open: SQLite parses the statement once, not once per multi-row text batch (which
    /// was a quarter of a TPC-C load's CPU). Returns the rows inserted.
    pub async fn insert_rows(&mut self, table: &str, columns: &[&str], rows: Vec<Vec<Value>>) -> DbResult<u64> {
        let placeholders = vec!["?"; columns.len()].join(", ");
        let sql = format!("INSERT INTO {table}({}) VALUES ({placeholders})", columns.join(", "));
        self.call(move |s| {
            let Session { conn, sql_log, turn, .. } = s;
            turn.before(false);
            let own_transaction = conn.is_autocommit();
            let result = insert_all(conn, &sql, &rows, own_transaction, sql_log.as_mut());
            if result.is_err() && own_transaction && !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK"); // the insert's error is the one to report
            }
            turn.after(conn.is_autocommit());
            result.map_err(|e| db_error(&e))
        })
        .await?
    }

    #[allow(clippy::unused_async)] // same signature as the network drivers
    pub async fn reconnect(&mut self) -> DbResult<()> {
        Ok(()) // an embedded database cannot lose its connection
    }
}

fn open_session(target: &SqliteTarget) -> Result<Session> {
    let path = &target.path;
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    if target.create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    } else if !path.exists() {
        return Err(EngineError::NotPrepared(format!(
            "SQLite database '{}' does not exist; run `oltplab prepare` with the same --db first",
            path.display()
        )));
    }
    let conn = rusqlite::Connection::open_with_flags(path, flags).map_err(|e| open_error(path, &e))?;
    // WAL lets readers run beside the one writer; the first statement also proves the file is a database.
    conn.pragma_update(None, "journal_mode", "WAL").map_err(|e| open_error(path, &e))?;
    conn.busy_timeout(Duration::from_millis(target.busy_timeout_ms)).map_err(|e| open_error(path, &e))?;
    let sql_log = match &target.sql_log {
        Some(p) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| EngineError::Config(format!("cannot open the SQL log '{}': {e}", p.display())))?,
        ),
        None => None,
    };
    Ok(Session { conn, sqls: Vec::new(), sql_log, turn: WriteTurn { queue: queue_for(path), held: false } })
}

fn insert_all(
    conn: &rusqlite::Connection,
    sql: &str,
    rows: &[Vec<Value>],
    own_transaction: bool,
    mut log: Option<&mut std::fs::File>,
) -> rusqlite::Result<u64> {
    if own_transaction {
        conn.execute_batch("BEGIN")?;
        if let Some(file) = log.as_deref_mut() {
            log_line(file, "BEGIN");
        }
    }
    let mut stmt = conn.prepare(sql)?;
    for row in rows {
        stmt.execute(rusqlite::params_from_iter(row))?;
        if let Some(file) = log.as_deref_mut() {
            log_line(file, &stmt.expanded_sql().unwrap_or_default());
        }
    }
    drop(stmt);
    if own_transaction {
        conn.execute_batch("COMMIT")?;
        if let Some(file) = log {
            log_line(file, "COMMIT");
        }
    }
    Ok(rows.len() as u64)
}

/// One line per statement, written with one call so that connections sharing
/// the file (opened for appending) never interleave within a line.
fn log_line(file: &mut std::fs::File, sql: &str) {
    let line = format!("{}\n", sql.replace('\n', " "));
    // A failed write loses debugging output only.
    let _ = file.write_all(line.as_bytes());
}

fn open_error(path: &Path, e: &rusqlite::Error) -> EngineError {
    let why = match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => "the file is not a SQLite database; point --db at a SQLite file".to_string(),
        Some(ErrorCode::CannotOpen) => "cannot open the file; check that its folder exists and is writable".to_string(),
        Some(ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => {
            "the file is read-only; check its permissions".to_string()
        }
        _ => e.to_string(),
    };
    EngineError::Connect(format!("cannot open SQLite database '{}': {why}", path.display()))
}

fn run_statement(
    stmt: &mut rusqlite::Statement<'_>,
    params: &[Value],
    fetch: Fetch,
    changes_before: u64,
    conn: &rusqlite::Connection,
) -> rusqlite::Result<QueryResult> {
    let ncols = stmt.column_count();
    if ncols > 0 {
        let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
        let mut out = QueryResult { class: QueryClass::Read, row_count: 0, rows: Vec::new(), columns: ncols };
        while let Some(row) = rows.next()? {
            out.row_count += 1;
            if fetch == Fetch::Rows {
                out.rows.push((0..ncols).map(|i| value_of(row.get_ref(i))).collect::<rusqlite::Result<_>>()?);
            }
        }
        return Ok(out);
    }
    stmt.execute(rusqlite::params_from_iter(params))?;
    // total_changes, unlike changes(), is not left over from an earlier statement.
    let changed = conn.total_changes() - changes_before;
    let class = if changed > 0 { QueryClass::Write } else { QueryClass::Other };
    Ok(QueryResult { class, row_count: changed, rows: Vec::new(), columns: 0 })
}

fn value_of(v: rusqlite::Result<ValueRef<'_>>) -> rusqlite::Result<Value> {
    Ok(match v? {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Text(f.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
    })
}

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        })
    }
}

/// SQLite's busy and locked states are what other servers call lock waits and
/// deadlocks: the event is retried, as sysbench retries 1213. A duplicate key
/// from a concurrent DELETE+INSERT is retried too, as sysbench's pgsql driver does.
fn db_error(e: &rusqlite::Error) -> DbError {
    let Some(code) = e.sqlite_error_code() else {
        return DbError::fatal("SQLITE", message_of(e));
    };
    let (name, action) = match code {
        ErrorCode::DatabaseBusy => ("SQLITE_BUSY", ErrorAction::Retry),
        ErrorCode::DatabaseLocked => ("SQLITE_LOCKED", ErrorAction::Retry),
        ErrorCode::ConstraintViolation => ("SQLITE_CONSTRAINT", constraint_action(e)),
        ErrorCode::NotADatabase => ("SQLITE_NOTADB", ErrorAction::Fatal),
        ErrorCode::DiskFull => ("SQLITE_FULL", ErrorAction::Fatal),
        ErrorCode::ReadOnly => ("SQLITE_READONLY", ErrorAction::Fatal),
        _ => ("SQLITE_ERROR", ErrorAction::Fatal),
    };
    DbError { code: name.to_string(), message: message_of(e), action, sql_state: String::new() }
}

/// SQLite's own message, on one line (rusqlite appends the whole SQL text to syntax errors).
fn message_of(e: &rusqlite::Error) -> String {
    let msg = match e {
        rusqlite::Error::SqlInputError { msg, .. } | rusqlite::Error::SqliteFailure(_, Some(msg)) => msg.clone(),
        other => other.to_string(),
    };
    msg.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn constraint_action(e: &rusqlite::Error) -> ErrorAction {
    const PRIMARY_KEY: i32 = 1555; // SQLITE_CONSTRAINT_PRIMARYKEY
    const UNIQUE: i32 = 2067; // SQLITE_CONSTRAINT_UNIQUE
    match e {
        rusqlite::Error::SqliteFailure(f, _) if matches!(f.extended_code, PRIMARY_KEY | UNIQUE) => ErrorAction::Retry,
        _ => ErrorAction::Fatal,
    }
}
