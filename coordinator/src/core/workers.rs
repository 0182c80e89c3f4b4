//! The worker registry: the sessions that registered or called lately (touched by every
//! lease, heartbeat and completion), what each holds and did, the limit of jobs a session may
//! hold, and revocation.
//!
//! A session is known by its public id (`w` and 12 hex digits, see [`crate::session`]); its
//! secret token is checked at the boundary ([`Core::session`]) and never kept here. The
//! registry is memory only: a session from before a restart is listed again at its first
//! call (its token still names it). Sessions silent for three lease durations are pruned by
//! the lease sweeper ([`Core::prune_workers`]), so the registry stays as large as the fleet
//! that calls.
//!
//! A session's identity is its credential's name ([`crate::session::Session::identity`]);
//! revoked names (`security`) are refused from then on, across restarts.

use std::sync::Arc;

use cubefleet_proto::JobState;
use std::time::{Duration, Instant};

use super::state::State;
use super::Core;
use crate::credentials::Credential;
use crate::error::Error;
use crate::limits::{check_len, check_name, MAX_FINGERPRINT, MAX_THREADS, MAX_WORKER_NAME};
use crate::session::Session;

/// Most sessions of one credential the registry lists at once (more registrations are
/// refused until some fall silent): what one credential can make the coordinator remember.
pub const MAX_SESSIONS_PER_CREDENTIAL: usize = 4096;

/// Fewest jobs a session may hold per registered thread, whatever the search times: one
/// searched and one ready. Also what it may hold of a batch none of whose results came in
/// yet (its search time is unknown: it is not sized by another batch's).
pub const MIN_HELD_PER_THREAD: u64 = 2;

/// Search time per registered thread a session may hold, at the mean search time of the
/// batch a lease serves next ([`State::next_search_time`]): a few seconds, so that a slow
/// batch is spread over the fleet (a worker that joins later finds work queued) and the
/// queued-work signal counts what is not searched yet.
pub const HELD_WORK: Duration = Duration::from_secs(5);

/// Most jobs a session may hold per registered thread.
pub const MAX_HELD_PER_THREAD: u64 = 10_000;

/// A registered worker session.
#[derive(Clone, Debug)]
pub struct WorkerInfo {
    /// The worker's name (its `--name`, or host and process id).
    pub name: String,
    /// The name its answers carry and `revoke` takes (the credential's, when named).
    pub identity: String,
    /// The credential it registered with.
    pub credential: Arc<str>,
    /// Its search threads.
    pub threads: u32,
    /// Its table fingerprint.
    pub fingerprint: String,
    /// Results it had accepted.
    pub completed: u64,
    /// Results it had refused.
    pub rejected: u64,
    /// When it last called, on the core's clock ([`Core::clock`]; a
    /// [`crate::snapshot::Snapshot::ago`] says how long ago).
    pub last_seen: Instant,
    /// Jobs leased to it now.
    pub held: u64,
    /// When it last asked for work, on the core's clock (None: never since it was listed).
    pub asked: Option<Instant>,
    /// Whether it holds at most [`Core::max_held`] jobs: every session but those of workers
    /// in the coordinator's own process (`cubefleet run`), which are not held to it.
    pub capped: bool,
    /// The protocol revision it registered with: a job whose question needs a later one
    /// (`Question::needs_protocol`) is never leased to it ([`Core::lease`]).
    pub protocol: u32,
}

impl WorkerInfo {
    /// A session just seen (at `now`), holding nothing.
    pub fn new(session: &Session, fingerprint: String, now: Instant) -> WorkerInfo {
        WorkerInfo {
            name: session.name.clone(),
            identity: session.identity.clone(),
            credential: session.credential.clone(),
            threads: session.threads,
            fingerprint,
            completed: 0,
            rejected: 0,
            last_seen: now,
            held: 0,
            asked: None,
            capped: true,
            protocol: session.protocol,
        }
    }
}

