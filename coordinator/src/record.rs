//! What the store keeps: one prost-encoded record per batch and per job (a job's record sits
//! in a block of up to 64 jobs with consecutive ids; see `store`).
//!
//! Keys: a job's id is `batch_seq << 40 | index` (big-endian in the store), so the jobs of a
//! batch are contiguous and in line order. Batch sequence numbers are `1..=`[`MAX_BATCH_SEQ`]
//! and line indices `0..`[`MAX_LINES`] (both checked by [`checked_job_id`]), so every pair has
//! its own id, the ids of a batch's lines never reach the next batch's, and even the end of the
//! last batch's lines (`job_id(seq, total)`, an exclusive bound) is a `u64`. The symmetry index
//! (in memory) is rebuilt from the canonical keys the records carry.

use cubefleet_proto::{JobResult, JobState, Keep, Mode, ResultStatus};
use cubefleet_tables::symmetry::Canonical;
use cubefleet_tables::{parse_position, CubieCube, InputFormat};

use crate::error::Error;

/// Bits of a job id that hold the line index.
pub(crate) const INDEX_BITS: u32 = 40;

/// Most lines a batch holds: line indices are `0..MAX_LINES` (`2^40`).
pub const MAX_LINES: u64 = 1 << INDEX_BITS;

// the lines a range or sample may make (what the CLI checks before it submits one)
const _: () = assert!(MAX_LINES == cubefleet_tables::states::MAX_LINES);

/// The highest batch sequence number: `2^24 - 2`. The 24 bits above the index could hold
/// `2^24 - 1` too, but then the exclusive end of that batch's ids would not be a `u64`.
pub(crate) const MAX_BATCH_SEQ: u32 = (1 << (64 - INDEX_BITS)) - 2;

/// The id of line `index` of batch `seq`, for `seq <= MAX_BATCH_SEQ` and `index <= MAX_LINES`
/// (`index == MAX_LINES`, like `job_id(seq + 1, 0)`, only as the exclusive end of the batch's
/// ids). Ids of new jobs are made with [`checked_job_id`].
pub(crate) fn job_id(seq: u32, index: u64) -> u64 {
    debug_assert!(seq <= MAX_BATCH_SEQ + 1 && index <= MAX_LINES);
    ((seq as u64) << INDEX_BITS) + index
}

/// The id of line `index` of batch `seq`, or an error naming the limit when either is out of
/// range (never a wrapped id that could be another job's).
pub(crate) fn checked_job_id(seq: u32, index: u64) -> Result<u64, Error> {
    if seq == 0 || seq > MAX_BATCH_SEQ {
        return Err(Error::Full(format!(
            "batch number {seq} is outside 1..={MAX_BATCH_SEQ}"
        )));
    }
    if index >= MAX_LINES {
        return Err(Error::Full(format!(
            "line index {index} is past the last a batch can hold ({})",
            MAX_LINES - 1
        )));
    }
    Ok(job_id(seq, index))
}

/// The batch sequence number of a job id.
pub(crate) fn batch_seq(job_id: u64) -> u32 {
    (job_id >> INDEX_BITS) as u32
}

/// The line index (in its batch) of a job id.
pub fn line_index(job_id: u64) -> u64 {
    job_id & (MAX_LINES - 1)
}

