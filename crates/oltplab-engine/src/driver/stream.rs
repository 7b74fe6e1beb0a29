//! A server connection's byte stream, for both protocols' drivers: TCP, a Unix socket, or TLS
//! over TCP. One enum, so that the statement path is monomorphic and nothing is boxed per
//! connection but the TLS session; on a thread's sole connection, requests and replies bypass
//! the runtime (`driver/reply_wait.rs`).

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::BufMut;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

use crate::driver::reply_wait;

pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// Boxed: a rustls client session is about 1 KiB, most connections have none.
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl Stream {
    /// Connects to the first of the host's addresses that answers, with `TCP_NODELAY` (each
    /// message is written whole, in one call: nothing to coalesce) and keep-alives on, as
    /// tokio-postgres and libpq set them.
    pub async fn tcp(host: &str, port: u16) -> io::Result<TcpStream> {
        let mut last = io::Error::new(io::ErrorKind::NotFound, format!("no address for host '{host}'"));
        for addr in tokio::net::lookup_host((host, port)).await? {
            match TcpStream::connect(addr).await {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    socket2::SockRef::from(&stream).set_keepalive(true)?;
                    return Ok(stream);
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    pub async fn unix(path: &Path) -> io::Result<Self> {
        Ok(Stream::Unix(UnixStream::connect(path).await?))
    }

    /// Writes `buf` (what the socket takes at once outside the runtime) and flushes what TLS
    /// buffers.
    pub async fn send_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => reply_wait::write_all(s, buf).await,
            Stream::Unix(s) => reply_wait::write_all(s, buf).await,
            Stream::Tls(s) => {
                s.write_all(buf).await?;
                s.flush().await
            }
        }
    }

    /// How much of `buf` the socket takes at once, in a plain `send(2)` (none over TLS, whose
    /// records the runtime writes).
    pub fn send_now(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => reply_wait::send_soon(&*s, buf),
            Stream::Unix(s) => reply_wait::send_soon(&*s, buf),
            Stream::Tls(_) => Ok(0),
        }
    }

    /// What arrives next, waited for outside the runtime (`driver/reply_wait.rs`): in `recv(2)`
    /// over TCP, in `poll(2)` on a Unix socket; `None`: read through the runtime.
    pub fn read_soon<B: BufMut>(&mut self, buf: &mut B) -> Option<io::Result<usize>> {
        match self {
            Stream::Tcp(s) => reply_wait::recv_soon(&*s, buf),
            Stream::Unix(s) => reply_wait::poll_soon(&*s, buf),
            // rustls may hold decrypted bytes already: its own reads decide.
            Stream::Tls(_) => None,
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            Stream::Unix(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
