//! The store's format versions (key `format_version` in `meta`, a big-endian u32):
//! - 1 (no key): stores of earlier versions, numbered by sled's id generator, which jumped by
//!   about a million at every reopen, so after some reopens numbers passed 24 bits and batches
//!   shared job ids. Opened, such a store is migrated to version 2 (counter set past its
//!   highest batch number, in one transaction with the version) when every batch number is
//!   distinct and below `2^24`, so no two jobs can have shared a key; else it is refused
//!   ([`Error::AliasedStore`]) with what to do.
//! - 2: the counter in `meta`; batch records may carry a content hash, and (added
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
//!   session that answered, whether the answer rests on an unverifiable claim), job records
//!   the session whose bound they hold (`record::JobRecord::bound_session`), and `meta` the
//!   session key (`session_key`) and the revoked names (`revoked`). Records of version 4
//!   read as answers of unknown provenance. Version 4 became 5 so that a cubefleet that would
//!   drop the provenance when it rewrites a record, and would serve a revoked worker's
//!   answers, refuses the store instead; a version-4 store is upgraded in place.
//! - 6: as 5, and the revoked names in `meta` may list those whose pass over the jobs has not
//!   ended (`pending`, ended at the next open); answers resting on any unverified claim
//!   (also a timeout, an answer over the target, a failure) carry `claimed` and their
//!   worker, and a failed job the credentials whose refusals failed it (`confirmed_by`);
//!   batch records name the client credential that submitted them (`owner`). Version 5
//!   became 6 so that a cubefleet that would forget a revocation a crash cut short refuses
//!   the store instead; a store of an earlier version is upgraded in place with every
//!   revoked name pending once (key `revoked_unswept`, see `core::security`), since a
//!   version-5 revocation cut short left no mark.
//!
//! - 7: a batch may be a coset batch (`BatchRecord` fields `coset_start`, `coset_end`,
//!   `canonical_only`) and a question may ask for a goal, several solutions or a coset: a
//!   cubefleet of version 6 would read a coset batch as a file batch of no lines, so it
//!   refuses the store; a version-6 store is upgraded in place (nothing else changes).
//!
//! A store with a version newer than [`FORMAT_VERSION`] is refused ([`Error::NewerStore`]).
//!
//! This file holds the version check an open makes, the upgrades and the migration from
//! version 1, and the keys of `meta` with the helpers that read them.

use std::path::Path;

use sled::transaction::{ConflictableTransactionError, TransactionError};
use sled::Transactional;

use crate::error::Error;
use crate::record::{BatchRecord, MAX_BATCH_SEQ};

/// The store format this version writes (see the module doc for what each version is).
pub(crate) const FORMAT_VERSION: u32 = 7;

/// Key in `meta` set (to 1) by an upgrade from a version before 6: every revoked name's pass
/// over the jobs is run again at this open (`core::security`), which sets it to 0.
pub(crate) const REVOKED_UNSWEPT_KEY: &[u8] = b"revoked_unswept";

/// Key in `meta` of the store's format version (a big-endian u32; absent: version 1).
pub(super) const VERSION_KEY: &[u8] = b"format_version";

/// Key in `meta` of the next batch sequence number to hand out (a big-endian u32).
pub(super) const NEXT_SEQ_KEY: &[u8] = b"next_batch_seq";

/// Key in `meta` of the summary a clean stop leaves (see the module doc, version 3).
pub(super) const SUMMARY_KEY: &[u8] = b"summary";

/// Checks the format version of the store in `dir` (database `db`, its tree `meta`),
/// upgrading a store of versions 2 to 4 in place, and migrating a store of version 1 (or a
/// new, empty store) to [`FORMAT_VERSION`] when that is safe; `batches` reads every batch
/// record (for the migration). Refuses a newer store, and one that cannot be migrated.
pub(super) fn check(
    db: &sled::Db,
    meta: &sled::Tree,
    dir: &Path,
    batches: impl FnOnce() -> Result<Vec<BatchRecord>, Error>,
) -> Result<(), Error> {
    match meta.get(VERSION_KEY)? {
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
                // provenance, version 5 no pending revocation, version 6 no coset batch: each
                // is a store of this version as it is, but for the revocations one before 6
                // may have cut short
                if found < 6 {
                    meta.insert(REVOKED_UNSWEPT_KEY, &[1u8])?;
                }
                meta.insert(VERSION_KEY, &FORMAT_VERSION.to_be_bytes())?;
                db.flush()?;
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
        None => migrate_from_v1(db, meta, dir, &batches()?),
    }
}

/// Version 1 (no version key; also a new, empty store) to [`FORMAT_VERSION`]: when every
/// batch number is distinct and below `2^24` (so no two jobs shared a key), the counter is
/// set past the highest and the version written, in one transaction; else the store is
/// refused.
fn migrate_from_v1(
    db: &sled::Db,
    meta: &sled::Tree,
    dir: &Path,
    batches: &[BatchRecord],
) -> Result<(), Error> {
    let aliased = |why: String| Error::AliasedStore {
        dir: dir.display().to_string(),
        why,
    };
    let mut seen = std::collections::HashMap::new();
    for b in batches {
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
    transaction(meta, |meta| {
        meta.insert(NEXT_SEQ_KEY, &next.to_be_bytes())?;
        meta.insert(VERSION_KEY, &FORMAT_VERSION.to_be_bytes())?;
        Ok(())
    })?;
    db.flush()?;
    if !seen.is_empty() {
        tracing::info!(
            batches = seen.len(),
            version = FORMAT_VERSION,
            "store of an earlier version migrated"
        );
    }
    Ok(())
}

/// Runs `f` as a sled transaction over `trees`, its [`Error`]s (aborts) passed on as they are.
pub(super) fn transaction<T, R>(
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
pub(super) fn be_u32(v: &[u8], what: &str) -> Result<u32, Error> {
    Ok(u32::from_be_bytes(v.try_into().map_err(|_| {
        Error::Internal(format!("the store's {what} is not 4 bytes"))
    })?))
}
