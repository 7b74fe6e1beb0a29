//! Connection settings from a `postgresql://` target, and opening a connection: the socket,
//! TLS when asked for, the startup message and authentication, on the caller's task.

use std::path::{Path, PathBuf};
use std::time::Duration;

use postgres_protocol::message::frontend;

use super::auth::authenticate;
use super::errors::PgError;
use super::tls::MakeRustls;
use super::wire::Wire;
use crate::driver::stream::Stream;
use crate::driver::url::NetTarget;
use crate::error::{EngineError, Result};

/// The URL parameters this driver reads (besides `host`, `socket`, `ssl` and `sslmode`,
/// which the URL parser takes).
const PARAMS: [&str; 4] = ["connect_timeout", "sslrootcert", "options", "application_name"];

/// An unreachable host must not hang the run's start; libpq waits forever by default.
const DEFAULT_CONNECT_TIMEOUT_S: u64 = 10;

/// What every connection (and every reconnect) of one target uses.
pub struct Settings {
    /// The startup message's parameters, in the order tokio-postgres sent them.
    startup: Vec<(&'static str, String)>,
    /// The socket file (`dir/.s.PGSQL.port`), or None for TCP.
    socket: Option<PathBuf>,
    timeout: Option<Duration>,
    tls: Option<MakeRustls>,
    pub net: NetTarget,
}

impl Settings {
    pub fn new(net: &NetTarget) -> Result<Self> {
        if let Some(unknown) = net.params.keys().find(|k| !PARAMS.contains(&k.as_str())) {
            return Err(EngineError::config(format!(
                "--db: unknown parameter '{unknown}' for PostgreSQL; it takes host=/socket/dir, sslmode, \
                 sslrootcert, connect_timeout, options and application_name"
            )));
        }
        let param = |k: &str| net.params.get(k).map(String::as_str);
        let mut startup = vec![
            ("client_encoding", "UTF8".to_string()),
            ("user", net.user.clone()),
            ("database", net.database.clone()),
        ];
        if let Some(options) = param("options") {
            startup.push(("options", options.to_string()));
        }
        startup.push(("application_name", param("application_name").unwrap_or("oltplab").to_string()));
        let timeout_s = match param("connect_timeout") {
            None => DEFAULT_CONNECT_TIMEOUT_S,
            Some(t) => t
                .parse()
                .map_err(|_| EngineError::config(format!("--db: connect_timeout='{t}' is not a number of seconds")))?,
        };
        let socket = net.socket.as_deref().map(|path| {
            let (dir, port) = socket_dir(path, net.port);
            dir.join(format!(".s.PGSQL.{port}"))
        });
        // As libpq, no TLS over a Unix socket: the server refuses it there.
        let tls = if net.tls && net.socket.is_none() {
            Some(MakeRustls::new(param("sslrootcert").map(Path::new)).map_err(EngineError::Config)?)
        } else {
            None
        };
        let timeout = (timeout_s > 0).then(|| Duration::from_secs(timeout_s));
        Ok(Self { startup, socket, timeout, tls, net: net.clone() })
    }

    /// Opens an authenticated connection, ready for statements. `connect_timeout` bounds the
    /// socket's connect, as tokio-postgres's did: a server that forks thousands of backends at
    /// once may take longer than that to authenticate them, and is not unreachable.
    pub async fn connect(&self) -> std::result::Result<Wire, PgError> {
        let socket = self.socket();
        let stream = match self.timeout {
            None => socket.await?,
            Some(limit) => tokio::time::timeout(limit, socket)
                .await
                .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))?,
        };
        let stream = match (&self.tls, stream) {
            (Some(tls), Stream::Tcp(tcp)) => tls.connect(tcp, &self.net.host).await?,
            (_, stream) => stream,
        };
        let mut wire = Wire::new(stream);
        let params = self.startup.iter().map(|(k, v)| (*k, v.as_str()));
        frontend::startup_message(params, &mut wire.out).map_err(|e| PgError::Protocol(e.to_string()))?;
        wire.send().await?;
        authenticate(&mut wire, &self.net.user, &self.net.password).await?;
        // BackendKeyData, then ReadyForQuery (parameter status messages are skipped on the way).
        wire.expect_ready().await?;
        Ok(wire)
    }

    async fn socket(&self) -> std::io::Result<Stream> {
        match &self.socket {
            Some(path) => Stream::unix(path).await,
            None => Ok(Stream::Tcp(Stream::tcp(&self.net.host, self.net.port).await?)),
        }
    }
}

/// PostgreSQL wants the socket's directory; a path to the socket file itself
/// (`/run/postgresql/.s.PGSQL.5433`) names the directory and the port.
fn socket_dir(path: &Path, port: u16) -> (PathBuf, u16) {
    let from_file = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(".s.PGSQL."))
        .and_then(|p| p.parse::<u16>().ok());
    match (from_file, path.parent()) {
        (Some(p), Some(dir)) => (dir.to_path_buf(), p),
        _ => (path.to_path_buf(), port),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_file_names_its_directory_and_port() {
        assert_eq!(socket_dir(Path::new("/tmp/pg/.s.PGSQL.5499"), 5432), (PathBuf::from("/tmp/pg"), 5499));
        assert_eq!(socket_dir(Path::new("/run/postgresql"), 5433), (PathBuf::from("/run/postgresql"), 5433));
    }

    #[test]
    fn unknown_parameters_are_refused() {
        let net = NetTarget::parse("postgresql://u:p@h/db?sslmodee=require", 5432).unwrap();
        let e = Settings::new(&net).err().unwrap().to_string();
        assert!(e.contains("unknown parameter 'sslmodee'"), "{e}");
        let net = NetTarget::parse("postgresql://u:p@h/db?connect_timeout=x", 5432).unwrap();
        assert!(Settings::new(&net).is_err());
        let net =
            NetTarget::parse("postgresql://u:p@h/db?connect_timeout=3&options=-c%20search_path%3Ds1", 5432).unwrap();
        let s = Settings::new(&net).unwrap();
        assert_eq!(s.timeout, Some(std::time::Duration::from_secs(3)));
        assert!(s.startup.contains(&("options", "-c search_path=s1".to_string())), "{:?}", s.startup);
        let net = NetTarget::parse("postgresql://u:p@h/db?host=/tmp/pg&connect_timeout=0", 5499).unwrap();
        let s = Settings::new(&net).unwrap();
        assert_eq!((s.socket.as_deref(), s.timeout), (Some(Path::new("/tmp/pg/.s.PGSQL.5499")), None));
    }
}
