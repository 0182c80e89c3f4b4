//! Solving from Python: one position ([`solve`]), many on every core with the GIL released
//! ([`solve_many`]: positions given, or a file's lines), answers checked by applying them to
//! the position before they are handed back, exactly as `cubefleet solve` does.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cubefleet_columns::{Columns, Row};
use cubefleet_proto::ResultStatus;
use cubefleet_tables::{is_blank_or_comment, parse_position, CubieCube, InputFormat, Tables};
use cubefleet_worker::search::optimal::Metric;
use cubefleet_worker::search::{solve_parallel, Budget, Mode, Solver};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::lines::read_lines;

/// One answer, as `solve`'s JSON line has it.
#[pyclass(frozen, get_all, skip_from_py_object, module = "cubefleet")]
#[derive(Clone, Debug)]
pub(crate) struct SolveResult {
    /// 0-based position in the input (0 for `solve`).
    pub(crate) index: u64,
    /// The position as given.
    pub(crate) input: String,
    /// `solved`, `timeout`, `over_target`, `none_within`, `invalid` or `skipped`.
    pub(crate) status: String,
    /// The solution, space-separated standard notation; `""` for a solved cube or none.
    pub(crate) solution: String,
    /// Turns in `solution` (in the search's metric); `None` when there is no solution.
    pub(crate) length: Option<u32>,
    /// True only when `solution` is proven shortest.
    pub(crate) optimal: bool,
    /// Optimal and depth-limited searches: no solution is shorter; `None` otherwise.
    pub(crate) lower_bound: Option<u32>,
    /// Wall time spent on this position, milliseconds.
    pub(crate) millis: f64,
    /// Search nodes visited (`None` for refused and skipped lines).
    pub(crate) nodes: Option<u64>,
    /// Why the line was refused (status `invalid` only).
    pub(crate) error: Option<String>,
}

#[pymethods]
impl SolveResult {
    fn __repr__(&self) -> String {
        match (&self.error, self.length) {
            (Some(e), _) => format!("SolveResult(invalid: {e:?})"),
            (None, Some(n)) => format!(
                "SolveResult({:?}, length={n}, status={:?}, optimal={})",
                self.solution,
                self.status,
                if self.optimal { "True" } else { "False" }
            ),
            (None, None) => format!("SolveResult(status={:?})", self.status),
        }
    }

    /// The turns of `solution` as a list (`[]` for none).
    #[getter]
    fn moves(&self) -> Vec<String> {
        self.solution
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    /// The fields as a dict (the JSON line's).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let d = pyo3::types::PyDict::new(py);
        d.set_item("index", self.index)?;
        d.set_item("input", &self.input)?;
        d.set_item("status", &self.status)?;
        d.set_item("solution", &self.solution)?;
        d.set_item("length", self.length)?;
        d.set_item("optimal", self.optimal)?;
        d.set_item("lower_bound", self.lower_bound)?;
        d.set_item("millis", self.millis)?;
        d.set_item("nodes", self.nodes)?;
        d.set_item("error", &self.error)?;
        Ok(d)
    }
}

impl SolveResult {
    /// The result as a row of the shared columns.
    pub(crate) fn row(&self) -> Row<'_> {
        Row {
            index: self.index,
            input: &self.input,
            status: &self.status,
            solution: &self.solution,
            length: self.length,
            optimal: self.optimal,
            lower_bound: self.lower_bound,
            millis: self.millis,
            nodes: self.nodes,
            state_index: None,
            error: self.error.as_deref(),
            // a local search: no worker, nothing claimed to a coordinator
            worker: None,
            claimed: false,
            confirmed_by: &[],
        }
    }
}

/// What one call asks of every position.
#[derive(Clone, Debug)]
struct Request {
    mode: Mode,
    /// Seconds per position; `None`: no limit.
    timeout: Option<f64>,
    /// How positions are written.
    format: InputFormat,
}

impl Request {
    /// The metric lengths are reported in (two-phase searches count half turns).
    fn length_metric(&self) -> Metric {
        match self.mode {
            Mode::TwoPhase { .. } => Metric::Htm,
            Mode::Optimal { metric } | Mode::DepthLimited { metric, .. } => metric,
        }
    }
}

