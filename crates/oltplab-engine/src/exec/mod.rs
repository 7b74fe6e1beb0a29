//! The executor: prepare, run and cleanup over a workload and a driver.

mod back_to_back;
mod client_cpu;
mod connect;
mod engine_threads;
mod huge_pages;
mod preflight;
mod prepare;
mod progress;
mod reporter;
mod run;
mod runtime;
mod schedule;
mod segments;
mod shared;
mod spec;
mod start;
mod steps;
mod stop;
mod thread_share;
mod ticks;
mod worker;

pub use prepare::{check, cleanup, prepare};
pub use progress::{LogLevel, Progress, Sink};
pub use run::{run, run_on_threads, run_resolved};
pub use runtime::{build_runtime, engine_threads, workers_for};
pub use spec::{LoadShape, Resolved, Spec};
pub use stop::Stop;
