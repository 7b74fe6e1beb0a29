//! Parses `--db` URLs into the target a driver connects to.

use std::path::PathBuf;

use serde::Deserialize;

use super::fake::FakeTarget;
use super::password::{self, Client, Sources};
use super::url::NetTarget;
use crate::error::{EngineError, Result};

/// Where the load goes.
#[derive(Debug, Clone)]
pub enum Target {
    Sqlite(SqliteTarget),
    /// MariaDB, MySQL, Percona Server (the MySQL protocol).
    Mysql(MysqlTarget),
    Postgres(PostgresTarget),
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

/// sysbench's `--db-ps-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PsMode {
    /// Server-side prepared statements (sysbench's `auto`).
    Auto,
    /// Statements sent as text with their parameters inlined.
    Disable,
}

#[derive(Debug, Clone)]
pub struct MysqlTarget {
    pub net: NetTarget,
    pub ps_mode: PsMode,
    /// `--mysql-ignore-errors`: server error numbers that make the event retry; None means `all`.
    pub ignore_errors: Option<Vec<u16>>,
}

#[derive(Debug, Clone)]
pub struct PostgresTarget {
    pub net: NetTarget,
    pub ps_mode: PsMode,
}

/// Driver options that come with the target rather than the workload.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TargetOptions {
    pub create: bool,
    pub sqlite_busy_timeout_ms: u64,
    /// Debugging: log every statement the server executes (slows the run).
    pub sql_log: Option<PathBuf>,
    /// `auto` or `disable`.
    pub db_ps_mode: String,
    /// Comma-separated error numbers, or `all`.
    pub mysql_ignore_errors: String,
    /// `--db-password-file`: the server's password, when the URL holds none (driver/password.rs).
    pub password_file: Option<PathBuf>,
}

impl Default for TargetOptions {
    fn default() -> Self {
        Self {
            create: false,
            sqlite_busy_timeout_ms: 5000,
            sql_log: None,
            db_ps_mode: "auto".into(),
            mysql_ignore_errors: DEFAULT_MYSQL_IGNORE_ERRORS.into(),
            password_file: None,
        }
    }
}

/// sysbench's default: deadlock, "record has changed", lock wait timeout.
pub const DEFAULT_MYSQL_IGNORE_ERRORS: &str = "1213,1020,1205";

fn ps_mode(opts: &TargetOptions) -> Result<PsMode> {
    match opts.db_ps_mode.as_str() {
        "auto" => Ok(PsMode::Auto),
        "disable" => Ok(PsMode::Disable),
        other => Err(EngineError::config(format!("--db-ps-mode must be auto or disable, got '{other}'"))),
    }
}

fn ignore_list(text: &str) -> Result<Option<Vec<u16>>> {
    if text.split(',').any(|t| t.trim() == "all") {
        return Ok(None);
    }
    let codes = text.split(',').map(str::trim).filter(|t| !t.is_empty()).map(|t| {
        t.parse::<u16>().map_err(|_| {
            EngineError::config(format!(
                "--mysql-ignore-errors: '{t}' is not an error number; give a list such as 1213,1205 or 'all'"
            ))
        })
    });
    Ok(Some(codes.collect::<Result<Vec<_>>>()?))
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
                if opts.password_file.is_some() {
                    return Err(EngineError::config(
                        "--db-password-file is for mysql:// and postgresql:// URLs; SQLite has no password",
                    ));
                }
                Ok(Target::Sqlite(SqliteTarget {
                    path: PathBuf::from(path),
                    create: opts.create,
                    busy_timeout_ms: opts.sqlite_busy_timeout_ms,
                    sql_log: opts.sql_log.clone(),
                }))
            }
            "fake" => Ok(Target::Fake(FakeTarget::parse(rest)?)),
            "mysql" | "mariadb" => Ok(Target::Mysql(MysqlTarget {
                net: net_target(url, 3306, Client::Mysql, opts)?,
                ps_mode: ps_mode(opts)?,
                ignore_errors: ignore_list(&opts.mysql_ignore_errors)?,
            })),
            "postgresql" | "postgres" | "pgsql" => Ok(Target::Postgres(PostgresTarget {
                net: net_target(url, 5432, Client::Postgres, opts)?,
                ps_mode: ps_mode(opts)?,
            })),
            _ => Err(bad_url(url)),
        }
    }

    pub fn dialect(&self) -> super::Dialect {
        match self {
            Target::Sqlite(_) => super::Dialect::Sqlite,
            Target::Mysql(_) | Target::Fake(_) => super::Dialect::Mysql,
            Target::Postgres(_) => super::Dialect::Postgres,
        }
    }

    /// The driver's name as run.json records it.
    pub fn driver_name(&self) -> &'static str {
        match self {
            Target::Sqlite(_) => "sqlite",
            Target::Mysql(_) => "mysql",
            Target::Postgres(_) => "pgsql",
            Target::Fake(_) => "fake",
        }
    }
}

/// The URL's parts, and the password from the file or the environment when the URL holds none.
fn net_target(url: &str, default_port: u16, client: Client, opts: &TargetOptions) -> Result<NetTarget> {
    let mut net = NetTarget::parse(url, default_port)?;
    password::resolve(&mut net, url, client, &Sources::from_env(opts.password_file.as_deref()))?;
    Ok(net)
}

fn bad_url(url: &str) -> EngineError {
    EngineError::config(format!(
        "--db '{}' is not a database URL; use sqlite:///path/to/file.db, \
         mysql://user:pass@host:port/db or postgresql://user:pass@host:port/db",
        super::url::redact(url)
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
