//! The distribution of a benchmark's per-position figures (seconds, milliseconds, nodes): mean,
//! nearest-rank percentiles and maximum. `cubefleet bench optimal` and `cubefleet bench
//! twophase` both report through [`Distribution`], so their percentiles mean the same thing.

/// The percentiles a [`Distribution`] reports, in percent, ascending.
pub const PERCENTILES: [u32; 4] = [10, 50, 90, 99];

/// The nearest-rank `p`-th percentile of `sorted` (ascending): the smallest value such that at
/// least `p` % of the values are at or below it, i.e. `sorted[ceil(p * n / 100) - 1]`, and the
/// minimum for `p == 0`. It is always one of the values (never an interpolation between two):
/// for an even `n` the 50th percentile is the lower of the two middle values.
///
/// `None` when `sorted` is empty or `p > 100`. `sorted` must be in ascending order (not
/// checked; the answer is then some element, but not the percentile).
pub fn nearest_rank<T: Copy>(sorted: &[T], p: u32) -> Option<T> {
    if sorted.is_empty() || p > 100 {
        return None;
    }
    let n = sorted.len();
    // ceil(p * n / 100) in integers (p <= 100, so p * n cannot overflow before n does)
    let rank = (p as usize * n).div_ceil(100).max(1);
    Some(sorted[rank - 1])
}

/// True when the nearest-rank `p`-th percentile of `n` values is a rank below the maximum's,
/// i.e. `ceil(p * n / 100) < n`, which holds exactly when `n >= 100 / (100 - p)`: 2 values for
/// the 50th, 10 for the 90th, 100 for the 99th. Below that the percentile would only repeat the
/// maximum, so [`Distribution`] leaves it out.
pub fn resolves(n: usize, p: u32) -> bool {
    p < 100 && (p as usize * n).div_ceil(100) < n
}

/// Mean, percentiles ([`PERCENTILES`], nearest rank) and maximum of a sample.
///
/// Invariants: `percentiles[i]` is the [`PERCENTILES`]`[i]`-th percentile of the values, `None`
/// exactly when `n` does not resolve it ([`resolves`]); every present percentile is one of the
/// values, and they are ascending and at most `max`. For an empty sample `n`, `mean` and `max`
/// are 0 and every percentile is `None`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Distribution {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// The [`PERCENTILES`], in the same order.
    pub percentiles: [Option<f64>; PERCENTILES.len()],
    /// The largest value.
    pub max: f64,
}

impl Distribution {
    /// The distribution of `values` (any order; NaNs sort last, by [`f64::total_cmp`]).
    pub fn of(values: &[f64]) -> Distribution {
        if values.is_empty() {
            return Distribution::default();
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        Distribution {
            n,
            mean: sorted.iter().sum::<f64>() / n as f64,
            percentiles: PERCENTILES.map(|p| {
                if resolves(n, p) {
                    nearest_rank(&sorted, p)
                } else {
                    None
                }
            }),
            max: sorted[n - 1],
        }
    }

    /// The `p`-th percentile when it is one of [`PERCENTILES`] and `n` resolves it.
    pub fn percentile(&self, p: u32) -> Option<f64> {
        PERCENTILES
            .iter()
            .position(|&q| q == p)
            .and_then(|i| self.percentiles[i])
    }

    /// The median (the nearest-rank 50th percentile); the single value when `n` is 1, 0 when
    /// empty.
    pub fn median(&self) -> f64 {
        self.percentile(50).unwrap_or(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_picks_the_ceiling_rank() {
        let v: Vec<u32> = (1..=10).collect();
        assert_eq!(nearest_rank(&v, 0), Some(1));
        assert_eq!(nearest_rank(&v, 10), Some(1));
        assert_eq!(nearest_rank(&v, 11), Some(2));
        assert_eq!(
            nearest_rank(&v, 50),
            Some(5),
            "lower middle value for an even n"
        );
        assert_eq!(nearest_rank(&v, 90), Some(9));
        assert_eq!(nearest_rank(&v, 91), Some(10));
        assert_eq!(nearest_rank(&v, 99), Some(10));
        assert_eq!(nearest_rank(&v, 100), Some(10));
        assert_eq!(nearest_rank(&v, 101), None);
        assert_eq!(nearest_rank::<u32>(&[], 50), None);
        // the textbook example: 15, 20, 35, 40, 50
        let w = [15, 20, 35, 40, 50];
        assert_eq!(
            [5, 30, 40, 50, 100].map(|p| nearest_rank(&w, p)),
            [Some(15), Some(20), Some(20), Some(35), Some(50)]
        );
        let h: Vec<u32> = (1..=1000).collect();
        assert_eq!(nearest_rank(&h, 99), Some(990));
        assert_eq!(nearest_rank(&h, 50), Some(500));
    }

    #[test]
    fn resolves_from_100_over_100_minus_p() {
        assert!(!resolves(99, 99) && resolves(100, 99));
        assert!(!resolves(9, 90) && resolves(10, 90));
        assert!(!resolves(1, 50) && resolves(2, 50));
        assert!(!resolves(1, 10) && resolves(2, 10));
        assert!(!resolves(0, 10) && !resolves(1000, 100));
    }

    #[test]
    fn distribution_of_a_sample() {
        // 1..=100 in reverse: the order of the input does not matter
        let v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let d = Distribution::of(&v);
        assert_eq!(d.n, 100);
        assert_eq!(d.mean, 50.5);
        assert_eq!(
            d.percentiles,
            [Some(10.0), Some(50.0), Some(90.0), Some(99.0)]
        );
        assert_eq!(d.max, 100.0);
        assert_eq!(d.median(), 50.0);

        let small = Distribution::of(&[3.0, 1.0, 2.0]);
        assert_eq!(small.percentiles, [Some(1.0), Some(2.0), None, None]);
        assert_eq!((small.mean, small.max, small.median()), (2.0, 3.0, 2.0));
        assert_eq!(Distribution::of(&[7.0]).median(), 7.0);
        assert_eq!(Distribution::of(&[]), Distribution::default());
        assert_eq!(Distribution::of(&[]).median(), 0.0);
    }
}
