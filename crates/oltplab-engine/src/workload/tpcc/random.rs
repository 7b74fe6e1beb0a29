//! The spec's random inputs (clauses 2.1.6 and 4.3.2): `NURand` with its C constants, the
//! syllable last names, a-strings and n-strings, zip codes, "ORIGINAL" data, money in cents.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::db::Value;
use crate::driver::push_int;
use crate::rand::Rng;

/// C for `C_LAST` at load time. A recorded constant (`HammerDB` does the same with 123), so every
/// load is alike and the run's C can be chosen against it (clause 2.1.6.1).
pub const C_LAST_LOAD: u32 = 157;

/// The run's three C constants, shared by all terminals of a run (clause 2.1.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CRun {
    pub c_last: u32,
    pub c_id: u32,
    pub ol_i_id: u32,
}

impl CRun {
    /// Draws the run's constants; `C_LAST`'s distance to [`C_LAST_LOAD`] is in 65..=119 and neither
    /// 96 nor 112 (2.1.6.1), so the run does not hit exactly the names the load laid out.
    pub fn draw(rng: &mut Rng) -> Self {
        let c_last = loop {
            let c = rng.uniform(0, 255);
            if c_last_delta_ok(c) {
                break c;
            }
        };
        Self { c_last, c_id: rng.uniform(0, 1023), ol_i_id: rng.uniform(0, 8191) }
    }
}

pub fn c_last_delta_ok(c_run: u32) -> bool {
    let delta = c_run.abs_diff(C_LAST_LOAD);
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// `NURand(A, x, y) = (((rand[0..A] | rand[x..y]) + C) mod (y - x + 1)) + x`.
pub fn nurand(rng: &mut Rng, a: u32, x: u32, y: u32, c: u32) -> u32 {
    (((rng.uniform(0, a) | rng.uniform(x, y)) + c) % (y - x + 1)) + x
}

const SYLLABLES: [&str; 10] = ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"];

/// `C_LAST` for a number 0..=999: one syllable per decimal digit (371 → PRICALLYOUGHT).
pub fn last_name(n: u32) -> String {
    let mut s = String::with_capacity(16);
    last_name_into(n, &mut s);
    s
}

pub fn last_name_into(n: u32, out: &mut String) {
    for digit in [n / 100, (n / 10) % 10, n % 10] {
        out.push_str(SYLLABLES[digit as usize]);
    }
}

// The load writes its strings straight into its rows: the generators below append to `out`.

const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// a-string[min..max]: random alphanumerics, length uniform in [min..max]. Loading writes about
/// 50 million of them for 10 warehouses, so each 64-bit draw gives up to ten characters (six
/// bits each; the two values past the 62 characters are skipped, which keeps them uniform).
pub fn astring(rng: &mut Rng, min: u32, max: u32, out: &mut String) {
    let mut left = rng.uniform(min, max) as usize;
    out.reserve(left);
    while left > 0 {
        let mut bits = rng.next_u64();
        for _ in 0..10 {
            let i = (bits & 63) as usize;
            bits >>= 6;
            if left == 0 {
                break;
            }
            if let Some(&c) = ALNUM.get(i) {
                out.push(char::from(c));
                left -= 1;
            }
        }
    }
}

/// n-string[min..max]: random digits.
pub fn nstring(rng: &mut Rng, min: u32, max: u32, out: &mut String) {
    let len = rng.uniform(min, max);
    out.extend((0..len).map(|_| char::from(b'0' + rng.uniform(0, 9) as u8)));
}

/// Four random digits and "11111" (4.3.2.7).
pub fn zip(rng: &mut Rng, out: &mut String) {
    nstring(rng, 4, 4, out);
    out.push_str("11111");
}

/// Two random letters.
pub fn state(rng: &mut Rng, out: &mut String) {
    out.extend((0..2).map(|_| char::from(b'A' + rng.uniform(0, 25) as u8)));
}

/// `I_DATA` / `S_DATA`: a-string[26..50], with "ORIGINAL" at a random place in 10% of rows.
pub fn data_with_original(rng: &mut Rng, out: &mut String) {
    let start = out.len();
    astring(rng, 26, 50, out);
    if rng.uniform(1, 10) == 1 {
        let at = start + rng.uniform(0, (out.len() - start) as u32 - 8) as usize;
        out.replace_range(at..at + 8, "ORIGINAL");
    }
}

/// Cents as an SQL decimal literal: -1000 → "-10.00".
pub fn money(cents: i64) -> String {
    let mut s = String::with_capacity(12);
    money_into(cents, &mut s);
    s
}

pub fn money_into(cents: i64, out: &mut String) {
    if cents < 0 {
        out.push('-');
    }
    push_int((cents / 100).abs(), out);
    out.push('.');
    push_digits((cents % 100).unsigned_abs(), 2, out);
}

pub fn money_value(cents: i64) -> Value {
    Value::Text(money(cents))
}

/// A fraction in ten-thousandths (tax, discount) as DECIMAL(4,4): 1234 → "0.1234".
pub fn rate(ten_thousandths: u32, out: &mut String) {
    out.push_str("0.");
    push_digits(ten_thousandths.into(), 4, out);
}

/// The last `width` decimal digits of `n`, zero-padded.
fn push_digits(n: u64, width: u32, out: &mut String) {
    for place in (0..width).rev() {
        out.push(char::from(b'0' + (n / 10u64.pow(place) % 10) as u8));
    }
}

/// A decimal column read back (MySQL and PostgreSQL send text, SQLite a float) as a number.
pub fn number(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Text(s) => s.trim().parse().unwrap_or(0.0),
        Value::Null => 0.0,
    }
}

