//! A prepare that did not finish (the server died, Ctrl-C, a lost connection) leaves tables
//! half-loaded, and a run over them would measure another data set than the options say. So
//! prepare first writes a marker table, `oltplab_unfinished_prepare` (the workload and its
//! options), and drops it once every table is loaded: while it exists, `run` refuses the
//! database, and `prepare` drops what the unfinished one made and loads everything again.
//! A finished database holds no extra table (as sysbench's prepare leaves it).

use crate::db::{Dialect, Fetch, Value};
use crate::driver::Conn;
use crate::error::{EngineError, Result};

use crate::db::UNFINISHED_PREPARE_TABLE as TABLE;

/// The unfinished prepare's workload and options (JSON), when its marker is there.
pub async fn find(conn: &mut Conn) -> Result<Option<(String, String)>> {
    let marked = conn
        .query(&exists_sql(conn.dialect()), Fetch::Rows)
        .await
        .map_err(|e| EngineError::Driver(format!("cannot look for {TABLE}: {e}")))?;
    if !marked.rows.first().and_then(|r| r.first()).is_some_and(is_nonzero) {
        return Ok(None);
    }
    let r = conn
        .query(&format!("SELECT workload, options FROM {TABLE}"), Fetch::Rows)
        .await
        .map_err(|e| EngineError::Driver(format!("cannot read {TABLE}: {e}")))?;
    let text = |v: Option<&Value>| match v {
        Some(Value::Text(t)) => t.clone(),
        _ => String::new(),
    };
    // A marker without its row (the crash hit between CREATE and INSERT): nothing to undo but it.
    Ok(Some(r.rows.first().map_or((String::new(), String::new()), |row| (text(row.first()), text(row.get(1))))))
}

/// Marks the prepare as started.
pub async fn begin(conn: &mut Conn, workload: &str, options_json: &str) -> Result<()> {
    let quote = |s: &str| format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"));
    let options = if conn.dialect() == Dialect::Mysql { quote(options_json) } else { sql_text(options_json) };
    for sql in [
        format!("CREATE TABLE {TABLE} (workload VARCHAR(64) NOT NULL, options TEXT NOT NULL)"),
        format!("INSERT INTO {TABLE} (workload, options) VALUES ('{workload}', {options})"),
    ] {
        conn.query(&sql, Fetch::Discard)
            .await
            .map_err(|e| EngineError::Driver(format!("cannot mark the prepare as started in {TABLE}: {e}")))?;
    }
    Ok(())
}

/// Marks the prepare as finished (also cleanup's last step).
pub async fn end(conn: &mut Conn) -> Result<()> {
    conn.query(&format!("DROP TABLE IF EXISTS {TABLE}"), Fetch::Discard)
        .await
        .map(drop)
        .map_err(|e| EngineError::Driver(format!("cannot drop {TABLE}: {e}")))
}

/// What `run` says when the marker is there.
pub fn refusal(prepare_cmd: &str) -> EngineError {
    EngineError::NotPrepared(format!(
        "an earlier prepare did not finish (the server stopped, the connection was lost or it was \
         interrupted), so its tables may be half-loaded; run `{prepare_cmd}` again with the same --db \
         (it drops them and loads them again)"
    ))
}

/// One row, one column: 1 when the marker is there, else 0.
pub fn exists_sql(dialect: Dialect) -> String {
    match dialect {
        Dialect::Sqlite => format!("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '{TABLE}'"),
        Dialect::Mysql => format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{TABLE}'"
        ),
        Dialect::Postgres => format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() \
             AND table_name = '{TABLE}'"
        ),
    }
}

/// A standard SQL string literal (PostgreSQL, SQLite: no backslash escapes).
fn sql_text(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

pub fn is_nonzero(v: &Value) -> bool {
    match v {
        Value::Int(i) => *i != 0,
        Value::Text(t) => t.trim() != "0",
        Value::Null => false,
    }
}
