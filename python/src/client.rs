//! `cubefleet.Client`: a client of a coordinator over the same gRPC service the CLI uses
//! (`cubefleet_proto::client::Client`, the bearer token on every call, TLS with the system's
//! roots and an optional private CA). Calls run on a small tokio runtime of the client's own,
//! without the GIL.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cubefleet_columns::Columns;
use cubefleet_proto::client::{CallError, Cause, Client as Grpc};
use cubefleet_proto::question::Question;
use cubefleet_proto::view::{BatchState, BatchView};
use cubefleet_proto::{
    batch, BatchRef, BatchSpec, BatchStatus, JobResult, ListBatchesRequest, LookupRequest,
    ResultsRequest,
};
use cubefleet_search::ResultLine;
use cubefleet_tables::input::ContentHash;
use cubefleet_tables::states::States;
use pyo3::exceptions::{
    PyConnectionError, PyPermissionError, PyRuntimeError, PyStopIteration, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokio_stream::StreamExt;

use crate::solve::SolveResult;

/// Results per record batch of [`Client::results`].
const RESULTS_PER_BATCH: usize = 8192;

/// A gRPC failure of a call to the coordinator at `url` as a Python exception, its message
/// the CLI's ([`CallError`]: the URL and the cause, never gRPC's boilerplate):
/// `ConnectionError` when the coordinator could not be reached (nothing listening, a name that
/// does not resolve, a TLS mismatch), `PermissionError` when it refused the credential,
/// `ValueError` for a value it refused or a batch it does not have, `RuntimeError` otherwise.
fn status_err(url: &str, s: &tonic::Status) -> PyErr {
    let e = CallError::from_status(url, s);
    let text = e.to_string();
    match (&e.cause, s.code()) {
        (Cause::CredentialRefused(_) | Cause::NotPermitted(_), _) => {
            PyPermissionError::new_err(text)
        }
        (Cause::Refused(_), tonic::Code::InvalidArgument | tonic::Code::NotFound) => {
            PyValueError::new_err(text)
        }
        (Cause::Refused(_) | Cause::ProtocolTooOld(_), _) => PyRuntimeError::new_err(text),
        _ => PyConnectionError::new_err(text),
    }
}

/// `submit`'s first argument as lines or a path: a list (or tuple) of positions is lines, a
/// `pathlib.Path` (any `os.PathLike`) a file; a `str` is refused with what to write instead
/// (one string could be a file name or a single position).
fn lines_or_path(
    lines: Option<Bound<'_, PyAny>>,
    path: Option<std::path::PathBuf>,
) -> PyResult<(Option<Vec<String>>, Option<std::path::PathBuf>)> {
    let Some(given) = lines else {
        return Ok((None, path));
    };
    if given.is_instance_of::<pyo3::types::PyString>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "submit() takes a list of positions or a pathlib.Path, not a str: for a file \
             write submit(path=\"file.txt\"), for one position submit([\"R U R' U'\"])",
        ));
    }
    if given.hasattr("__fspath__")? {
        if path.is_some() {
            return Err(PyValueError::new_err(
                "give exactly one of lines, path, range and sample",
            ));
        }
        return Ok((None, Some(given.extract()?)));
    }
    let lines: Vec<String> = given.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "submit() takes a list of positions (str) or a pathlib.Path, not {}",
            given
                .get_type()
                .name()
                .map_or_else(|_| "this".to_string(), |n| n.to_string())
        ))
    })?;
    Ok((Some(lines), path))
}

/// A connection to a cubefleet coordinator (`cubefleet coordinator --listen ADDR`), over the
/// same gRPC service and client code as the CLI's `submit`, `status`, `results`, `cancel` and
/// `lookup`.
///
/// `Client(url, token=None, tls_ca=None)`: `url` is `http://host:port`, or `https://` for a
/// coordinator with a certificate (the system's roots are trusted, and `tls_ca`, a PEM file,
/// when given); `token` the coordinator's `--token`. Calls release the GIL.
///
/// ```python
/// c = cubefleet.Client("http://127.0.0.1:7700")
/// batch = c.submit(path="scrambles.txt")        # or lines=[...], range=(a, b), sample=(n, seed)
/// c.wait(batch)                                 # the batch's status once finished
/// df = c.results(batch).read_all().to_pandas()  # or iterate: pyarrow.RecordBatch by batch
/// ```
#[pyclass(module = "cubefleet")]
pub(crate) struct Client {
    runtime: Arc<tokio::runtime::Runtime>,
    grpc: Grpc,
    url: String,
}

impl Client {
    /// Runs `f` on the client's runtime without the GIL.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        f: impl std::future::Future<Output = Result<T, tonic::Status>> + Send,
    ) -> PyResult<T> {
        py.detach(|| self.runtime.block_on(f))
            .map_err(|s| status_err(&self.url, &s))
    }
}

