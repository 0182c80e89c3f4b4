//! Search threads: jobs go in, results come out. Each thread owns its searchers (reused from job
//! to job) and runs one search at a time; a job can be cancelled while it runs, and its progress
//! (the lower bound an optimal search has proven, nodes searched) can be read at any time.
//!
//! The pool knows nothing of the network: the worker runtime feeds it leased jobs and forwards
//! what comes out; `cubefleet solve` could use it the same way.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use cubefleet_proto::question::Algorithm;
use cubefleet_proto::{CosetCounts, CosetSample};
use cubefleet_search::coset::{sample_solution, solve_coset, CosetError, CosetOptions, Stage};
use cubefleet_tables::coset::{samples, Coset, SEED_BYTES};
use cubefleet_tables::{CubieCube, Tables};

use cubefleet_search::{Budget, Count, Outcome, Progress, Question, Solver, Status};

/// A job for the pool.
#[derive(Clone, Debug)]
pub struct Job {
    /// The caller's id for the job (unique among jobs in the pool at one time).
    pub id: u64,
    /// The position, already validated.
    pub cube: CubieCube,
    /// What to search for, with its time budget.
    pub mode: Question,
    /// Lengths below this are known to have no solution (resume point of an optimal search).
    pub start_lower_bound: u32,
    /// The seed of its lease's spot check (`LeasedJob.spot_seed`; 0: none): which solutions
    /// past the ones listed its answer includes.
    pub spot_seed: u64,
    /// Of a coset job (`mode` asks for a coset; `cube` is its representative): the sample
    /// seed of its lease, naming the positions the result answers for.
    pub seed: Option<[u8; SEED_BYTES]>,
}

/// A finished job.
#[derive(Clone, Debug)]
pub struct Finished {
    /// The job's id.
    pub id: u64,
    /// What the search found (a returned solution is verified).
    pub outcome: Outcome,
    /// Wall time of the search.
    pub millis: f64,
    /// How many solutions the job asked for (what its completion lists).
    pub asked: Count,
    /// The job's [`Job::spot_seed`].
    pub spot_seed: u64,
    /// True when the search panicked: the outcome is then `cancelled` (the job goes back to
    /// the queue) and the panic is logged.
    pub panicked: bool,
    /// Of a coset job solved: its counts and the answers for its samples (the outcome is then
    /// `solved`, without a solution).
    pub coset: Option<(CosetCounts, Vec<CosetSample>)>,
}

/// A map keyed by job id, hashed with foldhash (these maps change once or more per job).
pub type JobMap<V> = HashMap<u64, V, foldhash::fast::RandomState>;

/// A job in the pool, as the pool handle and its threads share it.
struct InPool {
    /// Set to stop the job.
    cancel: Arc<AtomicBool>,
    /// Its progress; None while it waits for a thread.
    progress: Option<Progress>,
}

/// State shared between the pool handle and its threads: every job in the pool (queued or
/// running), under one lock, which a search thread takes twice per job (to start it and to
/// finish it) and once per progress report.
#[derive(Default)]
struct Shared {
    jobs: Mutex<JobMap<InPool>>,
    /// Searches that panicked since the pool started (each job finished as cancelled).
    panics: AtomicU64,
}

