//! MySQL packets on the connection's own socket: 4-byte headers (payload length, sequence id),
//! payloads of 16 MiB and more split and joined, one read buffer and one write buffer reused for
//! every statement. Nothing here is spawned: the task that runs the connection's statements
//! drives its socket, so a statement costs one write and (usually) one read, no channel hop and
//! no allocation.

use std::io;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::TlsConnector;

use super::errors::Error;
pub use crate::driver::stream::Stream;

/// The largest payload of one packet; a payload of this length continues in the next packet.
const MAX_PAYLOAD: usize = 0xFF_FFFF;
/// What a connection's read buffer starts at (and returns to after a larger result): a point
/// select's reply fits many times, a 100-row range select's arrives in two reads. Thousands of
/// connections each hold one, so it is kept small (docs/performance-engine.md).
const READ_BUFFER_BYTES: usize = 8 * 1024;
/// Buffers that grew beyond this for one large packet are given back after it.
const KEEP_BUFFER_BYTES: usize = 64 * 1024;

/// A connection's packet reader and writer.
pub struct Wire {
    pub stream: Stream,
    /// Bytes read from the socket; those from `start` on are not yet consumed.
    input: Vec<u8>,
    start: usize,
    /// Packets to write: commands queued, then the one being written (4 header bytes, then its
    /// payload, from `packet_at`).
    output: Vec<u8>,
    packet_at: usize,
    /// A payload of 16 MiB or more, joined from its packets.
    joined: Vec<u8>,
    /// The sequence id the next packet read or written carries.
    seq: u8,
}

impl Wire {
    pub fn new(stream: Stream) -> Self {
        Self {
            stream,
            input: Vec::with_capacity(READ_BUFFER_BYTES),
            start: 0,
            output: Vec::with_capacity(256),
            packet_at: 0,
            joined: Vec::new(),
            seq: 0,
        }
    }

    /// Starts a command: sequence ids start again at 0. Returns the buffer to write its payload
    /// at the end of (after any commands queued before it).
    pub fn command(&mut self) -> &mut Vec<u8> {
        self.seq = 0;
        self.start_packet()
    }

    /// Starts a packet that answers the server within an exchange (handshake, LOAD DATA).
    pub fn reply(&mut self) -> &mut Vec<u8> {
        self.start_packet()
    }

    fn start_packet(&mut self) -> &mut Vec<u8> {
        self.packet_at = self.output.len();
        self.output.extend_from_slice(&[0; 4]);
        &mut self.output
    }

    /// Ends the packet being written without sending it: several commands then go in one
    /// write (pipelined), their replies read in order, each after [`Wire::next_reply`].
    pub fn queue(&mut self) {
        let payload = self.output.len() - self.packet_at - 4;
        debug_assert!(payload < MAX_PAYLOAD, "a queued command is smaller than 16 MiB");
        self.output[self.packet_at..self.packet_at + 4].copy_from_slice(&header(payload, self.seq));
        self.seq = self.seq.wrapping_add(1);
    }

    /// The reply to the next of the commands queued: its sequence ids start at 1.
    pub fn next_reply(&mut self) {
        self.seq = 1;
    }

    /// Writes the commands queued.
    pub async fn send_queued(&mut self) -> Result<(), Error> {
        self.stream.send_all(&self.output).await?;
        self.output.clear();
        Ok(())
    }

    /// Sends the packet written since [`Wire::command`] or [`Wire::reply`], after the commands
    /// queued before it (a payload of 16 MiB or more is split into packets).
    pub async fn send(&mut self) -> Result<(), Error> {
        self.seal();
        // What the socket takes at once goes out in a plain send(2), without a wait (reply_wait.rs).
        self.stream.send_all(&self.output).await?;
        self.sent();
        Ok(())
    }

    /// [`Wire::send`] without an await: true when the socket took the whole request at once;
    /// what it did not take (all of it over TLS) stays for [`Wire::send_rest`].
    pub fn send_now(&mut self) -> Result<bool, Error> {
        self.seal();
        let sent = self.stream.send_now(&self.output)?;
        if sent == self.output.len() {
            self.sent();
            return Ok(true);
        }
        self.output.drain(..sent);
        Ok(false)
    }

    /// Sends what [`Wire::send_now`] left, if anything.
    pub async fn send_rest(&mut self) -> Result<(), Error> {
        if !self.output.is_empty() {
            self.stream.send_all(&self.output).await?;
            self.sent();
        }
        Ok(())
    }

    /// Ends the packet being written: its header, or its split into packets of 16 MiB.
    fn seal(&mut self) {
        let payload = self.output.len() - self.packet_at - 4;
        if payload < MAX_PAYLOAD {
            return self.queue();
        }
        let mut split = self.output[..self.packet_at].to_vec();
        split.reserve(payload + 4 * (payload / MAX_PAYLOAD + 1));
        let body = &self.output[self.packet_at + 4..];
        // A payload of exactly n × 16 MiB ends with an empty packet.
        for chunk in body.chunks(MAX_PAYLOAD).chain((payload % MAX_PAYLOAD == 0).then_some(&[][..])) {
            split.extend_from_slice(&header(chunk.len(), self.seq));
            split.extend_from_slice(chunk);
            self.seq = self.seq.wrapping_add(1);
        }
        self.output = split;
    }

