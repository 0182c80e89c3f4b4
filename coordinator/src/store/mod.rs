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
//! [`MAX_BATCH_SEQ`] and advanced in one sled transaction with the new batch's record
//! ([`Store::create_batch`]): no number of restarts or crashes hands a number out twice or
//! skips past the limit, and a batch past it is refused, never wrapped into another's ids.
//!
//! Format versions (key `format_version` in `meta`, a big-endian u32):
//! - 1 (no key): stores of earlier versions, numbered by sled's id generator, which jumped by
//!   about a million at every reopen, so after some reopens numbers passed 24 bits and batches
//!   shared job ids. Opened, such a store is migrated to version 2 (counter set past its
//!   highest batch number, in one transaction with the version) when every batch number is
//!   distinct and below `2^24`, so no two jobs can have shared a key; else it is refused
//!   ([`Error::AliasedStore`]) with what to do.
//! - 2: this version: the counter in `meta`; batch records may carry a content hash, and (added
//!   later without a version bump, as new optional prost fields) a range or sample
//!   definition with its `made` cursor and `keep` (`record::BatchRecord` tags 10-16), and job
//!   results a `state_index`. Records without them read as defaults: a file batch, keeping
//!   all, as before; no stored field changed meaning. (A cubefleet before these fields opens
//!   such a store and sees a range batch as a file batch of the lines made so far.)
//! - 3: as 2, and `meta` may hold a *summary* (key `summary`, a `record::Summary`): what a
//!   coordinator that stopped cleanly knew of its batches (counts, histograms, where each
//!   batch's queued lines begin), written after its last change, so the next open need not
//!   scan every job; an open takes it out (and flushes) before it changes anything, so a
//!   summary is never older than the jobs. Version 2 became 3 so that a cubefleet that knows
//!   no summary, and would leave a stale one behind, refuses the store instead. A version-2
//!   store is upgraded in place (nothing else changes).
//! - 4: as 3, and a block written by this version carries a tag per job (state, answered from
//!   the store, solution length: `block::JobTag`) beside the records, in the same value, so an
//!   open after a crash counts the jobs from the tags without decoding a record. Blocks of
//!   version 3 have no tags and are read as before (their records decoded); a block gets tags
//!   when it is next rewritten. Version 3 became 4 so that a cubefleet that cannot read a
//!   tagged block refuses the store instead of failing on its first block; a version-3 store
//!   is upgraded in place.
//! - 5: as 4, and job results may carry provenance (`JobResult` tags 17-19: the worker and
//!   session that answered, whether the answer rests on an unverifiable claim), job records the session whose bound they hold (`record::JobRecord::bound_session`),
//!   and `meta` the session key (`session_key`) and the revoked names (`revoked`). Records of
//!   version 4 read as answers of unknown provenance. Version 4 became 5 so that a cubefleet
//!   that would drop the provenance when it rewrites a record, and would serve a revoked
//!   worker's answers, refuses the store instead; a version-4 store is upgraded in place.
//!
//! A store with a version newer than [`FORMAT_VERSION`] is refused ([`Error::NewerStore`]).

mod block;

use std::path::Path;

use prost::Message;
use sled::transaction::{ConflictableTransactionError, TransactionError};
use sled::Transactional;

use crate::error::Error;
use crate::record::{BatchRecord, JobRecord, MAX_BATCH_SEQ};
use block::Block;
pub(crate) use block::JobTag;

/// The store format this version writes (see the module doc for what each version is).
pub(crate) const FORMAT_VERSION: u32 = 5;

/// Key in `meta` of the store's format version (a big-endian u32; absent: version 1).
const VERSION_KEY: &[u8] = b"format_version";

/// Key in `meta` of the next batch sequence number to hand out (a big-endian u32).
const NEXT_SEQ_KEY: &[u8] = b"next_batch_seq";

/// Key in `meta` of the summary a clean stop leaves (see the module doc, version 3).
const SUMMARY_KEY: &[u8] = b"summary";

/// Most jobs in one block.
pub(crate) const BLOCK_JOBS: usize = 64;

/// What the coordinator needs from storage.
pub(crate) trait Store: Send + Sync + 'static {
    /// A batch by id.
    fn batch(&self, id: &str) -> Result<Option<BatchRecord>, Error>;
    /// Writes a batch record (of a batch [`Store::create_batch`] made).
    fn put_batch(&self, b: &BatchRecord) -> Result<(), Error>;
    /// Writes the record of a new batch, `b` with its sequence number set to the next one
    /// (never handed out before, at most [`MAX_BATCH_SEQ`]; [`Error::Full`] past it), in one
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