/// A fixed set of search threads over shared tables.
pub struct Pool {
    jobs: Option<Sender<Job>>,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Pool {
    /// Starts `threads` search threads. `done` is called (on a search thread) for every finished
    /// job, in completion order.
    pub fn new(
        tables: Arc<Tables>,
        threads: usize,
        done: impl Fn(Finished) + Send + Sync + 'static,
    ) -> Pool {
        let (tx, rx) = channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let shared = Arc::new(Shared::default());
        let done = Arc::new(done);
        let n = threads.max(1);
        let threads = (0..n)
            .map(|i| {
                let (tables, rx, shared, done) =
                    (tables.clone(), rx.clone(), shared.clone(), done.clone());
                std::thread::Builder::new()
                    .name(format!("search-{i}"))
                    .spawn(move || search_thread(&tables, n, &rx, &shared, &*done))
                    .expect("spawning a search thread")
            })
            .collect();
        Pool {
            jobs: Some(tx),
            shared,
            threads,
        }
    }

    /// Queues a job; it starts when a thread is free.
    pub fn submit(&self, job: Job) {
        lock(&self.shared.jobs).insert(
            job.id,
            InPool {
                cancel: Arc::new(AtomicBool::new(false)),
                progress: None,
            },
        );
        if let Some(tx) = &self.jobs {
            // the threads only stop after `shutdown`, so the receiver is alive
            let _ = tx.send(job);
        }
    }

    /// Cancels a queued or running job; it finishes with status `cancelled`.
    pub fn cancel(&self, id: u64) {
        if let Some(job) = lock(&self.shared.jobs).get(&id) {
            job.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// Cancels every job in the pool.
    pub fn cancel_all(&self) {
        for job in lock(&self.shared.jobs).values() {
            job.cancel.store(true, Ordering::Relaxed);
        }
    }

    /// Progress of the jobs currently running.
    pub fn progress(&self) -> JobMap<Progress> {
        lock(&self.shared.jobs)
            .iter()
            .filter_map(|(&id, job)| Some((id, job.progress?)))
            .collect()
    }

    /// Searches that panicked since the pool started. Each such job left the pool as
    /// `cancelled` (so its lease is handed back, not renewed by heartbeats), and its thread
    /// went on with new searchers.
    pub fn panics(&self) -> u64 {
        self.shared.panics.load(Ordering::Relaxed)
    }

    /// Number of jobs queued or running.
    pub fn in_flight(&self) -> usize {
        lock(&self.shared.jobs).len()
    }

    /// Stops taking jobs and waits for the threads to finish what they have.
    pub fn shutdown(mut self) {
        self.jobs = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Locks `m`, also after a thread panicked while holding it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // a panicking search thread must not take the whole worker down with a poisoned lock
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One search thread: takes jobs and runs each (a coset job on a pool of `threads` of its own:
/// the coordinator leases a worker one coset at a time, and the other threads wait meanwhile).
fn search_thread(
    tables: &Tables,
    threads: usize,
    rx: &Mutex<Receiver<Job>>,
    shared: &Shared,
    done: &dyn Fn(Finished),
) {
    let mut solver = Solver::new(tables);
    loop {
        let job = match lock(rx).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        // the job starts: its progress is known from now on
        let flag = lock(&shared.jobs).get_mut(&job.id).map(|j| {
            j.progress = Some(Progress {
                lower_bound: job.start_lower_bound,
                nodes: 0,
            });
            j.cancel.clone()
        });
        let Some(flag) = flag else {
            continue;
        };
        let start = Instant::now();
        let budget = Budget {
            deadline: job.mode.timeout().map(|t| start + t),
            cancel: Some(flag),
        };
        // a search that panics must not leave its job in the pool (its progress would renew
        // the lease at every heartbeat, forever) nor take its thread down
        let searched = std::panic::catch_unwind(AssertUnwindSafe(|| {
            if job.mode.is_coset() {
                return run_coset(tables, threads, &job, &budget, &|depth| {
                    if let Some(j) = lock(&shared.jobs).get_mut(&job.id) {
                        j.progress = Some(Progress {
                            lower_bound: 0,
                            nodes: u64::from(depth),
                        });
                    }
                });
            }
            let outcome = solver.solve(
                &job.cube,
                &job.mode,
                job.start_lower_bound,
                &budget,
                &mut |p| {
                    if let Some(j) = lock(&shared.jobs).get_mut(&job.id) {
                        j.progress = Some(p);
                    }
                },
            );
            (outcome, None)
        }));
        let panicked = searched.is_err();
        let (outcome, coset) = searched.unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!(job = job.id, panic = %what, "search panicked; the job is given back");
            shared.panics.fetch_add(1, Ordering::Relaxed);
            // the searchers may be half-way through a search: start clean
            solver = Solver::new(tables);
            (
                Outcome {
                    status: Status::Cancelled,
                    solution: None,
                    solutions: Vec::new(),
                    optimal: false,
                    lower_bound: job.start_lower_bound,
                    nodes: 0,
                },
                None,
            )
        });
        lock(&shared.jobs).remove(&job.id);
        done(Finished {
            id: job.id,
            outcome,
            millis: start.elapsed().as_secs_f64() * 1000.0,
            asked: job.mode.count(),
            spot_seed: job.spot_seed,
            panicked,
            coset,
        });
    }
}

/// Seconds the two-phase search gets on a sample past the exact depths before the
/// depth-limited search takes over (`cubefleet_search::coset::sample_solution`).
const SAMPLE_TWO_PHASE: std::time::Duration = std::time::Duration::from_secs(10);

/// Solves the coset job `job` on `threads` threads: its counts, and for each sample its
/// lease's seed names the depth the counts put it at with a solution within it (a sample
/// the coset search left and the positions solved one by one took is answered at the length
/// of a solution found now); `progress` hears of each depth begun. Cancelled (the budget's
/// flag) or without memory, the outcome is `cancelled` (the job goes back to the queue).
fn run_coset(
    tables: &Tables,
    threads: usize,
    job: &Job,
    budget: &Budget,
    progress: &(dyn Fn(u32) + Sync),
) -> (Outcome, Option<(CosetCounts, Vec<CosetSample>)>) {
    let cancelled = Outcome {
        status: Status::Cancelled,
        solution: None,
        solutions: Vec::new(),
        optimal: false,
        lower_bound: 0,
        nodes: 0,
    };
    let (
        Algorithm::Coset {
            max_depth,
            exact_depth,
        },
        Some(seed),
    ) = (job.mode.algorithm(), job.seed)
    else {
        return (cancelled, None);
    };
    let coset = Coset::of(&job.cube);
    let drawn = samples(&seed);
    let options = CosetOptions {
        max_depth,
        exact_depth,
        threads,
        one_by_one: Some(SAMPLE_TWO_PHASE),
        cancel: budget.cancel.clone(),
        samples: drawn.clone(),
    };
    let result = match solve_coset(tables, coset, &options, &|stage, depth, _, _| {
        if stage == Stage::Expand || stage == Stage::Seeds {
            progress(depth);
        }
    }) {
        Ok(r) => r,
        Err(e) => {
            if e != CosetError::Cancelled {
                tracing::error!(job = job.id, error = %e, "coset not solved; handing it back");
            }
            return (cancelled, None);
        }
    };
    let left = result.unsolved_local.as_deref();
    let mut answers = Vec::with_capacity(drawn.len());
    for (&local, &depth) in drawn.iter().zip(&result.samples) {
        // reached by the coset search at `depth`, or solved one by one (past the exact
        // depths, within the depth searched to), or unsolved
        let one_by_one = depth.is_none() && left.is_some_and(|l| l.binary_search(&local).is_err());
        let Some(depth) = depth.or(one_by_one.then_some(max_depth)) else {
            answers.push(CosetSample {
                unsolved: true,
                ..CosetSample::default()
            });
            continue;
        };
        let exact = result.exact_through;
        let Some(solution) = sample_solution(
            tables,
            coset,
            local,
            depth,
            exact,
            SAMPLE_TWO_PHASE,
            budget.cancel.clone(),
        ) else {
            return (cancelled, None);
        };
        answers.push(CosetSample {
            unsolved: false,
            depth: if one_by_one {
                solution.len() as u32
            } else {
                depth
            },
            moves: solution.indices(),
        });
    }
    let counts = CosetCounts {
        number: result.number,
        counts: result.counts,
        exact_through: result.exact_through,
        unsolved: result.unsolved,
        unsolved_local: result.unsolved_local.unwrap_or_default(),
        one_by_one: result.one_by_one,
    };
    let outcome = Outcome {
        status: Status::Solved,
        ..cancelled
    };
    (outcome, Some((counts, answers)))
}
