//! Waiting for a reply on an engine thread that owns one connection (up to 64 connections each
//! has a thread: exec/runtime.rs). Such a thread has nothing else to do while its statement is in
//! flight, so it waits in a plain `poll(2)` on the socket and reads what came, as sysbench's
//! threads do, instead of going through the runtime's park, `epoll_wait` and task wake-up (the
//! user space of that round is about half a microsecond per statement:
//! docs/performance-engine.md, "A reply waited for in poll(2)").
//!
//! The wait is bounded by [`WAIT`]: past it the caller falls back to the runtime's readiness, so
//! that a stop (Ctrl-C, the end grace's abandon, both tasks on the same thread) still reaches a
//! connection whose server does not answer, at most [`WAIT`] late. A thread that owns several
//! connections never waits here: its other connections' replies would wait behind this one.

use std::cell::Cell;
use std::io;
use std::os::fd::AsFd;

use bytes::BufMut;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::net::{recv, RecvFlags};

/// How long a reply is waited for in `poll(2)` before the runtime takes over.
const WAIT: Timespec = Timespec { tv_sec: 0, tv_nsec: 2_000_000 };

thread_local! {
    static SOLE: Cell<bool> = const { Cell::new(false) };
}

/// While it lives, this thread's one connection waits for its replies in `poll(2)`.
pub struct SoleConnection(());

impl SoleConnection {
    pub fn claim() -> Self {
        SOLE.set(true);
        Self(())
    }
}

impl Drop for SoleConnection {
    fn drop(&mut self) {
        SOLE.set(false);
    }
}

/// Reads what arrives on `socket` within [`WAIT`] into `buf`'s spare capacity (grown if it has
/// none): `None` when this thread has other connections or nothing came in time, and the caller
/// then awaits the runtime's readiness. The socket stays registered with the runtime, whose
/// edge-triggered readiness is only ever stale towards "readable": its next read then finds
/// nothing and waits for the next edge, as after any read.
pub fn read_soon<B: BufMut>(socket: impl AsFd, buf: &mut B) -> Option<io::Result<usize>> {
    if !SOLE.get() {
        return None;
    }
    let fd = socket.as_fd();
    // A timeout or a signal: the runtime's readiness decides.
    let ready = poll(&mut [PollFd::from_borrowed_fd(fd, PollFlags::IN)], Some(&WAIT)).ok()?;
    if ready == 0 {
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
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    use super::*;

    #[test]
    fn only_a_sole_connection_waits_and_a_silent_socket_falls_back() {
        let (a, mut b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        b.write_all(b"reply").unwrap();
        let mut buf = Vec::with_capacity(16);
        assert!(read_soon(&a, &mut buf).is_none(), "no claim: the runtime waits");
        let sole = SoleConnection::claim();
        assert_eq!(read_soon(&a, &mut buf).unwrap().unwrap(), 5);
        assert_eq!(buf, b"reply");
        assert!(read_soon(&a, &mut buf).is_none(), "nothing more came");
        drop(b);
        assert_eq!(read_soon(&a, &mut buf).unwrap().unwrap(), 0, "the peer's close reads as the end");
        drop(sole);
        assert!(read_soon(&a, &mut buf).is_none());
    }
}
