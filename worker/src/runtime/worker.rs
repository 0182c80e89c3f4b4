//! The worker's loop: [`run`] steps a [`Worker`] through it, one method per step (see the
//! module doc of [`super`]), and the [`Mailbox`] where the search threads leave finished jobs.

use std::sync::Arc;
use std::time::Duration;

use cubefleet_tables::Tables;
use tokio::task::{JoinError, JoinHandle};
use tokio::time::{Instant, Interval, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use super::interface::{Coordinator, RuntimeConfig, WorkerStats};
use super::policy::{
    capacity, first_leases, report_group, Backoff, IDLE_LEASE_WAIT, IDLE_PAUSE, MEAN_JOB_WEIGHT,
};
use crate::pool::{lock, Finished, Job, JobMap, Pool};
use cubefleet_search::{Progress, Status};

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
    let mut worker = Worker::new(coordinator, tables, config, shutdown);
    loop {
        // the capacity is read once per round: the steps of a round agree on it
        let capacity = worker.capacity();
        match worker.lease(capacity).await {
            Next::Stop => break,
            Next::Again => continue,
            Next::Wait => {}
        }
        if worker.shutdown.is_cancelled() {
            break;
        }
        worker.wait(capacity).await;
    }
    worker.drain().await
}

/// What [`Worker::lease`] leaves the loop of [`run`] to do.
enum Next {
    /// Wait for the next event ([`Worker::wait`]).
    Wait,
    /// Lease again at once (an idle worker whose lease came back empty).
    Again,
    /// Stop and drain (shutdown during a long poll).
    Stop,
}

/// What woke a waiting worker ([`Worker::next_event`]).
enum Event<E> {
    /// The search threads finished the jobs the worker asked to be woken for.
    Finished,
    /// The report interval ticked.
    ReportTick,
    /// The report in flight was answered.
    Reported(ReportAnswer<E>),
    /// The lease in flight was answered.
    Leased(Result<Vec<Job>, E>),
    /// The heartbeat interval ticked.
    HeartbeatTick,
    /// Shutdown was asked for.
    Shutdown,
}

/// A worker between the steps of [`run`]: what it holds, what waits to be reported, the calls
/// in flight and its timers.
struct Worker<C: Coordinator> {
    /// The coordinator it works for.
    coordinator: Arc<C>,
    /// How it runs.
    config: RuntimeConfig,
    /// Cancelled when the worker is to stop.
    shutdown: CancellationToken,
    /// Where the search threads leave finished jobs.
    mailbox: Arc<Mailbox>,
    /// The search threads.
    pool: Pool,
    /// Mean search time of finished jobs (seconds, exponentially weighted by
    /// [`MEAN_JOB_WEIGHT`]); None before the first.
    mean_job: Option<f64>,
    /// What it did so far.
    stats: WorkerStats,
    /// Jobs held: id -> start lower bound (their progress when they have none yet).
    held: JobMap<u32>,
    /// Finished jobs not yet acknowledged by the coordinator.
    unreported: Vec<Finished>,
    /// The wait before an idle worker's next lease after a failed one.
    backoff: Backoff,
    /// The coordinator had nothing to lease at the last try: a worker with work in hand asks
    /// again only after the next report tick (not once per finished job).
    drained: bool,
    /// The lease in flight while the searches go on (at most one).
    leasing: Option<Leasing<C>>,
    /// The report in flight while the searches go on (at most one).
    reporting: Option<Reporting<C>>,
    /// Heartbeat ticks, the first one period after the start (the leases are fresh until then).
    heartbeat: Interval,
    /// Report ticks: results wait at most this long.
    report: Interval,
}

impl<C: Coordinator> Worker<C> {
    /// A worker with its search threads started, holding nothing.
    fn new(
        coordinator: Arc<C>,
        tables: Arc<Tables>,
        config: RuntimeConfig,
        shutdown: CancellationToken,
    ) -> Worker<C> {
        let mailbox = Arc::new(Mailbox::default());
        let pool = {
            let mailbox = mailbox.clone();
            Pool::new(tables, config.threads, move |f| mailbox.put(f))
        };
        let mut heartbeat =
            tokio::time::interval_at(Instant::now() + config.heartbeat, config.heartbeat);
        heartbeat.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut report = tokio::time::interval(config.report_every);
        report.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Worker {
            coordinator,
            config,
            shutdown,
            mailbox,
            pool,
            mean_job: None,
            stats: WorkerStats::default(),
            held: JobMap::default(),
            unreported: Vec::new(),
            backoff: Backoff::default(),
            drained: false,
            leasing: None,
            reporting: None,
            heartbeat,
            report,
        }
    }

