//! The lines of a file as every command reads them ([`read_lines`]), and the content hash a
//! submission names its lines by ([`content_hash`]: `BatchSpec.content_hash`, computed as
//! `cubefleet submit FILE` computes it), so that a batch is checked on resubmission the same
//! way whether the CLI or Python submitted it.

use cubefleet_tables::input::cut_line;
use pyo3::prelude::*;
use sha2::{Digest, Sha256};

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

/// The content hash of the lines a submission sends: SHA-256 over them, each followed by a
/// newline. Over a file's lines as [`read_lines`] reads them (the CLI's reader gives the same
/// lines) it is the hash `cubefleet submit FILE` sends; same lines, same hash.
pub(crate) fn content_hash(lines: &[String]) -> Vec<u8> {
    let mut h = Sha256::new();
    for line in lines {
        h.update(line.as_bytes());
        h.update(b"\n");
    }
    h.finalize().to_vec()
}
