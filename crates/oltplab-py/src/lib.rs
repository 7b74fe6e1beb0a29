//! The Python binding: JSON in, JSON out, the GIL released while the engine runs,
//! Ctrl-C turned into a graceful stop, and engine errors mapped to exceptions.
//! No workload, measurement or statistics logic lives here.

mod drive;
mod errors;

use std::panic::{catch_unwind, AssertUnwindSafe};

use oltplab_engine::driver::url;
use oltplab_engine::exec::{self, Progress, Sink, Spec, Stop};
use oltplab_engine::result::{IntervalReport, RunResult};
use oltplab_engine::{merge, panics};
use pyo3::prelude::*;

use crate::drive::drive;
use crate::errors::to_py;

/// Runs `f`; a panic becomes one `DriverError` line naming where, never its message (which may
/// hold input), instead of PyO3's `PanicException` with the message and a traceback.
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(to_py(panics::caught("the engine"))))
}

/// The `--db` URL with its password masked, as the engine's parser reads it; a server URL the
/// parser refuses shows its scheme only. Never fails.
#[pyfunction]
fn redact_db_url(url: &str) -> String {
    catch_unwind(|| url::redact(url)).unwrap_or_else(|_| url::MASK.to_string())
}

/// Checks a `mysql://` or `postgresql://` URL with the parser the engine connects with; raises
/// `ConfigError` (one line, no secret) when it cannot be read one way only. Other URLs pass.
#[pyfunction]
fn check_db_url(url: &str) -> PyResult<()> {
    let scheme = url.split_once(':').map_or("", |(s, _)| s);
    if !matches!(scheme, "mysql" | "mariadb" | "postgresql" | "postgres" | "pgsql") {
        return Ok(());
    }
    guarded(|| url::NetTarget::parse(url, 0).map(drop).map_err(to_py))
}

/// The workload and option catalogue as JSON.
#[pyfunction]
fn catalog() -> PyResult<String> {
    guarded(|| oltplab_engine::catalog::catalog_json().map_err(to_py))
}

/// Prepares the workload's tables; returns the prepare result as JSON.
#[pyfunction]
#[pyo3(signature = (spec_json, on_event=None))]
fn prepare(py: Python<'_>, spec_json: &str, on_event: Option<Py<PyAny>>) -> PyResult<String> {
    guarded(|| {
        let spec = Spec::from_json(spec_json).map_err(to_py)?;
        let result =
            drive(py, on_event, |sink: Sink, stop: Stop| async move { exec::prepare(&spec, &sink, stop).await })?;
        Ok(serde_json::to_string(&result).expect("results serialise"))
    })
}

/// Runs the load; returns the run result as JSON (partial when interrupted).
#[pyfunction]
#[pyo3(signature = (spec_json, on_event=None))]
fn run(py: Python<'_>, spec_json: &str, on_event: Option<Py<PyAny>>) -> PyResult<String> {
    guarded(|| {
        let spec = Spec::from_json(spec_json).map_err(to_py)?;
        let result = drive(py, on_event, |sink: Sink, stop: Stop| async move { exec::run(&spec, &sink, stop).await })?;
        Ok(serde_json::to_string(&result).expect("results serialise"))
    })
}

/// Drops the workload's tables; returns a summary as JSON.
#[pyfunction]
#[pyo3(signature = (spec_json, on_event=None))]
fn cleanup(py: Python<'_>, spec_json: &str, on_event: Option<Py<PyAny>>) -> PyResult<String> {
    guarded(|| {
        let spec = Spec::from_json(spec_json).map_err(to_py)?;
        let result = drive(py, on_event, |sink: Sink, _stop: Stop| async move { exec::cleanup(&spec, &sink).await })?;
        Ok(serde_json::to_string(&result).expect("results serialise"))
    })
}

