//! Each worker's throughput (results accepted per second) for the page and the JSON: samples
//! of its `completed` count, recorded by the HTTP port's background sampler and read, without
//! change, by the handlers. The rate itself is [`crate::rate`]'s, as the batches' is.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::rate::Rate;
use crate::snapshot::Snapshot;

/// The samples of every registered worker, by worker id.
#[derive(Default)]
pub(super) struct WorkerRates(Mutex<HashMap<String, Rate>>);

impl WorkerRates {
    /// Records each worker's results in `snap` at the time it was taken (and forgets workers
    /// no longer registered).
    pub(super) fn record(&self, snap: &Snapshot) {
        let now = snap.now;
        let mut rates = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        rates.retain(|id, _| snap.workers.iter().any(|(w, _)| w == id));
        for (id, w) in &snap.workers {
            rates
                .entry(id.clone())
                .or_default()
                .record(now, w.completed);
        }
    }

    /// Each worker's results per second in `snap`, at the time it was taken (0 for one
    /// without samples yet).
    pub(super) fn read(&self, snap: &Snapshot) -> HashMap<String, f64> {
        let now = snap.now;
        let rates = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        snap.workers
            .iter()
            .map(|(id, w)| {
                let rate = rates
                    .get(id)
                    .map_or(0.0, |r| r.per_second(now, w.completed));
                (id.clone(), rate)
            })
            .collect()
    }
}
