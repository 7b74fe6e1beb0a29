//! Placeholder, being written: the mysql driver.

use super::target::MysqlTarget;
use super::{DbError, DbResult, Fetch, QueryResult, ServerInfo, ServerLimits, StmtId, Value};
use crate::error::{EngineError, Result};

pub struct MysqlConn;

#[allow(clippy::unused_async, clippy::unnecessary_wraps, clippy::missing_const_for_fn, unused_variables)]
impl MysqlConn {
    pub async fn open(target: &MysqlTarget) -> Result<Self> {
        Err(EngineError::config("the mysql driver is not built yet"))
    }
    pub async fn prepare(&mut self, sqls: &[String]) -> DbResult<()> {
        Err(DbError::fatal("OLTPLAB", "not built"))
    }
    pub async fn execute(&mut self, id: StmtId, params: &[Value], fetch: Fetch) -> DbResult<QueryResult> {
        Err(DbError::fatal("OLTPLAB", "not built"))
    }
    pub async fn query(&mut self, sql: &str, fetch: Fetch) -> DbResult<QueryResult> {
        Err(DbError::fatal("OLTPLAB", "not built"))
    }
    pub async fn reconnect(&mut self) -> DbResult<()> {
        Err(DbError::fatal("OLTPLAB", "not built"))
    }
    pub async fn server_info(&mut self) -> DbResult<ServerInfo> {
        Err(DbError::fatal("OLTPLAB", "not built"))
    }
    pub async fn limits(&mut self) -> DbResult<ServerLimits> {
        Err(DbError::fatal("OLTPLAB", "not built"))
    }
    pub async fn bulk_load(&mut self, table: &str, columns: &[&str], rows: &[Vec<Value>]) -> DbResult<u64> {
        Err(DbError::fatal("OLTPLAB", "not built"))
    }
}