/// A stored batch.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct BatchRecord {
    /// Its id.
    #[prost(string, tag = "1")]
    pub(crate) batch_id: String,
    /// Its sequence number (part of its jobs' ids), unique, increasing.
    #[prost(uint32, tag = "2")]
    pub(crate) seq: u32,
    /// Its name.
    #[prost(string, tag = "3")]
    pub(crate) name: String,
    /// The search.
    #[prost(message, optional, tag = "4")]
    pub(crate) mode: Option<Mode>,
    /// Priority.
    #[prost(int32, tag = "5")]
    pub(crate) priority: i32,
    /// Lines stored so far.
    #[prost(uint64, tag = "6")]
    pub(crate) total: u64,
    /// Unix milliseconds of creation.
    #[prost(uint64, tag = "7")]
    pub(crate) created_unix_ms: u64,
    /// Cancelled by a client.
    #[prost(bool, tag = "8")]
    pub(crate) cancelled: bool,
    /// The content hash the first submission gave (`BatchSpec.content_hash`: SHA-256 of its
    /// lines); empty when it gave none, and in batches of earlier versions. A submission
    /// under this id with another hash is refused.
    #[prost(bytes = "vec", tag = "9")]
    pub(crate) content_hash: Vec<u8>,
    /// A range batch's first state index (decimal; `BatchSpec.range_start`); empty for a file
    /// or sample batch, and in batches of earlier versions (which are file batches).
    #[prost(string, tag = "10")]
    pub(crate) range_start: String,
    /// A range batch's end (exclusive, decimal).
    #[prost(string, tag = "11")]
    pub(crate) range_end: String,
    /// A range batch's step (at least 1 in a range batch).
    #[prost(uint64, tag = "12")]
    pub(crate) range_step: u64,
    /// A sample batch's number of states (0: not a sample batch).
    #[prost(uint64, tag = "13")]
    pub(crate) sample_count: u64,
    /// A sample batch's seed.
    #[prost(uint64, tag = "14")]
    pub(crate) sample_seed: u64,
    /// Of a range or sample batch: lines made into jobs so far (`0..made` are stored, never
    /// more than [`MAX_LINES`]); written after the jobs it counts, and raised at start-up over
    /// every stored job. 0 for a file batch, whose `total` counts its stored lines.
    #[prost(uint64, tag = "15")]
    pub(crate) made: u64,
    /// What is kept of each result ([`Keep`]: all, the default, or the length only).
    #[prost(enumeration = "Keep", tag = "16")]
    pub(crate) keep: i32,
    /// How many credentials must agree on an unverifiable claim (`BatchSpec.confirm`: 0 or 1
    /// is one, 2 is two).
    #[prost(uint32, tag = "17")]
    pub(crate) confirm: u32,
    /// The client credential that made the batch (store format 6); empty for a batch of
    /// `run`, of a coordinator without credentials, and of earlier versions. Only it (or an
    /// admin) may cancel the batch.
    #[prost(string, tag = "18")]
    pub(crate) owner: String,
    /// A coset batch's first coset number (`BatchSpec.coset_start`); with `coset_end` 0 not a
    /// coset batch.
    #[prost(uint64, tag = "30")]
    pub(crate) coset_start: u64,
    /// A coset batch's end (exclusive; above 0 in a coset batch).
    #[prost(uint64, tag = "31")]
    pub(crate) coset_end: u64,
    /// A coset batch of the canonical cosets of its range only.
    #[prost(bool, tag = "32")]
    pub(crate) canonical_only: bool,
}

impl BatchRecord {
    /// Whether this is a range or sample batch (its lines are made as leased, counted by
    /// `made`), by the fields only its kind sets.
    pub(crate) fn is_made_at_lease(&self) -> bool {
        self.sample_count > 0 || !self.range_end.is_empty() || self.coset_end > 0
    }

    /// The lines stored so far: `0..stored_lines()` (a file batch's `total`, a range or sample
    /// batch's `made`).
    pub(crate) fn stored_lines(&self) -> u64 {
        if self.is_made_at_lease() {
            self.made
        } else {
            self.total
        }
    }

    /// Raises the count of stored lines to at least `lines`.
    pub(crate) fn raise_stored(&mut self, lines: u64) {
        if self.is_made_at_lease() {
            self.made = self.made.max(lines);
        } else {
            self.total = self.total.max(lines);
        }
    }

    /// Whether the batch keeps only the lengths of its results.
    pub(crate) fn keeps_histogram(&self) -> bool {
        self.keep == Keep::Histogram as i32
    }
}

