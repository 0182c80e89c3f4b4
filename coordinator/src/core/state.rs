//! The in-memory state derived from the store, behind the core's one lock: the ready queue
//! (per batch a cursor, see `ready`), the leases (memory only), per-batch counters, the worker
//! registry's entries, rejections and the counters since start. Its helpers move a job's
//! count between states; they never touch the store.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use cubefleet_proto::{JobResult, JobState, Mode, ResultStatus};
use cubefleet_tables::CubieCube;

use super::machine::{Actor, Phase};
use super::ready::Ready;
use super::WorkerInfo;
use crate::clock::Clock;
use crate::range::States;
use crate::rate::Rate;
use crate::record::{batch_seq, BatchRecord};

/// A lease held by a worker. Its instants are the core's clock's ([`super::Core::clock`]).
#[derive(Clone, Debug)]
pub(super) struct Lease {
    /// The worker's id (shared by all the jobs of one lease call).
    pub(super) worker: Arc<str>,
    /// When the lease ends unless a heartbeat extends it.
    pub(super) deadline: Instant,
    /// When the lease was made: a completion's search time is never counted as longer than
    /// the coordinator saw it take (the queued-work estimate rests on what it measured).
    pub(super) since: Instant,
    /// The job's position as the lease made it from the stored record (None: the record has
    /// no valid position). A job's position never changes once stored (its id names one line
    /// of one batch, and neither is ever replaced), so a completion verifies against this
    /// instead of making it again from the record's canonical form.
    pub(super) cube: Option<CubieCube>,
    /// Of a job whose answer counts solutions it may not list (all optimal ones, or their
    /// count alone): the seed of this lease's spot check, drawn when it was made, which names
    /// the ranks of the solutions the answer must include
    /// ([`cubefleet_proto::question::spot_ranks`]); 0 for other jobs.
    pub(super) spot_seed: u64,
    /// Of a coset job: the sample seed drawn at this lease (the positions the completion must
    /// answer for; `cubefleet_tables::coset::samples`). Kept with the lease only: a lease that
    /// ends takes it along, and the next lease draws another.
    pub(super) seed: Option<[u8; cubefleet_tables::coset::SEED_BYTES]>,
}

/// Per-batch counters.
#[derive(Clone, Debug, Default)]
pub(super) struct BatchMem {
    /// The batch's id (its record's `batch_id`).
    pub(super) id: String,
    /// Its priority: higher is leased first.
    pub(super) priority: i32,
    /// The batch's search (a copy of the stored record's, which never changes).
    pub(super) mode: Option<Mode>,
    /// Jobs per state, indexed by `JobState as usize`.
    pub(super) counts: [u64; 7],
    /// Solutions per length: `histogram[n]` jobs were solved in `n` moves.
    pub(super) histogram: Vec<u64>,
    /// Whether the batch was cancelled (its unfinished jobs end cancelled).
    pub(super) cancelled: bool,
    /// Jobs answered from the store at submission.
    pub(super) from_store: u64,
    /// Samples of its finished jobs, recorded as they change: its rate.
    pub(super) rate: Rate,
    /// The states of a range or sample batch (None for a file batch): what it makes jobs of.
    pub(super) states: Option<States>,
    /// Of a range or sample batch: its lines made into jobs so far (as its stored record's
    /// `made`, raised only after the jobs and the record are flushed).
    pub(super) made: u64,
    /// Whether the batch keeps only the lengths of its results (no solution text).
    pub(super) keep_histogram: bool,
    /// How many credentials must agree on a claim (as its record's `confirm`).
    pub(super) confirm: u32,
    /// Claims that two workers disagreed on since start.
    pub(super) disagreements: u64,
    /// The client credential that submitted it ("" for none; as its record's `owner`).
    pub(super) owner: String,
    /// Search times of its accepted results (memory only: learnt again after a restart):
    /// what a lease of its jobs is sized by.
    pub(super) search: crate::solve_times::BatchMean,
    /// Whether its mode is a coset's (one job per coset, one held per session).
    pub(super) coset: bool,
    /// Of a coset batch: its finished cosets' counts summed depth by depth, and their
    /// unsolved positions (memory only: summed again from the records at every open).
    pub(super) coset_counts: Vec<u64>,
    /// See `coset_counts`.
    pub(super) coset_unsolved: u64,
}

impl BatchMem {
    /// Takes what memory keeps of the batch's stored record `b`: id, priority, mode,
    /// cancellation, definition, jobs made, what it keeps.
    pub(super) fn take_record(&mut self, b: &BatchRecord) {
        self.id.clone_from(&b.batch_id);
        self.priority = b.priority;
        self.mode = b.mode;
        self.cancelled = b.cancelled;
        self.states = b.states();
        self.made = b.made;
        self.keep_histogram = b.keeps_histogram();
        self.confirm = b.confirm;
        self.owner.clone_from(&b.owner);
        self.coset = crate::mode::question_of(&b.mode.unwrap_or_default()).is_coset();
    }

