//! The job's life as one state machine: who may do what to a job, in which state.
//!
//! Every change of a job, whoever asks for it, is decided here first ([`decide`]): the job's
//! [`Phase`], the [`Event`] and how the [`Actor`] stands to the job go in; what happens
//! ([`Next`]) or the reason it is refused comes out. The parts of the core (`leases`,
//! `completion`, `cancel`, `workers`) read the facts, ask [`decide`], and only then apply what
//! it answered to the store and the state in memory; no path writes a job around it. The table
//! in ARCHITECTURE.md ("The job state machine") is [`table`]'s rendering of this function, and
//! a test holds the two equal.
//!
//! The rules, in words:
//! - only the session holding a job's lease may report on it, extend it or hand it back; the
//!   session whose lease expired may still report within [`GRACE_LEASES`] lease durations, as
//!   long as no other session leased the job since (a worker cut off briefly loses no work);
//!   anyone else's report changes nothing and is refused;
//! - a report is an *answer* only when it is a solution the coordinator verified and that
//!   meets the batch's question (within the target of a two-phase batch, within the depth of
//!   a depth-limited one, with no bound or optimality asserted); every other report (optimal,
//!   none within, a lower bound, timeout, over target) is a *claim*: stored with the worker
//!   that made it, final only once `confirm` credentials made the same one, and undone by
//!   `revoke` of any credential it rests on;
//! - a failed job rests on the refusals of its lease holders: it is a claim too;
//! - a batch is cancelled by the client that submitted it or an admin; revoking is an admin's.

use std::fmt;

/// How many lease durations after its lease expired a session may still report on the job
/// (when nobody leased it since): a late result is work not lost.
pub(crate) const GRACE_LEASES: u32 = 1;

/// A job's state as the rules see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Stored `queued`, no lease (possibly with claims waiting for agreement).
    Queued,
    /// Stored `queued`, leased in memory to one session.
    Leased,
    /// Stored `done` with an answer the coordinator verified in full.
    Answered,
    /// Stored `done` or `failed` resting on claims (`claimed`): its worker and `confirmed_by`.
    Claimed,
    /// Stored `invalid` or `cancelled`: the coordinator's own verdict, final.
    Closed,
}

/// What happens to a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A worker asks for work.
    Lease,
    /// A worker says it still searches (and what bound it proved).
    Heartbeat,
    /// A worker reports a verified solution that meets the batch's question.
    Answer,
    /// A worker reports something the coordinator cannot check in full.
    Claim,
    /// A worker reports something verification refuses.
    Wrong,
    /// A worker reports that it gave the job up (status `cancelled`).
    GiveUp,
    /// A worker hands the job back unfinished (draining).
    Release,
    /// A worker hands the job back as one it cannot run (with a reason).
    CannotRun,
    /// The lease's deadline passed (the sweeper).
    Expire,
    /// The job's batch is cancelled.
    Cancel,
    /// A credential the job's lease or answer rests on is revoked.
    Revoke,
}

/// How the one who acts stands to the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Actor {
    /// The worker session holding the job's lease.
    Holder,
    /// The session whose lease expired within the grace, with no lease since.
    LastHolder,
    /// The session whose answer or claim is stored.
    Answerer,
    /// Any other worker session (of any credential, the holder's included).
    Session,
    /// The client credential that submitted the job's batch.
    Owner,
    /// Another client credential.
    Client,
    /// An admin credential (or the operator's `--token`).
    Admin,
    /// The coordinator itself (the lease sweeper).
    Coordinator,
}

/// What [`decide`] lets happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// The job is leased to the actor.
    Lease,
    /// The lease is extended; a proven bound is stored with the session.
    Extend,
    /// The answer is stored: `done`, final.
    Store,
    /// The claim is recorded with its worker: `done` (claimed) once `confirm` credentials
    /// made the same claim, else held and the job queued for another credential.
    Claim,
    /// The report is refused and counted against the job: queued again, or `failed` after
    /// [`super::MAX_REJECTIONS`] refusals from two credentials.
    Count,
    /// Refused, not counted (a late holder's wrong report): the job stays where it is.
    Reject,
    /// The lease ends; the job is queued again.
    Requeue,
    /// The job ends `cancelled` (a leased one when its lease returns).
    Cancel,
    /// The answer is taken back: the job is queued again without it.
    Unanswer,
    /// The same report again (its acknowledgement was lost): accepted, nothing changes.
    Repeat,
}

