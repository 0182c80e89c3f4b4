//! The coordinator's logic, independent of the gRPC transport: batches, the ready queue,
//! leases, verified completions, deduplication and progress. Methods block on the store; the
//! services call them from `spawn_blocking` ([`blocking`]). The few `async` methods (the
//! submission pipeline, the progress stream, the long-polling lease, the lease sweeper) run
//! the blocking ones on the blocking pool themselves, and answer in `tonic::Status` where
//! their input is a stream of gRPC messages.
//!
//! [`Core`] owns the state: the store, the in-memory `State` under one lock, the
//! symmetry index, the signals and the followers. Each part of a job's life is an `impl Core`
//! block in a file of its own:
//!
//! - `state`: the in-memory state (ready queue, leases, per-batch counters) and its helpers;
//! - `ready`: the ready queue, per batch a cursor over its lines and the jobs returned below
//!   it (no entry per queued job);
//! - `recovery`: the rebuild of that state from the store at open;
//! - `intake`: begin/end a submission, prepare and store chunks of lines (parsing, answers
//!   from the store);
//! - `submit`: the submission pipeline over intake: a stream of chunks cut into growing
//!   groups, each prepared while the one before is stored;
//! - `dedup`: the symmetry index, and mapping a symmetric copy's answer back;
//! - `leases`: lease, long-polling lease, heartbeat, release, expiry and requeueing, and the
//!   sweeper task that expires leases;
//! - `making`: the jobs of range and sample batches, made when a lease finds too few queued
//!   (such a batch is stored as its definition and a `made` cursor, see [`crate::range`]);
//! - `workers`: the worker registry and per-worker figures;
//! - `completion`: verify and store results, rejections and failures, following a batch;
//! - `cancel`: cancelling a batch;
//! - `queries`: status, list, results, finished prefix, one job, lookup, counters;
//! - `watch`: a batch's progress as a stream of statuses;
//! - `summary`: the clean stop (no change after it) and the summary it stores, from which the
//!   next open rebuilds the state without scanning the jobs.
//!
//! This file holds what the parts share: opening, the lock, the signals, compare-and-swap of
//! job records, and the view of a record as clients see it.
//!
//! Time: the core reads the time from one [`Clock`], given at the open (the system's, or a
//! test's [`crate::ManualClock`]), never from `Instant::now()`: a lease's deadline and age, a
//! worker's last call and last ask, a returned job's grace and a batch's rate are all
//! instants of that clock, so a test advances it past a lease and runs one sweep
//! ([`Core::expire_leases`]) instead of sleeping.
//!
//! Invariants:
//! - the store is the truth; the in-memory state (queue, leases, counters) is derived from
//!   it and rebuilt at start-up;
//! - a lease lives only in memory: a leased job's record stays `queued` in the store (so a
//!   restart returns it to the queue without writing anything), and every reader of records
//!   reports it as `leased` while the state's leases hold it;
//! - a job's stored state changes only by a successful compare-and-swap of its record, and the
//!   in-memory counters change only after that swap succeeded, so each job is counted in one
//!   state;
//! - submissions and completions are acknowledged only after a flush covering them;
//! - a range or sample batch's lines `0..made` have job records and no others do; `made`
//!   only grows, under the `making` lock, after its jobs are written, and is flushed before
//!   they are queued;
//! - the symmetry index names, for a position's class and a mode, a finished job holding a
//!   reusable answer; it is memory only, rebuilt from the records after each open by a thread
//!   while the core serves (its readers wait until it is whole),
//!   and every candidate it names is checked against the record before use;
//! - every change of the store runs inside [`Core::op`], from its first write until the state
//!   in memory follows it, so [`Core::close`] sees no change half made;
//! - every change of a job is first decided by the job state machine (`machine`): who may do
//!   what to which job, in which state, in one function;
//! - security state (revocations) is stored before the call returns and kept apart from the
//!   state rebuilt from the jobs (`security`);
//! - every instant the core keeps or compares is read from its clock ([`Core::clock`]).

mod cancel;
mod completion;
mod dedup;
mod intake;
mod leases;
mod machine;
mod making;
mod queries;
mod ready;
mod recovery;
mod security;
mod state;
mod submit;
mod summary;
#[cfg(test)]
mod tests;
mod watch;
mod workers;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use cubefleet_proto::{JobResult, Mode};
use cubefleet_tables::FaceletCube;
use prost::Message;

pub use self::cancel::Canceller;
pub use self::completion::MAX_REJECTIONS;
use self::dedup::SymIndex;
pub use self::intake::MAX_LINE_LEN;
pub use self::leases::{Leased, MAX_LEASE_JOBS, MAX_LEASE_WAIT, SWEEP_EVERY};
pub use self::queries::Work;
pub use self::security::Revoker;
pub use self::state::Counters;
use self::state::State;
pub use self::submit::EndHash;
pub use self::workers::{
    WorkerInfo, HELD_WORK, MAX_HELD_PER_THREAD, MAX_SESSIONS_PER_CREDENTIAL, MIN_HELD_PER_THREAD,
};
use crate::clock::Clock;
use crate::error::Error;
use crate::record::{line_index, BatchRecord, JobRecord};
use crate::store::Store;

