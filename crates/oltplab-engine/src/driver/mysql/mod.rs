//! MariaDB, MySQL and Percona Server over the MySQL protocol, by a client of our own on
//! `mysql_common`'s packets (docs/mysql.md says why). One [`MysqlConn`] is one server
//! connection, driven by the task that runs its statements: no pool, no background task, its
//! prepared statements held by index.
//!
//! wire.rs frames packets on the socket, handshake.rs authenticates, session.rs runs commands,
//! reply.rs walks their replies (sans I/O), result.rs decodes the rows a caller keeps (with the
//! columns metadata.rs keeps), load.rs is the bulk load.

mod connect;
mod errors;
mod handshake;
mod load;
mod metadata;
mod reply;
mod result;
mod session;
mod wire;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use self::connect::{ConnectOpts, ReopenError};
use self::errors::{db_error, reconnect_error, Error, CR_CONN_HOST_ERROR};
pub use self::session::Pending;
use self::session::{Done, Executing, Prepared, Session};
use super::share::share_equal;
use super::target::{MysqlTarget, PsMode};
use super::{Now, QUIT_TIMEOUT};
use crate::db::{
    DbError, DbResult, ErrorAction, Fetch, QueryClass, QueryResult, ServerInfo, ServerLimits, StmtId, Value,
};
use crate::error::Result;

/// `ER_MAX_PREPARED_STMT_COUNT_REACHED`: sysbench dies of it at 4096 threads on MariaDB's defaults.
const ER_MAX_PREPARED_STMT_COUNT_REACHED: u16 = 1461;

pub struct MysqlConn {
    /// None only after a failed reconnect (the executor tries again).
    session: Option<Session>,
    opts: ConnectOpts,
    ps_mode: PsMode,
    /// `--mysql-ignore-errors`; None is `all`.
    ignore: Option<Vec<u16>>,
    /// The workload's statements, shared by every connection of the run (a script's texts are
    /// shared by its state's connections: script/sql.rs).
    sqls: Arc<[Arc<str>]>,
    /// `sqls[i]` prepared on this connection (`--db-ps-mode=auto`), shared with the run's other
    /// connections that prepared the same under the same ids ([`shared_statements`]).
    stmts: Arc<Vec<Prepared>>,
    /// `--db-ps-mode=disable`: the statement text with its parameters, reused.
    text: String,
    /// LOAD DATA LOCAL INFILE works until the server refuses it once.
    local_infile: bool,
}

impl MysqlConn {
    pub async fn open(target: &MysqlTarget) -> Result<Self> {
        let opts = ConnectOpts::shared(target)?;
        let session = opts.open().await?;
        Ok(Self {
            session: Some(session),
            opts,
            ps_mode: target.ps_mode,
            ignore: target.ignore_errors.clone(),
            sqls: Arc::from(Vec::new()),
            stmts: Arc::default(),
            text: String::new(),
            local_infile: true,
        })
    }

    /// Server-side prepared statements (sysbench's `--db-ps-mode=auto`), or, with `disable`,
    /// only the texts, which are sent with their parameters printed in.
    pub async fn prepare(&mut self, sqls: &[String]) -> DbResult<()> {
        self.sqls = shared(sqls);
        self.prepare_all().await
    }

    /// One more statement: the texts' handles are copied into a new list (a script prepares a
    /// handful per connection, once).
    pub async fn prepare_more(&mut self, sql: &Arc<str>) -> DbResult<StmtId> {
        let mut sqls = self.sqls.to_vec();
        sqls.push(Arc::clone(sql));
        if self.ps_mode == PsMode::Auto {
            let session = self.session.as_mut().ok_or_else(gone)?;
            let stmt = session.prepare_all(&sqls[sqls.len() - 1..]).await;
            // Grown one at a time: doubling left 4,096 script connections 1.6 MB of unused slots.
            let stmts = Arc::make_mut(&mut self.stmts);
            stmts.reserve_exact(1);
            stmts.extend(stmt.map_err(|e| db_error(&e, self.ignore.as_deref()))?);
        }
        self.sqls = Arc::from(sqls);
        Ok(StmtId(self.sqls.len() - 1))
    }

    async fn prepare_all(&mut self) -> DbResult<()> {
        let session = self.session.as_mut().ok_or_else(gone)?;
        // Statements of an earlier prepare on this connection are closed, not left to count
        // against the server's max_prepared_stmt_count.
        for old in std::mem::take(&mut self.stmts).iter() {
            session.close_statement(old).await.map_err(|e| db_error(&e, self.ignore.as_deref()))?;
        }
        if self.ps_mode == PsMode::Disable {
            return Ok(());
        }
        let prepared = session.prepare_all(&self.sqls).await.map_err(|e| {
            let mut err = db_error(&e, self.ignore.as_deref());
            if matches!(&e, Error::Server { code, .. } if *code == ER_MAX_PREPARED_STMT_COUNT_REACHED) {
                err.message.push_str("; raise max_prepared_stmt_count on the server or run with --db-ps-mode=disable");
            }
            err
        })?;
        self.stmts = shared_statements(prepared);
        Ok(())
    }

