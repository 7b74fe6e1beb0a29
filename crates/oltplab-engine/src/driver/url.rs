//! The one parser of server URLs: `mysql://user:pass@host:port/db?socket=/path&ssl=on` and
//! `postgresql://user:pass@host:port/db?sslmode=require`. What the engine connects with and what
//! redaction masks come from the same cut ([`cut`]), and the Python side calls this parser through
//! the binding, so a password is never read one way and masked another. A URL whose password
//! could be read two ways (an unencoded `#`, `?`, `/` or `@` in it, a bad `%`-escape) is refused,
//! and no message ever shows any part of the URL but its scheme.

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
    /// Empty: none (the server's trust or peer authentication).
    pub password: String,
    /// Where the password came from, for messages: `--db`, `OLTPLAB_DB_PASSWORD`, ... (password.rs);
    /// empty when there is none.
    pub password_source: &'static str,
    pub database: String,
    /// TLS requested (`?ssl=on`, or `?sslmode=require` for PostgreSQL).
    pub tls: bool,
    /// The remaining query parameters, for the driver to interpret.
    pub params: BTreeMap<String, String>,
}

/// What the user reads when a URL is refused: how to write it so that it parses one way.
const HOW_TO_FIX: &str = "percent-encode these characters in the user, password and database \
    (# as %23, ? as %3F, / as %2F, @ as %40, % as %25), or leave the password out of the URL and give it \
    in OLTPLAB_DB_PASSWORD or a file named by --db-password-file";

/// The form, for messages.
const FORM: &str = "the form is scheme://user:password@host:port/database?param=value";

/// A server URL cut into its parts, each as written (still percent-encoded).
#[derive(Debug, Clone, Copy)]
struct Cut<'a> {
    scheme: &'a str,
    /// None: no `user@` part.
    user: Option<&'a str>,
    /// None: no `:password` in the user part (an empty one is `Some("")`).
    password: Option<&'a str>,
    hostport: &'a str,
    /// After the authority, with its leading `/` (may be empty).
    path: &'a str,
    /// After `?`.
    query: Option<&'a str>,
}

/// Why a URL is refused. The messages name the part, never its text.
fn refused(scheme: &str, problem: &str) -> EngineError {
    EngineError::config(format!("--db {scheme}://…: {problem}; {HOW_TO_FIX}"))
}

fn cut(url: &str) -> Result<Cut<'_>> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(EngineError::config(format!("--db: a server URL needs '//' after the scheme; {FORM}")));
    };
    if rest.contains('#') {
        return Err(refused(scheme, "the URL holds an unencoded '#'"));
    }
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if tail.contains('@') {
        // `u:pa/ss@h` or `u:pa?ss@h`: the password's '/' or '?' ended the host part early.
        return Err(refused(scheme, "an '@' follows a '/' or '?', so the password or user cannot be told apart"));
    }
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    let (userinfo, hostport) = match authority.split_once('@') {
        Some((_, h)) if h.contains('@') => {
            return Err(refused(scheme, "the URL holds more than one unencoded '@'"));
        }
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let (user, password) = match userinfo.map(|u| u.split_once(':').map_or((u, None), |(u, p)| (u, Some(p)))) {
        Some((u, p)) => (Some(u), p),
        None => (None, None),
    };
    let c = Cut { scheme, user, password, hostport, path, query };
    for (part, text) in [("user", user), ("password", password), ("host", Some(hostport)), ("database", Some(path))] {
        check_escapes(scheme, part, text.unwrap_or(""))?;
    }
    check_escapes(scheme, "parameters", query.unwrap_or(""))?;
    Ok(c)
}

/// Every `%` starts a two-hex-digit escape, and the decoded bytes are UTF-8.
fn check_escapes(scheme: &str, part: &str, text: &str) -> Result<()> {
    decode(text).map(drop).map_err(|why| refused(scheme, &format!("the {part} holds {why}")))
}

/// Percent-decoding on bytes (so `%` before a multi-byte character cannot split it).
fn decode(s: &str) -> std::result::Result<String, &'static str> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |b: Option<&u8>| b.and_then(|b| char::from(*b).to_digit(16));
            match (hex(bytes.get(i + 1)), hex(bytes.get(i + 2))) {
                (Some(hi), Some(lo)) => out.push((hi * 16 + lo) as u8),
                _ => return Err("a '%' not followed by two hex digits"),
            }
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "percent-escapes that are not UTF-8 text")
}

/// Decodes a part [`cut`] has checked.
fn decoded(s: &str) -> String {
    decode(s).unwrap_or_default()
}

