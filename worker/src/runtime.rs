//! The worker runtime: lease jobs from a coordinator, run them on the search pool, heartbeat,
//! report results in groups, and drain on shutdown.
//!
//! The runtime talks to the coordinator through the [`Coordinator`] trait, so the loop is the
//! same over gRPC (`cubefleet worker`) and in one process (`cubefleet run`). Invariants:
//! - the first leases are small and grow geometrically ([`first_leases`]);
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

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use cubefleet_tables::Tables;
use tokio::task::{JoinError, JoinHandle};
use tokio_util::sync::CancellationToken;

use crate::pool::{lock, Finished, Job, JobMap, Pool};
use crate::search::Progress;

/// What the coordinator answers to a heartbeat.
#[derive(Clone, Debug, Default)]
pub struct HeartbeatReply {
    /// Jobs to stop (their batch was cancelled, or the lease was lost).
    pub cancel: Vec<u64>,
}

/// The coordinator as a worker sees it. Errors are transient (the runtime retries with backoff).
pub trait Coordinator: Send + Sync + 'static {
    /// The error of a call.
    type Error: std::fmt::Display + Send;
    /// Leases up to `max` jobs; when none is queued, waits up to `wait` for one (a long poll)
    /// before answering with none.
    fn lease(
        &self,
        max: u32,
        wait: Duration,
    ) -> impl Future<Output = Result<Vec<Job>, Self::Error>> + Send;
    /// Extends the leases of the held jobs and reports their progress.
    fn heartbeat(
        &self,
        held: Vec<(u64, Progress)>,
    ) -> impl Future<Output = Result<HeartbeatReply, Self::Error>> + Send;
    /// Reports finished jobs (borrowed: the runtime keeps them to report again if this fails).
    fn complete<'a>(
        &'a self,
        results: &'a [Finished],
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'a;
    /// Hands jobs back unfinished (with their progress).
    fn release(
        &self,
        jobs: Vec<(u64, Progress)>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

/// How a worker runs.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// Search threads.
    pub threads: usize,
    /// Time between heartbeats (well under the lease duration).
    pub heartbeat: Duration,
    /// Longest time results wait before they are reported as a group.
    pub report_every: Duration,
    /// Time running jobs get to finish after shutdown is asked for.
    pub grace: Duration,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            heartbeat: Duration::from_secs(5),
            report_every: Duration::from_millis(100),
            grace: Duration::from_secs(30),
        }
    }
}

/// Counts of what a worker did, returned when it stops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// Jobs leased.
    pub leased: u64,
    /// Results reported and acknowledged.
    pub completed: u64,
    /// Jobs handed back unfinished.
    pub released: u64,
    /// Searches that panicked (each job reported as given up, so it went back to the queue).
    pub search_panics: u64,
}

/// Search time per thread a worker aims to hold in leased jobs.
pub const HELD_WORK: Duration = Duration::from_secs(2);

/// How long an idle worker's lease waits for jobs to be queued (a long poll, so that new work
/// starts at once instead of at the next poll).
pub const IDLE_LEASE_WAIT: Duration = Duration::from_secs(5);

/// Most jobs a worker holds at once.
pub const MAX_HELD: usize = 4000;

/// How many jobs to hold: [`HELD_WORK`] per thread at the mean job time `mean` (seconds), at
/// least two per thread, at most [`MAX_HELD`]. Before any job finished, two per thread.
fn capacity(threads: usize, mean: Option<f64>) -> usize {
    let floor = 2 * threads.max(1);
    match mean {
        Some(m) if m > 0.0 => {
            let want = threads.max(1) as f64 * HELD_WORK.as_secs_f64() / m;
            (want as usize).clamp(floor, MAX_HELD.max(floor))
        }
        _ => floor,
    }
}

