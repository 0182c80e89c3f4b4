//! The cube without searching much: the state index of a position, the position of an
//! index, and random-state scrambles (as `cubefleet index`, `position` and `scramble`).

use cubefleet_search::Scrambler;
use cubefleet_tables::facelet::FaceletCube;
use cubefleet_tables::index::{index_of, state_at};
use cubefleet_tables::{parse_position, InputFormat};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The state index of a position: 0 for solved, below 43,252,003,274,489,856,000.
#[pyfunction]
pub(crate) fn index(py: Python<'_>, position: &str) -> PyResult<u128> {
    let cube = parse_position(position, InputFormat::Auto)
        .map_err(|e| crate::invalid_position(py, &e.to_string(), None, position))?;
    Ok(index_of(&cube))
}

/// The position (54-letter facelet string, URFDLB order) with state index `index`.
#[pyfunction]
pub(crate) fn position(index: &Bound<'_, PyAny>) -> PyResult<String> {
    // an int of any size, or a negative one: refused with the reason, as the CLI does
    let text = index.str()?.to_string();
    let value: u128 = match index.extract::<u128>() {
        Ok(v) => v,
        Err(_) => cubefleet_tables::index::parse_index(&text)
            .map_err(|e| PyValueError::new_err(e.to_string()))?,
    };
    let cube = state_at(value).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(FaceletCube::from_cubie(&cube).to_string())
}

/// `count` random-state scrambles (a uniformly random state, solved, the solution inverted):
/// `cubefleet_search::Scrambler`, as `cubefleet scramble` draws them, so the same `seed` gives
/// the same scrambles from either.
#[pyfunction]
#[pyo3(signature = (count, seed=None, max_length=21))]
pub(crate) fn scramble(
    py: Python<'_>,
    count: usize,
    seed: Option<u64>,
    max_length: u32,
) -> PyResult<Vec<String>> {
    if max_length == 0 {
        return Err(PyValueError::new_err("max_length must be 1 or more"));
    }
    let tables = crate::tables::get(py, false)?;
    py.detach(|| {
        let mut scrambler = Scrambler::new(&tables, seed, max_length);
        (0..count)
            .map(|_| {
                scrambler
                    .next_scramble()
                    .map(|s| s.to_string())
                    .map_err(|e| PyRuntimeError::new_err(e.to_string()))
            })
            .collect()
    })
}