    /// `COM_STMT_CLOSE` for statement `id` (no answer comes). Its slot stays, so that the other
    /// statements keep their ids; a reconnect closes and prepares them all again.
    pub async fn close_statement(&mut self, id: StmtId) -> DbResult<()> {
        if self.ps_mode == PsMode::Disable {
            return Ok(());
        }
        let session = self.session.as_mut().ok_or_else(gone)?;
        let stmt = self.stmts.get(id.0).ok_or_else(|| no_statement(id))?;
        session.close_statement(stmt).await.map_err(|e| db_error(&e, self.ignore.as_deref()))
    }

    pub async fn execute(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> DbResult<QueryResult> {
        let session = self.session.as_mut().ok_or_else(gone)?;
        let mut rows = Vec::new();
        let keep = (fetch == Fetch::Rows).then_some(&mut rows);
        let outcome = match self.ps_mode {
            PsMode::Auto => {
                let stmt = self.stmts.get(id.0).ok_or_else(|| no_statement(id))?;
                session.execute(stmt, params, keep).await
            }
            PsMode::Disable => {
                let sql = self.sqls.get(id.0).ok_or_else(|| no_statement(id))?;
                result::inline_into(&mut self.text, sql, params);
                session.query(&self.text, keep, None).await
            }
        };
        outcome.map(|done| query_result(done, rows)).map_err(|e| db_error(&e, self.ignore.as_deref()))
    }

    /// [`MysqlConn::execute`] as far as it goes without an await (`Session::execute_now`):
    /// prepared statements whose rows are dropped; the others are left to `execute`.
    pub fn execute_now(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> Now {
        let (Some(session), Some(stmt)) = (self.session.as_mut(), self.stmts.get(id.0)) else { return Now::Later };
        if fetch == Fetch::Rows || self.ps_mode != PsMode::Auto {
            return Now::Later;
        }
        match session.execute_now(stmt, params) {
            Ok(Executing::Done(done)) => Now::Done(Ok(query_result(done, Vec::new()))),
            Ok(Executing::Wait(pending)) => Now::Wait(super::Pending::Mysql(pending)),
            Err(e) => Now::Done(Err(db_error(&e, self.ignore.as_deref()))),
        }
    }

    /// The rest of a statement [`MysqlConn::execute_now`] began.
    pub async fn finish(&mut self, pending: Pending) -> DbResult<QueryResult> {
        let session = self.session.as_mut().ok_or_else(gone)?;
        let outcome = session.finish(pending).await;
        outcome.map(|done| query_result(done, Vec::new())).map_err(|e| db_error(&e, self.ignore.as_deref()))
    }

    pub async fn query(&mut self, sql: &str, fetch: Fetch) -> DbResult<QueryResult> {
        let session = self.session.as_mut().ok_or_else(gone)?;
        let mut rows = Vec::new();
        let keep = (fetch == Fetch::Rows).then_some(&mut rows);
        let outcome = session.query(sql, keep, None).await;
        outcome.map(|done| query_result(done, rows)).map_err(|e| db_error(&e, self.ignore.as_deref()))
    }

    /// `COM_QUIT`, as `mysql_close()`.
    pub async fn close(mut self) {
        self.quit().await;
    }

    /// Says goodbye on the current connection, if any, and lets it go. A dead one fails at once.
    async fn quit(&mut self) {
        if let Some(session) = self.session.take() {
            let _ = tokio::time::timeout(QUIT_TIMEOUT, session.quit()).await;
        }
        // The statements died with the connection.
        self.stmts = Arc::default();
    }

    /// A new connection to the same target with the same statements prepared; an error while
    /// the server is still away (the executor tries again with backoff).
    pub async fn reconnect(&mut self) -> DbResult<()> {
        // `--reconnect` closes a live connection: say goodbye, as mysql_close() does.
        self.quit().await;
        self.session = Some(self.opts.reopen().await.map_err(|e| match e {
            ReopenError::Failed(e) => reconnect_error(&e),
            ReopenError::Timeout => DbError {
                code: CR_CONN_HOST_ERROR.to_string(),
                message: format!("no answer within {} s", self.opts.timeout.as_secs()),
                action: ErrorAction::Reconnect,
                sql_state: String::new(),
            },
        })?);
        self.prepare_all().await.map_err(|e| DbError { action: ErrorAction::Reconnect, ..e })
    }

    /// The version and every global variable (`SHOW GLOBAL VARIABLES`, whose `version` is
    /// `VERSION()`: no SELECT is sent, so the server's `Com_select` counts the workload's only).
    pub async fn server_info(&mut self) -> DbResult<ServerInfo> {
        let variables = self.name_values("SHOW GLOBAL VARIABLES").await?;
        let version = match variables.get("version") {
            Some(v) => v.clone(),
            None => {
                self.name_values("SHOW GLOBAL VARIABLES LIKE 'version'").await?.remove("version").unwrap_or_default()
            }
        };
        Ok(ServerInfo { version, variables })
    }

    /// `max_connections`, `Threads_connected`, `max_prepared_stmt_count` and `Prepared_stmt_count`.
    pub async fn limits(&mut self) -> DbResult<ServerLimits> {
        let vars = self
            .name_values("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('max_connections', 'max_prepared_stmt_count')")
            .await?;
        let status = self
            .name_values("SHOW GLOBAL STATUS WHERE Variable_name IN ('Threads_connected', 'Prepared_stmt_count')")
            .await?;
        let number = |map: &BTreeMap<String, String>, name: &str| map.get(name).and_then(|v| v.trim().parse().ok());
        Ok(ServerLimits {
            max_connections: number(&vars, "max_connections"),
            connections_in_use: number(&status, "Threads_connected"),
            max_prepared_stmts: number(&vars, "max_prepared_stmt_count"),
            prepared_stmts_in_use: number(&status, "Prepared_stmt_count"),
        })
    }

    /// A two-column SHOW result as a map.
    async fn name_values(&mut self, sql: &str) -> DbResult<BTreeMap<String, String>> {
        let rows = self.query(sql, Fetch::Rows).await?.rows;
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                let mut cells = row.into_iter().map(|v| match v {
                    Value::Text(s) => s,
                    Value::Int(i) => i.to_string(),
                    Value::Null => String::new(),
                });
                Some((cells.next()?, cells.next().unwrap_or_default()))
            })
            .collect())
    }
}

