//! PostgreSQL through tokio-postgres, as sysbench 1.0.20's pgsql driver behaves:
//! server-side prepared statements by default (text parameters, binary results),
//! text queries with inlined values under `--db-ps-mode=disable`, statements
//! classified by their result (a row description: read; rows affected: write;
//! else other), and SQLSTATEs 40P01, 40001 and 23505 retried after a ROLLBACK.
//! One client per connection, its I/O task on the engine's runtime, no pool.

mod connect;
mod copy;
mod errors;
mod sql;
mod tls;
mod values;

use std::pin::pin;
use std::sync::Arc;

use futures_util::future::try_join_all;
use futures_util::StreamExt;
use tokio::task::JoinHandle;
use tokio_postgres::{Client, SimpleQueryMessage, Statement};

use self::connect::{Connected, Settings};
use self::errors::{connect_message, db_error, one_line, UNABLE_TO_CONNECT};
use self::sql::Template;
use super::tab_text::TabRows;
use super::target::{PostgresTarget, PsMode};
use super::QUIT_TIMEOUT;
use crate::db::{
    DbError, DbResult, ErrorAction, Fetch, QueryClass, QueryResult, ServerInfo, ServerLimits, StmtId, Value,
};
use crate::error::{EngineError, Result};

pub struct PostgresConn {
    settings: Arc<Settings>,
    ps_mode: PsMode,
    client: Client,
    /// The client's I/O task.
    io: JoinHandle<()>,
    /// The workload's statements, kept to prepare them again after a reconnect.
    templates: Vec<Template>,
    /// One server-side statement per template (`PsMode::Auto` only).
    statements: Vec<Statement>,
    /// Reused for statements sent as text (`PsMode::Disable`).
    text: String,
}

impl PostgresConn {
    pub async fn open(target: &PostgresTarget) -> Result<Self> {
        let settings = Settings::new(&target.net)?;
        let Connected { client, io } =
            settings.connect().await.map_err(|e| EngineError::Connect(connect_message(&e, &settings.net)))?;
        Ok(Self {
            settings: Arc::new(settings),
            ps_mode: target.ps_mode,
            client,
            io,
            templates: Vec::new(),
            statements: Vec::new(),
            text: String::new(),
        })
    }

    /// Rewrites sysbench's `?` placeholders to `$n` and prepares every statement
    /// on the server, pipelined (one round trip for all, not one each).
    pub async fn prepare(&mut self, sqls: &[String]) -> DbResult<()> {
        self.templates = sqls.iter().map(|s| Template::parse(s)).collect();
        self.statements = prepare_all(&self.client, self.ps_mode, &self.templates).await?;
        Ok(())
    }

    /// One more statement, prepared on the server now.
    pub async fn prepare_more(&mut self, sql: &str) -> DbResult<StmtId> {
        let template = Template::parse(sql);
        if self.ps_mode == PsMode::Auto {
            let stmt = self.client.prepare(&template.numbered()).await.map_err(|e| db_error(&e))?;
            self.statements.push(stmt);
        }
        self.templates.push(template);
        Ok(StmtId(self.templates.len() - 1))
    }

