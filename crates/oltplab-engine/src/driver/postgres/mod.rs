//! PostgreSQL as sysbench 1.0.20's pgsql driver behaves: server-side prepared statements by
//! default (text parameters, binary results), text queries with inlined values under
//! `--db-ps-mode=disable`, statements classified by their result (a row description: read;
//! rows affected: write; else other), and SQLSTATEs 40P01, 40001 and 23505 retried after a
//! ROLLBACK. The protocol is spoken from the connection's own task (postgres-protocol's
//! messages over the socket, see wire.rs): no I/O task, no channel, no pool.

mod auth;
mod connect;
mod copy;
mod errors;
mod query;
mod sql;
mod tls;
mod values;
mod wire;

use std::sync::Arc;

use self::connect::Settings;
use self::errors::{connect_message, db_error, UNABLE_TO_CONNECT};
pub use self::query::Pending;
use self::query::Prepared;
use self::sql::Template;
use self::wire::Wire;
use super::tab_text::TabRows;
use super::target::{PostgresTarget, PsMode};
use super::{Now, QUIT_TIMEOUT};
use crate::db::{DbError, DbResult, ErrorAction, Fetch, QueryResult, ServerInfo, ServerLimits, StmtId, Value};
use crate::error::{EngineError, Result};

pub struct PostgresConn {
    settings: Arc<Settings>,
    ps_mode: PsMode,
    wire: Wire,
    /// The workload's statements, kept to prepare them again after a reconnect.
    templates: Vec<Template>,
    /// One server-side statement per template (`PsMode::Auto` only), shared with the run's
    /// other connections that prepared the same ([`query::shared`]).
    statements: Arc<Vec<Prepared>>,
    /// Statements prepared on this connection so far: the next one's name.
    prepared_count: usize,
    /// Reused for statements sent as text (`PsMode::Disable`).
    text: String,
}

impl PostgresConn {
    pub async fn open(target: &PostgresTarget) -> Result<Self> {
        let settings = Settings::new(&target.net)?;
        let wire = settings.connect().await.map_err(|e| EngineError::Connect(connect_message(&e, &settings.net)))?;
        Ok(Self {
            settings: Arc::new(settings),
            ps_mode: target.ps_mode,
            wire,
            templates: Vec::new(),
            statements: Arc::default(),
            prepared_count: 0,
            text: String::new(),
        })
    }

    /// Rewrites sysbench's `?` placeholders to `$n` and prepares every statement
    /// on the server, pipelined (one round trip for all, not one each).
    pub async fn prepare(&mut self, sqls: &[String]) -> DbResult<()> {
        self.templates = sqls.iter().map(|s| Template::parse(s)).collect();
        self.prepare_templates().await
    }

    async fn prepare_templates(&mut self) -> DbResult<()> {
        if self.ps_mode == PsMode::Disable {
            return Ok(());
        }
        let old = std::mem::take(&mut self.statements);
        let prepared =
            query::prepare_all(&mut self.wire, &self.templates, self.prepared_count, &old).await.map_err(db_error)?;
        self.statements = query::shared(prepared);
        self.prepared_count += self.templates.len();
        Ok(())
    }

    /// One more statement, prepared on the server now.
    pub async fn prepare_more(&mut self, sql: &str) -> DbResult<StmtId> {
        let template = Template::parse(sql);
        if self.ps_mode == PsMode::Auto {
            let one = std::slice::from_ref(&template);
            let stmt = query::prepare_all(&mut self.wire, one, self.prepared_count, &[]).await.map_err(db_error)?;
            self.prepared_count += 1;
            Arc::make_mut(&mut self.statements).extend(stmt);
        }
        self.templates.push(template);
        Ok(StmtId(self.templates.len() - 1))
    }

