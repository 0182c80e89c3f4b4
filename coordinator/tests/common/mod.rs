//! What the coordinator's integration tests share: a real coordinator serving gRPC on a
//! loopback port of this process (bound to port 0), over a real sled store, and the calls
//! and modes the tests make. What the tests of every crate share is `cubefleet_testkit`'s.

#![allow(dead_code, unused_imports, clippy::unwrap_used)] // each test binary uses its own subset

use std::sync::Arc;
use std::time::Duration;

use cubefleet_coordinator::{Config, Core};
use cubefleet_proto::client::Client;
use cubefleet_proto::{
    mode, JobRef, JobResult, LeaseRequest, LeasedJob, Metric, Mode, Optimal, TwoPhase,
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub(crate) use cubefleet_testkit::{resident, undo};

/// A coordinator running in this process.
pub(crate) struct Server {
    /// Its address, `http://127.0.0.1:PORT`.
    pub(crate) url: String,
    /// Cancelled to stop it.
    shutdown: CancellationToken,
    /// The serving task.
    handle: JoinHandle<Result<(), cubefleet_coordinator::Error>>,
    /// The coordinator itself (for counters gRPC does not show).
    pub(crate) core: Arc<Core>,
}

impl Server {
    /// Starts a coordinator with `config` on a fresh loopback port.
    pub(crate) async fn start(config: Config) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        // a store just closed by a stopped server may take a moment to release its lock
        let mut tries = 0;
        let core = loop {
            let (dir, lease, clock) = (config.data_dir.clone(), config.lease, config.clock.clone());
            match tokio::task::spawn_blocking(move || Core::open_with_clock(&dir, lease, clock))
                .await
                .unwrap()
            {
                Ok(core) => break core,
                Err(e) if tries < 50 => {
                    tries += 1;
                    eprintln!("store not open yet: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("store does not open: {e}"),
            }
        };
        let shutdown = CancellationToken::new();
        let handle = tokio::spawn(cubefleet_coordinator::serve_core(
            core.clone(),
            config,
            listener,
            shutdown.clone(),
        ));
        Server {
            url,
            shutdown,
            handle,
            core,
        }
    }

    /// One pass of the lease sweeper now, on the core's clock (advance a manual clock past a
    /// deadline first): expired leases go back to the queue, long-silent sessions and old
    /// graces are forgotten. The server's own sweeper may run a pass at the same time; either
    /// way, once this returns, every lease past its deadline is back in the queue.
    pub(crate) async fn sweep(&self) {
        let core = self.core.clone();
        tokio::task::spawn_blocking(move || {
            core.prune_workers();
            core.expire_leases()
        })
        .await
        .unwrap()
        .unwrap();
    }

    /// A client without a token.
    pub(crate) async fn client(&self) -> Client {
        Client::connect(&self.url, None).await.unwrap()
    }

    /// Stops the server and waits until it has flushed the store and released it.
    pub(crate) async fn stop(self) {
        self.shutdown.cancel();
        drop(self.core);
        tokio::time::timeout(Duration::from_secs(20), self.handle)
            .await
            .expect("the server stops")
            .unwrap()
            .expect("the server stops cleanly");
    }
}

/// Registers a one-thread worker named `name`; its id.
pub(crate) use cubefleet_testkit::register_worker as register;

/// Leases up to `max_jobs` jobs for `worker`.
pub(crate) async fn lease(client: &mut Client, worker: &str, max_jobs: u32) -> Vec<LeasedJob> {
    client
        .workers
        .lease(LeaseRequest {
            worker_id: worker.to_string(),
            max_jobs,
            wait_millis: 0,
            max_seconds: 0.0,
        })
        .await
        .unwrap()
        .into_inner()
        .jobs
}

/// The result of job `id`.
pub(crate) async fn job(client: &mut Client, id: u64) -> JobResult {
    client
        .batches
        .get_job(JobRef { job_id: id })
        .await
        .unwrap()
        .into_inner()
}

/// A two-phase mode with target `max_length`.
pub(crate) fn two_phase(max_length: u32) -> Mode {
    Mode {
        kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length })),
        timeout_seconds: 0.0,
        ..Default::default()
    }
}

/// An optimal mode (half-turn metric).
pub(crate) fn optimal() -> Mode {
    Mode {
        kind: Some(mode::Kind::Optimal(Optimal {
            metric: Metric::Htm as i32,
        })),
        timeout_seconds: 0.0,
        ..Default::default()
    }
}
