//! Waiting for a reply on an engine thread that owns one connection (up to 64 connections each
//! has a thread: exec/runtime.rs). Such a thread has nothing else to do while its statement is in
//! flight, so it waits for the reply itself, as sysbench's threads do, instead of going through
//! the runtime's park, `epoll_wait` and task wake-up: about half a microsecond of user space per
//! statement, and on a Unix socket a second wake-up of the client per statement, since the
//! runtime's registration also asks for "writable", which a Unix socket signals each time the
//! server reads the request (docs/performance-engine.md, "A reply waited for in poll(2)").
//!
//! Over TCP the wait is the `recv(2)` itself ([`recv_soon`]): the socket is switched to blocking,
//! with a receive timeout ([`DOORBELL_PERIOD`]), the first time it waits here, and back to
//! non-blocking before the runtime touches it again (a request too big to send at once, the
//! doorbell, a signal) and when the claim ends, so that the runtime's own reads and writes never
//! block the thread. One system call per reply where `poll(2)` then `recv(2)` made two, each with
//! its entry and exit, and the poll its table (docs/performance-engine.md, "The reply waited for
//! in recv(2)"). A Unix socket waits in `poll(2)` then reads ([`poll_soon`]): a blocking read's
//! wait there is woken by the "writable" signal above too (poll filters it), which costs a
//! context switch per statement.
//!
//! The request goes out the same way ([`write_all`]), on every engine thread (one with many
//! connections too): a plain `send(2)` of what the socket takes at once (a statement's packet,
//! always), the rest, if any, through the runtime. That skips the
//! runtime's write path (its readiness check and task budget) and libc's cancellation points
//! around `send`: about 5 % of the client's user time per point select
//! (docs/performance-engine.md, "User space per statement, the native path"). With neither
//! path touching the runtime, the task no longer yields every 128 statements for its budget: a
//! sole connection's thread has no other work to give the turn to but what the doorbell wakes.
//!
//! A wait also ends once the thread's [`Doorbell`] rang, which the run does when it stops or
//! gives up on its connections, so that the thread's other tasks (the stop, the end grace's
//! abandon) run again: at once in `poll(2)`, which listens to it, within [`DOORBELL_PERIOD`] in
//! `recv(2)`, which looks at it each period. The period is a timer-wheel timer that the kernel
//! arms only when the reply has not come yet; a high-resolution timer per statement (a `poll`
//! timeout) cost more than it saved: a virtual machine pays its programming with an exit. A
//! thread that owns several connections never waits here: its other connections' replies would
//! wait behind this one's.

use std::cell::RefCell;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::BufMut;
use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags};
use rustix::io::Errno;
use rustix::net::{recv, send, RecvFlags, SendFlags};
use socket2::SockRef;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// How long a wait in `recv(2)` may take to notice the doorbell: the socket's receive timeout.
pub const DOORBELL_PERIOD: Duration = Duration::from_millis(20);

/// Once rung, it stays rung: every wait in [`recv_soon`] and [`poll_soon`] ends, now and later,
/// and the runtime's readiness takes over. A flag for the waits in `recv(2)`, an eventfd for
/// those in `poll(2)`.
#[derive(Clone)]
pub struct Doorbell(Arc<(AtomicBool, OwnedFd)>);

impl Doorbell {
    pub fn new() -> io::Result<Self> {
        let fd = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(Self(Arc::new((AtomicBool::new(false), fd))))
    }

    pub fn ring(&self) {
        self.0 .0.store(true, Ordering::Release);
        // Only fails when the counter would overflow: it is rung already.
        let _ = rustix::io::write(&self.0 .1, &1u64.to_ne_bytes());
    }

    fn rung(&self) -> bool {
        self.0 .0.load(Ordering::Acquire)
    }
}

/// A thread's claim: its doorbell, and the socket it switched to blocking, if any.
struct Sole {
    bell: Doorbell,
    blocking: Option<Blocking>,
}

