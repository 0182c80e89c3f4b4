//! Cancellation of a batch: its queued jobs become cancelled at once (by compare-and-swap,
//! under the lock so no lease slips in); leased ones stop at their holder's next heartbeat and
//! end cancelled when their lease returns ([`Core::heartbeat`], `requeue_from`). A range or
//! sample batch makes no more jobs: its lines not made count as cancelled.

use cubefleet_proto::{BatchStatus, JobState};

use super::Core;
use crate::error::Error;
use crate::record::job_id;

impl Core {
    /// Cancels a batch: queued jobs become cancelled now, leased ones at their next heartbeat.
    pub fn cancel(&self, batch_id: &str) -> Result<BatchStatus, Error> {
        let _op = self.op()?;
        let b = {
            // no job of a range or sample batch is made while, nor after, it is cancelled
            let _making = self.making.lock().unwrap_or_else(|e| e.into_inner());
            let mut b = self.batch_record(batch_id)?;
            b.cancelled = true;
            self.store.put_batch(&b)?;
            let mut st = self.lock();
            st.batch(b.seq).cancelled = true;
            st.ready.cancel(b.seq);
            b
        };
        let (from, to) = (job_id(b.seq, 0), job_id(b.seq + 1, 0));
        let mut next = from;
        loop {
            let jobs = self.store.jobs_range(next, to, 10_000)?;
            let Some(&(last, _)) = jobs.last() else {
                break;
            };
            let mut queued = jobs
                .into_iter()
                .filter(|(_, job)| job.state() == JobState::Queued)
                .peekable();
            // a few blocks at a time, under the lock, so that no lease is taken between the
            // check and the swap (a leased job stops at its holder's next heartbeat)
            while queued.peek().is_some() {
                let mut st = self.lock();
                let part = queued
                    .by_ref()
                    .take(4 * crate::store::BLOCK_JOBS)
                    .filter(|(id, _)| !st.leases.contains_key(id))
                    .map(|(id, job)| {
                        let new = job.cancelled();
                        (id, job, new)
                    })
                    .collect();
                for (id, _, _) in self.swap_jobs(part)? {
                    st.ready.remove(id);
                    st.count(id, JobState::Queued, JobState::Cancelled);
                }
            }
            next = last + 1;
        }
        self.store.flush()?;
        Self::bump(&self.finished);
        self.status(batch_id)
    }
}
