//! The Python binding: JSON in, JSON out, the GIL released while the engine runs,
//! Ctrl-C turned into a graceful stop, and engine errors mapped to exceptions.
//! No workload, measurement or statistics logic lives here.

mod drive;
mod errors;

use oltplab_engine::exec::{self, Sink, Spec, Stop};
use pyo3::prelude::*;

use crate::drive::drive;
use crate::errors::to_py;

/// The workload and option catalogue as JSON.
#[pyfunction]
fn catalog() -> PyResult<String> {
    oltplab_engine::catalog::catalog_json().map_err(to_py)
}

/// Prepares the workload's tables; returns the prepare result as JSON.
#[pyfunction]
#[pyo3(signature = (spec_json, on_event=None))]
fn prepare(py: Python<'_>, spec_json: &str, on_event: Option<Py<PyAny>>) -> PyResult<String> {
    let spec = Spec::from_json(spec_json).map_err(to_py)?;
    let result = drive(py, on_event, |sink: Sink, stop: Stop| async move { exec::prepare(&spec, &sink, stop).await })?;
    Ok(serde_json::to_string(&result).expect("results serialise"))
}

/// Runs the load; returns the run result as JSON (partial when interrupted).
#[pyfunction]
#[pyo3(signature = (spec_json, on_event=None))]
fn run(py: Python<'_>, spec_json: &str, on_event: Option<Py<PyAny>>) -> PyResult<String> {
    let spec = Spec::from_json(spec_json).map_err(to_py)?;
    let result = drive(py, on_event, |sink: Sink, stop: Stop| async move { exec::run(&spec, &sink, stop).await })?;
    Ok(serde_json::to_string(&result).expect("results serialise"))
}

/// Drops the workload's tables; returns a summary as JSON.
#[pyfunction]
#[pyo3(signature = (spec_json, on_event=None))]
fn cleanup(py: Python<'_>, spec_json: &str, on_event: Option<Py<PyAny>>) -> PyResult<String> {
    let spec = Spec::from_json(spec_json).map_err(to_py)?;
    let result = drive(py, on_event, |sink: Sink, _stop: Stop| async move { exec::cleanup(&spec, &sink).await })?;
    Ok(serde_json::to_string(&result).expect("results serialise"))
}

/// TPC-C's consistency conditions; returns the report as JSON.
#[pyfunction]
#[pyo3(signature = (spec_json, on_event=None))]
fn check(py: Python<'_>, spec_json: &str, on_event: Option<Py<PyAny>>) -> PyResult<String> {
    let spec = Spec::from_json(spec_json).map_err(to_py)?;
    let result = drive(py, on_event, |_sink: Sink, _stop: Stop| async move { exec::check(&spec).await })?;
    Ok(serde_json::to_string(&result).expect("results serialise"))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", oltplab_engine::VERSION)?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_function(wrap_pyfunction!(prepare, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(cleanup, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    errors::register(m)
}
