//! Placeholder: being written (xoroshiro128+, sysbench distributions, string templates).
pub struct Rng;
