//! What the coordinator must remember about credentials across restarts: the revoked names,
//! and the revocations whose pass over the jobs has not ended.
//!
//! Invariants:
//! - security state lives in the store's `meta` (key `revoked`) and in [`Security`], a lock
//!   of its own: the job state rebuilt at open ([`super::state::State`]) never holds it, so
//!   no rebuild can overwrite it; it is loaded after the job state;
//! - a revocation is stored and flushed (with its name among the *pending* ones) before its
//!   call changes anything else; the name leaves `pending` only after every answer resting on
//!   it was taken back and flushed. An open finds the revocations a crash cut short still
//!   pending and ends them before it serves, so nothing a revoked credential said survives a
//!   SIGKILL at any point of its revoke;
//! - what may be revoked is decided by the job state machine ([`super::machine::decide`]): a
//!   lease of the revoked credential ends, an answer resting on its claims (its own, one it
//!   confirmed, a failure its refusals made) is queued again; a verified answer stands;
//! - at most [`MAX_REVOKED`] names are kept: more revocations are refused.

use std::collections::HashSet;

use cubefleet_proto::{JobState, ResultStatus};
use prost::Message;

use super::machine::{decide, Actor, Event, Next, Phase};
use super::Core;
use crate::error::Error;
use crate::limits::{check_name, MAX_REVOKED, MAX_WORKER_NAME};
use crate::record::{batch_seq, JobRecord};
use crate::store::REVOKED_UNSWEPT_KEY;

/// The security state in memory: a copy of what `meta` holds, behind its own lock.
#[derive(Debug, Default)]
pub(super) struct Security {
    /// Revoked worker identities and credential names.
    pub(super) revoked: HashSet<String>,
    /// Revoked names whose pass over the jobs has not ended (ended at the next open).
    pub(super) pending: Vec<String>,
}

/// The revoked names as stored (in `meta`, key `revoked`).
#[derive(Clone, PartialEq, prost::Message)]
struct Revoked {
    /// Worker identities and credential names, refused from now on.
    #[prost(string, repeated, tag = "1")]
    names: Vec<String>,
    /// Those of `names` whose answers may not all have been taken back yet (store format 6;
    /// a store of version 5 has every name pending once, see `store::format`).
    #[prost(string, repeated, tag = "2")]
    pending: Vec<String>,
}

/// Key in the store's `meta` of the revoked names.
const REVOKED_KEY: &[u8] = b"revoked";

/// Who asks for a revocation, as the state machine sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Revoker {
    /// An admin credential, or the operator's `--token` (or anyone, without credentials).
    Admin,
    /// Any other credential.
    Other,
}

impl Core {
    /// Loads the security state from the store (after the job state: nothing rebuilt from
    /// the jobs touches it), and ends the revocations a crash cut short (after an upgrade
    /// from a store format before 6, every revocation once: see `store::format`).
    pub(super) fn load_security(&self) -> Result<(), Error> {
        let unswept = self
            .store
            .meta(REVOKED_UNSWEPT_KEY)?
            .is_some_and(|v| v == [1]);
        let Some(bytes) = self.store.meta(REVOKED_KEY)? else {
            return Ok(());
        };
        let stored = Revoked::decode(&bytes[..]).map_err(|e| {
            Error::Internal(format!(
                "the revoked names in the store (meta key `revoked`) do not decode ({e}): the \
                 store is damaged; restore it from a backup, or revoke the names again on a \
                 copy without that key"
            ))
        })?;
        let pending = if unswept {
            stored.names.clone()
        } else {
            stored.pending
        };
        {
            let mut sec = self.secure();
            sec.revoked = stored.names.into_iter().collect();
            sec.pending.clone_from(&pending);
        }
        for name in pending {
            tracing::warn!(worker = ?name, "ending a revocation a stop cut short");
            self.sweep(&name)?;
        }
        if unswept {
            self.store.put_meta(REVOKED_UNSWEPT_KEY, &[0])?;
            self.store.flush()?;
        }
        Ok(())
    }

    /// The security state, locked (a poisoned lock is taken over: it changes only after the
    /// store write it follows).
    pub(super) fn secure(&self) -> std::sync::MutexGuard<'_, Security> {
        self.security.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores the security state `sec` and flushes.
    pub(super) fn store_security(&self, sec: &Security) -> Result<(), Error> {
        let mut names: Vec<String> = sec.revoked.iter().cloned().collect();
        names.sort();
        let stored = Revoked {
            names,
            pending: sec.pending.clone(),
        };
        self.store.put_meta(REVOKED_KEY, &stored.encode_to_vec())?;
        self.store.flush()
    }

