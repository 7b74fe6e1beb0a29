//! What a MySQL error means for the run (retry, reconnect or stop), and the
//! one-line messages for a connection that cannot be opened.

use std::{fmt, io};

use crate::db::{DbError, ErrorAction};
use crate::driver::url::NetTarget;
use crate::error::EngineError;

/// What can go wrong on a MySQL connection.
#[derive(Debug)]
pub enum Error {
    /// The server's error packet (`state`: its SQL state, empty when the packet has none).
    Server { code: u16, state: String, message: String },
    /// The socket failed or closed (rustls' errors come wrapped in I/O errors).
    Io(io::Error),
    /// A packet the protocol does not allow here: the connection is out of step with the server.
    Protocol(String),
    /// The connection was already closed when a statement was to be sent.
    Closed,
    /// The client refuses the request (a statement given the wrong number of parameters).
    Client(String),
    /// `?ssl=on`, but the server offers no TLS.
    NoTls,
    /// The server asks for an authentication plugin this client does not speak.
    UnknownAuthPlugin(String),
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Server { code, message, .. } => write!(f, "server error {code}: {message}"),
            Error::Io(e) => write!(f, "{e}"),
            Error::Protocol(m) | Error::Client(m) => f.write_str(m),
            Error::Closed => f.write_str("the connection is closed"),
            Error::NoTls => f.write_str("the server does not offer TLS"),
            Error::UnknownAuthPlugin(name) => write!(f, "unknown authentication plugin '{name}'"),
        }
    }
}

/// The client library's lost-connection codes (`CR_SERVER_GONE_ERROR`, `CR_TCP_CONNECTION`,
/// `CR_SERVER_LOST`, `CR_SERVER_LOST_EXTENDED`): sysbench reconnects on these.
const LOST_CONNECTION_CODES: [u16; 4] = [2006, 2011, 2013, 2055];
/// Server errors that end the session as well: `ER_SERVER_SHUTDOWN`, `ER_CONNECTION_KILLED`
/// (MariaDB), `ER_CLIENT_INTERACTION_TIMEOUT` (MySQL 8).
const SESSION_ENDED_CODES: [u16; 3] = [1053, 1927, 4031];
/// What I/O and protocol errors are called in run.json: libmysqlclient's `CR_SERVER_LOST`,
/// so that per-code counts read as sysbench's do.
const CR_SERVER_LOST: u16 = 2013;
/// `CR_SERVER_GONE_ERROR`: the connection was already closed when a statement was sent.
const CR_SERVER_GONE_ERROR: u16 = 2006;
/// `CR_CONN_HOST_ERROR`: a reconnect that failed.
pub const CR_CONN_HOST_ERROR: u16 = 2003;

/// sysbench's `check_error()`, with one deliberate difference: a lost connection is always
/// reconnected. sysbench reconnects only when the lost-connection code is in
/// `--mysql-ignore-errors`, and its default list (1213,1020,1205) has none of them, so a
/// server restart kills a default sysbench run; oltplab counts the error, reconnects with
/// backoff and resumes when the server is back, which is what a benchmark of failover,
/// restarts or crash recovery needs. Other listed codes (or any code with `all`) retry the
/// event; the rest are fatal.
pub fn action_for(code: u16, lost: bool, ignore: Option<&[u16]>) -> ErrorAction {
    if lost || LOST_CONNECTION_CODES.contains(&code) || SESSION_ENDED_CODES.contains(&code) {
        ErrorAction::Reconnect
    } else if ignore.is_none_or(|list| list.contains(&code)) {
        ErrorAction::Retry
    } else {
        ErrorAction::Fatal
    }
}