/// The sled store: trees `batches`, `job_blocks` (jobs as submitted), `jobs` (jobs changed
/// since, in stores of earlier versions) and `meta` (format version, batch counter). (Stores
/// of earlier versions also hold a tree `canonical`, which is no longer read: the symmetry
/// index is rebuilt in memory.)
pub(crate) struct SledStore {
    db: sled::Db,
    batches: sled::Tree,
    blocks: sled::Tree,
    jobs: sled::Tree,
    meta: sled::Tree,
}

impl SledStore {
    /// Opens (or creates) the store in `dir`: a new store gets [`FORMAT_VERSION`], a store of
    /// version 1 is migrated or refused, a newer one refused (see the module doc).
    pub(crate) fn open(dir: &Path) -> Result<SledStore, Error> {
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(64 << 20)
            .open()?;
        let store = SledStore {
            batches: db.open_tree("batches")?,
            blocks: db.open_tree("job_blocks")?,
            jobs: db.open_tree("jobs")?,
            meta: db.open_tree("meta")?,
            db,
        };
        store.check_format(dir)?;
        Ok(store)
    }

    /// Checks the store's format version, migrating a store of version 1 (or a new, empty
    /// store) to [`FORMAT_VERSION`] when that is safe.
    fn check_format(&self, dir: &Path) -> Result<(), Error> {
        match self.meta.get(VERSION_KEY)? {
            Some(v) => {
                let found = be_u32(&v, "format version")?;
                if found > FORMAT_VERSION {
                    return Err(Error::NewerStore {
                        dir: dir.display().to_string(),
                        found,
                        known: FORMAT_VERSION,
                    });
                }
                if (2..FORMAT_VERSION).contains(&found) {
                    // version 2 holds no summary, version 3 no tagged block, version 4 no
                    // provenance: each is a store of this version as it is
                    self.meta
                        .insert(VERSION_KEY, &FORMAT_VERSION.to_be_bytes())?;
                    self.db.flush()?;
                    tracing::info!(from = found, version = FORMAT_VERSION, "store upgraded");
                } else if found < FORMAT_VERSION {
                    // versions with a key start at 2: a smaller one is no store this wrote
                    return Err(Error::Internal(format!(
                        "the store in {} has an unknown format version {found}",
                        dir.display()
                    )));
                }
                Ok(())
            }
            None => self.migrate_from_v1(dir),
        }
    }

    /// Version 1 (no version key; also a new, empty store) to [`FORMAT_VERSION`]: when every
    /// batch number is distinct and below `2^24` (so no two jobs shared a key), the counter is
    /// set past the highest and the version written, in one transaction; else the store is
    /// refused.
    fn migrate_from_v1(&self, dir: &Path) -> Result<(), Error> {
        let aliased = |why: String| Error::AliasedStore {
            dir: dir.display().to_string(),
            why,
        };
        let mut seen = std::collections::HashMap::new();
        for b in self.batches()? {
            if b.seq == 0 || b.seq > MAX_BATCH_SEQ + 1 {
                return Err(aliased(format!(
                    "batch {} has number {}, past 24 bits",
                    b.batch_id, b.seq
                )));
            }
            if let Some(other) = seen.insert(b.seq, b.batch_id.clone()) {
                return Err(aliased(format!(
                    "batches {other} and {} have the same number {}",
                    b.batch_id, b.seq
                )));
            }
        }
        let next = seen.keys().max().map_or(1, |&s| s + 1);
        transaction(&self.meta, |meta| {
            meta.insert(NEXT_SEQ_KEY, &next.to_be_bytes())?;
            meta.insert(VERSION_KEY, &FORMAT_VERSION.to_be_bytes())?;
            Ok(())
        })?;
        self.db.flush()?;
        if !seen.is_empty() {
            tracing::info!(
                batches = seen.len(),
                version = FORMAT_VERSION,
                "store of an earlier version migrated"
            );
        }
        Ok(())
    }
}

/// Runs `f` as a sled transaction over `trees`, its [`Error`]s (aborts) passed on as they are.
fn transaction<T, R>(
    trees: T,
    f: impl Fn(&T::View) -> Result<R, ConflictableTransactionError<Error>>,
) -> Result<R, Error>
where
    T: Transactional<Error>,
{
    trees.transaction(f).map_err(|e| match e {
        TransactionError::Abort(e) => e,
        TransactionError::Storage(e) => Error::Store(e),
    })
}

/// A big-endian u32 stored in `meta` (`what` names it in the error).
fn be_u32(v: &[u8], what: &str) -> Result<u32, Error> {
    Ok(u32::from_be_bytes(v.try_into().map_err(|_| {
        Error::Internal(format!("the store's {what} is not 4 bytes"))
    })?))
}

