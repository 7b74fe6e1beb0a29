//! Parses `--db` URLs into the target a driver connects to.

use std::path::PathBuf;

use serde::Deserialize;

use super::fake::FakeTarget;
use crate::error::{EngineError, Result};

/// Where the load goes.
#[derive(Debug, Clone)]
pub enum Target {
    Sqlite(SqliteTarget),
    /// Deterministic in-process driver for engine tests (`fake://?latency_us=50&fail_every=0`).
    Fake(FakeTarget),
}

#[derive(Debug, Clone)]
pub struct SqliteTarget {
    pub path: PathBuf,
    /// Create the file if it is missing (prepare); `run` and `cleanup` refuse a missing file.
    pub create: bool,
    pub busy_timeout_ms: u64,
    /// Append every executed statement, parameters inlined by SQLite, to this file.
    pub sql_log: Option<PathBuf>,
}

/// Driver options that come with the target rather than the workload.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TargetOptions {
    pub create: bool,
    pub sqlite_busy_timeout_ms: u64,
    /// Debugging: log every statement the server executes (slows the run).
    pub sql_log: Option<PathBuf>,
}

impl Default for TargetOptions {
    fn default() -> Self {
        Self { create: false, sqlite_busy_timeout_ms: 5000, sql_log: None }
    }
}

impl Target {
    pub fn parse(url: &str, opts: &TargetOptions) -> Result<Self> {
        let (scheme, rest) = url.split_once(':').ok_or_else(|| bad_url(url))?;
        match scheme {
            "sqlite" => {
                let path = rest.strip_prefix("//").unwrap_or(rest);
                if path.is_empty() {
                    return Err(bad_url(url));
                }
                Ok(Target::Sqlite(SqliteTarget {
                    path: PathBuf::from(path),
                    create: opts.create,
                    busy_timeout_ms: opts.sqlite_busy_timeout_ms,
                    sql_log: opts.sql_log.clone(),
                }))
            }
            "fake" => Ok(Target::Fake(FakeTarget::parse(rest)?)),
            "mysql" | "mariadb" | "postgresql" | "postgres" => Err(EngineError::config(format!(
                "--db {scheme}://... is not supported by this build yet; use --db sqlite:///path.db"
            ))),
            _ => Err(bad_url(url)),
        }
    }

    pub fn dialect(&self) -> super::Dialect {
        match self {
            Target::Sqlite(_) => super::Dialect::Sqlite,
            Target::Fake(_) => super::Dialect::Mysql,
        }
    }

    /// The driver's name as run.json records it.
    pub fn driver_name(&self) -> &'static str {
        match self {
            Target::Sqlite(_) => "sqlite",
            Target::Fake(_) => "fake",
        }
    }
}

fn bad_url(url: &str) -> EngineError {
    EngineError::config(format!(
        "--db '{url}' is not a database URL; use sqlite:///path/to/file.db, \
         mysql://user:pass@host:port/db or postgresql://user:pass@host:port/db"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_keep_absolute_and_relative_paths() {
        let o = TargetOptions::default();
        let Target::Sqlite(t) = Target::parse("sqlite:///tmp/x.db", &o).unwrap() else { panic!() };
        assert_eq!(t.path, PathBuf::from("/tmp/x.db"));
        let Target::Sqlite(t) = Target::parse("sqlite://rel/x.db", &o).unwrap() else { panic!() };
        assert_eq!(t.path, PathBuf::from("rel/x.db"));
    }

    #[test]
    fn garbage_is_a_config_error() {
        let e = Target::parse("nonsense", &TargetOptions::default()).unwrap_err();
        assert!(matches!(e, EngineError::Config(m) if m.contains("not a database URL")));
    }
}