/// Exponential backoff with jitter, for calls to an unreachable coordinator: waits of 100 ms
/// doubling up to 10 s, each with +-25 % jitter so that many workers do not retry in step.
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    /// A backoff whose next wait is the first one.
    fn default() -> Self {
        Backoff { next: Self::FIRST }
    }
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(100);
    const MAX: Duration = Duration::from_secs(10);

    /// Back to the first wait (after a call succeeded).
    pub fn reset(&mut self) {
        self.next = Self::FIRST;
    }

    /// The next wait: doubling up to 10 s, with +-25 % jitter.
    pub fn step(&mut self) -> Duration {
        let base = self.next;
        self.next = (self.next * 2).min(Self::MAX);
        let jitter = rand::random_range(0.75..1.25);
        base.mul_f64(jitter)
    }
}

/// Where the search threads leave finished jobs for the runtime. The runtime is woken only when
/// the jobs waiting reach the number it asked for ([`Mailbox::wake_at`]): with fast jobs (a
/// fraction of a millisecond) a wake-up per job would cost the searches a context switch each.
/// A wake-up is never lost: [`tokio::sync::Notify`] keeps one for a runtime not yet waiting.
#[derive(Default)]
struct Mailbox {
    jobs: std::sync::Mutex<Vec<Finished>>,
    /// Wake the runtime when this many jobs wait (at least 1).
    wake_at: std::sync::atomic::AtomicUsize,
    wake: tokio::sync::Notify,
}

impl Mailbox {
    /// Called by a search thread.
    fn put(&self, f: Finished) {
        let waiting = {
            let mut jobs = lock(&self.jobs);
            jobs.push(f);
            jobs.len()
        };
        if waiting >= self.wake_at.load(std::sync::atomic::Ordering::Acquire) {
            self.wake.notify_one();
        }
    }

    /// Asks to be woken once `n` jobs (at least 1) wait; wakes at once if they already do.
    fn wake_at(&self, n: usize) {
        let n = n.max(1);
        self.wake_at.store(n, std::sync::atomic::Ordering::Release);
        if lock(&self.jobs).len() >= n {
            self.wake.notify_one();
        }
    }

    /// Everything waiting. What waits next starts in room for as many (the groups are alike),
    /// so the search threads do not grow it step by step.
    fn take(&self) -> Vec<Finished> {
        let mut jobs = lock(&self.jobs);
        let room = Vec::with_capacity(jobs.len());
        std::mem::replace(&mut *jobs, room)
    }
}

