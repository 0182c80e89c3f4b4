//! The job store: a small trait, and sled as its one implementation.
//!
//! Invariants: a job's record changes only by compare-and-swap against the record the caller
//! read, so two concurrent changes of one job can never both win. Nothing is acknowledged to a
//! client before a [`Store::flush`] that covers it. Everything in memory (queue, leases,
//! counters) is rebuilt from the jobs at start-up.
//!
//! Layout: a job lives inside a *block* of up to [`BLOCK_JOBS`] jobs with consecutive ids (tree
//! `job_blocks`, keyed by the first id), because sled's cost is per key: one key per 64 lines
//! makes storing a submission, or a group of results, about an order of magnitude cheaper than
//! one key per line. A change rewrites the job's block by compare-and-swap of the whole block,
//! so the changes of one group that fall in one block ([`Store::cas_jobs`]) are one write, and
//! a concurrent change of any job of the block makes the swap fail and the block be read again.
//! Records under a job's own id (tree `jobs`) exist only in stores of earlier versions (which
//! held every job there, or wrote a job's first change there): they take precedence over the
//! block's copy and are changed in place.
//!
//! Batch numbers (a job's id is `batch_seq << 40 | index`, see `record`) come from a dense
//! counter in tree `meta` (key `next_batch_seq`), which is read, checked against
//! [`MAX_BATCH_SEQ`](crate::record::MAX_BATCH_SEQ) and advanced in one sled transaction with the new batch's record
//! ([`Store::create_batch`]): no number of restarts or crashes hands a number out twice or
//! skips past the limit, and a batch past it is refused, never wrapped into another's ids.
//!
//! Format versions: key `format_version` in `meta`; what each version holds, and how an open
//! upgrades, migrates or refuses a store of another version, is [`format`]'s module doc.
//!
//! Files: this one holds the trait; `sled_store` its implementation; `block` the stored form of a
//! block of jobs; `format` the versions and their migrations.

mod block;
mod format;
mod sled_store;

use prost::Message;

use crate::error::Error;
use crate::record::{BatchRecord, JobRecord};
pub(crate) use block::JobTag;
pub(crate) use format::REVOKED_UNSWEPT_KEY;
/// How tests open a store's sled database directly.
#[cfg(test)]
pub(crate) use sled_store::config as sled_config;
pub(crate) use sled_store::SledStore;

/// Most jobs in one block.
pub(crate) const BLOCK_JOBS: usize = 64;

/// What the coordinator needs from storage.
pub(crate) trait Store: Send + Sync + 'static {
    /// A batch by id.
    fn batch(&self, id: &str) -> Result<Option<BatchRecord>, Error>;
    /// Writes a batch record (of a batch [`Store::create_batch`] made).
    fn put_batch(&self, b: &BatchRecord) -> Result<(), Error>;
    /// Writes the record of a new batch, `b` with its sequence number set to the next one
    /// (never handed out before, at most [`MAX_BATCH_SEQ`](crate::record::MAX_BATCH_SEQ); [`Error::Full`] past it), in one
    /// atomic step with advancing the counter. Returns the record as written.
    fn create_batch(&self, b: &BatchRecord) -> Result<BatchRecord, Error>;
    /// Every batch.
    fn batches(&self) -> Result<Vec<BatchRecord>, Error>;
    /// A job by id.
    fn job(&self, id: u64) -> Result<Option<JobRecord>, Error>;
    /// The records of the jobs with ids `ids` as stored, encoded (in that order; None for a
    /// missing one): what a compare-and-swap takes as a job's `old`, and what a reader decodes
    /// as much of as it needs. Runs of consecutive ids are read with one range scan each,
    /// which costs less than a lookup per id.
    fn jobs_encoded(&self, ids: &[u64]) -> Result<Vec<Option<Vec<u8>>>, Error>;
    /// Inserts new jobs (all in one atomic batch). Callers insert only ids beyond their batch's
    /// stored `total`, which the start-up rebuild raises over every stored job, so no stored
    /// job is ever overwritten.
    fn insert_jobs(&self, jobs: &[(u64, JobRecord)]) -> Result<(), Error>;
    /// Replaces `old` by `new` if the stored record is still `old`; false when it changed.
    /// `old` must be a record this store returned for `id`.
    fn cas_job(&self, id: u64, old: &JobRecord, new: &JobRecord) -> Result<bool, Error> {
        Ok(self.cas_jobs(&[(id, &old.encode_to_vec(), new)])?[0])
    }
    /// [`Store::cas_job`] for each `(id, old, new)`, `old` given encoded (as
    /// [`Store::jobs_encoded`] reads it, or as a decoded copy encodes again, which a record
    /// of an earlier version may not be byte for byte): whether each change was made. Each
    /// change is made or not on its own (of two changes of one job from the same `old`, the
    /// first given wins); the group only shares the writes.
    fn cas_jobs(&self, changes: &[(u64, &[u8], &JobRecord)]) -> Result<Vec<bool>, Error>;
    /// Visits the jobs with ids in `from..=last` in id order while `f` returns true.
    fn scan_jobs(&self, from: u64, last: u64, f: &mut JobVisit<'_>) -> Result<(), Error>;
    /// Jobs with ids in `from..to`, in id order (at most `limit`).
    fn jobs_range(&self, from: u64, to: u64, limit: usize) -> Result<Vec<(u64, JobRecord)>, Error> {
        let mut out = Vec::with_capacity(limit.min(4096));
        if from < to && limit > 0 {
            self.scan_jobs(from, to - 1, &mut |id, job| {
                out.push((id, job));
                out.len() < limit
            })?;
        }
        Ok(out)
    }
    /// Visits every job, decoded (the pass of a revocation; in tests, the oracle of what the
    /// tags say).
    fn for_each_job(&self, f: &mut dyn FnMut(u64, JobRecord)) -> Result<(), Error> {
        self.scan_jobs(0, u64::MAX, &mut |id, job| {
            f(id, job);
            true
        })
    }
    /// Visits every stored job, in no particular order, with its [`JobTag`]: what an open
    /// counts, read without decoding the records of this version's blocks.
    fn for_each_tag(&self, f: &mut dyn FnMut(u64, JobTag)) -> Result<(), Error>;
    /// Makes everything written so far durable.
    fn flush(&self) -> Result<(), Error>;
    /// Takes out the summary a clean stop left (None: there is none), durably: once this
    /// returns, a crash leaves no summary behind.
    fn take_summary(&self) -> Result<Option<Vec<u8>>, Error>;
    /// Writes the summary of a clean stop, durably. Nothing may change the jobs after it.
    fn put_summary(&self, summary: &[u8]) -> Result<(), Error>;
    /// The value under `key` in `meta` (the session key, the revoked names).
    fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>, Error>;
    /// Writes `value` under `key` in `meta` (durable at the next flush).
    fn put_meta(&self, key: &[u8], value: &[u8]) -> Result<(), Error>;
}

/// What [`Store::scan_jobs`] calls for each job: its id and record; false stops the scan.
pub(crate) type JobVisit<'a> = dyn FnMut(u64, JobRecord) -> bool + 'a;

#[cfg(test)]
mod tests;
