//! Rows as tab-separated text lines, the format both bulk loads read: PostgreSQL's
//! `COPY ... FROM STDIN` (text format) and MariaDB's `LOAD DATA` (its default field and line
//! format): `\N` for NULL, and a backslash escape for each byte that would end a column or a
//! line. A TPC-C load writes about a gigabyte of it, so a loader writes its fields straight
//! into [`TabRows`] (no `Value` per column) and the common cases take no detour through `fmt`.

use crate::db::Value;

/// Appends `n` in decimal, without a detour through `fmt`.
pub fn push_int(n: i64, out: &mut String) {
    out.extend(int_bytes(n, &mut [0; 20]).iter().map(|&d| char::from(d)));
}

/// `n` in decimal, written at the end of `buf` (20 bytes hold `i64::MIN`).
pub fn int_bytes(n: i64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

/// Rows of tab-separated text, written field by field.
#[derive(Debug, Default, Clone)]
pub struct TabRows {
    text: String,
    rows: usize,
    /// A field of the current row is written: the next one takes a tab before it.
    mid_row: bool,
}

impl TabRows {
    pub fn new() -> Self {
        Self::default()
    }

    /// Rows given as values, e.g. sysbench's tables.
    pub fn from_values(rows: &[Vec<Value>]) -> Self {
        let mut out = Self::new();
        for row in rows {
            for value in row {
                out.value(value);
            }
            out.end_row();
        }
        out
    }

    pub fn int(&mut self, n: i64) -> &mut Self {
        push_int(n, self.field());
        self
    }

    /// Backslash, tab, newline, carriage return and NUL take a backslash escape (PostgreSQL has
    /// no NUL in text, and refuses `\0` as it would the byte).
    pub fn text(&mut self, s: &str) -> &mut Self {
        let text = self.field();
        // One cheap test per byte: every special byte is a backslash or at most '\r'.
        if !s.bytes().any(|b| b <= b'\r' || b == b'\\') {
            text.push_str(s);
            return self;
        }
        for c in s.chars() {
            match c {
                '\\' => text.push_str("\\\\"),
                '\t' => text.push_str("\\t"),
                '\n' => text.push_str("\\n"),
                '\r' => text.push_str("\\r"),
                '\0' => text.push_str("\\0"),
                other => text.push(other),
            }
        }
        self
    }

    pub fn null(&mut self) -> &mut Self {
        self.field().push_str("\\N");
        self
    }

    pub fn value(&mut self, value: &Value) -> &mut Self {
        match value {
            Value::Null => self.null(),
            Value::Int(n) => self.int(*n),
            Value::Text(s) => self.text(s),
        }
    }

    /// A new field for the caller to write in place: it must add no byte that needs an escape
    /// (backslash, tab, newline, carriage return, NUL), as random letters and digits never do.
    pub fn plain(&mut self) -> &mut String {
        self.field()
    }

    pub fn end_row(&mut self) {
        self.text.push('\n');
        self.rows += 1;
        self.mid_row = false;
    }

    fn field(&mut self) -> &mut String {
        if std::mem::replace(&mut self.mid_row, true) {
            self.text.push('\t');
        }
        &mut self.text
    }

    /// Complete rows so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The text of the complete rows.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.rows = 0;
        self.mid_row = false;
    }

    /// The rows back as values (every field text, or NULL), for the loads that send SQL:
    /// SQLite's INSERTs, and MySQL's when the server refuses `LOAD DATA LOCAL`. The columns'
    /// types turn the text into numbers as they would a quoted literal.
    pub fn to_values(&self) -> Vec<Vec<Value>> {
        self.text.split_terminator('\n').map(|line| line.split('\t').map(unescape).collect()).collect()
    }
}

fn unescape(field: &str) -> Value {
    if field == "\\N" {
        return Value::Null;
    }
    if !field.contains('\\') {
        return Value::Text(field.to_owned());
    }
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    Value::Text(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(row: &[Value]) -> String {
        TabRows::from_values(&[row.to_vec()]).as_str().to_owned()
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

    #[test]
    fn fields_written_in_place_count_as_rows() {
        let mut rows = TabRows::new();
        rows.int(7).null();
        rows.plain().push_str("abc");
        rows.end_row();
        rows.text("x").end_row();
        assert_eq!((rows.as_str(), rows.rows()), ("7\t\\N\tabc\nx\n", 2));
        rows.clear();
        assert!(rows.is_empty() && rows.as_str().is_empty());
        rows.int(1).end_row();
        assert_eq!(rows.as_str(), "1\n");
    }

    #[test]
    fn values_come_back_as_text() {
        let sent = vec![
            vec![Value::Int(-3), Value::Null, Value::Text("a\tb\\N\n\r\0z".into())],
            vec![Value::Text(String::new()), Value::Text("\\N".into()), Value::Int(0)],
        ];
        let text = |v: &str| Value::Text(v.into());
        let back = TabRows::from_values(&sent).to_values();
        assert_eq!(
            back,
            vec![vec![text("-3"), Value::Null, text("a\tb\\N\n\r\0z")], vec![text(""), text("\\N"), text("0")]]
        );
    }
}
