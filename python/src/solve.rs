//! Solving from Python: one position ([`solve`]), many on every core with the GIL released
//! ([`solve_many`]: positions given, or a file's lines), through `cubefleet_search`'s
//! `solve_line` and `solve_all`, the functions `cubefleet solve` calls: the same reading, search,
//! check of each answer and result row.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cubefleet_columns::Columns;
use cubefleet_proto::question::{Algorithm, Count, Metric, MoveSet, Question};
use cubefleet_search::{
    read_line, solve_all, solve_line, Line, Request, ResultLine, Solver, Threads,
};
use cubefleet_tables::{parse_position, InputFormat};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::lines::read_lines;

/// One answer: the search crate's result row (`cubefleet solve`'s JSON line), read from
/// Python through the getters below.
#[pyclass(frozen, skip_from_py_object, module = "cubefleet")]
#[derive(Clone, Debug)]
pub(crate) struct SolveResult(ResultLine);

impl From<ResultLine> for SolveResult {
    fn from(line: ResultLine) -> Self {
        SolveResult(line)
    }
}

#[pymethods]
impl SolveResult {
    /// 0-based position in the input (0 for `solve`).
    #[getter]
    fn index(&self) -> u64 {
        self.0.index as u64
    }

    /// The position as given.
    #[getter]
    fn input(&self) -> &str {
        &self.0.input
    }

    /// `solved`, `timeout`, `over_target`, `none_within`, `cancelled`, `invalid` or `skipped`.
    #[getter]
    fn status(&self) -> &'static str {
        self.0.status.name()
    }

    /// The solution, space-separated standard notation; `""` for a solved cube or none.
    #[getter]
    fn solution(&self) -> &str {
        &self.0.solution
    }

    /// Turns in `solution` (in the search's metric); `None` when there is no solution.
    #[getter]
    fn length(&self) -> Option<u32> {
        self.0.length
    }

    /// True only when `solution` is proven shortest.
    #[getter]
    fn optimal(&self) -> bool {
        self.0.optimal
    }

    /// Optimal and depth-limited searches: no solution is shorter; `None` otherwise.
    #[getter]
    fn lower_bound(&self) -> Option<u32> {
        self.0.lower_bound
    }

    /// Wall time spent on this position, milliseconds.
    #[getter]
    fn millis(&self) -> f64 {
        self.0.millis
    }

    /// Search nodes visited (`None` for refused and skipped lines).
    #[getter]
    fn nodes(&self) -> Option<u64> {
        self.0.nodes
    }

    /// Why the line was refused (status `invalid`), or why the move set cannot solve it
    /// (status `unreachable`).
    #[getter]
    fn error(&self) -> Option<&str> {
        self.0.error.as_deref()
    }

    /// The turns the search was limited to (`moves=`, as `--moves` reads them: the JSON
    /// line's `moves`, named `move_set` here beside `moves`, the solution's turns); `None` when
    /// every turn was allowed.
    #[getter]
    fn move_set(&self) -> Option<&str> {
        self.0.moves.as_deref()
    }

    /// The position the solution reaches (`to=`), as a facelet string (the JSON line's `to`);
    /// `None` when it is the solved cube.
    #[getter]
    fn to(&self) -> Option<&str> {
        self.0.to.as_deref()
    }

    /// The partial goal the solution reaches (`goal=`: its name or piece list, and ` on any
    /// face`; the JSON line's `goal`); `None` when it solves the whole cube.
    #[getter]
    fn goal(&self) -> Option<&str> {
        self.0.goal.as_deref()
    }

    /// Where the solution reached the goal (`cross on U`, `xcross on D, slot FR`; the JSON
    /// line's `goal_reached`); `None` without a goal or a solution.
    #[getter]
    fn goal_reached(&self) -> Option<&str> {
        self.0.goal_reached.as_deref()
    }

    fn __repr__(&self) -> String {
        let r = &self.0;
        match (&r.error, r.length) {
            (Some(e), _) => format!("SolveResult({}: {e:?})", r.status.name()),
            (None, Some(n)) => format!(
                "SolveResult({:?}, length={n}, status={:?}, optimal={})",
                r.solution,
                r.status.name(),
                if r.optimal { "True" } else { "False" }
            ),
            (None, None) => format!("SolveResult(status={:?})", r.status.name()),
        }
    }

    /// The solutions of a question for several (`solutions=N`, `all_optimal=True`), distinct
    /// canonical sequences in order, `solution` the first (the JSON line's `solutions`);
    /// `None` for one solution or a count alone.
    #[getter]
    fn solutions(&self) -> Option<Vec<String>> {
        self.0.solutions.clone()
    }

    /// How many solutions there are, of a question for several (the JSON line's `count`;
    /// every optimal one's for `all_optimal=True`); `None` otherwise.
    #[getter]
    fn count(&self) -> Option<u64> {
        self.0.count
    }

    /// The turns of `solution` as a list (`[]` for none).
    #[getter]
    fn moves(&self) -> Vec<String> {
        self.0
            .solution
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    /// The fields as a dict: the JSON line's ([`ResultLine`]'s serde form), with
    /// `lower_bound`, `nodes`, `moves`, `to`, `goal` and `goal_reached` always present (`None`
    /// when the search gave none, the question allows every turn, it has no target or no
    /// goal).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let d = pythonize::pythonize(py, &self.0)?.cast_into::<pyo3::types::PyDict>()?;
        d.set_item("lower_bound", self.0.lower_bound)?;
        d.set_item("nodes", self.0.nodes)?;
        d.set_item("moves", &self.0.moves)?;
        d.set_item("to", &self.0.to)?;
        d.set_item("goal", &self.0.goal)?;
        d.set_item("goal_reached", &self.0.goal_reached)?;
        d.set_item("solutions", &self.0.solutions)?;
        d.set_item("count", self.0.count)?;
        Ok(d)
    }
}

