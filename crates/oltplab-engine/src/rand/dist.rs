//! sysbench's `--rand-type` distributions over an inclusive `[a, b]` of `u32`.
//! The arithmetic mirrors `sb_rand.c` (1.0.20, plus master's zipfian) step by
//! step, including its `uint32_t` truncations, so a given stream of uniforms
//! yields the same ids sysbench would.

use super::Rng;
use crate::error::{EngineError, Result};
use crate::options::{OptDef, Options};

#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    Uniform,
    /// Mean of `iter` uniforms (Irwin-Hall), centred on the middle of the range.
    Gaussian {
        iter: u32,
    },
    /// sysbench 1.0.x's default: `res`% of draws hit `pct`% of the range around its middle.
    Special {
        iter: u32,
        pct: u32,
        res: u32,
    },
    /// Skewed towards low ids; `power` = ln h / ln(1 - h), precomputed.
    Pareto {
        h: f64,
        power: f64,
    },
    /// Rejection-inversion Zipf (Hoermann and Derflinger); `s` and `h_integral_x1` precomputed.
    Zipfian {
        exp: f64,
        s: f64,
        h_integral_x1: f64,
    },
}

/// The `--rand-*` options, with sysbench's names, defaults and help texts.
pub fn rand_defs() -> Vec<OptDef> {
    vec![
        OptDef::choice(
            "rand_type",
            "special",
            &["uniform", "gaussian", "special", "pareto", "zipfian"],
            "random numbers distribution {uniform,gaussian,special,pareto,zipfian}",
        ),
        OptDef::int("rand_spec_iter", 12, 1, 1000, "number of iterations used for numbers generation"),
        OptDef::int(
            "rand_spec_pct",
            1,
            0,
            100,
            "percentage of values to be treated as 'special' (for special distribution)",
        ),
        OptDef::int("rand_spec_res", 75, 0, 100, "percentage of 'special' values to use (for special distribution)"),
        OptDef::int(
            "rand_seed",
            0,
            0,
            i64::MAX,
            "seed for random number generator. When 0, the current time is used as a RNG seed.",
        ),
        OptDef::float("rand_pareto_h", 0.2, 0.0, 1.0, "parameter h for pareto distribution"),
        OptDef::float(
            "rand_zipfian_exp",
            0.8,
            0.0,
            1000.0,
            "shape parameter (exponent, theta) for the Zipfian distribution",
        ),
    ]
}

impl Distribution {
    /// The distribution `--rand-type` and its parameters select.
    pub fn from_options(opts: &Options) -> Result<Self> {
        let iter = opts.uint("rand_spec_iter") as u32;
        Ok(match opts.str("rand_type") {
            "uniform" => Self::Uniform,
            "gaussian" => Self::Gaussian { iter },
            "special" => {
                Self::Special { iter, pct: opts.uint("rand_spec_pct") as u32, res: opts.uint("rand_spec_res") as u32 }
            }
            "pareto" => {
                let h = opts.float("rand_pareto_h");
                if h <= 0.0 || h >= 1.0 {
                    return Err(EngineError::config(format!(
                        "--rand-pareto-h must be strictly between 0 and 1 (got {h}); the default is 0.2"
                    )));
                }
                Self::pareto(h)
            }
            "zipfian" => Self::zipfian(opts.float("rand_zipfian_exp")),
            other => return Err(EngineError::config(format!("unknown --rand-type '{other}'"))),
        })
    }

    pub fn pareto(h: f64) -> Self {
        Self::Pareto { h, power: h.ln() / (1.0 - h).ln() }
    }

    pub fn zipfian(exp: f64) -> Self {
        let s = 2.0 - h_integral_inverse(h_integral(2.5, exp) - h(2.0, exp), exp);
        Self::Zipfian { exp, s, h_integral_x1: h_integral(1.5, exp) - 1.0 }
    }