    pub async fn execute(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> DbResult<QueryResult> {
        let Self { client, ps_mode, templates, statements, text, .. } = self;
        let missing = || DbError::fatal(errors::CLIENT_ERROR, format!("no prepared statement {}", id.0));
        match ps_mode {
            PsMode::Auto => run_prepared(client, statements.get(id.0).ok_or_else(missing)?, params, fetch).await,
            PsMode::Disable => {
                let template = templates.get(id.0).ok_or_else(missing)?;
                template.inline_into(params, text).map_err(|m| DbError::fatal(errors::CLIENT_ERROR, m))?;
                run_text(client, text, fetch).await
            }
        }
    }

    /// Sends SQL text in the simple-query protocol, as sysbench's `PQexec`. The
    /// executor's ROLLBACK after a retryable error comes here; PostgreSQL accepts it
    /// in an aborted transaction (which refuses every other statement).
    pub async fn query(&mut self, sql: &str, fetch: Fetch) -> DbResult<QueryResult> {
        run_text(&self.client, sql, fetch).await
    }

    /// Opens a new connection and prepares the workload's statements again.
    /// sysbench 1.0.20's pgsql driver has no reconnect (a lost connection ends its
    /// run); oltplab reconnects so that a server restart mid-run is survived, with
    /// the lost connections counted. Fails while the server is still down.
    pub async fn reconnect(&mut self) -> DbResult<()> {
        let Connected { client, io } = self.settings.connect().await.map_err(|e| DbError {
            code: UNABLE_TO_CONNECT.into(),
            message: one_line(&e),
            action: ErrorAction::Reconnect,
        })?;
        self.statements = prepare_all(&client, self.ps_mode, &self.templates).await?;
        // Dropping the old client ends its I/O task.
        self.client = client;
        self.io = io;
        Ok(())
    }

    /// `Terminate`, as `PQfinish()`: dropping the client makes its I/O task send it and end.
    pub async fn close(self) {
        let Self { client, io, .. } = self;
        drop(client);
        let _ = tokio::time::timeout(QUIT_TIMEOUT, io).await;
    }

    pub async fn server_info(&mut self) -> DbResult<ServerInfo> {
        let version = scalar(&self.client, "SHOW server_version").await?;
        let mut info = ServerInfo { version, ..ServerInfo::default() };
        let messages =
            self.client.simple_query("SELECT name, setting FROM pg_settings").await.map_err(|e| db_error(&e))?;
        for message in messages {
            if let SimpleQueryMessage::Row(row) = message {
                if let (Some(name), Some(setting)) = (row.get(0), row.get(1)) {
                    info.variables.insert(name.to_owned(), setting.to_owned());
                }
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
        let r = run_text(&self.client, sql, Fetch::Rows).await?;
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
        copy::copy_in(&self.client, table, columns, rows).await
    }
}

async fn prepare_all(client: &Client, ps_mode: PsMode, templates: &[Template]) -> DbResult<Vec<Statement>> {
    if ps_mode == PsMode::Disable {
        return Ok(Vec::new());
    }
    let numbered: Vec<String> = templates.iter().map(Template::numbered).collect();
    try_join_all(numbered.iter().map(|sql| client.prepare(sql))).await.map_err(|e| db_error(&e))
}

/// A statement with a row description is a read, even with no rows (sysbench's
/// `PGRES_TUPLES_OK`); otherwise rows affected decide between write and other.
async fn run_prepared(client: &Client, stmt: &Statement, params: &[Value], fetch: Fetch) -> DbResult<QueryResult> {
    if stmt.columns().is_empty() {
        let affected = client.execute_raw(stmt, params).await.map_err(|e| db_error(&e))?;
        let class = if affected > 0 { QueryClass::Write } else { QueryClass::Other };
        return Ok(QueryResult { class, row_count: affected, rows: Vec::new() });
    }
    let mut rows = pin!(client.query_raw(stmt, params).await.map_err(|e| db_error(&e))?);
    let mut out = QueryResult { class: QueryClass::Read, row_count: 0, rows: Vec::new() };
    // Every row is read off the wire, as sysbench reads its whole result.
    while let Some(row) = rows.next().await {
        let row = row.map_err(|e| db_error(&e))?;
        out.row_count += 1;
        if fetch == Fetch::Rows {
            out.rows.push(values::row_values(&row)?);
        }
    }
    Ok(out)
}

/// The simple-query protocol. With several statements in one text, the last one's
/// result counts, as `PQexec` returns the last result. Values come back as text.
async fn run_text(client: &Client, sql: &str, fetch: Fetch) -> DbResult<QueryResult> {
    let mut messages = pin!(client.simple_query_raw(sql).await.map_err(|e| db_error(&e))?);
    let mut out = QueryResult::other();
    let (mut in_result_set, mut rows_seen) = (false, 0);
    while let Some(message) = messages.next().await {
        match message.map_err(|e| db_error(&e))? {
            SimpleQueryMessage::RowDescription(_) => {
                (in_result_set, rows_seen) = (true, 0);
                out.rows.clear();
            }
            SimpleQueryMessage::Row(row) => {
                rows_seen += 1;
                if fetch == Fetch::Rows {
                    out.rows.push(
                        (0..row.len()).map(|i| row.get(i).map_or(Value::Null, |s| Value::Text(s.into()))).collect(),
                    );
                }
            }
            SimpleQueryMessage::CommandComplete(affected) => {
                (out.class, out.row_count) = match (in_result_set, affected) {
                    (true, _) => (QueryClass::Read, rows_seen),
                    (false, 0) => (QueryClass::Other, 0),
                    (false, n) => (QueryClass::Write, n),
                };
                if !in_result_set {
                    out.rows.clear();
                }
                in_result_set = false;
            }
            _ => {}
        }
    }
    Ok(out)
}

async fn scalar(client: &Client, sql: &str) -> DbResult<String> {
    let r = run_text(client, sql, Fetch::Rows).await?;
    match r.rows.into_iter().next().and_then(|row| row.into_iter().next()) {
        Some(Value::Text(s)) => Ok(s),
        _ => Err(DbError::fatal(errors::CLIENT_ERROR, format!("'{sql}' returned no value"))),
    }
}
