//! Reading a file of positions line by line the way every command does (`solve`, `run`,
//! `submit`): memory per line is bounded by the line-length limit, and no line can make the
//! whole read fail.

use std::io::{self, BufRead};

use cubefleet_tables::input::cut_line;
use cubefleet_tables::MAX_LINE_BYTES;

/// The lines of `input`, each without its end of line (`\n` or `\r\n`) and trimmed. A line
/// longer than [`MAX_LINE_BYTES`] (as written, whitespace included: the limit everywhere)
/// comes untrimmed and cut to just past the limit ([`cut_line`]: it stays over the limit, so
/// it is refused for its length wherever it goes, and the rest of it is never held in
/// memory); bytes that are not UTF-8 come as U+FFFD (the line is then refused for that
/// character, not the file for that line).
pub(crate) struct Lines<R> {
    input: R,
    /// The line being read (at most a few bytes past the limit).
    line: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    /// Lines read from `input`.
    pub(crate) fn new(input: R) -> Self {
        Lines {
            input,
            line: Vec::with_capacity(256),
        }
    }

    /// Reads one line into `self.line` (kept up to a few bytes past the limit); false at the
    /// end of the input.
    fn read_line(&mut self) -> io::Result<bool> {
        self.line.clear();
        let keep = MAX_LINE_BYTES + 4; // room for the character that crosses the limit
        let mut any = false;
        loop {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(any);
            }
            any = true;
            let (part, found) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], Some(i)),
                None => (buf, None),
            };
            let room = keep.saturating_sub(self.line.len());
            self.line.extend_from_slice(&part[..part.len().min(room)]);
            let used = found.map_or(buf.len(), |i| i + 1);
            self.input.consume(used);
            if found.is_some() {
                return Ok(true);
            }
        }
    }
}

impl<R: BufRead> Iterator for Lines<R> {
    type Item = io::Result<String>;

    fn next(&mut self) -> Option<io::Result<String>> {
        match self.read_line() {
            Err(e) => Some(Err(e)),
            Ok(false) => None,
            Ok(true) => {
                if self.line.last() == Some(&b'\r') {
                    self.line.pop();
                }
                // one allocation per line: the text is borrowed from the buffer until kept
                let text = String::from_utf8_lossy(&self.line);
                Some(Ok(if text.len() > MAX_LINE_BYTES {
                    cut_line(text.into_owned())
                } else {
                    text.trim().to_string()
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Vec<String> {
        // a small buffer, so lines cross buffer ends
        Lines::new(io::BufReader::with_capacity(7, bytes))
            .collect::<io::Result<_>>()
            .expect("reads")
    }

    #[test]
    fn lines_as_written_long_ones_cut_bad_bytes_replaced() {
        assert_eq!(read(b" R U \r\n\n# c\nF"), ["R U", "", "# c", "F"]);
        assert_eq!(read(b"R\n"), ["R"]);
        assert!(read(b"").is_empty());
        let long = format!("{}\nR U\n", "R ".repeat(50_000));
        let lines = read(long.as_bytes());
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), MAX_LINE_BYTES + 1);
        assert_eq!(lines[1], "R U");
        assert_eq!(read(b"R \xff U\nF\n"), ["R \u{fffd} U", "F"]);
        // a line over the limit only by its trailing spaces stays over it, untrimmed
        let padded = format!("R U{}\n", " ".repeat(MAX_LINE_BYTES));
        assert_eq!(read(padded.as_bytes())[0].len(), MAX_LINE_BYTES + 1);
    }
}