impl Store for SledStore {
    fn batch(&self, id: &str) -> Result<Option<BatchRecord>, Error> {
        Ok(match self.batches.get(id.as_bytes())? {
            Some(v) => Some(BatchRecord::decode(&*v)?),
            None => None,
        })
    }

    fn put_batch(&self, b: &BatchRecord) -> Result<(), Error> {
        self.batches
            .insert(b.batch_id.as_bytes(), b.encode_to_vec())?;
        Ok(())
    }

    fn batches(&self) -> Result<Vec<BatchRecord>, Error> {
        let mut out = Vec::new();
        for kv in self.batches.iter() {
            let (_, v) = kv?;
            out.push(BatchRecord::decode(&*v)?);
        }
        out.sort_by_key(|b| b.seq);
        Ok(out)
    }

    fn create_batch(&self, b: &BatchRecord) -> Result<BatchRecord, Error> {
        transaction((&self.batches, &self.meta), |(batches, meta)| {
            let abort = ConflictableTransactionError::Abort;
            let next = match meta.get(NEXT_SEQ_KEY)? {
                Some(v) => be_u32(&v, "batch counter").map_err(abort)?,
                None => {
                    return Err(abort(Error::Internal(
                        "the batch counter is missing".into(),
                    )))
                }
            };
            if next > MAX_BATCH_SEQ {
                return Err(abort(Error::Full(format!(
                    "all {MAX_BATCH_SEQ} batch numbers are used; start a new store (another --data directory)"
                ))));
            }
            let b = BatchRecord {
                seq: next,
                ..b.clone()
            };
            batches.insert(b.batch_id.as_bytes(), b.encode_to_vec())?;
            meta.insert(NEXT_SEQ_KEY, &(next + 1).to_be_bytes())?;
            Ok(b)
        })
    }

    fn job(&self, id: u64) -> Result<Option<JobRecord>, Error> {
        match self.job_encoded(id)? {
            Some(v) => Ok(Some(JobRecord::decode(&*v)?)),
            None => Ok(None),
        }
    }

    fn jobs_encoded(&self, ids: &[u64]) -> Result<Vec<Option<Vec<u8>>>, Error> {
        let mut out = Vec::with_capacity(ids.len());
        for run in runs(ids, usize::MAX) {
            let (first, last) = (ids[run.start], ids[run.end - 1]);
            if run.len() == 1 {
                out.push(self.job_encoded(first)?);
            } else {
                let mut next = first;
                self.scan(first, last, &mut |id, v| {
                    // ids the scan skipped are missing
                    out.extend((next..id).map(|_| None));
                    out.push(Some(v.to_vec()));
                    next = id + 1;
                    Ok(true)
                })?;
                out.extend((next..=last).map(|_| None));
            }
        }
        Ok(out)
    }

    fn insert_jobs(&self, jobs: &[(u64, JobRecord)]) -> Result<(), Error> {
        let ids: Vec<u64> = jobs.iter().map(|(id, _)| *id).collect();
        let mut batch = sled::Batch::default();
        // a block: up to BLOCK_JOBS jobs with consecutive ids
        for run in runs(&ids, BLOCK_JOBS) {
            batch.insert(&ids[run.start].to_be_bytes(), Block::encode(&jobs[run]));
        }
        self.blocks.apply_batch(batch)?;
        Ok(())
    }

    fn cas_jobs(&self, changes: &[(u64, &[u8], &JobRecord)]) -> Result<Vec<bool>, Error> {
        let mut made = vec![false; changes.len()];
        let mut order: Vec<usize> = (0..changes.len()).collect();
        order.sort_unstable_by_key(|&i| changes[i].0);
        let mut k = 0;
        while k < order.len() {
            let id = changes[order[k]].0;
            let block = self.block_of(id)?;
            let len = match &block {
                Some((_, bytes)) => Block::parse(bytes)?.len() as u64,
                None => 0,
            };
            let Some((start, bytes)) = block.filter(|(start, _)| id < start + len) else {
                // in no block: a store of an earlier version keeps it on its own
                let (_, old, new) = changes[order[k]];
                made[order[k]] = self.cas_own(id, old, new)?;
                k += 1;
                continue;
            };
            let mut members = Vec::new();
            while k < order.len() && changes[order[k]].0 < start + len {
                members.push(order[k]);
                k += 1;
            }
            self.cas_block(start, len, bytes, &members, changes, &mut made)?;
        }
        Ok(made)
    }

