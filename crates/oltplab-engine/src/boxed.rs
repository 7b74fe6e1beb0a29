//! A rare path's future boxed out of line. A future is made on the stack before `Box::pin`
//! moves it to the heap, so boxing a large one where it is awaited (a reconnect's is about 4 KB:
//! the driver's whole connect) still reserved its size in the frame of the function awaiting it.
//! That function is polled at every event, and its frame then spread the stack every event
//! writes over more cache lines (docs/performance-engine.md, "Frames").

use std::future::Future;
use std::pin::Pin;

/// The future `make` returns, made and boxed in a frame of its own.
#[inline(never)]
pub fn boxed<F: Future>(make: impl FnOnce() -> F) -> Pin<Box<F>> {
    Box::pin(make())
}
