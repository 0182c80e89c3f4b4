//! What one line of input is, the same for every command (`solve`, `run`, `submit`) and for
//! the coordinator that stores the lines: how long it may be, and which lines hold no
//! position (blank lines and `#` comments).
//!
//! How a line that holds a position is read (facelets or moves) is [`crate::parse_position`]'s
//! rule, [`crate::facelet::looks_like_facelets`]. How a file is cut into lines is [`Lines`]'s
//! (memory per line bounded by the limit; no line can make the whole read fail), and the
//! content hash that names a submitted file's lines is [`ContentHash`]'s: the CLI, `run` and
//! the Python package read and name a file the same way because they share these.

use std::io::{self, BufRead};

use sha2::{Digest, Sha256};

/// The longest line (in bytes, without its end of line) read as a position: a longer one is
/// refused with [`crate::Error::LineTooLong`], which names this limit. 4096 bytes hold a
/// sequence of over a thousand turns; a facelet string takes 54 and a colour net about 200.
///
/// Clients that send lines over the network cut a longer line to just past the limit (the
/// first character boundary beyond it, [`cut_line`]), so the line is still refused for its
/// length and no message carries more than this per line.
pub const MAX_LINE_BYTES: usize = 4096;

/// True for a line that holds no position: blank (whitespace only) or a comment (its first
/// character after leading whitespace is `#`). Such a line is not searched: every command
/// answers it with status `skipped` (no solution, no error), so each result's `index` stays
/// the line of the file it answers.
pub fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// `line`, cut to the first character boundary past [`MAX_LINE_BYTES`] when it is longer:
/// short enough to send, still too long to be read as a position (so it is refused for its
/// length where it arrives). A line within the limit is returned whole.
pub fn cut_line(mut line: String) -> String {
    if line.len() > MAX_LINE_BYTES {
        let mut end = MAX_LINE_BYTES + 1;
        while !line.is_char_boundary(end) {
            end += 1;
        }
        line.truncate(end);
    }
    line
}

/// The lines of `input`, each without its end of line (`\n` or `\r\n`) and trimmed. A line
/// longer than [`MAX_LINE_BYTES`] (as written, whitespace included: the limit everywhere)
/// comes untrimmed and cut to just past the limit ([`cut_line`]: it stays over the limit, so
/// it is refused for its length wherever it goes, and the rest of it is never held in
/// memory); bytes that are not UTF-8 come as U+FFFD (the line is then refused for that
/// character, not the file for that line).
pub struct Lines<R> {
    input: R,
    /// The line being read (at most a few bytes past the limit).
    line: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    /// Lines read from `input`.
    pub fn new(input: R) -> Self {
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

/// The content hash a submission names its lines by (`BatchSpec.content_hash`): SHA-256 over
/// the lines as [`Lines`] reads them, each followed by a newline. Same lines, same hash; a
/// different line or count, another hash (but for a SHA-256 collision).
#[derive(Default, Clone)]
pub struct ContentHash(Sha256);

impl ContentHash {
    /// Adds the next line.
    pub fn line(&mut self, line: &str) {
        self.0.update(line.as_bytes());
        self.0.update(b"\n");
    }

    /// The hash of the lines added.
    pub fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }

    /// The hash of `lines`.
    pub fn of<'a>(lines: impl IntoIterator<Item = &'a str>) -> [u8; 32] {
        let mut h = ContentHash::default();
        lines.into_iter().for_each(|l| h.line(l));
        h.finish()
    }

    /// The hash of the file at `path`, read as [`Lines`] reads it.
    pub fn of_file(path: &std::path::Path) -> io::Result<[u8; 32]> {
        let file = std::fs::File::open(path)?;
        let mut h = ContentHash::default();
        for line in Lines::new(io::BufReader::new(file)) {
            h.line(&line?);
        }
        Ok(h.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_and_comment_lines() {
        for line in ["", "   ", "\t", "#", "# a comment", "   # indented"] {
            assert!(is_blank_or_comment(line), "{line:?}");
        }
        for line in ["R U", " R # not a comment line", "x#"] {
            assert!(!is_blank_or_comment(line), "{line:?}");
        }
    }

    #[test]
    fn a_long_line_is_cut_just_past_the_limit_on_a_character_boundary() {
        let short = "R ".repeat(10);
        assert_eq!(cut_line(short.clone()), short);
        let exact = "R".repeat(MAX_LINE_BYTES);
        assert_eq!(cut_line(exact.clone()), exact);
        assert_eq!(cut_line("R".repeat(100_000)).len(), MAX_LINE_BYTES + 1);
        // a 3-byte character across the limit: the cut ends after it
        let wide = format!("{}’{}", "R".repeat(MAX_LINE_BYTES - 1), "U".repeat(50));
        let cut = cut_line(wide);
        assert_eq!(cut.len(), MAX_LINE_BYTES + 2);
        assert!(cut.ends_with('’'));
    }

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

    #[test]
    fn the_content_hash_names_the_lines_as_read() {
        let a = ContentHash::of(["R U", "", "F"]);
        assert_eq!(
            a,
            ContentHash::of(read(b" R U \r\n\nF").iter().map(String::as_str))
        );
        assert_ne!(a, ContentHash::of(["R U", "F"]));
        assert_ne!(a, ContentHash::of(["R U", "", "F", ""]));
        // SHA-256 of "R U\n\nF\n", as earlier versions sent it
        let mut plain = Sha256::new();
        plain.update(b"R U\n\nF\n");
        assert_eq!(a, <[u8; 32]>::from(plain.finalize()));
    }
}