/// A socket switched to blocking, by the number its driver knows it by, and a duplicate of it:
/// the duplicate names the same socket even when the driver closed its number (a reconnect, an
/// abandoned worker) and the number went to another file, so switching it back is always safe.
struct Blocking {
    fd: RawFd,
    dup: OwnedFd,
}

impl Sole {
    /// Whether `fd` is the socket switched to blocking, switching it if it is not (`false`: it
    /// cannot be, the runtime waits).
    fn blocks(&mut self, fd: BorrowedFd<'_>) -> bool {
        if self.blocking.as_ref().is_some_and(|b| b.fd == fd.as_raw_fd()) {
            return true;
        }
        self.give_back();
        let switched = fd.try_clone_to_owned().and_then(|dup| {
            let socket = SockRef::from(&dup);
            socket.set_read_timeout(Some(DOORBELL_PERIOD))?;
            socket.set_nonblocking(false)?;
            Ok(dup)
        });
        match switched {
            Ok(dup) => {
                self.blocking = Some(Blocking { fd: fd.as_raw_fd(), dup });
                true
            }
            Err(_) => false,
        }
    }

    /// Switches the blocking socket, if any, back to non-blocking, for the runtime.
    fn give_back(&mut self) {
        if let Some(b) = self.blocking.take() {
            // Only fails for a socket that is gone: nobody reads it any more.
            let _ = SockRef::from(&b.dup).set_nonblocking(true);
        }
    }
}

thread_local! {
    static SOLE: RefCell<Option<Sole>> = const { RefCell::new(None) };
}

/// While it lives, this thread's one connection waits for its replies itself, until they come
/// or `doorbell` rings.
pub struct SoleConnection(());

impl SoleConnection {
    pub fn claim(doorbell: &Doorbell) -> Self {
        SOLE.set(Some(Sole { bell: doorbell.clone(), blocking: None }));
        Self(())
    }
}

impl Drop for SoleConnection {
    fn drop(&mut self) {
        if let Some(mut sole) = SOLE.take() {
            sole.give_back();
        }
    }
}

/// Whether this thread's one connection waits for its replies itself: its operations are then
/// usually done in their first poll.
pub fn sole_connection() -> bool {
    SOLE.with_borrow(Option::is_some)
}

/// Writes `buf` to `socket`: what it takes at once with a plain `send(2)`, the rest through the
/// runtime. A thread with other connections sends that way too (its sockets are non-blocking, and
/// a send never waits): the runtime's write path and libc's cancellation points around `send`
/// were about 5 % of the client's user time at 4,096 connections (docs/performance-engine.md,
/// "Profile at 4,096 connections").
pub async fn write_all<S: AsFd + AsyncWrite + Unpin>(socket: &mut S, buf: &[u8]) -> io::Result<()> {
    let sent = send_soon(&*socket, buf)?;
    if sent < buf.len() {
        // The runtime's writes must not block the thread.
        SOLE.with_borrow_mut(|sole| sole.as_mut().map(Sole::give_back));
        socket.write_all(&buf[sent..]).await?;
    }
    Ok(())
}

/// How many bytes of `buf` `socket` took at once (0: it takes none now).
pub fn send_soon(socket: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    match send(socket.as_fd(), buf, SendFlags::DONTWAIT | SendFlags::NOSIGNAL) {
        Ok(sent) => Ok(sent),
        Err(Errno::AGAIN | Errno::INTR) => Ok(0),
        Err(e) => Err(e.into()),
    }
}

