//! Leases: queued jobs handed to workers (memory only), long-polling for work, heartbeats that
//! extend leases and persist proven lower bounds, release, and the expiry that returns jobs
//! to the queue, run by the lease sweeper ([`Core::sweep_leases`], a task of its own).
//!
//! Deadlines, ages and graces are instants of the core's clock ([`Core::clock`]); the
//! sweeper's period and a long poll's wait are tokio timers, which only say when to look: what
//! expired is what the core's clock says is past its deadline.

use std::sync::Arc;
use std::time::Duration;

use cubefleet_proto::{JobProgress, JobState, LeasedJob, Mode};
use cubefleet_tables::coset::{Coset, SEED_BYTES};
use cubefleet_tables::{CubieCube, FaceletCube};
use prost::Message;
use tokio_util::sync::CancellationToken;

use super::machine::{decide, Actor, Event, Next as Rule, Phase};
use super::ready::Next;
use super::state::Lease;
use super::Core;
use crate::error::Error;
use crate::mode::question_of;
use crate::record::{batch_seq, LeaseView};
use crate::verify::{known_length, possible_bound};

/// Longest wait of a long-polling lease ([`Core::lease_wait`]).
pub const MAX_LEASE_WAIT: Duration = Duration::from_secs(10);

/// Most jobs one lease hands out.
pub const MAX_LEASE_JOBS: u32 = 10_000;

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
    /// The seed of the lease's spot check (see `LeasedJob.spot_seed`; 0: none).
    pub spot_seed: u64,
    /// A coset job: its coset's number and the sample seed drawn for this lease.
    pub coset: Option<(u64, [u8; SEED_BYTES])>,
}

impl From<Leased> for LeasedJob {
    fn from(j: Leased) -> LeasedJob {
        LeasedJob {
            job_id: j.job_id,
            facelets: FaceletCube::from_cubie(&j.cube).to_string(),
            mode: Some(j.mode),
            lower_bound: j.lower_bound,
            spot_seed: j.spot_seed,
            coset: j.coset.map_or(0, |(n, _)| n),
            sample_seed: j.coset.map_or_else(Vec::new, |(_, seed)| seed.to_vec()),
        }
    }
}

impl Core {
    /// How many jobs make `seconds` of search at the mean search time of the batch a lease
    /// serves next (of the results accepted lately, when it has none yet), at least one;
    /// `max` when `seconds` is not above 0.
    pub fn jobs_for_seconds(&self, max: u32, seconds: f64) -> u32 {
        if seconds.is_nan() || seconds <= 0.0 {
            return max;
        }
        let per_job = {
            let st = self.lock();
            st.next_search_time()
                .unwrap_or_else(|| st.solve_times.estimate())
        };
        let fit = if per_job > 0.0 {
            (seconds / per_job).floor().min(f64::from(u32::MAX)) as u32
        } else {
            max
        };
        fit.clamp(1, max.max(1))
    }