/// The mode the keyword arguments name (checked as the CLI checks its flags).
pub(crate) fn mode(
    max_length: u32,
    optimal: bool,
    max_depth: Option<u32>,
    metric: Option<&str>,
) -> PyResult<Mode> {
    let metric_value = match metric {
        None | Some("htm") => Metric::Htm,
        Some("qtm") => Metric::Qtm,
        Some(m) => {
            return Err(PyValueError::new_err(format!(
                "metric must be \"htm\" or \"qtm\", not {m:?}"
            )))
        }
    };
    if max_length == 0 {
        return Err(PyValueError::new_err("max_length must be 1 or more"));
    }
    match (optimal, max_depth) {
        (_, Some(d)) if d > 40 => Err(PyValueError::new_err("max_depth must be 0 to 40")),
        (true, _) => Ok(Mode::Optimal {
            metric: metric_value,
        }),
        (false, Some(max_depth)) => Ok(Mode::DepthLimited {
            max_depth,
            metric: metric_value,
        }),
        (false, None) if metric.is_some() => Err(PyValueError::new_err(
            "metric goes with optimal=True or max_depth (two-phase searches count half turns)",
        )),
        (false, None) => Ok(Mode::TwoPhase { max_length }),
    }
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

/// A timeout given in seconds, checked as `--timeout` is.
pub(crate) fn timeout(seconds: Option<f64>) -> PyResult<Option<f64>> {
    match seconds {
        Some(s) if !(s > 0.0 && s <= 365.0 * 86_400.0) => Err(PyValueError::new_err(
            "timeout must be more than 0 seconds and at most a year",
        )),
        s => Ok(s),
    }
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

/// A line read: skipped (blank or `#`), refused with the reason, or a position.
enum Parsed {
    Skipped,
    Invalid(String),
    Cube(CubieCube),
}

fn parse(input: &str, format: InputFormat, blank_skips: bool) -> Parsed {
    if blank_skips && is_blank_or_comment(input) && !matches!(format, InputFormat::Net) {
        return Parsed::Skipped;
    }
    match parse_position(input, format) {
        Ok(c) => Parsed::Cube(c),
        Err(e) => Parsed::Invalid(e.to_string()),
    }
}

/// Searches one parsed line (with `threads` threads of its own when more than one) and
/// checks the answer against the position, as `cubefleet solve` does.
fn answer(
    solver: &mut Solver<'_>,
    tables: &Tables,
    req: &Request,
    threads: usize,
    cancel: &Arc<AtomicBool>,
    (index, input, parsed): (u64, &str, &Parsed),
) -> SolveResult {
    let start = Instant::now();
    let mut r = SolveResult {
        index,
        input: input.to_string(),
        status: ResultStatus::Invalid.name().into(),
        solution: String::new(),
        length: None,
        optimal: false,
        lower_bound: None,
        millis: 0.0,
        nodes: None,
        error: None,
    };
    match parsed {
        Parsed::Skipped => r.status = ResultStatus::Skipped.name().into(),
        Parsed::Invalid(e) => r.error = Some(e.clone()),
        Parsed::Cube(cube) => {
            let budget = Budget {
                deadline: req.timeout.map(|s| start + Duration::from_secs_f64(s)),
                cancel: Some(cancel.clone()),
            };
            let out = if threads > 1 {
                solve_parallel(tables, cube, &req.mode, &budget, threads)
            } else {
                solver.solve(cube, &req.mode, 0, &budget, &mut |_| {})
            };
            r.status = ResultStatus::from(out.status).name().into();
            if let Some(s) = &out.solution {
                if cube.apply_moves(&s.0).is_solved() {
                    r.solution = s.to_string();
                    r.length = Some(req.length_metric().length(&s.0));
                } else {
                    r.status = "error".into();
                    r.error = Some(format!("internal error: {s} does not solve it"));
                }
            }
            r.optimal = out.optimal;
            r.nodes = Some(out.nodes);
            if !matches!(req.mode, Mode::TwoPhase { .. }) {
                r.lower_bound = Some(out.lower_bound);
            }
        }
    }
    r.millis = start.elapsed().as_secs_f64() * 1000.0;
    r
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

/// Solves `lines` (in order), `threads` at once, one thread each; refused lines raise
/// `InvalidPosition` before any search unless `keep_invalid`.
fn solve_lines(
    py: Python<'_>,
    lines: Vec<String>,
    req: Request,
    threads: usize,
    keep_invalid: bool,
) -> PyResult<Vec<SolveResult>> {
    let parsed: Vec<Parsed> =
        py.detach(|| lines.iter().map(|l| parse(l, req.format, true)).collect());
    if !keep_invalid {
        if let Some((i, reason)) = parsed.iter().enumerate().find_map(|(i, p)| match p {
            Parsed::Invalid(r) => Some((i, r)),
            _ => None,
        }) {
            return Err(crate::invalid_position(
                py,
                reason,
                Some(i as u64),
                &lines[i],
            ));
        }
    }
    let tables = crate::tables::get(py, !matches!(req.mode, Mode::TwoPhase { .. }))?;
    let cancel = Arc::new(AtomicBool::new(false));
    let next = AtomicUsize::new(0);
    let workers = threads.min(lines.len()).max(1);
    interruptible(py, &cancel, || {
        let mut slots: Vec<Option<SolveResult>> = vec![None; lines.len()];
        let done = std::sync::Mutex::new(Vec::with_capacity(lines.len()));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    let mut solver = Solver::new(&tables);
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(line) = lines.get(i) else { break };
                        mine.push(answer(
                            &mut solver,
                            &tables,
                            &req,
                            1,
                            &cancel,
                            (i as u64, line, &parsed[i]),
                        ));
                    }
                    done.lock().unwrap_or_else(|e| e.into_inner()).extend(mine);
                });
            }
        });
        for r in done.into_inner().unwrap_or_else(|e| e.into_inner()) {
            let i = r.index as usize;
            slots[i] = Some(r);
        }
        slots.into_iter().flatten().collect::<Vec<_>>()
    })
}

