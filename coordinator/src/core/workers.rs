//! The worker registry: who registered, who called lately (touched by every lease, heartbeat
//! and completion), and each worker's accepted and refused results.

use std::time::{Duration, Instant};

use super::state::State;
use super::Core;

/// A registered worker.
#[derive(Clone, Debug)]
pub struct WorkerInfo {
    /// Its name.
    pub name: String,
    /// Its search threads.
    pub threads: u32,
    /// Its table fingerprint.
    pub fingerprint: String,
    /// Results it had accepted.
    pub completed: u64,
    /// Results it had refused.
    pub rejected: u64,
    /// When it last called.
    pub last_seen: Instant,
}

impl Core {
    /// Registers a worker.
    pub fn register(&self, name: String, threads: u32, fingerprint: String) -> (String, Duration) {
        let mut st = self.lock();
        st.next_worker += 1;
        let id = format!("w{}-{:08x}", st.next_worker, rand::random::<u32>());
        tracing::info!(worker = %id, %name, threads, "worker registered");
        st.workers.insert(
            id.clone(),
            WorkerInfo {
                name,
                threads,
                fingerprint,
                completed: 0,
                rejected: 0,
                last_seen: Instant::now(),
            },
        );
        (id, self.lease_duration)
    }

    /// Notes that `worker` called. A worker this coordinator does not know (registered before
    /// a restart, or forgotten after a long silence) is listed again under its id.
    pub(super) fn touch(&self, st: &mut State, worker: &str) {
        st.workers
            .entry(worker.to_string())
            .or_insert_with(|| WorkerInfo {
                name: format!("{worker} (not registered here)"),
                threads: 0,
                fingerprint: String::new(),
                completed: 0,
                rejected: 0,
                last_seen: Instant::now(),
            })
            .last_seen = Instant::now();
    }

    /// Registered workers.
    ///
    /// A worker silent for three lease durations is forgotten (all its leases have expired by
    /// then); if it calls again it is listed again.
    pub fn workers(&self) -> Vec<(String, WorkerInfo)> {
        let mut st = self.lock();
        let gone = 3 * self.lease_duration;
        st.workers.retain(|_, w| w.last_seen.elapsed() <= gone);
        let mut v: Vec<_> = st
            .workers
            .iter()
            .map(|(k, w)| (k.clone(), w.clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}
