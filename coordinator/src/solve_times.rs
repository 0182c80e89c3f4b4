//! Search times of accepted results: a histogram since start and a mean over the most
//! recent ones. The core records them; the queued-work estimate, the status page and the
//! metrics read them.

use std::collections::VecDeque;

/// Upper bounds (seconds) of the solve-time histogram buckets; `+Inf` follows.
pub const SOLVE_BUCKETS: [f64; 16] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0,
    7200.0,
];

/// Largest solution length with its own histogram bucket (`le="0"` .. `le="30"`, then `+Inf`).
pub const MAX_LENGTH_BUCKET: usize = 30;

/// Search time assumed per job before any result came in (seconds): the queued-work estimate
/// must not be zero while jobs wait, or an autoscaler at zero workers would never start one.
pub const DEFAULT_SOLVE_SECONDS: f64 = 1.0;

/// How many recent results the mean search time is taken over.
const RECENT: usize = 256;

/// Results a batch's mean search time is weighted over ([`BatchMean`]): about this many of
/// its latest count, so the mean follows a batch whose jobs get slower.
const BATCH_WINDOW: u64 = 32;

/// One batch's mean search time, seconds: the plain mean of its first [`BATCH_WINDOW`]
/// accepted results, then an exponentially weighted mean. Unknown (None) before its first:
/// a batch is never sized by another batch's times.
#[derive(Clone, Copy, Debug, Default)]
pub struct BatchMean {
    /// Results observed.
    count: u64,
    /// The mean so far, seconds (meaningless while `count` is 0).
    mean: f64,
}

impl BatchMean {
    /// Records one search time, in seconds (negative or NaN count as 0).
    pub fn observe(&mut self, seconds: f64) {
        let s = if seconds.is_finite() && seconds > 0.0 {
            seconds
        } else {
            0.0
        };
        self.count += 1;
        self.mean += (s - self.mean) / self.count.min(BATCH_WINDOW) as f64;
    }

    /// The mean, seconds; None before the first result.
    pub fn get(&self) -> Option<f64> {
        (self.count > 0).then_some(self.mean)
    }
}

/// Search times of accepted results: a histogram since start and the most recent ones.
#[derive(Clone, Debug, Default)]
pub struct SolveTimes {
    /// Per bucket of [`SOLVE_BUCKETS`] plus one for `+Inf`; not cumulative. Empty until the
    /// first observation.
    buckets: Vec<u64>,
    /// Sum of all observations, seconds.
    sum: f64,
    /// Number of observations.
    count: u64,
    /// The last [`RECENT`] observations, seconds.
    recent: VecDeque<f64>,
}

impl SolveTimes {
    /// Records one search time, in milliseconds (negative or NaN count as 0).
    pub fn observe(&mut self, millis: f64) {
        let s = if millis.is_finite() && millis > 0.0 {
            millis / 1000.0
        } else {
            0.0
        };
        if self.buckets.is_empty() {
            self.buckets = vec![0; SOLVE_BUCKETS.len() + 1];
        }
        let i = SOLVE_BUCKETS
            .iter()
            .position(|&b| s <= b)
            .unwrap_or(SOLVE_BUCKETS.len());
        self.buckets[i] += 1;
        self.sum += s;
        self.count += 1;
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(s);
    }

    /// Number of observations since start.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sum of all observations since start, seconds.
    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// Mean of the recent observations, seconds; `None` before the first.
    pub fn recent_mean(&self) -> Option<f64> {
        if self.recent.is_empty() {
            None
        } else {
            Some(self.recent.iter().sum::<f64>() / self.recent.len() as f64)
        }
    }

    /// The mean search time the queued-work estimate uses: the recent mean, or
    /// [`DEFAULT_SOLVE_SECONDS`] before any result.
    pub fn estimate(&self) -> f64 {
        self.recent_mean().unwrap_or(DEFAULT_SOLVE_SECONDS)
    }

    /// Counts per bucket bound, not cumulative (`+Inf` last, as `f64::INFINITY`).
    pub fn per_bucket(&self) -> Vec<(f64, u64)> {
        SOLVE_BUCKETS
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .enumerate()
            .map(|(i, le)| (le, self.buckets.get(i).copied().unwrap_or(0)))
            .collect()
    }

    /// Cumulative counts per bucket bound (`+Inf` last, as `f64::INFINITY`).
    pub fn cumulative(&self) -> Vec<(f64, u64)> {
        let mut acc = 0;
        SOLVE_BUCKETS
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .enumerate()
            .map(|(i, le)| {
                acc += self.buckets.get(i).copied().unwrap_or(0);
                (le, acc)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solve_times_buckets_and_mean() {
        let mut s = SolveTimes::default();
        assert_eq!(s.estimate(), DEFAULT_SOLVE_SECONDS);
        s.observe(3.0); // 0.003 s -> first bucket
        s.observe(2000.0); // 2 s -> le 2.5
        s.observe(f64::NAN);
        let c = s.cumulative();
        assert_eq!(c[0], (0.005, 2));
        assert_eq!(c.last().copied(), Some((f64::INFINITY, 3)));
        assert_eq!(s.count(), 3);
        let mean = s.recent_mean().unwrap_or_default();
        assert!((mean - 2.003 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn recent_mean_forgets_old_results() {
        let mut s = SolveTimes::default();
        for _ in 0..RECENT {
            s.observe(10_000.0);
        }
        for _ in 0..RECENT {
            s.observe(1000.0);
        }
        assert!((s.estimate() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_batch_mean_is_unknown_until_its_first_result_and_follows_its_latest() {
        let mut m = BatchMean::default();
        assert_eq!(m.get(), None);
        m.observe(0.001);
        m.observe(f64::NAN);
        assert_eq!(m.get(), Some(0.0005));
        for _ in 0..10 * BATCH_WINDOW {
            m.observe(3.0);
        }
        assert!((m.get().unwrap_or_default() - 3.0).abs() < 1e-3);
    }
}
