//! The job store: a small trait, and sled as its one implementation.
//!
//! Invariants: one job = one key with a prost-encoded [`JobRecord`]; a job's state changes only
//! by compare-and-swap against the record the caller read, so two concurrent changes of one job
//! can never both win. Nothing is acknowledged to a client before a [`Store::flush`] that covers
//! it. Everything in memory (queue, leases, counters) is rebuilt from the jobs at start-up.

use std::path::Path;

use prost::Message;

use crate::error::Error;
use crate::record::{BatchRecord, JobRecord};

/// What the coordinator needs from storage.
pub(crate) trait Store: Send + Sync + 'static {
    /// A batch by id.
    fn batch(&self, id: &str) -> Result<Option<BatchRecord>, Error>;
    /// Writes a batch record.
    fn put_batch(&self, b: &BatchRecord) -> Result<(), Error>;
    /// Every batch.
    fn batches(&self) -> Result<Vec<BatchRecord>, Error>;
    /// A fresh batch sequence number (never reused).
    fn next_batch_seq(&self) -> Result<u32, Error>;
    /// A job by id.
    fn job(&self, id: u64) -> Result<Option<JobRecord>, Error>;
    /// The jobs with ids `ids` (in that order; None for a missing one). Runs of consecutive
    /// ids are read with one range scan each, which costs less than a lookup per id.
    fn jobs(&self, ids: &[u64]) -> Result<Vec<Option<JobRecord>>, Error>;
    /// Inserts new jobs (all in one atomic batch). Callers insert only ids beyond their batch's
    /// stored `total`, which the start-up rebuild raises over every stored job, so no stored
    /// job is ever overwritten.
    fn insert_jobs(&self, jobs: &[(u64, JobRecord)]) -> Result<(), Error>;
    /// Replaces `old` by `new` if the stored record is still `old`; false when it changed.
    fn cas_job(&self, id: u64, old: &JobRecord, new: &JobRecord) -> Result<bool, Error>;
    /// Jobs with ids in `from..to`, in id order.
    fn jobs_range(&self, from: u64, to: u64, limit: usize) -> Result<Vec<(u64, JobRecord)>, Error>;
    /// Visits every job (start-up rebuild).
    fn for_each_job(&self, f: &mut dyn FnMut(u64, JobRecord)) -> Result<(), Error>;
    /// Records, for each `(key, job)`, that `job` holds the result for the canonical `key`
    /// (one atomic batch; sorted keys make it cheaper).
    fn put_canonical(&self, entries: &[(Vec<u8>, u64)]) -> Result<(), Error>;
    /// Jobs holding results for keys starting with `prefix`.
    fn canonical(&self, prefix: &[u8]) -> Result<Vec<u64>, Error>;
    /// Makes everything written so far durable.
    fn flush(&self) -> Result<(), Error>;
}

/// The sled store: trees `batches`, `jobs`, `canonical`, `meta`.
pub(crate) struct SledStore {
    db: sled::Db,
    batches: sled::Tree,
    jobs: sled::Tree,
    canonical: sled::Tree,
}

impl SledStore {
    /// Opens (or creates) the store in `dir`.
    pub(crate) fn open(dir: &Path) -> Result<SledStore, Error> {
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(64 << 20)
            .open()?;
        Ok(SledStore {
            batches: db.open_tree("batches")?,
            jobs: db.open_tree("jobs")?,
            canonical: db.open_tree("canonical")?,
            db,
        })
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

    fn next_batch_seq(&self) -> Result<u32, Error> {
        // sled's id generator is durable and monotonic; sequence 0 is never handed out
        Ok(self.db.generate_id()? as u32 + 1)
    }

    fn job(&self, id: u64) -> Result<Option<JobRecord>, Error> {
        Ok(match self.jobs.get(id.to_be_bytes())? {
            Some(v) => Some(JobRecord::decode(&*v)?),
            None => None,
        })
    }

    fn jobs(&self, ids: &[u64]) -> Result<Vec<Option<JobRecord>>, Error> {
        let mut out = Vec::with_capacity(ids.len());
        let mut i = 0;
        while i < ids.len() {
            // the run ids[i..j] of consecutive ids
            let mut j = i + 1;
            while j < ids.len() && ids[j - 1].checked_add(1) == Some(ids[j]) {
                j += 1;
            }
            if j - i == 1 {
                out.push(self.job(ids[i])?);
            } else {
                let mut scan = self
                    .jobs
                    .range(ids[i].to_be_bytes()..=ids[j - 1].to_be_bytes());
                let mut next = scan.next().transpose()?;
                for &id in &ids[i..j] {
                    match &next {
                        Some((k, v)) if k.as_ref() == id.to_be_bytes() => {
                            out.push(Some(JobRecord::decode(&**v)?));
                            next = scan.next().transpose()?;
                        }
                        _ => out.push(None),
                    }
                }
            }
            i = j;
        }
        Ok(out)
    }

    fn insert_jobs(&self, jobs: &[(u64, JobRecord)]) -> Result<(), Error> {
        let mut batch = sled::Batch::default();
        for (id, j) in jobs {
            batch.insert(&id.to_be_bytes(), j.encode_to_vec());
        }
        self.jobs.apply_batch(batch)?;
        Ok(())
    }

    fn cas_job(&self, id: u64, old: &JobRecord, new: &JobRecord) -> Result<bool, Error> {
        let r = self.jobs.compare_and_swap(
            id.to_be_bytes(),
            Some(old.encode_to_vec()),
            Some(new.encode_to_vec()),
        )?;
        Ok(r.is_ok())
    }

    fn jobs_range(&self, from: u64, to: u64, limit: usize) -> Result<Vec<(u64, JobRecord)>, Error> {
        let mut out = Vec::new();
        for kv in self.jobs.range(from.to_be_bytes()..to.to_be_bytes()) {
            let (k, v) = kv?;
            let id = u64::from_be_bytes(
                k.as_ref()
                    .try_into()
                    .map_err(|_| Error::Internal("job key is not 8 bytes".into()))?,
            );
            out.push((id, JobRecord::decode(&*v)?));
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    fn for_each_job(&self, f: &mut dyn FnMut(u64, JobRecord)) -> Result<(), Error> {
        for kv in self.jobs.iter() {
            let (k, v) = kv?;
            let id = u64::from_be_bytes(
                k.as_ref()
                    .try_into()
                    .map_err(|_| Error::Internal("job key is not 8 bytes".into()))?,
            );
            f(id, JobRecord::decode(&*v)?);
        }
        Ok(())
    }

    fn put_canonical(&self, entries: &[(Vec<u8>, u64)]) -> Result<(), Error> {
        let mut batch = sled::Batch::default();
        for (key, job) in entries {
            batch.insert(key.as_slice(), &job.to_be_bytes());
        }
        self.canonical.apply_batch(batch)?;
        Ok(())
    }

    fn canonical(&self, prefix: &[u8]) -> Result<Vec<u64>, Error> {
        let mut out = Vec::new();
        for kv in self.canonical.scan_prefix(prefix) {
            let (_, v) = kv?;
            if let Ok(b) = <[u8; 8]>::try_from(v.as_ref()) {
                out.push(u64::from_be_bytes(b));
            }
        }
        Ok(out)
    }

    fn flush(&self) -> Result<(), Error> {
        self.db.flush()?;
        Ok(())
    }
}