    /// One draw in `[a, b]` (sysbench's `sb_rand_default`).
    pub fn sample(&self, rng: &mut Rng, a: u32, b: u32) -> u32 {
        match *self {
            Self::Uniform => rng.uniform(a, b),
            Self::Gaussian { iter } => gaussian(rng, a, b, iter),
            Self::Special { iter, pct, res } => special(rng, a, b, iter, pct, res),
            Self::Pareto { power, .. } => {
                let width = f64::from(b.wrapping_sub(a).wrapping_add(1));
                a.wrapping_add((width * rng.uniform_f64().powf(power)) as u32)
            }
            Self::Zipfian { exp, s, h_integral_x1 } => {
                let n = b.wrapping_sub(a).wrapping_add(1);
                a.wrapping_add(zipf(rng, n, exp, s, h_integral_x1)).wrapping_sub(1)
            }
        }
    }
}

fn gaussian(rng: &mut Rng, a: u32, b: u32, iter: u32) -> u32 {
    let width = f64::from(b.wrapping_sub(a).wrapping_add(1));
    let mut sum = 0.0;
    for _ in 0..iter {
        sum += rng.uniform_f64() * width;
    }
    a.wrapping_add((sum * (1.0 / f64::from(iter))) as u32)
}

fn special(rng: &mut Rng, a: u32, b: u32, iter: u32, pct: u32, res_pct: u32) -> u32 {
    let t = f64::from(b.wrapping_sub(a));
    // Draws that land below t (100 - res percent of them) use the gaussian shape.
    let range_size = t * (100.0 / (100.0 - f64::from(res_pct)));
    let rnd = rng.uniform_f64();
    if rnd * range_size < t {
        let mut sum = 0.0;
        for _ in 0..iter {
            sum += rng.uniform_f64();
        }
        return (f64::from(a) + sum * t * (1.0 / f64::from(iter))) as u32;
    }
    // The others map the same uniform onto pct% of the range, centred on its middle.
    let d = t * (f64::from(pct) / 100.0);
    let res = rnd * (d + 1.0) + (t / 2.0 - t * (f64::from(pct) / 200.0));
    a.wrapping_add(res as u32)
}

/// A Zipf draw in `[1, n]`, probability proportional to `1 / k^exp`.
fn zipf(rng: &mut Rng, n: u32, exp: f64, shortcut: f64, h_integral_x1: f64) -> u32 {
    let h_integral_n = h_integral(f64::from(n) + 0.5, exp);
    loop {
        let hat = h_integral_n + rng.uniform_f64() * (h_integral_x1 - h_integral_n);
        let x = h_integral_inverse(hat, exp);
        // Clamp by hand: n can be 0 when the range wraps, where clamp() would panic.
        let k = ((x + 0.5) as u32).max(1).min(n.max(1));
        let kf = f64::from(k);
        // The first test is a cheap sufficient condition for the second (Theorem 2 of the paper).
        if kf - x <= shortcut || hat >= h_integral(kf + 0.5, exp) - h(kf, exp) {
            return k;
        }
    }
}

/// H(x), the integral of the hat h: (x^(1-e) - 1) / (1-e), or ln x when e = 1.
fn h_integral(x: f64, e: f64) -> f64 {
    let log_x = x.ln();
    exp_m1_over_x((1.0 - e) * log_x) * log_x
}

/// h(x) = x^-e.
fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

fn h_integral_inverse(x: f64, e: f64) -> f64 {
    // Rounding can push t just below -1, where ln(1 + t) is undefined.
    let t = (x * (1.0 - e)).max(-1.0);
    (ln_1p_over_x(t) * x).exp()
}

