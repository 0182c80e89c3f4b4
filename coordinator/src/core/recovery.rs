//! Recovery at open: the in-memory state (queue, counters) rebuilt from the store, which is
//! the truth; unfinished jobs queued again, those of a cancelled batch cancelled, and batch
//! line counts (a range or sample batch's `made`) raised over chunks a crash left without
//! their record. After a clean stop, the summary it stored gives the same state without
//! reading the jobs (see `summary`); after a crash, the jobs' tags are read (see
//! `store::JobTag`), not their records, so the open costs a pass over the stored blocks and
//! no decoding. Either way the symmetry index is rebuilt afterwards by a thread of its own.

use std::collections::HashSet;
use std::ops::Range;

use cubefleet_proto::JobState;
use prost::Message;

use super::state::{FastMap, State};
use super::Core;
use crate::error::Error;
use crate::record::{batch_seq, line_index, JobRecord};

impl Core {
    /// Sums the counts of every coset batch's finished cosets into memory (what `status`
    /// shows): a pass over those batches' records at each open, whose cost is one record per
    /// coset made (coset jobs take minutes each, so there are few beside other jobs).
    pub(super) fn sum_cosets(&self) -> Result<(), Error> {
        let batches: Vec<(u32, u64)> = self
            .store
            .batches()?
            .iter()
            .filter(|b| crate::mode::question_of(&b.mode.unwrap_or_default()).is_coset())
            .map(|b| (b.seq, b.stored_lines()))
            .collect();
        for (seq, lines) in batches {
            let (first, end) = (
                crate::record::job_id(seq, 0),
                crate::record::job_id(seq, lines),
            );
            let mut sums = super::state::BatchMem::default();
            if first < end {
                self.store.scan_jobs(first, end - 1, &mut |_, job| {
                    if job.state() == JobState::Done {
                        if let Some(c) = &job.r().coset {
                            sums.sum_coset(c, true);
                        }
                    }
                    true
                })?;
            }
            let mut st = self.lock();
            let b = st.batch(seq);
            b.coset_counts = sums.coset_counts;
            b.coset_unsolved = sums.coset_unsolved;
        }
        Ok(())
    }

    /// Rebuilds queue and counters from the store; every unfinished job is queued. The
    /// symmetry index is left to [`Core::build_index_behind`], over the id ranges returned:
    /// they hold every `done` job (after a clean stop, all ids).
    pub(super) fn rebuild(&self) -> Result<Vec<Range<u64>>, Error> {
        let batches = self.store.batches()?;
        // taken out (durably) before anything changes, whether it is used or not
        if let Some(summary) = self.store.take_summary()? {
            match Core::from_summary(&summary, &batches, self.clock.clone()) {
                Some((st, runs)) => {
                    tracing::info!(
                        batches = batches.len(),
                        queued = st.queued(),
                        "store opened from the summary of a clean stop"
                    );
                    *self.lock() = st;
                    return Ok(runs);
                }
                None => tracing::warn!("the store's summary does not fit its batches: scanning"),
            }
        }
        let mut st = State::new(self.clock.clone());
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
        let mut done = DoneRuns::default();
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
                JobState::Done => done.add(id),
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
        // their records, read in id order (one pass over each block, not one lookup a job)
        requeue.sort_unstable();
        let mut changes = Vec::with_capacity(requeued);
        for (&id, bytes) in requeue.iter().zip(self.store.jobs_encoded(&requeue)?) {
            let bytes =
                bytes.ok_or_else(|| Error::Internal(format!("job {id} vanished at open")))?;
            let job = JobRecord::decode(&*bytes)?;
            let new = if cancelled.contains(&batch_seq(id)) {
                job.cancelled()
            } else {
                let mut new = job.clone();
                new.r_mut().state = JobState::Queued as i32;
                new
            };
            changes.push((id, job, new));
        }
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
        Ok(done.into_runs())
    }
}

/// Where some jobs are, as id ranges: the `done` jobs after a crash, the jobs the symmetry
/// index names in a summary; what the thread rebuilding the index reads (not the whole store).
/// Ids closer than [`DoneRuns::GAP`] share a range, so there are at most as many ranges as
/// ids, and usually a few per batch.
#[derive(Default)]
pub(super) struct DoneRuns(Vec<Range<u64>>);

impl DoneRuns {
    /// Ids at most this far apart share a range (a few unfinished jobs read for nothing).
    const GAP: u64 = 64;

    /// Counts job `id` in.
    pub(super) fn add(&mut self, id: u64) {
        match self.0.last_mut() {
            Some(r) if r.start <= id && id < r.end + Self::GAP => r.end = r.end.max(id + 1),
            _ => self.0.push(id..id + 1),
        }
    }

    /// The ranges, sorted and merged (ids come in any order).
    pub(super) fn into_runs(mut self) -> Vec<Range<u64>> {
        self.0.sort_unstable_by_key(|r| r.start);
        let mut out: Vec<Range<u64>> = Vec::with_capacity(self.0.len());
        for r in self.0 {
            match out.last_mut() {
                Some(last) if r.start < last.end + Self::GAP => last.end = last.end.max(r.end),
                _ => out.push(r),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::DoneRuns;

    #[test]
    fn done_runs_cover_every_id_added_and_merge_near_ones() {
        let mut d = DoneRuns::default();
        for id in [5, 6, 7, 100, 90, 1000, 2, 3, 1001, 40] {
            d.add(id);
        }
        let runs = d.into_runs();
        for id in [2, 3, 5, 6, 7, 40, 90, 100, 1000, 1001] {
            assert!(runs.iter().any(|r| r.contains(&id)), "{id} in {runs:?}");
        }
        assert!(runs.windows(2).all(|w| w[0].end < w[1].start), "{runs:?}");
        assert!(!runs.iter().any(|r| r.contains(&500)), "{runs:?}");
        assert!(runs.len() <= 4, "{runs:?}");
    }
}
