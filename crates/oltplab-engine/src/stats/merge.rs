//! The one histogram addition: V2 encoded histograms (base64, DEFLATE compressed or not) added
//! exactly into a histogram of the one shape every recorder uses. Each payload's counts are
//! walked where they lie and only the non-zero ones added: no histogram is allocated per
//! addend, so summing a run's 600 interval histograms costs their varints, not 600 × 33,792
//! counters. A histogram of another shape would be re-bucketed (lossy) or overflow, so it is
//! refused rather than added approximately.

use std::io::Read as _;

use base64::Engine as _;
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

/// V2 cookies, without the bits (0xF0) that writers set differently (Rust's 0x1c849313).
const V2_COOKIE: u32 = 0x1c84_9303;
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9304;
const COOKIE_VARIANT_BITS: u32 = 0xf0;
/// cookie, payload length, normalizing index offset, significant digits, lowest, highest, ratio.
const HEADER_BYTES: usize = 40;
/// The one shape: 3 significant digits from 1 ns, so 2048 sub-buckets (half: 2^10) of 1 ns.
const SUB_BUCKET_HALF_MAGNITUDE: u32 = 10;
const SUB_BUCKET_HALF_COUNT: usize = 1 << SUB_BUCKET_HALF_MAGNITUDE;

/// Reused buffers: the base64-decoded bytes and the inflated payload.
#[derive(Default)]
pub struct Decoder {
    raw: Vec<u8>,
    payload: Vec<u8>,
}

impl Decoder {
    /// Adds the histogram `encoded` (base64 V2, as in an hlog line) to `into`.
    pub fn add(&mut self, encoded: &str, into: &mut Histogram) -> Result<(), String> {
        self.raw.clear();
        base64::engine::general_purpose::STANDARD
            .decode_vec(encoded.trim(), &mut self.raw)
            .map_err(|e| format!("a histogram is not base64: {e}"))?;
        let payload: &[u8] = match cookie(&self.raw) {
            Some(V2_DEFLATE_COOKIE) => {
                let length = be_u32(&self.raw, 4).unwrap_or(0) as usize;
                let compressed = self.raw.get(8..8 + length).ok_or("a compressed histogram is cut short")?;
                self.payload.clear();
                flate2::read::ZlibDecoder::new(compressed)
                    .read_to_end(&mut self.payload)
                    .map_err(|e| format!("a compressed histogram cannot be inflated: {e}"))?;
                &self.payload
            }
            Some(V2_COOKIE) => &self.raw,
            _ => return Err("a histogram is not in HdrHistogram's V2 encoding".into()),
        };
        add_payload(payload, into)
    }
}

fn cookie(b: &[u8]) -> Option<u32> {
    be_u32(b, 0).map(|c| c & !COOKIE_VARIANT_BITS)
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4).map(|s| u32::from_be_bytes(s.try_into().expect("4 bytes")))
}

fn be_u64(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at + 8).map(|s| u64::from_be_bytes(s.try_into().expect("8 bytes")))
}

/// Adds one V2 payload (header and counts) to `into`.
fn add_payload(p: &[u8], into: &mut Histogram) -> Result<(), String> {
    let (Some(V2_COOKIE), Some(length), Some(offset), Some(digits), Some(low), Some(high)) =
        (cookie(p), be_u32(p, 4), be_u32(p, 8), be_u32(p, 12), be_u64(p, 16), be_u64(p, 24))
    else {
        return Err("a histogram's payload is not HdrHistogram's V2 encoding".into());
    };
    if offset != 0 || digits != 3 || low != 1 || high != HIGHEST_NS {
        return Err(format!(
            "a histogram has range {low}..{high} ns with {digits} digits, not 1..{HIGHEST_NS} ns with 3: \
             every client must run the same oltplab version"
        ));
    }
    let counts = p.get(HEADER_BYTES..HEADER_BYTES + length as usize).ok_or("a histogram's counts are cut short")?;
    let (mut at, mut index) = (0, 0usize);
    while at < counts.len() {
        let n = zigzag(read_varint(counts, &mut at)?);
        if n < 0 {
            index += n.unsigned_abs() as usize; // a run of empty counts
            continue;
        }
        if n > 0 {
            into.record_n(value_of_index(index), n as u64)
                .map_err(|e| format!("a histogram's count is out of range: {e:?}"))?;
        }
        index += 1;
    }
    Ok(())
}

