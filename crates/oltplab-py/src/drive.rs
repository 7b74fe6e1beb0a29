//! Runs an engine future with the GIL released. The work runs as a task on the
//! runtime's threads, so a slow progress consumer never holds up the measurement;
//! the calling (main) thread waits in `block_on`, delivering progress and checking
//! for Ctrl-C every 100 ms (CPython runs signal handlers only on the main thread).

use std::future::Future;
use std::time::Duration;

use oltplab_engine::exec::{Progress, Sink, Stop};
use oltplab_engine::EngineError;
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use serde::Serialize;
use tokio::sync::mpsc;

use crate::errors::to_py;

const TICK: Duration = Duration::from_millis(100);

pub fn drive<T, F, Fut>(py: Python<'_>, on_event: Option<Py<PyAny>>, work: F) -> PyResult<T>
where
    T: Send + Serialize + 'static,
    F: FnOnce(Sink, Stop) -> Fut + Send,
    Fut: Future<Output = Result<T, EngineError>> + Send + 'static,
{
    let runtime = oltplab_engine::exec::build_runtime()
        .map_err(|e| to_py(EngineError::Internal(format!("cannot start the async runtime: {e}"))))?;
    let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
    let stop = Stop::new();
    let fut = work(Sink::new(tx), stop.clone());
    py.detach(|| {
        runtime.block_on(async move {
            let mut work = tokio::spawn(fut);
            let mut tick = tokio::time::interval(TICK);
            let mut callback_error: Option<PyErr> = None;
            let result = loop {
                tokio::select! {
                    r = &mut work => break r.unwrap_or_else(|e| Err(oltplab_engine::panics::joined("the engine", &e))),
                    Some(p) = rx.recv() => deliver(on_event.as_ref(), &p, &mut callback_error, &stop),
                    _ = tick.tick() => {
                        #[allow(clippy::redundant_closure_for_method_calls)] // the closure is needed for the lifetime
                        let interrupted = Python::attach(|py| py.check_signals()).is_err();
                        if interrupted {
                            // KeyboardInterrupt: stop gracefully; the result reports "interrupted".
                            stop.stop();
                        }
                    }
                }
            };
            while let Ok(p) = rx.try_recv() {
                deliver(on_event.as_ref(), &p, &mut callback_error, &stop);
            }
            match (result, callback_error) {
                (_, Some(e)) => Err(e),
                (r, None) => r.map_err(to_py),
            }
        })
    })
}

fn deliver(on_event: Option<&Py<PyAny>>, p: &Progress, err: &mut Option<PyErr>, stop: &Stop) {
    let Some(cb) = on_event else { return };
    if err.is_some() {
        return;
    }
    let json = serde_json::to_string(p).expect("progress serialises");
    let outcome = Python::attach(|py| match cb.call1(py, (json,)) {
        Ok(_) => None,
        // Ctrl-C often lands while Python code runs, i.e. inside the callback: a graceful stop, not an error.
        Err(e) if e.is_instance_of::<PyKeyboardInterrupt>(py) => Some(None),
        Err(e) => Some(Some(e)),
    });
    if let Some(failure) = outcome {
        // A failing callback stops the work; its error is raised once the engine has finished.
        *err = failure;
        stop.stop();
    }
}
