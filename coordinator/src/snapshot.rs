//! What the coordinator knows at one moment, read once from [`Core`] and then handed to
//! whoever shows it: the Prometheus collector ([`crate::metrics`]) and the status page
//! ([`crate::http`]). Neither of them reads the core; this is the one place that does.

use std::time::{Duration, Instant};

pub use cubefleet_proto::view::BatchState;
use cubefleet_proto::BatchStatus;

use crate::core::{Core, Counters, Work, WorkerInfo};
use crate::error::Error;
use crate::solve_times::SolveTimes;

/// The coordinator's state at one moment (taken with [`Snapshot::take`]).
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Every batch's progress, oldest first.
    pub batches: Vec<BatchStatus>,
    /// Counters since start.
    pub counters: Counters,
    /// The work no thread searches yet (queued, and waiting in leases) and what is
    /// searched now.
    pub work: Work,
    /// Registered workers, by id.
    pub workers: Vec<(String, WorkerInfo)>,
    /// Search times of accepted results.
    pub solve_times: SolveTimes,
    /// The moment it was taken, on the core's clock ([`Core::clock`]): what the workers'
    /// `last_seen` and the workers' rates are measured against.
    pub now: Instant,
}

impl Snapshot {
    /// Reads the coordinator's state (blocks on the store: call it off the async runtime).
    pub fn take(core: &Core) -> Result<Snapshot, Error> {
        let batches = core.list()?;
        let (counters, _) = core.counters();
        Ok(Snapshot {
            batches,
            counters,
            work: core.work(),
            workers: core.workers(),
            solve_times: core.solve_times(),
            now: core.clock().now(),
        })
    }

    /// How long ago `then` (an instant of the core's clock, such as a worker's `last_seen`)
    /// was when the snapshot was taken (0 for a later one).
    pub fn ago(&self, then: Instant) -> Duration {
        self.now.saturating_duration_since(then)
    }

    /// Jobs no thread searches yet: queued, unmade lines of range and sample batches, and
    /// leased jobs waiting in a worker ([`Work`]).
    pub fn queue_depth(&self) -> u64 {
        self.work.queued + self.work.waiting
    }

    /// Estimated thread-seconds of the work no thread searches yet: each batch's jobs at its
    /// own mean search time ([`Work::seconds`]), the autoscaling signal.
    pub fn queued_work_seconds(&self) -> f64 {
        self.work.seconds
    }

    /// Jobs per state over all batches: queued, leased, done, invalid, cancelled, failed.
    pub fn jobs_by_state(&self) -> [(&'static str, u64); 6] {
        let mut n = [0u64; 6];
        for b in &self.batches {
            for (i, v) in [b.queued, b.leased, b.done, b.invalid, b.cancelled, b.failed]
                .into_iter()
                .enumerate()
            {
                n[i] += v;
            }
        }
        [
            ("queued", n[0]),
            ("leased", n[1]),
            ("done", n[2]),
            ("invalid", n[3]),
            ("cancelled", n[4]),
            ("failed", n[5]),
        ]
    }

    /// Batches per state, in the order of [`BatchState::ALL`].
    pub fn batches_by_state(&self) -> [(BatchState, u64); 3] {
        BatchState::ALL.map(|s| {
            let n = self.batches.iter().filter(|b| BatchState::of(b) == s);
            (s, n.count() as u64)
        })
    }

    /// Solution lengths over all batches: count per length (index = length).
    pub fn length_histogram(&self) -> Vec<u64> {
        let mut h: Vec<u64> = Vec::new();
        for b in &self.batches {
            if h.len() < b.length_histogram.len() {
                h.resize(b.length_histogram.len(), 0);
            }
            for (i, &c) in b.length_histogram.iter().enumerate() {
                h[i] += c;
            }
        }
        h
    }
}