    /// Adds (or, `add` false, takes back) a finished coset's counts to the batch's sums.
    pub(super) fn sum_coset(&mut self, c: &cubefleet_proto::CosetCounts, add: bool) {
        if self.coset_counts.len() < c.counts.len() {
            self.coset_counts.resize(c.counts.len(), 0);
        }
        for (sum, &n) in self.coset_counts.iter_mut().zip(&c.counts) {
            *sum = if add { *sum + n } else { sum.saturating_sub(n) };
        }
        self.coset_unsolved = if add {
            self.coset_unsolved + c.unsolved
        } else {
            self.coset_unsolved.saturating_sub(c.unsolved)
        };
    }

    /// Lines of a range or sample batch not made into jobs yet (and never to be made once it
    /// is cancelled); 0 for a file batch.
    pub(super) fn unmade(&self) -> u64 {
        self.states
            .map_or(0, |s| s.lines().saturating_sub(self.made))
    }

    /// Its jobs in a final state (done, invalid, cancelled, failed).
    pub(super) fn finished(&self) -> u64 {
        self.counts[JobState::Done as usize]
            + self.counts[JobState::Invalid as usize]
            + self.counts[JobState::Cancelled as usize]
            + self.counts[JobState::Failed as usize]
    }
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
    /// Claims (of batches with `confirm` 2) that two workers disagreed on.
    pub disagreements: u64,
    /// Lines answered from the store at submission.
    pub from_store: u64,
}

/// A hash map keyed by ids this process made or read (job ids, batch sequence numbers, worker
/// ids): hashed with foldhash, which is several times cheaper than SipHash on such keys.
pub(super) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Everything derived from the store, behind one lock.
pub(super) struct State {
    /// The core's clock ([`super::Core`]'s own, cloned): the time of the rates' samples.
    pub(super) clock: Clock,
    /// The ready queue: where the queued jobs that are not leased are, highest priority's
    /// oldest line first (no entry per job: see `ready`).
    pub(super) ready: Ready,
    /// The leases by job id (memory only: a leased job's record stays `queued`).
    pub(super) leases: FastMap<u64, Lease>,
    /// Per-batch counters by batch sequence number.
    pub(super) batches: FastMap<u32, BatchMem>,
    /// The worker registry by worker id.
    pub(super) workers: FastMap<String, WorkerInfo>,
    /// Counters since start.
    pub(super) counters: Counters,
    /// The reasons each job's results were refused so far (from its lease holders), with
    /// the credential of each, until it finishes (see `completion`: when a job fails).
    pub(super) rejections: FastMap<u64, Vec<(Arc<str>, String)>>,
    /// Search times of accepted results, for metrics and the queued-work estimate.
    pub(super) solve_times: crate::solve_times::SolveTimes,
    /// Per job whose lease expired lately: the session that held it and when it expired
    /// (see [`super::machine::Actor::LastHolder`], on the core's clock); dropped when the job
    /// is leased again and by the sweeper once the grace is over.
    pub(super) returned: FastMap<u64, (Arc<str>, Instant)>,
    /// The claims waiting for confirmation, per job of a batch with `confirm` 2 (memory
    /// only: after a restart such a job is searched again).
    pub(super) pending: FastMap<u64, Vec<Claim>>,
}

/// An answer the coordinator cannot check in full (optimal, none within, a bound, a timeout,
/// over the target) waiting for a worker of another credential to make the same claim.
#[derive(Clone, Debug)]
pub(super) struct Claim {
    /// The credential of the worker that made it.
    pub(super) credential: Arc<str>,
    /// The worker's identity (what `confirmed_by` names).
    pub(super) identity: String,
    /// Its status (solved, timeout, over_target, none_within).
    pub(super) status: ResultStatus,
    /// Its solution's length (0 without one).
    pub(super) length: u32,
    /// Of a question for several solutions: the solutions listed and their count (empty and
    /// 0 otherwise), which a confirming claim must repeat.
    pub(super) solutions: Vec<String>,
    /// See `solutions`.
    pub(super) count: u64,
    /// Of a coset: its counts, its unsolved positions and the depth they are exact through
    /// (what two credentials must agree on).
    pub(super) coset: Option<(Vec<u64>, u64, u32)>,
}

impl State {
    /// An empty state whose rates are sampled on `clock` (the core's).
    pub(super) fn new(clock: Clock) -> State {
        State {
            clock,
            ready: Ready::default(),
            leases: FastMap::default(),
            batches: FastMap::default(),
            workers: FastMap::default(),
            counters: Counters::default(),
            rejections: FastMap::default(),
            solve_times: crate::solve_times::SolveTimes::default(),
            returned: FastMap::default(),
            pending: FastMap::default(),
        }
    }

    /// The counters of batch `seq`, made empty when there were none.
    pub(super) fn batch(&mut self, seq: u32) -> &mut BatchMem {
        self.batches.entry(seq).or_default()
    }

