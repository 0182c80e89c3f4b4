//! Cancellation of a batch, by the client credential that submitted it or an admin (the
//! state machine's rule, [`decide`]): its queued jobs become cancelled at once (by
//! compare-and-swap, under the lock so no lease slips in); leased ones stop at their holder's
//! next heartbeat and end cancelled when their lease returns ([`Core::heartbeat`],
//! `requeue_from`). A range or sample batch makes no more jobs: its lines not made count as
//! cancelled.

use cubefleet_proto::{BatchStatus, JobState};

use super::machine::{decide, Actor, Event, Next, Phase};
use super::Core;
use crate::error::Error;
use crate::record::job_id;

/// Who asks to cancel a batch.
#[derive(Clone, Debug)]
pub struct Canceller {
    /// The client credential's name ("" on a coordinator without credentials).
    pub name: String,
    /// Whether it is an admin (or the operator's `--token`).
    pub admin: bool,
}

impl Core {
    /// Cancels a batch for `by`: queued jobs become cancelled now, leased ones at their next
    /// heartbeat. Refused unless `by` submitted the batch or is an admin (a batch of no owner,
    /// made by `run`, without credentials or by an earlier version, any client may cancel).
    pub fn cancel(&self, batch_id: &str, by: &Canceller) -> Result<BatchStatus, Error> {
        let _op = self.op()?;
        let b = {
            // no job of a range or sample batch is made while, nor after, it is cancelled
            let _making = self.making.lock().unwrap_or_else(|e| e.into_inner());
            let mut b = self.batch_record(batch_id)?;
            let actor = if by.admin {
                Actor::Admin
            } else if b.owner.is_empty() || b.owner == by.name {
                Actor::Owner
            } else {
                Actor::Client
            };
            if let Err(why) = decide(Phase::Queued, Event::Cancel, actor) {
                return Err(Error::PermissionDenied(format!(
                    "{why}: batch {batch_id} was submitted by another client; only it or an \
                     admin may cancel it"
                )));
            }
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
                    .filter(|(id, _)| {
                        let phase = if st.leases.contains_key(id) {
                            Phase::Leased
                        } else {
                            Phase::Queued
                        };
                        // a leased job ends cancelled when its lease returns
                        phase == Phase::Queued
                            && decide(phase, Event::Cancel, Actor::Owner) == Ok(Next::Cancel)
                    })
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
