//! A panic is a bug, and its message may hold input (a URL, a password, a server's reply), so
//! it never reaches the user: the hook keeps where it happened and prints nothing, and callers
//! turn it into one [`EngineError::Internal`] line naming that place.

use std::sync::{Mutex, Once, PoisonError};

use crate::error::EngineError;

/// `file:line` of the latest panic.
static LAST_PLACE: Mutex<Option<String>> = Mutex::new(None);

/// Replaces the default hook (which prints the payload) for the whole process; once.
pub fn install_quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let place = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
            *LAST_PLACE.lock().unwrap_or_else(PoisonError::into_inner) = place;
            if cfg!(test) {
                previous(info); // a failing unit test shows its message
            }
        }));
    });
}

/// The error a caught panic becomes: where, never what (its payload is dropped unread).
pub fn caught(what: &str) -> EngineError {
    let place = LAST_PLACE.lock().unwrap_or_else(PoisonError::into_inner).take();
    let at = place.map_or(String::new(), |p| format!(" at {p}"));
    EngineError::Internal(format!(
        "{what} panicked{at}: a bug in oltplab; please report it with the command line (secrets removed)"
    ))
}

/// A task that ended without its result: panicked (see [`caught`]) or was cancelled.
pub fn joined(what: &str, e: &tokio::task::JoinError) -> EngineError {
    if e.is_panic() {
        caught(what)
    } else {
        EngineError::Internal(format!("{what} was cancelled"))
    }
}

/// Tests that panic hold this: the place kept is the process's latest panic, and two tests
/// panicking at once would take each other's.
#[cfg(test)]
pub(crate) static ONE_PANIC_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_names_its_place_not_its_payload() {
        let _one = ONE_PANIC_AT_A_TIME.blocking_lock();
        install_quiet_hook();
        let r = std::panic::catch_unwind(|| panic!("the password is hunter2"));
        assert!(r.is_err());
        let msg = caught("the engine").to_string();
        assert!(msg.starts_with("internal error: the engine panicked at "), "{msg}");
        assert!(msg.contains("panics.rs:"), "{msg}");
        assert!(!msg.contains("hunter2"), "{msg}");
    }

    #[tokio::test]
    async fn a_panicked_task_names_no_payload() {
        let _one = ONE_PANIC_AT_A_TIME.lock().await;
        install_quiet_hook();
        let e = tokio::spawn(async { panic!("hunter2 in a task") }).await.unwrap_err();
        let msg = joined("a worker", &e).to_string();
        assert!(msg.contains("a worker panicked") && !msg.contains("hunter2"), "{msg}");
    }
}
