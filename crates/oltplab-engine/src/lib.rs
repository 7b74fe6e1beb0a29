//! oltplab's engine: drivers, sysbench-identical workloads, the closed-loop
//! executor and HdrHistogram recorders. Pure Rust: it knows nothing of Python.
//! One JSON spec goes in, progress events and one result document come out.

pub mod boxed;
pub mod catalog;
pub mod db;
pub mod driver;
pub mod error;
pub mod exec;
pub mod merge;
pub mod options;
pub mod panics;
pub mod rand;
pub mod result;
pub mod script;
pub mod stats;
pub mod workload;

pub use error::{EngineError, Result};

/// The engine's version, as recorded in run.json.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
