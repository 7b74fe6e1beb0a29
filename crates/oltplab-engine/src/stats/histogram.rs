//! The one histogram shape every recorder uses: nanoseconds, 3 significant
//! digits, 1 ns to 1 hour. Values above the top saturate and are counted.

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};

pub type Histogram = hdrhistogram::Histogram<u64>;

/// One hour: the longest latency recorded as itself; longer ones saturate to it.
pub const HIGHEST_NS: u64 = 3_600 * 1_000_000_000;

pub fn new_histogram() -> Histogram {
    Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("constant histogram bounds are valid")
}

/// V2 compressed encoding in base64: the `Interval_Compressed_Histogram` of an hlog line.
pub fn encode_base64(h: &Histogram) -> String {
    let mut bytes = Vec::with_capacity(1024);
    V2DeflateSerializer::new().serialize(h, &mut bytes).expect("serialising into a Vec cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// sysbench's `--histogram` rows: 1024 log-spaced buckets from 1 µs to 100 s,
/// each value rounded to its nearest bucket in log space; only non-empty buckets.
pub fn sysbench_buckets_ms(h: &Histogram) -> Vec<(f64, u64)> {
    const BUCKETS: usize = 1024;
    let low_ms: f64 = 1e-3;
    let mult = (BUCKETS - 1) as f64 / (1e5_f64 / low_ms).ln();
    let mut counts = vec![0u64; BUCKETS];
    for v in h.iter_recorded() {
        let ms = h.median_equivalent(v.value_iterated_to()) as f64 / 1e6;
        let i = if ms <= low_ms { 0.0 } else { ((ms.ln() - low_ms.ln()) * mult + 0.5).floor() };
        counts[(i as usize).min(BUCKETS - 1)] += v.count_at_value();
    }
    counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, &c)| ((i as f64 / mult + low_ms.ln()).exp(), c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Deserializer;

    #[test]
    fn encoding_round_trips() {
        let mut h = new_histogram();
        for v in [1_000u64, 25_000, 1_000_000, 2_000_000_000] {
            h.record(v).unwrap();
        }
        let bytes = base64::engine::general_purpose::STANDARD.decode(encode_base64(&h)).unwrap();
        let back: Histogram = Deserializer::new().deserialize(&mut bytes.as_slice()).unwrap();
        assert_eq!(back.len(), 4);
        assert_eq!(back.max(), h.max());
    }

    #[test]
    fn sysbench_buckets_keep_every_count_and_order() {
        let mut h = new_histogram();
        h.record_n(2_000_000, 10).unwrap(); // 2 ms
        h.record_n(50_000_000, 5).unwrap(); // 50 ms
        let rows = sysbench_buckets_ms(&h);
        assert_eq!(rows.iter().map(|r| r.1).sum::<u64>(), 15);
        assert_eq!(rows.len(), 2);
        assert!((rows[0].0 - 2.0).abs() / 2.0 < 0.01, "{rows:?}");
        assert!((rows[1].0 - 50.0).abs() / 50.0 < 0.01, "{rows:?}");
    }
}
