use proptest::prelude::*;

use super::*;

fn parse(url: &str) -> Result<NetTarget> {
    NetTarget::parse(url, 3306)
}

#[test]
fn full_url() {
    let t = parse("mysql://sb:p%40ss@127.0.0.1:3307/sbtest?ssl=on&x=1").unwrap();
    assert_eq!((t.user.as_str(), t.password.as_str(), t.host.as_str(), t.port), ("sb", "p@ss", "127.0.0.1", 3307));
    assert_eq!(t.database, "sbtest");
    assert!(t.tls);
    assert_eq!(t.params["x"], "1");
}

#[test]
fn defaults_and_socket() {
    let t = parse("mysql://localhost?socket=/run/mysqld/mysqld.sock").unwrap();
    assert_eq!((t.user.as_str(), t.database.as_str(), t.port), ("sbtest", "sbtest", 3306));
    assert_eq!(t.socket, Some(PathBuf::from("/run/mysqld/mysqld.sock")));
    assert!(!t.tls);
}

#[test]
fn a_colon_in_the_password_is_unambiguous() {
    let t = parse("mysql://u:pa:ss@h/db").unwrap();
    assert_eq!((t.user.as_str(), t.password.as_str()), ("u", "pa:ss"));
}

#[test]
fn ipv6_hosts_take_brackets() {
    let t = parse("postgresql://u@[::1]:5433/db").unwrap();
    assert_eq!((t.host.as_str(), t.port), ("::1", 5433));
    let t = parse("postgresql://u@[::1]/db").unwrap();
    assert_eq!((t.host.as_str(), t.port), ("::1", 3306));
    assert!(parse("postgresql://u@::1/db").is_err());
}

#[test]
fn bad_port_names_the_problem_without_the_text() {
    for url in ["mysql://u:secret@h:99999/db", "mysql://u:secret@h:+1/db", "mysql://u:secret@h:0/db"] {
        let msg = parse(url).unwrap_err().to_string();
        assert!(msg.contains("the port is not a number from 1 to 65535"), "{msg}");
        assert!(!msg.contains("secret") && !msg.contains("99999"), "{msg}");
    }
    // A password where the host should be (the host forgotten) is not echoed either.
    let msg = parse("mysql://u:hunter2").unwrap_err().to_string();
    assert!(!msg.contains("hunter2"), "{msg}");
    assert_eq!(redact("mysql://u:hunter2"), "mysql://***");
}

/// Issue 11: each of these was read one way by the engine and another by the redaction.
#[test]
fn a_password_that_parses_two_ways_is_refused_without_showing_it() {
    for (url, why) in [
        ("mysql://u:pa#ss@h/db", "unencoded '#'"),
        ("mysql://u:pa?ss@h/db", "an '@' follows"),
        ("mysql://u:pa/ss@h/db", "an '@' follows"),
        ("mysql://u:pa@ss@h/db", "more than one unencoded '@'"),
        ("mysql://u:pa%zzss@h/db", "the password holds a '%' not followed by two hex digits"),
        ("mysql://u:pa%€@h/db", "the password holds a '%' not followed by two hex digits"),
        ("mysql://u:pa%@h/db", "the password holds a '%'"),
        ("mysql://u:pa%ff@h/db", "not UTF-8"),
    ] {
        let msg = parse(url).unwrap_err().to_string();
        assert!(msg.contains(why), "{url}: {msg}");
        assert!(msg.contains("%23") && msg.contains("OLTPLAB_DB_PASSWORD"), "{msg}");
        assert!(!msg.contains("pa#") && !msg.contains("pa?") && !msg.contains("pa/") && !msg.contains("pa%"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
        assert_eq!(redact(url), "mysql://***");
    }
}

#[test]
fn redaction() {
    assert_eq!(redact("mysql://sb:pw@h:1/db"), "mysql://sb:***@h:1/db");
    assert_eq!(redact("mysql://sb:@h:1/db"), "mysql://sb:***@h:1/db");
    assert_eq!(redact("postgresql://sb@h/db"), "postgresql://sb@h/db");
    assert_eq!(redact("postgresql://u:p%40ss@h/db"), "postgresql://u:***@h/db");
    assert_eq!(redact("mysql://u:p@h/db?socket=/run/my.sock"), "mysql://u:***@h/db?socket=/run/my.sock");
    assert_eq!(redact("postgresql://h/db?user=u&password=x"), "postgresql://h/db?user=u&password=***");
    assert_eq!(redact("postgresql://h/db?sslpassword=x&a"), "postgresql://h/db?sslpassword=***&a");
    assert_eq!(redact("sqlite:///tmp/x#1.db"), "sqlite:///tmp/x#1.db");
    assert_eq!(redact("not a url"), "not a url");
}

#[test]
fn url_has_password_tells_an_empty_password_from_none() {
    assert!(NetTarget::url_has_password("mysql://u:@h/db"));
    assert!(NetTarget::url_has_password("mysql://u:x@h/db"));
    assert!(!NetTarget::url_has_password("mysql://u@h/db"));
    assert!(!NetTarget::url_has_password("mysql://h/db"));
}

/// Percent-encodes everything but the unreserved characters, as a careful client would.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// No text panics the parser or the redaction, and a URL the parser refuses is redacted to
    /// its scheme: whatever its password is, it is not shown.
    #[test]
    fn any_text_neither_panics_nor_leaks(url in "(mysql|postgresql)://[a-z%€:@/?#&=.\\[\\]0-9]{0,24}") {
        let redacted = redact(&url);
        match parse(&url) {
            Ok(t) if !t.password.is_empty() => {
                prop_assert!(redacted.contains(":***@"), "{}", redacted);
                prop_assert!(!redacted.contains(&format!(":{}@", t.password)), "{}", redacted);
            }
            Ok(_) => {}
            Err(e) => {
                prop_assert!(redacted.ends_with("://***"), "{}", redacted);
                let msg = e.to_string();
                let after_scheme = &url[url.find("://").unwrap() + 3..];
                prop_assert!(after_scheme.len() < 12 || !msg.contains(after_scheme), "{}", msg);
            }
        }
    }

    /// Any user, password and database, percent-encoded, parse back to themselves; the redacted
    /// URL is the URL with `***` for the password, and parses to the same target.
    #[test]
    fn encoded_parts_round_trip(
        user in "\\PC{1,12}",
        password in "\\PC{1,16}",
        host in "[a-z][a-z0-9.-]{0,10}",
        port in 1u16..,
        database in "\\PC{1,12}",
    ) {
        let url = format!("mysql://{}:{}@{host}:{port}/{}?x=1", encode(&user), encode(&password), encode(&database));
        let t = parse(&url).unwrap();
        prop_assert_eq!((&t.user, &t.password, &t.host, t.port, &t.database), (&user, &password, &host, port, &database));
        let redacted = redact(&url);
        let expected = format!("mysql://{}:***@{host}:{port}/{}?x=1", encode(&user), encode(&database));
        prop_assert_eq!(&redacted, &expected);
        let r = parse(&redacted).unwrap();
        prop_assert_eq!(&r.password, MASK);
        prop_assert_eq!((&r.user, &r.host, r.port, &r.database, &r.params), (&t.user, &t.host, t.port, &t.database, &t.params));
    }
}
