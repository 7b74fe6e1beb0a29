//! A command's reply walked one packet at a time, sans I/O: [`Reply::walk`] takes the next
//! packet's payload and says whether the reply needs more packets, wants a file (`LOAD DATA
//! LOCAL INFILE`) or is done, with its first result's counts. The session feeds it packets
//! already in the read buffer, or read by the thread's sole connection in `recv(2)`, in a plain
//! loop, and awaits the socket only when neither has one: a statement on a sole connection is
//! walked without a future per packet (docs/performance-engine.md, "A statement's reply walked
//! in place"). Rows are counted in place and decoded only for a caller that keeps them.

use std::sync::Arc;

use mysql_common::io::ParseBuf;
use mysql_common::packets::Column;

use super::errors::Error;
use super::result::decode_row;
use crate::db::Value;

/// `SERVER_MORE_RESULTS_EXISTS`: another result follows this one.
const MORE_RESULTS: u16 = 0x0008;
/// A packet this long continues in the next: a row that starts with 0xFE is not an end then.
const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// What a statement returned, apart from the rows kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Done {
    /// It returned a result set (its first result did).
    pub result_set: bool,
    /// Rows of the first result set, and its columns.
    pub rows: u64,
    pub columns: u64,
    /// Rows changed, and warnings, from the first result's OK packet.
    pub affected: u64,
    pub warnings: u16,
}

/// What the reply needs after a packet.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    More,
    /// The server asks for the `LOAD DATA LOCAL INFILE` file; its answer follows it.
    Infile,
    Done(Done),
}

impl Step {
    /// The step that ends a walk of packets: any but [`Step::More`].
    pub fn end(self) -> Option<Step> {
        (self != Step::More).then_some(self)
    }
}

/// Where a reply's walk is.
enum At {
    /// A result's first packet: OK, ERR, a file request or a column count.
    Result,
    /// Column definitions still to come; `resent`: an execution's, sent again (they changed).
    Columns {
        left: u64,
        resent: bool,
    },
    /// The EOF packet after the columns (without `CLIENT_DEPRECATE_EOF`).
    ColumnsEnd,
    Rows,
}

pub struct Reply {
    /// Rows in the binary protocol (after `COM_STMT_EXECUTE`), else in text.
    binary: bool,
    deprecate_eof: bool,
    /// `MARIADB_CLIENT_CACHE_METADATA`: a column count is followed by whether the definitions
    /// follow (metadata.rs).
    cache_metadata: bool,
    /// The statement's columns as last sent, for rows kept when the server does not send them again.
    cached_defs: Option<Arc<[Column]>>,
    /// Definitions an execution's first result sent again (`At::Columns`' `resent`): read, kept
    /// or not, and handed back ([`Reply::resent_defs`]) for the statement's next executions.
    resent_defs: Option<Arc<[Column]>>,
    at: At,
    /// The result set being read.
    current: Done,
    first: Option<Done>,
    /// The first result's column definitions, only when its rows are kept.
    defs: Vec<Column>,
    kept_defs: Option<Arc<[Column]>>,
}

impl Reply {
    pub fn new(binary: bool, deprecate_eof: bool) -> Self {
        Self {
            binary,
            deprecate_eof,
            cache_metadata: false,
            cached_defs: None,
            resent_defs: None,
            at: At::Result,
            current: Done::default(),
            first: None,
            defs: Vec::new(),
            kept_defs: None,
        }
    }

    /// A reply on a connection with `MARIADB_CLIENT_CACHE_METADATA`; `cached`, the statement's
    /// columns for rows kept without definitions (only a caller that keeps rows needs them).
    pub fn caching_metadata(mut self, cached: Option<Arc<[Column]>>) -> Self {
        self.cache_metadata = true;
        self.cached_defs = cached;
        self
    }

    /// The column definitions an execution sent again (its statement's result changed since it
    /// last sent them).
    pub fn resent_defs(&mut self) -> Option<Arc<[Column]>> {
        self.resent_defs.take()
    }

