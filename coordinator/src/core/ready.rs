//! The ready queue, without an entry per queued job: a batch's jobs are contiguous ids in line
//! order, so what is ready to lease is, per batch, a *cursor* over its stored lines (those at
//! or above it have not been handed out since the store was opened: each is queued, or
//! finished and skipped when a lease reads it) and the few jobs *returned* below it (leases
//! that expired, were released or had their results rejected). Memory grows with the batches
//! and the returned jobs, never with the lines queued: a batch of 100 million queued lines
//! costs what one of ten does.
//!
//! Invariants (kept under the state lock, see `leases`):
//! - every stored job of a batch with state `queued` is leased, returned, or at a line at or
//!   above the batch's cursor, and never two of these;
//! - `cursor <= end`, where `end` is the batch's stored lines; both only grow;
//! - a batch is in the lease order exactly when it is not cancelled and has work: a returned
//!   job or a line at or above its cursor.

use std::cmp::Reverse;
use std::collections::BTreeSet;

use crate::record::{batch_seq, job_id, line_index};

/// The part of the ready queue one batch holds.
#[derive(Clone, Debug, Default)]
struct BatchReady {
    /// The batch's priority (higher is leased first; it never changes).
    priority: i32,
    /// Whether the batch was cancelled: nothing of it is leased any more.
    cancelled: bool,
    /// Lines `cursor..end` have not been handed out since open.
    cursor: u64,
    /// The batch's stored lines (`0..end` have job records).
    end: u64,
    /// Queued jobs below the cursor (returned to the queue), by job id: leased before any
    /// line at the cursor, so the oldest lines go first.
    returned: BTreeSet<u64>,
}

impl BatchReady {
    /// Whether a lease could take anything of the batch.
    fn has_work(&self) -> bool {
        !self.cancelled && (!self.returned.is_empty() || self.cursor < self.end)
    }
}

/// What a lease takes next from one batch ([`Ready::take`]).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Returned jobs, by id (each still to be checked against its record).
    Returned(Vec<u64>),
    /// The lines at the batch's cursor: job ids `from..=last`, to be read from the store;
    /// the cursor already moved past them.
    Lines {
        /// The first job id.
        from: u64,
        /// The last job id.
        last: u64,
    },
}

/// The ready queue: per batch its cursor and returned jobs, and the batches with work in
/// lease order (highest priority first, then the oldest batch).
#[derive(Default)]
pub(super) struct Ready {
    /// Per batch sequence number (a few entries, read once per lease: the default hasher).
    batches: std::collections::HashMap<u32, BatchReady>,
    /// The batches with work, not cancelled: (priority reversed, sequence number).
    order: BTreeSet<(Reverse<i32>, u32)>,
}

impl Ready {
    /// Updates batch `seq`'s place in the lease order after a change.
    fn place(&mut self, seq: u32) {
        if let Some(b) = self.batches.get(&seq) {
            let key = (Reverse(b.priority), seq);
            if b.has_work() {
                self.order.insert(key);
            } else {
                self.order.remove(&key);
            }
        }
    }

    /// Batch `seq`, of `priority`, made known or brought up to date: its stored lines are
    /// `0..end` (at least), and no queued job lies below line `cursor` (at least) but the
    /// returned ones. A cancelled batch stays out of the lease order.
    pub(super) fn stored(
        &mut self,
        seq: u32,
        priority: i32,
        cursor: u64,
        end: u64,
        cancelled: bool,
    ) {
        let b = self.batch(seq, priority);
        b.end = b.end.max(end);
        b.cursor = b.cursor.max(cursor).min(b.end);
        b.cancelled |= cancelled;
        self.place(seq);
    }

    /// Batch `seq`'s part, made empty (with `priority`) when there was none.
    fn batch(&mut self, seq: u32, priority: i32) -> &mut BatchReady {
        self.batches.entry(seq).or_insert_with(|| BatchReady {
            priority,
            ..BatchReady::default()
        })
    }

    /// Returns the leased job `id` to the queue.
    pub(super) fn requeue(&mut self, id: u64, priority: i32) {
        let seq = batch_seq(id);
        let b = self.batch(seq, priority);
        if line_index(id) < b.cursor {
            b.returned.insert(id);
        }
        self.place(seq);
    }

    /// Forgets the queued job `id` (it finished without a lease): a returned job leaves the
    /// returned set; a line at or above the cursor stays, and a lease skips it when it reads
    /// its record.
    pub(super) fn remove(&mut self, id: u64) {
        let seq = batch_seq(id);
        if let Some(b) = self.batches.get_mut(&seq) {
            b.returned.remove(&id);
        }
        self.place(seq);
    }

    /// Takes batch `seq` out of the lease order for good (it was cancelled).
    pub(super) fn cancel(&mut self, seq: u32) {
        if let Some(b) = self.batches.get_mut(&seq) {
            b.cancelled = true;
        }
        self.place(seq);
    }