/// Classifies an error from a statement.
pub fn db_error(e: &Error, ignore: Option<&[u16]>) -> DbError {
    let (code, lost) = match e {
        Error::Server { code, .. } => (*code, false),
        Error::Closed => (CR_SERVER_GONE_ERROR, true),
        // A packet out of step with the server: only a new connection recovers.
        Error::Io(_) | Error::Protocol(_) => (CR_SERVER_LOST, true),
        Error::Client(_) | Error::NoTls | Error::UnknownAuthPlugin(_) => {
            return DbError::fatal("CLIENT", one_line(&e.to_string()));
        }
    };
    let sql_state = match e {
        Error::Server { state, .. } => state.clone(),
        _ => String::new(),
    };
    DbError { code: code.to_string(), message: message(e), action: action_for(code, lost, ignore), sql_state }
}

/// A reconnect that failed: the executor tries again, with backoff, while the server is down.
pub fn reconnect_error(e: &Error) -> DbError {
    let code = match e {
        Error::Server { code, .. } => *code,
        _ => CR_CONN_HOST_ERROR,
    };
    DbError { code: code.to_string(), message: message(e), action: ErrorAction::Reconnect, sql_state: String::new() }
}

/// The server's own message for server errors; the library's for the rest.
fn message(e: &Error) -> String {
    match e {
        Error::Server { message, .. } => one_line(message),
        other => one_line(&other.to_string()),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Why `open` failed, in one line that says what to do. The driver's errors never
/// carry the password, and neither does [`NetTarget::describe`].
pub fn connect_error(e: &Error, net: &NetTarget) -> EngineError {
    let at = net.describe();
    let endpoint = match &net.socket {
        Some(s) => format!("the socket {}", s.display()),
        None => format!("{}:{}", net.host, net.port),
    };
    let why = match e {
        Error::Server { code, message, .. } => match code {
            1045 => format!("{message}; check the user in --db and the password ({})", net.password_hint()),
            1044 => format!("{message}; grant the user access to the database or fix the /db part of --db"),
            1049 => format!(
                "unknown database '{}'; create it (CREATE DATABASE {}) or fix the /db part of --db",
                net.database, net.database
            ),
            1040 => "too many connections; raise max_connections on the server or use fewer --threads".to_string(),
            1129 => format!("{message}; run FLUSH HOSTS on the server"),
            1130 => format!("{message}; create the user for this client host"),
            _ => format!("server error {code}: {message}"),
        },
        Error::Io(io) if is_tls(io) => format!(
            "TLS failed ({}); check ssl-ca in --db and that the server's certificate names this host",
            one_line(&io.to_string())
        ),
        Error::Io(io) => io_reason(io, &endpoint, net.socket.is_some()),
        Error::NoTls => "the server does not offer TLS; enable it on the server (have_ssl) or drop ?ssl=on".to_string(),
        Error::UnknownAuthPlugin(name) => format!(
            "the server asks for the authentication plugin '{name}', which oltplab does not support; \
             use mysql_native_password or caching_sha2_password for this user"
        ),
        other => one_line(&other.to_string()),
    };
    EngineError::Connect(format!("cannot connect to MySQL at {at}: {why}"))
}

/// No answer in time.
pub fn connect_timeout(net: &NetTarget, timeout_s: u64) -> EngineError {
    EngineError::Connect(format!(
        "cannot connect to MySQL at {}: no answer within {timeout_s} s; is the server running and reachable? \
         (a slower server: add ?connect_timeout=SECONDS to --db)",
        net.describe()
    ))
}

/// rustls reports a refused certificate as an I/O error that wraps its own.
fn is_tls(io: &io::Error) -> bool {
    io.get_ref().is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
}

fn io_reason(io: &io::Error, endpoint: &str, socket: bool) -> String {
    match io.kind() {
        io::ErrorKind::ConnectionRefused if socket => {
            format!("connection refused; is the server running and listening on {endpoint}?")
        }
        io::ErrorKind::ConnectionRefused => format!("connection refused; is the server running on {endpoint}?"),
        io::ErrorKind::NotFound if socket => {
            format!("{endpoint} does not exist; is the server running, and is this its socket?")
        }
        io::ErrorKind::PermissionDenied => format!("permission denied on {endpoint}; check its permissions"),
        io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset => {
            format!("the server at {endpoint} closed the connection during the handshake; is it a MySQL server?")
        }
        _ if io.to_string().contains("lookup") => {
            format!("cannot resolve the host name ({}); check the host part of --db", one_line(&io.to_string()))
        }
        _ => one_line(&io.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: u16) -> Error {
        Error::Server { code, state: String::new(), message: format!("message {code}") }
    }

    #[test]
    fn listed_codes_retry_and_others_are_fatal() {
        let default: &[u16] = &[1213, 1020, 1205];
        assert_eq!(action_for(1213, false, Some(default)), ErrorAction::Retry);
        assert_eq!(action_for(1205, false, Some(default)), ErrorAction::Retry);
        assert_eq!(action_for(1062, false, Some(default)), ErrorAction::Fatal);
        assert_eq!(action_for(1062, false, None), ErrorAction::Retry);
        assert_eq!(action_for(1064, false, Some(&[])), ErrorAction::Fatal);
    }

    #[test]
    fn lost_connections_always_reconnect() {
        for code in [2006, 2011, 2013, 2055, 1927, 1053, 4031] {
            assert_eq!(action_for(code, false, Some(&[1213])), ErrorAction::Reconnect, "{code}");
            assert_eq!(action_for(code, false, None), ErrorAction::Reconnect, "{code}");
        }
        assert_eq!(action_for(0, true, Some(&[])), ErrorAction::Reconnect);
    }

    #[test]
    fn server_and_io_errors_keep_codes_and_messages() {
        let e = db_error(&server(1213), Some(&[1213]));
        assert_eq!((e.code.as_str(), e.message.as_str(), e.action), ("1213", "message 1213", ErrorAction::Retry));
        let io = Error::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "eof"));
        let e = db_error(&io, Some(&[]));
        assert_eq!((e.code.as_str(), e.action), ("2013", ErrorAction::Reconnect));
        let e = db_error(&Error::Closed, Some(&[]));
        assert_eq!((e.code.as_str(), e.action), ("2006", ErrorAction::Reconnect));
        let e = db_error(&Error::Protocol("packet out of order".into()), Some(&[]));
        assert_eq!((e.code.as_str(), e.action), ("2013", ErrorAction::Reconnect));
        let e = db_error(&Error::Client("statement 3 takes 2 parameters, got 1".into()), None);
        assert_eq!((e.code.as_str(), e.action), ("CLIENT", ErrorAction::Fatal));
    }

    fn net(socket: Option<&str>) -> NetTarget {
        NetTarget {
            host: "127.0.0.1".into(),
            port: 3399,
            socket: socket.map(Into::into),
            user: "sb".into(),
            password: "s3cret".into(),
            password_source: "--db",
            database: "bench".into(),
            tls: false,
            params: std::collections::BTreeMap::new(),
        }
    }

    #[test]
    fn connect_errors_name_the_problem_and_the_fix_without_the_password() {
        let cases = [
            (server(1045), "check the user in --db and the password (the password came from --db)"),
            (server(1049), "unknown database 'bench'; create it (CREATE DATABASE bench)"),
            (server(1040), "raise max_connections"),
            (Error::Io(io::ErrorKind::ConnectionRefused.into()), "is the server running on 127.0.0.1:3399?"),
        ];
        for (e, want) in cases {
            let msg = connect_error(&e, &net(None)).to_string();
            assert!(msg.contains(want), "{msg}");
            assert!(msg.starts_with("cannot connect to MySQL at sb@127.0.0.1:3399/bench: "), "{msg}");
            assert!(!msg.contains("s3cret") && !msg.contains('\n'), "{msg}");
        }
        let e = Error::Io(io::ErrorKind::NotFound.into());
        let msg = connect_error(&e, &net(Some("/tmp/x.sock"))).to_string();
        assert!(msg.contains("the socket /tmp/x.sock does not exist"), "{msg}");
        assert!(matches!(connect_timeout(&net(None), 10), EngineError::Connect(m) if m.contains("within 10 s")));
    }
}