/// sysbench's classification by result: a result set (columns > 0) is a read, whatever its row
/// count; otherwise changed rows > 0 make a write, and the rest is "other".
fn query_result(done: Done, rows: Vec<Vec<Value>>) -> QueryResult {
    match done {
        Done { result_set: true, rows: n, columns, .. } => {
            let columns = usize::try_from(columns).unwrap_or(usize::MAX);
            QueryResult { class: QueryClass::Read, row_count: n, rows, columns }
        }
        Done { affected, .. } => {
            let class = if affected > 0 { QueryClass::Write } else { QueryClass::Other };
            QueryResult { class, row_count: affected, rows: Vec::new(), columns: 0 }
        }
    }
}

/// One list of prepared statements for all of a run's connections that prepared the same
/// (MariaDB numbers each connection's statements from 1: the same workload, the same ids; a
/// connection on a server thread from its cache continues that thread's count, and keeps a list
/// of its own).
fn shared_statements(stmts: Vec<Prepared>) -> Arc<Vec<Prepared>> {
    static RECENT: Mutex<Vec<Weak<Vec<Prepared>>>> = Mutex::new(Vec::new());
    share_equal(&RECENT, stmts)
}

/// One copy of the statement texts for all of a run's connections (thousands of them).
fn shared(sqls: &[String]) -> Arc<[Arc<str>]> {
    static LAST: Mutex<Option<Arc<[Arc<str>]>>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(same) = last.as_ref().filter(|l| l.iter().map(|s| &**s).eq(sqls.iter().map(String::as_str))) {
        return Arc::clone(same);
    }
    let fresh: Arc<[Arc<str>]> = sqls.iter().map(|s| Arc::from(s.as_str())).collect();
    *last = Some(Arc::clone(&fresh));
    fresh
}

fn gone() -> DbError {
    DbError {
        code: "2006".into(),
        message: "the connection is closed".into(),
        action: ErrorAction::Reconnect,
        sql_state: String::new(),
    }
}

