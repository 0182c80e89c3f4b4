//! Completions: a worker's results, each decided by the job state machine
//! ([`super::machine::decide`]: only the lease holder, or its last holder within the grace,
//! reports on a job), verified ([`crate::verify`]), stored by compare-and-swap, flushed, then
//! counted and indexed; rejected results requeue the job (or fail it after
//! [`MAX_REJECTIONS`]); finished jobs go to the followers of their batch. A batch that keeps
//! only lengths (`--keep histogram`) stores a verified result without its solution text.
//!
//! A result is an *answer* only when it is a verified solution that meets the batch's
//! question (no `optimal` flag, no lower bound, status `solved`); everything else is a
//! *claim*: stored with its worker and `claimed`, held until the batch's `confirm`
//! credentials agree, undone by `revoke`.

use cubefleet_proto::{Completion, CosetCounts, JobResult, JobState, Mode, ResultStatus};
use cubefleet_tables::coset::SEED_BYTES;
use cubefleet_tables::CubieCube;

use std::collections::HashSet;
use std::sync::Arc;

use super::machine::{decide, Actor, Event, Next, Phase};
use super::state::{Claim, FastMap};
use super::{view, Core};
use crate::error::Error;
use crate::limits::{cut, MAX_REASON};
use crate::mode::{index_key, question_of};
use crate::record::{batch_seq, JobRecord};
use crate::verify::{known_length, verify, Checked};
use prost::Message;

/// Results of one job refused (from the workers holding its lease, or handed back as not
/// runnable) before the job ends `failed` instead of going back to the queue: a job no worker
/// answers acceptably does not loop forever. The refusals must also come from workers of two
/// credentials, when two or more worker credentials have live sessions: then one credential
/// cannot fail a job that the others could answer.
pub const MAX_REJECTIONS: usize = 5;

/// Most refusal reasons kept per job (the oldest go first): what one job's refusals can make
/// the coordinator remember, each reason cut to [`crate::limits::MAX_REASON`] bytes.
const KEPT_REASONS: usize = 2 * MAX_REJECTIONS;

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
    /// The worker's status (solved, timeout, over_target, none_within, unreachable).
    status: ResultStatus,
    /// The solution in canonical notation ("" without one).
    solution: String,
    /// Its length in the mode's metric (0 without one).
    length: u32,
    /// Whether it is proven shortest.
    optimal: bool,
    /// No solution is shorter (as [`verify`] clamped it).
    lower_bound: u32,
    /// Search nodes the worker visited.
    nodes: u64,
    /// The worker's search time, milliseconds.
    millis: f64,
    /// Who answered: the worker's identity and session (provenance).
    worker: String,
    /// The session's public id.
    session: String,
    /// Of a batch with `confirm` 2: the workers whose equal claims made it final.
    confirmed_by: Vec<String>,
    /// Whether it rests on a claim ([`is_claim`]).
    claim: bool,
    /// Why the move set cannot solve the position (`unreachable`, as the coordinator's own
    /// check found it; "" otherwise): the record's `error`.
    reason: String,
    /// Of a question for several solutions: the solutions listed (canonical notation, in
    /// the canonical order), each verified; empty otherwise.
    solutions: Vec<String>,
    /// Of a question for several solutions: their count (see [`crate::verify::Checked`]).
    count: u64,
    /// A coset job's counts (verified as far as they can be: `crate::coset`); boxed, as few
    /// results have them.
    coset: Option<Box<CosetCounts>>,
}

/// Whether a result that passed [`verify`] (`checked`, reported `optimal`) is a claim: all
/// but a solution with no bound and no optimality asserted, whose status is `solved` — a
/// verified solution within the batch's target or depth, which is all the question asks.
fn is_claim(checked: &Checked, optimal: bool) -> bool {
    optimal
        || checked.lower_bound > 0
        || !matches!(
            checked.status,
            ResultStatus::Solved | ResultStatus::Unreachable
        )
}