/// ln(1 + x) / x, by its Taylor series near 0.
fn ln_1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, by its Taylor series near 0.
fn exp_m1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAWS: usize = 200_000;

    /// Draws on [1, n] and returns per-id counts (index 0 unused).
    fn histogram(d: &Distribution, n: u32) -> Vec<u32> {
        let mut rng = Rng::seeded(2024);
        let mut counts = vec![0_u32; n as usize + 1];
        for _ in 0..DRAWS {
            let v = d.sample(&mut rng, 1, n);
            assert!((1..=n).contains(&v), "{v} out of [1, {n}] for {d:?}");
            counts[v as usize] += 1;
        }
        counts
    }

    fn share(counts: &[u32], ids: std::ops::RangeInclusive<usize>) -> f64 {
        f64::from(counts[ids].iter().sum::<u32>()) / DRAWS as f64
    }

    #[test]
    fn special_defaults_put_three_quarters_on_the_central_percent() {
        let d = Distribution::Special { iter: 12, pct: 1, res: 75 };
        let c = histogram(&d, 10_000);
        // The hot band is pct% of the range around the middle, about [4975, 5051], hit by u >= 0.25 only.
        let hot = share(&c, 4950..=5060);
        assert!((0.74..0.80).contains(&hot), "hot share {hot}");
        let distinct = c.iter().filter(|&&n| n > 0).count();
        assert!(distinct < 7_000, "distinct ids {distinct}");
    }

    #[test]
    fn uniform_is_flat() {
        let c = histogram(&Distribution::Uniform, 100);
        let (min, max) = (c[1..].iter().min().unwrap(), c[1..].iter().max().unwrap());
        assert!(*min > 1_800 && *max < 2_200, "{min}..{max}");
    }

    #[test]
    fn pareto_is_skewed_low() {
        let c = histogram(&Distribution::pareto(0.2), 10_000);
        let percentile_share = share(&c, 1..=100);
        let decile_share = share(&c, 1..=1000);
        assert!((0.50..0.56).contains(&percentile_share), "{percentile_share}");
        assert!((0.70..0.76).contains(&decile_share), "{decile_share}");
    }

    #[test]
    fn gaussian_is_centred_and_narrow() {
        let c = histogram(&Distribution::Gaussian { iter: 12 }, 10_000);
        let mean: f64 = c.iter().enumerate().map(|(i, &n)| i as f64 * f64::from(n)).sum::<f64>() / DRAWS as f64;
        assert!((mean - 5000.0).abs() < 30.0, "mean {mean}");
        // Irwin-Hall sd = n / sqrt(12 * 12) = n / 12: about 68% within one sd.
        let within = share(&c, 4167..=5833);
        assert!((0.64..0.72).contains(&within), "{within}");
    }

    #[test]
    fn zipfian_follows_rank_frequency() {
        let c = histogram(&Distribution::zipfian(0.8), 1000);
        // P(k) is proportional to k^-0.8, so count(1) / count(k) ~ k^0.8.
        for k in [2_usize, 4, 10] {
            let ratio = f64::from(c[1]) / f64::from(c[k]);
            let expect = (k as f64).powf(0.8);
            assert!((ratio / expect - 1.0).abs() < 0.08, "k={k}: {ratio} vs {expect}");
        }
        let norm: f64 = (1..=1000).map(|k| f64::from(k).powf(-0.8)).sum();
        let p1 = f64::from(c[1]) / DRAWS as f64;
        assert!((p1 * norm - 1.0).abs() < 0.05, "P(1) = {p1}, expected {}", 1.0 / norm);
        // exp = 1 takes the log branch of H; exp = 0 is uniform.
        let c = histogram(&Distribution::zipfian(1.0), 100);
        assert!(c[1] > 4 * c[10] && c[1] < 12 * c[10]);
        let c = histogram(&Distribution::zipfian(0.0), 10);
        assert!(c[1..].iter().all(|&n| (18_500..21_500).contains(&n)), "{c:?}");
    }

    #[test]
    fn seeded_streams_repeat_their_draws() {
        for d in [Distribution::Special { iter: 12, pct: 1, res: 75 }, Distribution::zipfian(0.8)] {
            let draw = |seed| {
                let mut r = Rng::seeded(seed);
                (0..100).map(|_| d.sample(&mut r, 1, 10_000)).collect::<Vec<_>>()
            };
            assert_eq!(draw(5), draw(5));
            assert_ne!(draw(5), draw(6));
        }
    }

    #[test]
    fn degenerate_ranges_do_not_panic() {
        let mut r = Rng::seeded(3);
        for d in [
            Distribution::Uniform,
            Distribution::Gaussian { iter: 12 },
            Distribution::Special { iter: 12, pct: 1, res: 75 },
            Distribution::Special { iter: 12, pct: 1, res: 100 },
            Distribution::pareto(0.2),
            Distribution::zipfian(0.8),
        ] {
            assert_eq!(d.sample(&mut r, 7, 7), 7, "{d:?}");
            let _ = d.sample(&mut r, 1, 0); // table_size = 0: wraps as in C
            let _ = d.sample(&mut r, 0, u32::MAX);
        }
    }
}
