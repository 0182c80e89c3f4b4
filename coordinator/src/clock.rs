//! The coordinator's clock: the one source of the time [`crate::Core`] measures (leases'
//! deadlines and ages, when workers last called and asked for work, the grace of returned
//! jobs, the batches' rates) and the [`crate::snapshot`] shows (how long ago a worker called,
//! the workers' rates).
//!
//! [`Clock::system`] is the monotonic system clock, what a coordinator runs on. A
//! [`ManualClock`] stands still until its holder advances it, so a test moves time past a
//! lease or a grace exactly, and at once, instead of sleeping for it.
//!
//! Invariants: a clock never goes back ([`Clock::now`] is monotonic, as [`Instant`] is); every
//! reading of the time in the core goes through the core's clock, so the instants it keeps
//! compare only with instants of the same clock; the timers of the async tasks (the lease
//! sweeper's period, a long-polling lease's wait, a progress stream's period) are tokio's and
//! not this clock: they say when to look, the clock says what expired.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A source of the time (cheap to clone: clones read the same time).
#[derive(Clone, Debug, Default)]
pub struct Clock(Source);

/// Where a [`Clock`] reads the time.
#[derive(Clone, Debug, Default)]
enum Source {
    /// The system's monotonic clock.
    #[default]
    System,
    /// A clock that moves only when advanced.
    Manual(Arc<Manual>),
}

/// The state of a manual clock: the instant it was made at, and how far it was advanced.
#[derive(Debug)]
struct Manual {
    /// The system's time when the clock was made: its time before any advance.
    base: Instant,
    /// Nanoseconds advanced since (only grows).
    offset: AtomicU64,
}

impl Clock {
    /// The system's monotonic clock.
    pub fn system() -> Clock {
        Clock(Source::System)
    }

    /// The time now.
    pub fn now(&self) -> Instant {
        match &self.0 {
            Source::System => Instant::now(),
            Source::Manual(m) => m.base + Duration::from_nanos(m.offset.load(Ordering::Acquire)),
        }
    }

    /// The time passed since `then` (0 when `then` is later than now).
    pub fn since(&self, then: Instant) -> Duration {
        self.now().saturating_duration_since(then)
    }
}

/// A clock that stands still until advanced ([`ManualClock::advance`]), for tests: give its
/// [`ManualClock::clock`] to the coordinator, and move the time from the test.
#[derive(Clone, Debug)]
pub struct ManualClock(Arc<Manual>);

impl ManualClock {
    /// A clock standing at the system's time now.
    pub fn new() -> ManualClock {
        ManualClock(Arc::new(Manual {
            base: Instant::now(),
            offset: AtomicU64::new(0),
        }))
    }

    /// Moves the time on by `by` (every clone and every [`Clock`] of it sees the new time).
    pub fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.0.offset.fetch_add(nanos, Ordering::AcqRel);
    }

    /// The clock to read this time from.
    pub fn clock(&self) -> Clock {
        Clock(Source::Manual(self.0.clone()))
    }

    /// The time now.
    pub fn now(&self) -> Instant {
        self.clock().now()
    }
}

impl Default for ManualClock {
    fn default() -> ManualClock {
        ManualClock::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_advanced_and_its_clones_follow() {
        let manual = ManualClock::new();
        let clock = manual.clock();
        let t0 = clock.now();
        std::thread::yield_now();
        assert_eq!(clock.now(), t0, "stands still");
        manual.advance(Duration::from_millis(1500));
        assert_eq!(clock.now(), t0 + Duration::from_millis(1500));
        assert_eq!(clock.clone().since(t0), Duration::from_millis(1500));
        assert_eq!(manual.now(), clock.now());
        // an instant later than now is no time ago
        assert_eq!(clock.since(t0 + Duration::from_secs(9)), Duration::ZERO);
    }

    #[test]
    fn the_system_clock_goes_on() {
        let clock = Clock::system();
        let t0 = clock.now();
        assert!(clock.now() >= t0);
        assert!(Clock::default().now() >= t0);
    }
}
