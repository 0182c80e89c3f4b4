//! The extension module `cubefleet._native`, wrapped by the pure-Python package `cubefleet`
//! (`python/cubefleet/__init__.py`, which holds the public functions' signatures, types and
//! docstrings and the `InvalidPosition` exception; `_native.pyi` types this module's classes
//! for type checkers). Thin glue over the library crates:
//!
//! - [`tables`]: where the tables are (as the CLI finds them), loading them once per process,
//!   building missing ones with a progress callback;
//! - [`solve`]: one position or many (all cores, the GIL released), answers as
//!   [`solve::SolveResult`] objects or as `pyarrow.Table`s ([`arrow`]);
//! - [`lines`]: a file's lines as every command reads them, and their content hash;
//! - [`cube`]: the state index, positions by index, random-state scrambles;
//! - [`client`]: a client of a coordinator over the same gRPC service the CLI uses.

use pyo3::prelude::*;

mod arrow;
mod client;
mod cube;
mod lines;
mod solve;
mod tables;

/// The module's contents (`cubefleet` re-exports `SolveResult` and `Client` and wraps the
/// functions).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<solve::SolveResult>()?;
    m.add_class::<client::Client>()?;
    m.add_class::<client::Results>()?;
    m.add_function(wrap_pyfunction!(solve::solve, m)?)?;
    m.add_function(wrap_pyfunction!(solve::solve_many, m)?)?;
    m.add_function(wrap_pyfunction!(cube::index, m)?)?;
    m.add_function(wrap_pyfunction!(cube::position, m)?)?;
    m.add_function(wrap_pyfunction!(cube::scramble, m)?)?;
    m.add_function(wrap_pyfunction!(tables::build_tables, m)?)?;
    m.add_function(wrap_pyfunction!(tables::tables_dir, m)?)?;
    m.add("MAX_LINE_BYTES", cubefleet_tables::MAX_LINE_BYTES)?;
    m.add("DEFAULT_MAX_LENGTH", cubefleet_proto::DEFAULT_MAX_LENGTH)?;
    Ok(())
}

/// Raises `cubefleet.InvalidPosition(reason, line, input)` (defined in Python, so that it
/// carries those three as attributes).
pub(crate) fn invalid_position(
    py: Python<'_>,
    reason: &str,
    line: Option<u64>,
    input: &str,
) -> PyErr {
    let made = py
        .import("cubefleet")
        .and_then(|m| m.getattr("InvalidPosition"))
        .and_then(|cls| cls.call1((reason, line, input)));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}