/// A stored job: its line, its state, and its result once it has one. Tags 2 and 3 (the
/// lease holder and attempt count of earlier versions) are retired: leases live in memory.
///
/// Kept lean, because sled copies a whole leaf on every write: the stored result leaves out
/// what the job's key and the canonical form give back (`job_id`, `batch_id`, `index`,
/// `facelets`; see [`JobRecord::cube`]), and the coordinator fills them in for clients.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct JobRecord {
    /// The line, state and result as clients see them.
    #[prost(message, optional, boxed, tag = "1")]
    pub(crate) result: Option<Box<JobResult>>,
    /// Key of the position's class under the 48 symmetries and inversion (16 bytes; empty for
    /// invalid lines), computed once at submission for the symmetry index.
    #[prost(bytes = "vec", tag = "4")]
    pub(crate) canonical: Vec<u8>,
    /// How the position comes back from `canonical`: the symmetry times 2, plus 1 when the
    /// canonical form was made from the inverse position.
    #[prost(uint32, tag = "5")]
    pub(crate) sym: u32,
    /// The public id of the worker session whose heartbeat proved the stored `lower_bound`
    /// (empty: none, or a record of an earlier version). Only that session resumes from the
    /// bound and has it count when it reports: a bound is one session's claim, never the
    /// start of another's search.
    #[prost(string, tag = "6")]
    pub(crate) bound_session: String,
}

impl JobRecord {
    /// The result part (always present in stored records).
    pub(crate) fn r(&self) -> &JobResult {
        self.result
            .as_ref()
            .expect("stored jobs carry their result part")
    }

    /// The result part, mutably.
    pub(crate) fn r_mut(&mut self) -> &mut JobResult {
        self.result.get_or_insert_with(Box::default)
    }

    /// This record as it is once the job is cancelled (state and status `cancelled`).
    pub(crate) fn cancelled(&self) -> JobRecord {
        let mut new = self.clone();
        new.r_mut().state = JobState::Cancelled as i32;
        new.r_mut().set_outcome(ResultStatus::Cancelled);
        new
    }

    /// The position (None for an invalid line). Records written by earlier versions carry
    /// the facelets instead.
    pub(crate) fn cube(&self) -> Option<CubieCube> {
        stored_position(&self.r().facelets, &self.canonical, self.sym)
    }

    /// The position's canonical form, as stored (None for an invalid line).
    pub(crate) fn canonical_form(&self) -> Option<Canonical> {
        if let Some(c) = self.old_format_cube() {
            return Some(c?.canonical());
        }
        kept_canonical(&self.canonical, self.sym)
    }

    /// The key of the position's canonical form (None for an invalid line): the stored bytes,
    /// computed only for a record of an earlier version.
    pub(crate) fn canonical_key(&self) -> Option<[u8; 16]> {
        if let Some(c) = self.old_format_cube() {
            return Some(c?.canonical().cube.key());
        }
        self.canonical.as_slice().try_into().ok()
    }

    /// `Some(position)` for a record of an earlier version, which carries the facelets (and
    /// no symmetry index); None for a lean record.
    fn old_format_cube(&self) -> Option<Option<CubieCube>> {
        let f = &self.r().facelets;
        (!f.is_empty()).then(|| parse_position(f, InputFormat::Facelets).ok())
    }

    /// The job's state.
    pub(crate) fn state(&self) -> JobState {
        JobState::try_from(self.r().state).unwrap_or(JobState::Unspecified)
    }

    /// The stored lower bound when the session `worker` proved it, else 0 (see
    /// [`JobRecord::bound_session`]).
    pub(crate) fn bound_of(&self, worker: &str) -> u32 {
        if self.bound_session == worker {
            self.r().lower_bound
        } else {
            0
        }
    }
}

/// What a coordinator that stopped cleanly knew of its batches, stored in the store's `meta`
/// (format version 3, see `store`), so that the next open need not scan every job. Written
/// after the last change of any job, taken out by the next open before its first change.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Summary {
    /// One entry per batch of the store.
    #[prost(message, repeated, tag = "1")]
    pub(crate) batches: Vec<BatchSummary>,
    /// Whether `index_runs` is given (a summary written without it, by an earlier version or
    /// while the symmetry index was not whole, leaves the open to read every job for it).
    #[prost(bool, tag = "2")]
    pub(crate) index_runs_known: bool,
    /// The id ranges holding every job the symmetry index named at the stop, as `start, end`
    /// pairs (end exclusive, ascending): what the open rebuilds the index from.
    #[prost(uint64, repeated, tag = "3")]
    pub(crate) index_runs: Vec<u64>,
}