/// How many solutions the keyword arguments ask for (`solutions=N`, `all_optimal=`,
/// `count_only=`), as the CLI's `--solutions`, `--all-optimal` and `--count-only`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HowMany {
    pub(crate) solutions: Option<u32>,
    pub(crate) all_optimal: bool,
    pub(crate) count_only: bool,
}

/// The question the keyword arguments ask: the one mode type, made and checked as the CLI
/// makes it from its flags (`Question::new`); a value out of range is a `ValueError` naming
/// the argument. `moves` is a move set as `--moves` takes it (`"R,U"`, `"-B"`); `to` the
/// position to reach as `--to` takes it (a move sequence or a facelet string), refused with
/// the reason; `goal` a partial goal as `--goal` takes it (a name, a piece list or a facelet
/// mask) and `on` where (`"any-face"`, as `--on`), each refused with the reason.
#[allow(clippy::too_many_arguments)]
pub(crate) fn question(
    max_length: u32,
    optimal: bool,
    max_depth: Option<u32>,
    metric: Option<&str>,
    moves: Option<&str>,
    to: Option<&str>,
    goal: Option<&str>,
    on: Option<&str>,
    timeout: Option<f64>,
    many: HowMany,
) -> PyResult<Question> {
    let metric = metric
        .map(Metric::parse)
        .transpose()
        .map_err(PyValueError::new_err)?
        .unwrap_or_default();
    let moves = moves
        .map(MoveSet::parse)
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("moves: {e}")))?
        .unwrap_or(MoveSet::ALL);
    let algorithm = match (optimal, max_depth) {
        (true, _) => Algorithm::Optimal,
        (false, Some(max_depth)) => Algorithm::DepthLimited { max_depth },
        (false, None) => Algorithm::TwoPhase { max_length },
    };
    let to = match to {
        None => 0,
        Some(text) => parse_position(text, InputFormat::Auto)
            .map(|cube| cubefleet_tables::index::index_of(&cube))
            .map_err(|e| PyValueError::new_err(format!("to {text:?} is not a position: {e}")))?,
    };
    let any_face = match on {
        None => false,
        Some("any-face") => true,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "on {other:?}: give \"any-face\" (or leave it out for the goal's own face)"
            )))
        }
    };
    if any_face && goal.is_none() {
        return Err(PyValueError::new_err("on goes with a goal: give goal= too"));
    }
    let goal = goal
        .map(|g| {
            cubefleet_search::goal::parse(g)
                .map(|g| g.on_any_face(any_face))
                .map_err(|e| PyValueError::new_err(format!("goal {e}")))
        })
        .transpose()?;
    Question::new(algorithm, metric, moves, timeout)
        .and_then(|q| q.with_target(to))
        .and_then(|q| q.with_goal(goal))
        .and_then(|q| {
            q.with_count(Count::from_options(
                many.solutions,
                many.all_optimal,
                many.count_only,
            )?)
        })
        .map_err(|e| {
            let argument = e.flag.trim_start_matches("--").replace('-', "_");
            PyValueError::new_err(format!("{argument} {}", e.reason))
        })
}

