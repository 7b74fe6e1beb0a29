//! PostgreSQL errors as sysbench 1.0.20's pgsql driver treats them (three ignorable
//! SQLSTATEs, everything else fatal), plus lost connections, which oltplab
//! reconnects; and the one-line messages for a connection that cannot be opened.

use std::error::Error as _;
use std::io;

use tokio_postgres::error::Severity;

use crate::db::{DbError, ErrorAction};
use crate::driver::url::NetTarget;

/// SQLSTATE `connection_failure`, for a connection lost without a word from the
/// server (a closed socket). pgjdbc reports the same code in the same situation.
pub const CONNECTION_FAILURE: &str = "08006";
/// SQLSTATE `sqlclient_unable_to_establish_sqlconnection`: a reconnect attempt failed.
pub const UNABLE_TO_CONNECT: &str = "08001";
/// An error of the client library itself (a parameter it cannot encode, a protocol surprise).
pub const CLIENT_ERROR: &str = "PGCLIENT";

/// `deadlock_detected`, `serialization_failure`, `unique_violation`: hard-coded as ignorable in
/// `drv_pgsql.c`. The executor sends ROLLBACK and runs the event again.
const RETRY_SQLSTATES: [&str; 3] = ["40P01", "40001", "23505"];

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
pub fn db_error(e: &tokio_postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        // The unlocalized severity (protocol field V, PostgreSQL 9.6+), else the localized one.
        let fatal = match db.parsed_severity() {
            Some(s) => matches!(s, Severity::Fatal | Severity::Panic),
            None => matches!(db.severity(), "FATAL" | "PANIC"),
        };
        return DbError { code: code.to_owned(), message: db.message().to_owned(), action: action_for(code, fatal) };
    }
    if e.is_closed() || io_cause(e).is_some() {
        return DbError { code: CONNECTION_FAILURE.into(), message: one_line(e), action: ErrorAction::Reconnect };
    }
    DbError::fatal(CLIENT_ERROR, one_line(e))
}

/// The library's message and its cause on one line (its Display omits the cause).
pub fn one_line(e: &tokio_postgres::Error) -> String {
    match e.source() {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

fn io_cause(e: &tokio_postgres::Error) -> Option<&io::Error> {
    e.source().and_then(|c| c.downcast_ref::<io::Error>())
}

/// One line naming the problem and its fix. tokio-postgres never puts the password
/// in a message, and neither does this.
pub fn connect_message(e: &tokio_postgres::Error, net: &NetTarget) -> String {
    let at = net.describe();
    if let Some(db) = e.as_db_error() {
        let why = match db.code().code() {
            // The server says the same for a role that does not exist, so as not to reveal which.
            "28P01" => format!(
                "password authentication failed for user '{}' (a wrong password, or no such role); check \
                 the user in --db and the password ({})",
                net.user,
                net.password_hint()
            ),
            "28000" => format!(
                "the server refused user '{}' ({}); create the role or allow it in pg_hba.conf",
                net.user,
                db.message()
            ),
            "3D000" => format!(
                "database '{}' does not exist; create it (CREATE DATABASE {} OWNER {}) or name another in --db",
                net.database, net.database, net.user
            ),
            "53300" => format!(
                "{}; raise the server's max_connections (or the role's or database's CONNECTION LIMIT) or lower \
                 --threads",
                db.message()
            ),
            "57P03" => "the server is starting up or shutting down; wait until it accepts connections".to_string(),
            code => format!("{} (SQLSTATE {code})", db.message()),
        };
        return format!("cannot connect to PostgreSQL at {at}: {why}");
    }
    let text = one_line(e);
    // TLS errors carry an io::Error too: look at them first.
    if text.contains("server does not support TLS") {
        let why = "TLS was requested but the server does not offer it (ssl = off); enable ssl on the server or \
                   drop sslmode from --db";
        return format!("cannot connect to PostgreSQL at {at}: {why}");
    }
    if text.contains("TLS handshake") {
        let why = "check the server's certificate against ?sslrootcert=/path/ca.pem, or drop sslrootcert \
                   (sslmode=require checks no certificate)";
        return format!("cannot connect to PostgreSQL at {at}: {text}; {why}");
    }
    if let Some(io) = io_cause(e) {
        let why = match io.kind() {
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
        };
        return format!("cannot connect to PostgreSQL at {at}: {why}");
    }
    let why = if text.contains("password missing") {
        format!("the server asks for a password; {}", net.password_hint())
    } else {
        text
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
