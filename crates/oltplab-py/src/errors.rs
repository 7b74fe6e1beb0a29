//! The exception hierarchy, declared once, and the one mapping from engine errors.

use oltplab_engine::EngineError;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;

create_exception!(oltplab._core, OltpLabError, PyException, "Base class of oltplab's errors.");
create_exception!(oltplab._core, ConfigError, OltpLabError, "Bad options or spec: fix the command line.");
create_exception!(oltplab._core, ConnectError, OltpLabError, "The database could not be reached or opened.");
create_exception!(oltplab._core, NotPreparedError, OltpLabError, "The database lacks the workload's tables.");
create_exception!(oltplab._core, DriverError, OltpLabError, "A database error that stopped the work.");

#[allow(clippy::needless_pass_by_value)] // by value so that `map_err(to_py)` reads well
pub fn to_py(e: EngineError) -> PyErr {
    let msg = e.to_string();
    match e {
        EngineError::Config(_) => ConfigError::new_err(msg),
        EngineError::Connect(_) => ConnectError::new_err(msg),
        EngineError::NotPrepared(_) => NotPreparedError::new_err(msg),
        EngineError::Driver(_) | EngineError::Internal(_) => DriverError::new_err(msg),
        EngineError::Interrupted(_) => PyKeyboardInterrupt::new_err(msg),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("OltpLabError", py.get_type::<OltpLabError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("ConnectError", py.get_type::<ConnectError>())?;
    m.add("NotPreparedError", py.get_type::<NotPreparedError>())?;
    m.add("DriverError", py.get_type::<DriverError>())?;
    Ok(())
}
