//! Measurement: bounded `HdrHistogram`s, sharded recorders merged at interval
//! boundaries, and latency summaries. Percentiles always come from merged
//! histograms, never from averaged percentiles.

mod clock;
mod histogram;
mod merge;
mod recorder;
mod summary;
mod totals;

pub use clock::{clock_ns, epoch_s, EventClock, Mono};
pub use histogram::{encode_base64, new_histogram, sysbench_buckets_ms, Histogram, HIGHEST_NS};
pub use merge::{merge_encoded, Decoder, Merged};
pub use recorder::{Counts, EventTiming, Recorders, Snapshot, LATE_NS};
pub use summary::LatencySummary;
pub use totals::{Tally, WorkerTotals};
