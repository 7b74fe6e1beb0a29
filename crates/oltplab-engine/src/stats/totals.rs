//! Counts the recorders, the executor and the result share: the queries of one event, as
//! sysbench classifies them, and the events of one connection.

use crate::db::QueryClass;

/// Query counts of one event, failed attempts included (sysbench keeps those too).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
}

impl Tally {
    pub fn add(&mut self, class: QueryClass) {
        match class {
            QueryClass::Read => self.reads += 1,
            QueryClass::Write => self.writes += 1,
            QueryClass::Other => self.others += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.reads + self.writes + self.others
    }
}

/// What one connection did over the run: sysbench's "Threads fairness" inputs.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct WorkerTotals {
    pub events: u64,
    pub latency_sum_ns: u64,
}
