//! Recovery at open: the in-memory state (queue, counters) rebuilt from the store, which is
//! the truth; unfinished jobs queued again, those of a cancelled batch cancelled, and batch
//! line counts (a range or sample batch's `made`) raised over chunks a crash left without
//! their record. After a clean stop, the summary it stored gives the same state without
//! reading the jobs (see `summary`); after a crash, the jobs' tags are read (see
//! `store::JobTag`), not their records, so the open costs a pass over the stored blocks and
//! no decoding. Either way the symmetry index is rebuilt afterwards by a thread of its own.

use std::collections::HashSet;

use cubefleet_proto::JobState;

use super::state::{FastMap, State};
use super::Core;
use crate::error::Error;
use crate::record::{batch_seq, line_index};

impl Core {
    /// Rebuilds queue and counters from the store; every unfinished job is queued. The
    /// symmetry index is left to [`Core::build_index_behind`].
    pub(super) fn rebuild(&self) -> Result<(), Error> {
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
                    return Ok(());
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
        // counted from the jobs' tags (no record decoded); the symmetry index, which needs the
        // records, is rebuilt behind by a thread of its own, as after a summary
        self.store.for_each_tag(&mut |id, tag| {
            let (seq, line) = (batch_seq(id), line_index(id));
            let lines = stored.entry(seq).or_default();
            *lines = (*lines).max(line + 1);
            match tag.state {
                JobState::Queued | JobState::Leased if cancelled.contains(&seq) => requeue.push(id),
                JobState::Queued | JobState::Leased => {
                    let first = first_queued.entry(seq).or_insert(line);
                    *first = (*first).min(line);
                    if tag.state == JobState::Leased {
                        requeue.push(id);
                    }
                }
                _ => {}
            }
            if let Some(n) = tag.length {
                st.count_length(seq, n);
            }
            st.count(id, JobState::Unspecified, tag.state);
            if tag.from_store {
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
        let mut changes = Vec::with_capacity(requeued);
        for id in requeue {
            let job = self
                .store
                .job(id)?
                .ok_or_else(|| Error::Internal(format!("job {id} vanished at open")))?;
            changes.push((id, job));
        }
        let changes = changes
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
        tracing::info!(
            batches = batches.len(),
            queued = st.queued(),
            requeued,
            "store opened"
        );
        *self.lock() = st;
        Ok(())
    }
}
