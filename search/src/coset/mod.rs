//! Every position of one coset of H = <U, D, R2, L2, F2, B2> solved at once: the coset solver
//! of Rokicki, Kociemba, Davidson and Dethridge ("God's number is 20", 2010), as Kociemba's
//! "A fast coset solver" describes it.
//!
//! # Cosets, their numbers and local indices
//!
//! `cubefleet_tables::coset` numbers the cosets and their positions ([`Coset`],
//! [`COSET_SIZE`], [`N_COSETS`]). Position `q` of the coset of `r` is indexed by `x = r * q⁻¹`,
//! an element of H: a maneuver `m` solves `q` exactly when `r * m = x`, so the depth of `q` is
//! the length of the shortest maneuver that takes `r` to `x`, and one more turn multiplies `x`
//! on the right, which is what the move tables compute. So the search lives in H and turns act
//! on the right. The bitmap holds one bit per local index: a block of [`EDGES_PER_CORNERS`]
//! bits per corner permutation (7560 words), in it a group of 12 bits per `ud_edges`.
//!
//! # The method
//!
//! Every maneuver `m` with `r * m` in H is `a` then `b`, `b` its longest suffix of H's ten turns
//! and `a` empty or ending with a turn outside H, with `r * a` already in H. So a phase-1
//! search from `r` lists the maneuvers `a` of each length `n` into H that end outside H (the
//! empty one when `r` is in H): each marks `r * a` at depth `n` (a *seed*, module `seeds`); the
//! positions at depth `k` are those `k - n` of H's turns away from a seed of depth `n`: the
//! bitmap of the depths so far grows by all ten turns of H at once, a depth a step
//! (module `bitmap`), the seeds of depth `k` added after step `k`.
//!
//! The phase-1 search grows about 7 times a depth, so it runs only through
//! [`CosetOptions::exact_depth`]: through that depth every maneuver is in, and `counts[k]` is
//! the exact number of positions whose shortest solution has `k` turns. Past it the turns of
//! H alone go on to [`CosetOptions::max_depth`]: a position first reached at step `k` there is
//! solved within `k` turns, not proven to need `k`. The result then says `exact_through`.
//! When at most [`MAX_LISTED`] positions are left at `max_depth`, each is searched alone
//! ([`CosetOptions::one_by_one`]: the two-phase search within `max_depth`), as cube20 does
//! with the last positions of a coset.

mod bitmap;
mod seeds;

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cubefleet_tables::facelet::FaceletCube;
use cubefleet_tables::Tables;

use bitmap::Bitmap;
use rayon::prelude::*;

use crate::twophase::{TwoPhaseOptions, TwoPhaseSearcher};
use crate::{Budget, Status};

/// The ten turns of H (U, U2, U', R2, F2, D, D2, D', L2, B2), as move numbers.
pub use cubefleet_tables::movetable::PHASE2_MOVES as H_MOVES;

use cubefleet_tables::coset::slice_parity;
pub use cubefleet_tables::coset::{
    Coset, COSET_SAMPLES, COSET_SIZE, EDGES_PER_CORNERS, MAX_LISTED, N_COSETS, SLICE_HALF,
};

/// Bytes of one bitmap of a coset (one bit per position): 2,438,553,600.
pub const BITMAP_BYTES: u64 = COSET_SIZE / 8;
/// Bytes the solver allocates: two bitmaps (the depths so far and the next), 4.88 GB, plus
/// under 1 MB of counts and move tables.
pub const MEMORY_NEEDED: u64 = 2 * BITMAP_BYTES + (1 << 20);

/// What to solve a coset to, and with what.
#[derive(Clone, Debug)]
pub struct CosetOptions {
    /// The last depth searched: positions not reached by then are unsolved.
    pub max_depth: u32,
    /// The last depth of the phase-1 search (capped at `max_depth`): the counts are exact
    /// through it. Each depth costs about 7 times the one before (see BENCHMARKS.md).
    pub exact_depth: u32,
    /// Threads for both stages.
    pub threads: usize,
    /// When at most [`MAX_LISTED`] positions are left unsolved past the exact depth, search
    /// each one by one (the two-phase search, within `max_depth` turns) for at most this long;
    /// `None`: leave them unsolved.
    pub one_by_one: Option<Duration>,
    /// Stop (with [`CosetError::Cancelled`]) when this flag is raised.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Local indices to follow (a coordinator's draws, `cubefleet_tables::coset::samples`):
    /// [`CosetResult::samples`] says at which depth the search reached each. Empty: none.
    pub samples: Vec<u64>,
}