    /// How many jobs to hold now ([`capacity`]).
    fn capacity(&self) -> usize {
        capacity(self.config.threads, self.mean_job)
    }

    /// The lease step: when the jobs held fall to half the capacity (or none are held), lease
    /// in one group: beside the searches when work is in hand ([`Worker::lease_beside`]), as a
    /// long poll when idle ([`Worker::lease_idle`]).
    async fn lease(&mut self, capacity: usize) -> Next {
        let room = capacity
            .saturating_sub(self.held.len())
            .min(first_leases(self.config.threads, self.stats.leased)) as u32;
        let lease_now = self.held.is_empty() || (self.held.len() <= capacity / 2 && !self.drained);
        let stopping = self.shutdown.is_cancelled();
        if lease_now && !self.held.is_empty() && self.leasing.is_none() && !stopping {
            self.lease_beside(room);
            Next::Wait
        } else if self.held.is_empty() && !stopping {
            self.lease_idle(room).await
        } else {
            Next::Wait
        }
    }

    /// Work in hand: the next lease of up to `room` jobs is fetched while it is searched (its
    /// answer is an [`Event::Leased`]).
    fn lease_beside(&mut self, room: u32) {
        let c = self.coordinator.clone();
        self.leasing = Some(tokio::spawn(
            async move { c.lease(room, Duration::ZERO).await },
        ));
    }

    /// An idle worker reports everything finished, then long-polls for up to `room` jobs (a
    /// lease already in flight answers first). A shutdown ends the poll (a job leased in that
    /// instant waits for its lease to expire). A failed lease waits out the backoff.
    async fn lease_idle(&mut self, room: u32) -> Next {
        self.settle().await;
        self.flush().await;
        let wait = if self.unreported.is_empty() {
            IDLE_LEASE_WAIT
        } else {
            Duration::ZERO // the report failed: do not sit on the results
        };
        let asked = Instant::now();
        let in_flight = self.leasing.take();
        let coordinator = &self.coordinator;
        let leased = tokio::select! {
            r = async {
                match in_flight {
                    Some(h) => joined(h.await),
                    None => coordinator.lease(room, wait).await,
                }
            } => r,
            _ = self.shutdown.cancelled() => return Next::Stop,
        };
        match leased {
            Ok(jobs) => {
                self.backoff.reset();
                let got = self.take_in(jobs);
                self.drained = got == 0;
                if got == 0 && self.held.is_empty() {
                    // nothing to do: report what is finished; if the coordinator answered at
                    // once (it does not long-poll), wait a little, unless told to stop
                    self.flush().await;
                    if asked.elapsed() < wait / 2 {
                        self.pause(IDLE_PAUSE).await;
                    }
                    return Next::Again;
                }
            }
            Err(e) => {
                let wait = self.backoff.step();
                tracing::warn!(
                    error = %e,
                    retry_in_seconds = wait.as_secs_f64(),
                    "lease failed; retrying"
                );
                self.pause(wait).await;
            }
        }
        Next::Wait
    }