/// Solves one position (see `cubefleet.solve`).
#[pyfunction]
#[pyo3(signature = (position, max_length=cubefleet_proto::DEFAULT_MAX_LENGTH, timeout=None, *, optimal=false, max_depth=None, metric=None, threads=1, input="auto"))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve(
    py: Python<'_>,
    position: &str,
    max_length: u32,
    timeout: Option<f64>,
    optimal: bool,
    max_depth: Option<u32>,
    metric: Option<&str>,
    threads: usize,
    input: &str,
) -> PyResult<SolveResult> {
    let req = Request {
        mode: mode(max_length, optimal, max_depth, metric)?,
        timeout: self::timeout(timeout)?,
        format: input_format(input)?,
    };
    let threads = threads_or_all(Some(threads))?;
    let parsed = parse(position, req.format, false);
    if let Parsed::Invalid(reason) = &parsed {
        return Err(crate::invalid_position(py, reason, None, position));
    }
    let tables = crate::tables::get(py, !matches!(req.mode, Mode::TwoPhase { .. }))?;
    let cancel = Arc::new(AtomicBool::new(false));
    interruptible(py, &cancel, || {
        let mut solver = Solver::new(&tables);
        answer(
            &mut solver,
            &tables,
            &req,
            threads,
            &cancel,
            (0, position, &parsed),
        )
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
#[pyo3(signature = (source, max_length=cubefleet_proto::DEFAULT_MAX_LENGTH, threads=None, *, from_file=false, timeout=None, optimal=false, max_depth=None, metric=None, input="auto", invalid="raise", output="arrow"))]
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
    input: &str,
    invalid: &str,
    output: &str,
) -> PyResult<Py<PyAny>> {
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
        mode: mode(max_length, optimal, max_depth, metric)?,
        timeout: self::timeout(timeout)?,
        format: input_format(input)?,
    };
    let threads = threads_or_all(threads)?;
    let results = solve_lines(py, lines, req, threads, keep_invalid)?;
    if output == "list" {
        return Ok(results.into_pyobject(py)?.into_any().unbind());
    }
    let batch = py.detach(|| {
        let mut columns = Columns::new();
        for r in &results {
            columns.push(&r.row());
        }
        columns.finish()
    });
    let batch = batch.map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    crate::arrow::table(py, &[batch])
}
