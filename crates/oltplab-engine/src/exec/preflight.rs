//! Checks, before any load starts, that the server and the client can hold the
//! run: sysbench finds out mid-way (error 1461 at 4096 threads on MariaDB's
//! default `max_prepared_stmt_count`, "too many connections", EMFILE).

use crate::db::ServerLimits;
use crate::driver::{PsMode, Target};
use crate::error::{EngineError, Result};

/// File descriptors the process needs besides its connections.
const SPARE_FDS: u64 = 64;

/// Returns what could not be checked (a limit the server or the system did not tell), for a
/// warning: a check skipped in silence would pass for one that passed.
pub fn check(target: &Target, limits: &ServerLimits, threads: u64, statements: u64) -> Result<Vec<&'static str>> {
    let mut unchecked = Vec::new();
    let server = matches!(target, Target::Mysql(_) | Target::Postgres(_));
    if server && limits.max_connections.is_none() {
        unchecked.push("the server's max_connections");
    }
    if let Some(max) = limits.max_connections {
        // The pre-flight connection itself is counted in use and closes before the run.
        let others = limits.connections_in_use.unwrap_or(1).saturating_sub(1);
        if others + threads > max {
            return Err(EngineError::Config(format!(
                "--threads={threads} needs {threads} connections but the server allows max_connections={max} \
                 with {others} in use; raise max_connections to at least {} or lower --threads",
                others + threads + 10
            )));
        }
    }
    // --db-ps-mode=disable sends text: no server-side statement counts against the limit.
    let statements = if server_side_statements(target) { statements } else { 0 };
    if matches!(target, Target::Mysql(_)) && statements > 0 && limits.max_prepared_stmts.is_none() {
        unchecked.push("the server's max_prepared_stmt_count");
    }
    if let (Some(max), true) = (limits.max_prepared_stmts, statements > 0) {
        let in_use = limits.prepared_stmts_in_use.unwrap_or(0);
        let needed = threads * statements;
        if in_use + needed > max {
            return Err(EngineError::Config(format!(
                "--threads={threads} prepares {needed} statements ({statements} per connection) but the server's \
                 max_prepared_stmt_count is {max} with {in_use} in use (sysbench fails here with error 1461); \
                 raise it (SET GLOBAL max_prepared_stmt_count={}) or use --db-ps-mode=disable",
                in_use + needed + 1000
            )));
        }
    }
    let per_connection = match target {
        Target::Sqlite(_) => 3, // the database, its WAL and its shared-memory index
        Target::Mysql(_) | Target::Postgres(_) => 1,
        Target::Fake(_) => 0,
    };
    let limit = open_files_limit();
    if limit.is_none() && per_connection > 0 {
        unchecked.push("this process's open-files limit");
    }
    if let Some(limit) = limit {
        let needed = threads * per_connection + SPARE_FDS;
        if needed > limit {
            return Err(EngineError::Config(format!(
                "--threads={threads} needs about {needed} open files but this process may open {limit}; \
                 raise the limit (e.g. `ulimit -n {}`) or lower --threads",
                needed.next_power_of_two()
            )));
        }
    }
    Ok(unchecked)
}

/// The warning for what [`check`] could not check; None when it checked everything.
pub fn unchecked_warning(unchecked: &[&str], why: Option<&str>) -> Option<String> {
    if unchecked.is_empty() {
        return None;
    }
    let why = why.map_or(String::new(), |w| format!(" ({w})"));
    Some(format!(
        "WARNING: could not read {}{why}, so the run may fail mid-way on it instead of before it starts",
        unchecked.join(", ")
    ))
}

fn server_side_statements(target: &Target) -> bool {
    match target {
        Target::Mysql(t) => t.ps_mode == PsMode::Auto,
        Target::Postgres(t) => t.ps_mode == PsMode::Auto,
        Target::Sqlite(_) | Target::Fake(_) => true,
    }
}

/// The soft limit on open files, from /proc (Linux); None where unknown or unlimited.
fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::TargetOptions;

    fn mysql() -> Target {
        Target::parse("mysql://u:p@h/db", &TargetOptions::default()).unwrap()
    }

    fn mysql_text() -> Target {
        let options = TargetOptions { db_ps_mode: "disable".into(), ..TargetOptions::default() };
        Target::parse("mysql://u:p@h/db", &options).unwrap()
    }

    #[test]
    fn too_many_connections_is_caught_with_the_fix() {
        let limits = ServerLimits { max_connections: Some(151), connections_in_use: Some(3), ..Default::default() };
        let e = check(&mysql(), &limits, 200, 0).unwrap_err().to_string();
        assert!(e.contains("max_connections=151 with 2 in use"), "{e}");
        assert!(check(&mysql(), &limits, 149, 0).is_ok());
    }

    #[test]
    fn prepared_statement_limit_is_caught_as_sysbench_error_1461() {
        let limits =
            ServerLimits { max_prepared_stmts: Some(16382), prepared_stmts_in_use: Some(0), ..Default::default() };
        let e = check(&mysql(), &limits, 4096, 13).unwrap_err().to_string();
        assert!(e.contains("1461") && e.contains("--db-ps-mode=disable"), "{e}");
        assert!(check(&mysql(), &limits, 1000, 13).is_ok());
        // The fix the message offers: without server-side statements there is no limit to hit.
        assert!(check(&mysql_text(), &limits, 4096, 13).is_ok());
    }

    #[test]
    fn limits_that_could_not_be_read_are_named() {
        let unchecked = check(&mysql(), &ServerLimits::default(), 8, 13).unwrap();
        assert_eq!(unchecked, ["the server's max_connections", "the server's max_prepared_stmt_count"]);
        let w = unchecked_warning(&unchecked, Some("access denied")).unwrap();
        assert!(
            w.starts_with("WARNING: could not read the server's max_connections, ") && w.contains("(access denied)")
        );
        // Text protocol: no statement limit to check, so none missing.
        let unchecked = check(&mysql_text(), &ServerLimits { max_connections: Some(9), ..Default::default() }, 8, 13);
        assert!(unchecked.unwrap().is_empty());
        assert_eq!(unchecked_warning(&[], None), None);
    }

    #[test]
    fn open_files_limit_is_read() {
        assert!(open_files_limit().is_some_and(|n| n > 0));
        let e = check(&mysql(), &ServerLimits::default(), 100_000_000, 0).unwrap_err().to_string();
        assert!(e.contains("ulimit -n"), "{e}");
    }
}