    /// Sleeps for `d`, or until shutdown is asked for.
    async fn pause(&self, d: Duration) {
        tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = self.shutdown.cancelled() => {}
        }
    }

    /// The wait step: asks the search threads to wake it when the report group is complete or
    /// enough jobs finished to lease again, then handles the first event that comes.
    async fn wait(&mut self, capacity: usize) {
        let group = report_group(capacity, self.held.len());
        let until_group = group.saturating_sub(self.unreported.len());
        let until_lease = if self.drained {
            usize::MAX
        } else {
            self.held.len().saturating_sub(capacity / 2)
        };
        self.mailbox.wake_at(until_group.min(until_lease));
        match self.next_event().await {
            Event::Finished => {
                self.absorb();
                self.report_if_group(capacity);
            }
            Event::ReportTick => {
                self.drained = false;
                self.absorb();
                self.start_report();
            }
            Event::Reported(r) => {
                // a failed report is tried again at the next report tick, not at once: an
                // unreachable coordinator refuses at once, and would be asked in a busy loop
                if self.reported(r) {
                    self.report_if_group(capacity);
                }
            }
            Event::Leased(Ok(jobs)) => {
                self.backoff.reset();
                self.drained = self.take_in(jobs) == 0;
            }
            Event::Leased(Err(e)) => {
                // asked again after the next report tick; the idle path backs off
                tracing::warn!(error = %e, "lease failed; retrying");
                self.drained = true;
            }
            Event::HeartbeatTick => self.heartbeat().await,
            Event::Shutdown => {}
        }
    }

    /// The first of: the mailbox's wake-up, a report tick, the answer of the report or the
    /// lease in flight, a heartbeat tick, shutdown. A call answered is no longer in flight.
    async fn next_event(&mut self) -> Event<C::Error> {
        let Worker {
            mailbox,
            reporting,
            leasing,
            heartbeat,
            report,
            shutdown,
            ..
        } = self;
        tokio::select! {
            _ = mailbox.wake.notified() => Event::Finished,
            _ = report.tick() => Event::ReportTick,
            r = async { reporting.as_mut().expect("guarded by is_some").await }, if reporting.is_some() => {
                *reporting = None;
                Event::Reported(r)
            }
            r = async { leasing.as_mut().expect("guarded by is_some").await }, if leasing.is_some() => {
                *leasing = None;
                Event::Leased(joined(r))
            }
            _ = heartbeat.tick() => Event::HeartbeatTick,
            _ = shutdown.cancelled() => Event::Shutdown,
        }
    }

    /// Extends the leases of the jobs held, with their progress, and cancels the jobs the
    /// coordinator names.
    async fn heartbeat(&mut self) {
        let list = self.held_progress();
        match self.coordinator.heartbeat(list).await {
            Ok(reply) => {
                for id in reply.cancel {
                    self.pool.cancel(id);
                }
            }
            Err(e) => tracing::warn!(error = %e, "heartbeat failed"),
        }
    }

    /// Every job held with its progress: the search's, or (not started yet) its start lower
    /// bound and no nodes. What a heartbeat reports and a release hands back.
    fn held_progress(&self) -> Vec<(u64, Progress)> {
        let progress = self.pool.progress();
        self.held
            .iter()
            .map(|(&id, &lb)| {
                let p = progress.get(&id).copied();
                (
                    id,
                    p.unwrap_or(Progress {
                        lower_bound: lb,
                        nodes: 0,
                    }),
                )
            })
            .collect()
    }

    /// Takes finished jobs in: they are no longer held, they wait to be reported, and their
    /// search times update the mean job time.
    fn absorb(&mut self) {
        for f in self.mailbox.take() {
            let secs = f.millis / 1000.0;
            self.mean_job = Some(self.mean_job.map_or(secs, |m| {
                (1.0 - MEAN_JOB_WEIGHT) * m + MEAN_JOB_WEIGHT * secs
            }));
            self.held.remove(&f.id);
            self.unreported.push(f);
        }
    }

    /// Takes a lease's jobs in: held, counted and handed to the search pool. Returns how many.
    fn take_in(&mut self, jobs: Vec<Job>) -> usize {
        let got = jobs.len();
        for j in jobs {
            self.stats.leased += 1;
            self.held.insert(j.id, j.start_lower_bound);
            self.pool.submit(j);
        }
        got
    }

    /// Starts a report when the results waiting make a group ([`report_group`]).
    fn report_if_group(&mut self, capacity: usize) {
        if self.unreported.len() >= report_group(capacity, self.held.len()) {
            self.start_report();
        }
    }

    /// Starts reporting the results waiting, as a task beside the searches; when a report is
    /// already in flight they wait for the next one.
    fn start_report(&mut self) {
        if self.reporting.is_some() || self.unreported.is_empty() {
            return;
        }
        let group = std::mem::take(&mut self.unreported);
        let c = self.coordinator.clone();
        self.reporting = Some(tokio::spawn(async move {
            let r = c.complete(&group).await;
            (group, r)
        }));
    }

    /// Takes a report's answer in: counted when acknowledged, else back in front of the
    /// results waiting (a task that panicked lost its results: their leases expire and they
    /// are searched again). True when the report was acknowledged.
    fn reported(&mut self, r: ReportAnswer<C::Error>) -> bool {
        match r {
            Ok((group, Ok(()))) => {
                self.stats.completed += group.len() as u64;
                true
            }
            Ok((group, Err(e))) => {
                tracing::warn!(error = %e, results = group.len(), "reporting results failed; will retry");
                self.unreported.splice(0..0, group);
                false
            }
            Err(e) => {
                tracing::error!(error = %e, "report task failed");
                false
            }
        }
    }

    /// Waits for the report in flight, if any, and takes its answer in.
    async fn settle(&mut self) {
        if let Some(h) = self.reporting.take() {
            let r = h.await;
            self.reported(r);
        }
    }

    /// Reports the results not yet acknowledged; keeps them for the next try on failure.
    async fn flush(&mut self) {
        if self.unreported.is_empty() {
            return;
        }
        let n = self.unreported.len() as u64;
        match self.coordinator.complete(&self.unreported).await {
            Ok(()) => {
                self.stats.completed += n;
                self.unreported.clear();
            }
            Err(e) => {
                tracing::warn!(error = %e, results = n, "reporting results failed; will retry")
            }
        }
    }

    /// The drain step, after shutdown: running jobs finish within the grace period, the
    /// results are reported, and the rest (with a lease in flight) is cancelled and handed
    /// back. Stops the search threads and returns what the worker did.
    async fn drain(mut self) -> WorkerStats {
        tracing::info!(held = self.held.len(), "shutting down: finishing held jobs");
        self.finish_within_grace().await;
        self.settle().await;
        self.flush().await;
        // a lease in flight at the shutdown: its jobs were never started, and go back at once
        if let Some(h) = self.leasing.take() {
            if let Ok(jobs) = joined(h.await) {
                self.stats.leased += jobs.len() as u64;
                self.held
                    .extend(jobs.iter().map(|j| (j.id, j.start_lower_bound)));
            }
        }
        self.release_held().await;
        self.stats.search_panics = self.pool.panics();
        if self.stats.search_panics > 0 {
            tracing::error!(
                panics = self.stats.search_panics,
                "searches panicked during this run"
            );
        }
        let Worker { pool, stats, .. } = self;
        tokio::task::spawn_blocking(move || pool.shutdown())
            .await
            .unwrap_or_default();
        stats
    }

    /// Takes finished jobs in until none is held or the grace period is over (cancelled jobs
    /// are not results: they are handed back).
    async fn finish_within_grace(&mut self) {
        let deadline = Instant::now() + self.config.grace;
        self.mailbox.wake_at(1);
        loop {
            for f in self.mailbox.take() {
                self.held.remove(&f.id);
                if f.outcome.status != Status::Cancelled {
                    self.unreported.push(f);
                }
            }
            if self.held.is_empty()
                || tokio::time::timeout_at(deadline, self.mailbox.wake.notified())
                    .await
                    .is_err()
            {
                break;
            }
        }
    }

    /// Cancels the jobs still held and hands them back with their progress.
    async fn release_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let back = self.held_progress();
        self.pool.cancel_all();
        self.stats.released += back.len() as u64;
        if let Err(e) = self.coordinator.release(back).await {
            tracing::warn!(error = %e, "release failed; the leases will expire instead");
        }
    }
}

/// A lease that ran as a task of its own. A task that panicked leased nothing the worker
/// knows of (whatever it leased expires at the coordinator): an empty lease.
fn joined<E>(r: Result<Result<Vec<Job>, E>, JoinError>) -> Result<Vec<Job>, E> {
    r.unwrap_or_else(|e| {
        tracing::error!(error = %e, "lease task failed");
        Ok(Vec::new())
    })
}

/// A lease in flight to the coordinator `C`.
type Leasing<C> = JoinHandle<Result<Vec<Job>, <C as Coordinator>::Error>>;

/// What a report task gives back: the results with the answer, so that a failed report keeps
/// them for the next try.
type ReportAnswer<E> = Result<(Vec<Finished>, Result<(), E>), JoinError>;

/// A report in flight to the coordinator `C`.
type Reporting<C> = JoinHandle<(Vec<Finished>, Result<(), <C as Coordinator>::Error>)>;