/// A stage of the solver, for progress reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The phase-1 search for the maneuvers into H of one length (`done` of `total` subtrees).
    Seeds,
    /// One step of H's turns over the bitmap (`done` of `total` corner blocks).
    Expand,
    /// The positions left, searched one by one (`done` of `total`).
    OneByOne,
}

/// A progress report: the stage, the depth it works on, and work done of the total.
pub type CosetProgress<'a> = &'a (dyn Fn(Stage, u32, u64, u64) + Sync);

/// What solving a coset found, ready to be printed or sent (serde).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CosetResult {
    /// The coset's number.
    pub number: u64,
    /// Its representative as a facelet string: the position of local index 0.
    pub representative: String,
    /// Positions in the coset: [`COSET_SIZE`].
    pub size: u64,
    /// The depth searched to.
    pub max_depth: u32,
    /// `counts[k]`, `k <= max_depth`: the positions first reached at depth `k`: whose
    /// shortest solution has `k` turns for `k <= exact_through`, solved within `k` turns
    /// beyond.
    pub counts: Vec<u64>,
    /// The last depth whose count is exact.
    pub exact_through: u32,
    /// Positions the coset search left that the two-phase search solved one by one (counted
    /// at the length of the solution it found, past `exact_through`).
    pub one_by_one: u64,
    /// Positions not solved within `max_depth`: `size - sum(counts)`.
    pub unsolved: u64,
    /// The state indices (`cubefleet_tables::index`, as decimal strings) of the unsolved
    /// positions, when there are at most [`MAX_LISTED`]; `None` otherwise.
    pub unsolved_indices: Option<Vec<String>>,
    /// Their local indices in the coset, in the same order.
    pub unsolved_local: Option<Vec<u64>>,
    /// Seconds the whole solve took.
    pub seconds: f64,
    /// For each of [`CosetOptions::samples`], in order, the step of the coset search that
    /// first reached it (the depth the counts put it at: exact through `exact_through`, a depth
    /// it is solved within beyond); None when the search did not reach it (unsolved, or solved
    /// one by one). Left out of the JSON when none were asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Option<u32>>,
}

/// Why a coset was not solved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CosetError {
    /// Not enough memory: bytes needed, and bytes available when known.
    Memory {
        /// What the solver allocates ([`MEMORY_NEEDED`]).
        needed: u64,
        /// What the system reported available, if it did.
        available: Option<u64>,
    },
    /// The thread pool could not be made.
    Threads(String),
    /// The cancellation flag was raised.
    Cancelled,
}

impl fmt::Display for CosetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gb = |b: u64| b as f64 / 1e9;
        match self {
            CosetError::Memory {
                needed,
                available: Some(a),
            } => write!(
                f,
                "solving a coset needs {:.2} GB of memory (two bitmaps of one bit per \
                 position), and only {:.2} GB are available: free some, or run it on a larger \
                 machine",
                gb(*needed),
                gb(*a)
            ),
            CosetError::Memory {
                needed,
                available: None,
            } => write!(
                f,
                "solving a coset needs {:.2} GB of memory (two bitmaps of one bit per \
                 position), and it could not be allocated",
                gb(*needed)
            ),
            CosetError::Threads(e) => write!(f, "cannot start the coset solver's threads: {e}"),
            CosetError::Cancelled => f.write_str("cancelled"),
        }
    }
}

impl std::error::Error for CosetError {}

/// The memory the system says is available (`MemAvailable` of `/proc/meminfo`), when it says.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Refuses to start when the system says less than [`MEMORY_NEEDED`] is available.
pub fn check_memory() -> Result<(), CosetError> {
    match available_memory() {
        Some(a) if a < MEMORY_NEEDED => Err(CosetError::Memory {
            needed: MEMORY_NEEDED,
            available: Some(a),
        }),
        _ => Ok(()),
    }
}

