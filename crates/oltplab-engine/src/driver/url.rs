//! Parses `mysql://user:pass@host:port/db?socket=/path&ssl=on` and
//! `postgresql://user:pass@host:port/db?sslmode=require` into a [`NetTarget`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::{EngineError, Result};

/// A server reached over TCP or a Unix socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetTarget {
    pub host: String,
    pub port: u16,
    /// Unix socket path (MySQL: the socket file; PostgreSQL: the socket directory).
    pub socket: Option<PathBuf>,
    pub user: String,
    pub password: String,
    pub database: String,
    /// TLS requested (`?ssl=on`, or `?sslmode=require` for PostgreSQL).
    pub tls: bool,
    /// The remaining query parameters, for the driver to interpret.
    pub params: BTreeMap<String, String>,
}

impl NetTarget {
    /// `rest` is what follows `scheme:`; `default_port` is the server's usual one.
    pub fn parse(url: &str, rest: &str, default_port: u16) -> Result<Self> {
        let bad = |why: &str| {
            EngineError::config(format!(
                "--db '{}': {why}; the form is scheme://user:password@host:port/database?socket=/path",
                redact(url)
            ))
        };
        let rest = rest.strip_prefix("//").ok_or_else(|| bad("missing '//' after the scheme"))?;
        let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, database) = main.split_once('/').unwrap_or((main, ""));
        let (userinfo, hostport) = authority.rsplit_once('@').unwrap_or(("", authority));
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => {
                (h, p.parse::<u16>().map_err(|_| bad(&format!("port '{p}' is not a number from 1 to 65535")))?)
            }
            _ => (hostport, default_port),
        };
        let mut params: BTreeMap<String, String> = BTreeMap::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            params.insert(decode(k), decode(v));
        }
        let socket = params.remove("socket").or_else(|| params.remove("host").filter(|h| h.starts_with('/')));
        let tls = match (params.remove("ssl"), params.remove("sslmode")) {
            (Some(v), _) => matches!(v.as_str(), "on" | "true" | "1" | "required" | "require"),
            (None, Some(m)) => matches!(m.as_str(), "require" | "verify-ca" | "verify-full"),
            (None, None) => false,
        };
        Ok(Self {
            host: if host.is_empty() { "localhost".into() } else { decode(host.trim_matches(['[', ']'])) },
            port,
            socket: socket.map(PathBuf::from),
            user: if user.is_empty() { "sbtest".into() } else { decode(user) },
            password: decode(password),
            database: if database.is_empty() { "sbtest".into() } else { decode(database) },
            tls,
            params,
        })
    }

    /// Where it connects, for messages (never the password).
    pub fn describe(&self) -> String {
        match &self.socket {
            Some(s) => format!("{}@{} (socket {})", self.user, self.database, s.display()),
            None => format!("{}@{}:{}/{}", self.user, self.host, self.port, self.database),
        }
    }
}

/// The URL with its password replaced by `***`.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') => {
            let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
            format!("{scheme}://{user}:***@{host}{tail}")
        }
        _ => url.to_string(),
    }
}

/// Percent-decoding, so that passwords may hold `@`, `:` or `/` as `%40`, `%3A`, `%2F`.
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_url() {
        let t = NetTarget::parse("x", "//sb:p%40ss@127.0.0.1:3307/sbtest?ssl=on&x=1", 3306).unwrap();
        assert_eq!((t.user.as_str(), t.password.as_str(), t.host.as_str(), t.port), ("sb", "p@ss", "127.0.0.1", 3307));
        assert_eq!(t.database, "sbtest");
        assert!(t.tls);
        assert_eq!(t.params["x"], "1");
    }

    #[test]
    fn defaults_and_socket() {
        let t = NetTarget::parse("x", "//localhost?socket=/run/mysqld/mysqld.sock", 3306).unwrap();
        assert_eq!((t.user.as_str(), t.database.as_str(), t.port), ("sbtest", "sbtest", 3306));
        assert_eq!(t.socket, Some(PathBuf::from("/run/mysqld/mysqld.sock")));
        assert!(!t.tls);
    }

    #[test]
    fn bad_port_names_the_problem_without_the_password() {
        let e = NetTarget::parse("mysql://u:secret@h:99999/db", "//u:secret@h:99999/db", 3306).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("port '99999'"), "{msg}");
        assert!(!msg.contains("secret"), "{msg}");
    }

    #[test]
    fn redaction() {
        assert_eq!(redact("mysql://sb:pw@h:1/db"), "mysql://sb:***@h:1/db");
        assert_eq!(redact("postgresql://sb@h/db"), "postgresql://sb@h/db");
        assert_eq!(redact("sqlite:///tmp/x.db"), "sqlite:///tmp/x.db");
    }
}