    /// Leases job `id` (`lease.worker` holds one job more; no earlier holder may report on
    /// it from now on).
    pub(super) fn lease(&mut self, id: u64, lease: Lease) {
        self.returned.remove(&id);
        if let Some(w) = self.workers.get_mut(&*lease.worker) {
            w.held += 1;
        }
        if let Some(old) = self.leases.insert(id, lease) {
            if let Some(w) = self.workers.get_mut(&*old.worker) {
                w.held = w.held.saturating_sub(1);
            }
        }
    }

    /// How job `id` and the session `worker` stand, as far as memory knows (the record is not
    /// read): leased (to it, or to another session), or queued (it being the last holder
    /// within the grace, or not). A finished job reads as queued here; the callers that may
    /// change it read its record ([`super::completion`]).
    pub(super) fn standing(&self, id: u64, worker: &str) -> (Phase, Actor) {
        match self.leases.get(&id) {
            Some(l) if *l.worker == *worker => (Phase::Leased, Actor::Holder),
            Some(_) => (Phase::Leased, Actor::Session),
            None => match self.returned.get(&id) {
                Some((last, _)) if **last == *worker => (Phase::Queued, Actor::LastHolder),
                _ => (Phase::Queued, Actor::Session),
            },
        }
    }

    /// Ends the lease of job `id`, if it has one (its holder holds one job less).
    pub(super) fn unlease(&mut self, id: u64) -> Option<Lease> {
        let lease = self.leases.remove(&id)?;
        if let Some(w) = self.workers.get_mut(&*lease.worker) {
            w.held = w.held.saturating_sub(1);
        }
        Some(lease)
    }

    /// Batches of the client credential `owner` not finished yet (not cancelled, with jobs
    /// queued or leased, or lines not made yet): what [`crate::limits::MAX_OPEN_BATCHES`]
    /// bounds.
    pub(super) fn open_batches_of(&self, owner: &str) -> usize {
        self.batches
            .values()
            .filter(|b| b.owner == owner && !b.cancelled)
            .filter(|b| {
                b.counts[JobState::Queued as usize] + b.counts[JobState::Leased as usize] > 0
                    || b.unmade() > 0
            })
            .count()
    }

    /// The mean search time of the batch a lease serves next (highest priority, then oldest,
    /// with work queued); None when it has no accepted result yet or nothing is queued.
    pub(super) fn next_search_time(&self) -> Option<f64> {
        let seq = self.ready.head()?;
        self.batches.get(&seq)?.search.get()
    }

    /// Jobs queued and not leased, of every batch.
    pub(super) fn queued(&self) -> u64 {
        self.batches
            .values()
            .map(|b| b.counts[JobState::Queued as usize])
            .sum()
    }

    /// The mode of batch `seq` (the default mode for an unknown batch).
    pub(super) fn mode(&self, seq: u32) -> Mode {
        self.batches
            .get(&seq)
            .and_then(|b| b.mode)
            .unwrap_or_default()
    }

    /// Fills in what only the coordinator's memory knows of a job's [`view`]: its batch's id,
    /// and `leased` while a lease (memory only) holds it.
    pub(super) fn overlay(&self, r: &mut JobResult) {
        if let Some(b) = self.batches.get(&batch_seq(r.job_id)) {
            r.batch_id.clone_from(&b.id);
        }
        if r.state == JobState::Queued as i32 && self.leases.contains_key(&r.job_id) {
            r.state = JobState::Leased as i32;
        }
    }

    /// Moves one job's count from state `from` to `to` (both may be Unspecified: none).
    /// A change of the batch's finished jobs is a sample of its rate.
    pub(super) fn count(&mut self, id: u64, from: JobState, to: JobState) {
        let b = self.batch(batch_seq(id));
        if from != JobState::Unspecified {
            b.counts[from as usize] = b.counts[from as usize].saturating_sub(1);
        }
        if to != JobState::Unspecified {
            b.counts[to as usize] += 1;
        }
        if from.is_finished() != to.is_finished() {
            let now = self.clock.now();
            let b = self.batch(batch_seq(id));
            b.rate.record(now, b.finished());
        }
    }

    /// Counts a result's solution length in its batch's histogram (nothing without one).
    pub(super) fn record_length(&mut self, id: u64, r: &JobResult) {
        if r.has_length() {
            self.count_length(batch_seq(id), r.length);
        }
        if let Some(c) = &r.coset {
            self.batch(batch_seq(id)).sum_coset(c, true);
        }
    }

    /// Whether batch `seq` is a coset batch.
    pub(super) fn is_coset_batch(&self, seq: u32) -> bool {
        self.batches.get(&seq).is_some_and(|b| b.coset)
    }

    /// Counts a solution of `n` moves in batch `seq`'s histogram.
    pub(super) fn count_length(&mut self, seq: u32, n: u32) {
        let h = &mut self.batch(seq).histogram;
        let n = n as usize;
        if h.len() <= n {
            h.resize(n + 1, 0);
        }
        h[n] += 1;
    }
}
