//! Waiting for a reply on an engine thread that owns one connection (up to 64 connections each
//! has a thread: exec/runtime.rs). Such a thread has nothing else to do while its statement is in
//! flight, so it waits in a plain `poll(2)` on the socket and reads what came, as sysbench's
//! threads do, instead of going through the runtime's park, `epoll_wait` and task wake-up: about
//! half a microsecond of user space per statement, and on a Unix socket a second wake-up of the
//! client per statement, since the runtime's registration also asks for "writable", which a Unix
//! socket signals each time the server reads the request (docs/performance-engine.md, "A reply
//! waited for in poll(2)").
//!
//! The request goes out the same way ([`write_all`]): a plain `send(2)` of what the socket takes
//! at once (a statement's packet, always), the rest, if any, through the runtime. That skips the
//! runtime's write path (its readiness check and task budget) and libc's cancellation points
//! around `send`: about 5 % of the client's user time per point select
//! (docs/performance-engine.md, "User space per statement, the native path"). With neither
//! path touching the runtime, the task no longer yields every 128 statements for its budget: a
//! sole connection's thread has no other work to give the turn to but what the doorbell wakes.
//!
//! The wait has no timeout (a timer armed and cancelled per statement cost more than it saved:
//! a virtual machine pays a timer's programming with an exit); it also ends when the thread's
//! [`Doorbell`] rings, which the run does when it stops or gives up on its connections, so that
//! the thread's other tasks (the stop, the end grace's abandon) run again. A thread that owns
//! several connections never waits here: its other connections' replies would wait behind this
//! one's.

use std::cell::RefCell;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

use bytes::BufMut;
use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags};
use rustix::io::Errno;
use rustix::net::{recv, send, RecvFlags, SendFlags};
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// An eventfd that, once rung, stays readable: every wait in [`read_soon`] that listens to it
/// ends, now and later, and the runtime's readiness takes over.
#[derive(Clone)]
pub struct Doorbell(Arc<OwnedFd>);

impl Doorbell {
    pub fn new() -> io::Result<Self> {
        Ok(Self(Arc::new(eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?)))
    }

    pub fn ring(&self) {
        // Only fails when the counter would overflow: it is rung already.
        let _ = rustix::io::write(&*self.0, &1u64.to_ne_bytes());
    }
}

thread_local! {
    static SOLE: RefCell<Option<Doorbell>> = const { RefCell::new(None) };
}

/// While it lives, this thread's one connection waits for its replies in `poll(2)`, until they
/// come or `doorbell` rings.
pub struct SoleConnection(());

impl SoleConnection {
    pub fn claim(doorbell: &Doorbell) -> Self {
        SOLE.set(Some(doorbell.clone()));
        Self(())
    }
}

impl Drop for SoleConnection {
    fn drop(&mut self) {
        SOLE.set(None);
    }
}

/// Whether this thread's one connection waits for its replies in `poll(2)`: its operations are
/// then usually done in their first poll.
pub fn sole_connection() -> bool {
    SOLE.with_borrow(Option::is_some)
}

/// Writes `buf` to `socket`: what it takes at once with a plain `send(2)` when this thread's one
/// connection owns it, the rest (all of it on a thread with other connections) through the runtime.
pub async fn write_all<S: AsFd + AsyncWrite + Unpin>(socket: &mut S, buf: &[u8]) -> io::Result<()> {
    let sent = send_soon(&*socket, buf)?;
    if sent < buf.len() {
        socket.write_all(&buf[sent..]).await?;
    }
    Ok(())
}

/// How many bytes of `buf` a sole connection's `socket` took at once (0: not a sole connection,
/// or it takes none now).
fn send_soon(socket: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    if !sole_connection() {
        return Ok(0);
    }
    match send(socket.as_fd(), buf, SendFlags::DONTWAIT | SendFlags::NOSIGNAL) {
        Ok(sent) => Ok(sent),
        Err(Errno::AGAIN | Errno::INTR) => Ok(0),
        Err(e) => Err(e.into()),
    }
}

