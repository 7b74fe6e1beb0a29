//! Exact merging of encoded histograms (distributed runs): decode each client's V2
//! compressed histogram, check it has the one shape every recorder uses, and add the
//! counts. A histogram of another shape would be re-bucketed (lossy) or overflow, so it
//! is refused rather than merged approximately.

use base64::Engine as _;
use hdrhistogram::serialization::Deserializer;
use serde::Serialize;

use super::histogram::{encode_base64, new_histogram, Histogram, HIGHEST_NS};

/// The sum of several histograms, with what the driver reads from it.
#[derive(Debug, Clone, Serialize)]
pub struct Merged {
    /// V2 compressed, base64: the merged `Interval_Compressed_Histogram`.
    pub encoded: String,
    pub count: u64,
    /// 0 when empty.
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
    /// (rank in percent, value) for each rank asked for; 0 when empty.
    pub percentiles_ns: Vec<(f64, u64)>,
}

pub fn decode_base64(encoded: &str) -> Result<Histogram, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|e| format!("a histogram is not base64: {e}"))?;
    let h: Histogram = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("a histogram cannot be decoded: {e:?}"))?;
    let expected = new_histogram();
    if h.low() != expected.low() || h.high() != HIGHEST_NS || h.sigfig() != expected.sigfig() {
        return Err(format!(
            "a histogram has range {}..{} ns with {} digits, not 1..{HIGHEST_NS} ns with 3: \
             every client must run the same oltplab version",
            h.low(),
            h.high(),
            h.sigfig()
        ));
    }
    Ok(h)
}

/// Adds the histograms and reads `ranks` (percent) from the sum.
pub fn merge_encoded(encoded: &[String], ranks: &[f64]) -> Result<Merged, String> {
    let mut total = new_histogram();
    for e in encoded {
        let h = decode_base64(e)?;
        total.add(&h).map_err(|e| format!("cannot add a histogram: {e:?}"))?;
    }
    let empty = total.is_empty();
    Ok(Merged {
        encoded: encode_base64(&total),
        count: total.len(),
        min_ns: if empty { 0 } else { total.min() },
        max_ns: if empty { 0 } else { total.max() },
        mean_ns: if empty { 0.0 } else { total.mean() },
        percentiles_ns: ranks
            .iter()
            .map(|&r| (r, if empty { 0 } else { total.value_at_quantile(r / 100.0) }))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_merge_equals_one_histogram_of_every_value() {
        let (mut a, mut b, mut all) = (new_histogram(), new_histogram(), new_histogram());
        for v in 1..=1000u64 {
            let value = v * 12_345;
            if v % 3 == 0 { a.record(value) } else { b.record(value) }.unwrap();
            all.record(value).unwrap();
        }
        let merged = merge_encoded(&[encode_base64(&a), encode_base64(&b)], &[50.0, 99.0, 100.0]).unwrap();
        assert_eq!(merged.count, 1000);
        assert_eq!(merged.max_ns, all.max());
        assert_eq!(merged.percentiles_ns[0].1, all.value_at_quantile(0.5));
        assert_eq!(merged.percentiles_ns[1].1, all.value_at_quantile(0.99));
        assert_eq!(merged.encoded, encode_base64(&all));
    }

    #[test]
    fn another_shape_is_refused() {
        let mut other = Histogram::new_with_bounds(1000, HIGHEST_NS, 3).unwrap();
        other.record(5000).unwrap();
        let err = merge_encoded(&[encode_base64(&other)], &[]).unwrap_err();
        assert!(err.contains("same oltplab version"), "{err}");
        assert!(merge_encoded(&["not base64!".into()], &[]).is_err());
    }

    #[test]
    fn nothing_merges_into_an_empty_histogram() {
        let merged = merge_encoded(&[], &[99.0]).unwrap();
        assert_eq!((merged.count, merged.max_ns, merged.percentiles_ns[0].1), (0, 0, 0));
    }
}
