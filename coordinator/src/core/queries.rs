//! Queries: a batch's progress and rate, the list of batches, results by page or as a
//! finished prefix, one job, a lookup of any stored answer, and the counters since start.
//! They read the store and overlay what only memory knows (leases, batch ids).

use std::collections::{HashMap, HashSet};

use cubefleet_proto::{BatchStatus, JobResult, JobState, Mode};
use cubefleet_tables::{parse_position, InputFormat};

use super::dedup::map_result;
use super::state::BatchMem;
use super::{view, Core, Counters};
use crate::error::Error;
use crate::limits::StatusFilter;
use crate::mode::mode_key;
use crate::range::States;
use crate::record::{batch_seq, job_id, line_index, BatchRecord};

impl Core {
    /// A batch's progress.
    pub fn status(&self, batch_id: &str) -> Result<BatchStatus, Error> {
        let b = self.batch_record(batch_id)?;
        Ok(self.status_of(&b))
    }

    /// The progress of batch `b`: counts from memory, and the rate of its finished jobs over
    /// the last minute ([`crate::rate`]). Reads only: reading a status changes nothing.
    fn status_of(&self, b: &BatchRecord) -> BatchStatus {
        let st = self.lock();
        let empty = BatchMem::default();
        let m = st.batches.get(&b.seq).unwrap_or(&empty);
        let finished = m.finished();
        let rate = m.rate.per_second(self.clock.now(), finished);
        let left = b.total.saturating_sub(finished);
        // the lines of a range or sample batch not made yet wait like queued jobs, and end
        // with the batch when it is cancelled
        let (unmade, made) = (m.unmade(), m.made);
        let (waiting, ended) = if m.cancelled {
            (0, unmade)
        } else {
            (unmade, 0)
        };
        let states = b.states();
        let (mut range_start, mut range_end, mut range_step) = (String::new(), String::new(), 0);
        let (mut sample_count, mut sample_seed) = (0, 0);
        match states {
            Some(States::Range { start, end, step }) => {
                (range_start, range_end, range_step) = (start.to_string(), end.to_string(), step);
            }
            Some(States::Sample { count, seed }) => (sample_count, sample_seed) = (count, seed),
            Some(States::Cosets { .. }) | None => {}
        }
        BatchStatus {
            batch_id: b.batch_id.clone(),
            name: b.name.clone(),
            mode: b.mode,
            priority: b.priority,
            total: b.total,
            queued: m.counts[JobState::Queued as usize] + waiting,
            leased: m.counts[JobState::Leased as usize],
            done: m.counts[JobState::Done as usize],
            invalid: m.counts[JobState::Invalid as usize],
            cancelled: m.counts[JobState::Cancelled as usize] + ended,
            failed: m.counts[JobState::Failed as usize],
            kind: states.map_or("file", |s| s.kind()).into(),
            range_start,
            range_end,
            range_step,
            sample_count,
            sample_seed,
            made: if states.is_some() { made } else { b.total },
            keep: b.keep,
            confirm: b.confirm,
            disagreements: m.disagreements,
            rate,
            eta_seconds: if rate > 0.0 { left as f64 / rate } else { 0.0 },
            length_histogram: m.histogram.clone(),
            cancelled_batch: m.cancelled,
            created_unix_ms: b.created_unix_ms,
            coset_counts: m.coset_counts.clone(),
            coset_unsolved: m.coset_unsolved,
            coset_start: b.coset_start,
            coset_end: b.coset_end,
        }
    }

    /// All batches, oldest first.
    pub fn list(&self) -> Result<Vec<BatchStatus>, Error> {
        Ok(self
            .store
            .batches()?
            .iter()
            .map(|b| self.status_of(b))
            .collect())
    }

    /// Results of a batch from line `from_index`, at most `limit`, only those of `status`
    /// when it is not "" (as [`StatusFilter::parse`] reads it; refused when it names none);
    /// with each position as facelets when `facelets` (the protocol's field; a caller that
    /// does not show them saves computing them).
    pub fn results(
        &self,
        batch_id: &str,
        from_index: u64,
        limit: usize,
        status: &str,
        facelets: bool,
    ) -> Result<(Vec<JobResult>, u64), Error> {
        let filter = StatusFilter::parse(status)?;
        self.results_of(batch_id, from_index, limit, filter, facelets)
    }

    /// [`Core::results`] with the filter read.
    pub fn results_of(
        &self,
        batch_id: &str,
        from_index: u64,
        limit: usize,
        filter: StatusFilter,
        facelets: bool,
    ) -> Result<(Vec<JobResult>, u64), Error> {
        let b = self.batch_record(batch_id)?;
        let mut out = Vec::with_capacity(limit.min(4096));
        let stored = b.stored_lines();
        let mut next = job_id(b.seq, from_index.min(stored));
        let end = job_id(b.seq, stored);
        while out.len() < limit && next < end {
            let jobs = self
                .store
                .jobs_range(next, end, (limit - out.len()).min(4096))?;
            let Some(&(last, _)) = jobs.last() else {
                break;
            };
            let first = out.len();
            for (id, j) in jobs {
                if filter.admits_stored(j.r()) {
                    out.push(*view(id, j, facelets));
                }
            }
            let st = self.lock();
            for r in &mut out[first..] {
                st.overlay(r);
            }
            drop(st);
            // a lease, known only in memory, tells a leased job from a queued one
            if let StatusFilter::Unfinished(_) = filter {
                let page = out.split_off(first);
                out.extend(page.into_iter().filter(|r| filter.admits(r)));
            }
            next = last + 1;
        }
        Ok((out, line_index(next).min(stored)))
    }