/// Why [`decide`] refused: what the caller is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The actor holds no lease on the job.
    NotYours,
    /// The job is not waiting for work (leased, or finished).
    NotQueued,
    /// The job is finished.
    Finished,
    /// The actor may not do this at all.
    NotAllowed,
    /// The event does not apply to the job in this state (nothing to do).
    Nothing,
}

impl Refusal {
    /// The reason as a caller reads it.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Refusal::NotYours => "the job is not leased to this session",
            Refusal::NotQueued => "the job is not queued",
            Refusal::Finished => "the job is finished",
            Refusal::NotAllowed => "this credential may not do that",
            Refusal::Nothing => "nothing to do",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// The one rule of the job system: what `event` by `actor` does to a job in `phase`, or why
/// it is refused. Pure: the callers read the facts and apply the answer.
pub(crate) fn decide(phase: Phase, event: Event, actor: Actor) -> Result<Next, Refusal> {
    use Actor as A;
    use Event as E;
    use Phase as P;
    let worker = matches!(actor, A::Holder | A::LastHolder | A::Answerer | A::Session);
    // who sends an event at all: workers their calls, clients cancel, the clock expires
    let sends = match event {
        E::Expire => actor == A::Coordinator,
        E::Cancel => matches!(actor, A::Owner | A::Admin),
        E::Revoke => actor == A::Admin,
        _ => worker,
    };
    if !sends {
        return Err(Refusal::NotAllowed);
    }
    let report = matches!(event, E::Answer | E::Claim | E::Wrong | E::GiveUp);
    match (phase, event) {
        // work: only what is queued is leased, to any worker session
        (P::Queued, E::Lease) => Ok(Next::Lease),
        (_, E::Lease) => Err(Refusal::NotQueued),
        // the holder's lease: extended, reported on, handed back by it alone
        (P::Leased, E::Heartbeat) if actor == A::Holder => Ok(Next::Extend),
        (P::Leased, E::Answer) if actor == A::Holder => Ok(Next::Store),
        (P::Leased, E::Claim) if actor == A::Holder => Ok(Next::Claim),
        (P::Leased, E::Wrong | E::CannotRun) if actor == A::Holder => Ok(Next::Count),
        (P::Leased, E::GiveUp | E::Release) if actor == A::Holder => Ok(Next::Requeue),
        // a late report of the last holder, while nobody else leased the job
        (P::Queued, E::Answer) if actor == A::LastHolder => Ok(Next::Store),
        (P::Queued, E::Claim) if actor == A::LastHolder => Ok(Next::Claim),
        (P::Queued, E::Wrong) if actor == A::LastHolder => Ok(Next::Reject),
        // the answerer's report again, after a lost acknowledgement
        (P::Answered | P::Claimed, _) if report && actor == A::Answerer => Ok(Next::Repeat),
        (P::Answered | P::Claimed | P::Closed, _) if worker => Err(Refusal::Finished),
        (P::Queued | P::Leased, _) if worker => Err(Refusal::NotYours),
        // the coordinator's clock
        (P::Leased, E::Expire) => Ok(Next::Requeue),
        // a batch is cancelled by its owner or an admin; finished jobs stay as they are
        (P::Queued | P::Leased, E::Cancel) => Ok(Next::Cancel),
        (_, E::Cancel) => Err(Refusal::Finished),
        // revoking is an admin's: the revoked credential's lease ends, its claims are undone;
        // what the coordinator verified itself stands
        (P::Leased, E::Revoke) => Ok(Next::Requeue),
        (P::Claimed, E::Revoke) => Ok(Next::Unanswer),
        _ => Err(Refusal::Nothing),
    }
}

/// Every phase, event and actor, in the order the table lists them.
#[cfg(test)]
const PHASES: [Phase; 5] = [
    Phase::Queued,
    Phase::Leased,
    Phase::Answered,
    Phase::Claimed,
    Phase::Closed,
];
#[cfg(test)]
const EVENTS: [Event; 11] = [
    Event::Lease,
    Event::Heartbeat,
    Event::Answer,
    Event::Claim,
    Event::Wrong,
    Event::GiveUp,
    Event::Release,
    Event::CannotRun,
    Event::Expire,
    Event::Cancel,
    Event::Revoke,
];
#[cfg(test)]
const ACTORS: [Actor; 8] = [
    Actor::Holder,
    Actor::LastHolder,
    Actor::Answerer,
    Actor::Session,
    Actor::Owner,
    Actor::Client,
    Actor::Admin,
    Actor::Coordinator,
];

/// The word a table cell shows for an answer of [`decide`].
#[cfg(test)]
fn cell(d: Result<Next, Refusal>) -> String {
    match d {
        Ok(next) => format!("**{}**", format!("{next:?}").to_lowercase()),
        Err(Refusal::NotAllowed) => "no".into(),
        Err(Refusal::Nothing) => "-".into(),
        Err(Refusal::NotYours) => "not yours".into(),
        Err(Refusal::NotQueued) => "not queued".into(),
        Err(Refusal::Finished) => "finished".into(),
    }
}

/// [`decide`] as a Markdown table: a row per phase and event, a column per actor (the table
/// ARCHITECTURE.md shows, which a test holds equal to this).
#[cfg(test)]
pub(crate) fn table() -> String {
    let mut out = String::from("| state | event |");
    for a in ACTORS {
        out += &format!(" {} |", format!("{a:?}").to_lowercase());
    }
    out += "\n| --- | --- |";
    for _ in ACTORS {
        out += " --- |";
    }
    out.push('\n');
    for p in PHASES {
        for e in EVENTS {
            let cells: Vec<String> = ACTORS.iter().map(|&a| cell(decide(p, e, a))).collect();
            if cells.iter().all(|c| c == "no" || c == "-") {
                continue; // nobody may: left out (the table says so below it)
            }
            out += &format!(
                "| {} | {} | {} |\n",
                format!("{p:?}").to_lowercase(),
                format!("{e:?}").to_lowercase(),
                cells.join(" | ")
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_shows_the_table_the_code_decides_by() {
        let doc = include_str!("../../../ARCHITECTURE.md");
        let table = table();
        assert!(
            doc.contains(&table),
            "ARCHITECTURE.md's job state machine table differs from the code's; it is:\n{table}"
        );
    }

    #[test]
    fn only_the_holder_changes_a_leased_job_and_only_an_admin_revokes() {
        for e in EVENTS {
            for a in ACTORS {
                let d = decide(Phase::Leased, e, a);
                let changes = matches!(
                    d,
                    Ok(Next::Store | Next::Claim | Next::Count | Next::Requeue | Next::Extend)
                );
                if changes {
                    assert!(
                        a == Actor::Holder
                            || (e, a) == (Event::Expire, Actor::Coordinator)
                            || (e, a) == (Event::Revoke, Actor::Admin),
                        "{e:?} by {a:?} changes a leased job"
                    );
                }
            }
        }
        for p in PHASES {
            for a in ACTORS {
                if a != Actor::Admin {
                    assert!(decide(p, Event::Revoke, a).is_err(), "{p:?} {a:?}");
                }
                if !matches!(a, Actor::Owner | Actor::Admin) {
                    assert!(decide(p, Event::Cancel, a).is_err(), "{p:?} {a:?}");
                }
            }
            // nothing but a revoke takes an answer back, and only one resting on claims
            for e in EVENTS {
                for a in ACTORS {
                    let d = decide(Phase::Answered, e, a);
                    assert!(
                        !matches!(d, Ok(Next::Unanswer | Next::Store)),
                        "{e:?} {a:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn nobody_but_a_session_near_the_job_reports_on_it() {
        for p in PHASES {
            for e in [Event::Answer, Event::Claim, Event::Wrong, Event::GiveUp] {
                let d = decide(p, e, Actor::Session);
                assert!(d.is_err(), "{p:?} {e:?} by another session: {d:?}");
            }
        }
    }
}