    /// Walks the reply's next packet; the first result's rows are decoded into `keep` when given.
    /// Inlined where it is called, once per packet: out of line, a 100-row range's walk cost
    /// twice the instructions (docs/performance-engine.md, "A statement without a future").
    #[allow(clippy::inline_always)] // measured: see above
    #[inline(always)]
    pub fn walk(&mut self, packet: &[u8], keep: Option<&mut Vec<Vec<Value>>>) -> Result<Step, Error> {
        let keep = keep.filter(|_| self.first.is_none());
        match self.at {
            At::Result => match packet.first() {
                Some(0x00) => {
                    let ok = OkPacket::parse(&packet[1..])?;
                    Ok(self.end(Done { affected: ok.affected, warnings: ok.warnings, ..Done::default() }, ok.status))
                }
                Some(0xFF) => Err(server_error(packet)),
                Some(0xFB) => Ok(Step::Infile),
                _ => {
                    let mut buf = ParseBuf(packet);
                    let columns = buf
                        .checked_eat_lenenc_int()
                        .ok_or_else(|| Error::Protocol("a result without a column count".into()))?;
                    let defs_follow = !self.cache_metadata || buf.checked_eat_u8() != Some(0);
                    // Only an execution's own result is cached: a procedure's results always
                    // carry their definitions.
                    let resent = self.cache_metadata && self.binary && defs_follow && self.first.is_none();
                    self.current = Done { result_set: true, columns, ..Done::default() };
                    self.at = At::Columns { left: if defs_follow { columns } else { 0 }, resent };
                    self.columns_read(keep.is_some() && defs_follow);
                    if !defs_follow && keep.is_some() {
                        let cached = self.cached_defs.clone().ok_or_else(|| {
                            Error::Protocol("rows without column definitions, and none kept from the prepare".into())
                        })?;
                        self.kept_defs = Some(cached);
                    }
                    Ok(Step::More)
                }
            },
            At::Columns { left, resent } => {
                if keep.is_some() || resent {
                    let def =
                        ParseBuf(packet).parse::<Column>(()).map_err(|e| bad_packet("a column definition", &e))?;
                    self.defs.push(def);
                }
                self.at = At::Columns { left: left - 1, resent };
                self.columns_read(keep.is_some());
                Ok(Step::More)
            }
            At::ColumnsEnd => {
                self.at = At::Rows;
                Ok(Step::More)
            }
            At::Rows => match packet.first() {
                // The end: an OK packet with an EOF header, or an EOF packet (a text row can only
                // start with 0xFE when it is 16 MiB or larger).
                Some(0xFE) if packet.len() < MAX_PAYLOAD => {
                    let status = if self.deprecate_eof {
                        OkPacket::parse(&packet[1..])?.status
                    } else {
                        packet.get(3..5).map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
                    };
                    Ok(self.end(self.current, status))
                }
                Some(0xFF) => Err(server_error(packet)),
                _ => {
                    self.current.rows += 1;
                    if let (Some(rows), Some(defs)) = (keep, &self.kept_defs) {
                        rows.push(decode_row(packet, defs, self.binary)?);
                    }
                    Ok(Step::More)
                }
            },
        }
    }

    /// After a column definition (or the count, for none): on to the rows once all are read,
    /// with the definitions shared by the rows kept (only those need them, and this allocation).
    fn columns_read(&mut self, keeping: bool) {
        if let At::Columns { left: 0, resent } = self.at {
            self.at = if self.deprecate_eof { At::Rows } else { At::ColumnsEnd };
            if keeping || resent {
                let defs: Arc<[Column]> = std::mem::take(&mut self.defs).into();
                if resent {
                    self.resent_defs = Some(Arc::clone(&defs));
                }
                if keeping {
                    self.kept_defs = Some(defs);
                }
            }
        }
    }

    /// A result ended with `status`: the reply is done unless another result follows.
    fn end(&mut self, done: Done, status: u16) -> Step {
        let first = *self.first.get_or_insert(done);
        if status & MORE_RESULTS == 0 {
            return Step::Done(first);
        }
        self.at = At::Result;
        Step::More
    }
}