    fn scan_jobs(&self, from: u64, last: u64, f: &mut JobVisit<'_>) -> Result<(), Error> {
        self.scan(from, last, &mut |id, v| Ok(f(id, JobRecord::decode(v)?)))
    }

    fn for_each_tag(&self, f: &mut dyn FnMut(u64, JobTag)) -> Result<(), Error> {
        // records under a job's own id (stores of earlier versions) come before its block's
        let mut own = std::collections::HashSet::new();
        for kv in self.jobs.iter() {
            let (k, v) = kv?;
            let id = key_id(&k)?;
            own.insert(id);
            f(id, JobTag::of(&JobRecord::decode(&*v)?));
        }
        for kv in self.blocks.iter() {
            let (k, bytes) = kv?;
            let start = key_id(&k)?;
            let block = Block::parse(&bytes)?;
            for i in 0..block.len() {
                let id = start + i as u64;
                if !own.contains(&id) {
                    f(id, block.tag(i)?);
                }
            }
        }
        Ok(())
    }

    fn flush(&self) -> Result<(), Error> {
        self.db.flush()?;
        Ok(())
    }

    fn take_summary(&self) -> Result<Option<Vec<u8>>, Error> {
        let summary = self.meta.remove(SUMMARY_KEY)?;
        if summary.is_some() {
            self.db.flush()?;
        }
        Ok(summary.map(|v| v.to_vec()))
    }

    fn put_summary(&self, summary: &[u8]) -> Result<(), Error> {
        self.meta.insert(SUMMARY_KEY, summary)?;
        self.db.flush()?;
        Ok(())
    }

    fn meta(&self, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        Ok(self.meta.get(key)?.map(|v| v.to_vec()))
    }

    fn put_meta(&self, key: &[u8], value: &[u8]) -> Result<(), Error> {
        self.meta.insert(key, value)?;
        Ok(())
    }
}

impl SledStore {
    /// Compare-and-swap of a record under the job's own id (stores of earlier versions);
    /// `old` encoded. The swap is made against the record as stored once it is `old`
    /// ([`same_record`]).
    fn cas_own(&self, id: u64, old: &[u8], new: &JobRecord) -> Result<bool, Error> {
        let key = id.to_be_bytes();
        let Some(stored) = self.jobs.get(key)? else {
            return Ok(false);
        };
        if !same_record(&stored, old) {
            return Ok(false);
        }
        Ok(self
            .jobs
            .compare_and_swap(key, Some(stored), Some(new.encode_to_vec()))?
            .is_ok())
    }

    /// Job `id`'s record as stored, encoded: its own record where it has one, else its
    /// block's copy.
    fn job_encoded(&self, id: u64) -> Result<Option<Vec<u8>>, Error> {
        if let Some(v) = self.jobs.get(id.to_be_bytes())? {
            return Ok(Some(v.to_vec()));
        }
        let Some((start, bytes)) = self.block_of(id)? else {
            return Ok(None);
        };
        Ok(Block::parse(&bytes)?.record(id - start).map(<[u8]>::to_vec))
    }

    /// The block that may hold job `id`: the one with the greatest first id not above `id`
    /// (its first id and bytes). Whether it reaches `id` is for the caller to see.
    fn block_of(&self, id: u64) -> Result<Option<(u64, sled::IVec)>, Error> {
        match self.blocks.range(..=id.to_be_bytes()).next_back() {
            Some(kv) => {
                let (k, bytes) = kv?;
                Ok(Some((key_id(&k)?, bytes)))
            }
            None => Ok(None),
        }
    }

    /// The changes `members` (indices into `changes`, ascending ids) of jobs in the block of
    /// `len` jobs that starts at `start` and was read as `bytes`: one compare-and-swap of the
    /// whole block, read again and redone when another change of the block came first. Jobs of
    /// the block that have their own record change that instead.
    fn cas_block(
        &self,
        start: u64,
        len: u64,
        mut bytes: sled::IVec,
        members: &[usize],
        changes: &[(u64, &[u8], &JobRecord)],
        made: &mut [bool],
    ) -> Result<(), Error> {
        let mut own = std::collections::HashSet::new();
        for kv in self
            .jobs
            .range(start.to_be_bytes()..(start + len).to_be_bytes())
        {
            own.insert(key_id(&kv?.0)?);
        }
        let mut in_block = Vec::with_capacity(members.len());
        for &i in members {
            let (id, old, new) = changes[i];
            if own.contains(&id) {
                made[i] = self.cas_own(id, old, new)?;
            } else {
                in_block.push((i, old, new.encode_to_vec(), JobTag::of(new)));
            }
        }
        loop {
            let block = Block::parse(&bytes)?;
            let mut records: Vec<&[u8]> = (0..len)
                .map(|i| block.record(i).unwrap_or_default())
                .collect();
            let mut tags = block.tags()?;
            let mut any = false;
            for (i, old, new, tag) in &in_block {
                let at = (changes[*i].0 - start) as usize;
                made[*i] = same_record(records[at], old);
                if made[*i] {
                    records[at] = new;
                    tags[at] = *tag;
                    any = true;
                }
            }
            if !any {
                return Ok(());
            }
            let key = start.to_be_bytes();
            match self.blocks.compare_and_swap(
                key,
                Some(&bytes),
                Some(Block::encode_raw(&records, &tags)),
            )? {
                Ok(()) => return Ok(()),
                Err(e) => {
                    bytes = e
                        .current
                        .ok_or_else(|| Error::Internal("a job block vanished".into()))?;
                }
            }
        }
    }

