//! oltplab's engine: drivers, sysbench-identical workloads, the closed-loop
//! executor and HdrHistogram recorders. Pure Rust: it knows nothing of Python.
//! One JSON spec goes in, progress events and one result document come out.

pub mod driver;
pub mod error;
pub mod rand;
pub mod workload;

pub use error::{EngineError, Result};
