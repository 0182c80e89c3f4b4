//! The searches of cubefleet over the precomputed tables, and what every front end does with
//! them: the CLI's `solve` and `scramble`, the Python package and the worker runtime share this
//! crate, so a position gets the same answer from each.
//!
//! - [`twophase`] (near-optimal, to a target length), [`optimal`] (proven shortest, and
//!   depth-limited in HTM or QTM, over every turn or a [`MoveSet`]), [`goal`] (the same to a
//!   partial goal, `--goal`), and [`Solver`], which runs
//!   whichever a [`Question`] (the one mode type, `cubefleet_proto::question`) asks for; their
//!   [`Budget`] and [`Outcome`];
//! - [`lines`]: lines of input read, searched and their answers checked, many at once on a pool
//!   of threads with one solver each (`cubefleet solve` and the Python package's one loop);
//! - [`row`]: the one result row ([`ResultLine`], serde: the JSON line's fields), its status the
//!   protocol's [`ResultStatus`](cubefleet_proto::ResultStatus);
//! - [`scramble`]: random-state scrambles ([`Scrambler`]);
//! - [`coset`]: every position of a coset of H = <U, D, R2, L2, F2, B2> solved at once
//!   ([`coset::solve_coset`]), on several threads.
//!
//! Each search is single-threaded, allocates nothing in its inner loop and checks its [`Budget`]
//! every few thousand nodes; a caller runs one per thread.
//!
//! No tokio, tonic, prometheus or HTTP is linked here (`cubefleet-proto` is used without its
//! `grpc` feature, for the status enum and the defaults).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use cubefleet_tables::{CubieCube, MoveSeq, Tables};

pub mod coset;
pub mod goal;
pub mod lines;
pub mod metric;
pub mod optimal;
pub mod row;
pub mod scramble;
pub mod symmetric;
pub mod twophase;

pub use lines::{read_line, solve_all, solve_line, solve_lines, Line, Request, Threads};
pub use row::{CosetRow, LineStatus, ResultLine};
pub use scramble::{ScrambleError, Scrambler};

/// How a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// A solution within the target was found (for optimal searches: a proven shortest one).
    Solved,
    /// The time budget ran out; the best solution so far (if any) is returned.
    Timeout,
    /// Two-phase: the search ended, with time to spare, without a solution within the target
    /// length; the shortest it found (longer than the target, verified) is returned.
    OverTarget,
    /// Depth-limited search: there is no solution within the limit.
    NoneWithin,
    /// The cancellation flag was raised.
    Cancelled,
    /// The question's move set cannot solve the position: an invariant of the set shows it
    /// ([`cubefleet_tables::reach::unreachable`] gives the reason).
    Unreachable,
}

impl Status {
    /// The name used in JSON output and the job system (the protocol status's name).
    pub fn as_str(self) -> &'static str {
        cubefleet_proto::ResultStatus::from(self).name()
    }
}

/// The one mapping of a search's end to the protocol's status (which names every output's
/// `status`).
impl From<Status> for cubefleet_proto::ResultStatus {
    fn from(s: Status) -> Self {
        match s {
            Status::Solved => Self::Solved,
            Status::Timeout => Self::Timeout,
            Status::OverTarget => Self::OverTarget,
            Status::NoneWithin => Self::NoneWithin,
            Status::Cancelled => Self::Cancelled,
            Status::Unreachable => Self::Unreachable,
        }
    }
}

/// The result of one search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// How it ended.
    pub status: Status,
    /// The best solution found; verified before it is returned to take the position to the
    /// question's target (to solve it, without one).
    pub solution: Option<MoveSeq>,
    /// Of a question for several solutions ([`Count`] other than one): every solution it
    /// asks for, in the canonical order (`solution` is the first), distinct canonical
    /// sequences each verified; all optimal ones for an all-optimal or count-only question
    /// (their count is the length). Empty for other questions.
    pub solutions: Vec<MoveSeq>,
    /// True only when every shorter solution has been ruled out.
    pub optimal: bool,
    /// No solution shorter than this exists (in the search's metric); 0 when nothing is known.
    pub lower_bound: u32,
    /// Search nodes visited.
    pub nodes: u64,
}

/// When a search must stop: a deadline and/or a cancellation flag shared with other threads.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    /// Stop when this instant has passed.
    pub deadline: Option<Instant>,
    /// Stop when this flag becomes true.
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Budget {
    /// No limit at all.
    pub fn unlimited() -> Budget {
        Budget::default()
    }

    /// True when the search must stop now. Cheap, but still meant to be called only every few
    /// thousand nodes.
    pub fn exhausted(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// True when stopping was asked for by cancellation (rather than the deadline).
    pub fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

/// What a running search has established so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// No solution shorter than this exists.
    pub lower_bound: u32,
    /// Nodes searched so far.
    pub nodes: u64,
}

pub use cubefleet_proto::question::{Algorithm, Count, MoveSet, Question};

/// One searcher of every kind, reused across jobs by one thread.
pub struct Solver<'t> {
    tables: &'t Tables,
    twophase: twophase::TwoPhaseSearcher<'t>,
    optimal: optimal::OptimalSearcher<'t>,
    goal: goal::GoalSearcher,
}

