//! Intake: a submission begins (the batch created, or continued and checked), its lines are
//! prepared in chunks (parsed, keyed by their symmetry class, answered from the store when a
//! symmetric copy was solved before) and stored, flushed before they become visible.

use std::time::{SystemTime, UNIX_EPOCH};

use cubefleet_proto::{BatchSpec, JobResult, JobState, Keep, ResultStatus};
use cubefleet_tables::symmetry::Canonical;
use cubefleet_tables::{is_blank_or_comment, parse_position, CubieCube, InputFormat};
use prost::Message;

use super::dedup::map_result;
use super::Core;
use crate::error::Error;
use crate::limits;
use crate::mode::{mode_key, normalize_mode};
use crate::range::States;
use crate::record::{checked_job_id, job_id, line_index, BatchRecord, JobRecord, MAX_LINES};

/// Longest line accepted in a submission, in bytes; longer lines become invalid jobs. The one
/// limit of every command ([`cubefleet_tables::MAX_LINE_BYTES`]).
pub const MAX_LINE_LEN: usize = cubefleet_tables::MAX_LINE_BYTES;

/// `text` for an error message: its first 60 characters, and "..." when there were more.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

/// What a batch is, for messages: "a file batch", "range START..END step K (keep ...)", ...
pub(crate) fn describe(b: &BatchRecord) -> String {
    let keep = if b.keeps_histogram() {
        "histogram"
    } else {
        "all"
    };
    match b.states() {
        None => "a file batch".into(),
        Some(States::Cosets {
            start,
            end,
            canonical,
        }) => format!(
            "cosets {start}..{end}{}",
            if canonical { ", canonical only" } else { "" }
        ),
        Some(States::Range { start, end, step }) => {
            format!("range {start}..{end} step {step}, keep {keep}")
        }
        Some(States::Sample { count, seed }) => {
            format!("sample of {count} states with seed {seed}, keep {keep}")
        }
    }
}

