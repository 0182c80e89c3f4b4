//! The worker runtime's coordinator inside the coordinator's own process (`cubefleet run`):
//! a session registered with a [`Core`], whose calls are the core's own, with the store's
//! reads and writes off the async threads as the gRPC service runs them. No position is
//! formatted and parsed again, no protocol message is framed; leased jobs go through the
//! same conversion as a remote worker's ([`crate::remote::leased_job`]), so a job this build
//! cannot run is handed back with the reason, as over gRPC. Built with the `local` feature.

use std::sync::Arc;
use std::time::Duration;

use cubefleet_coordinator::Core;
use cubefleet_proto::JobProgress;
use cubefleet_search::Progress;
use tokio_util::sync::CancellationToken;

use crate::pool::{Finished, Job};
use crate::remote::{completion, leased_job, progress_list};
use crate::runtime::{Coordinator, HeartbeatReply};

/// The worker runtime's coordinator when both are in this process: a worker registered with
/// the [`Core`], whose calls are the core's own (the store reads and writes off the async
/// threads, as the gRPC service does them).
pub struct LocalCoordinator {
    core: Arc<Core>,
    worker_id: String,
    /// Cancelled when the coordinator stops: a lease then returns at once with nothing.
    stopping: CancellationToken,
}

impl LocalCoordinator {
    /// The coordinator of the session `worker_id` registered with `core`; its leases
    /// answer at once with nothing once `stopping` is cancelled.
    pub fn new(core: Arc<Core>, worker_id: String, stopping: CancellationToken) -> Self {
        LocalCoordinator {
            core,
            worker_id,
            stopping,
        }
    }

    /// Runs a store operation off the async threads.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Core, &str) -> Result<T, cubefleet_coordinator::Error> + Send + 'static,
    ) -> Result<T, cubefleet_coordinator::Error> {
        let (core, worker) = (self.core.clone(), self.worker_id.clone());
        tokio::task::spawn_blocking(move || f(&core, &worker)).await?
    }
}

impl Coordinator for LocalCoordinator {
    type Error = cubefleet_coordinator::Error;

    async fn lease(&self, max: u32, wait: Duration) -> Result<Vec<Job>, Self::Error> {
        let leased = self
            .core
            .lease_wait(&self.worker_id, max, 0.0, wait, &self.stopping)
            .await?;
        let (mut jobs, mut cannot) = (Vec::with_capacity(leased.len()), Vec::new());
        for j in leased {
            let (coset, seed) = j.coset.unzip();
            let seed = seed.map_or_else(Vec::new, |s| s.to_vec());
            let coset_of = (coset.unwrap_or_default(), &seed[..]);
            match leased_job(
                j.job_id,
                j.cube,
                &j.mode,
                j.lower_bound,
                j.spot_seed,
                coset_of,
            ) {
                Ok(job) => jobs.push(job),
                Err(reason) => cannot.push(JobProgress {
                    job_id: j.job_id,
                    reason,
                    ..Default::default()
                }),
            }
        }
        if !cannot.is_empty() {
            self.blocking(move |c, w| c.release(w, &cannot)).await?;
        }
        Ok(jobs)
    }

    async fn heartbeat(&self, held: Vec<(u64, Progress)>) -> Result<HeartbeatReply, Self::Error> {
        let held = progress_list(held);
        let cancel = self.blocking(move |c, w| c.heartbeat(w, &held)).await?;
        Ok(HeartbeatReply { cancel })
    }

    async fn complete(&self, results: &[Finished]) -> Result<(), Self::Error> {
        let results: Vec<_> = results.iter().map(completion).collect();
        let (_, rejected) = self.blocking(move |c, w| c.complete(w, &results)).await?;
        for (job, reason) in rejected {
            tracing::warn!(job, %reason, "coordinator refused a result");
        }
        Ok(())
    }

    async fn release(&self, jobs: Vec<(u64, Progress)>) -> Result<(), Self::Error> {
        let jobs = progress_list(jobs);
        self.blocking(move |c, w| c.release(w, &jobs)).await?;
        Ok(())
    }
}
