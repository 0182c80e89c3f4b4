//! The JSON line written for every solved (or refused) input: the contract users' scripts read.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use cubefleet_proto::ResultStatus;
use serde::Serialize;

/// Set once a write to standard output failed because its reader closed the pipe
/// (`cubefleet solve ... | head`). Only [`Stdout`] sets it, so a broken pipe anywhere else (a
/// gRPC connection whose coordinator died) is never mistaken for it.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// True when a write to standard output found the pipe closed by its reader.
pub(crate) fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// Standard output for results: a writer that notes a pipe closed by its reader
/// ([`stdout_closed`]), so the command can end quietly then and only then.
pub(crate) struct Stdout(std::io::Stdout);

impl Stdout {
    /// Standard output (best wrapped in a `BufWriter`: each write takes its lock).
    pub(crate) fn new() -> Stdout {
        Stdout(std::io::stdout())
    }

    /// Notes a closed pipe in `r`'s error, if any.
    fn note<T>(r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                STDOUT_CLOSED.store(true, Ordering::Relaxed);
            }
        }
        r
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Stdout::note(self.0.write(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Stdout::note(self.0.flush())
    }
}

/// A result line's `status`: a finished job's status, or where an unfinished one is, or
/// `error` (a local search whose answer failed its check, which never happens). Written as its
/// name, by [`LineStatus::name`] alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LineStatus {
    /// A finished job's (or a local search's) status.
    Result(ResultStatus),
    /// Of a batch: not finished, waiting for a worker.
    Queued,
    /// Of a batch: not finished, held by a worker.
    Leased,
    /// A local search's solution did not solve the position.
    Error,
}

impl LineStatus {
    /// The name written in every format (JSON, CSV, Parquet, text).
    pub(crate) fn name(self) -> &'static str {
        match self {
            LineStatus::Result(s) => s.name(),
            LineStatus::Queued => "queued",
            LineStatus::Leased => "leased",
            LineStatus::Error => "error",
        }
    }
}

impl Serialize for LineStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// One result line. Field names are a contract; add fields, never rename.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub(crate) struct ResultLine {
    /// 0-based line (or argument) number of the input.
    pub(crate) index: usize,
    /// The input as given.
    pub(crate) input: String,
    /// `solved`, `timeout`, `over_target` (two-phase: no solution within the target found, the
    /// best one given, no time ran out), `none_within`, `cancelled`, `invalid`, `skipped` (a
    /// blank or `#` comment line) or `failed` (the job's results were rejected too many times;
    /// `error` says why); of a batch's unfinished jobs, `queued` or `leased`.
    pub(crate) status: LineStatus,
    /// Space-separated standard notation; `""` for a solved cube or when there is none.
    pub(crate) solution: String,
    /// Moves in the solution (in the search's metric); absent when there is no solution.
    pub(crate) length: Option<u32>,
    /// True only when the solution is proven shortest.
    pub(crate) optimal: bool,
    /// Wall time spent on this input.
    pub(crate) millis: f64,
    /// Why the input was refused (invalid lines only; `null` otherwise, always present).
    pub(crate) error: Option<String>,
    /// Optimal / depth-limited searches: no solution shorter than this exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) lower_bound: Option<u32>,
    /// Search nodes visited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) nodes: Option<u64>,
    /// The position's state index (decimal) in a range or sample batch, whose `input` is
    /// empty; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) state_index: Option<String>,
    /// `results` and `lookup`: the worker whose search answered (its credential's name, or
    /// its `--name`: what `revoke` takes); absent when no worker searched the line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) worker: Option<String>,
    /// `results` and `lookup`: true when the answer rests on a claim the coordinator cannot
    /// check (`optimal`, `none_within`, a lower bound); absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) claimed: bool,
    /// `results` and `lookup` of a `--confirm 2` batch: the workers whose equal claims made
    /// the answer final (one per credential); absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) confirmed_by: Vec<String>,
}

impl ResultLine {
    /// The text form: `R U2 F' ... (19)`, or the status and reason.
    pub(crate) fn text(&self) -> String {
        match (&self.error, self.length) {
            (Some(e), _) => format!("invalid: {e}"),
            (None, Some(n)) if self.status == LineStatus::Result(ResultStatus::Solved) => {
                format!("{} ({n})", self.solution)
            }
            (None, Some(n)) => format!("{} ({n}) [{}]", self.solution, self.status.name()),
            (None, None) => self.status.name().to_string(),
        }
    }
}
