//! Numbers and durations in words, as the status page writes them.

pub(super) use cubefleet_proto::view::number;

/// A duration in words: `45 s`, `12 min`, `3.5 h`, `2.1 d`.
pub(super) fn duration_text(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        "—".into()
    } else if seconds < 10.0 {
        format!("{} s", number(seconds))
    } else if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 90.0 * 60.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 48.0 * 3600.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} d", seconds / 86400.0)
    }
}

/// A count with thin separators: `1 234 567`.
pub(super) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut s = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            s.push('\u{202f}');
        }
        s.push(ch);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_for_numbers() {
        assert_eq!(count(1234567), "1\u{202f}234\u{202f}567");
        assert_eq!(count(999), "999");
        assert_eq!(duration_text(30.0), "30 s");
        assert_eq!(duration_text(0.07), "0.07 s");
        assert_eq!(duration_text(600.0), "10 min");
        assert_eq!(duration_text(7200.0), "2.0 h");
    }
}