/// How positions are written: `auto`, `moves`, `facelets` or `net`.
fn input_format(name: &str) -> PyResult<InputFormat> {
    Ok(match name {
        "auto" => InputFormat::Auto,
        "moves" => InputFormat::Moves,
        "facelets" => InputFormat::Facelets,
        "net" => InputFormat::Net,
        other => {
            return Err(PyValueError::new_err(format!(
                "input must be \"auto\", \"moves\", \"facelets\" or \"net\", not {other:?}"
            )))
        }
    })
}

/// The number of search threads: `threads`, else every core.
fn threads_or_all(threads: Option<usize>) -> PyResult<usize> {
    match threads {
        Some(t) if !(1..=1024).contains(&t) => {
            Err(PyValueError::new_err("threads must be 1 to 1024"))
        }
        Some(t) => Ok(t),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// How often a long call looks for a signal (Ctrl-C) while the work runs: quick beside a
/// person, and a wake-up of 50 ms costs the work nothing.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `work` without the GIL on a thread of its own while this thread waits for it and
/// checks for signals every [`SIGNAL_POLL`]: a Ctrl-C sets `cancel` (the searches stop within a few
/// thousand nodes) and raises `KeyboardInterrupt` once they did.
fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: &Arc<AtomicBool>,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let (tx, mut rx) = std::sync::mpsc::channel();
    let mut interrupted = None;
    let out = std::thread::scope(|s| {
        s.spawn(move || {
            let _ = tx.send(work());
        });
        loop {
            let rx = &mut rx;
            let got = py.detach(move || rx.recv_timeout(SIGNAL_POLL));
            match got {
                Ok(v) => return Some(v),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if interrupted.is_none() {
                        if let Err(e) = py.check_signals() {
                            cancel.store(true, Ordering::Relaxed);
                            interrupted = Some(e);
                        }
                    }
                }
            }
        }
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    out.ok_or_else(|| PyRuntimeError::new_err("the search thread panicked"))
}

/// Solves `lines` (in order), `threads` at once, one thread each ([`solve_all`], the loop of
/// `cubefleet solve`); refused lines raise `InvalidPosition` before any search unless
/// `keep_invalid`.
fn solve_lines(
    py: Python<'_>,
    lines: Vec<String>,
    req: Request,
    threads: usize,
    keep_invalid: bool,
) -> PyResult<Vec<SolveResult>> {
    if !keep_invalid {
        let refused = py.detach(|| {
            lines
                .iter()
                .enumerate()
                .find_map(|(i, l)| match read_line(l, req.format) {
                    Line::Invalid(reason) => Some((i, reason)),
                    _ => None,
                })
        });
        if let Some((i, reason)) = refused {
            return Err(crate::invalid_position(
                py,
                &reason,
                Some(i as u64),
                &lines[i],
            ));
        }
    }
    let tables = crate::tables::get(py, cubefleet_search::reads_bound_table(&req.mode))?;
    let cancel = Arc::new(AtomicBool::new(false));
    let req = Request {
        cancel: Some(cancel.clone()),
        ..req
    };
    let rows = interruptible(py, &cancel, || {
        solve_all(&tables, &req, &lines, Threads::one_each(threads))
    })?;
    let rows = rows.map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(rows.into_iter().map(SolveResult).collect())
}

/// Solves one position (see `cubefleet.solve`).
#[pyfunction]
#[pyo3(signature = (position, max_length=cubefleet_proto::DEFAULT_MAX_LENGTH, timeout=None, *, optimal=false, max_depth=None, metric=None, moves=None, to=None, goal=None, on=None, threads=1, input="auto", solutions=None, all_optimal=false, count_only=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve(
    py: Python<'_>,
    position: &str,
    max_length: u32,
    timeout: Option<f64>,
    optimal: bool,
    max_depth: Option<u32>,
    metric: Option<&str>,
    moves: Option<&str>,
    to: Option<&str>,
    goal: Option<&str>,
    on: Option<&str>,
    threads: usize,
    input: &str,
    solutions: Option<u32>,
    all_optimal: bool,
    count_only: bool,
) -> PyResult<SolveResult> {
    let cancel = Arc::new(AtomicBool::new(false));
    let many = HowMany {
        solutions,
        all_optimal,
        count_only,
    };
    let req = Request {
        mode: question(
            max_length, optimal, max_depth, metric, moves, to, goal, on, timeout, many,
        )?,
        format: input_format(input)?,
        cancel: Some(cancel.clone()),
    };
    let threads = threads_or_all(Some(threads))?;
    // one position: a blank or `#` line is refused (not skipped) before any search, as any
    // text that is not a position (every text `parse_position` reads is neither, so
    // `solve_line` reads the same position)
    if let Err(e) = parse_position(position, req.format) {
        return Err(crate::invalid_position(py, &e.to_string(), None, position));
    }
    let tables = crate::tables::get(py, cubefleet_search::reads_bound_table(&req.mode))?;
    interruptible(py, &cancel, || {
        let mut solver = Solver::new(&tables);
        SolveResult(solve_line(&mut solver, &tables, &req, threads, 0, position))
    })
}

/// The lines [`solve_many`] solves: the positions `source` gives (an iterable of strings; one
/// string is one position, not a sequence of letters), or with `from_file` the lines of the
/// file at `source` ([`read_lines`]).
fn lines_of(source: &Bound<'_, PyAny>, from_file: bool) -> PyResult<Vec<String>> {
    if from_file {
        read_lines(&source.extract::<std::path::PathBuf>()?)
    } else if let Ok(s) = source.cast::<pyo3::types::PyString>() {
        Ok(vec![s.extract::<String>()?])
    } else {
        source
            .try_iter()?
            .map(|p| p.and_then(|p| p.extract::<String>()))
            .collect()
    }
}

/// Solves many positions on every core: the lines of `source`, an iterable of positions (one
/// string is one position), or with `from_file` those of the file at `source`, read as
/// `cubefleet run` reads it ([`read_lines`]). A `pyarrow.Table` or a list of results (see
/// `cubefleet.solve_many` and `cubefleet.solve_file`).
#[pyfunction]
#[pyo3(signature = (source, max_length=cubefleet_proto::DEFAULT_MAX_LENGTH, threads=None, *, from_file=false, timeout=None, optimal=false, max_depth=None, metric=None, moves=None, to=None, goal=None, on=None, input="auto", invalid="raise", output="arrow", solutions=None, all_optimal=false, count_only=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_many(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    max_length: u32,
    threads: Option<usize>,
    from_file: bool,
    timeout: Option<f64>,
    optimal: bool,
    max_depth: Option<u32>,
    metric: Option<&str>,
    moves: Option<&str>,
    to: Option<&str>,
    goal: Option<&str>,
    on: Option<&str>,
    input: &str,
    invalid: &str,
    output: &str,
    solutions: Option<u32>,
    all_optimal: bool,
    count_only: bool,
) -> PyResult<Py<PyAny>> {
    let many = HowMany {
        solutions,
        all_optimal,
        count_only,
    };
    let lines = lines_of(source, from_file)?;
    let keep_invalid = match invalid {
        "raise" => false,
        "keep" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "invalid must be \"raise\" or \"keep\", not {other:?}"
            )))
        }
    };
    if !matches!(output, "arrow" | "list") {
        return Err(PyValueError::new_err(format!(
            "output must be \"arrow\" or \"list\", not {output:?}"
        )));
    }
    let req = Request {
        mode: question(
            max_length, optimal, max_depth, metric, moves, to, goal, on, timeout, many,
        )?,
        format: input_format(input)?,
        cancel: None,
    };
    let threads = threads_or_all(threads)?;
    let results = solve_lines(py, lines, req, threads, keep_invalid)?;
    if output == "list" {
        return Ok(results.into_pyobject(py)?.into_any().unbind());
    }
    let batch = py.detach(|| {
        let mut columns = Columns::new();
        for r in &results {
            columns.push(&r.0.row());
        }
        columns.finish()
    });
    let batch = batch.map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    crate::arrow::table(py, &[batch])
}
