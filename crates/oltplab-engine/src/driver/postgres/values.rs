//! Values across the wire: parameters go in text format, result columns come back in
//! binary format (prepared statements) or text (simple queries), read from a `DataRow`'s body.

use std::fmt::Write as _;

use bytes::{BufMut, BytesMut};

use super::errors::CLIENT_ERROR;
use crate::db::{DbError, DbResult, Value};
use crate::driver::int_bytes;

/// Writes a parameter as text, as sysbench's `PQexecPrepared` sends it: the server parses each
/// with the input function of the type it inferred at prepare time, so an `i64` binds to an
/// INTEGER (int4) column, a string to CHAR(120), and NUMERIC or DATE columns need no
/// client-side encoder. Returns false for NULL (nothing written).
pub fn encode_param(v: &Value, out: &mut BytesMut) -> bool {
    match v {
        Value::Null => return false,
        Value::Int(n) => out.put_slice(int_bytes(*n, &mut [0; 20])),
        Value::Text(s) => out.put_slice(s.as_bytes()),
    }
    true
}

/// The columns of a `DataRow` body: `None` for NULL.
pub struct Columns<'a> {
    rest: &'a [u8],
    left: u16,
}

impl<'a> Columns<'a> {
    pub fn new(body: &'a [u8]) -> DbResult<Self> {
        let Some((count, rest)) = body.split_first_chunk::<2>() else { return Err(malformed()) };
        Ok(Self { rest, left: u16::from_be_bytes(*count) })
    }
}

impl<'a> Iterator for Columns<'a> {
    type Item = DbResult<Option<&'a [u8]>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let Some((len, rest)) = self.rest.split_first_chunk::<4>() else { return Some(Err(malformed())) };
        let len = i32::from_be_bytes(*len);
        let Ok(len) = usize::try_from(len) else {
            self.rest = rest;
            return Some(Ok(None));
        };
        if rest.len() < len {
            return Some(Err(malformed()));
        }
        let (value, rest) = rest.split_at(len);
        self.rest = rest;
        Some(Ok(Some(value)))
    }
}

fn malformed() -> DbError {
    DbError::fatal(CLIENT_ERROR, "malformed DataRow message from the server")
}

/// A row of a prepared statement (binary columns of types `type_oids`) as [`Value`]s: integers
/// and booleans as `Int`, text, NUMERIC and floats as `Text`, other types as their bytes in
/// PostgreSQL's hex form (`\x...`).
pub fn binary_row(body: &[u8], type_oids: &[u32]) -> DbResult<Vec<Value>> {
    Columns::new(body)?
        .zip(type_oids)
        .map(|(column, &oid)| Ok(column?.map_or(Value::Null, |bytes| decode(oid, bytes))))
        .collect()
}

/// A row of a simple query: every value is text.
pub fn text_row(body: &[u8]) -> DbResult<Vec<Value>> {
    Columns::new(body)?
        .map(|column| Ok(column?.map_or(Value::Null, |b| Value::Text(String::from_utf8_lossy(b).into_owned()))))
        .collect()
}

mod oid {
    pub const BOOL: u32 = 16;
    pub const CHAR: u32 = 18;
    pub const NAME: u32 = 19;
    pub const INT8: u32 = 20;
    pub const INT2: u32 = 21;
    pub const INT4: u32 = 23;
    pub const TEXT: u32 = 25;
    pub const OID: u32 = 26;
    pub const FLOAT4: u32 = 700;
    pub const FLOAT8: u32 = 701;
    pub const UNKNOWN: u32 = 705;
    pub const BPCHAR: u32 = 1042;
    pub const VARCHAR: u32 = 1043;
    pub const NUMERIC: u32 = 1700;
}

fn decode(type_oid: u32, b: &[u8]) -> Value {
    let fixed = |n: usize| b.len() == n;
    match type_oid {
        oid::INT2 if fixed(2) => Value::Int(i16::from_be_bytes([b[0], b[1]]).into()),
        oid::INT4 if fixed(4) => Value::Int(i32::from_be_bytes([b[0], b[1], b[2], b[3]]).into()),
        oid::OID if fixed(4) => Value::Int(u32::from_be_bytes([b[0], b[1], b[2], b[3]]).into()),
        oid::INT8 if fixed(8) => Value::Int(i64::from_be_bytes(b.try_into().unwrap_or_default())),
        oid::BOOL if fixed(1) => Value::Int(i64::from(b[0] != 0)),
        oid::FLOAT4 if fixed(4) => Value::Text(f32::from_be_bytes([b[0], b[1], b[2], b[3]]).to_string()),
        oid::FLOAT8 if fixed(8) => Value::Text(f64::from_be_bytes(b.try_into().unwrap_or_default()).to_string()),
        oid::NUMERIC => numeric_text(b).map_or_else(|| hex(b), Value::Text),
        oid::TEXT | oid::VARCHAR | oid::BPCHAR | oid::NAME | oid::CHAR | oid::UNKNOWN => {
            Value::Text(String::from_utf8_lossy(b).into_owned())
        }
        _ => hex(b),
    }
}

fn hex(b: &[u8]) -> Value {
    let mut s = String::with_capacity(2 + 2 * b.len());
    s.push_str("\\x");
    for byte in b {
        let _ = write!(s, "{byte:02x}");
    }
    Value::Text(s)
}

