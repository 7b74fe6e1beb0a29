//! The command phase of one authenticated connection: `COM_QUERY`, `COM_STMT_PREPARE`,
//! `COM_STMT_EXECUTE` and `LOAD DATA LOCAL INFILE`'s file transfer. A result's rows are walked
//! in the read buffer (reply.rs) and dropped without being decoded, unless the caller keeps them (TPC-C,
//! SHOW, scripts): sysbench's OLTP workloads only count them, as libmysqlclient's
//! `mysql_stmt_store_result` does.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use mysql_common::constants::{CapabilityFlags, MariadbCapabilities};
use mysql_common::packets::Column;

use super::errors::Error;
use super::metadata::ColumnDefs;
pub use super::reply::Done;
use super::reply::{server_error, Reply, Step};
use super::wire::Wire;
use crate::db::Value;

const COM_QUERY: u8 = 0x03;
const COM_STMT_PREPARE: u8 = 0x16;
const COM_STMT_EXECUTE: u8 = 0x17;
const COM_STMT_CLOSE: u8 = 0x19;
/// The binary protocol's parameter types: signed 64-bit integers, strings, NULL.
const TYPE_LONGLONG: u8 = 0x08;
const TYPE_VAR_STRING: u8 = 0xFD;
const TYPE_NULL: u8 = 0x06;
/// Where an execute packet's NULL bitmap starts: command, statement id, flags, iteration count.
const BITMAP_AT: usize = 10;
/// `LOAD DATA LOCAL INFILE`'s data goes in packets of this size (each a write).
const INFILE_CHUNK_BYTES: usize = 60 * 1024;

/// An execution begun by [`Session::execute_now`].
pub enum Executing {
    Done(Done),
    /// Sent, or partly; its reply not all there: [`Session::finish`] awaits the rest.
    Wait(Pending),
}

/// An execution's state between [`Session::execute_now`] and [`Session::finish`].
pub struct Pending {
    reply: Reply,
    stmt: u32,
    /// The server asked for a file (`LOAD DATA LOCAL INFILE`), to be answered with none.
    infile_asked: bool,
}

/// One authenticated connection.
pub struct Session {
    wire: Wire,
    /// `CLIENT_DEPRECATE_EOF`: results end with an OK packet, and no EOF follows column lists.
    deprecate_eof: bool,
    /// `MARIADB_CLIENT_CACHE_METADATA`: an execution's result carries its column definitions
    /// only when they changed since the statement last sent them (metadata.rs).
    pub(super) cache_metadata: bool,
    /// Definitions a statement sent again at an execution, by statement id: its later
    /// executions' rows are decoded with these, not the prepare's.
    resent: HashMap<u32, Arc<[Column]>>,
}

/// A prepared statement and its execute packet up to the parameter values, built at its first
/// execution and reused by every execution whose parameters' types and NULLs are the same (others
/// write their own). Shared by the run's connections that prepared the same statement under the
/// same id (`driver/share.rs`): the head is built once, by whichever executes it first.
#[derive(Clone)]
pub struct Prepared {
    id: u32,
    params: usize,
    head: OnceLock<Vec<u8>>,
    /// Its result's columns, as the prepare's reply defined them.
    columns: ColumnDefs,
}

/// The same statement on the server (its id, parameter count and columns), whatever head was built.
impl PartialEq for Prepared {
    fn eq(&self, other: &Self) -> bool {
        (self.id, self.params) == (other.id, other.params) && self.columns == other.columns
    }
}