/// HdrHistogram's LEB128: up to 9 bytes, the ninth contributing all of its 8 bits.
fn read_varint(b: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for i in 0..9 {
        let byte = *b.get(*at).ok_or("a histogram's counts end inside a number")?;
        *at += 1;
        if i == 8 {
            return Ok(value | (u64::from(byte) << 56));
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            break;
        }
    }
    Ok(value)
}

/// `ZigZag`: 0, -1, 1, -2, ... are 0, 1, 2, 3, ... (the shift leaves 63 bits: no wrap).
#[allow(clippy::cast_possible_wrap)]
fn zigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// The lowest value counted at `index` in the one shape (HdrHistogram's `valueFromIndex`):
/// the first two half-buckets count single nanoseconds, each later half-bucket doubles.
fn value_of_index(index: usize) -> u64 {
    let half_bucket = index >> SUB_BUCKET_HALF_MAGNITUDE;
    let sub_bucket = (index & (SUB_BUCKET_HALF_COUNT - 1)) as u64;
    match half_bucket {
        0 => sub_bucket,
        n => (sub_bucket + SUB_BUCKET_HALF_COUNT as u64) << (n - 1),
    }
}

/// Adds the histograms and reads `ranks` (percent) from the sum.
pub fn merge_encoded(encoded: &[String], ranks: &[f64]) -> Result<Merged, String> {
    let mut total = new_histogram();
    let mut decoder = Decoder::default();
    for e in encoded {
        decoder.add(e, &mut total)?;
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
    use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

    fn decode_base64(encoded: &str) -> Result<Histogram, String> {
        let mut h = new_histogram();
        Decoder::default().add(encoded, &mut h)?;
        Ok(h)
    }

    fn spread(seed: u64) -> Histogram {
        let mut h = new_histogram();
        let mut x = seed;
        for _ in 0..2000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            // 1 ns .. about 1 h, log-spread, with repeats.
            let v = 1 + ((x >> 11) % (1 << ((x >> 3) % 42)));
            h.record_n(v.min(HIGHEST_NS), 1 + (x >> 60)).unwrap();
        }
        h
    }

    #[test]
    fn the_sum_equals_the_crates_decode_and_add() {
        let parts: Vec<Histogram> = (1..=5).map(spread).collect();
        let mut expected = new_histogram();
        for p in &parts {
            let bytes = base64::engine::general_purpose::STANDARD.decode(encode_base64(p)).unwrap();
            let back: Histogram = Deserializer::new().deserialize(&mut bytes.as_slice()).unwrap();
            expected.add(&back).unwrap();
        }
        let encoded: Vec<String> = parts.iter().map(encode_base64).collect();
        let mut total = new_histogram();
        let mut decoder = Decoder::default();
        for e in &encoded {
            decoder.add(e, &mut total).unwrap();
        }
        assert_eq!(total, expected);
        assert_eq!((total.min(), total.max(), total.len()), (expected.min(), expected.max(), expected.len()));
        // Plain V2, uncompressed, adds the same.
        let mut plain = Vec::new();
        V2Serializer::new().serialize(&parts[0], &mut plain).unwrap();
        let text = base64::engine::general_purpose::STANDARD.encode(plain);
        assert_eq!(decode_base64(&text).unwrap(), parts[0]);
    }

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
    fn another_shape_or_no_histogram_is_refused() {
        let mut other = Histogram::new_with_bounds(1000, HIGHEST_NS, 3).unwrap();
        other.record(5000).unwrap();
        let err = merge_encoded(&[encode_base64(&other)], &[]).unwrap_err();
        assert!(err.contains("same oltplab version"), "{err}");
        assert!(merge_encoded(&["not base64!".into()], &[]).is_err());
        let cut = &encode_base64(&spread(1))[..40];
        assert!(merge_encoded(&[cut.to_string()], &[]).is_err());
        assert!(merge_encoded(&[base64::engine::general_purpose::STANDARD.encode([0u8; 48])], &[]).is_err());
    }

    #[test]
    fn nothing_merges_into_an_empty_histogram() {
        let merged = merge_encoded(&[], &[99.0]).unwrap();
        assert_eq!((merged.count, merged.max_ns, merged.percentiles_ns[0].1), (0, 0, 0));
    }
}
