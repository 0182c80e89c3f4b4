//! Building a protocol [`Mode`]: the constructors every sender uses (the CLI's client
//! commands, the worker's conversion of its search modes), so that a client needs nothing but
//! this crate to say what to search for.

use std::time::Duration;

use crate::{mode, DepthLimited, Metric, Mode, Optimal, TwoPhase};

impl Mode {
    /// Two-phase to at most `max_length` moves (HTM; 0 means the coordinator's default).
    pub fn two_phase(max_length: u32) -> Mode {
        Mode::of(mode::Kind::TwoPhase(TwoPhase { max_length }))
    }

    /// A proven shortest solution in `metric`.
    pub fn optimal(metric: Metric) -> Mode {
        Mode::of(mode::Kind::Optimal(Optimal {
            metric: metric as i32,
        }))
    }

    /// The shortest solution within `max_depth` moves of `metric`, or "none within".
    pub fn depth_limited(max_depth: u32, metric: Metric) -> Mode {
        Mode::of(mode::Kind::DepthLimited(DepthLimited {
            max_depth,
            metric: metric as i32,
        }))
    }

    /// This mode with a time budget per position (None: no budget).
    pub fn with_timeout(self, timeout: Option<Duration>) -> Mode {
        Mode {
            timeout_seconds: timeout.map_or(0.0, |t| t.as_secs_f64()),
            ..self
        }
    }

    /// The search `kind` without a time budget.
    fn of(kind: mode::Kind) -> Mode {
        Mode {
            kind: Some(kind),
            timeout_seconds: 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_fill_the_kind_and_the_budget() {
        let m = Mode::depth_limited(7, Metric::Qtm).with_timeout(Some(Duration::from_millis(1500)));
        assert_eq!(m.timeout_seconds, 1.5);
        assert_eq!(
            m.kind,
            Some(mode::Kind::DepthLimited(DepthLimited {
                max_depth: 7,
                metric: Metric::Qtm as i32
            }))
        );
        assert_eq!(Mode::two_phase(18).with_timeout(None).timeout_seconds, 0.0);
    }
}
