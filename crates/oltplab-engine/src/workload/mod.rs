//! Placeholder: being written (the Workload enum over the OLTP family and bulk_insert).
mod ctx;
pub mod options;
pub use ctx::{EventCtx, Tally, WorkerInfo};