/// The parts of an OK packet (after its header byte) that a benchmark reads.
pub struct OkPacket {
    pub affected: u64,
    pub status: u16,
    pub warnings: u16,
}

impl OkPacket {
    pub fn parse(body: &[u8]) -> Result<Self, Error> {
        let mut buf = ParseBuf(body);
        let parsed = (|| {
            let affected = buf.checked_eat_lenenc_int()?;
            buf.checked_eat_lenenc_int()?; // last insert id
            Some(OkPacket { affected, status: buf.checked_eat_u16_le()?, warnings: buf.checked_eat_u16_le()? })
        })();
        parsed.ok_or_else(|| Error::Protocol("a short OK packet".into()))
    }
}

/// An ERR packet: its code, SQL state (`#` and five characters, when present) and message.
pub fn server_error(packet: &[u8]) -> Error {
    let code = packet.get(1..3).map_or(0, |c| u16::from_le_bytes([c[0], c[1]]));
    let mut message = packet.get(3..).unwrap_or_default();
    let mut state = String::new();
    if message.first() == Some(&b'#') && message.len() >= 6 {
        state = String::from_utf8_lossy(&message[1..6]).into_owned();
        message = &message[6..];
    }
    Error::Server { code, state, message: String::from_utf8_lossy(message).into_owned() }
}

