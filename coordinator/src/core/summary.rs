//! A clean stop and the quick open it allows: [`Core::close`] lets the changes in flight end,
//! refuses any later one, and stores a [`Summary`] of the batches (counts, histograms, where
//! each batch's queued lines begin); the next open takes it out and rebuilds its state from
//! it instead of scanning every job, so a restart costs the same whatever the store holds.
//! The symmetry index, which only a scan of the records can rebuild, is rebuilt after every
//! open by a thread of its own while the coordinator serves; readers of it wait until it is
//! whole.
//!
//! Invariants: a summary is written only once no change can follow it (the gate is closed and
//! no change is in flight), and the open that reads it takes it out of the store durably before
//! its first change, so a summary always describes the jobs as stored. A summary that does not
//! match the stored batches, or that leaves work for the open to do (a cancelled batch with
//! queued jobs), is not used: the open scans as after a crash.

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use cubefleet_proto::JobState;
use prost::Message;

use super::recovery::DoneRuns;
use super::state::{FastMap, State};
use super::Core;
use crate::clock::Clock;
use crate::error::Error;
use crate::mode::index_key;
use crate::record::{batch_seq, line_index, BatchRecord, BatchSummary, Summary};

/// Jobs the index-building thread reads at a time (it holds the core only that long).
const INDEX_STEP: u64 = 1 << 16;

/// A change of the store in flight ([`Core::op`]): while one lives, [`Core::close`] waits.
pub(super) struct Op<'c>(&'c Core);