    fn sent(&mut self) {
        self.output.clear();
        if self.output.capacity() > KEEP_BUFFER_BYTES {
            self.output = Vec::with_capacity(256);
        }
    }

    /// The next packet's payload, valid until the next read.
    pub async fn read(&mut self) -> Result<&[u8], Error> {
        let (at, len) = self.next_chunk().await?;
        if len < MAX_PAYLOAD {
            return Ok(&self.input[at..at + len]);
        }
        let mut joined = std::mem::take(&mut self.joined);
        joined.clear();
        joined.extend_from_slice(&self.input[at..at + len]);
        loop {
            let (at, len) = self.next_chunk().await?;
            joined.extend_from_slice(&self.input[at..at + len]);
            if len < MAX_PAYLOAD {
                break;
            }
        }
        self.joined = joined;
        Ok(&self.joined)
    }

    /// Called between commands: a buffer that grew for one large packet is given back.
    pub fn relax(&mut self) {
        if self.start == self.input.len() && self.input.capacity() > KEEP_BUFFER_BYTES {
            self.input = Vec::with_capacity(READ_BUFFER_BYTES);
            self.start = 0;
        }
        if self.joined.capacity() > 0 {
            self.joined = Vec::new();
        }
    }

    /// The same connection after a TLS handshake on its socket (the client's `SslRequest` sent).
    pub async fn upgrade(self, config: &Arc<ClientConfig>, name: &ServerName<'static>) -> Result<Wire, Error> {
        let Stream::Tcp(tcp) = self.stream else {
            return Err(Error::Protocol("TLS is only started on a TCP connection".into()));
        };
        let tls = TlsConnector::from(Arc::clone(config)).connect(name.clone(), tcp).await?;
        Ok(Wire { seq: self.seq, ..Wire::new(Stream::Tls(Box::new(tls))) })
    }

    /// Sends `COM_QUIT` and closes the socket.
    pub async fn quit(&mut self) {
        // Whatever a statement abandoned half-written (Ctrl-C) is not sent before the goodbye.
        self.output.clear();
        self.command().push(COM_QUIT);
        if self.send().await.is_ok() {
            let _ = self.stream.shutdown().await;
        }
    }

    /// One packet's position in `input`, read from the socket as far as needed.
    async fn next_chunk(&mut self) -> Result<(usize, usize), Error> {
        loop {
            match self.buffered_chunk() {
                Ok(at_len) => return self.take_chunk(at_len),
                Err(need) => self.fill(need).await?,
            }
        }
    }

    /// Hands the next packets to `walk`, without an await, until it returns a value: those
    /// already in the buffer whole (the rows of a result mostly are), and on a thread's sole
    /// connection those that `recv(2)` brings. `None`: await [`Wire::read`] for the next packet
    /// (which also joins a payload of 16 MiB or more). A plain loop, so that a reply's packets
    /// cost no future state each (`reply.rs`).
    pub fn walk_now<T>(&mut self, mut walk: impl FnMut(&[u8]) -> Result<Option<T>, Error>) -> Option<Result<T, Error>> {
        loop {
            match self.buffered_chunk() {
                Ok((at, len)) if len < MAX_PAYLOAD => {
                    let walked = self.take_chunk((at, len)).and_then(|_| walk(&self.input[at..at + len]));
                    match walked {
                        Ok(None) => {}
                        Ok(Some(out)) => return Some(Ok(out)),
                        Err(e) => return Some(Err(e)),
                    }
                }
                Ok(_) => return None,
                Err(need) => {
                    if let Err(e) = self.fill_now(need)? {
                        return Some(Err(e));
                    }
                }
            }
        }
    }

    /// Where the next packet's payload is, if it is buffered whole; otherwise how many unread
    /// bytes it needs.
    fn buffered_chunk(&self) -> Result<(usize, usize), usize> {
        let unread = self.input.len() - self.start;
        if unread < 4 {
            return Err(4);
        }
        let h = &self.input[self.start..self.start + 4];
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        if unread < 4 + len {
            return Err(4 + len);
        }
        Ok((self.start + 4, len))
    }

    /// Consumes the buffered packet at `at`, checking its sequence id.
    fn take_chunk(&mut self, (at, len): (usize, usize)) -> Result<(usize, usize), Error> {
        let seq = self.input[at - 1];
        if seq != self.seq {
            return Err(Error::Protocol(format!("packet out of order (sequence {seq} where {} was due)", self.seq)));
        }
        self.seq = self.seq.wrapping_add(1);
        self.start = at + len;
        Ok((at, len))
    }

