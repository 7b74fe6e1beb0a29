//! sysbench's `?` placeholders in PostgreSQL: numbered `$n` for server-side
//! prepared statements, or the values inlined as literals for `--db-ps-mode=disable`.
//! sysbench replaces every `?`, even one inside a string literal; oltplab leaves
//! literals, quoted identifiers and comments alone.

use std::fmt::Write as _;

use crate::db::Value;

/// A statement and the byte offsets of its placeholders, found once at prepare time
/// so that executing it never scans the text again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    sql: String,
    marks: Vec<usize>,
}

impl Template {
    pub fn parse(sql: &str) -> Self {
        Self { sql: sql.to_owned(), marks: placeholder_offsets(sql) }
    }

    /// The text with `$1..$n` for the server to prepare.
    pub fn numbered(&self) -> String {
        let mut out = String::with_capacity(self.sql.len() + 3 * self.marks.len());
        let mut from = 0;
        for (n, &at) in self.marks.iter().enumerate() {
            out.push_str(&self.sql[from..at]);
            let _ = write!(out, "${}", n + 1);
            from = at + 1;
        }
        out.push_str(&self.sql[from..]);
        out
    }

    /// Writes the text with `params` inlined as SQL literals (Value's Display, as
    /// sysbench's client-side emulation prints them) into `out`, which is cleared first.
    pub fn inline_into(&self, params: &[Value], out: &mut String) -> Result<(), String> {
        if params.len() != self.marks.len() {
            return Err(format!(
                "the statement has {} placeholders but {} values were bound: {}",
                self.marks.len(),
                params.len(),
                self.sql
            ));
        }
        out.clear();
        let mut from = 0;
        for (&at, value) in self.marks.iter().zip(params) {
            out.push_str(&self.sql[from..at]);
            let _ = write!(out, "{value}");
            from = at + 1;
        }
        out.push_str(&self.sql[from..]);
        Ok(())
    }
}

/// Offsets of the `?` outside string literals, quoted identifiers, dollar-quoted
/// strings and comments. `?` is ASCII, so every offset is a char boundary.
fn placeholder_offsets(sql: &str) -> Vec<usize> {
    let b = sql.as_bytes();
    let mut marks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        i = match b[i] {
            b'?' => {
                marks.push(i);
                i + 1
            }
            b'\'' => {
                // E'...' strings take backslash escapes; standard strings only double the quote.
                let escapes = i > 0 && matches!(b[i - 1], b'E' | b'e') && (i < 2 || !is_ident(b[i - 2]));
                skip_quoted(b, i + 1, b'\'', escapes)
            }
            b'"' => skip_quoted(b, i + 1, b'"', false),
            b'-' if b.get(i + 1) == Some(&b'-') => b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |n| i + n),
            b'/' if b.get(i + 1) == Some(&b'*') => skip_block_comment(b, i + 2),
            b'$' if i == 0 || !is_ident(b[i - 1]) => skip_dollar_quoted(b, i),
            _ => i + 1,
        };
    }
    marks
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// The offset after the closing quote (a doubled quote is part of the text).
fn skip_quoted(b: &[u8], mut i: usize, quote: u8, backslash_escapes: bool) -> usize {
    while i < b.len() {
        if backslash_escapes && b[i] == b'\\' {
            i += 2;
        } else if b[i] == quote {
            if b.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// PostgreSQL's block comments nest.
fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut depth = 1;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// `$tag$ ... $tag$`; a `$` that opens no tag (such as `$1`) is skipped alone.
fn skip_dollar_quoted(b: &[u8], start: usize) -> usize {
    let tag_len = b[start + 1..].iter().take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_').count();
    let close = start + 1 + tag_len;
    let opens_tag = b.get(close) == Some(&b'$') && b.get(start + 1).is_none_or(|c| !c.is_ascii_digit());
    if !opens_tag {
        return start + 1;
    }
    let tag = &b[start..=close];
    b[close + 1..].windows(tag.len()).position(|w| w == tag).map_or(b.len(), |n| close + 1 + n + tag.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(sql: &str) -> String {
        Template::parse(sql).numbered()
    }

    #[test]
    fn placeholders_are_numbered_in_order() {
        assert_eq!(
            numbered("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"),
            "SELECT c FROM sbtest1 WHERE id BETWEEN $1 AND $2"
        );
        assert_eq!(numbered("INSERT INTO t VALUES (?,?,?,?)"), "INSERT INTO t VALUES ($1,$2,$3,$4)");
        assert_eq!(numbered("BEGIN"), "BEGIN");
        assert_eq!(numbered("?"), "$1");
    }

    #[test]
    fn literals_identifiers_and_comments_keep_their_question_marks() {
        assert_eq!(numbered("SELECT '?', 'it''s ?', ? FROM t"), "SELECT '?', 'it''s ?', $1 FROM t");
        assert_eq!(numbered(r"SELECT E'\'?', ?"), r"SELECT E'\'?', $1");
        // Outside an E string a backslash is an ordinary character.
        assert_eq!(numbered(r"SELECT '\', ?"), r"SELECT '\', $1");
        assert_eq!(numbered(r#"SELECT "a?b" FROM t WHERE x=?"#), r#"SELECT "a?b" FROM t WHERE x=$1"#);
        assert_eq!(numbered("SELECT ? -- why?\n, ?"), "SELECT $1 -- why?\n, $2");
        assert_eq!(numbered("SELECT /* a /* nested? */ b? */ ?"), "SELECT /* a /* nested? */ b? */ $1");
        assert_eq!(numbered("SELECT $$?$$, $x$ ? $x$, ?"), "SELECT $$?$$, $x$ ? $x$, $1");
        // `$` inside an identifier, and `$1`, open no dollar quote.
        assert_eq!(numbered("SELECT a$b$c, ?"), "SELECT a$b$c, $1");
        assert_eq!(numbered("SELECT $1 $ ?"), "SELECT $1 $ $1");
        assert_eq!(numbered("SELECT 'unterminated ?"), "SELECT 'unterminated ?");
    }

    #[test]
    fn inlining_renders_values_as_sysbench_does() {
        let t = Template::parse("UPDATE sbtest1 SET c=? WHERE id=? AND x IS ?");
        let mut out = String::from("left over");
        t.inline_into(&[Value::Text("a-b".into()), Value::Int(-7), Value::Null], &mut out).unwrap();
        assert_eq!(out, "UPDATE sbtest1 SET c='a-b' WHERE id=-7 AND x IS NULL");
        let e = t.inline_into(&[Value::Int(1)], &mut out).unwrap_err();
        assert!(e.contains("3 placeholders but 1 values"), "{e}");
    }

    #[test]
    fn multibyte_text_around_placeholders() {
        assert_eq!(numbered("SELECT 'é?' , ? -- ü"), "SELECT 'é?' , $1 -- ü");
    }
}
