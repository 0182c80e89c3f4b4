//! Texts that others chose (a worker's name, a batch id or name, a revoked name), made safe
//! for a log line: nothing a caller sends may start a new line, move the cursor or pass for
//! another field. Log such a text as `field = %logsafe::text(&value)` (or with `?field`,
//! Debug formatting, which quotes and escapes alike); never with `%field` of the raw string.
//!
//! [`text`] writes every character the way Rust's `char::escape_debug` does (a newline as
//! `\n`, a control character as `\u{1b}`, a quote as `\"`), inside double quotes, and cuts a
//! text longer than [`MAX_LOGGED`] bytes, so one log line stays one line of bounded length
//! whatever the caller sent.

use std::fmt;

/// Most bytes of one caller-chosen text written to a log line (longer ones end in `...`).
pub const MAX_LOGGED: usize = 256;

/// A caller-chosen text as it is written to a log line: quoted, escaped, cut (see the module
/// doc). Made by [`text`].
#[derive(Clone, Copy)]
pub struct Text<'a>(&'a str);

/// `value`, for a log line: `tracing::warn!(worker = %logsafe::text(&name), "...")`.
pub fn text(value: &str) -> Text<'_> {
    Text(value)
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write as _;
        f.write_char('"')?;
        for (at, c) in self.0.char_indices() {
            if at + c.len_utf8() > MAX_LOGGED {
                f.write_str("...")?;
                break;
            }
            for e in c.escape_debug() {
                f.write_char(e)?;
            }
        }
        f.write_char('"')
    }
}

impl fmt::Debug for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_stays_on_one_line_quoted_and_escaped() {
        let forged = "w1\" level=ERROR\nFORGED line\r\u{1b}[2J";
        let out = text(forged).to_string();
        assert!(!out.contains('\n') && !out.contains('\r') && !out.contains('\u{1b}'));
        assert_eq!(out, "\"w1\\\" level=ERROR\\nFORGED line\\r\\u{1b}[2J\"");
        assert_eq!(text("plain").to_string(), "\"plain\"");
    }

    #[test]
    fn a_long_text_is_cut_at_a_character_boundary() {
        let out = text(&"é".repeat(1000)).to_string();
        assert!(out.len() <= MAX_LOGGED + 5, "{}", out.len());
        assert!(out.ends_with("...\""), "{out}");
    }
}
