//! The worker runtime against a coordinator a round trip away, with real tables and searches:
//! the next lease and the reports travel while the searches go on, and every job is reported
//! exactly once. Its timers (heartbeats, the backoff of failed leases, the pause of an idle
//! worker, the grace of a shutdown) are tokio's, so the tests of their timing run in tokio's
//! paused time: exact, and without waiting.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cubefleet_search::{Progress, Question, Status};
use cubefleet_tables::{parse_position, InputFormat, Tables};
use cubefleet_worker::pool::{Finished, Job};
use cubefleet_worker::runtime::{
    self, Backoff, Coordinator, HeartbeatReply, RuntimeConfig, IDLE_PAUSE,
};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

const STATES: &str = include_str!("../../tests/vectors/random-states-1000.txt");

fn tables() -> Arc<Tables> {
    let dir = cubefleet_testkit::tables_dir();
    Arc::new(Tables::load_or_build(&dir, &|_, _, _| {}).expect("tables"))
}

/// A coordinator whose every call takes `rtt`; it counts the calls in flight at once.
struct Distant {
    rtt: Duration,
    queue: Mutex<VecDeque<Job>>,
    reported: Mutex<Vec<u64>>,
    /// Notified at every report.
    report: Notify,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

impl Distant {
    async fn call(&self) {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(self.rtt).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Coordinator for Distant {
    type Error = String;

    async fn lease(&self, max: u32, _wait: Duration) -> Result<Vec<Job>, String> {
        self.call().await;
        let mut q = self.queue.lock().expect("lock");
        let n = (max as usize).min(q.len());
        Ok(q.drain(..n).collect())
    }

    async fn heartbeat(&self, _held: Vec<(u64, Progress)>) -> Result<HeartbeatReply, String> {
        self.call().await;
        Ok(HeartbeatReply::default())
    }

    async fn complete(&self, results: &[Finished]) -> Result<(), String> {
        self.call().await;
        let mut r = self.reported.lock().expect("lock");
        for f in results {
            assert_eq!(f.outcome.status, Status::Solved, "job {}", f.id);
            r.push(f.id);
        }
        self.report.notify_one();
        Ok(())
    }

    async fn release(&self, jobs: Vec<(u64, Progress)>) -> Result<(), String> {
        assert!(jobs.is_empty(), "nothing to hand back: {jobs:?}");
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_distant_coordinator_is_called_beside_the_searches() {
    let jobs: VecDeque<Job> = STATES
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| Job {
            id: i as u64,
            cube: parse_position(l.trim(), InputFormat::Facelets).expect("valid"),
            mode: Question::two_phase(20),
            start_lower_bound: 0,
            spot_seed: 0,
            seed: None,
        })
        .collect();
    let n = jobs.len();
    let coordinator = Arc::new(Distant {
        rtt: Duration::from_millis(50),
        queue: Mutex::new(jobs),
        reported: Mutex::new(Vec::new()),
        report: Notify::new(),
        in_flight: AtomicUsize::new(0),
        most_in_flight: AtomicUsize::new(0),
    });
    let shutdown = CancellationToken::new();
    let config = RuntimeConfig {
        threads: 1,
        ..RuntimeConfig::default()
    };
    let worker = tokio::spawn(runtime::run(
        coordinator.clone(),
        tables(),
        config,
        shutdown.clone(),
    ));
    let all_reported = async {
        while coordinator.reported.lock().expect("lock").len() < n {
            coordinator.report.notified().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(120), all_reported)
        .await
        .expect("all reported within 120 s");
    shutdown.cancel();
    let stats = worker.await.expect("runtime");
    let mut reported = coordinator.reported.lock().expect("lock").clone();
    reported.sort_unstable();
    assert_eq!(reported, (0..n as u64).collect::<Vec<_>>(), "each job once");
    assert_eq!((stats.leased, stats.completed), (n as u64, n as u64));
    // the old loop made one call at a time; now a lease travels beside a report
    assert!(
        coordinator.most_in_flight.load(Ordering::SeqCst) >= 2,
        "no two calls were ever in flight at once"
    );
}

/// A coordinator that records when each call came (on tokio's clock) and answers as told:
/// the first `failing_leases` leases fail, later ones hand out `jobs` once; heartbeats answer
/// nothing to cancel.
struct Recording {
    failing_leases: usize,
    jobs: Mutex<Vec<Job>>,
    leases: Mutex<Vec<Instant>>,
    heartbeats: Mutex<Vec<Instant>>,
    released: Mutex<Vec<(Instant, Vec<u64>)>>,
    /// Notified at every call.
    called: Notify,
}

impl Recording {
    fn new(failing_leases: usize, jobs: Vec<Job>) -> Arc<Recording> {
        Arc::new(Recording {
            failing_leases,
            jobs: Mutex::new(jobs),
            leases: Mutex::new(Vec::new()),
            heartbeats: Mutex::new(Vec::new()),
            released: Mutex::new(Vec::new()),
            called: Notify::new(),
        })
    }

    /// Waits until `done` holds of the recorder (checked at every call).
    async fn until(&self, done: impl Fn(&Recording) -> bool) {
        loop {
            let called = self.called.notified();
            if done(self) {
                return;
            }
            called.await;
        }
    }
}

impl Coordinator for Recording {
    type Error = String;

    async fn lease(&self, _max: u32, _wait: Duration) -> Result<Vec<Job>, String> {
        let n = {
            let mut leases = self.leases.lock().expect("lock");
            leases.push(Instant::now());
            leases.len()
        };
        self.called.notify_waiters();
        if n <= self.failing_leases {
            return Err(format!("lease {n} fails"));
        }
        Ok(std::mem::take(&mut *self.jobs.lock().expect("lock")))
    }

    async fn heartbeat(&self, _held: Vec<(u64, Progress)>) -> Result<HeartbeatReply, String> {
        self.heartbeats.lock().expect("lock").push(Instant::now());
        self.called.notify_waiters();
        Ok(HeartbeatReply::default())
    }

    async fn complete(&self, results: &[Finished]) -> Result<(), String> {
        panic!("no job finishes here: {results:?}");
    }

    async fn release(&self, jobs: Vec<(u64, Progress)>) -> Result<(), String> {
        let ids = jobs.iter().map(|(id, _)| *id).collect();
        self.released
            .lock()
            .expect("lock")
            .push((Instant::now(), ids));
        self.called.notify_waiters();
        Ok(())
    }
}

/// Gaps between consecutive instants.
fn gaps(at: &[Instant]) -> Vec<Duration> {
    at.windows(2).map(|w| w[1] - w[0]).collect()
}

/// A lease that fails is tried again after the backoff: waits from [`Backoff::FIRST`],
/// doubling, each lengthened by up to all of its base (and then at the next event, a
/// report tick at the latest); once a lease answers (empty, at once), the idle worker asks
/// again after [`IDLE_PAUSE`] exactly. In paused time: the backoff's seconds take none.
#[tokio::test(start_paused = true)]
async fn a_failing_lease_is_retried_after_doubling_waits_in_virtual_time() {
    let failing = 6;
    let coordinator = Recording::new(failing, Vec::new());
    let shutdown = CancellationToken::new();
    let config = RuntimeConfig {
        threads: 1,
        report_every: Duration::from_millis(1),
        ..RuntimeConfig::default()
    };
    let tick = config.report_every;
    let worker = tokio::spawn(runtime::run(
        coordinator.clone(),
        tables(),
        config,
        shutdown.clone(),
    ));
    coordinator
        .until(|c| c.leases.lock().expect("lock").len() >= failing + 2)
        .await;
    shutdown.cancel();
    worker.await.expect("runtime");
    let leases = coordinator.leases.lock().expect("lock").clone();
    let gaps = gaps(&leases[..failing + 2]);
    let nano = Duration::from_nanos(1);
    for (k, gap) in gaps[..failing].iter().enumerate() {
        let base = (Backoff::FIRST * 2u32.pow(k as u32)).min(Backoff::MAX);
        let (low, high) = (base, base * 2);
        assert!(
            *gap + nano >= low && *gap <= high + tick + nano,
            "wait {k}: {gap:?}, not within {low:?}..{high:?}"
        );
    }
    assert_eq!(gaps[failing], IDLE_PAUSE, "after an empty answer");
}

/// A worker holding a job heartbeats every `heartbeat`, the first one period after it
/// started; at shutdown a job still running gets `grace` to finish, then is handed back. In
/// paused time the periods are exact and the grace takes no time.
#[tokio::test(start_paused = true)]
async fn heartbeats_keep_their_period_and_a_shutdown_hands_back_after_the_grace() {
    // an impossible target: the search runs until cancelled
    let hard = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2";
    let job = Job {
        id: 7,
        cube: parse_position(hard, InputFormat::Moves).expect("valid"),
        mode: Question::two_phase(15),
        start_lower_bound: 0,
        spot_seed: 0,
        seed: None,
    };
    let coordinator = Recording::new(0, vec![job]);
    let shutdown = CancellationToken::new();
    let config = RuntimeConfig {
        threads: 1,
        heartbeat: Duration::from_secs(3),
        grace: Duration::from_secs(20),
        ..RuntimeConfig::default()
    };
    let tables = tables();
    let start = Instant::now();
    let worker = tokio::spawn(runtime::run(
        coordinator.clone(),
        tables,
        config.clone(),
        shutdown.clone(),
    ));
    coordinator
        .until(|c| c.heartbeats.lock().expect("lock").len() >= 4)
        .await;
    let stopped = Instant::now();
    shutdown.cancel();
    let stats = worker.await.expect("runtime");
    let beats = coordinator.heartbeats.lock().expect("lock").clone();
    assert_eq!(
        beats[0] - start,
        config.heartbeat,
        "the first, one period in"
    );
    assert!(
        gaps(&beats).iter().all(|&g| g == config.heartbeat),
        "{:?}",
        gaps(&beats)
    );
    let released = coordinator.released.lock().expect("lock").clone();
    assert_eq!(released.len(), 1, "{released:?}");
    assert_eq!(released[0].1, [7]);
    assert_eq!(
        released[0].0 - stopped,
        config.grace,
        "handed back after the grace"
    );
    assert_eq!((stats.leased, stats.completed, stats.released), (1, 0, 1));
}