impl<'t> Solver<'t> {
    /// Searchers over `tables` (and the huge table for optimal searches, when given).
    pub fn new(tables: &'t Tables) -> Self {
        Solver {
            tables,
            twophase: twophase::TwoPhaseSearcher::new(tables),
            optimal: optimal::OptimalSearcher::new(optimal::OptimalTables::with_loaded_bound(
                tables,
            )),
            goal: goal::GoalSearcher::new(),
        }
    }

    /// Runs the search `question` asks for (its time budget is the caller's to put in
    /// `budget`): a solution takes `cube` to the question's target ([`relative`]), or to its
    /// goal ([`goal`]). `start_lower_bound` resumes an optimal search (lengths below it are
    /// known to have no solution); `progress` hears of each proven bound.
    pub fn solve(
        &mut self,
        cube: &CubieCube,
        question: &Question,
        start_lower_bound: u32,
        budget: &Budget,
        progress: &mut dyn FnMut(Progress),
    ) -> Outcome {
        if let Some(g) = question.goal() {
            // a goal question has the solved cube as its target (a question's invariant)
            return self
                .goal
                .solve(cube, question, &g, start_lower_bound, budget, progress);
        }
        let relative = relative(cube, question);
        let cube = &relative;
        if let Some(out) = out_of_reach(cube, question) {
            return out;
        }
        match Plan::of(question, start_lower_bound) {
            Plan::TwoPhase(opts) => self.twophase.solve(cube, &opts, budget),
            Plan::Optimal(opts) => self.optimal.solve(cube, &opts, budget, &mut |p| {
                progress(Progress {
                    lower_bound: p.lower_bound,
                    nodes: p.nodes,
                })
            }),
            Plan::Many(opts, count) => optimal::solve_many(
                optimal::OptimalTables::with_loaded_bound(self.tables),
                cube,
                &opts,
                count,
                budget,
                1,
                &mut |p| {
                    progress(Progress {
                        lower_bound: p.lower_bound,
                        nodes: p.nodes,
                    })
                },
            ),
        }
    }
}

/// The options of the search a [`Question`] asks for: several solutions
/// ([`optimal::solve_many`]) when it asks for more than one.
enum Plan {
    TwoPhase(twophase::TwoPhaseOptions),
    Optimal(optimal::OptimalOptions),
    Many(optimal::OptimalOptions, Count),
}

impl Plan {
    /// The search for `question`; an optimal one resumes from `start_lower_bound`. A two-phase
    /// question always turns every face (a [`Question`]'s invariant).
    fn of(question: &Question, start_lower_bound: u32) -> Plan {
        let max_depth = match question.algorithm() {
            Algorithm::TwoPhase { max_length } => {
                return Plan::TwoPhase(twophase::TwoPhaseOptions {
                    max_length: max_length as usize,
                })
            }
            Algorithm::Optimal => None,
            // a coset question asked of one position (its representative, say): the shortest
            // solution within the coset's depth, as the depth-limited search
            Algorithm::DepthLimited { max_depth } | Algorithm::Coset { max_depth, .. } => {
                Some(max_depth)
            }
        };
        let opts = optimal::OptimalOptions {
            metric: question.metric(),
            max_depth,
            start_lower_bound,
            moves: question.moves(),
            ..Default::default()
        };
        match question.count() {
            Count::One => Plan::Optimal(opts),
            count => Plan::Many(opts, count),
        }
    }
}

/// True when a search of `question` reads a huge, giant or colossal table when one is loaded:
/// an optimal or depth-limited search of the whole cube (a goal search has tables of its own,
/// [`goal`]; a two-phase search none).
pub fn reads_bound_table(question: &Question) -> bool {
    !question.is_two_phase() && question.goal().is_none()
}

/// The cube of the position a question asks for: its target's state (the solved cube when it
/// has none). A target index is below the number of states (a [`Question`]'s invariant), so
/// every question has one.
pub fn target_cube(question: &Question) -> CubieCube {
    cubefleet_tables::index::state_at(question.target()).unwrap_or_default()
}

/// The position whose solutions take `cube` to the question's target: `B⁻¹ · cube` for the
/// target `B`, as [`CubieCube::multiply`] composes (turns `S` applied to `cube` give `B`
/// exactly when they solve `B⁻¹ · cube`: `cube · S = B` if and only if `B⁻¹ · cube · S` is
/// solved). `cube` itself without a target. Every search runs on this position, so every
/// algorithm, metric and move set reaches the target; its distance is the distance from
/// `cube` to the target, and a move set reaches the target exactly when it solves it.
pub fn relative(cube: &CubieCube, question: &Question) -> CubieCube {
    if question.has_target() {
        target_cube(question).inverse().multiply(cube)
    } else {
        *cube
    }
}

