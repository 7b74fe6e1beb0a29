//! Sharded recorders. Connections share a few shards (not one histogram each) so
//! that 10,000 connections cost a few MB. Each engine thread records into a lane of
//! its own (counts and a buffer of latencies under a lock no other thread takes but
//! the drain), which folds into its shard's histograms every few hundred latencies.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::histogram::{new_histogram, Histogram, HIGHEST_NS};
use super::totals::Tally;

/// Exact counters of an interval or a whole run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Counts {
    pub transactions: u64,
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    pub errors: u64,
    pub reconnects: u64,
    pub errors_by_code: BTreeMap<String, u64>,
    pub latency_sum_ns: u64,
    /// `u64::MAX` until the first transaction.
    pub latency_min_ns: u64,
    pub latency_max_ns: u64,
    /// Latencies above [`HIGHEST_NS`], recorded at the top value.
    pub saturated: u64,
    /// Open loop: how late transactions started after their intended start.
    pub lag_sum_ns: u64,
    pub lag_max_ns: u64,
    /// Open loop: transactions that started more than [`LATE_NS`] after their intended start.
    pub late: u64,
    /// Open loop: the part of the start lag that the client caused (the connection was free).
    pub client_lag_sum_ns: u64,
}

/// Lateness that counts as late: above the timer's own granularity (tokio's timer wakes a
/// sleeping connection up to about 2 ms after the time asked for).
pub const LATE_NS: u64 = 2_000_000;

/// The times of one completed event, in nanoseconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventTiming {
    /// From the intended start (open loop) or the actual start (closed loop) to the end.
    pub response_ns: u64,
    /// From the actual start to the end.
    pub service_ns: u64,
    /// Actual start minus intended start (0 in closed loop).
    pub lag_ns: u64,
    /// Actual start minus the later of the intended start and the moment the connection became
    /// free: lag that waiting for a busy connection (the server) does not explain.
    pub client_lag_ns: u64,
}

impl Counts {
    fn empty() -> Self {
        Self { latency_min_ns: u64::MAX, ..Self::default() }
    }

    pub fn merge(&mut self, o: &Counts) {
        self.transactions += o.transactions;
        self.reads += o.reads;
        self.writes += o.writes;
        self.others += o.others;
        self.errors += o.errors;
        self.reconnects += o.reconnects;
        for (code, n) in &o.errors_by_code {
            *self.errors_by_code.entry(code.clone()).or_default() += n;
        }
        self.latency_sum_ns += o.latency_sum_ns;
        self.latency_min_ns = self.latency_min_ns.min(o.latency_min_ns);
        self.latency_max_ns = self.latency_max_ns.max(o.latency_max_ns);
        self.saturated += o.saturated;
        self.lag_sum_ns += o.lag_sum_ns;
        self.lag_max_ns = self.lag_max_ns.max(o.lag_max_ns);
        self.late += o.late;
        self.client_lag_sum_ns += o.client_lag_sum_ns;
    }

    pub fn queries(&self) -> u64 {
        self.reads + self.writes + self.others
    }
}

/// What one shard (or all shards merged) recorded since the last drain.
pub struct Snapshot {
    /// Response time: from the intended start in open loop.
    pub transactions: Histogram,
    /// Service time: from the actual start.
    pub service: Histogram,
    pub kinds: Vec<Histogram>,
    pub counts: Counts,
}

impl Snapshot {
    pub fn new(kinds: usize) -> Self {
        Self {
            transactions: new_histogram(),
            service: new_histogram(),
            kinds: (0..kinds).map(|_| new_histogram()).collect(),
            counts: Counts::empty(),
        }
    }

    /// Adds `o` into `self`. Histograms of one shape always merge.
    pub fn merge(&mut self, o: &Snapshot) {
        let histograms = [&mut self.transactions, &mut self.service].into_iter().chain(&mut self.kinds);
        for (mine, theirs) in histograms.zip([&o.transactions, &o.service].into_iter().chain(&o.kinds)) {
            // Adding walks all 33,000 buckets (264 KB): skip the empty ones (statement kinds
            // the workload does not run, the service time in a closed loop, idle shards).
            if !theirs.is_empty() {
                mine.add(theirs).expect("same-shape histograms merge");
            }
        }
        self.counts.merge(&o.counts);
    }

