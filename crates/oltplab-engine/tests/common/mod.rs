//! What the server tests share: the server's URL from the environment.

/// The URL in `var`. Without it the test is skipped with a note, unless `CI` is set: there a
/// green run must mean the server checks ran, so a missing server fails the test, unless
/// `OLTPLAB_SKIP_SERVER_TESTS=1` says the skip is on purpose.
pub fn server_url(var: &str) -> Option<String> {
    if let Some(url) = std::env::var(var).ok().filter(|u| !u.is_empty()) {
        return Some(url);
    }
    let skip_asked = std::env::var("OLTPLAB_SKIP_SERVER_TESTS").is_ok_and(|v| v == "1");
    let in_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
    assert!(
        skip_asked || !in_ci,
        "{var} is not set and CI is: run these tests with servers \
         (python -m tests.servers.with_servers -- cargo test -p oltplab-engine), \
         or set OLTPLAB_SKIP_SERVER_TESTS=1 to skip them on purpose"
    );
    eprintln!("note: {var} is not set; skipping this server test");
    None
}
