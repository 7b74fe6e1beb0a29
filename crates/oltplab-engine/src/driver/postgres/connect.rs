//! Connection settings from a `postgresql://` target, and opening a connection
//! whose I/O task runs on the engine's runtime (one task per connection, no pool).

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_postgres::config::SslMode;
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, Config, NoTls, Socket};

use super::tls::MakeRustls;
use crate::driver::url::NetTarget;
use crate::error::{EngineError, Result};

/// The URL parameters this driver reads (besides `host`, `socket`, `ssl` and `sslmode`,
/// which the URL parser takes).
const PARAMS: [&str; 4] = ["connect_timeout", "sslrootcert", "options", "application_name"];

/// An unreachable host must not hang the run's start; libpq waits forever by default.
const DEFAULT_CONNECT_TIMEOUT_S: u64 = 10;

/// What every connection (and every reconnect) of one target uses.
pub struct Settings {
    config: Config,
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
        let mut config = Config::new();
        config.user(&net.user).dbname(&net.database);
        config.application_name(param("application_name").unwrap_or("oltplab"));
        // An empty password lets trust and peer authentication work; a server that
        // asks for one gets "password missing", which the connect message explains.
        if !net.password.is_empty() {
            config.password(&net.password);
        }
        let timeout_s = match param("connect_timeout") {
            None => DEFAULT_CONNECT_TIMEOUT_S,
            Some(t) => t
                .parse()
                .map_err(|_| EngineError::config(format!("--db: connect_timeout='{t}' is not a number of seconds")))?,
        };
        if timeout_s > 0 {
            config.connect_timeout(Duration::from_secs(timeout_s));
        }
        if let Some(options) = param("options") {
            config.options(options);
        }
        match &net.socket {
            Some(path) => {
                let (dir, port) = socket_dir(path, net.port);
                config.host_path(dir).port(port);
            }
            None => {
                config.host(&net.host).port(net.port);
            }
        }
        // As libpq, no TLS over a Unix socket: the server refuses it there.
        let tls = if net.tls && net.socket.is_none() {
            config.ssl_mode(SslMode::Require);
            Some(MakeRustls::new(param("sslrootcert").map(Path::new)).map_err(EngineError::Config)?)
        } else {
            config.ssl_mode(SslMode::Disable);
            None
        };
        Ok(Self { config, tls, net: net.clone() })
    }

    /// Opens a connection and spawns its I/O task, which sends `Terminate` and ends when the
    /// client is dropped.
    pub async fn connect(&self) -> std::result::Result<Connected, tokio_postgres::Error> {
        match &self.tls {
            None => spawn(&self.config, NoTls).await,
            Some(tls) => spawn(&self.config, tls.clone()).await,
        }
    }
}

/// A client and its I/O task.
pub struct Connected {
    pub client: Client,
    pub io: JoinHandle<()>,
}

async fn spawn<T>(config: &Config, tls: T) -> std::result::Result<Connected, tokio_postgres::Error>
where
    T: MakeTlsConnect<Socket> + Send + 'static,
    T::Stream: Send + 'static,
    T::TlsConnect: Send,
    <T::TlsConnect as tokio_postgres::tls::TlsConnect<Socket>>::Future: Send,
{
    let (client, connection) = config.connect(tls).await?;
    // The connection's errors reach the client as "connection closed".
    let io = tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(Connected { client, io })
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
        assert!(Settings::new(&net).is_ok());
    }
}