impl Core {
    /// Registers a worker session for `credential` (checked: name, threads and fingerprint in
    /// range, the worker and credential not revoked, the credential below
    /// [`MAX_SESSIONS_PER_CREDENTIAL`] sessions), speaking protocol revision `protocol`: the
    /// session, its secret token, the lease.
    pub fn register_session(
        &self,
        credential: &Credential,
        name: &str,
        threads: u32,
        fingerprint: String,
        protocol: u32,
    ) -> Result<(Session, String, Duration), Error> {
        check_name("name", name, MAX_WORKER_NAME)?;
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(Error::InvalidArgument(format!(
                "threads is {threads}: give 1 to {MAX_THREADS}"
            )));
        }
        check_len("table_fingerprint", fingerprint.as_bytes(), MAX_FINGERPRINT)?;
        let (session, token) = self.session_key.issue(
            &credential.name,
            credential.names_workers(),
            name,
            threads,
            protocol,
        );
        let mut st = self.lock();
        self.admit(&mut st, &session, fingerprint)?;
        tracing::info!(worker = %session.id, name = %crate::logsafe::text(name), identity = %session.identity,
            credential = %credential.name, threads, "worker registered");
        Ok((session, token, self.lease_duration))
    }

    /// Registers a worker of this process (`cubefleet run`, tests): an unnamed session of the
    /// anonymous credential, speaking this build's protocol, never refused and not held to
    /// [`Core::max_held`]. Its public id, and the lease duration.
    pub fn register(&self, name: String, threads: u32, fingerprint: String) -> (String, Duration) {
        let anonymous = Credential::anonymous();
        let (session, _) = self.session_key.issue(
            &anonymous.name,
            false,
            &name,
            threads.clamp(1, MAX_THREADS),
            cubefleet_proto::PROTOCOL,
        );
        let info = WorkerInfo {
            capped: false,
            ..WorkerInfo::new(&session, fingerprint, self.clock.now())
        };
        self.lock().workers.insert(session.id.to_string(), info);
        (session.id.to_string(), self.lease_duration)
    }

    /// The session the token `token` names for `credential`, listed (again) in the registry:
    /// refused when the token is not one this coordinator made for this credential, or the
    /// worker or credential was revoked.
    pub fn session(&self, credential: &Credential, token: &str) -> Result<Session, Error> {
        let session =
            self.session_key
                .check(token, &credential.name, credential.names_workers())?;
        let mut st = self.lock();
        if let Some(w) = st.workers.get_mut(&*session.id) {
            w.last_seen = self.clock.now();
            return Ok(session);
        }
        self.admit(&mut st, &session, String::new())?;
        Ok(session)
    }

    /// Lists `session` in the registry, unless it or its credential is revoked or its
    /// credential has its most sessions listed.
    fn admit(&self, st: &mut State, session: &Session, fingerprint: String) -> Result<(), Error> {
        for name in [session.identity.as_str(), &*session.credential] {
            if self.is_revoked(name) {
                return Err(Error::PermissionDenied(format!("worker {name} is revoked")));
            }
        }
        let of_credential = st
            .workers
            .values()
            .filter(|w| w.credential == session.credential)
            .count();
        if of_credential >= MAX_SESSIONS_PER_CREDENTIAL {
            return Err(Error::Exhausted(format!(
                "credential {} has {MAX_SESSIONS_PER_CREDENTIAL} live sessions; register \
                 again once some have stopped",
                session.credential
            )));
        }
        st.workers.insert(
            session.id.to_string(),
            WorkerInfo::new(session, fingerprint, self.clock.now()),
        );
        Ok(())
    }

    /// Notes that `worker` called (a session not listed is left alone: only
    /// [`Core::session`] and the registrations list one).
    pub(super) fn touch(&self, st: &mut State, worker: &str) {
        if let Some(w) = st.workers.get_mut(worker) {
            w.last_seen = self.clock.now();
        }
    }

    /// Most jobs a session of `threads` threads may hold: what its threads search in
    /// [`HELD_WORK`] at the mean search time of the batch a lease serves next, at least
    /// [`MIN_HELD_PER_THREAD`] (all it may hold of a batch with no result yet) and at most
    /// [`MAX_HELD_PER_THREAD`] per thread.
    pub fn max_held(&self, threads: u32) -> u64 {
        self.max_held_in(&self.lock(), threads)
    }

    /// [`Core::max_held`] with the state already locked.
    pub(super) fn max_held_in(&self, st: &State, threads: u32) -> u64 {
        let per_thread = match st.next_search_time() {
            None => MIN_HELD_PER_THREAD,
            Some(t) if t > 0.0 => (HELD_WORK.as_secs_f64() / t)
                .ceil()
                .min(MAX_HELD_PER_THREAD as f64) as u64,
            Some(_) => MAX_HELD_PER_THREAD,
        };
        u64::from(threads.max(1)) * per_thread.clamp(MIN_HELD_PER_THREAD, MAX_HELD_PER_THREAD)
    }

    /// Forgets the sessions silent for three lease durations (all their leases have expired
    /// by then); a forgotten session that calls again is listed again. Run by the sweeper.
    /// Also forgets the last holders of returned jobs once their grace is over.
    pub fn prune_workers(&self) {
        let gone = 3 * self.lease_duration;
        let grace = self.lease_duration * super::machine::GRACE_LEASES;
        let now = self.clock.now();
        let mut st = self.lock();
        st.workers
            .retain(|_, w| now.saturating_duration_since(w.last_seen) <= gone);
        st.returned
            .retain(|_, (_, at)| now.saturating_duration_since(*at) <= grace);
    }

    /// Jobs the sessions of `credential` may still lease, all of them together: what one
    /// worker of at most [`MAX_THREADS`] threads may hold ([`Core::max_held_in`]), and, while
    /// workers of other credentials ask for work too (a lease within the last lease
    /// duration), no more than its fair share of the outstanding work (queued, leased, and
    /// lines of range and sample batches not made yet, divided by the credentials asking),
    /// less what they hold now; at exactly its share, one job more while any is queued. So
    /// registering more sessions never lets one credential hold more than its share and one
    /// job, a worker of another credential holding less finds work while any is queued, and
    /// a credential that does not ask reserves nothing.
    /// Sessions of this process (`run`) are not counted and not held to it.
    pub(super) fn credential_room(&self, st: &State, credential: &str) -> u64 {
        let (held, threads) = st
            .workers
            .values()
            .filter(|w| w.capped && &*w.credential == credential)
            .fold((0, 0u64), |(h, t), w| {
                (h + w.held, t + u64::from(w.threads))
            });
        let threads = threads.clamp(1, u64::from(MAX_THREADS)) as u32;
        let mut cap = self.max_held_in(st, threads);
        let now = self.clock.now();
        let live: std::collections::HashSet<&str> = st
            .workers
            .values()
            .filter(|w| w.capped)
            .filter(|w| {
                &*w.credential == credential
                    || w.asked
                        .is_some_and(|t| now.saturating_duration_since(t) <= self.lease_duration)
            })
            .map(|w| &*w.credential)
            .collect();
        if live.len() > 1 {
            let outstanding: u64 = st
                .batches
                .values()
                .filter(|b| !b.cancelled)
                .map(|b| {
                    b.counts[JobState::Queued as usize]
                        + b.counts[JobState::Leased as usize]
                        + b.unmade()
                })
                .sum();
            cap = cap.min(outstanding.div_ceil(live.len() as u64));
        }
        // at its share, a credential still takes one queued job more: a job waits less for a
        // credential that asked once and holds nothing, while another asks
        let queued = st.queued() > 0 || st.batches.values().any(|b| b.unmade() > 0);
        match cap.saturating_sub(held) {
            0 if queued && held <= cap => 1,
            room => room,
        }
    }

    /// Registered workers, by public session id.
    pub fn workers(&self) -> Vec<(String, WorkerInfo)> {
        let st = self.lock();
        let mut v: Vec<_> = st
            .workers
            .iter()
            .map(|(k, w)| (k.clone(), w.clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}
