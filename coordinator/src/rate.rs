//! Rates: how fast a count grows, over the last [`WINDOW`]. The one computation of the batch
//! rates (`BatchStatus.rate`, hence the ETA) and the worker throughputs of the status page.
//!
//! Invariants: samples are recorded by whoever changes or watches the count
//! ([`Rate::record`]), never by a reader; [`Rate::per_second`] only reads, so reading a
//! status changes nothing (how often anyone looks does not change what they see). A rate is 0 until the samples span at least [`MIN_SPAN`]
//! (a shorter span says nothing), and it counts only samples of the last [`WINDOW`].

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The window a rate is measured over.
pub(crate) const WINDOW: Duration = Duration::from_secs(60);

/// The shortest span of samples a rate is computed from.
pub(crate) const MIN_SPAN: Duration = Duration::from_millis(500);

/// Samples closer than this to the last one are not kept (a count that changes a million
/// times a minute keeps at most a few hundred samples).
const RESOLUTION: Duration = Duration::from_millis(250);

/// (time, count) samples of one growing count, oldest first, none older than [`WINDOW`] at
/// the last record.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rate {
    samples: VecDeque<(Instant, u64)>,
}

impl Rate {
    /// Records that the count is `n` at `now` (kept unless the last sample is less than
    /// [`RESOLUTION`] old); forgets samples older than [`WINDOW`].
    pub(crate) fn record(&mut self, now: Instant, n: u64) {
        while self
            .samples
            .front()
            .is_some_and(|(t, _)| now.duration_since(*t) > WINDOW)
        {
            self.samples.pop_front();
        }
        if self
            .samples
            .back()
            .is_none_or(|(t, _)| now.duration_since(*t) >= RESOLUTION)
        {
            self.samples.push_back((now, n));
        }
    }

    /// Growth per second of the count, `n` at `now`, since the oldest sample of the last
    /// [`WINDOW`]; 0 when that sample is less than [`MIN_SPAN`] old, or there is none.
    pub(crate) fn per_second(&self, now: Instant, n: u64) -> f64 {
        let oldest = self
            .samples
            .iter()
            .find(|(t, _)| now.duration_since(*t) <= WINDOW);
        match oldest {
            Some(&(t, first)) if now.duration_since(t) >= MIN_SPAN => {
                n.saturating_sub(first) as f64 / now.duration_since(t).as_secs_f64()
            }
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_reads_the_window_without_changing_it() {
        let t0 = Instant::now();
        let mut r = Rate::default();
        assert_eq!(r.per_second(t0, 10), 0.0);
        r.record(t0, 0);
        // too short a span says nothing
        assert_eq!(r.per_second(t0 + Duration::from_millis(400), 10), 0.0);
        let t = t0 + Duration::from_secs(10);
        assert_eq!(r.per_second(t, 50), 5.0);
        assert_eq!(r.per_second(t, 50), 5.0, "a read changed the rate");
        // samples too close together are not kept; old ones leave the window
        r.record(t0 + Duration::from_millis(100), 1);
        assert_eq!(r.samples.len(), 1);
        r.record(t0 + Duration::from_secs(30), 100);
        let late = t0 + Duration::from_secs(70);
        assert_eq!(r.per_second(late, 500), 400.0 / 40.0);
        r.record(late, 500);
        assert_eq!(r.samples.len(), 2);
        // nothing within the window: no rate
        assert_eq!(r.per_second(late + Duration::from_secs(61), 900), 0.0);
    }
}
