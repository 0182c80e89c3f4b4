//! The lines of a file as every command reads them ([`read_lines`]).

use cubefleet_tables::input::cut_line;
use pyo3::prelude::*;

/// The lines of a file as every command reads them: without the end of line (`\n` or
/// `\r\n`), trimmed, a line over the length limit cut just past it (so it is refused for its
/// length), bytes that are not UTF-8 as U+FFFD.
pub(crate) fn read_lines(path: &std::path::Path) -> PyResult<Vec<String>> {
    let bytes = std::fs::read(path)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<String> = text
        .split('\n')
        .map(|l| {
            let l = l.strip_suffix('\r').unwrap_or(l);
            if l.len() > cubefleet_tables::MAX_LINE_BYTES {
                cut_line(l.to_string())
            } else {
                l.trim().to_string()
            }
        })
        .collect();
    // the end of the last line is no line of its own
    if text.ends_with('\n') || text.is_empty() {
        lines.pop();
    }
    Ok(lines)
}