    /// Revokes `name` (a credential's name, which is its workers' identity; or, on a
    /// coordinator without credentials, a worker's `--name`) for `by`: refused unless the
    /// state machine lets `by` revoke. Stored and flushed as pending before anything else;
    /// then its sessions are dropped and their leases returned, every answer resting on its
    /// claims is queued again and taken out of the symmetry index, and the name stops being
    /// pending (flushed). Returns the jobs queued again.
    pub fn revoke(&self, name: &str, by: Revoker) -> Result<u64, Error> {
        let actor = match by {
            Revoker::Admin => Actor::Admin,
            Revoker::Other => Actor::Client,
        };
        if let Err(why) = decide(Phase::Claimed, Event::Revoke, actor) {
            return Err(Error::PermissionDenied(format!(
                "{why}: revoking needs an admin credential (--admin-token, a tokens file's \
                 `admin`, or --token)"
            )));
        }
        check_name("worker", name, MAX_WORKER_NAME)?;
        {
            let _op = self.op()?;
            let mut sec = self.secure();
            if !sec.revoked.contains(name) && sec.revoked.len() >= MAX_REVOKED {
                return Err(Error::Exhausted(format!(
                    "{MAX_REVOKED} names are revoked already: the most a store keeps"
                )));
            }
            sec.revoked.insert(name.to_string());
            if !sec.pending.iter().any(|p| p == name) {
                sec.pending.push(name.to_string());
            }
            self.store_security(&sec)?;
        }
        let requeued = self.sweep(name)?;
        tracing::warn!(worker = ?name, requeued, "worker revoked");
        Ok(requeued)
    }

    /// Takes back what rests on the revoked `name`: its sessions, their leases, the answers
    /// resting on its claims; then marks its revocation ended (flushed). Safe to run again.
    fn sweep(&self, name: &str) -> Result<u64, Error> {
        // its sessions go, and with them their leases
        let sessions: HashSet<String> = {
            let mut st = self.lock();
            let ids: HashSet<String> = st
                .workers
                .iter()
                .filter(|(_, w)| w.identity == name || &*w.credential == name)
                .map(|(id, _)| id.clone())
                .collect();
            st.workers.retain(|id, _| !ids.contains(id));
            // its claims waiting for confirmation confirm nothing
            for claims in st.pending.values_mut() {
                claims.retain(|c| c.identity != name && &*c.credential != name);
            }
            ids
        };
        let held: Vec<u64> = {
            let st = self.lock();
            st.leases
                .iter()
                .filter(|(_, l)| sessions.contains(&*l.worker))
                .map(|(&id, _)| id)
                .collect()
        };
        for id in held {
            if decide(Phase::Leased, Event::Revoke, Actor::Admin) == Ok(Next::Requeue) {
                self.requeue_from(id, None, "worker revoked")?;
            }
        }
        // the answers resting on its claims: found by a pass over the jobs
        let mut tainted = Vec::new();
        self.store.for_each_job(&mut |id, job: JobRecord| {
            if rests_on(&job, name)
                && decide(Phase::Claimed, Event::Revoke, Actor::Admin) == Ok(Next::Unanswer)
            {
                tainted.push((id, job));
            }
        })?;
        let mut requeued = HashSet::new();
        for (id, job) in tainted {
            if self.unanswer(id, &job)? {
                requeued.insert(id);
            }
        }
        self.store.flush()?;
        self.index
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .retain(|_, named| !requeued.contains(named));
        {
            let _op = self.op()?;
            let mut sec = self.secure();
            sec.pending.retain(|p| p != name);
            self.store_security(&sec)?;
        }
        Ok(requeued.len() as u64)
    }

    /// Whether `name` is revoked.
    pub fn is_revoked(&self, name: &str) -> bool {
        self.secure().revoked.contains(name)
    }

    /// Takes the answer of the finished job `id` (read as `job`) back: its record queued again
    /// without result or provenance (by compare-and-swap; false when it changed meanwhile),
    /// its counts and histogram moved back (the caller drops its slot in the symmetry index).
    pub(super) fn unanswer(&self, id: u64, job: &JobRecord) -> Result<bool, Error> {
        let _op = self.op()?;
        let mut new = job.clone();
        let was = job.state();
        let was_from_store = job.r().from_store;
        let r = new.r_mut();
        let had_length = r.has_length();
        let length = r.length;
        let coset = r.coset.take();
        r.state = JobState::Queued as i32;
        r.set_outcome(ResultStatus::Unspecified);
        r.solution.clear();
        r.error.clear();
        r.length = 0;
        r.optimal = false;
        r.lower_bound = 0;
        r.nodes = 0;
        r.millis = 0.0;
        r.from_store = false;
        r.worker.clear();
        r.session.clear();
        r.claimed = false;
        r.confirmed_by.clear();
        new.bound_session.clear();
        let mut st = self.lock();
        if !self.store.cas_job(id, job, &new)? {
            return Ok(false);
        }
        let seq = batch_seq(id);
        st.count(id, was, JobState::Queued);
        let priority = {
            let b = st.batch(seq);
            if had_length {
                if let Some(n) = b.histogram.get_mut(length as usize) {
                    *n = n.saturating_sub(1);
                }
            }
            if was_from_store {
                b.from_store = b.from_store.saturating_sub(1);
            }
            if let Some(c) = &coset {
                b.sum_coset(c, false);
            }
            b.priority
        };
        st.ready.requeue(id, priority);
        drop(st);
        Self::bump(&self.queued);
        Ok(true)
    }
}

/// Whether the finished job `job`'s answer rests on a claim of `name`: it is a claim (done or
/// failed, `claimed`) that `name` made, confirmed, or refused the job for.
fn rests_on(job: &JobRecord, name: &str) -> bool {
    let r = job.r();
    matches!(job.state(), JobState::Done | JobState::Failed)
        && r.claimed
        && (r.worker == name || r.confirmed_by.iter().any(|c| c == name))
}