    pub async fn execute(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> DbResult<QueryResult> {
        let Self { wire, ps_mode, templates, statements, text, .. } = self;
        let missing = || DbError::fatal(errors::CLIENT_ERROR, format!("no prepared statement {}", id.0));
        let result = match ps_mode {
            PsMode::Auto => query::execute(wire, statements.get(id.0).ok_or_else(missing)?, params, fetch).await,
            PsMode::Disable => {
                let template = templates.get(id.0).ok_or_else(missing)?;
                template.inline_into(params, text).map_err(|m| DbError::fatal(errors::CLIENT_ERROR, m))?;
                query::simple(wire, text, fetch).await
            }
        };
        result.map_err(db_error)
    }

    /// [`PostgresConn::execute`] as far as it goes without an await (`query::execute_now`):
    /// prepared statements whose rows are dropped; the others are left to `execute`.
    pub fn execute_now(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> Now {
        let Some(stmt) = self.statements.get(id.0).filter(|_| fetch == Fetch::Discard && self.ps_mode == PsMode::Auto)
        else {
            return Now::Later;
        };
        match query::execute_now(&mut self.wire, stmt, params) {
            Ok(query::Executing::Done(result)) => Now::Done(result.map_err(db_error)),
            Ok(query::Executing::Wait(pending)) => Now::Wait(super::Pending::Postgres(pending)),
            Ok(query::Executing::Later) => Now::Later,
            Err(e) => Now::Done(Err(db_error(e))),
        }
    }

    /// The rest of a statement [`PostgresConn::execute_now`] began.
    pub async fn finish(&mut self, pending: Pending) -> DbResult<QueryResult> {
        query::finish(&mut self.wire, pending).await.map_err(db_error)
    }

    /// Sends SQL text in the simple-query protocol, as sysbench's `PQexec`. The
    /// executor's ROLLBACK after a retryable error comes here; PostgreSQL accepts it
    /// in an aborted transaction (which refuses every other statement).
    pub async fn query(&mut self, sql: &str, fetch: Fetch) -> DbResult<QueryResult> {
        let result = query::simple(&mut self.wire, sql, fetch).await;
        self.wire.shrink();
        result.map_err(db_error)
    }

    /// Opens a new connection and prepares the workload's statements again.
    /// sysbench 1.0.20's pgsql driver has no reconnect (a lost connection ends its
    /// run); oltplab reconnects so that a server restart mid-run is survived, with
    /// the lost connections counted. Fails while the server is still down.
    pub async fn reconnect(&mut self) -> DbResult<()> {
        let wire = self.settings.connect().await.map_err(|e| DbError {
            code: UNABLE_TO_CONNECT.into(),
            message: e.to_string(),
            action: ErrorAction::Reconnect,
            sql_state: UNABLE_TO_CONNECT.into(),
        })?;
        // The old socket is closed when its Wire is dropped; its statements went with its session.
        self.wire = wire;
        self.statements = Arc::default();
        self.prepare_templates().await
    }

    /// `Terminate`, as `PQfinish()`.
    pub async fn close(self) {
        let _ = tokio::time::timeout(QUIT_TIMEOUT, self.wire.terminate()).await;
    }

    pub async fn server_info(&mut self) -> DbResult<ServerInfo> {
        let version = self.scalar("SHOW server_version").await?;
        let mut info = ServerInfo { version, ..ServerInfo::default() };
        let settings = self.query("SELECT name, setting FROM pg_settings", Fetch::Rows).await?;
        for row in settings.rows {
            if let [Value::Text(name), Value::Text(setting)] = &row[..] {
                info.variables.insert(name.clone(), setting.clone());
            }
        }
        Ok(info)
    }

    /// `max_connections` is what this user can take: the slots reserved for
    /// superusers are left out unless the user is one. Connections in use count
    /// client backends only (not autovacuum, walsender or background workers).
    /// PostgreSQL has no limit on prepared statements.
    pub async fn limits(&mut self) -> DbResult<ServerLimits> {
        let sql = "SELECT current_setting('max_connections')::int - CASE WHEN r.rolsuper THEN 0 ELSE \
                   current_setting('superuser_reserved_connections')::int \
                   + coalesce(current_setting('reserved_connections', true)::int, 0) END, \
                   (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') \
                   FROM pg_roles r WHERE r.rolname = current_user";
        let r = self.query(sql, Fetch::Rows).await?;
        let column = |i: usize| match r.rows.first().and_then(|row| row.get(i)) {
            Some(Value::Text(t)) => t.parse::<u64>().ok(),
            _ => None,
        };
        Ok(ServerLimits {
            max_connections: column(0),
            connections_in_use: column(1),
            max_prepared_stmts: None,
            prepared_stmts_in_use: None,
        })
    }

    /// `COPY ... FROM STDIN`: see [`copy::copy_in`].
    pub async fn bulk_load_text(&mut self, table: &str, columns: &[&str], rows: &TabRows) -> DbResult<u64> {
        copy::copy_in(&mut self.wire, table, columns, rows).await.map_err(db_error)
    }

    async fn scalar(&mut self, sql: &str) -> DbResult<String> {
        let r = self.query(sql, Fetch::Rows).await?;
        match r.rows.into_iter().next().and_then(|row| row.into_iter().next()) {
            Some(Value::Text(s)) => Ok(s),
            _ => Err(DbError::fatal(errors::CLIENT_ERROR, format!("'{sql}' returned no value"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{Target, TargetOptions};

    /// Connections that prepare the same statements share one list, and each executes on its own;
    /// a reconnect's statements have other names, and a list of their own.
    #[tokio::test]
    async fn prepared_statements_are_shared_between_connections() {
        let Some(url) = std::env::var("OLTPLAB_TEST_PG_URL").ok().filter(|u| !u.is_empty()) else {
            return eprintln!("note: OLTPLAB_TEST_PG_URL is not set; skipping this server test");
        };
        let Ok(Target::Postgres(target)) = Target::parse(&url, &TargetOptions::default()) else {
            panic!("not a PostgreSQL URL: {url}")
        };
        let sqls = ["SELECT ?::int + 1".to_string(), "SELECT ?::int + 2".to_string()];
        let (mut a, mut b) = (PostgresConn::open(&target).await.unwrap(), PostgresConn::open(&target).await.unwrap());
        a.prepare(&sqls).await.unwrap();
        b.prepare(&sqls).await.unwrap();
        assert!(Arc::ptr_eq(&a.statements, &b.statements));
        for (conn, id, want) in [(&mut a, 0, 8), (&mut b, 1, 9)] {
            let r = conn.execute(StmtId(id), &[Value::Int(7)], Fetch::Rows).await.unwrap();
            assert_eq!(r.rows, [[Value::Int(want)]]);
        }
        a.reconnect().await.unwrap();
        assert!(!Arc::ptr_eq(&a.statements, &b.statements));
        let r = a.execute(StmtId(1), &[Value::Int(7)], Fetch::Rows).await.unwrap();
        assert_eq!(r.rows, [[Value::Int(9)]]);
    }
}