fn bad_packet(what: &str, e: &std::io::Error) -> Error {
    Error::Protocol(format!("cannot read {what}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::super::metadata::tests::column;
    use super::super::metadata::ColumnDefs;
    use super::*;

    /// Walks `packets` as one reply; the step after each.
    fn walk_all(reply: &mut Reply, packets: &[&[u8]], mut keep: Option<&mut Vec<Vec<Value>>>) -> Vec<Step> {
        packets.iter().map(|p| reply.walk(p, keep.as_deref_mut()).unwrap()).collect()
    }

    #[test]
    fn errors_and_ok_packets_are_read_as_the_protocol_writes_them() {
        let Error::Server { code, state, message } = server_error(b"\xff\x15\x04#28000Access denied") else { panic!() };
        assert_eq!((code, state.as_str(), message.as_str()), (1045, "28000", "Access denied"));
        let Error::Server { code, state, message } = server_error(b"\xff\x10\x04Too many connections") else {
            panic!()
        };
        assert_eq!((code, state.as_str(), message.as_str()), (1040, "", "Too many connections"));
        let ok = OkPacket::parse(b"\x03\x00\x02\x00\x01\x00").unwrap();
        assert_eq!((ok.affected, ok.status, ok.warnings), (3, 2, 1));
        assert!(OkPacket::parse(b"\x03").is_err());
    }

    #[test]
    fn a_point_select_is_counted_without_its_row_and_with_it_when_kept() {
        let col = column("c");
        // Binary row: header, NULL bitmap, an INT value of 7.
        let row: &[u8] = b"\x00\x00\x07\x00\x00\x00";
        let end: &[u8] = b"\xfe\x00\x00\x02\x00\x00\x00";
        let packets: [&[u8]; 4] = [b"\x01", &col, row, end];
        let mut reply = Reply::new(true, true);
        let steps = walk_all(&mut reply, &packets, None);
        let done = Done { result_set: true, rows: 1, columns: 1, ..Done::default() };
        assert_eq!(steps, [Step::More, Step::More, Step::More, Step::Done(done)]);

        let mut rows = Vec::new();
        let mut reply = Reply::new(true, true);
        assert_eq!(walk_all(&mut reply, &packets, Some(&mut rows)).pop(), Some(Step::Done(done)));
        assert_eq!(rows, [vec![Value::Int(7)]]);
    }

    #[test]
    fn without_deprecate_eof_an_eof_packet_ends_the_columns_and_the_rows() {
        let col = column("id");
        let eof: &[u8] = b"\xfe\x00\x00\x02\x00";
        let packets: [&[u8]; 6] = [b"\x01", &col, eof, b"\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00", b"\x00\x00", eof];
        let mut reply = Reply::new(true, false);
        let steps = walk_all(&mut reply, &packets, None);
        assert_eq!(steps.last(), Some(&Step::Done(Done { result_set: true, rows: 2, columns: 1, ..Done::default() })));
        assert!(steps[..5].iter().all(|s| *s == Step::More));
    }

    #[test]
    fn the_first_of_several_results_is_the_one_returned_and_an_error_ends_the_walk() {
        // An UPDATE's OK (3 rows, more results, 1 warning), then a result set.
        let col = column("k");
        let packets: [&[u8]; 5] = [
            b"\x00\x03\x00\x08\x00\x01\x00",
            b"\x01",
            &col,
            b"\x00\x00\x05\x00\x00\x00",
            b"\xfe\x00\x00\x02\x00\x00\x00",
        ];
        let mut rows = Vec::new();
        let mut reply = Reply::new(true, true);
        let steps = walk_all(&mut reply, &packets, Some(&mut rows));
        assert_eq!(steps.last(), Some(&Step::Done(Done { affected: 3, warnings: 1, ..Done::default() })));
        assert!(rows.is_empty(), "only the first result's rows are kept");

        let mut reply = Reply::new(false, true);
        assert_eq!(reply.walk(b"\xfb/tmp/x.csv", None).unwrap(), Step::Infile);
        let Err(Error::Server { code, .. }) = reply.walk(b"\xff\x7a\x04#42000nope", None) else { panic!() };
        assert_eq!(code, 1146);
        assert!(matches!(Reply::new(true, true).walk(b"\xfc", None), Err(Error::Protocol(_))));
    }

    #[test]
    fn with_cached_metadata_a_result_says_whether_its_definitions_follow() {
        let row: &[u8] = b"\x00\x00\x07\x00\x00\x00";
        let end: &[u8] = b"\xfe\x00\x00\x02\x00\x00\x00";
        let done = Done { result_set: true, rows: 1, columns: 1, ..Done::default() };
        let mut prepared = ColumnDefs::default();
        prepared.push(&column("k"));
        let cached = prepared.decoded().unwrap();

        // Unchanged: no definition, and the rows kept are decoded with the prepare's.
        let skipped: [&[u8]; 3] = [b"\x01\x00", row, end];
        let mut reply = Reply::new(true, true).caching_metadata(None);
        assert_eq!(walk_all(&mut reply, &skipped, None).pop(), Some(Step::Done(done)));
        assert!(reply.resent_defs().is_none());
        let mut rows = Vec::new();
        let mut reply = Reply::new(true, true).caching_metadata(Some(Arc::clone(&cached)));
        assert_eq!(walk_all(&mut reply, &skipped, Some(&mut rows)).pop(), Some(Step::Done(done)));
        assert_eq!(rows, [vec![Value::Int(7)]]);
        let mut reply = Reply::new(true, true).caching_metadata(None);
        assert!(matches!(reply.walk(b"\x01\x00", Some(&mut rows)), Err(Error::Protocol(_))));

        // Changed: the definition follows, and is handed back for the next executions.
        let col = column("c");
        let resent: [&[u8]; 4] = [b"\x01\x01", &col, row, end];
        let mut reply = Reply::new(true, true).caching_metadata(None);
        assert_eq!(walk_all(&mut reply, &resent, None).pop(), Some(Step::Done(done)));
        let defs = reply.resent_defs().expect("the definitions sent again");
        assert_eq!(defs.iter().map(|c| c.name_str().into_owned()).collect::<Vec<_>>(), ["c"]);

        // A text result always has its definitions, and is no statement's to cache.
        let mut reply = Reply::new(false, true).caching_metadata(None);
        let text: [&[u8]; 4] = [b"\x01\x01", &col, b"\x017", end];
        assert_eq!(walk_all(&mut reply, &text, None).pop(), Some(Step::Done(done)));
        assert!(reply.resent_defs().is_none());
    }
}
