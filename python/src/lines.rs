//! The lines of a file as every command reads them ([`read_lines`]: `cubefleet_tables::input::
//! Lines`, the CLI's reader) and the content hash a submission names its lines by
//! (`cubefleet_tables::input::ContentHash`, the CLI's), so that a batch is checked on
//! resubmission the same way whether the CLI or Python submitted it.

use cubefleet_tables::input::Lines;
use pyo3::prelude::*;

/// The lines of a file as every command reads them: without the end of line (`\n` or
/// `\r\n`), trimmed, a line over the length limit cut just past it (so it is refused for its
/// length), bytes that are not UTF-8 as U+FFFD.
pub(crate) fn read_lines(path: &std::path::Path) -> PyResult<Vec<String>> {
    let err = |e: std::io::Error| {
        pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display()))
    };
    let file = std::fs::File::open(path).map_err(err)?;
    Lines::new(std::io::BufReader::new(file))
        .collect::<std::io::Result<_>>()
        .map_err(err)
}
