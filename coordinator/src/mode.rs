//! A batch's mode (what search answers its lines): the defaults a submission's mode gets, the
//! key naming which results answer the same question, and the metric lengths are counted in.
//! Read by the core (intake, dedup, leases, completion) and by [`crate::verify`].

use cubefleet_proto::{mode, Metric, Mode, TwoPhase};

use crate::error::Error;

/// Fills defaults (two-phase with 20 moves) and refuses nonsense.
pub(crate) fn normalize_mode(mut m: Mode) -> Result<Mode, Error> {
    match &mut m.kind {
        None => m.kind = Some(mode::Kind::TwoPhase(TwoPhase { max_length: 20 })),
        Some(mode::Kind::TwoPhase(t)) if t.max_length == 0 => t.max_length = 20,
        Some(mode::Kind::DepthLimited(d)) if d.max_depth > 40 => {
            return Err(Error::InvalidArgument("max_depth above 40".into()))
        }
        _ => {}
    }
    if m.timeout_seconds < 0.0 || !m.timeout_seconds.is_finite() {
        return Err(Error::InvalidArgument(
            "timeout must be a positive number".into(),
        ));
    }
    Ok(m)
}

/// A short key naming what a result answers (two results with equal keys are interchangeable).
pub(crate) fn mode_key(m: &Mode) -> Vec<u8> {
    match &m.kind {
        Some(mode::Kind::TwoPhase(t)) => vec![1, t.max_length.min(255) as u8],
        Some(mode::Kind::Optimal(o)) => vec![2, o.metric as u8],
        Some(mode::Kind::DepthLimited(d)) => vec![3, d.max_depth.min(255) as u8, d.metric as u8],
        None => vec![0],
    }
}

/// The metric of a mode (HTM unless it says otherwise).
pub(crate) fn metric_of(mode: &Mode) -> Metric {
    match &mode.kind {
        Some(mode::Kind::Optimal(o)) => Metric::try_from(o.metric).unwrap_or(Metric::Htm),
        Some(mode::Kind::DepthLimited(d)) => Metric::try_from(d.metric).unwrap_or(Metric::Htm),
        _ => Metric::Htm,
    }
}
