//! Lines of input solved here and now, the one loop of `cubefleet solve` and of the Python
//! package's `solve`, `solve_many` and `solve_file`: each line is read ([`read_line`]),
//! searched with a [`Solver`] and its answer checked by applying it to the position before it
//! is handed back ([`solve_line`]); many lines are solved on a pool of threads, one solver per
//! thread ([`solve_lines`]).
//!
//! Invariants:
//! - a row's `solution` always takes its position to the question's target (solves it, without
//!   one), or to its goal (`goal_reached` naming where), with turns of the question's move set:
//!   an answer that does not (which would be a bug of a search) is never written; the row says
//!   `error` instead;
//! - a row's `index` is the line's position in the input, whatever thread answered it;
//! - every line is answered exactly once, blank and `#` lines too (`skipped`, except in the net
//!   format, whose blank lines separate nets), refused lines with the reason (`invalid`);
//! - the same line, mode and budget give the same row from every front end (up to `millis`,
//!   and the `nodes` of a search that ran out of time).

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cubefleet_proto::ResultStatus;
use cubefleet_tables::{
    is_blank_or_comment, parse_position, CubieCube, InputFormat, MoveSeq, Tables,
};
use rayon::iter::{ParallelBridge, ParallelIterator};

use crate::metric::TurnCost;
use crate::row::{LineStatus, ResultLine};
use crate::{reaches_target, relative, solve_parallel, Budget, Question, Solver};

/// What one call asks of every line.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// The search, its turns and its time per line (counted from the moment the line is read).
    pub mode: Question,
    /// How positions are written.
    pub format: InputFormat,
    /// Every search stops when this flag becomes true (its row says `cancelled`, with the best
    /// solution so far if any).
    pub cancel: Option<Arc<AtomicBool>>,
}

/// A line of input as read for a search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// A blank or `#` comment line: no position, answered `skipped`.
    Skipped,
    /// Not a position: the reason (answered `invalid`).
    Invalid(String),
    /// The position.
    Position(CubieCube),
}

/// `input` read in `format`: a blank or `#` line is [`Line::Skipped`] (except in the net
/// format, where blank lines separate nets), anything else a position or the reason it is
/// not one.
pub fn read_line(input: &str, format: InputFormat) -> Line {
    if !matches!(format, InputFormat::Net) && is_blank_or_comment(input) {
        return Line::Skipped;
    }
    match parse_position(input, format) {
        Ok(cube) => Line::Position(cube),
        Err(e) => Line::Invalid(e.to_string()),
    }
}

/// Reads and solves line `index` (text `input`) with `solver`, or with `threads` threads of its
/// own when more than one ([`solve_parallel`]), and checks the answer against the position:
/// it must reach the question's target ([`reaches_target`]).
/// The row's `millis` counts from before the line is read.
pub fn solve_line(
    solver: &mut Solver<'_>,
    tables: &Tables,
    req: &Request,
    threads: usize,
    index: usize,
    input: &str,
) -> ResultLine {
    let start = Instant::now();
    let mut line = ResultLine::new(index, input);
    match read_line(input, req.format) {
        Line::Skipped => line.status = LineStatus::Result(ResultStatus::Skipped),
        Line::Invalid(e) => line.error = Some(e),
        Line::Position(cube) => {
            let budget = Budget {
                deadline: req.mode.timeout().map(|t| start + t),
                cancel: req.cancel.clone(),
            };
            let out = if threads > 1 {
                solve_parallel(tables, &cube, &req.mode, &budget, threads)
            } else {
                solver.solve(&cube, &req.mode, 0, &budget, &mut |_| {})
            };
            line.status = LineStatus::Result(out.status.into());
            let checks = out.solution.iter().chain(&out.solutions);
            match checks
                .map(|s| check_answer(&cube, &req.mode, s))
                .find_map(Result::err)
            {
                Some(e) => {
                    line.status = LineStatus::Error;
                    line.error = Some(e);
                }
                None => {
                    if let Some(s) = &out.solution {
                        line.solution = s.to_string();
                        line.length = Some(req.mode.metric().length(&s.0));
                        line.goal_reached = goal_reached(&req.mode, &cube, s);
                    }
                    let count = req.mode.count();
                    if count.is_many() && out.status == crate::Status::Solved {
                        line.count = Some(out.solutions.len() as u64);
                        line.solutions = (count.listed() > 0).then(|| {
                            let listed = out.solutions.iter().take(count.listed());
                            listed.map(ToString::to_string).collect()
                        });
                    }
                }
            }
            line.optimal = out.optimal;
            line.nodes = Some(out.nodes);
            if !req.mode.is_two_phase() {
                line.lower_bound = Some(out.lower_bound);
            }
            if out.status == crate::Status::Unreachable {
                line.error = match req.mode.goal() {
                    Some(_) => Some(UNREACHED_GOAL.into()),
                    None => cubefleet_tables::reach::unreachable(
                        &relative(&cube, &req.mode),
                        req.mode.moves().mask(),
                    ),
                };
            }
            line.moves = (!req.mode.moves().is_all()).then(|| req.mode.moves().to_string());
            line.to = target_facelets(&req.mode);
            line.goal = req.mode.goal().map(|g| g.to_string());
        }
    }
    line.millis = start.elapsed().as_secs_f64() * 1000.0;
    line
}