/// Adds V2 compressed histograms (base64) exactly; returns JSON: the merged histogram
/// (`encoded`), `count`, `min_ns`, `max_ns`, `mean_ns` and `percentiles_ns` (`[[rank, ns], ...]`).
#[pyfunction]
#[allow(clippy::needless_pass_by_value)] // PyO3 extracts Python lists into owned vectors
fn merge_histograms(py: Python<'_>, encoded: Vec<String>, ranks: Vec<f64>) -> PyResult<String> {
    let merged = py
        .detach(|| oltplab_engine::stats::merge_encoded(&encoded, &ranks))
        .map_err(|e| to_py(oltplab_engine::EngineError::Internal(e)))?;
    Ok(serde_json::to_string(&merged).expect("results serialise"))
}

/// A distributed run's merge (the engine's `merge::RunMerge`): the clients' interval events
/// into the run's, and their results into the run's result, all as JSON.
#[pyclass(module = "oltplab._core")]
struct RunMerge(merge::RunMerge);

#[pymethods]
impl RunMerge {
    /// `spec_json`: the run as a whole (total threads and rate), as `run` takes it.
    #[new]
    fn new(spec_json: &str) -> PyResult<Self> {
        guarded(|| {
            let spec = Spec::from_json(spec_json).map_err(to_py)?;
            Ok(Self(merge::RunMerge::new(&spec).map_err(to_py)?))
        })
    }

    /// One interval event of each client (the same interval) -> the merged interval event.
    #[allow(clippy::needless_pass_by_value)] // PyO3 extracts Python lists into owned vectors
    fn interval(&mut self, py: Python<'_>, events_json: Vec<String>) -> PyResult<String> {
        guarded(|| {
            let reports = events_json.iter().map(|e| read::<IntervalReport>(e)).collect::<PyResult<Vec<_>>>()?;
            let merged = py.detach(|| self.0.interval(&reports)).map_err(to_py)?;
            Ok(serde_json::to_string(&Progress::Interval(Box::new(merged))).expect("results serialise"))
        })
    }

    /// The results of the clients that finished, and the driver's view of the end
    /// (`{"started_at", "ended_at", "interrupted", "error", "flags"}`) -> the run's result.
    #[allow(clippy::needless_pass_by_value)] // PyO3 extracts Python lists into owned vectors
    fn finish(&self, results_json: Vec<String>, end_json: &str) -> PyResult<String> {
        guarded(|| {
            let results = results_json.iter().map(|r| read::<RunResult>(r)).collect::<PyResult<Vec<_>>>()?;
            let end = read::<merge::RunEnd>(end_json)?;
            Ok(serde_json::to_string(&self.0.finish(&results, end)).expect("results serialise"))
        })
    }
}

/// A document a client's engine wrote, read back.
fn read<T: serde::de::DeserializeOwned>(json: &str) -> PyResult<T> {
    serde_json::from_str(json).map_err(|e| {
        to_py(oltplab_engine::EngineError::Internal(format!(
            "a client's result or interval cannot be read ({e}): every client must run the same oltplab version"
        )))
    })
}

/// TPC-C's consistency conditions; returns the report as JSON.
#[pyfunction]
#[pyo3(signature = (spec_json, on_event=None))]
fn check(py: Python<'_>, spec_json: &str, on_event: Option<Py<PyAny>>) -> PyResult<String> {
    guarded(|| {
        let spec = Spec::from_json(spec_json).map_err(to_py)?;
        let result = drive(py, on_event, |_sink: Sink, _stop: Stop| async move { exec::check(&spec).await })?;
        Ok(serde_json::to_string(&result).expect("results serialise"))
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    panics::install_quiet_hook();
    m.add("__version__", oltplab_engine::VERSION)?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_function(wrap_pyfunction!(prepare, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(cleanup, m)?)?;
    m.add_function(wrap_pyfunction!(redact_db_url, m)?)?;
    m.add_function(wrap_pyfunction!(check_db_url, m)?)?;
    m.add_function(wrap_pyfunction!(merge_histograms, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_class::<RunMerge>()?;
    errors::register(m)
}