/// A batch in a [`Summary`].
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct BatchSummary {
    /// The batch's sequence number.
    #[prost(uint32, tag = "1")]
    pub(crate) seq: u32,
    /// Its jobs per state, indexed by `JobState as usize` (none `leased`: a lease lives in
    /// memory only, its job is stored `queued`).
    #[prost(uint64, repeated, tag = "2")]
    pub(crate) counts: Vec<u64>,
    /// Its solutions per length.
    #[prost(uint64, repeated, tag = "3")]
    pub(crate) histogram: Vec<u64>,
    /// Its jobs answered from the store at submission.
    #[prost(uint64, tag = "4")]
    pub(crate) from_store: u64,
    /// No job of its lines below this is queued.
    #[prost(uint64, tag = "5")]
    pub(crate) first_queued: u64,
}

/// What a lease reads of a stored job: the fields of [`JobRecord`] it needs, under the same
/// tags. Decoding a record as this skips the line and the result texts without allocating them.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct LeaseView {
    /// The result part's state, lower bound and facelets.
    #[prost(message, optional, tag = "1")]
    result: Option<LeaseResultView>,
    /// As [`JobRecord::canonical`].
    #[prost(bytes = "vec", tag = "4")]
    canonical: Vec<u8>,
    /// As [`JobRecord::sym`].
    #[prost(uint32, tag = "5")]
    sym: u32,
    /// As [`JobRecord::bound_session`].
    #[prost(string, tag = "6")]
    bound_session: String,
}

/// The fields of a [`JobResult`] a lease reads, under the same tags.
#[derive(Clone, PartialEq, prost::Message)]
struct LeaseResultView {
    #[prost(enumeration = "JobState", tag = "5")]
    state: i32,
    #[prost(uint32, tag = "11")]
    lower_bound: u32,
    #[prost(string, tag = "15")]
    facelets: String,
}

impl LeaseView {
    /// The job's state.
    pub(crate) fn state(&self) -> JobState {
        let state = self.result.as_ref().map_or(0, |r| r.state);
        JobState::try_from(state).unwrap_or(JobState::Unspecified)
    }

    /// The proven lower bound when the session `worker` proved it (0 for another's: see
    /// [`JobRecord::bound_session`]).
    pub(crate) fn lower_bound_of(&self, worker: &str) -> u32 {
        if self.bound_session != worker {
            return 0;
        }
        self.result.as_ref().map_or(0, |r| r.lower_bound)
    }

    /// As [`JobRecord::cube`].
    pub(crate) fn cube(&self) -> Option<CubieCube> {
        let facelets = self.result.as_ref().map_or("", |r| r.facelets.as_str());
        stored_position(facelets, &self.canonical, self.sym)
    }
}

/// The position a stored record keeps: parsed from `facelets` in a record of an earlier
/// version, else made back from its canonical key and `sym` (None for an invalid line).
fn stored_position(facelets: &str, canonical: &[u8], sym: u32) -> Option<CubieCube> {
    if !facelets.is_empty() {
        return parse_position(facelets, InputFormat::Facelets).ok();
    }
    Some(kept_canonical(canonical, sym)?.original())
}

