//! `sysbench.rand.unique()`: distinct 32-bit values in a scrambled order, shared
//! by all workers without a lock. It permutes an atomic counter with quadratic
//! residues modulo a prime (Jeff Preshing's `RandomSequence` construction), so no
//! value repeats before 2^32 draws.

use std::sync::atomic::{AtomicU32, Ordering};

use super::splitmix64;

/// The largest prime below 2^32; the 5 values above it map to themselves.
const PRIME: u32 = 4_294_967_291;

#[derive(Debug)]
pub struct UniqueSeq {
    index: AtomicU32,
    offset: u32,
}

/// A bijection on u32: x^2 mod p for the lower half of [0, p), p - x^2 mod p above it.
fn permute(x: u32) -> u32 {
    if x >= PRIME {
        return x;
    }
    let residue = (u64::from(x) * u64::from(x) % u64::from(PRIME)) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

impl UniqueSeq {
    /// A sequence whose order is fixed by `seed` (sysbench seeds it with two `random()` values).
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let mixed = splitmix64(&mut sm);
        let (index, offset) = (mixed as u32, (mixed >> 32) as u32);
        Self {
            index: AtomicU32::new(permute(permute(index).wrapping_add(0x682f_0161))),
            offset: permute(permute(offset).wrapping_add(0x4679_0905)),
        }
    }

    /// The next value; safe to call from any number of workers at once.
    pub fn next(&self) -> u32 {
        let index = self.index.fetch_add(1, Ordering::Relaxed);
        permute(permute(index).wrapping_add(self.offset) ^ 0x5bf0_3635)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn permute_is_a_bijection_near_its_edges() {
        let edges = (0..50_000).chain(PRIME / 2 - 25_000..PRIME / 2 + 25_000).chain(PRIME - 50_000..=u32::MAX);
        let mut seen = HashSet::new();
        for x in edges {
            assert!(seen.insert(permute(x)), "collision at {x}");
        }
    }

    #[test]
    fn values_do_not_repeat_and_depend_on_the_seed() {
        let seq = UniqueSeq::new(1);
        let values: HashSet<u32> = (0..200_000).map(|_| seq.next()).collect();
        assert_eq!(values.len(), 200_000);
        let (a, b) = (UniqueSeq::new(1), UniqueSeq::new(2));
        let first_a: Vec<u32> = (0..5).map(|_| a.next()).collect();
        assert_ne!(first_a, (0..5).map(|_| b.next()).collect::<Vec<_>>());
        let again = UniqueSeq::new(1);
        assert_eq!(first_a, (0..5).map(|_| again.next()).collect::<Vec<_>>());
    }

    #[test]
    fn concurrent_draws_stay_unique() {
        let seq = std::sync::Arc::new(UniqueSeq::new(77));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let seq = seq.clone();
                std::thread::spawn(move || (0..20_000).map(|_| seq.next()).collect::<Vec<_>>())
            })
            .collect();
        let mut all = HashSet::new();
        for h in handles {
            for v in h.join().unwrap() {
                assert!(all.insert(v));
            }
        }
    }
}
