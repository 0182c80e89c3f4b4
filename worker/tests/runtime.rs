//! The worker runtime against a coordinator a round trip away, with real tables and searches:
//! the next lease and the reports travel while the searches go on, and every job is reported
//! exactly once.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cubefleet_search::{Mode, Progress, Status};
use cubefleet_tables::{parse_position, InputFormat, Tables};
use cubefleet_worker::pool::{Finished, Job};
use cubefleet_worker::runtime::{self, Coordinator, HeartbeatReply, RuntimeConfig};
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
            mode: Mode::TwoPhase { max_length: 20 },
            start_lower_bound: 0,
            timeout: None,
        })
        .collect();
    let n = jobs.len();
    let coordinator = Arc::new(Distant {
        rtt: Duration::from_millis(50),
        queue: Mutex::new(jobs),
        reported: Mutex::new(Vec::new()),
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
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    while coordinator.reported.lock().expect("lock").len() < n {
        assert!(tokio::time::Instant::now() < deadline, "not all reported");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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
