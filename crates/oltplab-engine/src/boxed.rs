//! A rare path's future boxed out of line. A future is made on the stack before `Box::pin`
//! moves it to the heap, so boxing a large one where it is awaited (a reconnect's is about 4 KB:
//! the driver's whole connect) still reserved its size in the frame of the function awaiting
//! it, a function polled at every event. Made apart, the poll functions on a point select's
//! path have 4 KB less of frame (docs/performance-engine.md, "A whole run's instructions, the
//! events' clock and the frames").

use std::future::Future;
use std::pin::Pin;

/// The future `make` returns, made and boxed in a frame of its own.
#[inline(never)]
pub fn boxed<F: Future>(make: impl FnOnce() -> F) -> Pin<Box<F>> {
    Box::pin(make())
}