    /// Reads from the socket until at least `need` unread bytes are buffered.
    async fn fill(&mut self, need: usize) -> Result<(), Error> {
        loop {
            if let Some(filled) = self.fill_now(need) {
                return filled;
            }
            received(self.stream.read_buf(&mut self.input).await)?;
        }
    }

    /// [`Wire::fill`] without an await, while the stream reads soon (`Stream::read_soon`);
    /// `None` once it does not, with what it read kept.
    fn fill_now(&mut self, need: usize) -> Option<Result<(), Error>> {
        if self.start == self.input.len() {
            self.input.clear();
            self.start = 0;
        }
        if self.input.capacity() - self.start < need {
            self.input.drain(..self.start);
            self.start = 0;
            if self.input.capacity() < need {
                self.input.reserve(need.next_power_of_two() - self.input.len());
            }
        }
        while self.input.len() - self.start < need {
            // The spare capacity is at least what is missing, so this never grows the buffer.
            if let Err(e) = received(self.stream.read_soon(&mut self.input)?) {
                return Some(Err(e));
            }
        }
        Some(Ok(()))
    }
}

/// A read's outcome: nothing read is the server's close.
fn received(read: io::Result<usize>) -> Result<(), Error> {
    match read? {
        0 => Err(Error::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "the server closed the connection"))),
        _ => Ok(()),
    }
}

pub const COM_QUIT: u8 = 0x01;

fn header(len: usize, seq: u8) -> [u8; 4] {
    [len as u8, (len >> 8) as u8, (len >> 16) as u8, seq]
}

#[cfg(test)]
mod tests {
    use tokio::net::UnixStream;

    use super::*;

    fn pair() -> (Wire, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        (Wire::new(Stream::Unix(a)), b)
    }

    #[tokio::test]
    async fn packets_are_framed_and_numbered() {
        let (mut wire, mut peer) = pair();
        wire.command().extend_from_slice(b"\x03SELECT 1");
        wire.send().await.unwrap();
        let mut got = [0; 13];
        peer.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"\x09\x00\x00\x00\x03SELECT 1");
        // Two replies in one write, the second split across two more.
        peer.write_all(b"\x01\x00\x00\x01\x07\x02\x00\x00\x02ab").await.unwrap();
        assert_eq!(wire.read().await.unwrap(), b"\x07");
        assert_eq!(wire.read().await.unwrap(), b"ab");
        peer.write_all(b"\x01\x00\x00\x05z").await.unwrap();
        let e = wire.read().await.unwrap_err();
        assert!(matches!(&e, Error::Protocol(m) if m.contains("out of order")), "{e:?}");
    }

    #[tokio::test]
    async fn queued_commands_go_in_one_write_and_their_replies_are_numbered_each_from_one() {
        let (mut wire, mut peer) = pair();
        for sql in [&b"\x16SELECT 1"[..], b"\x16SELECT 22"] {
            wire.command().extend_from_slice(sql);
            wire.queue();
        }
        wire.send_queued().await.unwrap();
        let mut got = [0; 27];
        peer.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"\x09\x00\x00\x00\x16SELECT 1\x0a\x00\x00\x00\x16SELECT 22");
        peer.write_all(b"\x01\x00\x00\x01a\x01\x00\x00\x02b\x01\x00\x00\x01c").await.unwrap();
        wire.next_reply();
        assert_eq!(wire.read().await.unwrap(), b"a");
        assert_eq!(wire.read().await.unwrap(), b"b");
        wire.next_reply();
        assert_eq!(wire.read().await.unwrap(), b"c");
    }

    #[tokio::test]
    async fn large_payloads_are_split_and_joined() {
        let (mut wire, mut peer) = pair();
        let big = vec![7u8; MAX_PAYLOAD + 10];
        wire.command().extend_from_slice(&big);
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            peer.read_to_end(&mut all).await.unwrap();
            all
        });
        wire.send().await.unwrap();
        wire.stream.shutdown().await.unwrap();
        let sent = reader.await.unwrap();
        assert_eq!(sent.len(), big.len() + 8);
        assert_eq!(&sent[..4], &[0xFF, 0xFF, 0xFF, 0]);
        assert_eq!(&sent[4 + MAX_PAYLOAD..8 + MAX_PAYLOAD], &[10, 0, 0, 1]);

        let (mut wire, mut peer) = pair();
        let writer = tokio::spawn(async move {
            let mut out = header(MAX_PAYLOAD, 0).to_vec();
            out.extend(std::iter::repeat_n(1u8, MAX_PAYLOAD));
            out.extend_from_slice(&header(3, 1));
            out.extend_from_slice(b"end");
            peer.write_all(&out).await.unwrap();
            peer
        });
        let got = wire.read().await.unwrap();
        assert_eq!((got.len(), &got[got.len() - 3..]), (MAX_PAYLOAD + 3, &b"end"[..]));
        drop(writer.await.unwrap());
        wire.relax();
        assert_eq!(wire.input.capacity(), READ_BUFFER_BYTES);
        assert!(matches!(wire.read().await.unwrap_err(), Error::Io(_)));
    }
}
