//! A start at a given wall-clock instant (distributed runs): every client connects first,
//! then waits for the instant the driver chose, so that their loads and intervals begin
//! together. The wait is on the monotonic clock, computed once from the wall clock.

use std::time::{Duration, SystemTime};

use super::stop::Stop;
use crate::error::{EngineError, Result};
use crate::stats::epoch_s;

/// Waits until `start_at` (epoch seconds); at once when it is absent or already past (the
/// lateness is then visible in the run's `started_at`). Ctrl-C while waiting: nothing measured.
pub async fn wait_for_start(start_at: Option<f64>, stop: &mut Stop) -> Result<()> {
    let Some(at) = start_at else { return Ok(()) };
    let wait_s = at - epoch_s(SystemTime::now());
    if wait_s <= 0.0 {
        return Ok(());
    }
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs_f64(wait_s)) => Ok(()),
        () = stop.stopped() => Err(EngineError::Interrupted("while waiting for the common start; nothing was measured".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waits_until_the_instant_and_not_for_a_past_one() {
        let mut stop = Stop::new();
        // Bounds a loaded host keeps (its timers can be tens of milliseconds late): a wait of
        // twice the time, or one for the past instant's 10 s, is still caught.
        let at = epoch_s(SystemTime::now()) + 0.3;
        wait_for_start(Some(at), &mut stop).await.unwrap();
        let late_s = epoch_s(SystemTime::now()) - at;
        assert!((0.0..0.25).contains(&late_s), "{late_s}");
        let before = std::time::Instant::now();
        wait_for_start(Some(at - 10.0), &mut stop).await.unwrap();
        wait_for_start(None, &mut stop).await.unwrap();
        assert!(before.elapsed() < Duration::from_secs(1));
    }

    #[tokio::test]
    async fn a_stop_ends_the_wait() {
        let mut stop = Stop::new();
        stop.stop();
        let at = epoch_s(SystemTime::now()) + 60.0;
        assert!(matches!(wait_for_start(Some(at), &mut stop).await, Err(EngineError::Interrupted(_))));
    }
}