    /// Histogram `i`: the transactions' (0), the service time's (1), statement kind `i - 2`'s.
    fn histogram(&mut self, i: usize) -> &mut Histogram {
        match i {
            0 => &mut self.transactions,
            1 => &mut self.service,
            _ => &mut self.kinds[i - 2],
        }
    }

    /// Empties the snapshot; an empty histogram is not written again.
    pub fn reset(&mut self) {
        let histograms = [&mut self.transactions, &mut self.service].into_iter().chain(&mut self.kinds);
        histograms.filter(|h| !h.is_empty()).for_each(Histogram::reset);
        self.counts = Counts::empty();
    }
}

/// How many latencies a lane buffers before it offers them to its shard's histograms.
const PENDING: usize = 256;

/// A latency for one of a snapshot's histograms ([`Snapshot::histogram`]).
#[derive(Clone, Copy)]
struct Pending {
    histogram: u32,
    ns: u64,
}

/// An engine thread's own part of the recorders: the counts and latencies its connections
/// recorded since they last went into the shard, and whether they count as measured (false
/// during warm-up), under a lock that only that thread and the drain take. The shard's lock,
/// shared by the threads of both cores, bounced its line between them twice per event: 23-25 %
/// of the client's user time at 8 point-select connections on an idle host
/// (docs/performance-engine.md, "One lane per engine thread"). Aligned so that two lanes never
/// share a cache line.
#[repr(align(128))]
struct Lane(Mutex<LaneState>);

struct LaneState {
    counts: Counts,
    /// Latencies not yet in the shard's histograms: a record into a 264-KB histogram is a likely
    /// cache miss (the kernel's network path evicts its lines between two events), an append to
    /// this buffer is not, and a batch of one workload's latencies folds into a few dozen lines,
    /// which the first records of the batch bring in for the rest.
    pending: Vec<Pending>,
    measuring: bool,
}

impl LaneState {
    fn record(&mut self, histogram: usize, ns: u64) {
        self.pending.push(Pending { histogram: histogram as u32, ns });
    }

    /// Moves everything recorded into `snap`: an event's counts and latencies always sit
    /// together, in the lane or in the shard.
    fn fold_into(&mut self, snap: &mut Snapshot) {
        for p in self.pending.drain(..) {
            snap.histogram(p.histogram as usize).saturating_record(p.ns);
        }
        snap.counts.merge(&self.counts);
        self.counts = Counts::empty();
    }
}

pub struct Recorders {
    lanes: Vec<Lane>,
    /// Lane `i` folds into shard `i % shards.len()`.
    shards: Vec<Mutex<Snapshot>>,
    kinds: usize,
    /// Whether the service time is recorded: in an open loop only. In a closed loop it is the
    /// response time, which nothing reads twice, and a histogram's record is a likely cache
    /// miss (docs/performance-engine.md, "User space per statement").
    service: bool,
}

impl Recorders {
    /// `shards` recorders, each recorded into by one lane.
    pub fn new(shards: usize, kinds: usize, measuring: bool) -> Self {
        Self::sharded(shards, shards, kinds, measuring)
    }

    /// `lanes` lanes (one per engine thread) over `shards` shards (one set of histograms each).
    pub fn sharded(lanes: usize, shards: usize, kinds: usize, measuring: bool) -> Self {
        let lane =
            || Lane(Mutex::new(LaneState { counts: Counts::empty(), pending: Vec::with_capacity(PENDING), measuring }));
        Self {
            lanes: (0..lanes.max(1)).map(|_| lane()).collect(),
            shards: (0..shards.max(1)).map(|_| Mutex::new(Snapshot::new(kinds))).collect(),
            kinds,
            service: true,
        }
    }

    /// The same, for a closed loop: the service time is not recorded.
    #[must_use]
    pub fn closed_loop(mut self) -> Self {
        self.service = false;
        self
    }

    /// The lane an engine thread's connections record into.
    pub fn lane_of(&self, thread: usize) -> usize {
        thread % self.lanes.len()
    }