    /// The batch a lease serves next among those `admits` (highest priority, then oldest,
    /// with work), and what it takes of it: first up to `want` returned jobs, else up to
    /// `span` lines at its cursor, which moves past them. None when no such batch has work.
    pub(super) fn take(
        &mut self,
        want: usize,
        span: u64,
        admits: impl Fn(u32) -> bool,
    ) -> Option<Next> {
        let &(_, seq) = self.order.iter().find(|(_, seq)| admits(*seq))?;
        let b = self.batches.get_mut(&seq)?;
        let next = if b.returned.is_empty() {
            let n = span.max(1).min(b.end - b.cursor);
            let (from, last) = (job_id(seq, b.cursor), job_id(seq, b.cursor + n - 1));
            b.cursor += n;
            Next::Lines { from, last }
        } else {
            let ids = std::iter::from_fn(|| b.returned.pop_first())
                .take(want.max(1))
                .collect();
            Next::Returned(ids)
        };
        self.place(seq);
        Some(next)
    }

    /// The batch a lease serves next (None when no batch has work).
    pub(super) fn head(&self) -> Option<u32> {
        self.order.first().map(|&(_, seq)| seq)
    }

    /// The first line of batch `seq` that may hold a queued job no lease holds: its cursor, or
    /// a returned job below it (None for a batch it does not know).
    pub(super) fn first_waiting(&self, seq: u32) -> Option<u64> {
        let b = self.batches.get(&seq)?;
        let returned = b.returned.first().map(|&id| line_index(id));
        Some(returned.map_or(b.cursor, |r| r.min(b.cursor)))
    }

    /// Puts back what [`Ready::take`] took (the lease that took it could not read it).
    pub(super) fn untake(&mut self, next: Next) {
        match next {
            Next::Returned(ids) => {
                for id in ids {
                    if let Some(b) = self.batches.get_mut(&batch_seq(id)) {
                        b.returned.insert(id);
                    }
                }
            }
            Next::Lines { from, .. } => {
                if let Some(b) = self.batches.get_mut(&batch_seq(from)) {
                    b.cursor = b.cursor.min(line_index(from));
                }
            }
        }
        let seqs: Vec<u32> = self.batches.keys().copied().collect();
        for seq in seqs {
            self.place(seq);
        }
    }

    /// The returned jobs of every batch (they are the only per-job memory of the queue).
    #[cfg(test)]
    pub(super) fn returned(&self) -> usize {
        self.batches.values().map(|b| b.returned.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`Ready::take`] gives for lines `first..=last` of batch `seq`.
    fn lines(seq: u32, first: u64, last: u64) -> Option<Next> {
        Some(Next::Lines {
            from: job_id(seq, first),
            last: job_id(seq, last),
        })
    }

    #[test]
    fn leases_go_by_priority_then_batch_and_returned_jobs_first() {
        let mut r = Ready::default();
        r.stored(1, 0, 0, 10, false);
        r.stored(2, 5, 0, 3, false);
        r.stored(3, 5, 0, 4, true); // cancelled: never served
                                    // batch 2 first (higher priority), all its lines
        assert_eq!(r.take(8, 8, |_| true), lines(2, 0, 2));
        // then batch 1, in spans
        assert_eq!(r.take(8, 4, |_| true), lines(1, 0, 3));
        // a job of batch 2 comes back: it goes before batch 1's next lines
        r.requeue(job_id(2, 1), 5);
        assert_eq!(
            r.take(8, 4, |_| true),
            Some(Next::Returned(vec![job_id(2, 1)]))
        );
        assert_eq!(r.returned(), 0);
        // the rest of batch 1: the span is cut at its stored lines
        assert_eq!(r.take(8, 100, |_| true), lines(1, 4, 9));
        assert_eq!(r.take(8, 8, |_| true), None);
        // more lines stored: work again
        r.stored(1, 0, 0, 12, false);
        assert_eq!(r.take(8, 8, |_| true), lines(1, 10, 11));
        // what a lease could not read goes back
        r.requeue(job_id(1, 2), 0);
        let next = r.take(8, 8, |_| true).expect("the returned job");
        r.untake(next);
        assert_eq!(
            r.take(8, 8, |_| true),
            Some(Next::Returned(vec![job_id(1, 2)]))
        );
        r.stored(1, 0, 0, 14, false);
        let next = r.take(8, 8, |_| true).expect("new lines");
        r.untake(next);
        assert_eq!(r.take(8, 8, |_| true), lines(1, 12, 13));
        // a returned job that finishes without a lease leaves the queue
        r.requeue(job_id(1, 3), 0);
        r.remove(job_id(1, 3));
        assert_eq!(r.take(8, 8, |_| true), None);
        // a cancelled batch's returned job is not served
        r.requeue(job_id(1, 4), 0);
        r.cancel(1);
        assert_eq!(r.take(8, 8, |_| true), None);
    }

    /// A lease that does not admit a batch (a worker too old for its question) passes it
    /// over for the next, and leaves it as it was for others.
    #[test]
    fn a_batch_not_admitted_is_passed_over_and_kept() {
        let mut r = Ready::default();
        r.stored(1, 5, 0, 3, false);
        r.stored(2, 0, 0, 3, false);
        assert_eq!(r.take(8, 8, |seq| seq != 1), lines(2, 0, 2));
        assert_eq!(r.take(8, 8, |seq| seq != 1), None);
        assert_eq!(r.take(8, 8, |_| true), lines(1, 0, 2));
    }
}
