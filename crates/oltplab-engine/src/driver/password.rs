//! Where a server's password comes from when the `--db` URL holds none, so that it need not
//! sit on the command line (readable by every local user in /proc/PID/cmdline). In order:
//! `--db-password-file PATH`, `OLTPLAB_DB_PASSWORD`, the client's own variable (`MYSQL_PWD`
//! for MySQL, `PGPASSWORD` for PostgreSQL, as sysbench's client libraries read them), and for
//! PostgreSQL the password file libpq reads (`PGPASSFILE`, else `~/.pgpass`). docs/security.md
//! weighs them.

use std::path::{Path, PathBuf};

use super::url::NetTarget;
use crate::error::{EngineError, Result};

/// The protocol, for the client's own variable and file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    Mysql,
    Postgres,
}

/// The variable every client reads.
pub const ENV_PASSWORD: &str = "OLTPLAB_DB_PASSWORD";

/// What the lookup reads besides the file the user names: the environment (a function, so
/// that tests need not change the process's own).
pub struct Sources<'a> {
    pub password_file: Option<&'a Path>,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

impl Sources<'_> {
    /// The process's environment.
    pub fn from_env(password_file: Option<&Path>) -> Sources<'_> {
        Sources { password_file, env: &|name| std::env::var(name).ok() }
    }
}

/// Fills `net.password` when `url` holds none; a URL that holds one and a password file as well
/// is refused (which one is meant cannot be known).
pub fn resolve(net: &mut NetTarget, url: &str, client: Client, sources: &Sources<'_>) -> Result<()> {
    if NetTarget::url_has_password(url) {
        if sources.password_file.is_some() {
            return Err(EngineError::config(
                "the password is given twice, in --db and by --db-password-file; leave it out of the URL",
            ));
        }
        return Ok(());
    }
    if let Some(path) = sources.password_file {
        net.password = read_password_file(path)?;
        net.password_source = "--db-password-file";
        return Ok(());
    }
    let env = |name: &str| (sources.env)(name).filter(|v| !v.is_empty());
    let own = match client {
        Client::Mysql => "MYSQL_PWD",
        Client::Postgres => "PGPASSWORD",
    };
    let found = [ENV_PASSWORD, own].into_iter().find_map(|name| env(name).map(|p| (p, name)));
    if let Some((password, name)) = found {
        (net.password, net.password_source) = (password, name);
    } else if client == Client::Postgres {
        let file = env("PGPASSFILE").map(PathBuf::from).or_else(|| env("HOME").map(|h| Path::new(&h).join(".pgpass")));
        if let Some(p) = file.and_then(|f| pgpass_lookup(&f, net)) {
            (net.password, net.password_source) = (p, "the password file (PGPASSFILE or ~/.pgpass)");
        }
    }
    Ok(())
}

/// The file's first line (a trailing newline is not part of the password).
fn read_password_file(path: &Path) -> Result<String> {
    let text = std::fs::read(path)
        .map_err(|e| EngineError::config(format!("--db-password-file {}: cannot read it ({e})", path.display())))?;
    let text = String::from_utf8(text).map_err(|_| {
        EngineError::config(format!("--db-password-file {}: the file is not UTF-8 text", path.display()))
    })?;
    let line = text.split('\n').next().unwrap_or("");
    Ok(line.strip_suffix('\r').unwrap_or(line).to_string())
}

/// libpq's rules: lines `host:port:database:user:password`, `*` matches anything, `\` escapes
/// `:` and `\`, `#` starts a comment line, a Unix socket matches host `localhost`, the first
/// matching line wins, and a file that others may read is ignored (libpq warns and ignores it).
fn pgpass_lookup(file: &Path, net: &NetTarget) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if std::fs::metadata(file).ok()?.permissions().mode() & 0o077 != 0 {
            return None;
        }
    }
    let text = std::fs::read_to_string(file).ok()?;
    let host = if net.socket.is_some() { "localhost".to_string() } else { net.host.clone() };
    let wanted = [host, net.port.to_string(), net.database.clone(), net.user.clone()];
    text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).find_map(|line| {
        let fields = pgpass_fields(line);
        let [h, p, d, u, password] = fields.as_slice() else { return None };
        let matches = [h, p, d, u].iter().zip(&wanted).all(|(field, want)| *field == "*" || *field == want);
        matches.then(|| password.clone())
    })
}

fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().expect("never empty").extend(chars.next()),
            // The password is the last field: it may hold unescaped colons.
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("never empty").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn net(url: &str) -> NetTarget {
        NetTarget::parse(url, 5432).unwrap()
    }

    fn resolved(url: &str, client: Client, file: Option<&Path>, vars: &[(&str, &str)]) -> Result<String> {
        let vars: BTreeMap<String, String> = vars.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect();
        let env = move |name: &str| vars.get(name).cloned();
        let mut t = net(url);
        resolve(&mut t, url, client, &Sources { password_file: file, env: &env })?;
        if !url.contains(":@") {
            assert_eq!(t.password.is_empty(), t.password_source.is_empty(), "{url}");
        }
        Ok(t.password)
    }

    /// A password file in a directory of its own, both removed when it drops: a test's
    /// passwords must not outlive it in the temp directory.
    struct TempFile(PathBuf);

    impl TempFile {
        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            if let Some(dir) = self.0.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }

    fn temp_file(name: &str, text: &str, mode: u32) -> TempFile {
        let dir = std::env::temp_dir().join(format!("oltplab-password-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = TempFile(dir.join(name));
        std::fs::write(file.path(), text).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        file
    }

    #[test]
    fn the_url_wins_over_the_environment() {
        let vars = [("OLTPLAB_DB_PASSWORD", "env"), ("MYSQL_PWD", "mysql")];
        assert_eq!(resolved("mysql://u:url@h/db", Client::Mysql, None, &vars).unwrap(), "url");
        // An empty password in the URL is a password: the environment is not read.
        assert_eq!(resolved("mysql://u:@h/db", Client::Mysql, None, &vars).unwrap(), "");
    }

    #[test]
    fn the_environment_in_order() {
        let all = [("OLTPLAB_DB_PASSWORD", "ours"), ("MYSQL_PWD", "mysql"), ("PGPASSWORD", "pg")];
        assert_eq!(resolved("mysql://u@h/db", Client::Mysql, None, &all).unwrap(), "ours");
        assert_eq!(resolved("mysql://u@h/db", Client::Mysql, None, &all[1..]).unwrap(), "mysql");
        let mut t = net("mysql://u@h/db");
        let env = |name: &str| (name == "MYSQL_PWD").then(|| "x".to_string());
        resolve(&mut t, "mysql://u@h/db", Client::Mysql, &Sources { password_file: None, env: &env }).unwrap();
        assert_eq!(t.password_hint(), "the password came from MYSQL_PWD");
        assert_eq!(resolved("postgresql://u@h/db", Client::Postgres, None, &all[1..]).unwrap(), "pg");
        // Each client reads its own variable only.
        assert_eq!(resolved("postgresql://u@h/db", Client::Postgres, None, &all[1..2]).unwrap(), "");
    }

    #[test]
    fn the_password_file_wins_and_loses_its_newline() {
        let file = temp_file("pw", "s3cret:with#odd/chars\n", 0o600);
        let vars = [("OLTPLAB_DB_PASSWORD", "env")];
        assert_eq!(
            resolved("mysql://u@h/db", Client::Mysql, Some(file.path()), &vars).unwrap(),
            "s3cret:with#odd/chars"
        );
        let e = resolved("mysql://u:x@h/db", Client::Mysql, Some(file.path()), &[]).unwrap_err().to_string();
        assert!(e.contains("given twice"), "{e}");
        let e = resolved("mysql://u@h/db", Client::Mysql, Some(Path::new("/nonexistent/pw")), &[]).unwrap_err();
        assert!(e.to_string().contains("--db-password-file /nonexistent/pw: cannot read it"), "{e}");
    }

    #[test]
    fn pgpass_as_libpq_reads_it() {
        let text = "# comment\nother:5432:*:u:no\nh:5432:db:u:pa\\:ss:x\n*:*:*:*:any\n";
        let file = temp_file("pgpass", text, 0o600);
        let file_s = file.path().to_str().unwrap();
        let vars = [("PGPASSFILE", file_s)];
        assert_eq!(resolved("postgresql://u@h/db", Client::Postgres, None, &vars).unwrap(), "pa:ss:x");
        assert_eq!(resolved("postgresql://u@h:5433/db", Client::Postgres, None, &vars).unwrap(), "any");
        // MySQL does not read PostgreSQL's file.
        assert_eq!(resolved("mysql://u@h/db", Client::Mysql, None, &vars).unwrap(), "");
        // A file others may read is ignored, as libpq does.
        let open = temp_file("pgpass-open", text, 0o644);
        let vars = [("PGPASSFILE", open.path().to_str().unwrap())];
        assert_eq!(resolved("postgresql://u@h/db", Client::Postgres, None, &vars).unwrap(), "");
    }
}
