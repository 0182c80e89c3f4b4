//! What the runtime is given and gives back: the coordinator as a worker sees it (the
//! [`Coordinator`] trait, the same over gRPC and in one process), how a worker runs
//! ([`RuntimeConfig`] and its defaults), and what it did ([`WorkerStats`]).

use std::future::Future;
use std::time::Duration;

use crate::pool::{Finished, Job};
use cubefleet_search::Progress;

/// What the coordinator answers to a heartbeat.
#[derive(Clone, Debug, Default)]
pub struct HeartbeatReply {
    /// Jobs to stop (their batch was cancelled, or the lease was lost).
    pub cancel: Vec<u64>,
}

/// The coordinator as a worker sees it. Errors are transient (the runtime retries with backoff).
pub trait Coordinator: Send + Sync + 'static {
    /// The error of a call.
    type Error: std::fmt::Display + Send;
    /// Leases up to `max` jobs; when none is queued, waits up to `wait` for one (a long poll)
    /// before answering with none.
    fn lease(
        &self,
        max: u32,
        wait: Duration,
    ) -> impl Future<Output = Result<Vec<Job>, Self::Error>> + Send;
    /// Extends the leases of the held jobs and reports their progress.
    fn heartbeat(
        &self,
        held: Vec<(u64, Progress)>,
    ) -> impl Future<Output = Result<HeartbeatReply, Self::Error>> + Send;
    /// Reports finished jobs (borrowed: the runtime keeps them to report again if this fails).
    fn complete<'a>(
        &'a self,
        results: &'a [Finished],
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'a;
    /// Hands jobs back unfinished (with their progress).
    fn release(
        &self,
        jobs: Vec<(u64, Progress)>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

/// How a worker runs.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// Search threads.
    pub threads: usize,
    /// Time between heartbeats (well under the lease duration).
    pub heartbeat: Duration,
    /// Longest time results wait before they are reported as a group.
    pub report_every: Duration,
    /// Time running jobs get to finish after shutdown is asked for.
    pub grace: Duration,
}

/// Time between heartbeats of a default [`RuntimeConfig`]: a sixth of the coordinator's
/// default lease, so five heartbeats may be lost before a lease expires. (`cubefleet worker`
/// beats four times per lease of the coordinator it joins.)
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(5);

/// Longest wait of results before they are reported, in a default [`RuntimeConfig`]: short
/// beside a person watching progress, long beside fast jobs (a fraction of a millisecond),
/// which are reported in groups.
pub const DEFAULT_REPORT_EVERY: Duration = Duration::from_millis(100);

/// Time running jobs get to finish after shutdown is asked for, in a default
/// [`RuntimeConfig`] (`--grace`'s default): most two-phase jobs finish well within it, and a
/// job still running after it is handed back, not lost.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(30);

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            heartbeat: DEFAULT_HEARTBEAT,
            report_every: DEFAULT_REPORT_EVERY,
            grace: DEFAULT_GRACE,
        }
    }
}

/// Counts of what a worker did, returned when it stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// Jobs leased.
    pub leased: u64,
    /// Results reported and acknowledged.
    pub completed: u64,
    /// Jobs handed back unfinished.
    pub released: u64,
    /// Searches that panicked (each job reported as given up, so it went back to the queue).
    pub search_panics: u64,
}
