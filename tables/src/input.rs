//! What one line of input is, the same for every command (`solve`, `run`, `submit`) and for
//! the coordinator that stores the lines: how long it may be, and which lines hold no
//! position (blank lines and `#` comments).
//!
//! How a line that holds a position is read (facelets or moves) is [`crate::parse_position`]'s
//! rule, [`crate::facelet::looks_like_facelets`].

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
}
