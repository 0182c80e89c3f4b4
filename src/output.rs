//! Standard output for results, and the JSON line written for every solved (or refused) input
//! (the contract users' scripts read: [`ResultLine`], `cubefleet_search`'s one result row).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

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

// The JSON line itself (field names, status names, the text form) is the search crate's one
// result row, shared with the Python package.
pub(crate) use cubefleet_search::{LineStatus, ResultLine};