impl NetTarget {
    /// Parses `url` with the password it holds (empty when it holds none);
    /// `default_port` is the server's usual one.
    pub fn parse(url: &str, default_port: u16) -> Result<Self> {
        let c = cut(url)?;
        let (host, port) = host_port(c.scheme, c.hostport, default_port)?;
        let mut params: BTreeMap<String, String> = BTreeMap::new();
        for pair in c.query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            params.insert(decoded(k), decoded(v));
        }
        let socket = params.remove("socket").or_else(|| params.remove("host").filter(|h| h.starts_with('/')));
        let tls = match (params.remove("ssl"), params.remove("sslmode")) {
            (Some(v), _) => matches!(v.as_str(), "on" | "true" | "1" | "required" | "require"),
            (None, Some(m)) => matches!(m.as_str(), "require" | "verify-ca" | "verify-full"),
            (None, None) => false,
        };
        let user = decoded(c.user.unwrap_or(""));
        let database = decoded(c.path.strip_prefix('/').unwrap_or(c.path));
        Ok(Self {
            host: if host.is_empty() { "localhost".into() } else { host },
            port,
            socket: socket.map(PathBuf::from),
            user: if user.is_empty() { "sbtest".into() } else { user },
            password: decoded(c.password.unwrap_or("")),
            password_source: if c.password.is_some() { "--db" } else { "" },
            database: if database.is_empty() { "sbtest".into() } else { database },
            tls,
            params,
        })
    }

    /// Whether `url` itself holds a password (`user:password@`, even an empty one).
    pub fn url_has_password(url: &str) -> bool {
        cut(url).is_ok_and(|c| c.password.is_some())
    }

    /// Where the password came from, or where it may be given, for an authentication error.
    pub fn password_hint(&self) -> String {
        if self.password_source.is_empty() {
            "no password was given: leave it out of the URL and give it in OLTPLAB_DB_PASSWORD, \
             --db-password-file or the client's variable (MYSQL_PWD, PGPASSWORD), or percent-encode it in --db"
                .to_string()
        } else {
            format!("the password came from {}", self.password_source)
        }
    }

    /// Where it connects, for messages (never the password).
    pub fn describe(&self) -> String {
        match &self.socket {
            Some(s) => format!("{}@{} (socket {})", self.user, self.database, s.display()),
            None => format!("{}@{}:{}/{}", self.user, self.host, self.port, self.database),
        }
    }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`; the port is a number from 1 to 65535.
fn host_port(scheme: &str, text: &str, default_port: u16) -> Result<(String, u16)> {
    let (host, port) = if let Some(v6) = text.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or_else(|| refused(scheme, "an IPv6 host misses its ']'"))?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':').ok_or_else(|| refused(scheme, "text follows the IPv6 host"))?)),
        }
    } else {
        match text.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    let port = match port {
        None | Some("") => default_port,
        // The text is not echoed: with the host left out, it may be a password.
        Some(p) => {
            p.parse::<u16>().ok().filter(|n| *n > 0 && p.bytes().all(|b| b.is_ascii_digit())).ok_or_else(|| {
                EngineError::config(format!(
                    "--db {scheme}://…: the port is not a number from 1 to 65535 (an IPv6 host goes in brackets, \
                 [::1]:5432); {FORM}"
                ))
            })?
        }
    };
    Ok((decoded(host), port))
}

/// Query parameters whose values are secrets (`?password=`, `?sslpassword=`, `?auth_token=`).
fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["pass", "password", "passwd", "pwd", "secret", "token"].iter().any(|s| name.ends_with(s))
}

/// The URL with its password (and secret-looking parameters) replaced by `***`, the rest as written.
/// A server URL that [`NetTarget::parse`] refuses shows its scheme only: where its password ends
/// cannot be known. Text without `://` and SQLite paths are returned as they are.
pub fn redact(url: &str) -> String {
    let Some((scheme, _)) = url.split_once("://") else { return url.to_string() };
    if matches!(scheme, "sqlite" | "fake") {
        return url.to_string();
    }
    // What the parser refuses is masked whole: `mysql://u:hunter2` (the host forgotten) has no '@'.
    let Some(c) = cut(url).ok().filter(|c| host_port(c.scheme, c.hostport, 0).is_ok()) else {
        return format!("{scheme}://{MASK}");
    };
    let userinfo = match (c.user, c.password) {
        (Some(u), Some(_)) => format!("{u}:{MASK}@"),
        (Some(u), None) => format!("{u}@"),
        (None, _) => String::new(),
    };
    let query = c.query.map_or(String::new(), |q| {
        let pairs = q.split('&').map(|pair| match pair.split_once('=') {
            Some((k, _)) if is_secret_name(&decoded(k)) => format!("{k}={MASK}"),
            _ => pair.to_string(),
        });
        format!("?{}", pairs.collect::<Vec<_>>().join("&"))
    });
    format!("{}://{userinfo}{}{}{query}", c.scheme, c.hostport, c.path)
}

/// What replaces a secret.
pub const MASK: &str = "***";

#[cfg(test)]
#[path = "url_tests.rs"]
mod tests;
