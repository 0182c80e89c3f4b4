//! Recovery at open: the in-memory state (queue, counters, symmetry index) rebuilt from the
//! store, which is the truth; unfinished jobs queued again, those of a cancelled batch
//! cancelled, and batch line counts (a range or sample batch's `made`) raised over chunks a
//! crash left without their record. After a clean stop, the summary it stored gives the same
//! state without the scan (see `summary`).

use std::collections::HashSet;

use cubefleet_proto::JobState;

use super::dedup::SymIndex;
use super::state::{FastMap, State};
use super::Core;
use crate::error::Error;
use crate::mode::mode_key;
use crate::record::{batch_seq, line_index};

impl Core {
    /// Rebuilds queue and counters from the store; every unfinished job is queued. Returns
    /// whether they came from the summary of a clean stop (the symmetry index is then still
    /// to be rebuilt: [`Core::build_index_behind`]).
    pub(super) fn rebuild(&self) -> Result<bool, Error> {
        let batches = self.store.batches()?;
        // taken out (durably) before anything changes, whether it is used or not
        if let Some(summary) = self.store.take_summary()? {
            match Core::from_summary(&summary, &batches) {
                Some(st) => {
                    tracing::info!(
                        batches = batches.len(),
                        queued = st.queued(),
                        "store opened from the summary of a clean stop"
                    );
                    *self.lock() = st;
                    return Ok(true);
                }
                None => tracing::warn!("the store's summary does not fit its batches: scanning"),
            }
        }
        let mut st = State::default();
        for b in &batches {
            st.batch(b.seq).take_record(b);
        }
        let cancelled: HashSet<u32> = batches
            .iter()
            .filter(|b| b.cancelled)
            .map(|b| b.seq)
            .collect();
        // queued jobs go back to the queue (leases are never stored; a record `leased` was
        // written by an earlier version and is queued again); unfinished jobs of a cancelled
        // batch (a cancellation cut short by a crash) become cancelled
        let mut requeue = Vec::new();
        // lines stored per batch (the highest index + 1)
        let mut stored: FastMap<u32, u64> = FastMap::default();
        // per batch its first queued line: where its cursor starts (the ready queue holds no
        // entry per job, see `ready`)
        let mut first_queued: FastMap<u32, u64> = FastMap::default();
        let mkeys: FastMap<u32, Vec<u8>> = batches
            .iter()
            .map(|b| (b.seq, mode_key(&b.mode.unwrap_or_default())))
            .collect();
        let mut index = SymIndex::default();
        self.store.for_each_job(&mut |id, job| {
            let state = job.state();
            let seq = batch_seq(id);
            let lines = stored.entry(seq).or_default();
            *lines = (*lines).max(line_index(id) + 1);
            match state {
                JobState::Queued | JobState::Leased if cancelled.contains(&seq) => {
                    requeue.push((id, job.clone()))
                }
                JobState::Queued => {
                    first_queued.entry(seq).or_insert(line_index(id));
                }
                JobState::Leased => {
                    first_queued.entry(seq).or_insert(line_index(id));
                    requeue.push((id, job.clone()));
                }
                JobState::Done => {
                    if let Some(mkey) = mkeys.get(&seq) {
                        index.add(id, &job, mkey);
                    }
                }
                _ => {}
            }
            st.record_length(id, job.r());
            st.count(id, JobState::Unspecified, state);
            if job.r().from_store {
                st.batch(seq).from_store += 1;
            }
        })?;
        // jobs of a chunk whose batch record was not written before a crash: count them, so
        // that a resubmission (of a file batch) or the next lease (of a range or sample batch,
        // whose `made` is raised) continues after them instead of overwriting them
        for b in &batches {
            let lines = stored.get(&b.seq).copied().unwrap_or(0);
            let mut b = b.clone();
            if lines > b.stored_lines() {
                b.raise_stored(lines);
                self.store.put_batch(&b)?;
                st.batch(b.seq).made = b.made;
            }
            let end = b.stored_lines();
            let cursor = first_queued.get(&b.seq).copied().unwrap_or(end);
            st.ready.stored(b.seq, b.priority, cursor, end, b.cancelled);
        }
        let requeued = requeue.len();
        let changes = requeue
            .into_iter()
            .map(|(id, job)| {
                let new = if cancelled.contains(&batch_seq(id)) {
                    job.cancelled()
                } else {
                    let mut new = job.clone();
                    new.r_mut().state = JobState::Queued as i32;
                    new
                };
                (id, job, new)
            })
            .collect();
        // (a `leased` record queued again lies at or above its batch's cursor)
        for (id, job, new) in self.swap_jobs(changes)? {
            st.count(id, job.state(), new.state());
        }
        self.store.flush()?;
        *self.index.write().unwrap_or_else(|e| e.into_inner()) = index;
        tracing::info!(
            batches = batches.len(),
            queued = st.queued(),
            requeued,
            "store opened"
        );
        *self.lock() = st;
        Ok(false)
    }
}
