//! A stop signal shared by the caller (Ctrl-C), the workers (a fatal error) and
//! the run itself.

use tokio::sync::watch;

#[derive(Clone)]
pub struct Stop {
    tx: std::sync::Arc<watch::Sender<bool>>,
    rx: watch::Receiver<bool>,
}

impl Default for Stop {
    fn default() -> Self {
        Self::new()
    }
}

impl Stop {
    pub fn new() -> Self {
        let (tx, rx) = watch::channel(false);
        Self { tx: std::sync::Arc::new(tx), rx }
    }

    pub fn stop(&self) {
        self.tx.send_replace(true);
    }

    pub fn is_stopped(&self) -> bool {
        *self.rx.borrow()
    }

    /// Resolves once `stop` has been called (at once if it already was).
    pub async fn stopped(&mut self) {
        let _ = self.rx.wait_for(|s| *s).await;
    }
}
