//! A distributed run's merge: the clients' interval reports added into the run's intervals,
//! and the run's result assembled from the merged measured intervals, by the code a local run
//! reports and summarises itself with ([`IntervalReport::of`], [`RunResult::assemble`]), so
//! that a merged run cannot drift from a local one. Counts are added and histograms summed
//! exactly (never percentiles averaged); min, max and sum stay exact.

use serde::Deserialize;

use crate::error::{EngineError, Result};
use crate::exec::{LoadShape, Resolved, Spec};
use crate::options::Options;
use crate::result::{Gauges, IntervalReport, Phase, RunFacts, RunResult, StopReason, Summarising, Totals};
use crate::stats::{Decoder, Snapshot};
use crate::workload::Workload;

/// How the driver saw the run end, besides the clients' results.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunEnd {
    /// The common start and the last client's end, seconds since the epoch on the driver's clock.
    pub started_at: f64,
    pub ended_at: f64,
    /// Ctrl-C stopped the run.
    #[serde(default)]
    pub interrupted: bool,
    /// Clients that failed or were lost, said in one line; None when all of them finished.
    #[serde(default)]
    pub error: Option<String>,
    /// The driver's own flags (`client_lost`, `client_started_late`), after the clients'.
    #[serde(default)]
    pub flags: Vec<String>,
}

pub struct RunMerge {
    workload: Workload,
    options: Options,
    load: LoadShape,
    driver: &'static str,
    kinds: Vec<String>,
    how: Summarising,
    totals: Totals,
    /// One client's interval, decoded (reused, as the decoder's buffers).
    scratch: Snapshot,
    decoder: Decoder,
}

impl RunMerge {
    /// `spec`: the run as a whole (the total threads and rate, not a client's share).
    pub fn new(spec: &Spec) -> Result<Self> {
        let Resolved { workload, load, target, options } = spec.resolve()?;
        let kinds: Vec<String> = workload.kinds().iter().map(|k| (*k).to_string()).collect();
        Ok(Self {
            options,
            driver: target.driver_name(),
            how: load.summarising(),
            totals: Totals::new(kinds.len()),
            scratch: Snapshot::new(kinds.len()),
            decoder: Decoder::default(),
            kinds,
            workload,
            load,
        })
    }

    /// One interval of every client (the same interval of the common grid, so the same span):
    /// counts, gauges and histograms added. A measured one adds to the run's totals.
    pub fn interval(&mut self, reports: &[IntervalReport]) -> Result<IntervalReport> {
        let first =
            reports.first().ok_or_else(|| EngineError::config("an interval to merge needs a client's report"))?;
        let mut sum = Snapshot::new(self.kinds.len());
        let mut gauges = Gauges::default();
        let mut span = first.span();
        for r in reports {
            r.snapshot_into(&self.kinds, &mut self.scratch, &mut self.decoder).map_err(EngineError::Internal)?;
            sum.merge(&self.scratch);
            let g = r.gauges();
            gauges.threads_running += g.threads_running;
            gauges.backlog += g.backlog;
            gauges.in_flight += g.in_flight;
            gauges.dropped += g.dropped;
            // Percent of one core, over every client machine.
            gauges.client_cpu_pct += g.client_cpu_pct;
            span.t_s = span.t_s.max(r.t_s);
            span.interval_s = span.interval_s.max(r.interval_s);
        }
        let mut merged = IntervalReport::of(&sum, &self.kinds, &self.how, span, gauges);
        merged.clients = Some(reports.len());
        if span.phase == Phase::Run {
            self.totals.add(&sum, gauges.dropped, gauges.client_cpu_pct, span.interval_s);
        }
        Ok(merged)
    }

    /// The run's result: the merged measured intervals, with what the clients that finished
    /// (`clients`; a lost one has no result) and the driver (`end`) know of the run.
    pub fn finish(&self, clients: &[RunResult], end: RunEnd) -> RunResult {
        let first = clients.first();
        let duration_s = clients.iter().map(|r| r.facts.duration_s).fold(0.0, f64::max);
        let mut flags: Vec<String> = Vec::new();
        for flag in clients.iter().flat_map(|r| &r.facts.flags).chain(&end.flags) {
            if !flags.contains(flag) {
                flags.push(flag.clone());
            }
        }
        let facts = RunFacts {
            workload: self.workload.name().to_string(),
            options: self.options.clone(),
            driver: self.driver.to_string(),
            server_version: first.map(|r| r.facts.server_version.clone()).unwrap_or_default(),
            server_variables: first.map(|r| r.facts.server_variables.clone()).unwrap_or_default(),
            stop_reason: stop_reason(clients, &end),
            error: end.error,
            started_at: end.started_at,
            ended_at: end.ended_at,
            connect_s: clients.iter().map(|r| r.facts.connect_s).fold(0.0, f64::max),
            duration_s,
            interval_s: self.load.interval_s(),
            warmup_s: self.load.warmup_s,
            rate_per_s: self.load.rate_per_s,
            flags,
            // sysbench's fairness over every connection of every client.
            threads: clients.iter().flat_map(|r| r.facts.threads.iter().copied()).collect(),
            segments: None,
            tpcc: self.workload.summary(&self.totals.snap.kinds, duration_s),
        };
        RunResult::assemble(facts, &self.totals, &self.kinds, &self.how)
    }
}

/// Interrupted when Ctrl-C or any client says so; failed when a client failed or was lost;
/// otherwise ended by its events only when every client was.
fn stop_reason(clients: &[RunResult], end: &RunEnd) -> StopReason {
    let any = |reason: StopReason| clients.iter().any(|r| r.facts.stop_reason == reason);
    if end.interrupted || any(StopReason::Interrupted) {
        StopReason::Interrupted
    } else if end.error.is_some() || any(StopReason::Error) {
        StopReason::Error
    } else if !clients.is_empty() && clients.iter().all(|r| r.facts.stop_reason == StopReason::Events) {
        StopReason::Events
    } else {
        StopReason::Time
    }
}