    /// Visits the stored jobs with ids in `from..=to` in id order, each with its current
    /// record (its own record where it has one, else its block's copy), while `f` returns true.
    fn scan(&self, from: u64, to: u64, f: &mut Visit<'_>) -> Result<(), Error> {
        let mut own = self.jobs.range(from.to_be_bytes()..=to.to_be_bytes());
        let mut next_own = next_entry(&mut own)?;
        // the block that may hold `from`, then the blocks that start after it
        let first = self.blocks.range(..=from.to_be_bytes()).next_back();
        let later = match from.checked_add(1) {
            Some(after) if after <= to => {
                Some(self.blocks.range(after.to_be_bytes()..=to.to_be_bytes()))
            }
            _ => None,
        };
        for block in first.into_iter().chain(later.into_iter().flatten()) {
            let (k, bytes) = block?;
            let start = key_id(&k)?;
            let block = Block::parse(&bytes)?;
            for i in 0..block.len() {
                let id = start + i as u64;
                if id < from {
                    continue;
                }
                if id > to {
                    break;
                }
                // records of jobs before this one that exist only on their own
                while let Some((oid, v)) = next_own.take_if(|(oid, _)| *oid < id) {
                    if !f(oid, &v)? {
                        return Ok(());
                    }
                    next_own = next_entry(&mut own)?;
                }
                let go_on = match next_own.take_if(|(oid, _)| *oid == id) {
                    Some((_, v)) => {
                        next_own = next_entry(&mut own)?;
                        f(id, &v)?
                    }
                    None => f(id, block.record(i as u64).unwrap_or_default())?,
                };
                if !go_on {
                    return Ok(());
                }
            }
        }
        while let Some((oid, v)) = next_own {
            if !f(oid, &v)? {
                return Ok(());
            }
            next_own = next_entry(&mut own)?;
        }
        Ok(())
    }
}

/// Whether the stored record `stored` is the record `old`, given encoded as read or as this
/// version encodes a decoded copy: equal bytes, or equal once decoded and encoded again. (A
/// record an earlier version wrote may carry retired fields, a lease holder or an attempt
/// count, which a decoded copy has dropped; compared as bytes only, it would never match.)
fn same_record(stored: &[u8], old: &[u8]) -> bool {
    stored == old || JobRecord::decode(stored).is_ok_and(|r| r.encode_to_vec() == old)
}

/// What [`Store::scan_jobs`] calls for each job: its id and record; false stops the scan.
pub(crate) type JobVisit<'a> = dyn FnMut(u64, JobRecord) -> bool + 'a;

/// What [`SledStore::scan`] calls for each job: its id and encoded record; false stops the scan.
type Visit<'a> = dyn FnMut(u64, &[u8]) -> Result<bool, Error> + 'a;

/// The next `(job id, record bytes)` of a scan of the `jobs` tree.
fn next_entry(it: &mut sled::Iter) -> Result<Option<(u64, sled::IVec)>, Error> {
    match it.next().transpose()? {
        Some((k, v)) => Ok(Some((key_id(&k)?, v))),
        None => Ok(None),
    }
}

/// The runs of consecutive ids in `ids` (ascending), each at most `cap` long, as index ranges.
fn runs(ids: &[u64], cap: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i + 1;
        while j < ids.len() && j - i < cap && ids[j - 1].checked_add(1) == Some(ids[j]) {
            j += 1;
        }
        out.push(i..j);
        i = j;
    }
    out
}

/// The job id of a key.
fn key_id(k: &[u8]) -> Result<u64, Error> {
    Ok(u64::from_be_bytes(k.try_into().map_err(|_| {
        Error::Internal("job key is not 8 bytes".into())
    })?))
}

#[cfg(test)]
mod tests;