/// Reads what arrives on `socket` into `buf`'s spare capacity (grown if it has none), waiting in
/// `poll(2)`: `None` when this thread has other connections, or the doorbell rang, and the caller
/// then awaits the runtime's readiness. The socket stays registered with the runtime, whose
/// edge-triggered readiness is only ever stale towards "readable": its next read then finds
/// nothing and waits for the next edge, as after any read.
pub fn read_soon<B: BufMut>(socket: impl AsFd, buf: &mut B) -> Option<io::Result<usize>> {
    SOLE.with_borrow(|bell| {
        let bell = bell.as_ref()?;
        let fd = socket.as_fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN), PollFd::new(&*bell.0, PollFlags::IN)];
        // A signal: the runtime's readiness decides.
        poll(&mut fds, None).ok()?;
        if !fds[1].revents().is_empty() || fds[0].revents().is_empty() {
            return None;
        }
        let spare = buf.chunk_mut();
        // SAFETY: `recv` only writes to the slice, and `n` is how many bytes it initialised there.
        #[allow(unsafe_code)]
        let read = recv(fd, unsafe { spare.as_uninit_slice_mut() }, RecvFlags::DONTWAIT).map(|((got, _), _)| got.len());
        match read {
            Ok(n) => {
                // SAFETY: the first `n` bytes of the spare capacity were just written by `recv`.
                #[allow(unsafe_code)]
                unsafe {
                    buf.advance_mut(n);
                }
                Some(Ok(n))
            }
            Err(Errno::AGAIN | Errno::INTR) => None,
            Err(e) => Some(Err(e.into())),
        }
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    use super::*;

    #[test]
    fn only_a_sole_connection_waits_and_the_doorbell_ends_the_wait() {
        let (a, mut b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        b.write_all(b"reply").unwrap();
        let mut buf = Vec::with_capacity(16);
        assert!(read_soon(&a, &mut buf).is_none(), "no claim: the runtime waits");
        let bell = Doorbell::new().unwrap();
        let sole = SoleConnection::claim(&bell);
        assert_eq!(read_soon(&a, &mut buf).unwrap().unwrap(), 5);
        assert_eq!(buf, b"reply");
        // Nothing more comes: the wait ends when the doorbell rings, from another thread.
        let ringer = bell.clone();
        let rung = std::thread::spawn(move || ringer.ring());
        assert!(read_soon(&a, &mut buf).is_none(), "the doorbell hands the wait back");
        rung.join().unwrap();
        b.write_all(b"more").unwrap();
        assert!(read_soon(&a, &mut buf).is_none(), "a rung doorbell stays rung");
        drop(sole);
        let bell = Doorbell::new().unwrap();
        let _sole = SoleConnection::claim(&bell);
        assert_eq!(read_soon(&a, &mut buf).unwrap().unwrap(), 4);
        drop(b);
        assert_eq!(read_soon(&a, &mut buf).unwrap().unwrap(), 0, "the peer's close reads as the end");
        assert_eq!(buf, b"replymore");
    }

    #[tokio::test]
    async fn a_sole_connection_sends_what_fits_at_once_and_the_runtime_the_rest() {
        let (mut a, b) = tokio::net::UnixStream::pair().unwrap();
        assert_eq!(send_soon(&a, b"x").unwrap(), 0, "no claim: the runtime writes");
        let bell = Doorbell::new().unwrap();
        let _sole = SoleConnection::claim(&bell);
        assert_eq!(send_soon(&a, b"ping").unwrap(), 4);
        // Far more than the socket's buffer: the rest waits in the runtime while the peer reads.
        let big: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
        let b = b.into_std().unwrap();
        b.set_nonblocking(false).unwrap();
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            std::io::Read::read_to_end(&mut &b, &mut got).unwrap();
            got
        });
        write_all(&mut a, &big).await.unwrap();
        drop(a);
        let got = reader.join().unwrap();
        assert_eq!(&got[..4], b"ping");
        assert!(got[4..] == big[..], "{} bytes of {} arrived in order", got.len() - 4, big.len());
    }
}