/// Solves every position of `coset` to `options.max_depth`, over `tables`.
pub fn solve_coset(
    tables: &Tables,
    coset: Coset,
    options: &CosetOptions,
    progress: CosetProgress<'_>,
) -> Result<CosetResult, CosetError> {
    check_memory()?;
    let start = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.max(1))
        .build()
        .map_err(|e| CosetError::Threads(e.to_string()))?;
    let cancelled = || {
        options
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    };
    pool.install(|| {
        let turns = bitmap::Turns::new(&tables.coords);
        let mut cur = Bitmap::new()?;
        let mut next = Bitmap::new()?;
        let exact = options.exact_depth.min(options.max_depth);
        let r = coset.representative();
        let mut counts = Vec::with_capacity(options.max_depth as usize + 1);
        counts.push(seeds::mark(tables, &r, 0, &cur, progress));
        let mut total = counts[0];
        let mut hits: Vec<Option<u32>> = vec![None; options.samples.len()];
        follow(&options.samples, &cur, 0, &mut hits);
        for depth in 1..=options.max_depth {
            if cancelled() {
                return Err(CosetError::Cancelled);
            }
            if total == COSET_SIZE {
                counts.push(0);
                continue;
            }
            turns.expand(&cur, &mut next, &|done, all| {
                progress(Stage::Expand, depth, done, all)
            });
            if depth <= exact {
                seeds::mark(tables, &r, depth, &next, progress);
            }
            let now = next.count();
            counts.push(now - total);
            total = now;
            std::mem::swap(&mut cur, &mut next);
            follow(&options.samples, &cur, depth, &mut hits);
        }
        let mut unsolved = COSET_SIZE - total;
        let mut listed = (unsolved <= MAX_LISTED).then(|| cur.zeros());
        let mut one_by_one = 0;
        if let (Some(list), Some(limit)) = (&mut listed, options.one_by_one) {
            if options.max_depth > exact && !list.is_empty() {
                let found = solve_one_by_one(tables, coset, list, options, limit, progress);
                for &length in found.iter().flatten() {
                    counts[length as usize] += 1;
                    one_by_one += 1;
                }
                unsolved -= one_by_one;
                let mut left = found.iter();
                list.retain(|_| left.next().is_some_and(Option::is_none));
            }
        }
        if cancelled() {
            return Err(CosetError::Cancelled);
        }
        let unsolved_indices = listed.as_ref().map(|l| {
            l.iter()
                .filter_map(|&i| coset.position(i))
                .map(|q| cubefleet_tables::index::index_of(&q).to_string())
                .collect()
        });
        Ok(CosetResult {
            number: coset.number(),
            representative: FaceletCube::from_cubie(&r).to_string(),
            size: COSET_SIZE,
            max_depth: options.max_depth,
            counts,
            exact_through: exact,
            one_by_one,
            unsolved,
            unsolved_indices,
            unsolved_local: listed,
            seconds: start.elapsed().as_secs_f64(),
            samples: hits,
        })
    })
}

/// After the step to `depth` (`map` holds every position reached so far): the samples reached
/// now for the first time get `depth`.
fn follow(samples: &[u64], map: &Bitmap, depth: u32, hits: &mut [Option<u32>]) {
    for (hit, &sample) in hits.iter_mut().zip(samples) {
        if hit.is_none() && map.get(sample) {
            *hit = Some(depth);
        }
    }
}

/// A solution of the position at local index `local` of `coset` of at most `depth` turns,
/// checked to solve it: through `exact_through` the shortest (the depth-limited search),
/// beyond it first the two-phase search within the depth for at most `limit`, then the
/// depth-limited search. None when none is found (the search was cancelled, or the position
/// is not within the depth).
pub fn sample_solution(
    tables: &Tables,
    coset: Coset,
    local: u64,
    depth: u32,
    exact_through: u32,
    limit: Duration,
    cancel: Option<Arc<AtomicBool>>,
) -> Option<cubefleet_tables::MoveSeq> {
    let q = coset.position(local)?;
    let mut solver = crate::Solver::new(tables);
    let mut run = |question: crate::Question, deadline: Option<Instant>| {
        let budget = Budget {
            deadline,
            cancel: cancel.clone(),
        };
        let out = solver.solve(&q, &question, 0, &budget, &mut |_| {});
        out.solution
            .filter(|s| out.status == Status::Solved && s.len() as u32 <= depth)
    };
    if depth > exact_through {
        if let Some(s) = run(
            crate::Question::two_phase(depth.max(1)),
            Some(Instant::now() + limit),
        ) {
            return Some(s);
        }
    }
    let depth_limited = crate::Question::new(
        crate::Algorithm::DepthLimited { max_depth: depth },
        cubefleet_proto::question::Metric::Htm,
        crate::MoveSet::ALL,
        None,
    )
    .ok()?;
    run(depth_limited, None)
}

