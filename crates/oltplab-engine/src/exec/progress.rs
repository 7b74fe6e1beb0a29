//! Progress events the engine emits while it works: a few a second at most,
//! never one per query. The binding forwards them to Python as JSON.

use serde::Serialize;
use tokio::sync::mpsc;

use crate::result::IntervalReport;

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Progress {
    Message {
        text: String,
    },
    /// A script's own output (`print`, `io.write`): text to show as it is, newlines included.
    Output {
        text: String,
    },
    /// A script run's FATAL or WARNING line, without the prefix (the drop-in prints it on stderr).
    Log {
        level: LogLevel,
        text: String,
    },
    Rows {
        table: usize,
        done: u64,
        total: u64,
    },
    /// `planned_s`: warm-up plus measured time, 0 when only `--events` or Ctrl-C ends the run.
    Started {
        threads: usize,
        connect_s: f64,
        started_at: f64,
        planned_s: f64,
    },
    Interval(Box<IntervalReport>),
    /// A script created sysbench's SQL driver (`sysbench.sql.driver()`, once per Lua state):
    /// sysbench prints SQL statistics only then.
    #[serde(rename = "sql_driver")]
    SqlDriver,
}

/// How grave a [`Progress::Log`] line is: sysbench's `FATAL:` or `WARNING:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Fatal,
    Warning,
}

/// Where progress goes. Sending never blocks the load; a closed receiver is ignored.
#[derive(Clone)]
pub struct Sink(Option<mpsc::UnboundedSender<Progress>>);

impl Sink {
    pub fn new(tx: mpsc::UnboundedSender<Progress>) -> Self {
        Self(Some(tx))
    }

    /// A sink that drops everything (tests, library callers that do not care).
    pub fn none() -> Self {
        Self(None)
    }

    pub fn send(&self, p: Progress) {
        if let Some(tx) = &self.0 {
            let _ = tx.send(p);
        }
    }

    pub fn message(&self, text: impl Into<String>) {
        self.send(Progress::Message { text: text.into() });
    }
}
