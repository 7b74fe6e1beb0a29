//! PostgreSQL errors as sysbench 1.0.20's pgsql driver treats them (three ignorable
//! SQLSTATEs, everything else fatal), plus lost connections, which oltplab
//! reconnects; and the one-line messages for a connection that cannot be opened.

use std::fmt;
use std::io;

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::ErrorResponseBody;

use crate::db::{DbError, ErrorAction};
use crate::driver::url::NetTarget;

/// SQLSTATE `connection_failure`, for a connection lost without a word from the
/// server (a closed socket). pgjdbc reports the same code in the same situation.
pub const CONNECTION_FAILURE: &str = "08006";
/// SQLSTATE `sqlclient_unable_to_establish_sqlconnection`: a reconnect attempt failed.
pub const UNABLE_TO_CONNECT: &str = "08001";
/// An error of the client itself (a parameter it cannot encode, a protocol surprise).
pub const CLIENT_ERROR: &str = "PGCLIENT";

/// `deadlock_detected`, `serialization_failure`, `unique_violation`: hard-coded as ignorable in
/// `drv_pgsql.c`. The executor sends ROLLBACK and runs the event again.
const RETRY_SQLSTATES: [&str; 3] = ["40P01", "40001", "23505"];

/// What can go wrong on a connection.
#[derive(Debug)]
pub enum PgError {
    /// The server's `ErrorResponse`.
    Server(ServerError),
    Io(io::Error),
    /// The server closed the connection.
    Closed,
    /// `sslmode=require`, but the server answered the `SSLRequest` with 'N'.
    TlsNotOffered,
    /// The TLS handshake failed (a refused certificate, no common protocol).
    Tls(io::Error),
    /// The server asks for a password and none was given.
    PasswordMissing,
    /// An unexpected message, an unsupported authentication method, a bad SCRAM exchange.
    Protocol(String),
}

/// The fields of an `ErrorResponse` that oltplab uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    /// FATAL or PANIC: the server ends the session.
    pub fatal: bool,
    pub code: String,
    pub message: String,
}

impl ServerError {
    pub fn from_body(body: &ErrorResponseBody) -> Result<Self, PgError> {
        let (mut severity, mut unlocalized) = (String::new(), None);
        let mut e = Self { fatal: false, code: String::new(), message: String::new() };
        let mut fields = body.fields();
        while let Some(field) = fields.next()? {
            let value = String::from_utf8_lossy(field.value_bytes());
            match field.type_() {
                b'S' => severity = value.into_owned(),
                // The unlocalized severity (PostgreSQL 9.6+), else the localized one.
                b'V' => unlocalized = Some(value.into_owned()),
                b'C' => e.code = value.into_owned(),
                b'M' => e.message = value.into_owned(),
                _ => {}
            }
        }
        e.fatal = matches!(unlocalized.as_deref().unwrap_or(&severity), "FATAL" | "PANIC");
        Ok(e)
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PgError::Server(e) => write!(f, "{} (SQLSTATE {})", e.message, e.code),
            PgError::Io(e) => write!(f, "{e}"),
            PgError::Closed => f.write_str("the server closed the connection"),
            PgError::TlsNotOffered => f.write_str("server does not support TLS"),
            PgError::Tls(e) => write!(f, "TLS handshake failed: {e}"),
            PgError::PasswordMissing => f.write_str("password missing"),
            PgError::Protocol(m) => write!(f, "protocol error: {m}"),
        }
    }
}

impl From<io::Error> for PgError {
    fn from(e: io::Error) -> Self {
        PgError::Io(e)
    }
}

/// What the event loop does after an error with this SQLSTATE and severity.
pub fn action_for(sqlstate: &str, fatal_severity: bool) -> ErrorAction {
    if RETRY_SQLSTATES.contains(&sqlstate) {
        ErrorAction::Retry
    } else if fatal_severity
        || sqlstate.starts_with("08")
        // admin_shutdown (pg_terminate_backend, a fast shutdown), crash_shutdown, cannot_connect_now
        || matches!(sqlstate, "57P01" | "57P02" | "57P03")
    {
        // A FATAL error ends the server's session: only a new connection can go on.
        ErrorAction::Reconnect
    } else {
        ErrorAction::Fatal
    }
}

