//! The connection's socket and its two buffers, driven from the connection's own task: requests
//! are encoded (postgres-protocol's frontend messages) into `out` and written in one call;
//! replies are read into `input` and walked there frame by frame, so a row the workload drops
//! is skipped where it lies. Rarer messages (errors, row descriptions, authentication) are
//! parsed by postgres-protocol's backend codec.

use bytes::{Buf, BytesMut};
use postgres_protocol::message::{backend, frontend};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::errors::{PgError, ServerError};
use crate::driver::stream::Stream;

/// What a connection's read buffer starts with and is given back after a large reply: a
/// point select's reply is under 100 bytes, a 100-row range about 13 KiB (read in pieces).
const INPUT_BYTES: usize = 8 * 1024;
/// Room kept free for each read.
const READ_MIN_BYTES: usize = 2 * 1024;
/// A read buffer grown past this (a large row, `pg_settings`) is given back after the request.
const KEEP_INPUT_BYTES: usize = 64 * 1024;
/// A request buffer grown past this (the pipelined prepares, a COPY chunk) is given back after the
/// request: a Bind of sysbench's statements is under 300 bytes, and thousands of connections
/// would otherwise each keep the few KiB of their prepares.
const KEEP_OUT_BYTES: usize = 1024;

/// A complete message at the front of the input buffer: its tag and body length.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    pub tag: u8,
    len: usize,
}

pub struct Wire {
    stream: Stream,
    input: BytesMut,
    /// The request being built; [`Wire::send`] writes and clears it.
    pub out: BytesMut,
    /// Sync (and Query) messages sent whose `ReadyForQuery` was not read yet. A request abandoned
    /// half-way (Ctrl-C) leaves some; the next request reads past them first.
    unanswered: u32,
    /// A write stopped half-way left part of a message on the socket: nothing can follow it.
    broken: bool,
}

impl Wire {
    pub fn new(stream: Stream) -> Self {
        Self { stream, input: BytesMut::with_capacity(INPUT_BYTES), out: BytesMut::new(), unanswered: 0, broken: false }
    }

    /// Ends the request in `out` with Sync, which the server answers with `ReadyForQuery`.
    pub fn sync(&mut self) {
        frontend::sync(&mut self.out);
        self.unanswered += 1;
    }

    /// Puts a simple-protocol Query in `out` (answered with `ReadyForQuery`, as a Sync).
    pub fn query(&mut self, sql: &str) -> Result<(), PgError> {
        frontend::query(sql, &mut self.out).map_err(|e| PgError::Protocol(e.to_string()))?;
        self.unanswered += 1;
        Ok(())
    }

    /// Makes the connection ready for a new request: reads past the replies of an abandoned one.
    pub async fn ready(&mut self) -> Result<(), PgError> {
        if self.broken {
            return Err(PgError::Closed);
        }
        while self.unanswered > 0 {
            let f = self.frame().await?;
            self.consume(f);
        }
        Ok(())
    }

    /// Whether a request can start without reading past an abandoned one's replies first
    /// ([`Wire::ready`]).
    pub fn is_ready(&self) -> bool {
        self.unanswered == 0 && !self.broken
    }

    /// [`Wire::send`] without an await: true when the socket took the whole request at once;
    /// what it did not take (all of it over TLS) stays for [`Wire::send_rest`].
    pub fn send_now(&mut self) -> Result<bool, PgError> {
        self.broken = true;
        let sent = self.stream.send_now(&self.out)?;
        if sent < self.out.len() {
            self.out.advance(sent);
            return Ok(false);
        }
        self.broken = false;
        self.out.clear();
        Ok(true)
    }

    /// Sends what [`Wire::send_now`] left, if anything.
    pub async fn send_rest(&mut self) -> Result<(), PgError> {
        if self.out.is_empty() {
            return Ok(());
        }
        self.send().await
    }

    /// Writes `out` in one call (one `sendto` on a plain socket) and clears it.
    pub async fn send(&mut self) -> Result<(), PgError> {
        self.broken = true;
        self.stream.send_all(&self.out).await?;
        self.broken = false;
        self.out.clear();
        Ok(())
    }

    /// The next complete message, read from the socket as needed. Notices, parameter status
    /// changes and notifications, which may come at any time, are skipped.
    pub async fn frame(&mut self) -> Result<Frame, PgError> {
        loop {
            match self.buffered()? {
                Ok(f) => return Ok(f),
                Err(need) => self.fill(need).await?,
            }
        }
    }

