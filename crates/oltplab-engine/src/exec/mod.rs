//! The executor: prepare, run and cleanup over a workload and a driver.

mod client_cpu;
mod connect;
mod preflight;
mod prepare;
mod progress;
mod reporter;
mod run;
mod runtime;
mod schedule;
mod segments;
mod spec;
mod start;
mod steps;
mod stop;
mod ticks;
mod worker;

pub use prepare::{check, cleanup, prepare};
pub use progress::{Progress, Sink};
pub use run::run;
pub use runtime::{build_runtime, workers_for};
pub use spec::{LoadShape, Resolved, Spec};
pub use stop::Stop;
