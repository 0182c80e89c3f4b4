//! What the coordinator knows at one moment, read once from [`Core`] and then handed to
//! whoever shows it: the Prometheus collector ([`crate::metrics`]) and the status page
//! ([`crate::http`]). Neither of them reads the core; this is the one place that does.

use cubefleet_proto::BatchStatus;

use crate::core::{Core, Counters, WorkerInfo};
use crate::error::Error;
use crate::solve_times::SolveTimes;

/// The coordinator's state at one moment (taken with [`Snapshot::take`]).
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Every batch's progress, oldest first.
    pub batches: Vec<BatchStatus>,
    /// Counters since start.
    pub counters: Counters,
    /// Jobs queued (not leased).
    pub queue_depth: usize,
    /// Registered workers, by id.
    pub workers: Vec<(String, WorkerInfo)>,
    /// Search times of accepted results.
    pub solve_times: SolveTimes,
}

/// Where a batch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchState {
    /// Some of its jobs are queued or leased.
    Running,
    /// Every job is done, invalid or cancelled, and the batch was not cancelled.
    Finished,
    /// The batch was cancelled.
    Cancelled,
}

impl BatchState {
    /// Every state, in the order the metrics list them.
    pub const ALL: [BatchState; 3] = [
        BatchState::Running,
        BatchState::Finished,
        BatchState::Cancelled,
    ];

    /// Where `b` is.
    pub fn of(b: &BatchStatus) -> BatchState {
        if b.cancelled_batch {
            BatchState::Cancelled
        } else if b.queued + b.leased == 0 {
            BatchState::Finished
        } else {
            BatchState::Running
        }
    }

    /// `running`, `finished` or `cancelled` (the metrics' label and the status page's word).
    pub fn name(self) -> &'static str {
        match self {
            BatchState::Running => "running",
            BatchState::Finished => "finished",
            BatchState::Cancelled => "cancelled",
        }
    }
}

impl Snapshot {
    /// Reads the coordinator's state (blocks on the store: call it off the async runtime).
    pub fn take(core: &Core) -> Result<Snapshot, Error> {
        let batches = core.list()?;
        let (counters, queue_depth) = core.counters();
        Ok(Snapshot {
            batches,
            counters,
            queue_depth,
            workers: core.workers(),
            solve_times: core.solve_times(),
        })
    }

    /// Estimated thread-seconds of work queued: queue depth x mean search time.
    pub fn queued_work_seconds(&self) -> f64 {
        self.queue_depth as f64 * self.solve_times.estimate()
    }

    /// Jobs per state over all batches: queued, leased, done, invalid, cancelled.
    pub fn jobs_by_state(&self) -> [(&'static str, u64); 5] {
        let mut n = [0u64; 5];
        for b in &self.batches {
            for (i, v) in [b.queued, b.leased, b.done, b.invalid, b.cancelled]
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