    /// The results of a batch from line `from_index` on, in line order, up to `limit` of them
    /// and ending before its first unfinished line (invalid and cancelled lines count as
    /// finished): what a writer of results in line order can write next while the batch runs.
    /// Without the facelets and the batch id, which such a writer does not show.
    pub fn finished_prefix(
        &self,
        batch_id: &str,
        from_index: u64,
        limit: usize,
    ) -> Result<Vec<JobResult>, Error> {
        let b = self.batch_record(batch_id)?;
        let stored = b.stored_lines();
        let (from, end) = (job_id(b.seq, from_index.min(stored)), job_id(b.seq, stored));
        let mut out = Vec::with_capacity(limit.min(4096));
        if from < end && limit > 0 {
            self.store.scan_jobs(from, end - 1, &mut |id, job| {
                if !job.state().is_finished() {
                    return false;
                }
                out.push(*view(id, job, false));
                out.len() < limit
            })?;
        }
        Ok(out)
    }

    /// One job's result.
    pub fn job(&self, id: u64) -> Result<JobResult, Error> {
        let job = self
            .store
            .job(id)?
            .ok_or_else(|| Error::NotFound(format!("job {id}")))?;
        let mut r = *view(id, job, true);
        self.lock().overlay(&mut r);
        Ok(r)
    }

    /// A stored result for `position` from any batch and mode (proven-optimal ones first).
    pub fn lookup(&self, position: &str) -> Result<Option<(JobResult, Mode)>, Error> {
        let cube = parse_position(position, InputFormat::Auto)
            .map_err(|e| Error::InvalidArgument(e.to_string()))?;
        let canon = cube.canonical();
        let mkeys: HashSet<Vec<u8>> = {
            let st = self.lock();
            st.batches
                .values()
                .map(|b| mode_key(&b.mode.unwrap_or_default()))
                .collect()
        };
        let mkeys: Vec<Vec<u8>> = mkeys.into_iter().collect();
        let mut best: Option<(JobResult, Mode)> = None;
        for (id, job, stored) in self.indexed(&canon.cube.key(), &mkeys)? {
            let mut base = *view(id, job, true);
            self.lock().overlay(&mut base);
            let Some(r) = map_result(base, &stored, &cube, &canon) else {
                continue;
            };
            let better = best.as_ref().is_none_or(|(b, _)| r.optimal && !b.optimal);
            if better {
                best = Some((r, self.batch_mode(batch_seq(id))));
            }
        }
        Ok(best)
    }

    /// Of the lines of batch `seq` stored so far: (invalid ones, ones answered from the store).
    pub(crate) fn submitted_counts(&self, seq: u32) -> (u64, u64) {
        let mut st = self.lock();
        let b = st.batch(seq);
        (b.counts[JobState::Invalid as usize], b.from_store)
    }

    /// Counters since start, and the number of queued jobs.
    pub fn counters(&self) -> (Counters, usize) {
        let st = self.lock();
        (st.counters, st.queued() as usize)
    }

    /// The work not searched yet and what is searched now ([`Work`]), read at once.
    pub fn work(&self) -> Work {
        let st = self.lock();
        let fallback = st.solve_times.estimate();
        // a session searches at most one job per thread at once: what it holds beyond its
        // threads waits in its lease (a worker holds a few seconds of work ahead)
        let searching: u64 = st
            .workers
            .values()
            .map(|w| w.held.min(u64::from(w.threads)))
            .sum();
        let leased = st.leases.len() as u64;
        let searching = searching.min(leased);
        let waiting = leased - searching;
        // per batch, how long its oldest lease has run: a batch with no result yet searches
        // at least that long per job (a slow batch after a fast one is not taken for fast)
        let mut searched: HashMap<u32, f64> = HashMap::new();
        let now = self.clock.now();
        for (&id, lease) in &st.leases {
            let s = searched.entry(batch_seq(id)).or_default();
            *s = s.max(now.saturating_duration_since(lease.since).as_secs_f64());
        }
        let (mut queued, mut seconds, mut leased_seconds) = (0, 0.0, 0.0);
        for (seq, b) in st.batches.iter().filter(|(_, b)| !b.cancelled) {
            let per_job = b
                .search
                .get()
                .unwrap_or_else(|| fallback.max(searched.get(seq).copied().unwrap_or_default()));
            let q = b.counts[JobState::Queued as usize] + b.unmade();
            queued += q;
            seconds += q as f64 * per_job;
            leased_seconds += b.counts[JobState::Leased as usize] as f64 * per_job;
        }
        if leased > 0 {
            // the jobs waiting in leases, at the mean search time of the leased jobs
            seconds += leased_seconds * waiting as f64 / leased as f64;
        }
        Work {
            queued,
            waiting,
            searching,
            seconds,
        }
    }

    /// Search times of the results accepted since start (histogram and recent mean).
    pub fn solve_times(&self) -> crate::solve_times::SolveTimes {
        self.lock().solve_times.clone()
    }
}

/// The work of every batch not cancelled that no thread searches yet, and what is searched
/// now: the queue depth and autoscaling signal ([`crate::snapshot::Snapshot`]). Whether a
/// leased job is searched is not reported by workers: a session of `t` threads searches at
/// most `t` of the jobs it holds, and the rest wait in its lease.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    /// Jobs queued (not leased), and lines of range and sample batches not made into jobs.
    pub queued: u64,
    /// Leased jobs beyond the threads of the sessions holding them: waiting in a worker.
    pub waiting: u64,
    /// Leased jobs within the threads of the sessions holding them: being searched.
    pub searching: u64,
    /// Estimated thread-seconds of the queued and waiting jobs: each batch's at its mean
    /// search time; while it has no result yet, at the mean of all recent results or the
    /// time its oldest lease has run, whichever is longer.
    pub seconds: f64,
}