/// The positions of `coset` with local indices `list`, each searched by the two-phase search
/// for a solution within `options.max_depth` turns for at most `limit`, on the pool: the
/// length of each solution found (verified by the search), in the order of `list`.
fn solve_one_by_one(
    tables: &Tables,
    coset: Coset,
    list: &[u64],
    options: &CosetOptions,
    limit: Duration,
    progress: CosetProgress<'_>,
) -> Vec<Option<u32>> {
    let depth = options.max_depth;
    let done = AtomicU64::new(0);
    let all = list.len() as u64;
    let twophase = TwoPhaseOptions {
        max_length: depth as usize,
    };
    list.par_iter()
        .map_init(
            || TwoPhaseSearcher::new(tables),
            |searcher, &i| {
                let q = coset.position(i)?;
                let budget = Budget {
                    deadline: Some(Instant::now() + limit),
                    cancel: options.cancel.clone(),
                };
                let out = searcher.solve(&q, &twophase, &budget);
                progress(
                    Stage::OneByOne,
                    depth,
                    done.fetch_add(1, Ordering::Relaxed) + 1,
                    all,
                );
                let solution = out.solution.filter(|_| out.status == Status::Solved)?;
                let length = solution.len() as u32;
                (length <= depth).then_some(length)
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The positions left at the last depth are solved one by one within it (real tables).
    #[test]
    fn positions_left_are_solved_one_by_one() {
        let dir = cubefleet_testkit::tables_dir();
        let tables = Tables::load_or_build(&dir, &|_, _, _| {}).expect("tables build and load");
        let q = cubefleet_tables::CubieCube::from_moves(
            &cubefleet_tables::MoveSeq::parse("R U F").expect("moves").0,
        );
        let coset = Coset::of(&q);
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let list: Vec<u64> = std::iter::once(coset.local_index(&q).expect("its own coset"))
            .chain((0..20).map(|_| rand::Rng::random_range(&mut rng, 0..COSET_SIZE)))
            .collect();
        let limit = Duration::from_secs(30);
        let options = CosetOptions {
            max_depth: 20,
            exact_depth: 13,
            threads: 2,
            one_by_one: Some(limit),
            cancel: None,
            samples: Vec::new(),
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("a pool");
        let found = pool
            .install(|| solve_one_by_one(&tables, coset, &list, &options, limit, &|_, _, _, _| {}));
        assert_eq!(found.len(), list.len());
        assert!(
            found.iter().all(|l| l.is_some_and(|l| l <= 20)),
            "{found:?}"
        );
    }

    /// A result reads back from its JSON as it was (the form a worker's report can carry).
    #[test]
    fn results_round_trip_through_json() {
        let r = CosetResult {
            number: 7,
            representative: FaceletCube::from_cubie(
                &Coset::from_number(7).expect("a coset").representative(),
            )
            .to_string(),
            size: COSET_SIZE,
            max_depth: 2,
            counts: vec![0, 0, 3],
            exact_through: 2,
            one_by_one: 0,
            unsolved: COSET_SIZE - 3,
            unsolved_indices: None,
            unsolved_local: None,
            seconds: 1.5,
            samples: Vec::new(),
        };
        let text = serde_json::to_string(&r).expect("serialises");
        assert!(text.contains("\"size\":19508428800"));
        assert!(text.contains("\"unsolved_indices\":null"));
        assert_eq!(
            serde_json::from_str::<CosetResult>(&text).expect("reads"),
            r
        );
    }
}