impl Drop for Op<'_> {
    fn drop(&mut self) {
        self.0.inflight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How often [`Core::close`] looks whether the changes in flight have ended: they are single
/// store writes, done within a few milliseconds, and a close waits once per process.
const CLOSE_POLL: std::time::Duration = std::time::Duration::from_millis(1);

impl Core {
    /// Enters a change of the store and of the state derived from it; refused once
    /// [`Core::close`] began. Hold it from the first write until the state in memory follows.
    pub(super) fn op(&self) -> Result<Op<'_>, Error> {
        // counted before the check, so that `close`, which sets the flag before it waits for
        // the count to reach 0, either sees this change or this change sees the flag
        self.inflight.fetch_add(1, Ordering::SeqCst);
        let op = Op(self);
        if self.closed.load(Ordering::SeqCst) {
            return Err(Error::Unavailable("the coordinator is stopping".into()));
        }
        Ok(op)
    }

    /// Stops the coordinator cleanly: refuses every later change, waits for those in flight
    /// to end, then stores the summary of its batches (and flushes), so the next open is quick.
    /// Calls that only read still work.
    pub fn close(&self) -> Result<(), Error> {
        self.closed.store(true, Ordering::SeqCst);
        while self.inflight.load(Ordering::SeqCst) > 0 {
            std::thread::sleep(CLOSE_POLL);
        }
        // the index thread stops at its next step (it sees `closed`) and lets go of the store,
        // so the store can be opened again as soon as this core is dropped
        let builder = self
            .index_builder
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(builder) = builder {
            let _ = builder.join();
        }
        self.store.flush()?;
        let summary = self.summary();
        self.store.put_summary(&summary.encode_to_vec())?;
        tracing::info!(batches = summary.batches.len(), "summary stored");
        Ok(())
    }

    /// The summary of the state in memory (taken when no change is in flight).
    fn summary(&self) -> Summary {
        let st = self.lock();
        // the first leased line of each batch: a lease lives in memory only, so its job is
        // stored queued and is queued again at the next open
        let mut leased: FastMap<u32, u64> = FastMap::default();
        for &id in st.leases.keys() {
            let first = leased.entry(batch_seq(id)).or_insert(u64::MAX);
            *first = (*first).min(line_index(id));
        }
        let mut batches: Vec<BatchSummary> = st
            .batches
            .iter()
            .map(|(&seq, m)| {
                let mut counts = m.counts.to_vec();
                counts[JobState::Queued as usize] += counts[JobState::Leased as usize];
                counts[JobState::Leased as usize] = 0;
                let waiting = st.ready.first_waiting(seq).unwrap_or(0);
                BatchSummary {
                    seq,
                    counts,
                    histogram: m.histogram.clone(),
                    from_store: m.from_store,
                    first_queued: leased.get(&seq).map_or(waiting, |&l| l.min(waiting)),
                }
            })
            .collect();
        batches.sort_unstable_by_key(|b| b.seq);
        drop(st);
        // where the jobs the symmetry index names are, when it is whole: the next open reads
        // only those to rebuild it (the same index: each slot's job is added again)
        let index_runs_known = self.index_complete.load(Ordering::SeqCst);
        let mut index_runs = Vec::new();
        if index_runs_known {
            let mut runs = DoneRuns::default();
            let index = self.index.read().unwrap_or_else(|e| e.into_inner());
            let mut ids: Vec<u64> = index.0.values().copied().collect();
            drop(index);
            ids.sort_unstable();
            for id in ids {
                runs.add(id);
            }
            for r in runs.into_runs() {
                index_runs.extend([r.start, r.end]);
            }
        }
        Summary {
            batches,
            index_runs_known,
            index_runs,
        }
    }

    /// The state a summary gives for the stored `batches`, and the id ranges to rebuild the
    /// symmetry index from (every id when the summary does not say), or None when it does not
    /// fit them (another set of batches, counts of the wrong shape, a cursor past a batch's
    /// lines, runs not in pairs) or leaves work the scan would do (a cancelled batch with
    /// queued jobs). The state reads the time from `clock`.
    pub(super) fn from_summary(
        summary: &[u8],
        batches: &[BatchRecord],
        clock: Clock,
    ) -> Option<(State, Vec<Range<u64>>)> {
        let summary = Summary::decode(summary).ok()?;
        let runs: Vec<Range<u64>> = if summary.index_runs_known {
            if summary.index_runs.len() % 2 != 0 {
                return None;
            }
            summary
                .index_runs
                .chunks_exact(2)
                .map(|p| p[0]..p[1])
                .collect()
        } else {
            std::iter::once(0..u64::MAX).collect()
        };
        let mut st = State::new(clock);
        if summary.batches.len() != batches.len() {
            return None;
        }
        let by_seq: FastMap<u32, &BatchSummary> =
            summary.batches.iter().map(|b| (b.seq, b)).collect();
        for b in batches {
            let s = by_seq.get(&b.seq)?;
            let counts: [u64; 7] = s.counts.as_slice().try_into().ok()?;
            let queued = counts[JobState::Queued as usize];
            if s.first_queued > b.stored_lines() || (b.cancelled && queued > 0) {
                return None;
            }
            let m = st.batch(b.seq);
            m.take_record(b);
            m.counts = counts;
            m.histogram.clone_from(&s.histogram);
            m.from_store = s.from_store;
            st.ready.stored(
                b.seq,
                b.priority,
                s.first_queued,
                b.stored_lines(),
                b.cancelled,
            );
        }
        Some((st, runs))
    }

    /// Waits until the symmetry index holds every finished job.
    pub(super) fn wait_index(&self) {
        let (built, changed) = &self.index_built;
        let mut whole = built.lock().unwrap_or_else(|e| e.into_inner());
        while !*whole {
            whole = changed.wait(whole).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Marks the symmetry index whole and wakes its readers.
    pub(super) fn index_done(&self) {
        let (built, changed) = &self.index_built;
        *built.lock().unwrap_or_else(|e| e.into_inner()) = true;
        changed.notify_all();
    }

    /// Starts the thread that rebuilds the symmetry index of `core` (just opened) from the
    /// finished jobs, which lie in the id ranges `runs`, a step at a time (after a crash the
    /// open knows where they are from the tags; after a clean stop `runs` is everything); it
    /// holds the core only during a step, and
    /// ends early when the core is closed or dropped. However it ends (a store error, a
    /// panic), the index's readers are woken: without the index, lines are solved, not
    /// answered from the store.
    pub(super) fn build_index_behind(core: &Arc<Core>, runs: Vec<Range<u64>>) {
        /// Wakes the index's readers when the thread ends, however it ends.
        struct Whole(Weak<Core>);
        impl Drop for Whole {
            fn drop(&mut self) {
                if let Some(core) = self.0.upgrade() {
                    core.index_done();
                }
            }
        }
        let weak: Weak<Core> = Arc::downgrade(core);
        let builder = std::thread::spawn(move || {
            let _whole = Whole(weak.clone());
            for run in runs {
                let mut from = run.start;
                loop {
                    let Some(core) = weak.upgrade() else { return };
                    if core.closed.load(Ordering::SeqCst) {
                        return;
                    }
                    match core.index_step(from, run.end) {
                        Ok(Some(next)) => from = next,
                        Ok(None) => break,
                        Err(e) => {
                            tracing::error!(error = %e, "symmetry index not rebuilt");
                            return;
                        }
                    }
                }
            }
            if let Some(core) = weak.upgrade() {
                core.index_complete.store(true, Ordering::SeqCst);
            }
            tracing::info!("symmetry index rebuilt");
        });
        *core.index_builder.lock().unwrap_or_else(|e| e.into_inner()) = Some(builder);
    }

    /// Adds the finished jobs with ids in `from..to` (at most [`INDEX_STEP`] of them) to the
    /// symmetry index; returns where the next step starts (None: all read). Only the batches
    /// of the jobs read are looked up, so a rebuild costs the jobs it reads, however many
    /// batches the store holds.
    fn index_step(&self, from: u64, to: u64) -> Result<Option<u64>, Error> {
        let jobs = self.store.jobs_range(from, to, INDEX_STEP as usize)?;
        let Some(&(last, _)) = jobs.last() else {
            return Ok(None);
        };
        let mkeys: FastMap<u32, Vec<u8>> = {
            let st = self.lock();
            let mut keys = FastMap::default();
            for (id, job) in &jobs {
                let seq = batch_seq(*id);
                if job.state() == JobState::Done && !keys.contains_key(&seq) {
                    if let Some(key) = st
                        .batches
                        .get(&seq)
                        .and_then(|m| index_key(&m.mode.unwrap_or_default()))
                    {
                        keys.insert(seq, key);
                    }
                }
            }
            keys
        };
        let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
        for (id, job) in &jobs {
            if job.state() == JobState::Done {
                if let Some(mkey) = mkeys.get(&batch_seq(*id)) {
                    index.add(*id, job, mkey);
                }
            }
        }
        drop(index);
        Ok(last.checked_add(1))
    }
}
