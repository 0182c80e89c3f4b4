//! The cube without searching much: the state index of a position, the position of an
//! index, and random-state scrambles (as `cubefleet index`, `position` and `scramble`).

use cubefleet_tables::facelet::FaceletCube;
use cubefleet_tables::index::{index_of, state_at};
use cubefleet_tables::{parse_position, CubieCube, InputFormat};
use cubefleet_worker::search::twophase::{TwoPhaseOptions, TwoPhaseSearcher};
use cubefleet_worker::search::Budget;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rand::SeedableRng;

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

/// `count` random-state scrambles (a uniformly random state, solved, the solution inverted);
/// the same `seed` gives the same scrambles (as `cubefleet scramble --seed`).
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
        let mut rng = match seed {
            Some(s) => rand::rngs::StdRng::seed_from_u64(s),
            None => rand::rngs::StdRng::from_os_rng(),
        };
        let mut searcher = TwoPhaseSearcher::new(&tables);
        let opts = TwoPhaseOptions {
            max_length: max_length as usize,
        };
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            let cube = CubieCube::random(&mut rng);
            let found = searcher.solve(&cube, &opts, &Budget::unlimited());
            let scramble = found
                .solution
                .ok_or_else(|| PyRuntimeError::new_err("no solution found for a random state"))?
                .inverse();
            if CubieCube::from_moves(&scramble.0) != cube {
                return Err(PyRuntimeError::new_err(
                    "a scramble does not reach its state",
                ));
            }
            out.push(scramble.to_string());
        }
        Ok(out)
    })
}
