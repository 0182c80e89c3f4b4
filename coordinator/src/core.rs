//! The coordinator's logic, independent of gRPC: batches, the ready queue, leases, verified
//! completions, deduplication and progress. Methods block on the store; the services call them
//! from `spawn_blocking`.
//!
//! Invariants:
//! - the store is the truth; the in-memory [`State`] (queue, leases, counters) is derived from
//!   it and rebuilt at start-up;
//! - a lease lives only in memory: a leased job's record stays `queued` in the store (so a
//!   restart returns it to the queue without writing anything), and every reader of records
//!   reports it as `leased` while [`State::leases`] holds it;
//! - a job's stored state changes only by a successful compare-and-swap of its record, and the
//!   in-memory counters change only after that swap succeeded, so each job is counted in one
//!   state;
//! - submissions and completions are acknowledged only after a flush covering them;
//! - the symmetry index ([`SymIndex`]) names, for a position's class and a mode, a finished job
//!   holding a reusable answer; it is memory only, rebuilt from the records at start-up, and
//!   every candidate it names is checked against the record before use.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cubefleet_proto::{
    mode, BatchSpec, BatchStatus, Completion, JobProgress, JobResult, JobState, LeasedJob, Metric,
    Mode,
};
use cubefleet_tables::{
    is_blank_or_comment, parse_position, CubieCube, FaceletCube, InputFormat, MoveSeq,
};
use prost::Message;
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::record::{
    batch_seq, checked_job_id, job_id, line_index, BatchRecord, JobRecord, LeaseView, MAX_LINES,
};
use crate::store::Store;
use crate::verify::{known_length, mode_key, normalize_mode, possible_bound, verify, Checked};

/// Longest line accepted in a submission, in bytes; longer lines become invalid jobs. The one
/// limit of every command ([`cubefleet_tables::MAX_LINE_BYTES`]).
pub const MAX_LINE_LEN: usize = cubefleet_tables::MAX_LINE_BYTES;

/// A lease held by a worker.
#[derive(Clone, Debug)]
struct Lease {
    /// The worker's id (shared by all the jobs of one lease call).
    worker: Arc<str>,
    deadline: Instant,
}

/// Per-batch counters.
#[derive(Clone, Debug, Default)]
struct BatchMem {
    id: String,
    priority: i32,
    /// The batch's search (a copy of the stored record's, which never changes).
    mode: Option<Mode>,
    /// Jobs per state, indexed by `JobState as usize`.
    counts: [u64; 7],
    histogram: Vec<u64>,
    cancelled: bool,
    /// Jobs answered from the store at submission.
    from_store: u64,
    /// (time, finished) samples for the rate.
    samples: VecDeque<(Instant, u64)>,
}

impl BatchMem {
    fn finished(&self) -> u64 {
        self.counts[JobState::Done as usize]
            + self.counts[JobState::Invalid as usize]
            + self.counts[JobState::Cancelled as usize]
            + self.counts[JobState::Failed as usize]
    }
}

/// Longest wait of a long-polling lease ([`Core::lease_wait`]).
pub const MAX_LEASE_WAIT: Duration = Duration::from_secs(10);

/// Most jobs one lease hands out.
pub const MAX_LEASE_JOBS: u32 = 10_000;

/// Results of one job rejected (from the worker holding its lease) before the job ends
/// `failed` instead of going back to the queue: a job no worker answers acceptably does not
/// loop forever.
pub const MAX_REJECTIONS: usize = 5;

/// A leased job as the core hands it out: the gRPC service sends the position as facelets
/// ([`LeasedJob`]), a worker in the same process takes the cubies as they are.
#[derive(Clone, Debug)]
pub struct Leased {
    /// The job's id.
    pub job_id: u64,
    /// The position (valid: invalid lines are never queued).
    pub cube: CubieCube,
    /// The search its batch asks for.
    pub mode: Mode,
    /// Lengths below this are proven to have no solution (where a re-leased optimal search
    /// resumes).
    pub lower_bound: u32,
}

impl From<Leased> for LeasedJob {
    fn from(j: Leased) -> LeasedJob {
        LeasedJob {
            job_id: j.job_id,
            facelets: FaceletCube::from_cubie(&j.cube).to_string(),
            mode: Some(j.mode),
            lower_bound: j.lower_bound,
        }
    }
}

/// A registered worker.
#[derive(Clone, Debug)]
pub struct WorkerInfo {
    /// Its name.
    pub name: String,
    /// Its search threads.
    pub threads: u32,
    /// Its table fingerprint.
    pub fingerprint: String,
    /// Results it had accepted.
    pub completed: u64,
    /// Results it had refused.
    pub rejected: u64,
    /// When it last called.
    pub last_seen: Instant,
}

/// Counters since start, for metrics.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// Lines submitted.
    pub submitted: u64,
    /// Results accepted.
    pub completed: u64,
    /// Results refused by verification.
    pub rejected: u64,
    /// Leases that expired.
    pub lease_expiries: u64,
    /// Lines answered from the store at submission.
    pub from_store: u64,
}

/// A hash map keyed by ids this process made or read (job ids, batch sequence numbers, worker
/// ids): hashed with foldhash, which is several times cheaper than SipHash on such keys.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Everything derived from the store, behind one lock.
#[derive(Default)]
struct State {
    queue: BTreeSet<(Reverse<i32>, u64)>,
    leases: FastMap<u64, Lease>,
    batches: FastMap<u32, BatchMem>,
    workers: FastMap<String, WorkerInfo>,
    counters: Counters,
    /// The reasons each job's results were rejected so far (from its lease holders), until
    /// it finishes; at [`MAX_REJECTIONS`] the job fails.
    rejections: FastMap<u64, Vec<String>>,
    next_worker: u64,
    /// Search times of accepted results, for metrics and the queued-work estimate.
    solve_times: crate::solve_times::SolveTimes,
}

impl State {
    fn batch(&mut self, seq: u32) -> &mut BatchMem {
        self.batches.entry(seq).or_default()
    }

    /// The mode of batch `seq` (the default mode for an unknown batch).
    fn mode(&self, seq: u32) -> Mode {
        self.batches
            .get(&seq)
            .and_then(|b| b.mode)
            .unwrap_or_default()
    }

    /// Fills in what only the coordinator's memory knows of a job's [`view`]: its batch's id,
    /// and `leased` while a lease (memory only) holds it.
    fn overlay(&self, r: &mut JobResult) {
        if let Some(b) = self.batches.get(&batch_seq(r.job_id)) {
            r.batch_id.clone_from(&b.id);
        }
        if r.state == JobState::Queued as i32 && self.leases.contains_key(&r.job_id) {
            r.state = JobState::Leased as i32;
        }
    }

    /// Moves one job's count from state `from` to `to` (both may be Unspecified: none).
    fn count(&mut self, id: u64, from: JobState, to: JobState) {
        let b = self.batch(batch_seq(id));
        if from != JobState::Unspecified {
            b.counts[from as usize] = b.counts[from as usize].saturating_sub(1);
        }
        if to != JobState::Unspecified {
            b.counts[to as usize] += 1;
        }
    }

    fn record_length(&mut self, id: u64, r: &JobResult) {
        if r.has_length() {
            let h = &mut self.batch(batch_seq(id)).histogram;
            let n = r.length as usize;
            if h.len() <= n {
                h.resize(n + 1, 0);
            }
            h[n] += 1;
        }
    }
}

/// What became of one reported result.
enum Completed {
    /// Verified: what the job's record becomes, stored by compare-and-swap against the one read.
    Verified(Verified),
    /// The job had finished before (a repeated report): accepted, nothing changes.
    Before,
    /// The worker gave the job up (cancelled): back to the queue.
    GivenUp,
    /// Refused, with the reason.
    Rejected(String),
}