/// NUMERIC's binary form (ndigits, weight, sign, dscale, then base-10000 digits)
/// as the text PostgreSQL would print; None if malformed.
fn numeric_text(b: &[u8]) -> Option<String> {
    let word = |i: usize| -> Option<u16> { Some(u16::from_be_bytes([*b.get(2 * i)?, *b.get(2 * i + 1)?])) };
    let ndigits = usize::from(word(0)?);
    let weight = i32::from(i16::from_be_bytes(word(1)?.to_be_bytes()));
    let sign = word(2)?;
    let dscale = usize::from(word(3)?);
    match sign {
        0xC000 => return Some("NaN".into()),
        0xD000 => return Some("Infinity".into()),
        0xF000 => return Some("-Infinity".into()),
        _ => {}
    }
    let digits = (0..ndigits).map(|i| word(4 + i)).collect::<Option<Vec<u16>>>()?;
    // Base-10000 digit k stands for 10000^(weight - k).
    let digit = |k: i32| usize::try_from(k).ok().and_then(|k| digits.get(k)).copied().unwrap_or(0);
    let mut s = String::with_capacity(8 + 4 * ndigits + dscale);
    if sign == 0x4000 {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for k in 0..=weight {
            let _ = if k == 0 { write!(s, "{}", digit(k)) } else { write!(s, "{:04}", digit(k)) };
        }
    }
    if dscale > 0 {
        s.push('.');
        let start = s.len();
        let mut k = weight + 1;
        while s.len() - start < dscale {
            let _ = write!(s, "{:04}", digit(k));
            k += 1;
        }
        s.truncate(start + dscale);
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numeric(ndigits: u16, weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut b = Vec::new();
        for w in [ndigits, weight as u16, sign, dscale].iter().chain(digits) {
            b.extend_from_slice(&w.to_be_bytes());
        }
        b
    }

    #[test]
    fn numeric_binary_to_text() {
        assert_eq!(numeric_text(&numeric(0, 0, 0, 0, &[])).unwrap(), "0");
        assert_eq!(numeric_text(&numeric(0, 0, 0, 2, &[])).unwrap(), "0.00");
        assert_eq!(numeric_text(&numeric(2, 0, 0, 2, &[123, 4500])).unwrap(), "123.45");
        assert_eq!(numeric_text(&numeric(1, -1, 0x4000, 3, &[10])).unwrap(), "-0.001");
        assert_eq!(numeric_text(&numeric(1, 1, 0, 0, &[1])).unwrap(), "10000");
        assert_eq!(numeric_text(&numeric(3, 1, 0, 1, &[1234, 5678, 9000])).unwrap(), "12345678.9");
        assert_eq!(numeric_text(&numeric(1, -2, 0, 8, &[5])).unwrap(), "0.00000005");
        assert_eq!(numeric_text(&numeric(0, 0, 0xC000, 0, &[])).unwrap(), "NaN");
        assert_eq!(numeric_text(&[0, 2, 0]), None);
    }

    #[test]
    fn binary_columns_decode_by_type() {
        assert_eq!(decode(oid::INT4, &(-5i32).to_be_bytes()), Value::Int(-5));
        assert_eq!(decode(oid::INT8, &(1i64 << 40).to_be_bytes()), Value::Int(1 << 40));
        assert_eq!(decode(oid::INT2, &7i16.to_be_bytes()), Value::Int(7));
        assert_eq!(decode(oid::BOOL, &[1]), Value::Int(1));
        assert_eq!(decode(oid::BPCHAR, b"ab  "), Value::Text("ab  ".into()));
        assert_eq!(decode(oid::FLOAT8, &1.5f64.to_be_bytes()), Value::Text("1.5".into()));
        assert_eq!(decode(1184, &[0, 1, 0xff]), Value::Text("\\x0001ff".into()));
        // timestamptz
    }

    #[test]
    fn parameters_are_text() {
        let mut out = BytesMut::new();
        assert!(encode_param(&Value::Int(-42), &mut out));
        assert_eq!(&out[..], b"-42");
        out.clear();
        assert!(encode_param(&Value::Text("x y".into()), &mut out));
        assert_eq!(&out[..], b"x y");
        out.clear();
        assert!(!encode_param(&Value::Null, &mut out));
        assert!(out.is_empty());
    }

    #[test]
    fn data_rows_are_walked_in_place() {
        let mut body = vec![0, 3];
        body.extend_from_slice(&4i32.to_be_bytes());
        body.extend_from_slice(&7i32.to_be_bytes());
        body.extend_from_slice(&(-1i32).to_be_bytes());
        body.extend_from_slice(&2i32.to_be_bytes());
        body.extend_from_slice(b"ab");
        let row = binary_row(&body, &[oid::INT4, oid::INT4, oid::TEXT]).unwrap();
        assert_eq!(row, [Value::Int(7), Value::Null, Value::Text("ab".into())]);
        assert!(binary_row(&body[..body.len() - 1], &[oid::INT4, oid::INT4, oid::TEXT]).is_err());
        assert_eq!(text_row(&[0, 1, 0, 0, 0, 1, b'5']).unwrap(), [Value::Text("5".into())]);
    }
}