    /// [`Wire::frame`] without an await: `None` when the socket must be awaited for it (on a
    /// thread's sole connection a reply is waited for in `recv(2)`: `driver/reply_wait.rs`).
    pub fn frame_now(&mut self) -> Result<Option<Frame>, PgError> {
        loop {
            match self.buffered()? {
                Ok(f) => return Ok(Some(f)),
                Err(need) => {
                    if !self.fill_now(need)? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// [`Wire::frame`] when the message is in the buffer already (a reply's messages after the
    /// first usually are), without a future; else how many bytes the buffer must hold for it.
    pub fn buffered(&mut self) -> Result<Result<Frame, usize>, PgError> {
        loop {
            let Some(header) = backend::Header::parse(&self.input)? else { return Ok(Err(5)) };
            let total = 1 + header.len() as usize;
            if self.input.len() < total {
                return Ok(Err(total));
            }
            let f = Frame { tag: header.tag(), len: total - 5 };
            if !matches!(f.tag, b'N' | b'S' | b'A') {
                return Ok(Ok(f));
            }
            self.consume(f);
        }
    }

    /// Reads until at least `need` bytes are buffered (one read when the reply is there).
    async fn fill(&mut self, need: usize) -> Result<(), PgError> {
        while !self.fill_now(need)? {
            self.make_room(need);
            if self.stream.read_buf(&mut self.input).await? == 0 {
                return Err(PgError::Closed);
            }
        }
        Ok(())
    }

    /// [`Wire::fill`] while the stream reads without an await (`Stream::read_soon`): false once
    /// it does not, with what it read kept.
    fn fill_now(&mut self, need: usize) -> Result<bool, PgError> {
        while self.input.len() < need {
            self.make_room(need);
            match self.stream.read_soon(&mut self.input) {
                None => return Ok(false),
                Some(read) => {
                    if read? == 0 {
                        return Err(PgError::Closed);
                    }
                }
            }
        }
        Ok(true)
    }

    /// Room in the buffer for a read towards `need` bytes.
    fn make_room(&mut self, need: usize) {
        let want = need.saturating_sub(self.input.len()).max(READ_MIN_BYTES);
        if self.input.capacity() - self.input.len() < want {
            self.input.reserve(want);
        }
    }

    /// The body of `f`, the message at the front of the buffer.
    #[inline]
    pub fn body(&self, f: Frame) -> &[u8] {
        &self.input[5..5 + f.len]
    }

    /// Drops the message at the front of the buffer.
    #[inline]
    pub fn consume(&mut self, f: Frame) {
        if f.tag == b'Z' {
            self.unanswered = self.unanswered.saturating_sub(1);
        }
        self.input.advance(5 + f.len);
    }

    /// Parses the message at the front of the buffer with postgres-protocol, and drops it.
    pub fn message(&mut self, f: Frame) -> Result<backend::Message, PgError> {
        if f.tag == b'Z' {
            self.unanswered = self.unanswered.saturating_sub(1);
        }
        backend::Message::parse(&mut self.input)?.ok_or_else(|| PgError::Protocol("truncated message".into()))
    }

    /// The `ErrorResponse` at the front of the buffer, dropped.
    pub fn server_error(&mut self, f: Frame) -> Result<ServerError, PgError> {
        match self.message(f)? {
            backend::Message::ErrorResponse(body) => ServerError::from_body(&body),
            _ => Err(PgError::Protocol(format!("expected an error, got message '{}'", char::from(f.tag)))),
        }
    }

    /// Reads up to and including `ReadyForQuery`, past anything else (a second error included).
    pub async fn finish(&mut self) -> Result<(), PgError> {
        loop {
            let f = self.frame().await?;
            self.consume(f);
            if f.tag == b'Z' {
                return Ok(());
            }
        }
    }

    /// After the server's error `e`: reads up to `ReadyForQuery` and gives `e` back (or the
    /// error that lost the connection on the way).
    pub async fn fail(&mut self, e: ServerError) -> PgError {
        match self.finish().await {
            Ok(()) => PgError::Server(e),
            Err(lost) => lost,
        }
    }

    /// Reads the end of the start-up: `BackendKeyData`, then `ReadyForQuery`.
    pub async fn expect_ready(&mut self) -> Result<(), PgError> {
        loop {
            let f = self.frame().await?;
            match f.tag {
                b'E' => return Err(PgError::Server(self.server_error(f)?)),
                b'Z' => {
                    self.consume(f);
                    return Ok(());
                }
                _ => self.consume(f),
            }
        }
    }

    /// Gives back the memory of a buffer that a large request or reply grew.
    pub fn shrink(&mut self) {
        if self.out.capacity() > KEEP_OUT_BYTES {
            self.out = BytesMut::new();
        }
        if self.input.capacity() > KEEP_INPUT_BYTES && self.input.is_empty() {
            self.input = BytesMut::with_capacity(INPUT_BYTES);
        }
    }

    /// `Terminate`, as `PQfinish()`: the server ends the session without logging an abort.
    pub async fn terminate(mut self) {
        if self.broken {
            return;
        }
        self.out.clear();
        frontend::terminate(&mut self.out);
        if self.send().await.is_ok() {
            let _ = self.stream.shutdown().await;
        }
    }
}