/// The coordinator: a store and the state derived from it.
pub struct Core {
    /// The store: the truth.
    store: Box<dyn Store>,
    /// What is derived from the store, behind one lock ([`Core::lock`]).
    state: Mutex<State>,
    /// The symmetry index (memory only, rebuilt at open).
    index: RwLock<SymIndex>,
    /// Whether the symmetry index holds every finished job (false while a thread rebuilds it
    /// after the open), and its readers' wake-up.
    index_built: (Mutex<bool>, Condvar),
    /// Whether the thread rebuilding the symmetry index read all it had to (not cut short by
    /// a close or an error): only then does a summary say where the index's jobs are.
    index_complete: AtomicBool,
    /// The thread rebuilding the symmetry index after the open (joined by [`Core::close`]).
    index_builder: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Set by [`Core::close`]: no change is taken any more.
    closed: AtomicBool,
    /// Changes of the store in flight ([`Core::op`]).
    inflight: AtomicUsize,
    /// How long a lease lasts without a heartbeat.
    lease_duration: Duration,
    /// The one source of the time the core measures (and `state`'s clock, the same):
    /// deadlines, ages, last calls, graces and rates ([`crate::clock`]).
    clock: Clock,
    /// Serialises submissions of the same batch (one writer per batch at a time).
    submitting: Mutex<HashSet<String>>,
    /// Serialises making jobs of range and sample batches, and the writes of their batch
    /// records (a cancellation takes it too), so no line is made twice.
    making: Mutex<()>,
    /// Bumped whenever jobs are queued (for long-polling leases); its value means nothing.
    queued: tokio::sync::watch::Sender<u64>,
    /// Bumped whenever jobs finish (for prompt progress streams); its value means nothing.
    finished: tokio::sync::watch::Sender<u64>,
    /// Followers of batches ([`Core::follow`]): a batch's sequence number and where its
    /// results go as they finish.
    followers: Mutex<Vec<(u32, Follower)>>,
    /// The key worker session tokens are signed with (kept in the store's `meta`).
    session_key: crate::session::SessionKey,
    /// What a restart must keep of credentials (revocations): stored, and apart from
    /// `state`, which is rebuilt from the jobs at open.
    security: Mutex<security::Security>,
}

/// Key in the store's `meta` of the session key.
const SESSION_KEY: &[u8] = b"session_key";

/// Where [`Core::follow`] sends the results of a batch, one at a time: a bounded channel, so
/// at most its capacity wait for a receiver that does not read.
type Follower = tokio::sync::mpsc::Sender<Box<JobResult>>;

impl Core {
    /// Opens the sled store in `dir` and rebuilds the in-memory state from it; its time is
    /// the system's.
    pub fn open(dir: &std::path::Path, lease_duration: Duration) -> Result<Arc<Core>, Error> {
        Core::open_with_clock(dir, lease_duration, Clock::system())
    }

    /// [`Core::open`] with the time read from `clock` (a test's [`crate::ManualClock`]
    /// moves leases past their deadline without waiting).
    pub fn open_with_clock(
        dir: &std::path::Path,
        lease_duration: Duration,
        clock: Clock,
    ) -> Result<Arc<Core>, Error> {
        let store = crate::store::SledStore::open(dir)?;
        let session_key = session_key(&store)?;
        let core = Core {
            store: Box::new(store),
            state: Mutex::new(State::new(clock.clone())),
            index: RwLock::new(SymIndex::default()),
            index_built: (Mutex::new(false), Condvar::new()),
            index_complete: AtomicBool::new(false),
            index_builder: Mutex::new(None),
            closed: AtomicBool::new(false),
            inflight: AtomicUsize::new(0),
            lease_duration,
            clock,
            submitting: Mutex::new(HashSet::new()),
            making: Mutex::new(()),
            queued: tokio::sync::watch::Sender::new(0),
            finished: tokio::sync::watch::Sender::new(0),
            followers: Mutex::new(Vec::new()),
            session_key,
            security: Mutex::new(security::Security::default()),
        };
        let done = core.rebuild()?;
        core.sum_cosets()?;
        // after the job state, never overwritten by it; ends revocations a crash cut short
        core.load_security()?;
        let core = Arc::new(core);
        Core::build_index_behind(&core, done);
        Ok(core)
    }

    /// The state, locked (a poisoned lock is taken over: every change to the state is made
    /// after the store write it follows, so a panic leaves no half-made change).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The core's clock: the time its leases, workers and rates are measured in.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// A receiver that sees a change whenever jobs were queued after it last looked.
    pub fn watch_queued(&self) -> tokio::sync::watch::Receiver<u64> {
        self.queued.subscribe()
    }

    /// A receiver that sees a change whenever jobs finished after it last looked.
    pub fn watch_finished(&self) -> tokio::sync::watch::Receiver<u64> {
        self.finished.subscribe()
    }

    /// The stored record of the batch `batch_id` (NotFound when there is none).
    fn batch_record(&self, batch_id: &str) -> Result<BatchRecord, Error> {
        self.store
            .batch(batch_id)?
            .ok_or_else(|| Error::NotFound(format!("batch {batch_id}")))
    }

    /// Tells the subscribers of `signal` that something happened.
    fn bump(signal: &tokio::sync::watch::Sender<u64>) {
        signal.send_modify(|g| *g = g.wrapping_add(1));
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
}

/// The store's session key: the stored one, or a new random one stored and flushed first (so
/// no session is handed out under a key a crash could lose).
fn session_key(store: &dyn Store) -> Result<crate::session::SessionKey, Error> {
    use crate::session::SessionKey;
    if let Some(bytes) = store.meta(SESSION_KEY)? {
        let bytes: [u8; 32] = bytes.as_slice().try_into().map_err(|_| {
            Error::Internal(format!(
                "the store's session key is {} bytes long, not 32",
                bytes.len()
            ))
        })?;
        return Ok(SessionKey::from_bytes(bytes));
    }
    let key = SessionKey::random();
    store.put_meta(SESSION_KEY, key.bytes())?;
    store.flush()?;
    Ok(key)
}

/// Runs blocking coordinator work off the async runtime (on the blocking pool), its error as
/// the gRPC status it maps to.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, tonic::Status> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(tonic::Status::from),
        Err(e) => Err(tonic::Status::internal(e.to_string())),
    }
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