/// The canonical form a lean record keeps: its canonical key and how the position comes back
/// from it, `sym` (None without a key: an invalid line).
fn kept_canonical(canonical: &[u8], sym: u32) -> Option<Canonical> {
    Some(Canonical {
        cube: CubieCube::from_key(canonical.try_into().ok()?),
        sym: (sym / 2) as u8,
        inverted: sym % 2 == 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubefleet_tables::FaceletCube;
    use prost::Message;
    use rand::SeedableRng;

    /// The key encoding, over random and edge pairs: ids round-trip, order follows (batch,
    /// line) order (so no two pairs share an id), a batch's ids end below the next batch's,
    /// and pairs out of range are refused.
    #[test]
    fn job_ids_are_distinct_ordered_and_bounded() {
        use rand::Rng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(23);
        let seqs = [1, 2, MAX_BATCH_SEQ - 1, MAX_BATCH_SEQ];
        let indices = [0, 1, MAX_LINES / 2, MAX_LINES - 2, MAX_LINES - 1];
        let mut pairs: Vec<(u32, u64)> = seqs
            .iter()
            .flat_map(|&s| indices.iter().map(move |&i| (s, i)))
            .collect();
        for _ in 0..2000 {
            let seq = rng.random_range(1..=MAX_BATCH_SEQ);
            let index = match rng.random_range(0..3) {
                0 => rng.random_range(0..MAX_LINES),
                1 => rng.random_range(0..1000),
                _ => MAX_LINES - 1 - rng.random_range(0..1000),
            };
            pairs.push((seq, index));
            // a neighbour in the same batch, so equal batches are compared too
            pairs.push((seq, index ^ 1));
        }
        let ids: Vec<u64> = pairs
            .iter()
            .map(|&(s, i)| checked_job_id(s, i).expect("in range"))
            .collect();
        for (&(s, i), &id) in pairs.iter().zip(&ids) {
            assert_eq!((batch_seq(id), line_index(id)), (s, i));
            assert_eq!(job_id(s, i), id);
            // the exclusive end of the batch's ids is above every one of them
            assert!(id < job_id(s, MAX_LINES));
            assert_eq!(job_id(s, MAX_LINES), job_id(s + 1, 0));
        }
        for (a, ida) in pairs.iter().zip(&ids).step_by(7) {
            for (b, idb) in pairs.iter().zip(&ids) {
                assert_eq!(a.cmp(b), ida.cmp(idb), "{a:?} {b:?}");
            }
        }
        for (s, i) in [
            (0, 0),
            (MAX_BATCH_SEQ + 1, 0),
            (u32::MAX, 5),
            (1, MAX_LINES),
            (MAX_BATCH_SEQ, u64::MAX),
        ] {
            let e = checked_job_id(s, i).expect_err("out of range");
            assert!(matches!(e, Error::Full(_)), "{e}");
        }
    }

    /// A lease reads, from the stored bytes, the same state, lower bound and position as the
    /// whole record gives: of lean records (canonical key and symmetry) and of records of
    /// earlier versions (facelets), and none for an invalid line.
    #[test]
    fn the_lease_view_reads_what_the_whole_record_gives() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut records = Vec::new();
        for i in 0..50 {
            let cube = CubieCube::random(&mut rng);
            let canonical = cube.canonical();
            let result = JobResult {
                input: format!("line {i}"),
                state: JobState::Queued as i32,
                status: "queued".into(),
                lower_bound: i % 7,
                ..JobResult::default()
            };
            records.push(JobRecord {
                result: Some(Box::new(result.clone())),
                canonical: canonical.cube.key().to_vec(),
                sym: u32::from(canonical.sym) * 2 + u32::from(canonical.inverted),
                bound_session: String::new(),
            });
            records.push(JobRecord {
                result: Some(Box::new(JobResult {
                    facelets: FaceletCube::from_cubie(&cube).to_string(),
                    state: JobState::Done as i32,
                    ..result
                })),
                canonical: Vec::new(),
                sym: 0,
                bound_session: String::new(),
            });
        }
        records.push(JobRecord {
            result: Some(Box::new(JobResult {
                input: "not a cube".into(),
                state: JobState::Invalid as i32,
                ..JobResult::default()
            })),
            canonical: Vec::new(),
            sym: 0,
            bound_session: String::new(),
        });
        for record in &records {
            let view = LeaseView::decode(&record.encode_to_vec()[..]).expect("decodes");
            assert_eq!(view.state(), record.state());
            assert_eq!(view.lower_bound_of(""), record.r().lower_bound);
            // a bound stored without a session is no other session's to resume from
            assert_eq!(view.lower_bound_of("w000000000001"), 0);
            assert_eq!(view.cube(), record.cube());
        }
        assert!(records[0].cube().is_some() && records[1].cube() == records[0].cube());
        assert!(records.last().and_then(JobRecord::cube).is_none());
    }
}