/// A verified result: the fields of the job's record it sets.
struct Verified {
    status: String,
    solution: String,
    length: u32,
    optimal: bool,
    lower_bound: u32,
    nodes: u64,
    millis: f64,
}

impl Verified {
    /// The record `job` with this result: done, with the lower bound [`verify`] proved (the
    /// stored one taken into account, clamped, never above the solution's length).
    fn apply(self, mut job: JobRecord) -> JobRecord {
        let r = job.r_mut();
        r.state = JobState::Done as i32;
        r.status = self.status;
        r.solution = self.solution;
        r.length = self.length;
        r.optimal = self.optimal;
        r.lower_bound = self.lower_bound;
        r.nodes = self.nodes;
        r.millis = self.millis;
        job
    }
}

/// The symmetry index: `hash(canonical key ++ mode key)` to the id of a finished job of that
/// class and mode whose answer can be reused (solved, or "none within"). Kept in memory and
/// rebuilt from the job records at start-up (each record carries its canonical key), so a
/// completion writes nothing to the store for it; about 20 bytes per such job. A hash only
/// names a candidate: two classes may share one, so users compare the job's stored canonical
/// form and its batch's mode before they trust it.
#[derive(Default)]
struct SymIndex(FastMap<u64, u64>);

impl SymIndex {
    /// The index slot of the class with canonical key `canonical` in the mode with key `mkey`.
    fn slot(canonical: &[u8; 16], mkey: &[u8]) -> u64 {
        // a fixed seed: the slots of one process must agree (the index is rebuilt at start-up,
        // so they need not agree across processes)
        foldhash::quality::FixedState::default().hash_one((canonical, mkey))
    }

    /// Records that job `id` (of a batch in the mode with key `mkey`) answers its class, when
    /// it finished with a reusable answer.
    fn add(&mut self, id: u64, job: &JobRecord, mkey: &[u8]) {
        let r = job.r();
        if !(r.status == "solved" || r.status == "none_within") {
            return;
        }
        if let Some(k) = job.canonical_key() {
            self.0.insert(Self::slot(&k, mkey), id);
        }
    }

    /// The job the index names for the class `canonical` in the mode `mkey`, if any.
    fn get(&self, canonical: &[u8; 16], mkey: &[u8]) -> Option<u64> {
        self.0.get(&Self::slot(canonical, mkey)).copied()
    }
}

/// The coordinator: a store and the state derived from it.
pub struct Core {
    store: Box<dyn Store>,
    state: Mutex<State>,
    index: RwLock<SymIndex>,
    lease_duration: Duration,
    /// Serialises submissions of the same batch (one writer per batch at a time).
    submitting: Mutex<HashSet<String>>,
    /// Bumped whenever jobs are queued (for long-polling leases); its value means nothing.
    queued: tokio::sync::watch::Sender<u64>,
    /// Bumped whenever jobs finish (for prompt progress streams); its value means nothing.
    finished: tokio::sync::watch::Sender<u64>,
    /// Followers of batches ([`Core::follow`]): a batch's sequence number and where its
    /// results go as they finish.
    followers: Mutex<Vec<(u32, Follower)>>,
}

/// Where [`Core::follow`] sends the results of a batch, one at a time: a bounded channel, so
/// at most its capacity wait for a receiver that does not read.
type Follower = tokio::sync::mpsc::Sender<Box<JobResult>>;