/// Refuses a `timeout` the coordinator can tell is false: in a search with no time budget
/// (nothing ever times out), or before the budget has passed since the lease (`held`, what
/// the coordinator saw; a second's slack for the clocks). A timeout of the last holder (no
/// lease left to measure) is judged by the first rule only.
fn possible_timeout(
    checked: &Checked,
    mode: &Mode,
    held: Option<std::time::Duration>,
) -> Result<(), String> {
    if checked.status != ResultStatus::Timeout {
        return Ok(());
    }
    let budget = mode.timeout_seconds;
    if budget <= 0.0 {
        return Err("timeout in a search with no time budget".into());
    }
    match held {
        Some(h) if h.as_secs_f64() + 1.0 < budget => Err(format!(
            "timeout after {:.1} s of a {budget} s budget",
            h.as_secs_f64()
        )),
        _ => Ok(()),
    }
}

/// How long the coordinator saw a lease held, with the seed of its spot check (0: none).
type Held = (std::time::Duration, u64);

/// Whether two claims on one job agree: the same status and length, and of a question for
/// several solutions the same list and count; for a timeout or an answer over the target
/// (whose best solution found may differ from search to search), the same status; of a coset,
/// the same counts, unsolved positions and exact depth.
fn agrees(a: &Claim, v: &Verified) -> bool {
    a.status == v.status
        && a.coset == coset_claim(v)
        && (matches!(v.status, ResultStatus::Timeout | ResultStatus::OverTarget)
            || (a.length == v.length && a.count == v.count && a.solutions == v.solutions))
}

/// What two credentials must agree on of a coset result ([`Claim::coset`]).
fn coset_claim(v: &Verified) -> Option<(Vec<u64>, u64, u32)> {
    v.coset
        .as_ref()
        .map(|k| (k.counts.clone(), k.unsolved, k.exact_through))
}

/// The state machine's phase of the job whose record is `job`, given `mem`, what memory says
/// of it (leased or queued).
fn phase_of(job: &JobRecord, mem: Phase) -> Phase {
    match job.state() {
        JobState::Done | JobState::Failed if job.r().claimed => Phase::Claimed,
        JobState::Done => Phase::Answered,
        JobState::Failed => Phase::Claimed,
        JobState::Invalid | JobState::Cancelled => Phase::Closed,
        _ => mem,
    }
}

impl Verified {
    /// The record `job` with this result: done, with the lower bound [`verify`] proved (the
    /// stored one taken into account, clamped, never above the solution's length).
    fn apply(self, mut job: JobRecord) -> JobRecord {
        let claimed = self.claim;
        let r = job.r_mut();
        r.state = JobState::Done as i32;
        r.set_outcome(self.status);
        r.solution = self.solution;
        r.length = self.length;
        r.optimal = self.optimal;
        r.lower_bound = self.lower_bound;
        r.nodes = self.nodes;
        r.millis = self.millis;
        r.claimed = claimed;
        r.worker = self.worker;
        r.session = self.session;
        r.confirmed_by = self.confirmed_by;
        r.solutions = self.solutions;
        r.count = self.count;
        r.coset = self.coset.map(|c| *c);
        if !self.reason.is_empty() {
            r.error = self.reason;
        }
        job.bound_session.clear();
        job
    }
}

