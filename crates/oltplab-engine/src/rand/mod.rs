//! Random numbers as sysbench 1.0.20 draws them: xoroshiro128+ per worker, the
//! `--rand-type` distributions, the `#`/`@` string templates and the lock-free
//! unique sequence. Formulas follow `sb_rand.c` so that the access patterns (hot
//! ids, distinct ids touched) match sysbench's; only the seeding differs: each
//! worker and each prepared table gets its own reproducible stream.

mod dist;
mod strings;
mod unique;

pub use dist::{rand_defs, Distribution};
pub use strings::{rand_string, rand_string_into, C_TEMPLATE, PAD_TEMPLATE};
pub use unique::UniqueSeq;

/// xoroshiro128+ (Blackman and Vigna), the generator sysbench keeps per thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 2],
}

/// One step of splitmix64: the recommended way to expand a 64-bit seed.
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator whose whole sequence is fixed by `seed`.
    pub fn seeded(seed: u64) -> Self {
        let mut sm = seed;
        let s0 = splitmix64(&mut sm);
        let s1 = splitmix64(&mut sm);
        // xoroshiro's all-zero state is a fixed point; splitmix64 cannot give two zeros in a row, but be explicit.
        if s0 == 0 && s1 == 0 {
            return Self { s: [0x9E37_79B9_7F4A_7C15, 1] };
        }
        Self { s: [s0, s1] }
    }

    /// Stream `stream` of run seed `seed` (one per worker, one per prepared table):
    /// reproducible, and unrelated to the other streams of the same seed.
    pub fn for_stream(seed: u64, stream: u64) -> Self {
        // Hash the seed first so that (seed, stream) and (seed + 1, stream') do not share splitmix64 sequences.
        let mut sm = seed;
        let base = splitmix64(&mut sm);
        let mut st = stream.wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03);
        Self::seeded(base ^ splitmix64(&mut st))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let [s0, mut s1] = self.s;
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s = [s0.rotate_left(55) ^ s1 ^ (s1 << 14), s1.rotate_left(36)];
        result
    }

    /// A double in [0, 1) from the top 52 bits, built exactly as `sb_rand_uniform_double()`.
    #[inline]
    pub fn uniform_f64(&mut self) -> f64 {
        f64::from_bits((0x3FF_u64 << 52) | (self.next_u64() >> 12)) - 1.0
    }

    /// sysbench's `sb_rand_uniform(a, b)`: `a + u * (b - a + 1)`, both ends inclusive
    /// (the width wraps as C's `uint32_t` does, so `b < a` never panics).
    #[inline]
    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        let width = b.wrapping_sub(a).wrapping_add(1);
        (f64::from(a) + self.uniform_f64() * f64::from(width)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let draw = |mut r: Rng| (0..4).map(|_| r.next_u64()).collect::<Vec<_>>();
        assert_eq!(draw(Rng::seeded(42)), draw(Rng::seeded(42)));
        assert_ne!(draw(Rng::seeded(42)), draw(Rng::seeded(43)));
        assert_eq!(draw(Rng::for_stream(7, 3)), draw(Rng::for_stream(7, 3)));
        let firsts: std::collections::HashSet<u64> = (0..1000).map(|s| Rng::for_stream(7, s).next_u64()).collect();
        assert_eq!(firsts.len(), 1000);
        assert_ne!(draw(Rng::for_stream(7, 1)), draw(Rng::for_stream(8, 1)));
    }

    #[test]
    fn xoroshiro_matches_the_reference_step() {
        // Reference values computed by hand from the published algorithm with s = {1, 2}.
        let mut r = Rng { s: [1, 2] };
        assert_eq!(r.next_u64(), 3);
        let s1 = 2_u64 ^ 1;
        assert_eq!(r.s, [1_u64.rotate_left(55) ^ s1 ^ (s1 << 14), s1.rotate_left(36)]);
    }

    #[test]
    fn uniform_is_inclusive_and_flat() {
        let mut r = Rng::seeded(1);
        let mut counts = [0_u32; 10];
        for _ in 0..100_000 {
            let f = r.uniform_f64();
            assert!((0.0..1.0).contains(&f));
            counts[(r.uniform(1, 10) - 1) as usize] += 1;
        }
        for c in counts {
            assert!((9_400..10_600).contains(&c), "{counts:?}");
        }
        // Degenerate and wrapping ranges do not panic.
        assert_eq!(r.uniform(5, 5), 5);
        let _ = r.uniform(1, 0);
        assert_eq!(r.uniform(0, u32::MAX), 0); // the width wraps to 0 as in C
    }
}