/// `text` for an error message: its first 60 characters, and "..." when there were more.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_string(),
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Core {
    /// Opens the sled store in `dir` and rebuilds the in-memory state from it.
    pub fn open(dir: &std::path::Path, lease_duration: Duration) -> Result<Arc<Core>, Error> {
        let store = crate::store::SledStore::open(dir)?;
        let core = Core {
            store: Box::new(store),
            state: Mutex::new(State::default()),
            index: RwLock::new(SymIndex::default()),
            lease_duration,
            submitting: Mutex::new(HashSet::new()),
            queued: tokio::sync::watch::Sender::new(0),
            finished: tokio::sync::watch::Sender::new(0),
            followers: Mutex::new(Vec::new()),
        };
        core.rebuild()?;
        Ok(Arc::new(core))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A receiver that sees a change whenever jobs were queued after it last looked.
    pub fn watch_queued(&self) -> tokio::sync::watch::Receiver<u64> {
        self.queued.subscribe()
    }

    /// A receiver that sees a change whenever jobs finished after it last looked.
    pub fn watch_finished(&self) -> tokio::sync::watch::Receiver<u64> {
        self.finished.subscribe()
    }

    /// The results of the batch `batch_id` as its jobs finish from now on (in no particular
    /// order; without the facelets and the batch id), each once it is durable: those of
    /// completions, and those of lines finished when they were stored (invalid, or answered
    /// from the store). A job a cancellation finishes is not sent, nor one finished before this
    /// call: those are read from the store. Sending ends when the receiver is dropped.
    ///
    /// At most `capacity` results (at least 1) wait in the channel: when a result finds it
    /// full, the core stops sending to this receiver instead of waiting for it (the result and
    /// all later ones are only in the store), and the receiver sees the channel end after the
    /// results already in it. Memory held for a receiver that does not read stays bounded.
    pub fn follow(
        &self,
        batch_id: &str,
        capacity: usize,
    ) -> Result<tokio::sync::mpsc::Receiver<Box<JobResult>>, Error> {
        let b = self.batch_record(batch_id)?;
        let (tx, rx) = tokio::sync::mpsc::channel(capacity.max(1));
        self.followers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((b.seq, tx));
        Ok(rx)
    }

    /// The stored record of the batch `batch_id` (NotFound when there is none).
    fn batch_record(&self, batch_id: &str) -> Result<BatchRecord, Error> {
        self.store
            .batch(batch_id)?
            .ok_or_else(|| Error::NotFound(format!("batch {batch_id}")))
    }

    /// True while some batch has a follower.
    fn followed(&self) -> bool {
        !self
            .followers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Sends the finished jobs among `jobs` to the follower of their batch (all of one batch,
    /// `seq`), moving them: without a follower nothing is converted. Never waits: a follower
    /// whose channel is full is dropped (it reads the store from then on, see [`Core::follow`]).
    fn send_followers(&self, seq: u32, jobs: impl IntoIterator<Item = (u64, JobRecord)>) {
        let mut followers = self.followers.lock().unwrap_or_else(|e| e.into_inner());
        followers.retain(|(_, f)| !f.is_closed());
        let Some(at) = followers.iter().position(|(s, _)| *s == seq) else {
            return;
        };
        let finished = jobs
            .into_iter()
            .filter(|(_, j)| j.state().is_finished())
            .map(|(id, j)| view(id, j, false));
        for result in finished {
            // full, or (a receiver dropped meanwhile) closed: no more sending to it
            if followers[at].1.try_send(result).is_err() {
                tracing::debug!(seq, "a follower fell behind: it reads the store instead");
                followers.swap_remove(at);
                return;
            }
        }
    }

    /// Tells the subscribers of `signal` that something happened.
    fn bump(signal: &tokio::sync::watch::Sender<u64>) {
        signal.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// Rebuilds queue and counters from the store; every unfinished job is queued.
    fn rebuild(&self) -> Result<(), Error> {
        let mut st = State::default();
        let batches = self.store.batches()?;
        let mut priority = FastMap::default();
        for b in &batches {
            priority.insert(b.seq, b.priority);
            let m = st.batch(b.seq);
            m.id = b.batch_id.clone();
            m.priority = b.priority;
            m.mode = b.mode;
            m.cancelled = b.cancelled;
        }
        let cancelled: HashSet<u32> = batches
            .iter()
            .filter(|b| b.cancelled)
            .map(|b| b.seq)
            .collect();
        // queued jobs go back to the queue (leases are never stored; a record `leased` was
        // written by an earlier version and is queued again); unfinished jobs of a cancelled
        // batch (a cancellation cut short by a crash) become cancelled
        let mut requeue = Vec::new();
        // lines stored per batch (the highest index + 1)
        let mut stored: FastMap<u32, u64> = FastMap::default();
        let mkeys: FastMap<u32, Vec<u8>> = batches
            .iter()
            .map(|b| (b.seq, mode_key(&b.mode.unwrap_or_default())))
            .collect();
        let mut index = SymIndex::default();
        self.store.for_each_job(&mut |id, job| {
            let state = job.state();
            let seq = batch_seq(id);
            let lines = stored.entry(seq).or_default();
            *lines = (*lines).max(line_index(id) + 1);
            match state {
                JobState::Queued | JobState::Leased if cancelled.contains(&seq) => {
                    requeue.push((id, job.clone()))
                }
                JobState::Queued => {
                    st.queue
                        .insert((Reverse(priority.get(&seq).copied().unwrap_or(0)), id));
                }
                JobState::Leased => requeue.push((id, job.clone())),
                JobState::Done => {
                    if let Some(mkey) = mkeys.get(&seq) {
                        index.add(id, &job, mkey);
                    }
                }
                _ => {}
            }
            st.record_length(id, job.r());
            st.count(id, JobState::Unspecified, state);
            if job.r().from_store {
                st.batch(seq).from_store += 1;
            }
        })?;
        // jobs of a chunk whose batch record was not written before a crash: count them, so
        // that a resubmission continues after them instead of overwriting them
        for b in &batches {
            let lines = stored.get(&b.seq).copied().unwrap_or(0);
            if lines > b.total {
                let mut b = b.clone();
                b.total = lines;
                self.store.put_batch(&b)?;
            }
        }
        let requeued = requeue.len();
        let changes = requeue
            .into_iter()
            .map(|(id, job)| {
                let new = if cancelled.contains(&batch_seq(id)) {
                    job.cancelled()
                } else {
                    let mut new = job.clone();
                    new.r_mut().state = JobState::Queued as i32;
                    new
                };
                (id, job, new)
            })
            .collect();
        for (id, job, new) in self.swap_jobs(changes)? {
            st.count(id, job.state(), new.state());
            if new.state() == JobState::Queued {
                let seq = batch_seq(id);
                st.queue
                    .insert((Reverse(priority.get(&seq).copied().unwrap_or(0)), id));
            }
        }
        self.store.flush()?;
        *self.index.write().unwrap_or_else(|e| e.into_inner()) = index;
        tracing::info!(
            batches = batches.len(),
            queued = st.queue.len(),
            requeued,
            "store opened"
        );
        *self.lock() = st;
        Ok(())
    }

    /// Starts or continues a submission: creates the batch or checks that the spec matches.
    /// Returns the batch record (its `total` says how many lines are already stored).
    pub(crate) fn begin_submit(&self, spec: BatchSpec) -> Result<BatchRecord, Error> {
        let mode = normalize_mode(spec.mode.unwrap_or_default())?;
        let id = if spec.batch_id.is_empty() {
            format!("b{:016x}", rand::random::<u64>())
        } else {
            spec.batch_id
        };
        if id.len() > 200 {
            return Err(Error::InvalidArgument(
                "batch id longer than 200 bytes".into(),
            ));
        }
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
        let opened = self.open_batch(
            id.clone(),
            spec.name,
            mode,
            spec.priority,
            spec.content_hash,
        );
        if opened.is_err() {
            self.end_submit(&id);
        }
        opened
    }

    /// The batch `id` a submission continues, checked against the submission's mode and
    /// content hash (when both it and the batch have one); or a new batch with these.
    fn open_batch(
        &self,
        id: String,
        name: String,
        mode: Mode,
        priority: i32,
        content_hash: Vec<u8>,
    ) -> Result<BatchRecord, Error> {
        if let Some(b) = self.store.batch(&id)? {
            if b.mode.as_ref() != Some(&mode) {
                return Err(Error::InvalidArgument(format!(
                    "batch {id} exists with another mode"
                )));
            }
            if !content_hash.is_empty()
                && !b.content_hash.is_empty()
                && content_hash != b.content_hash
            {
                return Err(Error::ContentDiffers {
                    batch: id,
                    what: "their content hash is not the one it was created with".into(),
                });
            }
            return Ok(b);
        }
        if content_hash.len() > 64 {
            return Err(Error::InvalidArgument(
                "content hash longer than 64 bytes".into(),
            ));
        }
        let b = self.store.create_batch(&BatchRecord {
            batch_id: id,
            seq: 0,
            name,
            mode: Some(mode),
            priority,
            total: 0,
            created_unix_ms: now_ms(),
            cancelled: false,
            content_hash,
        })?;
        let mut st = self.lock();
        let m = st.batch(b.seq);
        m.id = b.batch_id.clone();
        m.priority = b.priority;
        m.mode = b.mode;
        Ok(b)
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
    /// there (as [`cubefleet_tables::input::cut_line`] keeps them): a client that sends no content hash cannot make
    /// a batch answer for other lines than its own. A line with no stored job is not checked.
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
        self.store.insert_jobs(&jobs)?;
        batch.total = batch.total.max(line_index(last) + 1);
        self.store.put_batch(batch)?;
        self.store.flush()?;
        let mut from_store = 0;
        let mut st = self.lock();
        for (id, j) in &jobs {
            let state = j.state();
            st.count(*id, JobState::Unspecified, state);
            st.record_length(*id, j.r());
            if state == JobState::Queued {
                st.queue.insert((Reverse(batch.priority), *id));
            }
            if j.r().from_store {
                from_store += 1;
            }
        }
        st.counters.submitted += jobs.len() as u64;
        st.counters.from_store += from_store;
        st.batch(batch.seq).from_store += from_store;
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
        let parsed = (!is_blank_or_comment(&line))
            .then(|| parse_position(&line, InputFormat::Auto).map_err(|e| e.to_string()));
        let mut r = JobResult {
            input: cubefleet_tables::input::cut_line(line),
            ..JobResult::default()
        };
        let (mut canonical, mut sym) = (Vec::new(), 0);
        match parsed {
            None => {
                r.state = JobState::Done as i32;
                r.status = "skipped".into();
            }
            Some(Err(e)) => {
                r.state = JobState::Invalid as i32;
                r.status = "invalid".into();
                r.error = e;
            }
            Some(Ok(cube)) => {
                r.state = JobState::Queued as i32;
                let canon = cube.canonical();
                canonical = canon.cube.key().to_vec();
                sym = u32::from(canon.sym) * 2 + u32::from(canon.inverted);
                if batch.cancelled {
                    r.state = JobState::Cancelled as i32;
                    r.status = "cancelled".into();
                } else if let Some(stored) = self.answer_from_store(&cube, &canon, mkey)? {
                    r.state = JobState::Done as i32;
                    r.status = stored.status;
                    r.solution = stored.solution;
                    r.length = stored.length;
                    r.optimal = stored.optimal;
                    r.lower_bound = stored.lower_bound;
                    r.from_store = true;
                }
            }
        }
        Ok((
            id,
            JobRecord {
                result: Some(Box::new(r)),
                canonical,
                sym,
            },
        ))
    }

    /// A stored result for `cube` (or a symmetric / inverse copy) in the mode with key `mkey`,
    /// mapped back to `cube` and verified.
    fn answer_from_store(
        &self,
        cube: &cubefleet_tables::CubieCube,
        canon: &cubefleet_tables::symmetry::Canonical,
        mkey: &[u8],
    ) -> Result<Option<JobResult>, Error> {
        for (_, job, stored) in self.indexed(&canon.cube.key(), &[mkey.to_vec()])? {
            if let Some(r) = map_result(job.r().clone(), &stored, cube, canon) {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    /// The finished jobs the symmetry index names for the class with canonical key
    /// `canonical` in the modes with keys `mkeys` (at most one per mode), with the stored
    /// canonical form of each; a candidate of another class or mode (a shared hash) is left out.
    fn indexed(
        &self,
        canonical: &[u8; 16],
        mkeys: &[Vec<u8>],
    ) -> Result<Vec<(u64, JobRecord, cubefleet_tables::symmetry::Canonical)>, Error> {
        let ids: Vec<(u64, &Vec<u8>)> = {
            let index = self.index.read().unwrap_or_else(|e| e.into_inner());
            mkeys
                .iter()
                .filter_map(|m| Some((index.get(canonical, m)?, m)))
                .collect()
        };
        let mut out = Vec::new();
        for (id, mkey) in ids {
            if mode_key(&self.batch_mode(batch_seq(id))) != *mkey {
                continue;
            }
            if let Some(job) = self.store.job(id)? {
                if let Some(canon) = job.canonical_form().filter(|c| c.cube.key() == *canonical) {
                    out.push((id, job, canon));
                }
            }
        }
        Ok(out)
    }

    /// Registers a worker.
    pub fn register(&self, name: String, threads: u32, fingerprint: String) -> (String, Duration) {
        let mut st = self.lock();
        st.next_worker += 1;
        let id = format!("w{}-{:08x}", st.next_worker, rand::random::<u32>());
        tracing::info!(worker = %id, %name, threads, "worker registered");
        st.workers.insert(
            id.clone(),
            WorkerInfo {
                name,
                threads,
                fingerprint,
                completed: 0,
                rejected: 0,
                last_seen: Instant::now(),
            },
        );
        (id, self.lease_duration)
    }

    /// Notes that `worker` called. A worker this coordinator does not know (registered before
    /// a restart, or forgotten after a long silence) is listed again under its id.
    fn touch(&self, st: &mut State, worker: &str) {
        st.workers
            .entry(worker.to_string())
            .or_insert_with(|| WorkerInfo {
                name: format!("{worker} (not registered here)"),
                threads: 0,
                fingerprint: String::new(),
                completed: 0,
                rejected: 0,
                last_seen: Instant::now(),
            })
            .last_seen = Instant::now();
    }

    /// How many jobs make `seconds` of search at the mean search time of the results accepted
    /// lately (at least one); `max` when `seconds` is not above 0.
    pub fn jobs_for_seconds(&self, max: u32, seconds: f64) -> u32 {
        if seconds.is_nan() || seconds <= 0.0 {
            return max;
        }
        let per_job = self.lock().solve_times.estimate();
        let fit = if per_job > 0.0 {
            (seconds / per_job).floor().min(f64::from(u32::MAX)) as u32
        } else {
            max
        };
        fit.clamp(1, max.max(1))
    }

    /// Leases up to `max` queued jobs, highest priority first, then submission order.
    ///
    /// The state lock is held only to look at the queue and to take jobs from it: the records
    /// are read between the two, so concurrent leases and completions do not wait for the
    /// store. A job that finished between the read and the taking is skipped (its completion
    /// counts it); one taken by another worker meanwhile is no longer in the queue.
    ///
    /// Expired leases are not looked for here: the coordinator's sweeper returns them to the
    /// queue every half second (and wakes long-polling leases when it does).
    pub fn lease(&self, worker: &str, max: u32) -> Result<Vec<Leased>, Error> {
        self.touch(&mut self.lock(), worker);
        let owner: Arc<str> = worker.into();
        let mut out = Vec::new();
        while out.len() < max as usize {
            let want = max as usize - out.len();
            let next: Vec<(Reverse<i32>, u64)> =
                self.lock().queue.iter().take(want).copied().collect();
            if next.is_empty() {
                break;
            }
            let ids: Vec<u64> = next.iter().map(|e| e.1).collect();
            // what a lease hands out, made before the lock is taken: the position and proven
            // lower bound of each job still queued in the store (a queued job always has a
            // position; without one its lease simply expires)
            // (of each record only the fields a lease hands out are decoded)
            let mut read = Vec::with_capacity(ids.len());
            for (entry, job) in next.into_iter().zip(self.store.jobs_encoded(&ids)?) {
                let job = job
                    .map(|b| LeaseView::decode(&*b))
                    .transpose()?
                    .filter(|j| j.state() == JobState::Queued);
                let handed = job
                    .as_ref()
                    .and_then(|j| Some((j.cube()?, j.lower_bound())));
                read.push((entry, job.is_some(), handed));
            }
            let mut st = self.lock();
            let deadline = Instant::now() + self.lease_duration;
            for (entry, queued, handed) in read {
                if !st.queue.remove(&entry) || !queued {
                    continue;
                }
                let id = entry.1;
                st.count(id, JobState::Queued, JobState::Leased);
                st.leases.insert(
                    id,
                    Lease {
                        worker: owner.clone(),
                        deadline,
                    },
                );
                if let Some((cube, lower_bound)) = handed {
                    let mode = st.mode(batch_seq(id));
                    out.push(Leased {
                        job_id: id,
                        cube,
                        // a bound stored by an earlier version may be above the possible
                        lower_bound: possible_bound(&mode, None, lower_bound),
                        mode,
                    });
                }
            }
        }
        Ok(out)
    }

    /// [`Core::lease`] as a long poll: when no job is queued, waits until one is, `wait` has
    /// passed (at most [`MAX_LEASE_WAIT`]) or `shutdown` is cancelled, and answers with none
    /// then. `max` is first cut to the jobs of about `seconds` of search
    /// ([`Core::jobs_for_seconds`]). The store is read off the async threads. After shutdown
    /// nothing is leased.
    pub async fn lease_wait(
        self: &Arc<Self>,
        worker: &str,
        max: u32,
        seconds: f64,
        wait: Duration,
        shutdown: &CancellationToken,
    ) -> Result<Vec<Leased>, Error> {
        let deadline = tokio::time::Instant::now() + wait.min(MAX_LEASE_WAIT);
        let mut changes = self.watch_queued();
        while !shutdown.is_cancelled() {
            changes.borrow_and_update();
            let (core, worker) = (self.clone(), worker.to_string());
            let max = core.jobs_for_seconds(max.min(MAX_LEASE_JOBS), seconds);
            let jobs = tokio::task::spawn_blocking(move || core.lease(&worker, max)).await??;
            if !jobs.is_empty() || tokio::time::Instant::now() >= deadline {
                return Ok(jobs);
            }
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => {}
                _ = changes.changed() => {}
                _ = shutdown.cancelled() => {}
            }
        }
        Ok(Vec::new())
    }

    /// Stores each `(id, old, new)` by compare-and-swap ([`Store::cas_jobs`]: one write per
    /// block of jobs) and returns the changes that were made.
    fn swap_jobs(
        &self,
        changes: Vec<(u64, JobRecord, JobRecord)>,
    ) -> Result<Vec<(u64, JobRecord, JobRecord)>, Error> {
        let old: Vec<Vec<u8>> = changes.iter().map(|(_, o, _)| o.encode_to_vec()).collect();
        let swaps: Vec<_> = changes
            .iter()
            .zip(&old)
            .map(|((id, _, n), o)| (*id, o.as_slice(), n))
            .collect();
        let made = self.store.cas_jobs(&swaps)?;
        Ok(changes
            .into_iter()
            .zip(made)
            .filter_map(|(change, made)| made.then_some(change))
            .collect())
    }

    /// The mode of the batch with sequence number `seq`. Takes the state lock: never call it
    /// while holding that lock.
    fn batch_mode(&self, seq: u32) -> Mode {
        self.lock().mode(seq)
    }

    /// Returns every lease past its deadline to the queue, with the progress it reached.
    pub fn expire_leases(&self) -> Result<usize, Error> {
        let now = Instant::now();
        let expired: Vec<u64> = {
            let st = self.lock();
            st.leases
                .iter()
                .filter(|(_, l)| l.deadline <= now)
                .map(|(&id, _)| id)
                .collect()
        };
        for &id in &expired {
            self.requeue(id, "lease expired")?;
            self.lock().counters.lease_expiries += 1;
        }
        Ok(expired.len())
    }

    /// Moves a leased job back to the queue (keeping its lower bound), or to `cancelled` when
    /// its batch was cancelled. Does nothing when the job holds no lease (it was completed or
    /// returned already), so it is safe to call twice.
    fn requeue(&self, id: u64, why: &str) -> Result<(), Error> {
        self.requeue_from(id, None, why)
    }

    /// Like [`Core::requeue`], but when `owner` is given only if the job is leased to that
    /// worker: a worker whose lease was lost must not take the job from its new holder.
    ///
    /// A lease is memory only, so returning a job to the queue writes nothing; a cancelled
    /// batch's job is stored as `cancelled` by compare-and-swap, retried while a concurrent
    /// heartbeat changes the record.
    fn requeue_from(&self, id: u64, owner: Option<&str>, why: &str) -> Result<(), Error> {
        let mut st = self.lock();
        match st.leases.get(&id) {
            Some(l) if owner.is_none_or(|w| *l.worker == *w) => {}
            _ => return Ok(()),
        }
        st.leases.remove(&id);
        let b = st.batch(batch_seq(id));
        let (cancelled, priority) = (b.cancelled, b.priority);
        if cancelled {
            loop {
                let Some(job) = self.store.job(id)? else {
                    break;
                };
                if job.state() != JobState::Queued {
                    break; // completed concurrently: that completion counts it
                }
                if self.store.cas_job(id, &job, &job.cancelled())? {
                    st.count(id, JobState::Leased, JobState::Cancelled);
                    drop(st);
                    Self::bump(&self.finished);
                    return Ok(());
                }
            }
        }
        st.count(id, JobState::Leased, JobState::Queued);
        st.queue.insert((Reverse(priority), id));
        drop(st);
        Self::bump(&self.queued);
        tracing::debug!(job = id, why, "job returned to the queue");
        Ok(())
    }

    /// Ends job `id`, leased by `worker`, as failed with the `reasons` its results were
    /// rejected for (nothing when the lease is no longer the worker's, or the job finished
    /// meanwhile).
    fn fail(&self, id: u64, worker: &str, reasons: &[String]) -> Result<(), Error> {
        let mut st = self.lock();
        if st.leases.get(&id).is_none_or(|l| *l.worker != *worker) {
            return Ok(());
        }
        loop {
            let Some(job) = self.store.job(id)? else {
                return Ok(());
            };
            if job.state() != JobState::Queued {
                return Ok(()); // completed concurrently: that completion counts it
            }
            let mut new = job.clone();
            let r = new.r_mut();
            r.state = JobState::Failed as i32;
            r.status = "failed".into();
            r.error = format!(
                "results rejected {} times: {}; check the workers' versions and logs, then \
                 submit the line again",
                reasons.len(),
                reasons.join("; ")
            );
            if self.store.cas_job(id, &job, &new)? {
                st.leases.remove(&id);
                st.count(id, JobState::Leased, JobState::Failed);
                drop(st);
                tracing::warn!(job = id, worker, ?reasons, "job failed");
                if self.followed() {
                    self.send_followers(batch_seq(id), [(id, new)]);
                }
                Self::bump(&self.finished);
                return Ok(());
            }
        }
    }

    /// Extends the worker's leases, records progress, and names the jobs it must stop.
    pub fn heartbeat(&self, worker: &str, jobs: &[JobProgress]) -> Result<Vec<u64>, Error> {
        let mut cancel = Vec::new();
        let mut record = Vec::new();
        {
            let mut st = self.lock();
            self.touch(&mut st, worker);
            let deadline = Instant::now() + self.lease_duration;
            for p in jobs {
                let ours = st
                    .leases
                    .get(&p.job_id)
                    .is_some_and(|l| *l.worker == *worker);
                let cancelled = st.batch(batch_seq(p.job_id)).cancelled;
                if !ours || cancelled {
                    cancel.push(p.job_id);
                    continue;
                }
                if let Some(l) = st.leases.get_mut(&p.job_id) {
                    l.deadline = deadline;
                }
                // a lower bound of 0 raises nothing: the record is not read (most held jobs
                // are queued in the worker or are two-phase searches, which prove none)
                if p.lower_bound > 0 {
                    record.push(*p);
                }
            }
        }
        // persist proven lower bounds, so a re-leased job resumes from them
        for p in record {
            let Some(job) = self.store.job(p.job_id)? else {
                continue;
            };
            // a worker's bound is a claim: at most what any position needs
            let mode = self.batch_mode(batch_seq(p.job_id));
            let known = job
                .cube()
                .and_then(|cube| known_length(&cube, &job.r().input, metric_of(&mode)));
            let lower_bound = possible_bound(&mode, known, p.lower_bound);
            if job.state() == JobState::Queued && lower_bound > job.r().lower_bound {
                let mut new = job.clone();
                new.r_mut().lower_bound = lower_bound;
                new.r_mut().nodes = p.nodes;
                self.store.cas_job(p.job_id, &job, &new)?;
            }
        }
        Ok(cancel)
    }

    /// Verifies and stores results; returns (accepted, rejected with reasons). Flushes once.
    pub fn complete(
        &self,
        worker: &str,
        results: &[Completion],
    ) -> Result<(u32, Vec<(u64, String)>), Error> {
        let mut accepted = 0;
        let mut rejected = Vec::new();
        let mut done = Vec::with_capacity(results.len());
        // a concurrent change of the record (a heartbeat raising the lower bound) makes the
        // compare-and-swap fail: read again and retry, a few times
        let mut pending: Vec<&Completion> = results.iter().collect();
        // the modes of the batches concerned, read under the lock once
        let modes: FastMap<u32, Mode> = {
            let st = self.lock();
            let mut modes = FastMap::default();
            for c in results {
                let seq = batch_seq(c.job_id);
                modes.entry(seq).or_insert_with(|| st.mode(seq));
            }
            modes
        };
        for _attempt in 0..8 {
            if pending.is_empty() {
                break;
            }
            let mut retry = Vec::new();
            // the group's records in one pass (its ids are mostly runs of consecutive ones)
            let mut ids: Vec<u64> = pending.iter().map(|c| c.job_id).collect();
            ids.sort_unstable();
            ids.dedup();
            // records[i] is the record of ids[i] (sorted): looked up by binary search; a
            // verified result takes its record (to make the new one of it without a copy)
            let mut encoded = self.store.jobs_encoded(&ids)?;
            let mut records = encoded
                .iter()
                .map(|b| b.as_deref().map(JobRecord::decode).transpose())
                .collect::<Result<Vec<_>, _>>()?;
            let read: Vec<bool> = records.iter().map(Option::is_some).collect();
            // (result, the record as stored, the new record)
            let mut verified: Vec<(&Completion, Vec<u8>, JobRecord)> =
                Vec::with_capacity(pending.len());
            for c in std::mem::take(&mut pending) {
                let mode = &modes[&batch_seq(c.job_id)];
                let at = ids.binary_search(&c.job_id).ok();
                if at.is_some_and(|i| read[i] && records[i].is_none()) {
                    // a second result for a job of the group: after the first is stored, it
                    // is one reported before
                    retry.push(c);
                    continue;
                }
                let old = at.and_then(|i| records[i].as_ref());
                match self.complete_one(worker, c, old, mode)? {
                    // a verified result always has the record it was checked against
                    Completed::Verified(v) => {
                        let taken = at.and_then(|i| records[i].take().zip(encoded[i].take()));
                        if let Some((old, bytes)) = taken {
                            verified.push((c, bytes, v.apply(old)));
                        }
                    }
                    Completed::Before => accepted += 1,
                    Completed::GivenUp => {}
                    Completed::Rejected(reason) => rejected.push((c.job_id, reason)),
                }
            }
            // the group's records in one compare-and-swap per block
            let swaps: Vec<(u64, &[u8], &JobRecord)> = verified
                .iter()
                .map(|(c, old, new)| (c.job_id, old.as_slice(), new))
                .collect();
            let made = self.store.cas_jobs(&swaps)?;
            for ((c, _, new), made) in verified.into_iter().zip(made) {
                if made {
                    accepted += 1;
                    done.push((c.job_id, new));
                } else {
                    retry.push(c);
                }
            }
            pending = retry;
        }
        for c in pending {
            rejected.push((c.job_id, "job changed concurrently; retry".into()));
        }
        self.store.flush()?;
        {
            // the mode keys of the group's batches, once (not once per job)
            let mkeys: FastMap<u32, Vec<u8>> =
                modes.iter().map(|(&seq, m)| (seq, mode_key(m))).collect();
            let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
            for (id, new) in &done {
                index.add(*id, new, &mkeys[&batch_seq(*id)]);
            }
        }
        let mut st = self.lock();
        self.touch(&mut st, worker);
        if let Some(w) = st.workers.get_mut(worker) {
            w.completed += done.len() as u64;
        }
        st.counters.completed += done.len() as u64;
        for (id, new) in &done {
            let id = *id;
            // the job left `leased` when it held a lease, else `queued` (a late result after
            // its lease expired)
            let from = if st.leases.remove(&id).is_some() {
                JobState::Leased
            } else {
                let priority = st.batch(batch_seq(id)).priority;
                st.queue.remove(&(Reverse(priority), id));
                JobState::Queued
            };
            st.count(id, from, JobState::Done);
            st.rejections.remove(&id);
            st.record_length(id, new.r());
            st.solve_times.observe(new.r().millis);
        }
        drop(st);
        if self.followed() {
            // the group's batches, each to its own followers
            done.sort_unstable_by_key(|(id, _)| *id);
            while let Some(&(first, _)) = done.first() {
                let seq = batch_seq(first);
                let end = done.partition_point(|(id, _)| batch_seq(*id) == seq);
                self.send_followers(seq, done.drain(..end));
            }
        }
        Self::bump(&self.finished);
        Ok((accepted, rejected))
    }

    /// One step of [`Core::complete`] for result `c` of a job whose batch has `mode` and whose
    /// record, as read, is `job`.
    fn complete_one(
        &self,
        worker: &str,
        c: &Completion,
        job: Option<&JobRecord>,
        mode: &Mode,
    ) -> Result<Completed, Error> {
        let Some(job) = job else {
            return Ok(Completed::Rejected("no such job".into()));
        };
        if job.state().is_finished() {
            return Ok(Completed::Before); // reported before: harmless
        }
        if c.status == "cancelled" {
            self.requeue_from(c.job_id, Some(worker), "worker gave it up")?;
            return Ok(Completed::GivenUp);
        }
        let checked = match job.cube() {
            Some(cube) => {
                let known = known_length(&cube, &job.r().input, metric_of(mode));
                verify(&cube, job.r().lower_bound, known, mode, c)
            }
            None => Err("the job has no valid position".into()),
        };
        match checked {
            Err(reason) => {
                tracing::warn!(worker, job = c.job_id, %reason, "result rejected");
                {
                    let mut st = self.lock();
                    st.counters.rejected += 1;
                    if let Some(w) = st.workers.get_mut(worker) {
                        w.rejected += 1;
                    }
                }
                // only the lease holder's rejections count: another peer cannot fail a job
                let failed = {
                    let mut st = self.lock();
                    let holds = st
                        .leases
                        .get(&c.job_id)
                        .is_some_and(|l| *l.worker == *worker);
                    let mut rejected = 0;
                    if holds {
                        let reasons = st.rejections.entry(c.job_id).or_default();
                        reasons.push(reason.clone());
                        rejected = reasons.len();
                    }
                    if rejected >= MAX_REJECTIONS {
                        st.rejections.remove(&c.job_id)
                    } else {
                        None
                    }
                };
                match failed {
                    Some(reasons) => self.fail(c.job_id, worker, &reasons)?,
                    None => self.requeue_from(c.job_id, Some(worker), "result rejected")?,
                }
                Ok(Completed::Rejected(reason))
            }
            Ok(Checked {
                length,
                solution,
                lower_bound,
            }) => Ok(Completed::Verified(Verified {
                status: c.status.clone(),
                solution,
                length,
                optimal: c.optimal,
                lower_bound,
                nodes: c.nodes,
                millis: c.millis,
            })),
        }
    }

    /// Hands jobs back unfinished, keeping their progress.
    pub fn release(&self, worker: &str, jobs: &[JobProgress]) -> Result<u32, Error> {
        let mut n = 0;
        for p in jobs {
            let ours = self
                .lock()
                .leases
                .get(&p.job_id)
                .is_some_and(|l| *l.worker == *worker);
            if ours {
                self.heartbeat(worker, std::slice::from_ref(p))?;
                self.requeue(p.job_id, "released by worker")?;
                n += 1;
            }
        }
        self.store.flush()?;
        Ok(n)
    }

    /// Cancels a batch: queued jobs become cancelled now, leased ones at their next heartbeat.
    pub fn cancel(&self, batch_id: &str) -> Result<BatchStatus, Error> {
        let mut b = self.batch_record(batch_id)?;
        b.cancelled = true;
        self.store.put_batch(&b)?;
        self.lock().batch(b.seq).cancelled = true;
        let (from, to) = (job_id(b.seq, 0), job_id(b.seq + 1, 0));
        let mut next = from;
        loop {
            let jobs = self.store.jobs_range(next, to, 10_000)?;
            let Some(&(last, _)) = jobs.last() else {
                break;
            };
            let mut queued = jobs
                .into_iter()
                .filter(|(_, job)| job.state() == JobState::Queued)
                .peekable();
            // a few blocks at a time, under the lock, so that no lease is taken between the
            // check and the swap (a leased job stops at its holder's next heartbeat)
            while queued.peek().is_some() {
                let mut st = self.lock();
                let part = queued
                    .by_ref()
                    .take(4 * crate::store::BLOCK_JOBS)
                    .filter(|(id, _)| !st.leases.contains_key(id))
                    .map(|(id, job)| {
                        let new = job.cancelled();
                        (id, job, new)
                    })
                    .collect();
                for (id, _, _) in self.swap_jobs(part)? {
                    st.queue.remove(&(Reverse(b.priority), id));
                    st.count(id, JobState::Queued, JobState::Cancelled);
                }
            }
            next = last + 1;
        }
        self.store.flush()?;
        Self::bump(&self.finished);
        self.status(batch_id)
    }

    /// A batch's progress.
    pub fn status(&self, batch_id: &str) -> Result<BatchStatus, Error> {
        let b = self.batch_record(batch_id)?;
        Ok(self.status_of(&b))
    }

    fn status_of(&self, b: &BatchRecord) -> BatchStatus {
        let mut st = self.lock();
        let m = st.batch(b.seq);
        let finished = m.finished();
        let now = Instant::now();
        m.samples.push_back((now, finished));
        while m
            .samples
            .front()
            .is_some_and(|(t, _)| now.duration_since(*t) > Duration::from_secs(60))
        {
            m.samples.pop_front();
        }
        let rate = match m.samples.front() {
            Some(&(t, f)) if now.duration_since(t) > Duration::from_millis(500) => {
                (finished - f) as f64 / now.duration_since(t).as_secs_f64()
            }
            _ => 0.0,
        };
        let left = b.total.saturating_sub(finished);
        BatchStatus {
            batch_id: b.batch_id.clone(),
            name: b.name.clone(),
            mode: b.mode,
            priority: b.priority,
            total: b.total,
            queued: m.counts[JobState::Queued as usize],
            leased: m.counts[JobState::Leased as usize],
            done: m.counts[JobState::Done as usize],
            invalid: m.counts[JobState::Invalid as usize],
            cancelled: m.counts[JobState::Cancelled as usize],
            failed: m.counts[JobState::Failed as usize],
            rate,
            eta_seconds: if rate > 0.0 { left as f64 / rate } else { 0.0 },
            length_histogram: m.histogram.clone(),
            cancelled_batch: m.cancelled,
            created_unix_ms: b.created_unix_ms,
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

    /// Results of a batch from line `from_index`, at most `limit`, optionally of one status;
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
        let b = self.batch_record(batch_id)?;
        let mut out = Vec::with_capacity(limit.min(4096));
        let mut next = job_id(b.seq, from_index.min(b.total));
        let end = job_id(b.seq, b.total);
        while out.len() < limit && next < end {
            let jobs = self
                .store
                .jobs_range(next, end, (limit - out.len()).min(4096))?;
            let Some(&(last, _)) = jobs.last() else {
                break;
            };
            let first = out.len();
            for (id, j) in jobs {
                if status.is_empty() || j.r().status == status {
                    out.push(*view(id, j, facelets));
                }
            }
            let st = self.lock();
            for r in &mut out[first..] {
                st.overlay(r);
            }
            drop(st);
            next = last + 1;
        }
        Ok((out, line_index(next).min(b.total)))
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
        let (from, end) = (
            job_id(b.seq, from_index.min(b.total)),
            job_id(b.seq, b.total),
        );
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

    /// Registered workers.
    ///
    /// A worker silent for three lease durations is forgotten (all its leases have expired by
    /// then); if it calls again it is listed again.
    pub fn workers(&self) -> Vec<(String, WorkerInfo)> {
        let mut st = self.lock();
        let gone = 3 * self.lease_duration;
        st.workers.retain(|_, w| w.last_seen.elapsed() <= gone);
        let mut v: Vec<_> = st
            .workers
            .iter()
            .map(|(k, w)| (k.clone(), w.clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
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
        (st.counters, st.queue.len())
    }

    /// Flushes the store (shutdown).
    pub fn flush(&self) -> Result<(), Error> {
        self.store.flush()
    }

    /// Search times of the results accepted since start (histogram and recent mean).
    pub fn solve_times(&self) -> crate::solve_times::SolveTimes {
        self.lock().solve_times.clone()
    }
}

/// Maps `stored`, the result for the position whose canonical form is `src` (of the same class
/// as `canon`), to the position `cube`, verified.
fn map_result(
    stored: JobResult,
    src: &cubefleet_tables::symmetry::Canonical,
    cube: &cubefleet_tables::CubieCube,
    canon: &cubefleet_tables::symmetry::Canonical,
) -> Option<JobResult> {
    if stored.state != JobState::Done as i32 {
        return None;
    }
    let mut r = stored;
    if r.status == "solved" {
        let sol = MoveSeq::parse(&r.solution).ok()?;
        let rep = src.solution_to_rep(&sol.0);
        let mine = MoveSeq(canon.solution_back(&rep));
        if !cube.apply_moves(&mine.0).is_solved() {
            return None;
        }
        r.solution = mine.to_string();
    } else if r.status != "none_within" {
        return None;
    }
    r.facelets = FaceletCube::from_cubie(cube).to_string();
    r.from_store = true;
    Some(r)
}

/// Job `id`'s stored record as clients see it, but for [`State::overlay`]: with the fields the
/// store leaves out, which the key and the canonical form give back (job id, line index, and
/// when `facelets` the facelets), filled in. Needs no lock: the costly part of presenting a
/// result (the facelets) is done here. Boxed as the record holds it, so it moves cheaply.
fn view(id: u64, mut job: JobRecord, facelets: bool) -> Box<JobResult> {
    let cube = (facelets && job.r().facelets.is_empty())
        .then(|| job.cube())
        .flatten();
    let mut r = job.result.take().unwrap_or_default();
    r.job_id = id;
    r.index = line_index(id);
    if let Some(cube) = cube {
        r.facelets = FaceletCube::from_cubie(&cube).to_string();
    }
    r
}

/// The metric of a mode (HTM unless it says otherwise).
pub fn metric_of(mode: &Mode) -> Metric {
    match &mode.kind {
        Some(mode::Kind::Optimal(o)) => Metric::try_from(o.metric).unwrap_or(Metric::Htm),
        Some(mode::Kind::DepthLimited(d)) => Metric::try_from(d.metric).unwrap_or(Metric::Htm),
        _ => Metric::Htm,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubefleet_proto::TwoPhase;

    /// Submits `lines` as batch `id` (two-phase to 20 moves) and returns its record.
    fn submit(core: &Core, id: &str, lines: &[&str]) -> BatchRecord {
        let mut batch = core
            .begin_submit(BatchSpec {
                batch_id: id.into(),
                name: id.into(),
                mode: Some(Mode {
                    kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 20 })),
                    ..Mode::default()
                }),
                priority: 0,
                ..BatchSpec::default()
            })
            .expect("begin");
        let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let jobs = core.prepare_chunk(&batch, 0, lines).expect("prepare");
        core.store_chunk(&mut batch, jobs).expect("store");
        core.end_submit(id);
        batch
    }

    /// A resubmission under an existing id is refused when its content hash differs from the
    /// batch's, or (hash or not) when a line already stored differs from the stored line; the
    /// same lines continue the batch.
    #[test]
    fn a_resubmission_with_other_lines_is_refused() {
        let (_dir, core, _) = fresh_core();
        let spec = |hash: &[u8]| BatchSpec {
            batch_id: "same".into(),
            mode: Some(Mode {
                kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 20 })),
                ..Mode::default()
            }),
            content_hash: hash.to_vec(),
            ..BatchSpec::default()
        };
        let mut b = core.begin_submit(spec(&[1; 32])).expect("begin");
        let lines = |l: &[&str]| l.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        let jobs = core
            .prepare_chunk(&b, 0, lines(&["R U", "F D2"]))
            .expect("prepare");
        core.store_chunk(&mut b, jobs).expect("store");
        core.end_submit("same");
        let e = core.begin_submit(spec(&[2; 32])).expect_err("another hash");
        assert!(matches!(e, Error::ContentDiffers { .. }), "{e}");
        assert!(e.to_string().contains("another batch id"), "{e}");
        // refused, the batch is free for the next submitter
        let b = core.begin_submit(spec(&[])).expect("no hash");
        let e = core
            .prepare_chunk(&b, 0, lines(&["R U", "F D'"]))
            .expect_err("line 1 differs");
        assert!(e.to_string().contains("line 1"), "{e}");
        let more = core
            .prepare_chunk(&b, 0, lines(&["R U", "F D2", "L"]))
            .expect("the same lines, and one more");
        assert_eq!(more.len(), 1);
        assert_eq!(line_index(more[0].0), 2);
        core.end_submit("same");
        assert!(core.begin_submit(spec(&[1; 32])).is_ok(), "the same hash");
    }

    /// A core on a fresh store (in the returned directory) with a registered worker.
    fn fresh_core() -> (tempfile::TempDir, Arc<Core>, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let core = Core::open(dir.path(), Duration::from_secs(30)).expect("open");
        let w = core.register("w".into(), 1, String::new()).0;
        (dir, core, w)
    }

    /// A "solved" result of job `job_id`.
    fn solved(job_id: u64, solution: &str) -> Completion {
        Completion {
            job_id,
            status: "solved".into(),
            solution: solution.into(),
            has_solution: true,
            ..Completion::default()
        }
    }

    #[test]
    fn a_result_reported_twice_in_one_group_is_stored_and_counted_once() {
        let (_dir, core, w) = fresh_core();
        let b = submit(&core, "twice", &["R U"]);
        let id = core.lease(&w, 1).expect("lease")[0].job_id;
        let done = solved(id, "U' R'");
        let (accepted, rejected) = core.complete(&w, &[done.clone(), done]).expect("complete");
        assert_eq!((accepted, rejected.len()), (2, 0), "{rejected:?}");
        assert_eq!(core.counters().0.completed, 1);
        assert_eq!(core.status("twice").expect("status").done, 1);
        assert_eq!(core.job(job_id(b.seq, 0)).expect("job").solution, "U' R'");
    }

    #[test]
    fn a_follower_gets_the_results_that_finish_after_it_began() {
        let (_dir, core, w) = fresh_core();
        let before = submit(&core, "b", &["R"]);
        let first = core.lease(&w, 1).expect("lease")[0].job_id;
        assert_eq!(
            core.complete(&w, &[solved(first, "R'")])
                .expect("complete")
                .0,
            1
        );
        // begun now: the job finished before is not sent
        let mut feed = core.follow("b", 16).expect("follow");
        assert!(feed.try_recv().is_err());
        // a line finished at submission (invalid) and a completion are sent, once durable
        let mut batch = core.store.batch("b").expect("read").expect("stored");
        // (not "U": a symmetric copy of "R", which the store would answer)
        let more = ["U R F", "not a cube"].map(String::from);
        let jobs = core
            .prepare_chunk(&batch, 1, more.to_vec())
            .expect("prepare");
        core.store_chunk(&mut batch, jobs).expect("store");
        let invalid = feed.try_recv().expect("the invalid line");
        assert_eq!((invalid.index, invalid.status.as_str()), (2, "invalid"));
        assert!(feed.try_recv().is_err());
        let second = core.lease(&w, 1).expect("lease")[0].job_id;
        assert_eq!(
            core.complete(&w, &[solved(second, "F' R' U'")])
                .expect("complete")
                .0,
            1
        );
        let done = feed.try_recv().expect("the completion");
        assert_eq!((done.index, done.solution.as_str()), (1, "F' R' U'"));
        // another batch's results are not
        let other = submit(&core, "other", &["D2 B L"]);
        let third = core.lease(&w, 1).expect("lease")[0].job_id;
        assert_eq!(batch_seq(third), other.seq);
        assert_eq!(
            core.complete(&w, &[solved(third, "L' B' D2")])
                .expect("complete")
                .0,
            1
        );
        assert!(feed.try_recv().is_err());
        // a receiver dropped is forgotten at the next sending
        drop(feed);
        core.send_followers(before.seq, Vec::new());
        assert!(!core.followed());
    }

    /// A follower that does not read holds at most its channel's capacity: the result that
    /// finds the channel full drops the follower (the core never waits for it, and sends it
    /// nothing more), and the receiver sees the end after the results queued. Every result is
    /// still in the store.
    #[test]
    fn a_follower_that_does_not_read_is_dropped_when_its_channel_is_full() {
        const CAPACITY: usize = 3;
        let (_dir, core, w) = fresh_core();
        submit(&core, "slow", &["R"]);
        let mut feed = core.follow("slow", CAPACITY).expect("follow");
        // many lines finished at once (invalid), never read by the follower
        let mut batch = core.store.batch("slow").expect("read").expect("stored");
        let more: Vec<String> = (0..100).map(|i| format!("not a cube {i}")).collect();
        let jobs = core.prepare_chunk(&batch, 1, more).expect("prepare");
        core.store_chunk(&mut batch, jobs).expect("store");
        assert_eq!(feed.len(), CAPACITY);
        assert!(
            !core.followed(),
            "the follower is dropped once its channel is full"
        );
        // a completion afterwards is not queued for it
        let first = core.lease(&w, 1).expect("lease")[0].job_id;
        assert_eq!(
            core.complete(&w, &[solved(first, "R'")])
                .expect("complete")
                .0,
            1
        );
        assert_eq!(feed.len(), CAPACITY);
        let queued: Vec<u64> = std::iter::from_fn(|| feed.try_recv().ok())
            .map(|r| r.index)
            .collect();
        assert_eq!(queued, [1, 2, 3]);
        assert_eq!(
            feed.try_recv(),
            Err(tokio::sync::mpsc::error::TryRecvError::Disconnected)
        );
        // and every result is in the store
        assert_eq!(
            core.finished_prefix("slow", 0, 1000).expect("read").len(),
            101
        );
        assert_eq!(core.status("slow").expect("status").invalid, 100);
    }

    #[test]
    fn the_symmetry_index_answers_symmetric_copies_survives_a_restart_and_checks_candidates() {
        let (dir, core, w) = fresh_core();
        let first = submit(&core, "first", &["R U"]);
        let leased = core.lease(&w, 10).expect("lease");
        assert_eq!(leased.len(), 1);
        let done = solved(leased[0].job_id, "U' R'");
        assert_eq!(core.complete(&w, &[done]).expect("complete").0, 1);
        // a mirror image of the position (L' U', conjugated by the R-L mirror) and its inverse
        // copy (U R) are answered from the store, with solutions of their own
        let r = submit(&core, "again", &["L' U'", "U R", "R U F"]);
        assert_eq!(core.submitted_counts(r.seq).1, 2);
        let (found, _) = core.lookup("U R").expect("lookup").expect("found");
        assert_eq!(found.solution, "R' U'");
        drop(core);

        let core = Core::open(dir.path(), Duration::from_secs(30)).expect("reopen");
        assert!(core.lookup("L' U'").expect("lookup").is_some());
        assert!(core.lookup("R U F").expect("lookup").is_none());
        // a slot naming a job of another class (a shared hash) is no answer
        let other = parse_position("R U F", InputFormat::Auto).expect("parses");
        let twophase = mode_key(&core.batch_mode(r.seq));
        let slot = SymIndex::slot(&other.canonical().cube.key(), &twophase);
        let first_job = job_id(first.seq, 0);
        core.index.write().expect("lock").0.insert(slot, first_job);
        assert!(core.lookup("R U F").expect("lookup").is_none());
    }

    #[test]
    fn blank_and_comment_lines_are_skipped_in_place_and_long_lines_invalid() {
        let (_dir, core, w) = fresh_core();
        let long = "R U ".repeat(25_000);
        let batch = submit(
            &core,
            "b",
            &["# header", "R U", "", "  ", long.as_str(), "F"],
        );
        let (results, _) = core.results("b", 0, 100, "", false).expect("results");
        let statuses: Vec<&str> = results.iter().map(|r| r.status.as_str()).collect();
        assert_eq!(
            statuses,
            ["skipped", "", "skipped", "skipped", "invalid", ""]
        );
        assert!(results[4].error.contains(&format!("{MAX_LINE_LEN} bytes")));
        assert_eq!(results[4].input.len(), MAX_LINE_LEN + 1);
        for (i, r) in results.iter().enumerate() {
            assert_eq!(r.index, i as u64);
        }
        // only the two positions are ever leased
        let leased = core.lease(&w, 10).expect("lease");
        let mut lines: Vec<u64> = leased.iter().map(|l| line_index(l.job_id)).collect();
        lines.sort_unstable();
        assert_eq!(lines, [1, 5]);
        assert_eq!(batch.total, 6);
    }
}
