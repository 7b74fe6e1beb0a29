//! Rows as tab-separated text lines, the format both bulk loads read: PostgreSQL's
//! `COPY ... FROM STDIN` (text format) and MariaDB's `LOAD DATA` (its default field and line
//! format): `\N` for NULL, and a backslash escape for each byte that would end a column or a
//! line. A TPC-C load writes about a gigabyte of it, so the common cases take no detour through
//! `fmt`.

use bytes::BufMut;

use super::Value;

/// Appends `row` as one line.
pub fn encode_row(row: &[Value], out: &mut impl BufMut) {
    for (i, value) in row.iter().enumerate() {
        if i > 0 {
            out.put_u8(b'\t');
        }
        match value {
            Value::Null => out.put_slice(b"\\N"),
            Value::Int(n) => put_int(*n, out),
            Value::Text(s) => put_escaped(s, out),
        }
    }
    out.put_u8(b'\n');
}

fn put_int(n: i64, out: &mut impl BufMut) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        out.put_u8(b'-');
    }
    out.put_slice(&digits[at..]);
}

/// Backslash, tab, newline, carriage return and NUL take a backslash escape (PostgreSQL has
/// no NUL in text, and refuses `\0` as it would the byte).
fn put_escaped(s: &str, out: &mut impl BufMut) {
    // One cheap test per byte: every special byte is a backslash or at most '\r'.
    if !s.bytes().any(|b| b <= b'\r' || b == b'\\') {
        out.put_slice(s.as_bytes());
        return;
    }
    for b in s.bytes() {
        match b {
            b'\\' => out.put_slice(b"\\\\"),
            b'\t' => out.put_slice(b"\\t"),
            b'\n' => out.put_slice(b"\\n"),
            b'\r' => out.put_slice(b"\\r"),
            0 => out.put_slice(b"\\0"),
            other => out.put_u8(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(row: &[Value]) -> String {
        let mut out = Vec::new();
        encode_row(row, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn rows_are_tab_separated_lines() {
        assert_eq!(line(&[Value::Int(1), Value::Int(-2), Value::Text("abc-12".into())]), "1\t-2\tabc-12\n");
        assert_eq!(line(&[Value::Null, Value::Text(String::new())]), "\\N\t\n");
        assert_eq!(
            line(&[Value::Int(0), Value::Int(i64::MIN), Value::Int(i64::MAX)]),
            format!("0\t{}\t{}\n", i64::MIN, i64::MAX)
        );
    }

    #[test]
    fn specials_are_escaped() {
        assert_eq!(line(&[Value::Text("a\tb\nc\rd\\e'f\0".into())]), "a\\tb\\nc\\rd\\\\e'f\\0\n");
        // A literal backslash-N is text, not NULL; a lone `\.` is not the end marker.
        assert_eq!(line(&[Value::Text("\\N".into())]), "\\\\N\n");
        assert_eq!(line(&[Value::Text("\\.".into())]), "\\\\.\n");
        // Other control bytes pass as they are.
        assert_eq!(line(&[Value::Text("ünï\u{1}\u{b}".into())]), "ünï\u{1}\u{b}\n");
    }
}
