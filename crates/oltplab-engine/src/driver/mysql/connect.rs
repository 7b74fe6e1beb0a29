//! Connection options from a `mysql://` target: TCP or Unix socket, TLS on request,
//! and nothing that would send a statement the benchmark did not ask for.

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use mysql_async::{Opts, OptsBuilder, SslOpts};

use super::errors::{connect_error, connect_timeout};
use crate::driver::target::MysqlTarget;
use crate::driver::url::NetTarget;
use crate::error::{EngineError, Result};

/// The protocol's largest packet: the client never refuses what the server sends.
const MAX_PACKET_BYTES: usize = 1 << 30;
/// The server's default `wait_timeout`; `mysql_async` only uses it to expire pooled connections.
const WAIT_TIMEOUT_S: usize = 28_800;
const DEFAULT_CONNECT_TIMEOUT_S: u64 = 10;

/// What one target connects with, built once per target and cheap to clone (`Opts` is an `Arc`).
#[derive(Clone)]
pub struct ConnectOpts {
    pub opts: Opts,
    pub timeout: Duration,
}

impl ConnectOpts {
    /// The options for `target`, built once and shared by all the connections of a run
    /// (thousands of them), as the `Opts` inside is reference-counted.
    pub fn shared(target: &MysqlTarget) -> Result<Self> {
        static LAST: Mutex<Option<(NetTarget, ConnectOpts)>> = Mutex::new(None);
        let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, opts)) = last.as_ref().filter(|(net, _)| *net == target.net) {
            return Ok(opts.clone());
        }
        let opts = Self::new(target)?;
        *last = Some((target.net.clone(), opts.clone()));
        Ok(opts)
    }

    pub fn new(target: &MysqlTarget) -> Result<Self> {
        let net = &target.net;
        let mut timeout_s = DEFAULT_CONNECT_TIMEOUT_S;
        let mut ca: Option<PathBuf> = None;
        for (key, value) in &net.params {
            match key.as_str() {
                "connect_timeout" => {
                    timeout_s = value.parse().ok().filter(|s| *s > 0).ok_or_else(|| {
                        EngineError::config(format!("--db: connect_timeout must be a number of seconds, got '{value}'"))
                    })?;
                }
                "ssl-ca" | "ssl_ca" | "sslca" => ca = Some(PathBuf::from(value)),
                _ => {
                    return Err(EngineError::config(format!(
                        "--db: unknown parameter '{key}' for mysql://; known: socket, ssl, ssl-ca, connect_timeout"
                    )))
                }
            }
        }
        // The settings below keep the connect quiet: with max_allowed_packet, wait_timeout and
        // prefer_socket given, mysql_async sends no `SELECT @@...` after the handshake, so the
        // server's Com_select counts the workload's statements only, as with sysbench.
        let mut b = OptsBuilder::default()
            .user(Some(net.user.as_str()))
            .pass((!net.password.is_empty()).then_some(net.password.as_str()))
            .db_name(Some(net.database.as_str()))
            // The driver holds its statements itself; a cache would close the least recently used
            // one once a connection has prepared more than its size (tables × kinds can be hundreds).
            .stmt_cache_size(0)
            .prefer_socket(false)
            .max_allowed_packet(Some(MAX_PACKET_BYTES))
            .wait_timeout(Some(WAIT_TIMEOUT_S))
            // sysbench's affected rows are changed rows (no CLIENT_FOUND_ROWS): an UPDATE that sets
            // a column to its value counts as "other", as in sysbench.
            .client_found_rows(false)
            .tcp_nodelay(true);
        b = match &net.socket {
            Some(path) => b.socket(Some(path.to_string_lossy())),
            None => b.ip_or_hostname(net.host.as_str()).tcp_port(net.port),
        };
        if net.tls && net.socket.is_some() {
            // mysql_async sends the TLS request on a socket but never starts TLS (the server then
            // reports packets out of order); a local socket needs no encryption anyway.
            return Err(EngineError::config(
                "--db: TLS over a Unix socket is not supported; drop ssl=on, or connect over TCP for TLS",
            ));
        }
        if net.tls {
            install_crypto_provider();
            b = b.ssl_opts(ssl_opts(ca));
        } else if ca.is_some() {
            return Err(EngineError::config("--db: ssl-ca given without ssl=on; add ssl=on to use TLS"));
        }
        Ok(Self { opts: b.into(), timeout: Duration::from_secs(timeout_s) })
    }

    /// Opens a connection, or says in one line why it cannot.
    pub async fn open(&self, target: &MysqlTarget) -> Result<mysql_async::Conn> {
        match tokio::time::timeout(self.timeout, mysql_async::Conn::new(self.opts.clone())).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(connect_error(&e, &target.net)),
            Err(_) => Err(connect_timeout(&target.net, self.timeout.as_secs())),
        }
    }

    /// Opens a connection for a reconnect; the caller classifies the error.
    pub async fn reopen(&self) -> std::result::Result<mysql_async::Conn, ReopenError> {
        match tokio::time::timeout(self.timeout, mysql_async::Conn::new(self.opts.clone())).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(ReopenError::Failed(e)),
            Err(_) => Err(ReopenError::Timeout),
        }
    }
}

