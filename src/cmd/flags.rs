//! The value parsers of the numeric flags: every number a command takes is checked when the
//! command line is read, before any table is loaded or any work starts, so a value out of its
//! range (`nan`, `inf`, negative, zero where that means nothing, absurdly large) is a clap
//! error naming the flag and the range, never a panic deep in the work.

// The longest time any flag takes, in seconds: a year (the mode type's limit). Longer values
// would mean "never"; the time flags that allow that say so by being left out.
use cubefleet_proto::question::MAX_SECONDS;

/// The most threads a command runs its searches on.
pub(crate) const MAX_THREADS: usize = 1024;

/// A number of seconds in `least..=MAX_SECONDS` (`least` itself excluded when `open`).
fn seconds_from(text: &str, least: f64, open: bool) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    let above = if open { v > least } else { v >= least };
    if v.is_finite() && above && v <= MAX_SECONDS {
        Ok(v)
    } else {
        let from = if open { "more than" } else { "at least" };
        Err(format!(
            "`{text}` seconds: give a number {from} {least} and at most {MAX_SECONDS} (a year)"
        ))
    }
}

/// A time budget (`--timeout`): more than 0 seconds, at most [`MAX_SECONDS`].
pub(crate) fn timeout(text: &str) -> Result<f64, String> {
    seconds_from(text, 0.0, true)
}

/// A lease (`--lease`): at least 1 second (shorter ones would expire between two heartbeats),
/// at most [`MAX_SECONDS`].
pub(crate) fn lease(text: &str) -> Result<f64, String> {
    seconds_from(text, 1.0, false)
}

/// A grace period (`--grace`): 0 (hand running jobs back at once) up to [`MAX_SECONDS`].
pub(crate) fn grace(text: &str) -> Result<f64, String> {
    seconds_from(text, 0.0, false)
}

/// A thread count (`--threads`): 1 to [`MAX_THREADS`].
pub(crate) fn threads(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{text}` threads: give a whole number from 1 to {MAX_THREADS}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_values_are_refused() {
        for bad in ["nan", "NaN", "inf", "-inf", "-1", "0", "1e300", "x", ""] {
            assert!(timeout(bad).is_err(), "{bad}");
            assert!(lease(bad).is_err(), "{bad}");
            assert!(threads(bad).is_err(), "{bad}");
        }
        assert_eq!(timeout("0.5"), Ok(0.5));
        assert_eq!(lease("1"), Ok(1.0));
        assert!(lease("0.5").is_err());
        assert_eq!(grace("0"), Ok(0.0));
        assert!(grace("-1").is_err() && grace("inf").is_err() && grace("nan").is_err());
        assert_eq!(threads("4"), Ok(4));
        assert!(threads("1025").is_err() && threads("18446744073709551616").is_err());
    }
}