/// Reads what arrives on the TCP `socket` into `buf`'s spare capacity (grown if it has none),
/// waiting in `recv(2)`: `None` when this thread has other connections, or the doorbell rang,
/// and the caller then awaits the runtime's readiness. The socket stays registered with the
/// runtime, whose edge-triggered readiness is only ever stale towards "readable": its next read
/// then finds nothing and waits for the next edge, as after any read.
pub fn recv_soon<B: BufMut>(socket: impl AsFd, buf: &mut B) -> Option<io::Result<usize>> {
    SOLE.with_borrow_mut(|sole| {
        let sole = sole.as_mut()?;
        let fd = socket.as_fd();
        loop {
            if sole.bell.rung() || !sole.blocks(fd) {
                sole.give_back();
                return None;
            }
            match recv_into(fd, buf, RecvFlags::empty()) {
                // The period passed: ask the doorbell again. Or the number is a new socket's,
                // still non-blocking (the old one closed by a reconnect): switch that one.
                Err(Errno::AGAIN) => {
                    if SockRef::from(&fd).nonblocking().unwrap_or(true) {
                        sole.blocking = None;
                    }
                }
                // A signal: the runtime's readiness decides.
                Err(Errno::INTR) => {
                    sole.give_back();
                    return None;
                }
                read => return Some(read.map_err(io::Error::from)),
            }
        }
    })
}

/// [`recv_soon`] for a Unix socket: the wait is a `poll(2)` on the socket and the doorbell.
pub fn poll_soon<B: BufMut>(socket: impl AsFd, buf: &mut B) -> Option<io::Result<usize>> {
    SOLE.with_borrow(|sole| {
        let bell = &sole.as_ref()?.bell;
        let fd = socket.as_fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN), PollFd::new(&bell.0 .1, PollFlags::IN)];
        // A signal: the runtime's readiness decides.
        poll(&mut fds, None).ok()?;
        if !fds[1].revents().is_empty() || fds[0].revents().is_empty() {
            return None;
        }
        match recv_into(fd, buf, RecvFlags::DONTWAIT) {
            Err(Errno::AGAIN | Errno::INTR) => None,
            read => Some(read.map_err(io::Error::from)),
        }
    })
}