/// Runs a worker until `shutdown` is cancelled, then drains. Returns what it did.
pub async fn run<C: Coordinator>(
    coordinator: Arc<C>,
    tables: Arc<Tables>,
    config: RuntimeConfig,
    shutdown: CancellationToken,
) -> WorkerStats {
    let mailbox = Arc::new(Mailbox::default());
    let pool = {
        let mailbox = mailbox.clone();
        Pool::new(tables, config.threads, move |f| mailbox.put(f))
    };
    // mean search time of finished jobs (seconds, exponentially weighted)
    let mut mean_job: Option<f64> = None;
    let mut stats = WorkerStats::default();
    // jobs held: id -> start lower bound (for release)
    let mut held: JobMap<u32> = JobMap::default();
    let mut unreported: Vec<Finished> = Vec::new();
    let mut backoff = Backoff::default();
    // the first heartbeat one period after the start (the leases are fresh until then)
    let mut heartbeat = tokio::time::interval_at(
        tokio::time::Instant::now() + config.heartbeat,
        config.heartbeat,
    );
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut report = tokio::time::interval(config.report_every);
    report.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // the coordinator had nothing to lease at the last try: a worker with work in hand asks
    // again only after the next report tick (not once per finished job)
    let mut drained = false;
    // the lease and the report in flight while the searches go on (at most one of each)
    let mut leasing: Option<JoinHandle<Result<Vec<Job>, C::Error>>> = None;
    let mut reporting: Option<Reporting<C>> = None;

    loop {
        // lease when the jobs held fall to half the capacity (or none are held), in one group
        let capacity = capacity(config.threads, mean_job);
        let room = capacity
            .saturating_sub(held.len())
            .min(first_leases(config.threads, stats.leased)) as u32;
        let lease_now = held.is_empty() || (held.len() <= capacity / 2 && !drained);
        if lease_now && !held.is_empty() && leasing.is_none() && !shutdown.is_cancelled() {
            // work in hand: the next lease is fetched while it is searched (taken in below)
            let c = coordinator.clone();
            leasing = Some(tokio::spawn(
                async move { c.lease(room, Duration::ZERO).await },
            ));
        } else if held.is_empty() && !shutdown.is_cancelled() {
            // an idle worker long-polls, after reporting everything finished
            let wait = {
                settle(&mut reporting, &mut unreported, &mut stats).await;
                flush(&*coordinator, &mut unreported, &mut stats).await;
                if unreported.is_empty() {
                    IDLE_LEASE_WAIT
                } else {
                    Duration::ZERO // the report failed: do not sit on the results
                }
            };
            let asked = tokio::time::Instant::now();
            // a lease already in flight answers first; a shutdown ends a long poll (a job
            // leased in that instant waits for its lease to expire)
            let in_flight = leasing.take();
            let leased = tokio::select! {
                r = async {
                    match in_flight {
                        Some(h) => joined(h.await),
                        None => coordinator.lease(room, wait).await,
                    }
                } => Some(r),
                _ = shutdown.cancelled() => None,
            };
            let Some(leased) = leased else {
                break;
            };
            match leased {
                Ok(jobs) => {
                    backoff.reset();
                    let got = take_in(jobs, &mut held, &pool, &mut stats);
                    drained = got == 0;
                    if got == 0 && held.is_empty() {
                        // nothing to do: report what is finished; if the coordinator answered
                        // at once (it does not long-poll), wait a little, unless told to stop
                        flush(&*coordinator, &mut unreported, &mut stats).await;
                        if asked.elapsed() < wait / 2 {
                            tokio::select! {
                                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                                _ = shutdown.cancelled() => {}
                            }
                        }
                        continue;
                    }
                }
                Err(e) => {
                    let wait = backoff.step();
                    tracing::warn!(error = %e, ?wait, "lease failed; retrying");
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = shutdown.cancelled() => {}
                    }
                }
            }
        }
        if shutdown.is_cancelled() {
            break;
        }
        let group = report_group(capacity, held.len());
        // be woken when the group is complete, or when enough jobs finished to lease again
        let until_group = group.saturating_sub(unreported.len());
        let until_lease = if drained {
            usize::MAX
        } else {
            held.len().saturating_sub(capacity / 2)
        };
        mailbox.wake_at(until_group.min(until_lease));
        tokio::select! {
            _ = mailbox.wake.notified() => {
                absorb(mailbox.take(), &mut held, &mut unreported, &mut mean_job);
                if unreported.len() >= report_group(capacity, held.len()) {
                    start_report(&coordinator, &mut reporting, &mut unreported);
                }
            }
            _ = report.tick() => {
                drained = false;
                absorb(mailbox.take(), &mut held, &mut unreported, &mut mean_job);
                start_report(&coordinator, &mut reporting, &mut unreported);
            }
            r = async { reporting.as_mut().expect("guarded by is_some").await }, if reporting.is_some() => {
                reporting = None;
                // a failed report is tried again at the next report tick, not at once: an
                // unreachable coordinator refuses at once, and would be asked in a busy loop
                let acknowledged = reported(r, &mut unreported, &mut stats);
                if acknowledged && unreported.len() >= report_group(capacity, held.len()) {
                    start_report(&coordinator, &mut reporting, &mut unreported);
                }
            }
            r = async { leasing.as_mut().expect("guarded by is_some").await }, if leasing.is_some() => {
                leasing = None;
                match joined(r) {
                    Ok(jobs) => {
                        backoff.reset();
                        drained = take_in(jobs, &mut held, &pool, &mut stats) == 0;
                    }
                    Err(e) => {
                        // asked again after the next report tick; the idle path backs off
                        tracing::warn!(error = %e, "lease failed; retrying");
                        drained = true;
                    }
                }
            }
            _ = heartbeat.tick() => {
                let progress = pool.progress();
                let list = held
                    .iter()
                    .map(|(&id, &lb)| (id, progress.get(&id).copied().unwrap_or(Progress { lower_bound: lb, nodes: 0 })))
                    .collect();
                match coordinator.heartbeat(list).await {
                    Ok(reply) => {
                        for id in reply.cancel {
                            pool.cancel(id);
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "heartbeat failed"),
                }
            }
            _ = shutdown.cancelled() => {}
        }
    }

    // drain: finish within the grace period, then cancel and hand back the rest
    tracing::info!(held = held.len(), "shutting down: finishing held jobs");
    let deadline = tokio::time::Instant::now() + config.grace;
    mailbox.wake_at(1);
    loop {
        for f in mailbox.take() {
            held.remove(&f.id);
            if f.outcome.status != crate::search::Status::Cancelled {
                unreported.push(f);
            }
        }
        if held.is_empty()
            || tokio::time::timeout_at(deadline, mailbox.wake.notified())
                .await
                .is_err()
        {
            break;
        }
    }
    settle(&mut reporting, &mut unreported, &mut stats).await;
    flush(&*coordinator, &mut unreported, &mut stats).await;
    // a lease in flight at the shutdown: its jobs were never started, and go back at once
    if let Some(h) = leasing.take() {
        if let Ok(jobs) = joined(h.await) {
            stats.leased += jobs.len() as u64;
            held.extend(jobs.iter().map(|j| (j.id, j.start_lower_bound)));
        }
    }
    if !held.is_empty() {
        let progress = pool.progress();
        pool.cancel_all();
        let back: Vec<(u64, Progress)> = held
            .iter()
            .map(|(&id, &lb)| {
                (
                    id,
                    progress.get(&id).copied().unwrap_or(Progress {
                        lower_bound: lb,
                        nodes: 0,
                    }),
                )
            })
            .collect();
        stats.released += back.len() as u64;
        if let Err(e) = coordinator.release(back).await {
            tracing::warn!(error = %e, "release failed; the leases will expire instead");
        }
    }
    stats.search_panics = pool.panics();
    if stats.search_panics > 0 {
        tracing::error!(
            panics = stats.search_panics,
            "searches panicked during this run"
        );
    }
    tokio::task::spawn_blocking(move || pool.shutdown())
        .await
        .unwrap_or_default();
    stats
}