    /// Leases up to `max` queued jobs, highest priority first, then submission order. When
    /// fewer are queued, jobs of a range or sample batch are made first ([`Core::make_jobs`]).
    ///
    /// The queue names where queued jobs are (a batch's cursor, its returned jobs), not which:
    /// the records there are read (only the fields a lease hands out are decoded) and the
    /// queued ones leased under the state lock, so no completion or cancellation falls between
    /// reading a record and leasing its job. Lines found finished are passed over.
    ///
    /// Expired leases are not looked for here: the coordinator's sweeper returns them to the
    /// queue every half second (and wakes long-polling leases when it does).
    ///
    /// A session holds at most [`Core::max_held`] jobs, and the sessions of one credential
    /// together at most what one worker of the most threads may ([`Core::credential_room`]):
    /// `max` is cut to the room left (none when it is full). A session the registry does not
    /// list is refused. Each job is leased by the state machine's rule
    /// ([`super::machine::decide`]). A batch whose question needs a later protocol revision
    /// than the session registered with (a restricted move set:
    /// [`cubefleet_proto::question::MOVES_PROTOCOL`]) is passed over, left for other workers.
    pub fn lease(&self, worker: &str, max: u32) -> Result<Vec<Leased>, Error> {
        let _op = self.op()?;
        let max = {
            let mut st = self.lock();
            self.touch(&mut st, worker);
            let Some(w) = st.workers.get_mut(worker) else {
                return Err(Error::Unauthenticated(
                    "unknown worker session: register again".into(),
                ));
            };
            w.asked = Some(self.clock.now());
            let w = &st.workers[worker];
            let max = if w.capped {
                let room = self.max_held_in(&st, w.threads).saturating_sub(w.held);
                let room = room.min(self.credential_room(&st, &w.credential));
                u64::from(max).min(room) as u32
            } else {
                max
            };
            (max, w.credential.clone(), w.protocol)
        };
        let (max, credential, protocol) = max;
        // jobs whose claim this credential made already wait for another's: passed over
        let mut passed = Vec::new();
        // a session holds one coset job at a time (a coset's solve takes every thread and
        // 4.9 GB): one it holds already, or one leased now, passes the others over
        let mut coset_held = {
            let st = self.lock();
            // the leases are looked through only while some batch is of cosets
            st.batches.values().any(|b| b.coset)
                && st
                    .leases
                    .iter()
                    .any(|(&id, l)| *l.worker == *worker && st.is_coset_batch(batch_seq(id)))
        };
        let owner: Arc<str> = worker.into();
        let mut out = Vec::new();
        while out.len() < max as usize {
            let want = max as usize - out.len();
            // too few queued: the next lines of a range or sample batch become jobs
            let made = self.make_jobs(want)?;
            let mut st = self.lock();
            // a worker older than a batch's question needs is never leased its jobs (it would
            // read the mode without the fields it does not know, and answer another question);
            // no question needs more than this build's revision, so a current worker's lease
            // looks at no batch
            let barred: Vec<u32> = if protocol >= cubefleet_proto::PROTOCOL {
                Vec::new()
            } else {
                st.batches
                    .iter()
                    .filter(|(_, b)| {
                        b.mode
                            .as_ref()
                            .is_some_and(|m| question_of(m).needs_protocol() > protocol)
                    })
                    .map(|(&seq, _)| seq)
                    .collect()
            };
            let Some(next) = st
                .ready
                .take(want, want as u64, |seq| !barred.contains(&seq))
            else {
                drop(st);
                if made {
                    continue; // all answered from the store: make more
                }
                break;
            };
            let ids: Vec<u64> = match &next {
                Next::Returned(ids) => ids.clone(),
                Next::Lines { from, last } => (*from..=*last).collect(),
            };
            let views = match self.read_views(&ids) {
                Ok(views) => views,
                Err(e) => {
                    st.ready.untake(next);
                    return Err(e);
                }
            };
            let now = self.clock.now();
            let deadline = now + self.lease_duration;
            let mut coset_full = false;
            // the batch of the last job leased, and whether its question counts solutions
            let mut spot_batch: Option<(u32, bool)> = None;
            for (id, job) in ids.into_iter().zip(views) {
                // a queued job always has a position; without one its lease simply expires
                let Some(job) = job.filter(|j| j.state() == JobState::Queued) else {
                    continue; // finished
                };
                let claimed = st.pending.get(&id);
                if claimed.is_some_and(|c| c.iter().any(|c| c.credential == credential)) {
                    passed.push(id);
                    continue;
                }
                let is_coset = st.is_coset_batch(batch_seq(id));
                if is_coset && coset_held {
                    passed.push(id);
                    coset_full = true;
                    continue;
                }
                if decide(Phase::Queued, Event::Lease, Actor::Session) != Ok(Rule::Lease) {
                    continue;
                }
                st.count(id, JobState::Queued, JobState::Leased);
                let cube = job.cube();
                // drawn now: the worker learns the ranks to return only with its lease (the
                // batch's question read once for a run of its jobs)
                let seq = batch_seq(id);
                let counts = match spot_batch {
                    Some((s, counts)) if s == seq => counts,
                    _ => {
                        let counts = question_of(&st.mode(seq)).count().is_all();
                        spot_batch = Some((seq, counts));
                        counts
                    }
                };
                let spot_seed = if counts {
                    rand::random::<u64>().max(1)
                } else {
                    0
                };
                // drawn now, from the system's generator: nothing the worker knew before
                // this lease names the positions it must answer for
                let seed = is_coset.then(rand::random::<[u8; SEED_BYTES]>);
                coset_held |= is_coset;
                st.lease(
                    id,
                    Lease {
                        worker: owner.clone(),
                        deadline,
                        since: now,
                        cube,
                        spot_seed,
                        seed,
                    },
                );
                if let Some(cube) = cube {
                    let mode = st.mode(seq);
                    out.push(Leased {
                        spot_seed,
                        job_id: id,
                        cube,
                        // only a bound this session proved itself resumes its search; one
                        // stored by an earlier version may be above the possible
                        lower_bound: possible_bound(&mode, None, job.lower_bound_of(worker)),
                        mode,
                        coset: seed.map(|seed| (Coset::of(&cube).number(), seed)),
                    });
                }
            }
            if coset_full {
                break;
            }
        }
        if !passed.is_empty() {
            let mut st = self.lock();
            for id in passed {
                let priority = st.batch(batch_seq(id)).priority;
                st.ready.requeue(id, priority);
            }
        }
        Ok(out)
    }

