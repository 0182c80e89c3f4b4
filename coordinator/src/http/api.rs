//! `GET /api/status`: the coordinator's status as JSON, a serde-derived [`StatusView`] whose
//! batches are the [`BatchView`]s that the page and `cubefleet status --json` show too. Field
//! names are a contract: add fields, never rename.

use std::collections::{BTreeMap, HashMap};

use cubefleet_proto::view::BatchView;
use serde::Serialize;

use crate::snapshot::Snapshot;

/// The whole status: totals, batches, workers.
#[derive(Debug, Serialize)]
pub(super) struct StatusView {
    /// Jobs no thread searches yet: queued (with the unmade lines of range and sample
    /// batches) and waiting in a worker's lease beyond its threads.
    queue_depth: u64,
    /// Leased jobs being searched now (at most one per thread of the session holding them).
    searching: u64,
    /// Estimated thread-seconds of the work no thread searches yet (each batch at its own
    /// mean search time).
    queued_work_seconds: f64,
    /// The mean search time of accepted results, seconds.
    solve_mean_seconds: f64,
    /// Jobs per state, all batches.
    jobs: BTreeMap<&'static str, u64>,
    /// Lines submitted since start.
    submitted: u64,
    /// Results accepted since start.
    verified: u64,
    /// Results refused since start.
    rejected: u64,
    /// Leases that expired since start.
    lease_expiries: u64,
    /// Every batch, oldest first.
    batches: Vec<BatchView>,
    /// The registered workers.
    workers: Vec<WorkerView>,
}

/// One worker.
#[derive(Debug, Serialize)]
struct WorkerView {
    /// Its session's public id.
    worker_id: String,
    /// Its name.
    name: String,
    /// Its search threads.
    threads: u32,
    /// Results it had accepted.
    completed: u64,
    /// Results it had refused.
    rejected: u64,
    /// Jobs it holds leases on now (searched, waiting in its queue, or answered and not
    /// reported yet).
    held: u64,
    /// Results accepted per second, lately.
    rate: f64,
    /// Seconds since it last called.
    last_seen_seconds: f64,
}

impl StatusView {
    /// The view of `snap`, with each worker's throughput from `rates`.
    pub(super) fn of(snap: &Snapshot, rates: &HashMap<String, f64>) -> StatusView {
        StatusView {
            queue_depth: snap.queue_depth(),
            searching: snap.work.searching,
            queued_work_seconds: snap.queued_work_seconds(),
            solve_mean_seconds: snap.solve_times.estimate(),
            jobs: snap.jobs_by_state().into_iter().collect(),
            submitted: snap.counters.submitted,
            verified: snap.counters.completed,
            rejected: snap.counters.rejected,
            lease_expiries: snap.counters.lease_expiries,
            batches: snap.batches.iter().map(BatchView::from).collect(),
            workers: snap
                .workers
                .iter()
                .map(|(id, w)| WorkerView {
                    worker_id: id.clone(),
                    name: w.name.clone(),
                    threads: w.threads,
                    completed: w.completed,
                    rejected: w.rejected,
                    held: w.held,
                    rate: rates.get(id).copied().unwrap_or(0.0),
                    last_seen_seconds: snap.ago(w.last_seen).as_secs_f64(),
                })
                .collect(),
        }
    }

    /// The view as JSON, every object's keys in alphabetical order (as earlier versions
    /// wrote them).
    pub(super) fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}