impl Core {
    /// Verifies and stores results; returns (accepted, rejected with reasons). Flushes once.
    pub fn complete(
        &self,
        worker: &str,
        results: &[Completion],
    ) -> Result<(u32, Vec<(u64, String)>), Error> {
        let _op = self.op()?;
        let mut accepted = 0;
        let mut rejected = Vec::new();
        let mut done = Vec::with_capacity(results.len());
        // a concurrent change of the record (a heartbeat raising the lower bound) makes the
        // compare-and-swap fail: read again and retry, a few times
        let mut pending: Vec<&Completion> = results.iter().collect();
        // the modes of the batches concerned, read under the lock once (and which of them
        // keep only the lengths of their results), and the positions the jobs' leases made
        // (a job's position never changes: see `Lease::cube`)
        let (modes, histogram_only, leased, identity, confirm, standing, held, seeds) = {
            let st = self.lock();
            let identity = st
                .workers
                .get(worker)
                .map_or_else(|| worker.to_string(), |w| w.identity.clone());
            let (mut modes, mut keeps) = (FastMap::default(), FastMap::default());
            let mut confirm = FastMap::default();
            let mut leased: FastMap<u64, CubieCube> = FastMap::default();
            let mut standing: FastMap<u64, (Phase, Actor)> = FastMap::default();
            let mut held: FastMap<u64, Held> = FastMap::default();
            let mut seeds: FastMap<u64, [u8; SEED_BYTES]> = FastMap::default();
            leased.reserve(results.len());
            for c in results {
                let seq = batch_seq(c.job_id);
                modes.entry(seq).or_insert_with(|| st.mode(seq));
                keeps
                    .entry(seq)
                    .or_insert_with(|| st.batches.get(&seq).is_some_and(|b| b.keep_histogram));
                confirm
                    .entry(seq)
                    .or_insert_with(|| st.batches.get(&seq).is_some_and(|b| b.confirm >= 2));
                let stands = st.standing(c.job_id, worker);
                standing.insert(c.job_id, stands);
                if stands.1 == Actor::Holder {
                    if let Some(l) = st.leases.get(&c.job_id) {
                        held.insert(c.job_id, (self.clock.since(l.since), l.spot_seed));
                        if let Some(seed) = l.seed {
                            seeds.insert(c.job_id, seed);
                        }
                        if let Some(cube) = l.cube {
                            leased.insert(c.job_id, cube);
                        }
                    }
                }
            }
            (
                modes, keeps, leased, identity, confirm, standing, held, seeds,
            )
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
                let stands = standing[&c.job_id];
                let leased = (
                    leased.get(&c.job_id),
                    held.get(&c.job_id).copied(),
                    seeds.get(&c.job_id),
                );
                match self.complete_one(worker, &identity, c, old, stands, leased, mode)? {
                    // a verified result always has the record it was checked against
                    Completed::Verified(mut v) => {
                        if confirm[&batch_seq(c.job_id)] && v.claim {
                            match self.confirm(worker, c.job_id, &v)? {
                                Some(names) => v.confirmed_by = names,
                                None => {
                                    // held until a worker of another credential agrees
                                    accepted += 1;
                                    continue;
                                }
                            }
                        }
                        if histogram_only[&batch_seq(c.job_id)] {
                            // verified above; the batch keeps the length only
                            v.solution.clear();
                            v.solutions.clear();
                        }
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
            let mkeys: FastMap<u32, Option<Vec<u8>>> =
                modes.iter().map(|(&seq, m)| (seq, index_key(m))).collect();
            let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
            for (id, new) in &done {
                if let Some(Some(mkey)) = mkeys.get(&batch_seq(*id)) {
                    index.add(*id, new, mkey);
                }
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
            // the job left `leased` when it held a lease, else `queued` (a late result of its
            // last holder); only a search the coordinator saw run counts in the search times
            // (the queued-work estimate and the autoscaling signal), never longer than it saw
            let from = if let Some(lease) = st.unlease(id) {
                let seen = self.clock.since(lease.since).as_secs_f64() * 1000.0;
                let millis = new.r().millis.min(seen);
                st.solve_times.observe(millis);
                st.batch(batch_seq(id)).search.observe(millis / 1000.0);
                JobState::Leased
            } else {
                st.ready.remove(id);
                st.returned.remove(&id);
                JobState::Queued
            };
            st.count(id, from, JobState::Done);
            st.rejections.remove(&id);
            st.record_length(id, new.r());
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
    /// record, as read, is `job`; `stands` is how the job and `worker` stand in memory (its
    /// phase there, and `worker`'s relation to it), and `leased` the job's position as the
    /// worker's lease made it from the record (None without a lease: made here from `job`),
    /// how long the coordinator saw the lease held with the seed of its spot check (None
    /// without a lease) and, of a coset job, the sample seed drawn at the lease (None without
    /// one: such a result is refused).
    /// What may happen is the state machine's ([`decide`]); nothing is verified for a worker
    /// that may not report on the job.
    #[allow(clippy::too_many_arguments)]
    fn complete_one(
        &self,
        worker: &str,
        identity: &str,
        c: &Completion,
        job: Option<&JobRecord>,
        stands: (Phase, Actor),
        (leased, held, seed): (Option<&CubieCube>, Option<Held>, Option<&[u8; SEED_BYTES]>),
        mode: &Mode,
    ) -> Result<Completed, Error> {
        let Some(job) = job else {
            return Ok(Completed::Rejected("no such job".into()));
        };
        let phase = phase_of(job, stands.0);
        let finished = job.state().is_finished();
        let actor = if finished && !job.r().session.is_empty() && job.r().session == worker {
            Actor::Answerer
        } else {
            stands.1
        };
        let event = if c.reported() == Some(ResultStatus::Cancelled) {
            Event::GiveUp
        } else {
            Event::Answer
        };
        // who may not report on the job is refused before anything is verified
        match decide(phase, event, actor) {
            Err(why) => {
                tracing::debug!(worker, job = c.job_id, %why, "report refused");
                return Ok(Completed::Rejected(why.reason().into()));
            }
            Ok(Next::Repeat) => return Ok(Completed::Before), // reported before: harmless
            Ok(Next::Requeue) => {
                self.requeue_from(c.job_id, Some(worker), "worker gave it up")?;
                return Ok(Completed::GivenUp);
            }
            Ok(_) => {}
        }
        let question = question_of(mode);
        if question.is_coset() {
            return self.complete_coset(
                worker,
                identity,
                c,
                job,
                (phase, actor),
                seed,
                leased,
                &question,
            );
        }
        let checked = match leased.copied().or_else(|| job.cube()) {
            Some(cube) => verify(
                &cube,
                // a bound counts only for the session that proved it
                job.bound_of(worker),
                || known_length(&cube, &job.r().input, &question_of(mode)),
                mode,
                c,
                held.map_or(0, |(_, seed)| seed),
            ),
            None => Err("the job has no valid position".into()),
        }
        .and_then(|ch| possible_timeout(&ch, mode, held.map(|(h, _)| h)).map(|()| ch));
        match checked {
            Err(reason) => {
                let reason = cut(&reason, MAX_REASON);
                tracing::warn!(worker, job = c.job_id, ?reason, "result rejected");
                if decide(phase, Event::Wrong, actor) == Ok(Next::Count) {
                    self.refuse(c.job_id, worker, &reason)?;
                }
                Ok(Completed::Rejected(reason))
            }
            Ok(checked) => {
                let claim = is_claim(&checked, c.optimal);
                let event = if claim { Event::Claim } else { Event::Answer };
                match decide(phase, event, actor) {
                    Ok(Next::Store | Next::Claim) => {}
                    Ok(_) => return Ok(Completed::Before),
                    Err(why) => return Ok(Completed::Rejected(why.reason().into())),
                }
                let Checked {
                    status,
                    length,
                    solution,
                    lower_bound,
                    reason,
                    solutions,
                    count,
                } = checked;
                Ok(Completed::Verified(Verified {
                    status,
                    solution,
                    length,
                    optimal: c.optimal,
                    lower_bound,
                    nodes: c.nodes,
                    millis: c.millis,
                    worker: identity.to_string(),
                    session: worker.to_string(),
                    confirmed_by: Vec::new(),
                    claim,
                    reason,
                    solutions,
                    count,
                    coset: None,
                }))
            }
        }
    }

    /// [`Core::complete_one`] for a coset job, once the state machine let `worker` report on
    /// it: verified against the sample seed of the lease ([`crate::coset::verify_coset`]);
    /// every coset result is a claim (its counts are not checked in full). Without a seed (the
    /// lease expired, or the coordinator restarted since) it is refused, without counting:
    /// nothing names the positions it must answer for, and the job is leased again.
    #[allow(clippy::too_many_arguments)]
    fn complete_coset(
        &self,
        worker: &str,
        identity: &str,
        c: &Completion,
        job: &JobRecord,
        (phase, actor): (Phase, Actor),
        seed: Option<&[u8; SEED_BYTES]>,
        leased: Option<&CubieCube>,
        question: &cubefleet_proto::question::Question,
    ) -> Result<Completed, Error> {
        let Some(seed) = seed else {
            return Ok(Completed::Rejected(
                "no lease of this session holds the coset's sample seed (it ended); the \
                 coset is leased again"
                    .into(),
            ));
        };
        let checked = match leased.copied().or_else(|| job.cube()) {
            Some(cube) => crate::coset::verify_coset(&cube, seed, question, c),
            None => Err("the job has no valid position".into()),
        };
        match checked {
            Err(reason) => {
                let reason = cut(&reason, MAX_REASON);
                tracing::warn!(worker, job = c.job_id, ?reason, "coset result rejected");
                if decide(phase, Event::Wrong, actor) == Ok(Next::Count) {
                    self.refuse(c.job_id, worker, &reason)?;
                }
                Ok(Completed::Rejected(reason))
            }
            Ok(counts) => match decide(phase, Event::Claim, actor) {
                Ok(Next::Store | Next::Claim) => Ok(Completed::Verified(Verified {
                    status: ResultStatus::Solved,
                    solution: String::new(),
                    length: 0,
                    optimal: false,
                    lower_bound: 0,
                    nodes: c.nodes,
                    millis: c.millis,
                    worker: identity.to_string(),
                    session: worker.to_string(),
                    confirmed_by: Vec::new(),
                    claim: true,
                    reason: String::new(),
                    solutions: Vec::new(),
                    count: 0,
                    coset: Some(Box::new(counts)),
                })),
                Ok(_) => Ok(Completed::Before),
                Err(why) => Ok(Completed::Rejected(why.reason().into())),
            },
        }
    }

    /// Holds the claim `v` of `worker` on job `id` (of a batch with `confirm` 2) until a
    /// worker of another credential makes the same claim ([`agrees`]): then the names
    /// of the two workers, and the answer is final. Until then the job goes back to the queue,
    /// for a credential that has not claimed it yet ([`Core::lease`] passes it over for the
    /// others); two claims that differ are a disagreement, settled by a third credential's.
    fn confirm(&self, worker: &str, id: u64, v: &Verified) -> Result<Option<Vec<String>>, Error> {
        {
            let mut st = self.lock();
            let (credential, identity) = match st.workers.get(worker) {
                Some(w) => (w.credential.clone(), w.identity.clone()),
                None => (Arc::from("anonymous"), worker.to_string()),
            };
            let claims = st.pending.entry(id).or_default();
            if !claims.iter().any(|c| c.credential == credential) {
                let same = claims.iter().find(|c| agrees(c, v));
                if let Some(first) = same {
                    let names = vec![first.identity.clone(), identity];
                    st.pending.remove(&id);
                    return Ok(Some(names));
                }
                let disagrees = !claims.is_empty();
                claims.push(Claim {
                    credential,
                    identity,
                    status: v.status,
                    length: v.length,
                    solutions: v.solutions.clone(),
                    count: v.count,
                    coset: coset_claim(v),
                });
                if disagrees {
                    st.counters.disagreements += 1;
                    st.batch(batch_seq(id)).disagreements += 1;
                }
            }
        }
        self.requeue_from(id, Some(worker), "claim waiting for confirmation")?;
        Ok(None)
    }

    /// Counts a refused result of job `id` from `worker` (or a job it handed back as not
    /// runnable), with `reason` (already cut to its limit): only the lease holder's refusals
    /// count, another peer cannot wear a job down. The job goes back to the queue, or ends
    /// `failed` once [`MAX_REJECTIONS`] refusals came from workers of two credentials (of one,
    /// when only one worker credential has live sessions).
    pub(super) fn refuse(&self, id: u64, worker: &str, reason: &str) -> Result<(), Error> {
        let failed = {
            let mut st = self.lock();
            st.counters.rejected += 1;
            let live: HashSet<Arc<str>> =
                st.workers.values().map(|w| w.credential.clone()).collect();
            let credential = st.workers.get_mut(worker).map(|w| {
                w.rejected += 1;
                w.credential.clone()
            });
            let holds = st.leases.get(&id).is_some_and(|l| *l.worker == *worker);
            match credential.filter(|_| holds) {
                Some(credential) => {
                    let reasons = st.rejections.entry(id).or_default();
                    reasons.push((credential, reason.to_string()));
                    if reasons.len() > KEPT_REASONS {
                        reasons.remove(0);
                    }
                    let from: HashSet<&Arc<str>> = reasons.iter().map(|(c, _)| c).collect();
                    if reasons.len() >= MAX_REJECTIONS && from.len() >= live.len().clamp(1, 2) {
                        st.rejections.remove(&id)
                    } else {
                        None
                    }
                }
                None => None,
            }
        };
        match failed {
            Some(reasons) => self.fail(id, worker, &reasons),
            None => self.requeue_from(id, Some(worker), "result rejected"),
        }
    }

    /// Ends job `id`, leased by `worker`, as failed with the `reasons` its results were
    /// rejected for (nothing when the lease is no longer the worker's, or the job finished
    /// meanwhile).
    fn fail(&self, id: u64, worker: &str, reasons: &[(Arc<str>, String)]) -> Result<(), Error> {
        let _op = self.op()?;
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
            r.set_outcome(ResultStatus::Failed);
            // a failure rests on its refusers: a claim of theirs that `revoke` undoes
            r.claimed = true;
            r.worker = st
                .workers
                .get(worker)
                .map_or_else(|| worker.to_string(), |w| w.identity.to_string());
            r.session = worker.to_string();
            let mut by: Vec<String> = reasons.iter().map(|(c, _)| c.to_string()).collect();
            by.sort();
            by.dedup();
            r.confirmed_by = by;
            r.error = format!(
                "results rejected {} times: {}; check the workers' versions and logs, then \
                 submit the line again",
                reasons.len(),
                reasons
                    .iter()
                    .map(|(_, r)| r.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            if self.store.cas_job(id, &job, &new)? {
                st.unlease(id);
                st.count(id, JobState::Leased, JobState::Failed);
                drop(st);
                tracing::warn!(job = id, worker, reasons = reasons.len(), "job failed");
                if self.followed() {
                    self.send_followers(batch_seq(id), [(id, new)]);
                }
                Self::bump(&self.finished);
                return Ok(());
            }
        }
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

    /// True while some batch has a follower.
    pub(super) fn followed(&self) -> bool {
        !self
            .followers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Sends the finished jobs among `jobs` to the follower of their batch (all of one batch,
    /// `seq`), moving them: without a follower nothing is converted. Never waits: a follower
    /// whose channel is full is dropped (it reads the store from then on, see [`Core::follow`]).
    pub(super) fn send_followers(
        &self,
        seq: u32,
        jobs: impl IntoIterator<Item = (u64, JobRecord)>,
    ) {
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
}
