//! Connection options from a `mysql://` target (TCP or Unix socket, TLS on request), and
//! opening one: the socket, then the handshake (handshake.rs). Nothing is sent that the
//! benchmark did not ask for: no `SELECT @@...` after the handshake, so the server's
//! `Com_select` counts the workload's statements only, as with sysbench.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use tokio::net::{TcpStream, UnixStream};

use super::errors::{connect_error, connect_timeout, Error};
use super::handshake;
use super::session::Session;
use super::wire::Stream;
use crate::driver::target::MysqlTarget;
use crate::driver::tls;
use crate::driver::url::NetTarget;
use crate::error::{EngineError, Result};

const DEFAULT_CONNECT_TIMEOUT_S: u64 = 10;

/// What one target connects with, built once per target and shared by all the connections of
/// a run (thousands of them).
#[derive(Clone)]
pub struct ConnectOpts {
    pub net: Arc<NetTarget>,
    /// `?ssl=on`: the TLS configuration and the name the certificate must carry.
    pub tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
    pub timeout: Duration,
}

impl ConnectOpts {
    /// The options for `target`, built once and shared.
    pub fn shared(target: &MysqlTarget) -> Result<Self> {
        static LAST: Mutex<Option<ConnectOpts>> = Mutex::new(None);
        let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(opts) = last.as_ref().filter(|o| *o.net == target.net) {
            return Ok(opts.clone());
        }
        let opts = Self::new(target)?;
        *last = Some(opts.clone());
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
        if net.tls && net.socket.is_some() {
            // A local socket needs no encryption (and the server accepts a clear password on it).
            return Err(EngineError::config(
                "--db: TLS over a Unix socket is not supported; drop ssl=on, or connect over TCP for TLS",
            ));
        }
        let tls = if net.tls {
            let config = tls::client_config(ca.as_deref()).map_err(|e| EngineError::config(format!("--db: {e}")))?;
            let name = ServerName::try_from(net.host.clone())
                .map_err(|_| EngineError::config(format!("--db: '{}' is not a host name TLS can check", net.host)))?;
            Some((config, name))
        } else if ca.is_some() {
            return Err(EngineError::config("--db: ssl-ca given without ssl=on; add ssl=on to use TLS"));
        } else {
            None
        };
        Ok(Self { net: Arc::new(net.clone()), tls, timeout: Duration::from_secs(timeout_s) })
    }

    /// Opens a connection, or says in one line why it cannot.
    pub async fn open(&self) -> Result<Session> {
        match self.reopen().await {
            Ok(session) => Ok(session),
            Err(ReopenError::Failed(e)) => Err(connect_error(&e, &self.net)),
            Err(ReopenError::Timeout) => Err(connect_timeout(&self.net, self.timeout.as_secs())),
        }
    }

    /// Opens a connection for a reconnect; the caller classifies the error.
    pub async fn reopen(&self) -> std::result::Result<Session, ReopenError> {
        match tokio::time::timeout(self.timeout, self.connect()).await {
            Ok(Ok(session)) => Ok(session),
            Ok(Err(e)) => Err(ReopenError::Failed(e)),
            Err(_) => Err(ReopenError::Timeout),
        }
    }

    async fn connect(&self) -> std::result::Result<Session, Error> {
        let stream = if let Some(path) = &self.net.socket {
            Stream::Unix(UnixStream::connect(Path::new(path)).await?)
        } else {
            let tcp = TcpStream::connect((self.net.host.as_str(), self.net.port)).await?;
            tcp.set_nodelay(true)?;
            Stream::Tcp(tcp)
        };
        handshake::connect(stream, &self.net, self.tls.as_ref()).await
    }
}

pub enum ReopenError {
    Failed(Error),
    Timeout,
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
        assert_eq!((o.net.host.as_str(), o.net.port, o.net.socket.as_deref()), ("db.example", 3307, None));
        assert_eq!((o.net.user.as_str(), o.net.password.as_str(), o.net.database.as_str()), ("sb", "pw", "bench"));
        assert_eq!(o.timeout.as_secs(), 10);
        assert!(o.tls.is_none());
        let o = ConnectOpts::new(&target("mysql://sb@localhost/db?socket=/tmp/s.sock&connect_timeout=3")).unwrap();
        assert_eq!(
            (o.net.socket.as_deref(), o.net.password.as_str(), o.timeout.as_secs()),
            (Some(Path::new("/tmp/s.sock")), "", 3)
        );
        let o = ConnectOpts::new(&target("mysql://sb@h/db?ssl=on")).unwrap();
        assert!(matches!(&o.tls, Some((_, ServerName::DnsName(n))) if n.as_ref() == "h"));
        let e = ConnectOpts::new(&target("mysql://sb@h/db?ssl=on&ssl-ca=/nonexistent/ca.pem")).err().unwrap();
        assert!(matches!(&e, EngineError::Config(m) if m.contains("cannot read the root certificate")), "{e}");
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