/// Classifies an error of a statement on an open connection.
pub fn db_error(e: PgError) -> DbError {
    match e {
        PgError::Server(e) => {
            let action = action_for(&e.code, e.fatal);
            DbError { sql_state: e.code.clone(), code: e.code, message: e.message, action }
        }
        PgError::Io(_) | PgError::Closed => DbError {
            code: CONNECTION_FAILURE.into(),
            message: e.to_string(),
            action: ErrorAction::Reconnect,
            sql_state: CONNECTION_FAILURE.into(),
        },
        e => DbError::fatal(CLIENT_ERROR, e.to_string()),
    }
}

/// One line naming the problem and its fix; never the password.
pub fn connect_message(e: &PgError, net: &NetTarget) -> String {
    let at = net.describe();
    let why = match e {
        PgError::Server(db) => match db.code.as_str() {
            // The server says the same for a role that does not exist, so as not to reveal which.
            "28P01" => format!(
                "password authentication failed for user '{}' (a wrong password, or no such role); check \
                 the user in --db and the password ({})",
                net.user,
                net.password_hint()
            ),
            "28000" => format!(
                "the server refused user '{}' ({}); create the role or allow it in pg_hba.conf",
                net.user, db.message
            ),
            "3D000" => format!(
                "database '{}' does not exist; create it (CREATE DATABASE {} OWNER {}) or name another in --db",
                net.database, net.database, net.user
            ),
            "53300" => format!(
                "{}; raise the server's max_connections (or the role's or database's CONNECTION LIMIT) or lower \
                 --threads",
                db.message
            ),
            "57P03" => "the server is starting up or shutting down; wait until it accepts connections".to_string(),
            code => format!("{} (SQLSTATE {code})", db.message),
        },
        PgError::TlsNotOffered => "TLS was requested but the server does not offer it (ssl = off); enable ssl on \
                                   the server or drop sslmode from --db"
            .to_string(),
        PgError::Tls(_) => format!(
            "{e}; check the server's certificate against ?sslrootcert=/path/ca.pem, or drop sslrootcert \
             (sslmode=require checks no certificate)"
        ),
        PgError::Io(io) => match io.kind() {
            io::ErrorKind::ConnectionRefused => {
                "connection refused; start the server or fix the host and port in --db".to_string()
            }
            io::ErrorKind::NotFound if net.socket.is_some() => format!(
                "no server socket .s.PGSQL.{} in that directory; start the server or fix ?host=/socket/dir \
                 and the port in --db",
                net.port
            ),
            io::ErrorKind::TimedOut => "the connection timed out; check the host, the port and any firewall (or \
                                        raise ?connect_timeout=SECONDS)"
                .to_string(),
            io::ErrorKind::PermissionDenied => "permission denied on the server's socket".to_string(),
            _ => format!("{io}; check the host and port in --db"),
        },
        PgError::PasswordMissing => format!("the server asks for a password; {}", net.password_hint()),
        PgError::Closed | PgError::Protocol(_) => e.to_string(),
    };
    format!("cannot connect to PostgreSQL at {at}: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysbench_ignorable_sqlstates_retry() {
        for code in ["40P01", "40001", "23505"] {
            assert_eq!(action_for(code, false), ErrorAction::Retry, "{code}");
        }
    }

    #[test]
    fn lost_sessions_reconnect() {
        assert_eq!(action_for("57P01", true), ErrorAction::Reconnect); // pg_terminate_backend
        assert_eq!(action_for("57P02", false), ErrorAction::Reconnect);
        assert_eq!(action_for("08006", false), ErrorAction::Reconnect);
        assert_eq!(action_for("XX000", true), ErrorAction::Reconnect); // any FATAL ends the session
    }

    #[test]
    fn other_errors_are_fatal() {
        assert_eq!(action_for("42P01", false), ErrorAction::Fatal); // undefined_table
        assert_eq!(action_for("25P02", false), ErrorAction::Fatal); // in_failed_sql_transaction
        assert_eq!(action_for("23503", false), ErrorAction::Fatal); // foreign_key_violation
    }
}