/// A batch's status as a dict: the fields of the one view of a batch every client shows
/// ([`BatchView`], as `cubefleet status --json` writes them), and `cancelled_batch` and
/// `finished`.
fn status_dict<'py>(py: Python<'py>, s: &BatchStatus) -> PyResult<Bound<'py, PyDict>> {
    let v = BatchView::from(s);
    let d = pythonize::pythonize(py, &v)?.cast_into::<PyDict>()?;
    d.set_item("cancelled_batch", v.state == BatchState::Cancelled)?;
    // nothing queued or leased (a range or sample batch counts the lines not made yet as
    // queued)
    d.set_item("finished", v.queued + v.leased == 0)?;
    Ok(d)
}

#[pymethods]
impl Client {
    /// Connects to the coordinator at `url` (see `cubefleet.Client`).
    #[new]
    #[pyo3(signature = (url, token=None, tls_ca=None))]
    fn new(
        py: Python<'_>,
        url: &str,
        token: Option<&str>,
        tls_ca: Option<std::path::PathBuf>,
    ) -> PyResult<Client> {
        let ca = match &tls_ca {
            Some(p) => Some(std::fs::read(p).map_err(|e| {
                pyo3::exceptions::PyOSError::new_err(format!("tls_ca {}: {e}", p.display()))
            })?),
            None => None,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let grpc = py
            .detach(|| runtime.block_on(Grpc::connect_with_ca(url, token, ca.as_deref())))
            .map_err(|e| match e {
                cubefleet_proto::client::ConnectError::Invalid(m) => PyValueError::new_err(m),
                e => PyConnectionError::new_err(e.to_string()),
            })?;
        Ok(Client {
            runtime: Arc::new(runtime),
            grpc,
            url: url.to_string(),
        })
    }

    fn __repr__(&self) -> String {
        format!("Client({:?})", self.url)
    }

    /// Submits a batch; returns its id. Exactly one of `lines` (a list of positions, one per
    /// line), `path` (a file, read as the CLI reads it), `range=(start, end)` (state indexes
    /// `start, start + step, ...` below `end`) or `sample=(count, seed)` (uniformly random
    /// states). The search: two-phase to `max_length` (default), `optimal=True`, or
    /// `max_depth=N` (with `metric`, "htm" or "qtm", and `moves`, a move set as `--moves`
    /// takes it: "R,U"); `to`, the position to reach instead of the solved cube (a move
    /// sequence or a facelet string, as `--to` takes it); `goal` and `on`, a partial goal
    /// and where (as `--goal` and `--on` take them); `timeout` seconds per position.
    /// `keep="histogram"` (range and sample batches) stores only the length histogram.
    /// `batch_id` continues or names a batch; `priority` orders batches (higher first). The
    /// lines are named by their content hash (for a file, the one `cubefleet submit FILE`
    /// sends), so a resubmission under a batch id is refused when its lines are not the
    /// batch's.
    #[pyo3(signature = (lines=None, *, path=None, range=None, step=1, sample=None, max_length=cubefleet_proto::DEFAULT_MAX_LENGTH, optimal=false, max_depth=None, metric=None, moves=None, to=None, goal=None, on=None, timeout=None, name=None, priority=0, batch_id=None, keep="all", solutions=None, all_optimal=false, count_only=false))]
    #[allow(clippy::too_many_arguments)]
    fn submit(
        &self,
        py: Python<'_>,
        lines: Option<Bound<'_, PyAny>>,
        path: Option<std::path::PathBuf>,
        range: Option<(u128, u128)>,
        step: u64,
        sample: Option<(u64, u64)>,
        max_length: u32,
        optimal: bool,
        max_depth: Option<u32>,
        metric: Option<&str>,
        moves: Option<&str>,
        to: Option<&str>,
        goal: Option<&str>,
        on: Option<&str>,
        timeout: Option<f64>,
        name: Option<String>,
        priority: i32,
        batch_id: Option<String>,
        keep: &str,
        solutions: Option<u32>,
        all_optimal: bool,
        count_only: bool,
    ) -> PyResult<String> {
        let (lines, path) = lines_or_path(lines, path)?;
        let given = [
            lines.is_some(),
            path.is_some(),
            range.is_some(),
            sample.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err(PyValueError::new_err(
                "give exactly one of lines, path, range and sample",
            ));
        }
        let many = crate::solve::HowMany {
            solutions,
            all_optimal,
            count_only,
        };
        let mode = crate::solve::question(
            max_length, optimal, max_depth, metric, moves, to, goal, on, timeout, many,
        )?;
        // the states checked here, with the CLI's reasons, before anything is sent
        let states = match (range, sample) {
            (Some((start, end)), _) => Some(States::range(start, end, step.max(1))),
            (None, Some((count, seed))) => Some(States::sample(count, seed)),
            (None, None) => None,
        }
        .transpose()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let refused = |e: batch::Refused| PyValueError::new_err(e.0);
        let keep = batch::keep_named(keep).map_err(refused)?;
        let name = name.unwrap_or_else(|| match (&path, &states) {
            (Some(p), _) => p.display().to_string(),
            (None, Some(s)) => batch::describe(s),
            (None, None) => "python".into(),
        });
        let lines = match (lines, path) {
            (Some(l), _) => Some(l),
            (None, Some(p)) => Some(crate::lines::read_lines(&p)?),
            (None, None) => None,
        };
        let mut spec = BatchSpec {
            batch_id: batch_id.unwrap_or_default(),
            name,
            mode: Some(mode.to_wire()),
            priority,
            // the lines are known beforehand: named by their hash, as the CLI names a file's,
            // so a later submission under this batch id with other lines is refused
            content_hash: lines.as_deref().map_or_else(Vec::new, |l| {
                ContentHash::of(l.iter().map(String::as_str)).to_vec()
            }),
            ..BatchSpec::default()
        };
        batch::define(&mut spec, states.as_ref(), keep).map_err(refused)?;
        let requests = batch::line_requests(spec, &lines.unwrap_or_default());
        let asked = mode.to_wire();
        let grpc = self.grpc.clone();
        let r = self.run(py, async move {
            let r = grpc
                .batches
                .clone()
                .submit(tokio_stream::iter(requests))
                .await?
                .into_inner();
            grpc.check_question_kept(&r.batch_id, &asked).await?;
            Ok(r)
        })?;
        Ok(r.batch_id)
    }

    /// A batch's progress as a dict (`total`, `queued`, `leased`, `done`, `invalid`,
    /// `cancelled`, `failed`, `rate`, `eta_seconds`, `length_histogram`, `finished`, ...);
    /// every batch's (a list) when `batch` is `None`.
    #[pyo3(signature = (batch=None))]
    fn status(&self, py: Python<'_>, batch: Option<String>) -> PyResult<Py<PyAny>> {
        let mut batches = self.grpc.batches.clone();
        match batch {
            Some(b) => {
                let s = self.run(py, async move {
                    Ok(batches
                        .get_batch(BatchRef { batch_id: b })
                        .await?
                        .into_inner())
                })?;
                Ok(status_dict(py, &s)?.into_any().unbind())
            }
            None => {
                let all = self.run(py, async move {
                    Ok(batches
                        .list_batches(ListBatchesRequest {})
                        .await?
                        .into_inner()
                        .batches)
                })?;
                let list: Vec<_> = all
                    .iter()
                    .map(|s| status_dict(py, s))
                    .collect::<PyResult<_>>()?;
                Ok(pyo3::types::PyList::new(py, list)?.into_any().unbind())
            }
        }
    }

    /// Waits until the batch is finished (or `timeout` seconds passed); returns its status.
    #[pyo3(signature = (batch, timeout=None))]
    fn wait(&self, py: Python<'_>, batch: String, timeout: Option<f64>) -> PyResult<Py<PyAny>> {
        let mut batches = self.grpc.batches.clone();
        let deadline = timeout.map(|t| std::time::Instant::now() + Duration::from_secs_f64(t));
        let b = batch.clone();
        let last = self.run(py, async move {
            let mut watch = batches
                .watch_batch(BatchRef { batch_id: b })
                .await?
                .into_inner();
            let mut last = None;
            loop {
                let next = match deadline {
                    Some(d) => match tokio::time::timeout_at(d.into(), watch.next()).await {
                        Ok(n) => n,
                        Err(_) => break,
                    },
                    None => watch.next().await,
                };
                match next {
                    Some(s) => last = Some(s?),
                    None => break,
                }
            }
            Ok(last)
        })?;
        let s = match last {
            Some(s) => s,
            None => {
                let mut batches = self.grpc.batches.clone();
                self.run(py, async move {
                    Ok(batches
                        .get_batch(BatchRef { batch_id: batch })
                        .await?
                        .into_inner())
                })?
            }
        };
        Ok(status_dict(py, &s)?.into_any().unbind())
    }

    /// The batch's results in line order, as an iterator of `pyarrow.RecordBatch`es (only
    /// those of `status` when given); rows name the batch's move set (`moves`), target (`to`)
    /// and goal (`goal`), as `cubefleet results` writes them.
    #[pyo3(signature = (batch, status=None))]
    fn results(&self, py: Python<'_>, batch: String, status: Option<String>) -> PyResult<Results> {
        let mut batches = self.grpc.batches.clone();
        let (question, stream) = self.run(py, async move {
            // the batch's question (a batch this call cannot read is refused by the results
            // stream, with the reason)
            let question = batches
                .get_batch(BatchRef {
                    batch_id: batch.clone(),
                })
                .await
                .ok()
                .and_then(|b| b.into_inner().mode)
                .and_then(|m| Question::from_wire(&m).ok())
                .unwrap_or_default();
            let request = ResultsRequest {
                batch_id: batch,
                status: status.unwrap_or_default(),
                ..ResultsRequest::default()
            };
            Ok((
                question,
                batches.stream_results(request).await?.into_inner(),
            ))
        })?;
        Ok(Results {
            runtime: self.runtime.clone(),
            url: self.url.clone(),
            stream: Mutex::new(Some(stream)),
            moves: (!question.moves().is_all()).then(|| question.moves().to_string()),
            to: cubefleet_search::lines::target_facelets(&question),
            goal: question.goal().map(|g| g.to_string()),
        })
    }

    /// Cancels a batch; returns its status.
    fn cancel(&self, py: Python<'_>, batch: String) -> PyResult<Py<PyAny>> {
        let mut batches = self.grpc.batches.clone();
        let s = self.run(py, async move {
            Ok(batches
                .cancel_batch(BatchRef { batch_id: batch })
                .await?
                .into_inner())
        })?;
        Ok(status_dict(py, &s)?.into_any().unbind())
    }

    /// A stored result for `position` from any batch (up to symmetry and inversion, mapped
    /// back to the position asked about), or `None`.
    fn lookup(&self, py: Python<'_>, position: String) -> PyResult<Option<SolveResult>> {
        let mut batches = self.grpc.batches.clone();
        let asked = position.clone();
        let r = self.run(py, async move {
            Ok(batches
                .lookup(LookupRequest { position })
                .await?
                .into_inner())
        })?;
        Ok(r.result.filter(|_| r.found).map(|res| {
            // the CLI's row of a stored result, for the position asked about
            let mut line = ResultLine::from(res);
            line.index = 0;
            line.input = asked;
            SolveResult::from(line)
        }))
    }
}

/// A batch's results as they stream in, a record batch at a time.
#[pyclass(module = "cubefleet")]
pub(crate) struct Results {
    runtime: Arc<tokio::runtime::Runtime>,
    /// The coordinator's URL (named by errors).
    url: String,
    /// `None` once the stream ended.
    stream: Mutex<Option<tonic::Streaming<JobResult>>>,
    /// The batch's move set as its rows name it (`moves`), None when it allows every turn.
    moves: Option<String>,
    /// The batch's target as its rows name it (`to`, facelets), None for the solved cube.
    to: Option<String>,
    /// The batch's goal as its rows name it (`goal`), None for the whole cube.
    goal: Option<String>,
}

#[pymethods]
impl Results {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let batch = py.detach(|| {
            let mut guard = self.stream.lock().unwrap_or_else(|e| e.into_inner());
            let Some(stream) = guard.as_mut() else {
                return Ok(None);
            };
            let mut columns = Columns::new();
            let ended = self.runtime.block_on(async {
                while columns.len() < RESULTS_PER_BATCH {
                    match stream.next().await {
                        Some(r) => {
                            let mut line = ResultLine::from(r?);
                            line.moves.clone_from(&self.moves);
                            line.to.clone_from(&self.to);
                            line.goal.clone_from(&self.goal);
                            columns.push(&line.row());
                        }
                        None => return Ok::<_, tonic::Status>(true),
                    }
                }
                Ok(false)
            });
            match ended {
                Err(e) => {
                    *guard = None;
                    Err(status_err(&self.url, &e))
                }
                Ok(ended) => {
                    if ended {
                        *guard = None;
                    }
                    if columns.is_empty() {
                        return Ok(None);
                    }
                    columns
                        .finish()
                        .map(Some)
                        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
                }
            }
        })?;
        match batch {
            Some(b) => crate::arrow::record_batch(py, &b),
            None => Err(PyStopIteration::new_err(())),
        }
    }

    /// Every remaining result as one `pyarrow.Table`.
    fn read_all(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let list = pyo3::types::PyList::empty(py);
        loop {
            match self.__next__(py) {
                Ok(b) => list.append(b)?,
                Err(e) if e.is_instance_of::<PyStopIteration>(py) => break,
                Err(e) => return Err(e),
            }
        }
        let pa = py.import("pyarrow")?;
        if list.is_empty() {
            return crate::arrow::table(py, &[]);
        }
        Ok(pa
            .getattr("Table")?
            .call_method1("from_batches", (list,))?
            .unbind())
    }
}