fn no_statement(id: StmtId) -> DbError {
    DbError::fatal("OLTPLAB", format!("statement {} was not prepared", id.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{Target, TargetOptions};

    #[test]
    fn statement_texts_are_shared_between_connections() {
        let a = shared(&["SELECT 1".to_string(), "COMMIT".to_string()]);
        let b = shared(&["SELECT 1".to_string(), "COMMIT".to_string()]);
        assert!(Arc::ptr_eq(&a, &b));
        let c = shared(&["SELECT 2".to_string()]);
        assert_eq!(c.iter().map(|s| &**s).collect::<Vec<_>>(), ["SELECT 2"]);
    }

    /// Connections that prepare the same statements under the same ids share one list, and each
    /// executes on its own.
    #[tokio::test]
    async fn prepared_statements_are_shared_between_connections() {
        let Some(url) = std::env::var("OLTPLAB_TEST_MYSQL_URL").ok().filter(|u| !u.is_empty()) else {
            return eprintln!("note: OLTPLAB_TEST_MYSQL_URL is not set; skipping this server test");
        };
        let Ok(Target::Mysql(target)) = Target::parse(&url, &TargetOptions::default()) else {
            panic!("not a MySQL URL: {url}")
        };
        let sqls = ["SELECT ? + 1".to_string(), "SELECT ? + 2".to_string()];
        let (mut a, mut b) = (MysqlConn::open(&target).await.unwrap(), MysqlConn::open(&target).await.unwrap());
        a.prepare(&sqls).await.unwrap();
        b.prepare(&sqls).await.unwrap();
        // A connection served by a thread from the server's thread cache continues that thread's
        // statement ids (other tests' connections leave threads there): shared when they are
        // the same, and only then.
        assert_eq!(Arc::ptr_eq(&a.stmts, &b.stmts), a.stmts == b.stmts);
        a.reconnect().await.unwrap();
        assert_eq!(Arc::ptr_eq(&a.stmts, &b.stmts), a.stmts == b.stmts);
        for (conn, id, want) in [(&mut a, 0, 8), (&mut b, 1, 9)] {
            let r = conn.execute(StmtId(id), &[Value::Int(7)], Fetch::Rows).await.unwrap();
            assert_eq!(r.rows, [[Value::Int(want)]]);
        }
    }

    /// A MariaDB server sends a prepared statement's result columns again only when they changed
    /// (as it does for libmariadb): it counts the executions it sent none, and the rows kept are
    /// decoded with the columns of the prepare, then of the change.
    #[tokio::test]
    async fn result_columns_are_sent_again_only_when_they_change() {
        let Some(url) = std::env::var("OLTPLAB_TEST_MYSQL_URL").ok().filter(|u| !u.is_empty()) else {
            return eprintln!("note: OLTPLAB_TEST_MYSQL_URL is not set; skipping this server test");
        };
        // Over TLS the server reads them from the TLS request.
        let tls = format!("{url}{}ssl=on", if url.contains('?') { '&' } else { '?' });
        for url in [url, tls] {
            let Ok(Target::Mysql(target)) = Target::parse(&url, &TargetOptions::default()) else {
                panic!("not a MySQL URL: {url}")
            };
            let mut conn = MysqlConn::open(&target).await.unwrap();
            let version = conn.server_info().await.unwrap().version;
            if !version.contains("MariaDB") {
                return eprintln!("note: {version} is not MariaDB; skipping this server test");
            }
            assert!(conn.session.as_ref().unwrap().cache_metadata, "MariaDB {version} offers it");
            columns_sent_again_only_when_they_change(&mut conn).await;
        }
    }

    async fn columns_sent_again_only_when_they_change(conn: &mut MysqlConn) {
        for sql in [
            "CREATE TEMPORARY TABLE cached_columns (id INT PRIMARY KEY, v INT)",
            "INSERT INTO cached_columns VALUES (1, 7)",
        ] {
            conn.query(sql, Fetch::Discard).await.unwrap();
        }
        conn.prepare(&["SELECT v FROM cached_columns WHERE id = ?".to_string()]).await.unwrap();
        let before = metadata_skipped(conn).await;
        for (fetch, want) in [(Fetch::Rows, 1), (Fetch::Discard, 0), (Fetch::Rows, 1)] {
            let r = conn.execute(StmtId(0), &[Value::Int(1)], fetch).await.unwrap();
            assert_eq!(r.rows, vec![vec![Value::Int(7)]; want]);
        }
        assert_eq!(metadata_skipped(conn).await - before, 3, "no execution was sent the columns");
        for sql in ["ALTER TABLE cached_columns MODIFY v VARCHAR(10)", "UPDATE cached_columns SET v = 'x'"] {
            conn.query(sql, Fetch::Discard).await.unwrap();
        }
        let before = metadata_skipped(conn).await;
        for _ in 0..2 {
            let r = conn.execute(StmtId(0), &[Value::Int(1)], Fetch::Rows).await.unwrap();
            assert_eq!(r.rows, [[Value::Text("x".into())]]);
        }
        assert_eq!(metadata_skipped(conn).await - before, 1, "the changed columns were sent once");
    }

    async fn metadata_skipped(conn: &mut MysqlConn) -> u64 {
        let status = conn.name_values("SHOW SESSION STATUS LIKE 'Resultset_metadata_skipped'").await.unwrap();
        status["Resultset_metadata_skipped"].parse().unwrap()
    }
}