impl Session {
    pub fn new(wire: Wire, caps: CapabilityFlags, mariadb_caps: MariadbCapabilities) -> Self {
        Self {
            wire,
            deprecate_eof: caps.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF),
            cache_metadata: mariadb_caps.contains(MariadbCapabilities::MARIADB_CLIENT_CACHE_METADATA),
            resent: HashMap::new(),
        }
    }

    /// A reply to walk; `cached`, the statement's columns for rows kept without definitions.
    fn reply(&self, binary: bool, cached: Option<Arc<[Column]>>) -> Reply {
        let reply = Reply::new(binary, self.deprecate_eof);
        if self.cache_metadata {
            reply.caching_metadata(cached)
        } else {
            reply
        }
    }

    /// Sends `sql` as text. Rows are decoded into `keep` when given; `infile` is the data of a
    /// `LOAD DATA LOCAL INFILE` (without it, a request for a file is answered with none).
    pub async fn query(
        &mut self,
        sql: &str,
        keep: Option<&mut Vec<Vec<Value>>>,
        infile: Option<&[u8]>,
    ) -> Result<Done, Error> {
        let out = self.wire.command();
        out.push(COM_QUERY);
        out.extend_from_slice(sql.as_bytes());
        self.wire.send().await?;
        let mut reply = self.reply(false, None);
        self.read_result(&mut reply, keep, infile).await
    }

    /// `COM_STMT_PREPARE` of every statement, in one write (the replies are read in order): one
    /// round trip per connection instead of one per statement, which is most of the set-up of
    /// thousands of connections. The parameter and column definitions are read and dropped.
    /// On an error the statements prepared are closed, and the first error is returned.
    pub async fn prepare_all(&mut self, sqls: &[Arc<str>]) -> Result<Vec<Prepared>, Error> {
        for sql in sqls {
            let out = self.wire.command();
            out.push(COM_STMT_PREPARE);
            out.extend_from_slice(sql.as_bytes());
            self.wire.queue();
        }
        self.wire.send_queued().await?;
        let mut prepared = Vec::with_capacity(sqls.len());
        let mut first_error = None;
        for _ in sqls {
            self.wire.next_reply();
            match self.read_prepared().await {
                Ok(stmt) => prepared.push(stmt),
                Err(e @ Error::Server { .. }) => {
                    first_error.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        let Some(e) = first_error else { return Ok(prepared) };
        for stmt in &prepared {
            self.close_statement(stmt).await?;
        }
        Err(e)
    }

    async fn read_prepared(&mut self) -> Result<Prepared, Error> {
        let packet = self.wire.read().await?;
        if packet.first() == Some(&0xFF) {
            return Err(server_error(packet));
        }
        let [0x00, i0, i1, i2, i3, c0, c1, p0, p1, ..] = *packet else {
            return Err(Error::Protocol("unexpected reply to a prepare".into()));
        };
        let (columns, params) = (u16::from_le_bytes([c0, c1]), u16::from_le_bytes([p0, p1]));
        let id = u32::from_le_bytes([i0, i1, i2, i3]);
        let mut defs = ColumnDefs::default();
        for (list, keep) in [(params, false), (columns, true)] {
            for _ in 0..list {
                let def = self.wire.read().await?;
                if keep {
                    defs.push(def);
                }
            }
            if list > 0 && !self.deprecate_eof {
                self.wire.read().await?;
            }
        }
        Ok(Prepared { id, params: usize::from(params), head: OnceLock::new(), columns: defs })
    }

    /// `COM_STMT_CLOSE`, which the server does not answer.
    pub async fn close_statement(&mut self, stmt: &Prepared) -> Result<(), Error> {
        let out = self.wire.command();
        out.push(COM_STMT_CLOSE);
        out.extend_from_slice(&stmt.id.to_le_bytes());
        self.wire.send().await
    }

    /// `COM_STMT_EXECUTE` with `params`; rows decoded into `keep` when given.
    pub async fn execute(
        &mut self,
        stmt: &Prepared,
        params: &[Value],
        keep: Option<&mut Vec<Vec<Value>>>,
    ) -> Result<Done, Error> {
        stmt.check(params)?;
        // Only rows kept are decoded, and only they need the columns.
        let cached = match &keep {
            Some(_) if self.cache_metadata => Some(self.columns_of(stmt)?),
            _ => None,
        };
        stmt.encode(self.wire.command(), params);
        self.wire.send().await?;
        let mut reply = self.reply(true, cached);
        let done = self.read_result(&mut reply, keep, None).await?;
        Ok(self.executed(stmt.id, &mut reply, done))
    }

    /// [`Session::execute`] of a statement whose rows are dropped, as far as it goes without an
    /// await: a thread's sole connection sends in `send(2)` and waits for the reply in
    /// `recv(2)`, so its statements are done here, without the futures of `execute` around them
    /// (docs/performance-engine.md, "A statement without a future").
    pub fn execute_now(&mut self, stmt: &Prepared, params: &[Value]) -> Result<Executing, Error> {
        stmt.check(params)?;
        stmt.encode(self.wire.command(), params);
        let mut pending = Pending { reply: self.reply(true, None), stmt: stmt.id, infile_asked: false };
        if self.wire.send_now()? {
            match self.wire.walk_now(|packet| pending.reply.walk(packet, None).map(Step::end)) {
                Some(Ok(Step::Done(done))) => {
                    self.wire.relax();
                    return Ok(Executing::Done(self.executed(stmt.id, &mut pending.reply, done)));
                }
                Some(Ok(_)) => pending.infile_asked = true,
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        Ok(Executing::Wait(pending))
    }

    /// The rest of an execution [`Session::execute_now`] began: what the socket did not take,
    /// and the reply from where its walk stopped.
    pub async fn finish(&mut self, mut pending: Pending) -> Result<Done, Error> {
        self.wire.send_rest().await?;
        if pending.infile_asked {
            self.send_infile(None).await?;
        }
        let done = self.read_result(&mut pending.reply, None, None).await?;
        Ok(self.executed(pending.stmt, &mut pending.reply, done))
    }

    /// An execution's end: definitions it sent again are kept for the statement's next ones.
    fn executed(&mut self, stmt: u32, reply: &mut Reply, done: Done) -> Done {
        if let Some(defs) = reply.resent_defs() {
            self.resent.insert(stmt, defs);
        }
        done
    }

    /// The columns `stmt`'s result had when it last sent them.
    fn columns_of(&self, stmt: &Prepared) -> Result<Arc<[Column]>, Error> {
        match self.resent.get(&stmt.id) {
            Some(defs) => Ok(Arc::clone(defs)),
            None => stmt.columns.decoded(),
        }
    }

    /// `COM_QUIT`, and the socket closed.
    pub async fn quit(mut self) {
        self.wire.quit().await;
    }

    /// Reads every result of one command; returns the first one's counts. Its packets are
    /// walked in a plain loop while they are buffered or a sole connection's `recv(2)` brings
    /// them; the socket is awaited only when neither does (`reply.rs`).
    async fn read_result(
        &mut self,
        reply: &mut Reply,
        mut keep: Option<&mut Vec<Vec<Value>>>,
        infile: Option<&[u8]>,
    ) -> Result<Done, Error> {
        loop {
            let walked = self.wire.walk_now(|packet| reply.walk(packet, keep.as_deref_mut()).map(Step::end));
            let step = match walked {
                Some(step) => step?,
                None => reply.walk(self.wire.read().await?, keep.as_deref_mut())?,
            };
            match step {
                Step::More => {}
                Step::Infile => self.send_infile(infile).await?,
                Step::Done(done) => {
                    self.wire.relax();
                    return Ok(done);
                }
            }
        }
    }

    /// Sends the file the server asked for (or none), in packets, and the empty packet that ends it.
    async fn send_infile(&mut self, data: Option<&[u8]>) -> Result<(), Error> {
        for chunk in data.unwrap_or_default().chunks(INFILE_CHUNK_BYTES) {
            self.wire.reply().extend_from_slice(chunk);
            self.wire.send().await?;
        }
        self.wire.reply();
        self.wire.send().await
    }
}

impl Prepared {
    fn check(&self, params: &[Value]) -> Result<(), Error> {
        if params.len() == self.params {
            return Ok(());
        }
        Err(Error::Client(format!("a prepared statement takes {} parameters, {} given", self.params, params.len())))
    }

    /// Writes the execute packet: the kept head when the parameters' types and NULLs match it
    /// (else a head of their own), then the values.
    fn encode(&self, out: &mut Vec<u8>, params: &[Value]) {
        let head = self.head.get_or_init(|| {
            let mut head = Vec::new();
            write_head(&mut head, self.id, params);
            head
        });
        if head_fits(head, params) {
            out.extend_from_slice(head);
        } else {
            write_head(out, self.id, params);
        }
        for p in params {
            match p {
                Value::Null => {}
                Value::Int(v) => out.extend_from_slice(&v.to_le_bytes()),
                Value::Text(s) => {
                    put_lenenc(out, s.len() as u64);
                    out.extend_from_slice(s.as_bytes());
                }
            }
        }
    }
}

fn head_fits(head: &[u8], params: &[Value]) -> bool {
    let types_at = BITMAP_AT + params.len().div_ceil(8) + 1;
    params.iter().enumerate().all(|(i, p)| {
        let null = head[BITMAP_AT + i / 8] >> (i % 8) & 1 == 1;
        null == matches!(p, Value::Null) && head[types_at + 2 * i] == type_of(p)
    })
}

/// An execute packet's head for statement `id` and these parameters' types and NULLs, after `out`.
fn write_head(out: &mut Vec<u8>, id: u32, params: &[Value]) {
    out.push(COM_STMT_EXECUTE);
    out.extend_from_slice(&id.to_le_bytes());
    out.push(0); // no cursor
    out.extend_from_slice(&1u32.to_le_bytes()); // iteration count
    if params.is_empty() {
        return;
    }
    let bitmap_at = out.len();
    out.resize(bitmap_at + params.len().div_ceil(8), 0);
    for (i, p) in params.iter().enumerate() {
        if matches!(p, Value::Null) {
            out[bitmap_at + i / 8] |= 1 << (i % 8);
        }
    }
    out.push(1); // the types follow
    for p in params {
        out.extend_from_slice(&[type_of(p), 0]);
    }
}

fn type_of(p: &Value) -> u8 {
    match p {
        Value::Null => TYPE_NULL,
        Value::Int(_) => TYPE_LONGLONG,
        Value::Text(_) => TYPE_VAR_STRING,
    }
}

fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    match n {
        0..=0xFA => out.push(n as u8),
        0xFB..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use mysql_common::io::ParseBuf;

    use super::*;

    #[test]
    fn execute_packets_reuse_their_head_while_types_and_nulls_stay() {
        let stmt = Prepared { id: 7, params: 3, head: OnceLock::new(), columns: ColumnDefs::default() };
        let mut out = Vec::new();
        stmt.encode(&mut out, &[Value::Int(-2), Value::Text("ab".into()), Value::Null]);
        let mut want = vec![COM_STMT_EXECUTE, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0b100, 1];
        want.extend_from_slice(&[TYPE_LONGLONG, 0, TYPE_VAR_STRING, 0, TYPE_NULL, 0]);
        let head_len = want.len();
        want.extend_from_slice(&(-2i64).to_le_bytes());
        want.extend_from_slice(b"\x02ab");
        assert_eq!(out, want);
        let head = stmt.head.get().unwrap().as_ptr();
        out.clear();
        stmt.encode(&mut out, &[Value::Int(5), Value::Text("xyz".into()), Value::Null]);
        assert_eq!((stmt.head.get().unwrap().as_ptr(), &out[..head_len]), (head, &want[..head_len]));
        assert_eq!(&out[head_len..], b"\x05\0\0\0\0\0\0\0\x03xyz");
        // Another NULL: another head.
        out.clear();
        stmt.encode(&mut out, &[Value::Null, Value::Text("x".into()), Value::Int(1)]);
        assert_eq!(&out[BITMAP_AT..BITMAP_AT + 2], &[0b001, 1]);
        assert_eq!(&out[12..18], &[TYPE_NULL, 0, TYPE_VAR_STRING, 0, TYPE_LONGLONG, 0]);
        assert_eq!(stmt.head.get().unwrap().as_ptr(), head, "the first head is kept (it is shared)");
    }

    #[test]
    fn lengths_are_read_as_the_protocol_writes_them() {
        let mut out = Vec::new();
        for n in [0xFA, 0xFB, 0x1_0000, 0x100_0000] {
            put_lenenc(&mut out, n);
            assert_eq!(ParseBuf(&out).checked_eat_lenenc_int(), Some(n));
            out.clear();
        }
    }
}