    #[inline]
    fn lane(&self, lane: usize) -> std::sync::MutexGuard<'_, LaneState> {
        self.lanes[lane].0.lock().expect("recorder lock")
    }

    /// Records a completed event; returns whether it counts as measured (not warm-up).
    pub fn record_event(
        &self,
        lane: usize,
        timing: EventTiming,
        tally: Tally,
        stmt_latencies_ns: &[(usize, u64)],
    ) -> bool {
        let latency_ns = timing.response_ns;
        let mut guard = self.lane(lane);
        let c = &mut guard.counts;
        c.lag_sum_ns += timing.lag_ns;
        c.lag_max_ns = c.lag_max_ns.max(timing.lag_ns);
        c.late += u64::from(timing.lag_ns > LATE_NS);
        c.client_lag_sum_ns += timing.client_lag_ns;
        c.transactions += 1;
        c.reads += tally.reads;
        c.writes += tally.writes;
        c.others += tally.others;
        c.latency_sum_ns += latency_ns;
        c.latency_min_ns = c.latency_min_ns.min(latency_ns);
        c.latency_max_ns = c.latency_max_ns.max(latency_ns);
        if latency_ns > HIGHEST_NS {
            c.saturated += 1;
        }
        guard.record(0, latency_ns);
        if self.service {
            guard.record(1, timing.service_ns);
        }
        for &(kind, ns) in stmt_latencies_ns {
            guard.record(kind + 2, ns);
        }
        if guard.pending.len() >= PENDING {
            // Never waits for the shard while holding the lane (the drain takes the shard, then
            // the lanes): a shard busy with a drain or another lane's fold takes this lane's
            // events at its next fold.
            if let Ok(mut snap) = self.shards[lane % self.shards.len()].try_lock() {
                guard.fold_into(&mut snap);
            }
        }
        guard.measuring
    }

    /// Queries of an event that is abandoned (interrupted or fatal) still count, as in sysbench.
    pub fn record_queries(&self, lane: usize, tally: Tally) {
        let c = &mut self.lane(lane).counts;
        c.reads += tally.reads;
        c.writes += tally.writes;
        c.others += tally.others;
    }

    pub fn record_error(&self, lane: usize, code: &str, reconnect: bool) {
        let c = &mut self.lane(lane).counts;
        c.errors += 1;
        *c.errors_by_code.entry(code.to_owned()).or_default() += 1;
        if reconnect {
            c.reconnects += 1;
        }
    }

    /// Merges every shard into one snapshot and resets them: the interval boundary.
    /// With `start_measuring`, what comes after counts as measured (the warm-up ends here).
    pub fn drain(&self, start_measuring: bool) -> Snapshot {
        let mut out = Snapshot::new(self.kinds);
        self.drain_into(&mut out, start_measuring);
        out
    }

    /// [`drain`](Self::drain) into `out` (reset first): the reporter reuses one snapshot
    /// rather than allocating (and faulting in) 264 KB per histogram every interval. Each
    /// shard stays locked while its lanes fold into it, so no lane folds an event recorded
    /// after its drain into this one.
    pub fn drain_into(&self, out: &mut Snapshot, start_measuring: bool) {
        out.reset();
        for (i, shard) in self.shards.iter().enumerate() {
            let mut snap = shard.lock().expect("recorder lock");
            for lane in (i..self.lanes.len()).step_by(self.shards.len()) {
                let mut lane = self.lane(lane);
                lane.fold_into(&mut snap);
                lane.measuring |= start_measuring;
            }
            out.merge(&snap);
            snap.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_merges_shards_and_resets_them() {
        let r = Recorders::new(3, 2, true);
        let tally = Tally { reads: 2, writes: 1, others: 0 };
        for w in 0..6 {
            let ns = 1_000 * (w as u64 + 1);
            r.record_event(
                r.lane_of(w),
                EventTiming { response_ns: ns, service_ns: ns, lag_ns: 0, client_lag_ns: 0 },
                tally,
                &[(1, 500)],
            );
        }
        r.record_error(0, "SQLITE_BUSY", false);
        let s = r.drain(false);
        assert_eq!(s.counts.transactions, 6);
        assert_eq!(s.counts.reads, 12);
        assert_eq!(s.counts.latency_min_ns, 1_000);
        assert_eq!(s.counts.latency_max_ns, 6_000);
        assert_eq!(s.transactions.len(), 6);
        assert_eq!(s.kinds[1].len(), 6);
        assert_eq!(s.kinds[0].len(), 0);
        assert_eq!(s.counts.errors_by_code["SQLITE_BUSY"], 1);
        let again = r.drain(false);
        assert_eq!(again.counts.transactions, 0);
        assert_eq!(again.transactions.len(), 0);
    }

    #[test]
    fn buffered_latencies_reach_the_histograms_of_their_interval() {
        let r = Recorders::new(1, 1, true);
        let record = |n: u64| {
            for i in 0..n {
                let ns = 10_000 + i;
                let timing = EventTiming { response_ns: ns, service_ns: ns / 2, lag_ns: 0, client_lag_ns: 0 };
                r.record_event(0, timing, Tally::default(), &[(0, ns / 4)]);
            }
        };
        // More than a buffer's worth, then less: each drain holds exactly its interval's.
        record(PENDING as u64 + 44);
        let first = r.drain(false);
        assert_eq!((first.transactions.len(), first.service.len(), first.kinds[0].len()), (300, 300, 300));
        assert_eq!(first.transactions.max(), first.transactions.highest_equivalent(10_299));
        assert_eq!(first.kinds[0].min(), first.kinds[0].lowest_equivalent(2_500));
        record(7);
        let second = r.drain(false);
        assert_eq!((second.transactions.len(), second.kinds[0].len(), second.counts.transactions), (7, 7, 7));
        assert_eq!(r.drain(false).transactions.len(), 0);
    }

    #[test]
    fn lanes_fold_into_their_shard_and_a_busy_shard_leaves_them_whole() {
        let r = Recorders::sharded(3, 2, 1, true);
        let timing = EventTiming { response_ns: 7_000, service_ns: 7_000, lag_ns: 0, client_lag_ns: 0 };
        let tally = Tally { reads: 1, writes: 0, others: 0 };
        {
            // A drain (or another lane) holds lane 2's shard: its full buffer waits, with its counts.
            let _busy = r.shards[0].lock().unwrap();
            for _ in 0..PENDING + 10 {
                r.record_event(r.lane_of(2), timing, tally, &[(0, 3_000)]);
            }
            assert_eq!(r.lane(2).counts.transactions, PENDING as u64 + 10);
        }
        r.record_event(r.lane_of(4), timing, tally, &[]);
        r.record_error(r.lane_of(0), "1213", false);
        let s = r.drain(false);
        assert_eq!(
            (s.counts.transactions, s.counts.reads, s.counts.errors),
            (PENDING as u64 + 11, PENDING as u64 + 11, 1)
        );
        assert_eq!(
            (s.transactions.len(), s.service.len(), s.kinds[0].len()),
            (PENDING as u64 + 11, PENDING as u64 + 11, PENDING as u64 + 10)
        );
        let again = r.drain(false);
        assert_eq!((again.counts.transactions, again.transactions.len()), (0, 0));
    }

    #[test]
    fn a_closed_loop_records_no_service_time() {
        let timing = EventTiming { response_ns: 5_000, service_ns: 5_000, lag_ns: 0, client_lag_ns: 0 };
        let (open, closed) = (Recorders::new(1, 1, true), Recorders::new(1, 1, true).closed_loop());
        for r in [&open, &closed] {
            r.record_event(0, timing, Tally::default(), &[(0, 4_000)]);
        }
        let (open, closed) = (open.drain(false), closed.drain(false));
        assert_eq!((open.transactions.len(), open.service.len(), open.kinds[0].len()), (1, 1, 1));
        assert_eq!((closed.transactions.len(), closed.service.len(), closed.kinds[0].len()), (1, 0, 1));
        assert_eq!(closed.counts.latency_sum_ns, 5_000);
    }

    #[test]
    fn latencies_above_an_hour_saturate_and_are_counted() {
        let r = Recorders::new(1, 0, true);
        let ns = HIGHEST_NS * 2;
        r.record_event(
            0,
            EventTiming { response_ns: ns, service_ns: ns, lag_ns: 0, client_lag_ns: 0 },
            Tally::default(),
            &[],
        );
        let s = r.drain(false);
        assert_eq!(s.counts.saturated, 1);
        assert_eq!(s.transactions.len(), 1);
        assert_eq!(s.counts.latency_max_ns, HIGHEST_NS * 2);
    }
}
