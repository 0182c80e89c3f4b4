//! A batch's mode (what search answers its lines): the defaults a submission's mode gets, the
//! key naming which results answer the same question, and the metric lengths are counted in.
//! Read by the core (intake, dedup, leases, completion) and by [`crate::verify`].

use cubefleet_proto::{mode, Metric, Mode, TwoPhase, DEFAULT_MAX_LENGTH};

use crate::error::Error;

/// Fills defaults (two-phase with [`DEFAULT_MAX_LENGTH`] moves) and refuses any field out of its range
/// ([`crate::limits::check_mode`]).
pub(crate) fn normalize_mode(mut m: Mode) -> Result<Mode, Error> {
    crate::limits::check_mode(&m)?;
    match &mut m.kind {
        None => {
            m.kind = Some(mode::Kind::TwoPhase(TwoPhase {
                max_length: DEFAULT_MAX_LENGTH,
            }))
        }
        Some(mode::Kind::TwoPhase(t)) if t.max_length == 0 => t.max_length = DEFAULT_MAX_LENGTH,
        _ => {}
    }
    Ok(m)
}

/// A short key naming what a result answers (two results with equal keys are interchangeable):
/// the kind, its whole target or depth, and its metric as [`metric_of`] reads it, so no two
/// questions share a key (a value is never cut to fit) and the two spellings of HTM share one.
pub(crate) fn mode_key(m: &Mode) -> Vec<u8> {
    let metric = metric_of(m) as u8;
    let (kind, n) = match &m.kind {
        Some(mode::Kind::TwoPhase(t)) => (1, t.max_length),
        Some(mode::Kind::Optimal(_)) => (2, 0),
        Some(mode::Kind::DepthLimited(d)) => (3, d.max_depth),
        None => (0, 0),
    };
    let mut key = vec![kind];
    key.extend_from_slice(&n.to_le_bytes());
    key.push(metric);
    key
}

/// The metric of a mode (HTM unless it says otherwise).
pub(crate) fn metric_of(mode: &Mode) -> Metric {
    match &mode.kind {
        Some(mode::Kind::Optimal(o)) => Metric::try_from(o.metric),
        Some(mode::Kind::DepthLimited(d)) => Metric::try_from(d.metric),
        _ => Ok(Metric::Htm),
    }
    .ok()
    .filter(|&m| m == Metric::Qtm)
    .unwrap_or(Metric::Htm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubefleet_proto::{DepthLimited, Optimal};

    /// No two questions share a key (a target is never cut to a byte), and the two spellings
    /// of HTM (unspecified and HTM) share one.
    #[test]
    fn keys_name_whole_questions() {
        let tp = |max_length| Mode {
            kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length })),
            ..Mode::default()
        };
        let dl = |max_depth, metric| Mode {
            kind: Some(mode::Kind::DepthLimited(DepthLimited { max_depth, metric })),
            ..Mode::default()
        };
        let opt = |metric| Mode {
            kind: Some(mode::Kind::Optimal(Optimal { metric })),
            ..Mode::default()
        };
        let keys = [
            mode_key(&tp(255)),
            mode_key(&tp(256)),
            mode_key(&tp(u32::MAX)),
            mode_key(&dl(1, 1)),
            mode_key(&dl(1, 2)),
            mode_key(&dl(257, 1)),
            mode_key(&opt(1)),
            mode_key(&opt(2)),
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[..i] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(mode_key(&opt(0)), mode_key(&opt(1)));
        assert_eq!(mode_key(&dl(3, 0)), mode_key(&dl(3, 1)));
    }
}
