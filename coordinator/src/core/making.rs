//! Making the jobs of range and sample batches, at lease time: such a batch is stored as its
//! definition, and its lines become ordinary job records (keyed, answered from the store when
//! they can be, queued) only when a lease finds too few queued jobs. A store of a range of
//! 10^18 states holds its batch record and the jobs made so far; memory holds one chunk.
//!
//! Invariants: making is serialised (`Core::making`, also held by a cancellation while it
//! writes the batch record), so two leases never reserve the same lines; the jobs are written
//! before the batch record that counts them (`made`), and both are flushed before the jobs are
//! queued; at start-up `made` is raised over every stored job. So a crash never leaves a hole
//! (a line below `made` without a job) nor makes a line twice.

use std::cmp::Reverse;

use cubefleet_proto::{JobResult, JobState};
use cubefleet_tables::index::{state_at, Walk};
use cubefleet_tables::CubieCube;

use super::Core;
use crate::error::Error;
use crate::mode::mode_key;
use crate::record::{checked_job_id, JobRecord};

impl Core {
    /// The range or sample batch to make jobs of for a lease that wants `want`, and how many:
    /// the batch that runs next (highest priority, then oldest; not cancelled; with lines
    /// left), when the queue holds fewer than `want` jobs of its priority or above.
    fn to_make(&self, want: usize) -> Option<(String, u64)> {
        let st = self.lock();
        let (_, m) = st
            .batches
            .iter()
            .filter(|(_, m)| !m.cancelled && m.unmade() > 0)
            .min_by_key(|(&seq, m)| (Reverse(m.priority), seq))?;
        let ahead = st
            .batches
            .values()
            .filter(|o| o.priority >= m.priority && !o.cancelled)
            .map(|o| o.counts[JobState::Queued as usize])
            .sum::<u64>()
            .min(want as u64) as usize;
        (ahead < want).then(|| (m.id.clone(), ((want - ahead) as u64).min(m.unmade())))
    }

    /// Makes the next lines of the range or sample batch that runs next (highest priority,
    /// then oldest; not cancelled; with lines left) into jobs when the queue holds fewer than
    /// `want` jobs of that priority or above: as many as are missing (one chunk of
    /// consecutive lines), stored, flushed and queued ([`Core::store_chunk`]). Returns whether
    /// it made any.
    pub(super) fn make_jobs(&self, want: usize) -> Result<bool, Error> {
        // looked at first without the making lock, so leases that find enough queued (all of
        // them while a file batch runs) never wait for another lease's making
        if self.to_make(want).is_none() {
            return Ok(false);
        }
        let _making = self.making.lock().unwrap_or_else(|e| e.into_inner());
        let Some((id, n)) = self.to_make(want) else {
            return Ok(false); // made meanwhile by another lease
        };
        let mut b = self.batch_record(&id)?;
        let Some(states) = b.states() else {
            return Ok(false);
        };
        let first = b.made;
        let n = n.min(states.lines().saturating_sub(first));
        if n == 0 || b.cancelled {
            return Ok(false);
        }
        let mkey = mode_key(&b.mode.unwrap_or_default());
        let cubes: Vec<(u128, CubieCube)> = if states.consecutive() {
            let start = states.state_index(first);
            Walk::new(start, start + u128::from(n))
                .map_err(|e| Error::Internal(e.to_string()))?
                .collect()
        } else {
            (first..first + n)
                .map(|k| {
                    let index = states.state_index(k);
                    let cube = state_at(index).map_err(|e| Error::Internal(e.to_string()))?;
                    Ok((index, cube))
                })
                .collect::<Result<_, Error>>()?
        };
        let mut jobs = Vec::with_capacity(cubes.len());
        for (k, (index, cube)) in (first..).zip(cubes) {
            let r = JobResult {
                state_index: index.to_string(),
                // a coset job's line is its coset's number (its position the representative)
                input: states
                    .coset(k)
                    .map_or_else(String::new, |c| c.number().to_string()),
                ..JobResult::default()
            };
            jobs.push((
                checked_job_id(b.seq, k)?,
                self.job_of_position(&b, &mkey, r, &cube)?,
            ));
        }
        let jobs: Vec<(u64, JobRecord)> = jobs;
        self.store_chunk(&mut b, jobs)?;
        tracing::debug!(batch = %crate::logsafe::text(&b.batch_id), first, made = b.made, "jobs made");
        Ok(true)
    }
}