pub fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::Text(s) => s.trim().parse::<f64>().map_or(0, |f| f as i64),
        Value::Null => 0,
    }
}

pub fn text(v: &Value) -> &str {
    match v {
        Value::Text(s) => s,
        _ => "",
    }
}

/// The current UTC time as `YYYY-MM-DD HH:MM:SS`, a literal every dialect's date-time takes.
pub fn now_timestamp() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", rem / 3600, (rem / 60) % 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_follow_the_syllables() {
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn run_c_keeps_its_distance_from_the_load_c() {
        let mut rng = Rng::seeded(7);
        for _ in 0..1000 {
            let c = CRun::draw(&mut rng);
            let delta = c.c_last.abs_diff(C_LAST_LOAD);
            assert!((65..=119).contains(&delta) && delta != 96 && delta != 112, "{delta}");
            assert!(c.c_id <= 1023 && c.ol_i_id <= 8191);
        }
    }

    /// The skew of clause 2.1.6 with a fixed C: the hottest 1% of `C_IDs` get about 22% of draws
    /// (reference/tpcc.md §1.3); a uniform draw would give 1%.
    #[test]
    fn nurand_is_skewed_as_the_spec_intends() {
        let mut rng = Rng::seeded(11);
        let mut hits = vec![0u32; 3001];
        let draws = 400_000;
        for _ in 0..draws {
            let v = nurand(&mut rng, 1023, 1, 3000, 259);
            assert!((1..=3000).contains(&v));
            hits[v as usize] += 1;
        }
        hits.sort_unstable_by(|a, b| b.cmp(a));
        let top_1pct: u32 = hits[..30].iter().sum();
        let share = f64::from(top_1pct) / f64::from(draws);
        assert!((0.17..0.28).contains(&share), "{share}");
    }

    #[test]
    fn money_and_rates_print_as_decimals() {
        assert_eq!(money(-1000), "-10.00");
        assert_eq!(money(5), "0.05");
        assert_eq!(money(30_000_000), "300000.00");
        assert_eq!(money(-5), "-0.05");
        assert_eq!(money(i64::MIN + 1), format!("-{}.07", (i64::MAX - 7) / 100));
        let mut r = String::from("x");
        rate(500, &mut r);
        assert_eq!(r, "x0.0500");
    }

    #[test]
    fn a_strings_have_their_lengths_and_every_character_equally_often() {
        let mut rng = Rng::seeded(5);
        let mut counts = [0u32; 128];
        let mut lengths = [0u32; 25];
        for _ in 0..20_000 {
            let mut s = String::new();
            astring(&mut rng, 14, 24, &mut s);
            lengths[s.len()] += 1;
            s.bytes().for_each(|b| counts[usize::from(b)] += 1);
        }
        assert!(lengths[..14].iter().all(|&n| n == 0) && lengths[14..].iter().all(|&n| n > 1500), "{lengths:?}");
        let total: u32 = counts.iter().sum();
        assert_eq!(ALNUM.iter().map(|&c| counts[usize::from(c)]).sum::<u32>(), total);
        // 62 characters, ~6,300 draws each: ±10% is over 7 standard deviations.
        let mean = f64::from(total) / 62.0;
        for &c in ALNUM {
            let n = f64::from(counts[usize::from(c)]);
            assert!((n / mean - 1.0).abs() < 0.1, "{}: {n} against {mean}", char::from(c));
        }
    }

    #[test]
    fn original_lands_in_a_tenth_of_the_rows() {
        let mut rng = Rng::seeded(3);
        let n = 20_000;
        let mut hits = 0;
        for _ in 0..n {
            // Written after other text, as into a row: only its own part is replaced.
            let mut s = String::from("ab");
            data_with_original(&mut rng, &mut s);
            assert!(s.starts_with("ab") && (28..=52).contains(&s.len()), "{s}");
            hits += usize::from(s.contains("ORIGINAL"));
        }
        assert!((1600..2400).contains(&hits), "{hits}");
    }

    #[test]
    fn timestamps_look_like_sql_date_times() {
        let t = now_timestamp();
        assert_eq!(t.len(), 19);
        assert!(t.starts_with("20"), "{t}");
    }
}