/// True when `solution` takes `cube` to the target of `question` (the solved cube when it has
/// none), or to its goal when it has one: the check of every answer a front end hands out
/// ([`lines::solve_line`]).
pub fn reaches_target(cube: &CubieCube, question: &Question, solution: &MoveSeq) -> bool {
    let reached = cube.apply_moves(&solution.0);
    match question.goal() {
        Some(g) => g.reached_by(&reached).is_some(),
        None => reached == target_cube(question),
    }
}

/// The answer [`Status::Unreachable`] when `question` restricts the turns and an invariant of
/// its set shows that they cannot solve `cube` ([`cubefleet_tables::reach`]); None when the
/// search must tell (a restricted optimal search of a position out of reach that no invariant
/// catches runs until its budget ends, a depth-limited one answers `none_within`).
fn out_of_reach(cube: &CubieCube, question: &Question) -> Option<Outcome> {
    let moves = question.moves();
    if moves.is_all() {
        return None;
    }
    cubefleet_tables::reach::unreachable(cube, moves.mask())?;
    Some(Outcome {
        status: Status::Unreachable,
        solution: None,
        solutions: Vec::new(),
        optimal: false,
        lower_bound: 0,
        nodes: 0,
    })
}

/// Solves one position with `threads` threads, for the single hard position a user waits
/// for: a two-phase search shares the six directions out ([`twophase::solve_parallel`]), an
/// optimal or depth-limited one the first levels of its tree ([`optimal::solve_parallel`],
/// with the huge table when it is loaded); a goal search runs on this thread alone. Same
/// answers and guarantees as [`Solver::solve`] (a solution takes `cube` to the question's
/// target or goal).
pub fn solve_parallel(
    tables: &Tables,
    cube: &CubieCube,
    question: &Question,
    budget: &Budget,
    threads: usize,
) -> Outcome {
    if let Some(g) = question.goal() {
        return goal::GoalSearcher::new().solve(cube, question, &g, 0, budget, &mut |_| {});
    }
    let relative = relative(cube, question);
    let cube = &relative;
    if let Some(out) = out_of_reach(cube, question) {
        return out;
    }
    match Plan::of(question, 0) {
        Plan::TwoPhase(opts) => twophase::solve_parallel(tables, cube, &opts, budget, threads),
        Plan::Optimal(opts) => optimal::solve_parallel(
            optimal::OptimalTables::with_loaded_bound(tables),
            cube,
            &opts,
            budget,
            threads,
            &mut |_| {},
        ),
        Plan::Many(opts, count) => optimal::solve_many(
            optimal::OptimalTables::with_loaded_bound(tables),
            cube,
            &opts,
            count,
            budget,
            threads,
            &mut |_| {},
        ),
    }
}

/// "No previous move" (for [`skip_after`] at the root of a search).
pub(crate) const NO_MOVE: usize = cubefleet_tables::moves::N_MOVE;

/// Move pruning of both searches: never the same face twice in a row, and of two opposite faces
/// only the order U before D, R before L, F before B. True when move `m` is skipped after move
/// `last` (never after [`NO_MOVE`]).
#[inline]
pub(crate) const fn skip_after(last: usize, m: usize) -> bool {
    let (a, b) = (last / 3, m / 3);
    last != NO_MOVE && (a == b || a == b + 3)
}

/// [`skip_after`] as bit masks: bit `m` of `AFTER[last]` is set when move `m` may follow move
/// `last` (`AFTER[NO_MOVE]`: every move). The searches walk the set bits in increasing order,
/// which is move order.
pub(crate) const AFTER: [u32; NO_MOVE + 1] = {
    let mut after = [0u32; NO_MOVE + 1];
    let mut last = 0;
    while last <= NO_MOVE {
        let mut m = 0;
        while m < NO_MOVE {
            if !skip_after(last, m) {
                after[last] |= 1 << m;
            }
            m += 1;
        }
        last += 1;
    }
    after
};

/// The moves whose bits are set in `mask` (bit `m` for move `m`), in move order.
#[inline]
pub(crate) fn moves_in(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let m = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            m
        })
    })
}

pub(crate) use cubefleet_tables::prefetch;

/// The tables of the unit tests, built once per checkout into `target/test-tables` (the
/// integration tests and the CLI tests share the directory).
#[cfg(test)]
pub(crate) fn test_tables() -> cubefleet_tables::Tables {
    cubefleet_tables::Tables::load_or_build(&cubefleet_testkit::tables_dir(), &|_, _, _| {})
        .expect("test tables")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walking the set bits of `AFTER[last]` gives exactly the moves [`skip_after`] lets follow
    /// `last`, in move order, and nothing for an empty mask.
    #[test]
    fn after_masks_walk_the_moves_that_may_follow() {
        for (last, &mask) in AFTER.iter().enumerate() {
            let walked: Vec<usize> = moves_in(mask).collect();
            let want: Vec<usize> = (0..NO_MOVE).filter(|&m| !skip_after(last, m)).collect();
            assert_eq!(walked, want, "after {last}");
        }
        assert_eq!(moves_in(0).count(), 0);
        assert_eq!(moves_in(1 << 17 | 1).collect::<Vec<_>>(), [0, 17]);
    }
}