pub enum ReopenError {
    Failed(mysql_async::Error),
    Timeout,
}

/// `ssl=on` alone encrypts without checking the certificate, as the MySQL client's
/// `--ssl-mode=REQUIRED` (and sysbench's `--mysql-ssl=on`) do: benchmark servers mostly use
/// self-signed certificates. With `ssl-ca=FILE` the chain is verified against that CA and the
/// certificate must name the host of the URL (the client's `VERIFY_IDENTITY`; `mysql_async`'s
/// switch to skip the name check does not work with the rustls it builds on).
fn ssl_opts(ca: Option<PathBuf>) -> SslOpts {
    match ca {
        Some(path) => SslOpts::default().with_root_certs(vec![path.into()]).with_disable_built_in_roots(true),
        None => SslOpts::default().with_danger_accept_invalid_certs(true),
    }
}

/// rustls needs a process-wide crypto provider when more than one could be compiled in;
/// ring is the one this crate builds (a no-op when one is installed already).
fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{Target, TargetOptions};

    fn target(url: &str) -> MysqlTarget {
        let Target::Mysql(t) = Target::parse(url, &TargetOptions::default()).unwrap() else { panic!() };
        t
    }

    #[test]
    fn tcp_socket_and_parameters() {
        let o = ConnectOpts::new(&target("mysql://sb:pw@db.example:3307/bench")).unwrap();
        assert_eq!((o.opts.ip_or_hostname(), o.opts.tcp_port(), o.opts.socket()), ("db.example", 3307, None));
        assert_eq!((o.opts.user(), o.opts.pass(), o.opts.db_name()), (Some("sb"), Some("pw"), Some("bench")));
        assert_eq!((o.opts.stmt_cache_size(), o.timeout.as_secs()), (0, 10));
        assert!(o.opts.ssl_opts().is_none());
        let o = ConnectOpts::new(&target("mysql://sb@localhost/db?socket=/tmp/s.sock&connect_timeout=3")).unwrap();
        assert_eq!((o.opts.socket(), o.opts.pass(), o.timeout.as_secs()), (Some("/tmp/s.sock"), None, 3));
        let o = ConnectOpts::new(&target("mysql://sb@h/db?ssl=on&ssl-ca=/ca.pem")).unwrap();
        let ssl = o.opts.ssl_opts().unwrap();
        assert!(!ssl.accept_invalid_certs() && ssl.disable_built_in_roots());
        let o = ConnectOpts::new(&target("mysql://sb@h/db?ssl=on")).unwrap();
        assert!(o.opts.ssl_opts().unwrap().accept_invalid_certs());
    }

    #[test]
    fn unknown_or_bad_parameters_are_config_errors() {
        for (url, want) in [
            ("mysql://h/db?sslca=/x", "without ssl=on"),
            ("mysql://h/db?socket=/s&ssl=on", "TLS over a Unix socket"),
            ("mysql://h/db?conect_timeout=3", "unknown parameter 'conect_timeout'"),
            ("mysql://h/db?connect_timeout=0", "connect_timeout must be"),
        ] {
            let e = ConnectOpts::new(&target(url)).err().unwrap();
            assert!(matches!(&e, EngineError::Config(m) if m.contains(want)), "{e}");
        }
    }
}
