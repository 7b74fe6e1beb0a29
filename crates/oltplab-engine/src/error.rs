//! One error type for the engine. Every message says what went wrong and, where
//! the user can act, how to fix it; the binding maps each variant to one Python
//! exception class (and the CLI to an exit code).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum EngineError {
    /// Bad options or spec: the user must change the command line (exit code 2).
    #[error("{0}")]
    Config(String),
    /// The target cannot be reached or refused us before any load started (exit code 2).
    #[error("{0}")]
    Connect(String),
    /// The database is not in the state the workload needs, e.g. `run` before `prepare` (exit code 2).
    #[error("{0}")]
    NotPrepared(String),
    /// A database error that makes the run meaningless (exit code 1).
    #[error("{0}")]
    Driver(String),
    /// Ctrl-C before any load started, or during prepare (exit code 130).
    #[error("interrupted {0}")]
    Interrupted(String),
    /// A bug or an unexpected internal state (exit code 1).
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;

impl EngineError {
    pub fn config(msg: impl Into<String>) -> Self {
        Self::Config(msg.into())
    }
}

impl From<serde_json::Error> for EngineError {
    fn from(e: serde_json::Error) -> Self {
        Self::Config(format!("invalid spec JSON: {e}"))
    }
}
