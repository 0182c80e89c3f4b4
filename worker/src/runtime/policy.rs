//! How much a worker holds, leases and reports at once, and how it waits for a coordinator
//! that does not answer: the figures and rules of the runtime's invariants (the module doc of
//! [`super`]), free of I/O and unit-tested.

use std::time::Duration;

/// Search time per thread a worker aims to hold in leased jobs.
pub const HELD_WORK: Duration = Duration::from_secs(2);

/// How long an idle worker's lease waits for jobs to be queued (a long poll, so that new work
/// starts at once instead of at the next poll).
pub const IDLE_LEASE_WAIT: Duration = Duration::from_secs(5);

/// Most jobs a worker holds at once.
pub const MAX_HELD: usize = 4000;

/// How long an idle worker waits before it asks again when a lease came back empty at once
/// (a coordinator that does not long-poll), unless told to stop: it does not ask in a busy
/// loop, and still starts new work within a fraction of a second.
pub const IDLE_PAUSE: Duration = Duration::from_millis(200);

/// Weight of the newest finished job in the mean job time (an exponentially weighted mean):
/// about the last ten jobs count, so the capacity follows a batch whose jobs get slower
/// within a few reports and one slow job does not swing it.
pub(super) const MEAN_JOB_WEIGHT: f64 = 0.1;

/// How many jobs to hold: [`HELD_WORK`] per thread at the mean job time `mean` (seconds), at
/// least two per thread, at most [`MAX_HELD`]. Before any job finished, two per thread.
pub(super) fn capacity(threads: usize, mean: Option<f64>) -> usize {
    let floor = 2 * threads.max(1);
    match mean {
        Some(m) if m > 0.0 => {
            let want = threads.max(1) as f64 * HELD_WORK.as_secs_f64() / m;
            (want as usize).clamp(floor, MAX_HELD.max(floor))
        }
        _ => floor,
    }
}

/// Exponential backoff with jitter, for calls to an unreachable coordinator (backon's): waits
/// of [`Backoff::FIRST`] doubling up to [`Backoff::MAX`], each lengthened by a random part of
/// itself (up to all of it) so that many workers do not retry in step; it never runs out.
pub struct Backoff(backon::ExponentialBackoff);

impl Default for Backoff {
    /// A backoff whose next wait is the first one.
    fn default() -> Self {
        use backon::BackoffBuilder;
        Backoff(
            backon::ExponentialBuilder::new()
                .with_min_delay(Self::FIRST)
                .with_max_delay(Self::MAX)
                .with_factor(2.0)
                .with_jitter()
                .without_max_times()
                .build(),
        )
    }
}

impl Backoff {
    /// The first wait (before its jitter): a coordinator that restarts is usually back
    /// within it or a few of its doublings.
    pub const FIRST: Duration = Duration::from_millis(100);
    /// The longest wait before its jitter: a coordinator back after a long outage is seen
    /// within twice it.
    pub const MAX: Duration = Duration::from_secs(10);

    /// Back to the first wait (after a call succeeded).
    pub fn reset(&mut self) {
        *self = Backoff::default();
    }

    /// The next wait: `base` doubling from [`Backoff::FIRST`] up to [`Backoff::MAX`], then
    /// somewhere in `base..2 * base`.
    pub fn step(&mut self) -> Duration {
        self.0.next().unwrap_or(Self::MAX)
    }
}

/// Most jobs one lease asks for once `leased` jobs were leased: two per thread at first, then
/// up to [`LEASE_GROWTH`] times the jobs leased so far. The threads start on a few jobs at
/// once instead of waiting while the first full group is read from the store, and the groups
/// grow to the capacity within a few leases.
pub(super) fn first_leases(threads: usize, leased: u64) -> usize {
    let grown = usize::try_from(leased.saturating_mul(LEASE_GROWTH)).unwrap_or(usize::MAX);
    (2 * threads.max(1)).max(grown)
}

/// How fast the leases of a starting worker grow ([`first_leases`]).
const LEASE_GROWTH: u64 = 4;

/// How many results are reported together: half the capacity, or half the jobs still held
/// when that is fewer (at least 1). When the queue runs dry the groups halve with the work
/// left, so the last one is a job or two: the threads do not finish long before the results
/// are reported.
pub(super) fn report_group(capacity: usize, held: usize) -> usize {
    capacity.div_ceil(2).min(held.div_ceil(2).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_start_small_and_grow_geometrically() {
        // two threads: 4 jobs first, then four times the jobs leased so far
        let mut leased = 0u64;
        let mut sizes = Vec::new();
        while leased < 4000 {
            let n = first_leases(2, leased).min(capacity(2, Some(1e-4)));
            sizes.push(n);
            leased += n as u64;
        }
        assert_eq!(sizes[..4], [4, 16, 80, 400]);
        assert!(sizes.len() <= 7, "{sizes:?}");
    }

    #[test]
    fn report_groups_halve_with_the_work_held() {
        assert_eq!(report_group(4000, 4000), 2000);
        assert_eq!(report_group(4000, 1427), 714);
        assert_eq!(report_group(4000, 2), 1);
        assert_eq!(report_group(4000, 0), 1);
        assert_eq!(report_group(4, 4), 2);
    }
}
