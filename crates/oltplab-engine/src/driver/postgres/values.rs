//! Values across the wire: parameters go in text format, result columns come
//! back in binary format (tokio-postgres asks for binary results).

use std::error::Error;
use std::fmt::Write as _;

use bytes::BytesMut;
use tokio_postgres::types::{to_sql_checked, Format, FromSql, IsNull, ToSql, Type};
use tokio_postgres::Row;

use super::errors::CLIENT_ERROR;
use crate::db::{DbError, DbResult, Value};

/// Parameters are sent as text, as sysbench's `PQexecPrepared` sends them: the
/// server parses each with the input function of the type it inferred at prepare
/// time, so an `i64` binds to an INTEGER (int4) column, a string to CHAR(120), and
/// later workloads' NUMERIC or DATE columns need no client-side encoder.
impl ToSql for Value {
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match self {
            Value::Null => return Ok(IsNull::Yes),
            Value::Int(v) => write!(out, "{v}")?,
            Value::Text(s) => out.extend_from_slice(s.as_bytes()),
        }
        Ok(IsNull::No)
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    fn encode_format(&self, _ty: &Type) -> Format {
        Format::Text
    }

    to_sql_checked!();
}

/// A column's bytes as they came, whatever its type.
struct Raw<'a>(Option<&'a [u8]>);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(_ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Raw(Some(raw)))
    }

    fn from_sql_null(_ty: &Type) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Raw(None))
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }
}

/// A row as [`Value`]s: integers and booleans as `Int`, text, NUMERIC and floats as
/// `Text`, other types as their bytes in PostgreSQL's hex form (`\x...`).
pub fn row_values(row: &Row) -> DbResult<Vec<Value>> {
    row.columns()
        .iter()
        .enumerate()
        .map(|(i, column)| {
            let raw: Raw<'_> = row.try_get(i).map_err(|e| DbError::fatal(CLIENT_ERROR, super::errors::one_line(&e)))?;
            Ok(raw.0.map_or(Value::Null, |bytes| decode(column.type_().oid(), bytes)))
        })
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
        assert!(matches!(Value::Int(-42).to_sql(&Type::INT4, &mut out), Ok(IsNull::No)));
        assert_eq!(&out[..], b"-42");
        out.clear();
        assert!(matches!(Value::Text("x y".into()).to_sql(&Type::BPCHAR, &mut out), Ok(IsNull::No)));
        assert_eq!(&out[..], b"x y");
        assert!(matches!(Value::Null.to_sql(&Type::INT4, &mut out), Ok(IsNull::Yes)));
        assert!(matches!(Value::Int(1).encode_format(&Type::INT4), Format::Text));
    }
}
