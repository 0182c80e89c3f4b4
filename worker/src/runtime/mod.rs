//! The worker runtime: lease jobs from a coordinator, run them on the search pool, heartbeat,
//! report results in groups, and drain on shutdown.
//!
//! The runtime talks to the coordinator through the [`Coordinator`] trait, so the loop is the
//! same over gRPC (`cubefleet worker`) and in one process (`cubefleet run`). Invariants:
//! - the first leases are small and grow geometrically (`policy::first_leases`);
//! - the jobs held at once are about [`HELD_WORK`] of search per thread (at least two jobs per
//!   thread, at most [`MAX_HELD`]), estimated from the mean time of the jobs finished so far:
//!   enough that fast jobs (a fraction of a millisecond each) are leased and reported in large
//!   groups, few enough that a dying worker strands little work;
//! - results are reported in groups of half the capacity, smaller ones once the work held is
//!   less than that (the end of a batch: half of what is held), and at least every
//!   `report_every`;
//! - a worker with work in hand never waits for the coordinator: the next lease is fetched, and
//!   results are reported, by calls in flight beside the searches (at most one lease and one
//!   report at a time), so a coordinator a round trip away costs no search time; only an idle
//!   worker waits for its lease (a long poll);
//! - the search threads wake the runtime only when a group is complete or enough jobs finished
//!   to lease again, not once per job;
//! - an empty lease while work is in hand is not repeated before the next report tick;
//! - a result is forgotten only after the coordinator acknowledged it (a failed report is
//!   retried; reporting twice is harmless on the coordinator's side);
//! - on shutdown no new job is leased; running jobs get `grace` to finish, then they are
//!   cancelled and handed back with [`Coordinator::release`].
//!
//! [`run`] steps a `Worker` through its loop, one method per step: `lease` (a lease beside
//! the searches, or an idle worker's long poll), then `wait` for the next event (jobs
//! finished, a report or a lease answered, a report or heartbeat tick, shutdown), each
//! handled by a method of its own (`absorb`, `start_report`, `reported`, `take_in`,
//! `heartbeat`); `drain` at the end. The progress of the jobs held, which heartbeats report
//! and a release hands back, is built in one place (`held_progress`).
//!
//! Files: `interface` (the trait, the configuration, the counts), `policy` (capacity, lease
//! and report sizes, backoff), `worker` (the loop).

mod interface;
mod policy;
mod worker;

pub use interface::{
    Coordinator, HeartbeatReply, RuntimeConfig, WorkerStats, DEFAULT_GRACE, DEFAULT_HEARTBEAT,
    DEFAULT_REPORT_EVERY,
};
pub use policy::{Backoff, HELD_WORK, IDLE_LEASE_WAIT, IDLE_PAUSE, MAX_HELD};
pub use worker::run;
