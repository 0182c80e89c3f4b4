//! The sled implementation of [`Store`]: trees, blocks of jobs swapped whole, range scans
//! that merge the records of earlier versions kept under a job's own id, and the batch
//! counter advanced in one transaction with a new batch's record. The layout and the
//! invariants are the module doc of [`super`]; the format versions are [`super::format`]'s.

use std::path::Path;

use prost::Message;
use sled::transaction::ConflictableTransactionError;

use super::block::{Block, JobTag};
use super::format::{self, be_u32, transaction, NEXT_SEQ_KEY, SUMMARY_KEY};
use super::{JobVisit, Store, BLOCK_JOBS};
use crate::error::Error;
use crate::record::{BatchRecord, JobRecord, MAX_BATCH_SEQ};

/// The sled store: trees `batches`, `job_blocks` (jobs as submitted), `jobs` (jobs changed
/// since, in stores of earlier versions) and `meta` (format version, batch counter). (Stores
/// of earlier versions also hold a tree `canonical`, which is no longer read: the symmetry
/// index is rebuilt in memory.)
pub(crate) struct SledStore {
    /// The database (flushed as a whole).
    pub(super) db: sled::Db,
    /// Tree `batches`: batch records by batch id.
    pub(super) batches: sled::Tree,
    /// Tree `job_blocks`: blocks of jobs by their first job id.
    pub(super) blocks: sled::Tree,
    /// Tree `jobs`: records under a job's own id (stores of earlier versions).
    pub(super) jobs: sled::Tree,
    /// Tree `meta`: format version, batch counter, summary, session key, revoked names.
    pub(super) meta: sled::Tree,
}

/// Bytes of sled's page cache: a hint sled keeps roughly to. 64 MiB holds a coordinator's
/// working set of blocks; twice as much made a coordinator's peak memory about 90 MB higher
/// for no measurable speed (`docs/benchmarks-history.md`).
const CACHE_BYTES: u64 = 64 << 20;

/// sled's segment size for a store it creates: 2 MiB. sled writes a tree node larger than a
/// quarter of a segment to a file of its own (a *blob*); with sled's default of 512 KiB a leaf
/// of 16 blocks of 64 jobs (about 150 KB) passed that, so every rewrite of such a leaf created
/// a file. A store keeps the segment size it was made with (sled refuses another one at open):
/// see [`segment_bytes`].
pub(super) const SEGMENT_BYTES: usize = 2 << 20;

/// The segment size to open the store in `dir` with: the one its sled configuration file
/// (`conf`, a line `segment_size: N`) records, or [`SEGMENT_BYTES`] for a new store (no such
/// file). A file that records none (sled writes it into every store, so it is damaged) is
/// refused: opening with a guessed size could read sled's log in segments of the wrong size.
/// Stores made before [`SEGMENT_BYTES`] record sled's default, 512 KiB.
pub(super) fn segment_bytes(dir: &Path) -> Result<usize, Error> {
    let path = dir.join("conf");
    let conf = match std::fs::read(&path) {
        Ok(conf) => conf,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SEGMENT_BYTES),
        Err(e) => return Err(e.into()),
    };
    String::from_utf8_lossy(&conf)
        .lines()
        .find_map(|l| l.strip_prefix("segment_size: ")?.trim().parse().ok())
        .ok_or_else(|| {
            Error::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "{}: sled's configuration names no segment size (a line `segment_size: N`), \
                     so the store is damaged; restore the data directory from a copy or start \
                     a new one",
                    path.display()
                ),
            ))
        })
}

/// sled's configuration for the store in `dir`: [`CACHE_BYTES`] of cache, the segment size of
/// [`segment_bytes`]. Whatever opens a store's sled database opens it with this (sled refuses a
/// segment size other than the store's own).
pub(crate) fn config(dir: &Path) -> Result<sled::Config, Error> {
    Ok(sled::Config::new()
        .path(dir)
        .cache_capacity(CACHE_BYTES)
        .segment_size(segment_bytes(dir)?))
}

impl SledStore {
    /// Opens (or creates) the store in `dir`: a new store gets [`format::FORMAT_VERSION`], a store of
    /// an earlier version is upgraded, migrated or refused, a newer one refused
    /// ([`format::check`]).
    pub(crate) fn open(dir: &Path) -> Result<SledStore, Error> {
        let db = config(dir)?.open()?;
        let store = SledStore {
            batches: db.open_tree("batches")?,
            blocks: db.open_tree("job_blocks")?,
            jobs: db.open_tree("jobs")?,
            meta: db.open_tree("meta")?,
            db,
        };
        format::check(&store.db, &store.meta, dir, || store.batches())?;
        Ok(store)
    }
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