    /// What a lease reads of the jobs `ids`: each record's lease view (None: no record).
    fn read_views(&self, ids: &[u64]) -> Result<Vec<Option<LeaseView>>, Error> {
        self.store
            .jobs_encoded(ids)?
            .into_iter()
            .map(|b| {
                b.map(|b| LeaseView::decode(&*b))
                    .transpose()
                    .map_err(Error::from)
            })
            .collect()
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

    /// Extends the worker's leases, records progress, and names the jobs it must stop (those
    /// it does not hold, or whose batch was cancelled). A job the worker does not hold changes
    /// nothing and is kept nowhere but in the answer.
    ///
    /// A proven lower bound is stored with the session that proved it
    /// ([`crate::record::JobRecord::bound_session`]): it shows the job's progress and resumes that session's
    /// search if it leases the job again, and is nobody else's starting point.
    pub fn heartbeat(&self, worker: &str, jobs: &[JobProgress]) -> Result<Vec<u64>, Error> {
        let _op = self.op()?;
        let mut cancel = Vec::new();
        let mut record = Vec::new();
        {
            let mut st = self.lock();
            self.touch(&mut st, worker);
            let deadline = self.clock.now() + self.lease_duration;
            for p in jobs {
                let (phase, actor) = st.standing(p.job_id, worker);
                // a job it holds has a batch; an id it made up names none, and makes none
                let extend = decide(phase, Event::Heartbeat, actor) == Ok(Rule::Extend);
                let cancelled = extend
                    && st
                        .batches
                        .get(&batch_seq(p.job_id))
                        .is_some_and(|b| b.cancelled);
                if !extend || cancelled {
                    cancel.push(p.job_id);
                    continue;
                }
                if let Some(l) = st.leases.get_mut(&p.job_id) {
                    l.deadline = deadline;
                }
                // a lower bound of 0 raises nothing: the record is not read (most held jobs
                // are queued in the worker or are two-phase searches, which prove none)
                if p.lower_bound > 0 {
                    record.push(p.clone());
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
                .and_then(|cube| known_length(&cube, &job.r().input, &question_of(&mode)));
            let lower_bound = possible_bound(&mode, known, p.lower_bound);
            let raised = lower_bound > job.r().lower_bound || job.bound_session != worker;
            if job.state() == JobState::Queued && raised {
                let mut new = job.clone();
                new.r_mut().lower_bound = lower_bound;
                new.r_mut().nodes = p.nodes;
                new.bound_session = worker.to_string();
                self.store.cas_job(p.job_id, &job, &new)?;
            }
        }
        Ok(cancel)
    }

    /// Hands jobs back unfinished, keeping their progress. A job handed back with a reason
    /// (`JobProgress.reason`: the worker cannot run it) counts as a refused result, and ends
    /// `failed` with the reasons as repeatedly refused results do ([`Core::refuse`]). Jobs the
    /// worker does not hold are passed over.
    pub fn release(&self, worker: &str, jobs: &[JobProgress]) -> Result<u32, Error> {
        let mut n = 0;
        for p in jobs {
            let event = if p.reason.is_empty() {
                Event::Release
            } else {
                Event::CannotRun
            };
            let (phase, actor) = self.lock().standing(p.job_id, worker);
            match decide(phase, event, actor) {
                Ok(Rule::Requeue) => {
                    self.heartbeat(worker, std::slice::from_ref(p))?;
                    self.requeue_from(p.job_id, Some(worker), "released by worker")?;
                }
                Ok(Rule::Count) => {
                    let reason = format!("the worker cannot run it: {}", p.reason);
                    tracing::warn!(worker, job = p.job_id, ?reason, "job handed back");
                    self.refuse(p.job_id, worker, &reason)?;
                }
                _ => continue,
            }
            n += 1;
        }
        self.store.flush()?;
        Ok(n)
    }

    /// Returns every lease at or past its deadline on the core's clock to the queue, with the
    /// progress it reached; its holder may still report on the job within the grace
    /// ([`super::machine::Actor::LastHolder`]). One pass of the sweeper: a test calls it
    /// after advancing a manual clock past a deadline.
    pub fn expire_leases(&self) -> Result<usize, Error> {
        let now = self.clock.now();
        let expired: Vec<(u64, Arc<str>)> = {
            let st = self.lock();
            st.leases
                .iter()
                .filter(|(_, l)| l.deadline <= now)
                .map(|(&id, l)| (id, l.worker.clone()))
                .collect()
        };
        for (id, holder) in &expired {
            if decide(Phase::Leased, Event::Expire, Actor::Coordinator) != Ok(Rule::Requeue) {
                continue;
            }
            self.requeue_from(*id, Some(holder), "lease expired")?;
            let mut st = self.lock();
            st.counters.lease_expiries += 1;
            if !st.leases.contains_key(id) {
                st.returned.insert(*id, (holder.clone(), now));
            }
        }
        Ok(expired.len())
    }

    /// Moves a leased job back to the queue (keeping its lower bound), or to `cancelled` when
    /// its batch was cancelled; when `owner` is given only if the job is leased to that
    /// worker: a worker whose lease was lost must not take the job from its new holder.
    ///
    /// A lease is memory only, so returning a job to the queue writes nothing; a cancelled
    /// batch's job is stored as `cancelled` by compare-and-swap, retried while a concurrent
    /// heartbeat changes the record.
    pub(super) fn requeue_from(
        &self,
        id: u64,
        owner: Option<&str>,
        why: &str,
    ) -> Result<(), Error> {
        let _op = self.op()?;
        let mut st = self.lock();
        match st.leases.get(&id) {
            Some(l) if owner.is_none_or(|w| *l.worker == *w) => {}
            _ => return Ok(()),
        }
        st.unlease(id);
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
        st.ready.requeue(id, priority);
        drop(st);
        Self::bump(&self.queued);
        tracing::debug!(job = id, why, "job returned to the queue");
        Ok(())
    }
}

/// Time between two passes of the lease sweeper ([`Core::sweep_leases`]): how late past its
/// deadline an expired lease's job may return to the queue: half the shortest lease
/// `--lease` allows (a second).
pub const SWEEP_EVERY: Duration = Duration::from_millis(500);

impl Core {
    /// The lease sweeper: returns expired leases' jobs to the queue ([`Core::expire_leases`]),
    /// and forgets worker sessions long silent ([`Core::prune_workers`]), every
    /// [`SWEEP_EVERY`] of tokio's time until `shutdown` is cancelled; what expired is what the
    /// core's clock says.
    pub fn sweep_leases(
        self: &Arc<Self>,
        shutdown: CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let core = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(SWEEP_EVERY) => {}
                    _ = shutdown.cancelled() => return,
                }
                core.prune_workers();
                let core = core.clone();
                if let Ok(Ok(n)) = tokio::task::spawn_blocking(move || core.expire_leases()).await {
                    if n > 0 {
                        tracing::info!(expired = n, "leases expired; jobs back in the queue");
                    }
                }
            }
        })
    }
}