/// Most jobs one lease asks for once `leased` jobs were leased: two per thread at first, then
/// up to [`LEASE_GROWTH`] times the jobs leased so far. The threads start on a few jobs at
/// once instead of waiting while the first full group is read from the store, and the groups
/// grow to the capacity within a few leases.
fn first_leases(threads: usize, leased: u64) -> usize {
    let grown = usize::try_from(leased.saturating_mul(LEASE_GROWTH)).unwrap_or(usize::MAX);
    (2 * threads.max(1)).max(grown)
}

/// How fast the leases of a starting worker grow ([`first_leases`]).
const LEASE_GROWTH: u64 = 4;

/// How many results are reported together: half the capacity, or half the jobs still held
/// when that is fewer (at least 1). When the queue runs dry the groups halve with the work
/// left, so the last one is a job or two: the threads do not finish long before the results
/// are reported.
fn report_group(capacity: usize, held: usize) -> usize {
    capacity.div_ceil(2).min(held.div_ceil(2).max(1))
}

/// Takes finished jobs in: they are no longer held, they wait to be reported, and their search
/// times update the exponentially weighted mean job time (seconds).
fn absorb(
    finished: Vec<Finished>,
    held: &mut JobMap<u32>,
    unreported: &mut Vec<Finished>,
    mean_job: &mut Option<f64>,
) {
    for f in finished {
        let secs = f.millis / 1000.0;
        *mean_job = Some(mean_job.map_or(secs, |m| 0.9 * m + 0.1 * secs));
        held.remove(&f.id);
        unreported.push(f);
    }
}