/// Why a goal search answers `unreachable`: its tables show that the turns never bring the
/// goal's pieces there (or no solution exists within the deepest search).
pub const UNREACHED_GOAL: &str = "the turns of the move set never reach the goal from here";

/// Where a stored row's solution reached the question's goal ([`goal_reached`]), its
/// position read from the row's `input` (as a batch reads a line) or `state_index`: what
/// `results` and the Python client write as `goal_reached`. None without a goal or a
/// solution, or when the row's position or solution does not read.
pub fn row_goal_reached(question: &Question, row: &ResultLine) -> Option<String> {
    question.goal()?;
    let solution = MoveSeq::parse(&row.solution).ok()?;
    let cube = match &row.state_index {
        Some(index) => cubefleet_tables::index::state_at(index.parse().ok()?).ok()?,
        None => parse_position(&row.input, InputFormat::Auto).ok()?,
    };
    row.length?;
    goal_reached(question, &cube, &solution)
}

/// Where `solution` takes `cube` to the question's goal: the label of the first alternative
/// it reaches (`cross on U`, [`Goal::reached_by`](cubefleet_proto::goal::Goal::reached_by)),
/// as a row's `goal_reached` writes it; None without a goal or when it reaches none.
pub fn goal_reached(question: &Question, cube: &CubieCube, solution: &MoveSeq) -> Option<String> {
    let goal = question.goal()?;
    goal.reached_by(&cube.apply_moves(&solution.0))
        .map(|a| a.label)
}

/// Checks an answer where it is handed out (the searcher verified it already): it must take
/// `cube` to the question's target with turns of its move set; the reason when it does not
/// (a bug of a search, never written as an answer).
fn check_answer(
    cube: &CubieCube,
    question: &Question,
    s: &cubefleet_tables::MoveSeq,
) -> Result<(), String> {
    let set = question.moves();
    if !reaches_target(cube, question, s) {
        return Err(format!(
            "internal error: {s} does not {}",
            if question.goal().is_some() {
                "reach the goal"
            } else if question.has_target() {
                "reach the target"
            } else {
                "solve it"
            }
        ));
    }
    if let Some(m) = set.first_outside(s.0.iter().map(|m| m.index())) {
        return Err(format!(
            "internal error: {s} turns {}, outside the move set {set}",
            cubefleet_tables::Move::from_index(m).notation()
        ));
    }
    Ok(())
}

/// The facelet string of the question's target, as a row's `to` writes it; None without a
/// target (the solved cube).
pub fn target_facelets(question: &Question) -> Option<String> {
    question.has_target().then(|| {
        cubefleet_tables::FaceletCube::from_cubie(&crate::target_cube(question)).to_string()
    })
}

/// How the threads of [`solve_lines`] are shared out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Threads {
    /// Lines searched at once (the pool's threads), at least 1.
    pub lines: usize,
    /// Threads of each line's search (more than 1: [`solve_parallel`]), at least 1.
    pub per_line: usize,
}

impl Threads {
    /// `threads` lines at once, one thread each.
    pub fn one_each(threads: usize) -> Threads {
        Threads {
            lines: threads.max(1),
            per_line: 1,
        }
    }

    /// `cubefleet solve`'s: a single line gets every thread, several get one thread each.
    pub fn for_lines(lines: usize, threads: usize) -> Threads {
        if lines == 1 {
            Threads {
                lines: 1,
                per_line: threads.max(1),
            }
        } else {
            Threads::one_each(threads)
        }
    }
}

/// Solves `inputs` (line `i` is `inputs[i]`) with [`solve_line`] on a pool of `threads.lines`
/// threads of its own, each with one [`Solver`] for all its lines. Lines are taken in input
/// order, one at a time, by whichever thread is free; `emit` is called on the thread that
/// answered, once per line, as soon as its row is ready (so not in input order).
///
/// Fails only when the pool's threads cannot be started.
pub fn solve_lines<S: AsRef<str> + Sync>(
    tables: &Tables,
    req: &Request,
    inputs: &[S],
    threads: Threads,
    emit: impl Fn(ResultLine) + Sync,
) -> Result<(), rayon::ThreadPoolBuildError> {
    if inputs.is_empty() {
        return Ok(());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.lines.clamp(1, inputs.len()))
        .thread_name(|i| format!("solve-{i}"))
        .build()?;
    pool.install(|| {
        // bridged from the sequential iterator: each free thread takes the next line (input
        // order, like a shared counter), and each of the pool's jobs (about one per thread)
        // makes one solver for all the lines it takes
        inputs
            .iter()
            .enumerate()
            .par_bridge()
            .map_init(
                || Solver::new(tables),
                |solver, (i, input)| {
                    solve_line(solver, tables, req, threads.per_line, i, input.as_ref())
                },
            )
            .for_each(&emit);
    });
    Ok(())
}

/// [`solve_lines`] collected: one row per line, in input order.
pub fn solve_all<S: AsRef<str> + Sync>(
    tables: &Tables,
    req: &Request,
    inputs: &[S],
    threads: Threads,
) -> Result<Vec<ResultLine>, rayon::ThreadPoolBuildError> {
    let done = Mutex::new(Vec::with_capacity(inputs.len()));
    solve_lines(tables, req, inputs, threads, |line| {
        done.lock().unwrap_or_else(|e| e.into_inner()).push(line)
    })?;
    let mut rows = done.into_inner().unwrap_or_else(|e| e.into_inner());
    rows.sort_unstable_by_key(|r| r.index);
    Ok(rows)
}