/// Milliseconds since the Unix epoch (0 for a clock before it).
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Core {
    /// Starts or continues a submission: creates the batch or checks that the spec matches.
    /// Returns the batch record (its `total` says how many lines are already stored; of a
    /// range or sample batch, how many states it covers).
    pub(crate) fn begin_submit(&self, spec: BatchSpec, owner: &str) -> Result<BatchRecord, Error> {
        let mode = normalize_mode(&spec.mode.unwrap_or_default())?;
        limits::check_len("name", spec.name.as_bytes(), limits::MAX_BATCH_NAME)?;
        limits::check_len("batch_id", spec.batch_id.as_bytes(), limits::MAX_BATCH_ID)?;
        limits::check_len("content_hash", &spec.content_hash, limits::MAX_CONTENT_HASH)?;
        if spec.confirm > 2 {
            return Err(Error::InvalidArgument(format!(
                "confirm is {}: give 0 or 1 (one worker's claim is enough) or 2",
                spec.confirm
            )));
        }
        let states = crate::range::states_of(&spec)?;
        let keep = Keep::try_from(spec.keep).map_err(|_| {
            Error::InvalidArgument(format!(
                "keep {} is not all (0) or histogram (1)",
                spec.keep
            ))
        })?;
        if states.is_none() && keep == Keep::Histogram {
            return Err(Error::InvalidArgument(
                "--keep histogram is for range and sample batches; a file batch keeps all".into(),
            ));
        }
        let id = if spec.batch_id.is_empty() {
            format!("b{:016x}", rand::random::<u64>())
        } else {
            spec.batch_id
        };
        if !self
            .submitting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone())
        {
            return Err(Error::InvalidArgument(format!(
                "batch {id} is being submitted by another client"
            )));
        }
        let mut new = BatchRecord {
            batch_id: id.clone(),
            name: spec.name,
            mode: Some(mode),
            priority: spec.priority,
            content_hash: spec.content_hash,
            keep: keep as i32,
            confirm: spec.confirm.max(1),
            owner: owner.to_string(),
            ..BatchRecord::default()
        };
        match states {
            Some(States::Range { start, end, step }) => {
                new.range_start = start.to_string();
                new.range_end = end.to_string();
                new.range_step = step;
            }
            Some(States::Sample { count, seed }) => {
                new.sample_count = count;
                new.sample_seed = seed;
            }
            Some(States::Cosets {
                start,
                end,
                canonical,
            }) => {
                new.coset_start = start;
                new.coset_end = end;
                new.canonical_only = canonical;
            }
            None => {}
        }
        new.total = states.map_or(0, |s| s.len());
        let opened = self.open_batch(new);
        if opened.is_err() {
            self.end_submit(&id);
        }
        opened
    }

    /// The batch `new.batch_id` a submission continues, checked against the submission's mode,
    /// range or sample definition, `keep`, and content hash (when both it and the batch have
    /// one); or `new`, created.
    fn open_batch(&self, new: BatchRecord) -> Result<BatchRecord, Error> {
        let _op = self.op()?;
        let id = &new.batch_id;
        if let Some(b) = self.store.batch(id)? {
            if b.mode != new.mode {
                return Err(Error::InvalidArgument(format!(
                    "batch {id} exists with another mode"
                )));
            }
            if b.confirm.max(1) != new.confirm {
                return Err(Error::InvalidArgument(format!(
                    "batch {id} exists with confirm {}",
                    b.confirm.max(1)
                )));
            }
            if b.states() != new.states() || b.keep != new.keep {
                return Err(Error::InvalidArgument(format!(
                    "batch {id} exists with another definition ({}); submit this one under \
                     another batch id",
                    describe(&b)
                )));
            }
            if !b.content_hash.is_empty() && new.content_hash != b.content_hash {
                return Err(Error::ContentDiffers {
                    batch: id.clone(),
                    what: if new.content_hash.is_empty() {
                        "these come without a content hash (from stdin?), so nothing shows \
                         they are its lines; submit the file by name"
                            .into()
                    } else {
                        "their content hash is not the one it was created with".into()
                    },
                });
            }
            return Ok(b);
        }
        if !new.owner.is_empty() {
            let open = self.lock().open_batches_of(&new.owner);
            if open >= limits::MAX_OPEN_BATCHES {
                return Err(Error::Exhausted(format!(
                    "credential {} has {open} unfinished batches, the most one credential may \
                     have; wait for some to finish, or cancel some",
                    new.owner
                )));
            }
        }
        let b = self.store.create_batch(&BatchRecord {
            created_unix_ms: now_ms(),
            ..new
        })?;
        // durable before anything acknowledges it: a range or sample batch is acknowledged
        // with no chunk stored (whose flush would cover it)
        self.store.flush()?;
        self.lock().batch(b.seq).take_record(&b);
        if b.states().is_some() {
            // its jobs are made when leased: wake the workers waiting for work
            Self::bump(&self.queued);
        }
        Ok(b)
    }

    /// Names the contents of batch `id` by `hash` once a submission whose lines were not known
    /// beforehand (stdin) has sent them all (`SubmitEnd`): stored with a batch that has no
    /// hash yet, and flushed, so a later submission under the id with other lines is refused;
    /// refused when the batch already has another.
    pub(crate) fn name_contents(&self, id: &str, hash: Vec<u8>) -> Result<(), Error> {
        limits::check_len("end.content_hash", &hash, limits::MAX_CONTENT_HASH)?;
        let _op = self.op()?;
        let _making = self.making.lock().unwrap_or_else(|e| e.into_inner());
        let mut b = self.batch_record(id)?;
        if b.content_hash == hash {
            return Ok(());
        }
        if !b.content_hash.is_empty() {
            return Err(Error::ContentDiffers {
                batch: id.to_string(),
                what: "their content hash is not the one it was created with".into(),
            });
        }
        b.content_hash = hash;
        self.store.put_batch(&b)?;
        self.store.flush()
    }

    /// Ends a submission (successful or not), letting another client continue the batch.
    pub(crate) fn end_submit(&self, id: &str) {
        self.submitting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }

    /// Prepares lines `first..first + lines.len()` of a batch for [`Core::store_chunk`]: the
    /// lines not stored yet (by an earlier submission) are parsed, keyed and looked up in the
    /// store. Writes nothing, so the next lines can be prepared while these are stored, and
    /// the parts of a chunk can be prepared on several threads at once.
    pub(crate) fn prepare_chunk(
        &self,
        batch: &BatchRecord,
        first: u64,
        lines: Vec<String>,
    ) -> Result<Vec<(u64, JobRecord)>, Error> {
        if batch.states().is_some() {
            return Err(Error::InvalidArgument(format!(
                "batch {} is a {} batch: its jobs are made from its definition, it takes no \
                 lines",
                batch.batch_id,
                batch.states().map_or("range", |s| s.kind())
            )));
        }
        let skip = batch.total.saturating_sub(first).min(lines.len() as u64) as usize;
        if first + lines.len() as u64 > MAX_LINES {
            return Err(Error::Full(format!(
                "batch {} would have more than {MAX_LINES} lines; split the file",
                batch.batch_id
            )));
        }
        self.check_stored_lines(batch, first, &lines[..skip])?;
        let mkey = mode_key(&batch.mode.unwrap_or_default());
        lines
            .into_iter()
            .enumerate()
            .skip(skip)
            .map(|(i, line)| self.prepare_line(batch, &mkey, first + i as u64, line))
            .collect()
    }

    /// Checks that `lines`, resubmitted as lines `first..` of `batch`, are the lines stored
    /// there (as [`cubefleet_tables::input::cut_line`] keeps them): a client that sends no
    /// content hash cannot make a batch answer for other lines than its own. A line with no
    /// stored job is not checked.
    fn check_stored_lines(
        &self,
        batch: &BatchRecord,
        first: u64,
        lines: &[String],
    ) -> Result<(), Error> {
        if lines.is_empty() {
            return Ok(());
        }
        let ids: Vec<u64> = (first..first + lines.len() as u64)
            .map(|i| job_id(batch.seq, i))
            .collect();
        for ((index, line), stored) in (first..).zip(lines).zip(self.store.jobs_encoded(&ids)?) {
            let Some(stored) = stored else { continue };
            let stored = JobRecord::decode(&*stored)?;
            if stored.r().input != cubefleet_tables::input::cut_line(line.clone()) {
                return Err(Error::ContentDiffers {
                    batch: batch.batch_id.clone(),
                    what: format!(
                        "line {index} is {:?}, the stored line {:?}",
                        shortened(line),
                        shortened(&stored.r().input)
                    ),
                });
            }
        }
        Ok(())
    }

    /// Stores the jobs [`Core::prepare_chunk`] made of the batch's next lines in one atomic
    /// sled batch, raises the batch's line count over them, flushes, and only then makes them
    /// visible (queued). Chunks of a batch are stored in line order.
    pub(crate) fn store_chunk(
        &self,
        batch: &mut BatchRecord,
        jobs: Vec<(u64, JobRecord)>,
    ) -> Result<(), Error> {
        let Some(&(last, _)) = jobs.last() else {
            return Ok(());
        };
        let _op = self.op()?;
        self.store.insert_jobs(&jobs)?;
        batch.raise_stored(line_index(last) + 1);
        self.store.put_batch(batch)?;
        self.store.flush()?;
        let mut from_store = 0;
        let mut st = self.lock();
        for (id, j) in &jobs {
            let state = j.state();
            st.count(*id, JobState::Unspecified, state);
            st.record_length(*id, j.r());
            if j.r().from_store {
                from_store += 1;
            }
        }
        st.counters.submitted += jobs.len() as u64;
        st.counters.from_store += from_store;
        let m = st.batch(batch.seq);
        m.from_store += from_store;
        m.made = m.made.max(batch.made);
        let cancelled = m.cancelled;
        st.ready.stored(
            batch.seq,
            batch.priority,
            0,
            batch.stored_lines(),
            cancelled,
        );
        drop(st);
        self.send_followers(batch.seq, jobs);
        Self::bump(&self.queued);
        Self::bump(&self.finished);
        Ok(())
    }

    /// The job record of line `index` of `batch`: parsed (invalid, with the reason, when it
    /// does not parse), keyed by its canonical class, and answered from the store when a
    /// symmetric copy was solved before in the batch's mode (`mkey`). A blank or `#` comment
    /// line is done at once with status `skipped` (no position, so no key, never leased). A
    /// line over [`MAX_LINE_LEN`] is invalid and kept cut just past the limit.
    fn prepare_line(
        &self,
        batch: &BatchRecord,
        mkey: &[u8],
        index: u64,
        line: String,
    ) -> Result<(u64, JobRecord), Error> {
        let id = checked_job_id(batch.seq, index)?;
        let coset = crate::mode::question_of(&batch.mode.unwrap_or_default()).is_coset();
        let parsed = (!is_blank_or_comment(&line)).then(|| {
            if coset {
                coset_line(&line)
            } else {
                parse_position(&line, InputFormat::Auto).map_err(|e| e.to_string())
            }
        });
        let mut r = JobResult {
            input: cubefleet_tables::input::cut_line(line),
            ..JobResult::default()
        };
        let (canonical, sym) = (Vec::new(), 0);
        match parsed {
            None => {
                r.state = JobState::Done as i32;
                r.set_outcome(ResultStatus::Skipped);
            }
            Some(Err(e)) => {
                r.state = JobState::Invalid as i32;
                r.set_outcome(ResultStatus::Invalid);
                r.error = e;
            }
            Some(Ok(cube)) => return Ok((id, self.job_of_position(batch, mkey, r, &cube)?)),
        }
        Ok((
            id,
            JobRecord {
                result: Some(Box::new(r)),
                canonical,
                sym,
                bound_session: String::new(),
            },
        ))
    }

    /// The record of a job of `batch` (mode key `mkey`) for the valid position `cube`, with
    /// the result part `r` so far (its line or state index): keyed by the position's canonical
    /// class, queued, or cancelled when the batch is, or done when the store answers it (a
    /// symmetric copy solved before in the mode; without the solution text when the batch
    /// keeps only lengths).
    pub(super) fn job_of_position(
        &self,
        batch: &BatchRecord,
        mkey: &[u8],
        mut r: JobResult,
        cube: &CubieCube,
    ) -> Result<JobRecord, Error> {
        r.state = JobState::Queued as i32;
        let canon = cube.canonical();
        let key = canon.cube.key();
        if batch.cancelled {
            r.state = JobState::Cancelled as i32;
            r.set_outcome(ResultStatus::Cancelled);
        } else if let Some(stored) =
            self.answer_from_store(cube, &canon, &key, mkey, batch.confirm)?
        {
            r.state = JobState::Done as i32;
            r.set_outcome(stored.outcome());
            r.solution = stored.solution;
            r.length = stored.length;
            r.optimal = stored.optimal;
            r.lower_bound = stored.lower_bound;
            r.from_store = true;
            // the answer's provenance goes with it: revoking its worker finds this copy too
            r.worker = stored.worker;
            r.session = stored.session;
            r.claimed = stored.claimed;
            r.confirmed_by = stored.confirmed_by;
            if batch.keeps_histogram() {
                r.solution.clear();
            }
        }
        Ok(JobRecord {
            result: Some(Box::new(r)),
            canonical: key.to_vec(),
            sym: u32::from(canon.sym) * 2 + u32::from(canon.inverted),
            bound_session: String::new(),
        })
    }

    /// A stored result for `cube` (or a symmetric / inverse copy) in the mode with key `mkey`,
    /// mapped back to `cube` and verified; `key` is the key of `canon`, its canonical form.
    /// Only an answer trusted as far as the batch asks is served: one resting on claims must
    /// have been confirmed by `confirm` credentials (a batch with `confirm` 2 is never
    /// answered by one credential's claim; [`trusted_for`]).
    fn answer_from_store(
        &self,
        cube: &CubieCube,
        canon: &Canonical,
        key: &[u8; 16],
        mkey: &[u8],
        confirm: u32,
    ) -> Result<Option<JobResult>, Error> {
        for (_, job, stored) in self.indexed(key, &[mkey])? {
            if !trusted_for(job.r(), confirm) {
                continue;
            }
            if let Some(r) = map_result(job.r().clone(), &stored, cube, canon) {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}

/// The representative of the coset a line of a coset batch names by its number (decimal,
/// `_` allowed between digits), or why it names none.
fn coset_line(line: &str) -> Result<CubieCube, String> {
    let text = line.trim().replace('_', "");
    let number: u64 = text
        .parse()
        .map_err(|_| format!("`{}` is no coset number", shortened(line.trim())))?;
    cubefleet_tables::coset::Coset::from_number(number)
        .map(|c| c.representative())
        .map_err(|e| e.to_string())
}

/// Whether the stored answer `r` may answer a batch that asks `confirm` credentials to agree
/// on a claim: a verified answer always; a claim when that many distinct credentials made it
/// (`confirmed_by`; one, its worker, when it names none).
pub(super) fn trusted_for(r: &JobResult, confirm: u32) -> bool {
    if !r.claimed {
        return true;
    }
    let mut by: Vec<&str> = r.confirmed_by.iter().map(String::as_str).collect();
    by.sort_unstable();
    by.dedup();
    by.len().max(1) >= confirm.max(1) as usize
}
