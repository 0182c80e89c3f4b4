//! The tables, found as the CLI finds them (`$CUBEFLEET_TABLES`, else the user's cache
//! directory; `cubefleet_tables::default_dir`), loaded once per process and shared by every
//! search, and built by [`build_tables`] or, when missing, on first use (as `cubefleet solve`
//! does).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cubefleet_tables::Tables;
use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;

/// The tables loaded so far: their directory, whether with the optimal searches' bound table,
/// and the tables. A search asks for what it needs; they are loaded again only when it needs
/// more (the bound table) or another directory.
static LOADED: Mutex<Option<(PathBuf, bool, Arc<Tables>)>> = Mutex::new(None);

/// The directory `dir` names, else the CLI's default.
pub(crate) fn dir_or_default(dir: Option<PathBuf>) -> PathBuf {
    dir.unwrap_or_else(cubefleet_tables::default_dir)
}

/// The tables of the default directory (with the optimal bound table when `optimal_bound`
/// and one was built), building the two-phase tables first when they are missing. Runs
/// without the GIL (building takes 10-60 s, loading a fraction of a second).
pub(crate) fn get(py: Python<'_>, optimal_bound: bool) -> PyResult<Arc<Tables>> {
    let dir = dir_or_default(None);
    py.detach(|| {
        let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((d, bound, t)) = loaded.as_ref() {
            if *d == dir && (*bound || !optimal_bound) {
                return Ok(t.clone());
            }
        }
        let missing = cubefleet_tables::TWO_PHASE_TABLES
            .iter()
            .any(|k| !dir.join(k.file_name()).exists());
        if missing {
            eprintln!(
                "cubefleet: building the lookup tables in {} (about 1 GB, 10-60 s, once)",
                dir.display()
            );
            cubefleet_tables::Tables::build(
                &dir,
                &cubefleet_tables::TWO_PHASE_TABLES,
                false,
                &|_, _, _| {},
            )
            .map_err(|e| PyOSError::new_err(e.to_string()))?;
        }
        let tables = Arc::new(
            Tables::load_with(&dir, optimal_bound)
                .map_err(|e| PyOSError::new_err(e.to_string()))?,
        );
        *loaded = Some((dir, optimal_bound, tables.clone()));
        Ok(tables)
    })
}

/// The tables directory searches use: `$CUBEFLEET_TABLES`, else the user's cache directory.
#[pyfunction]
pub(crate) fn tables_dir() -> PathBuf {
    dir_or_default(None)
}

/// Builds the missing two-phase tables in `dir` (default: [`tables_dir`]); `progress(name,
/// done, total)` hears of each table's progress, about every percent. Returns the names of
/// the tables built (none when all were there).
#[pyfunction]
#[pyo3(signature = (dir=None, progress=None, force=false))]
pub(crate) fn build_tables(
    py: Python<'_>,
    dir: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
    force: bool,
) -> PyResult<Vec<String>> {
    let dir = dir_or_default(dir);
    // the callback's first error, raised once the build is over
    let failed: Mutex<Option<PyErr>> = Mutex::new(None);
    // the last percent reported per table, so the callback runs about a hundred times a table
    let last: Mutex<(String, u64)> = Mutex::new((String::new(), u64::MAX));
    let report = |name: &str, done: u64, total: u64| {
        let Some(cb) = &progress else { return };
        let percent = done.saturating_mul(100) / total.max(1);
        {
            let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
            if last.0 == name && last.1 == percent {
                return;
            }
            *last = (name.to_string(), percent);
        }
        Python::attach(|py| {
            if let Err(e) = cb.call1(py, (name, done, total)) {
                failed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(e);
            }
        });
    };
    let built = py
        .detach(|| {
            cubefleet_tables::Tables::build(
                &dir,
                &cubefleet_tables::TWO_PHASE_TABLES,
                force,
                &report,
            )
        })
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(built.iter().map(|k| k.name().to_string()).collect())
}