/// Takes a lease's jobs in: held, counted and handed to the search pool. Returns how many.
fn take_in(jobs: Vec<Job>, held: &mut JobMap<u32>, pool: &Pool, stats: &mut WorkerStats) -> usize {
    let got = jobs.len();
    for j in jobs {
        stats.leased += 1;
        held.insert(j.id, j.start_lower_bound);
        pool.submit(j);
    }
    got
}

/// A lease that ran as a task of its own. A task that panicked leased nothing the worker
/// knows of (whatever it leased expires at the coordinator): an empty lease.
fn joined<E>(r: Result<Result<Vec<Job>, E>, JoinError>) -> Result<Vec<Job>, E> {
    r.unwrap_or_else(|e| {
        tracing::error!(error = %e, "lease task failed");
        Ok(Vec::new())
    })
}

/// A report in flight: the task gives the results back with the answer, so that a failed
/// report keeps them for the next try.
type Report<E> = JoinHandle<(Vec<Finished>, Result<(), E>)>;

/// A report in flight to the coordinator `C`.
type Reporting<C> = Report<<C as Coordinator>::Error>;

/// Starts reporting the results waiting, as a task beside the searches; when a report is
/// already in flight they wait for the next one.
fn start_report<C: Coordinator>(
    c: &Arc<C>,
    reporting: &mut Option<Reporting<C>>,
    unreported: &mut Vec<Finished>,
) {
    if reporting.is_some() || unreported.is_empty() {
        return;
    }
    let group = std::mem::take(unreported);
    let c = c.clone();
    *reporting = Some(tokio::spawn(async move {
        let r = c.complete(&group).await;
        (group, r)
    }));
}

/// Takes a report's answer in: counted when acknowledged, else back in front of the results
/// waiting (a task that panicked lost its results: their leases expire and they are searched
/// again). True when the report was acknowledged.
fn reported<E: std::fmt::Display>(
    r: Result<(Vec<Finished>, Result<(), E>), JoinError>,
    unreported: &mut Vec<Finished>,
    stats: &mut WorkerStats,
) -> bool {
    match r {
        Ok((group, Ok(()))) => {
            stats.completed += group.len() as u64;
            true
        }
        Ok((group, Err(e))) => {
            tracing::warn!(error = %e, results = group.len(), "reporting results failed; will retry");
            unreported.splice(0..0, group);
            false
        }
        Err(e) => {
            tracing::error!(error = %e, "report task failed");
            false
        }
    }
}

/// Waits for the report in flight, if any, and takes its answer in.
async fn settle<E: std::fmt::Display>(
    reporting: &mut Option<Report<E>>,
    unreported: &mut Vec<Finished>,
    stats: &mut WorkerStats,
) {
    if let Some(h) = reporting.take() {
        reported(h.await, unreported, stats);
    }
}

/// Reports the results not yet acknowledged; keeps them for the next try on failure.
async fn flush<C: Coordinator>(c: &C, unreported: &mut Vec<Finished>, stats: &mut WorkerStats) {
    if unreported.is_empty() {
        return;
    }
    let n = unreported.len() as u64;
    match c.complete(unreported).await {
        Ok(()) => {
            stats.completed += n;
            unreported.clear();
        }
        Err(e) => tracing::warn!(error = %e, results = n, "reporting results failed; will retry"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_start_small_and_grow_geometrically() {
        // two threads: 4 jobs first, then four times the jobs leased so far
        let mut leased = 0u64;
        let mut sizes = Vec::new();
        while leased < 4000 {
            let n = first_leases(2, leased).min(capacity(2, Some(1e-4)));
            sizes.push(n);
            leased += n as u64;
        }
        assert_eq!(sizes[..4], [4, 16, 80, 400]);
        assert!(sizes.len() <= 7, "{sizes:?}");
    }

    #[test]
    fn report_groups_halve_with_the_work_held() {
        assert_eq!(report_group(4000, 4000), 2000);
        assert_eq!(report_group(4000, 1427), 714);
        assert_eq!(report_group(4000, 2), 1);
        assert_eq!(report_group(4000, 0), 1);
        assert_eq!(report_group(4, 4), 2);
    }
}