/// One `recv(2)` into `buf`'s spare capacity, which it then counts as filled.
fn recv_into<B: BufMut>(fd: BorrowedFd<'_>, buf: &mut B, flags: RecvFlags) -> Result<usize, Errno> {
    let spare = buf.chunk_mut();
    // SAFETY: `recv` only writes to the slice, and `n` is how many bytes it initialised there.
    #[allow(unsafe_code)]
    let n = recv(fd, unsafe { spare.as_uninit_slice_mut() }, flags)?.0 .0.len();
    // SAFETY: the first `n` bytes of the spare capacity were just written by `recv`.
    #[allow(unsafe_code)]
    unsafe {
        buf.advance_mut(n);
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::os::unix::net::UnixStream;

    use super::*;

    /// A loopback TCP connection: the client's end non-blocking, as the runtime has it.
    fn tcp_pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        client.set_nonblocking(true).unwrap();
        (client, listener.accept().unwrap().0)
    }

    fn blocking(fd: &impl AsFd) -> bool {
        !SockRef::from(fd).nonblocking().unwrap()
    }

    #[test]
    fn a_sole_tcp_connection_waits_in_recv_and_the_doorbell_ends_the_wait() {
        let (a, mut b) = tcp_pair();
        b.write_all(b"reply").unwrap();
        let mut buf = Vec::with_capacity(16);
        assert!(recv_soon(&a, &mut buf).is_none(), "no claim: the runtime waits");
        let bell = Doorbell::new().unwrap();
        let sole = SoleConnection::claim(&bell);
        assert_eq!(recv_soon(&a, &mut buf).unwrap().unwrap(), 5);
        assert_eq!(buf, b"reply");
        assert!(blocking(&a), "the claimed socket waits in recv(2)");
        // Nothing more comes: the wait ends when the doorbell rings, from another thread, some
        // periods into it.
        let ringer = bell.clone();
        let rung = std::thread::spawn(move || {
            std::thread::sleep(DOORBELL_PERIOD * 3);
            ringer.ring();
        });
        assert!(recv_soon(&a, &mut buf).is_none(), "the doorbell hands the wait back");
        assert!(!blocking(&a), "the runtime gets its socket back non-blocking");
        rung.join().unwrap();
        b.write_all(b"more").unwrap();
        assert!(recv_soon(&a, &mut buf).is_none(), "a rung doorbell stays rung");
        drop(sole);
        let _sole = SoleConnection::claim(&Doorbell::new().unwrap());
        assert_eq!(recv_soon(&a, &mut buf).unwrap().unwrap(), 4);
        drop(b);
        assert_eq!(recv_soon(&a, &mut buf).unwrap().unwrap(), 0, "the peer's close reads as the end");
        assert_eq!(buf, b"replymore");
    }

    #[test]
    fn the_claim_gives_its_socket_back_non_blocking_and_follows_a_new_socket_under_the_same_number() {
        let (a, mut b) = tcp_pair();
        let sole = SoleConnection::claim(&Doorbell::new().unwrap());
        b.write_all(b"x").unwrap();
        let mut buf = Vec::with_capacity(16);
        assert_eq!(recv_soon(&a, &mut buf).unwrap().unwrap(), 1);
        // A reconnect: the old socket closes and the new one gets its number, non-blocking (here
        // in one step, as other tests open files meanwhile).
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        c.set_nonblocking(true).unwrap();
        let mut d = listener.accept().unwrap().0;
        let mut a = OwnedFd::from(a);
        rustix::io::dup2(&c, &mut a).unwrap();
        drop(c);
        let writer = std::thread::spawn(move || {
            std::thread::sleep(DOORBELL_PERIOD);
            d.write_all(b"new").unwrap();
            d
        });
        assert_eq!(recv_soon(&a, &mut buf).unwrap().unwrap(), 3, "waited for, on the new socket");
        assert!(blocking(&a));
        drop(sole);
        assert!(!blocking(&a), "the claim's end gives the socket back non-blocking");
        drop(writer.join().unwrap());
        assert_eq!(buf, b"xnew");
    }

    #[test]
    fn a_unix_socket_waits_in_poll_and_the_doorbell_ends_the_wait() {
        let (a, mut b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        b.write_all(b"reply").unwrap();
        let mut buf = Vec::with_capacity(16);
        assert!(poll_soon(&a, &mut buf).is_none(), "no claim: the runtime waits");
        let bell = Doorbell::new().unwrap();
        let sole = SoleConnection::claim(&bell);
        assert_eq!(poll_soon(&a, &mut buf).unwrap().unwrap(), 5);
        assert!(!blocking(&a), "a Unix socket stays non-blocking");
        let ringer = bell.clone();
        let rung = std::thread::spawn(move || ringer.ring());
        assert!(poll_soon(&a, &mut buf).is_none(), "the doorbell hands the wait back");
        rung.join().unwrap();
        b.write_all(b"more").unwrap();
        assert!(poll_soon(&a, &mut buf).is_none(), "a rung doorbell stays rung");
        drop(sole);
        let _sole = SoleConnection::claim(&Doorbell::new().unwrap());
        assert_eq!(poll_soon(&a, &mut buf).unwrap().unwrap(), 4);
        drop(b);
        assert_eq!(poll_soon(&a, &mut buf).unwrap().unwrap(), 0, "the peer's close reads as the end");
        assert_eq!(buf, b"replymore");
    }

    #[tokio::test]
    async fn a_connection_sends_what_fits_at_once_and_the_runtime_the_rest() {
        let (mut a, b) = tokio::net::UnixStream::pair().unwrap();
        assert_eq!(send_soon(&a, b"no claim, ").unwrap(), 10, "a thread of many connections sends at once too");
        let _sole = SoleConnection::claim(&Doorbell::new().unwrap());
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
        assert_eq!(&got[..14], b"no claim, ping");
        assert!(got[14..] == big[..], "{} bytes of {} arrived in order", got.len() - 14, big.len());
    }
}
