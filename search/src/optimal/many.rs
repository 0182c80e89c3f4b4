//! Several solutions of one position: every optimal one, their count, or the first N in the
//! canonical order ([`Count`]), on one thread or several.
//!
//! An iteration that collects solutions does not stop at the first: it walks its whole tree
//! (the subtrees of the [`Prefixes`] of its depth, shared out among the threads as the
//! optimal search shares them, each subtree searched by a searcher with
//! [`collect_all`](super::OptimalSearcher) set), so its cost is that of proving the next depth
//! empty. Symmetry pruning is off (it drops the symmetric copies of a solution, which are
//! solutions too); every other pruning holds for every solution of the depth searched.
//!
//! Invariants of the answer: its solutions are distinct canonical sequences (no face twice in
//! a row; of two opposite faces, only U before D, R before L, F before B), each verified to
//! solve the position, in the canonical order (shortest first in the metric, then by turn
//! numbers); the first is a shortest one (`optimal`, `lower_bound` its length); for all
//! optimal ones, every solution of that length is there; for N, every solution of each length
//! listed but the last is there, and those of the last are its first in the order. The order
//! does not depend on the threads nor on the order the subtrees were searched in, so answers
//! are reproducible and comparable.

use std::sync::atomic::{AtomicUsize, Ordering};

use cubefleet_proto::question::{Count, MAX_DEPTH};
use cubefleet_tables::{CubieCube, Move, MoveSeq};

use super::bounds::OptimalTables;
use super::ida::{OptimalSearcher, Stop};
use super::prefixes::{Prefixes, REFINE_AFTER};
use super::{OptimalOptions, Progress};
use crate::metric::TurnCost;
use crate::{Budget, Outcome, Status};

/// The solutions of `cube` that `count` asks for (with `opts`: metric, move set, depth limit,
/// resumed bound), on `threads` threads (at least one). `count` is [`Count::One`] only by
/// mistake: it is answered as all optimal ones would be, cut to the first.
///
/// The solved cube has one solution, the empty one (sequences that make the identity are
/// never listed). A depth-limited search with no solution within its depth answers
/// `none_within`; a search that runs out of budget answers `timeout` (or `cancelled`) with
/// no solution and the bound proven so far.
pub fn solve_many(
    t: OptimalTables<'_>,
    cube: &CubieCube,
    opts: &OptimalOptions,
    count: Count,
    budget: &Budget,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> Outcome {
    let opts = OptimalOptions {
        no_symmetry: true,
        ..*opts
    };
    let mut searchers: Vec<OptimalSearcher<'_>> = (0..threads.max(1))
        .map(|_| OptimalSearcher::new(t))
        .collect();
    let mut d = match searchers[0].prepare(cube, &opts) {
        Ok(d) => d,
        Err(outcome) => {
            return Outcome {
                solutions: outcome.solution.iter().cloned().collect(),
                ..outcome
            }
        }
    };
    for s in &mut searchers[1..] {
        // cannot return early: the cube is not solved
        let _ = s.prepare(cube, &opts);
    }
    for s in &mut searchers {
        s.collect_all = true;
    }
    let root = t.root(cube);
    let prefixes = Prefixes::new(opts.metric, opts.moves, REFINE_AFTER);
    let limit = opts.max_depth.unwrap_or(MAX_DEPTH);
    // the solutions that end the search: N, or any (the first depth with one is all of them)
    let wanted = match count {
        Count::Shortest(n) => n as usize,
        _ => 1,
    };
    let (mut found, mut first_depth, mut nodes): (Vec<Vec<Move>>, Option<u32>, u64) =
        (Vec::new(), None, 0);
    loop {
        if d > limit {
            if first_depth.is_some() {
                break;
            }
            let mut outcome = searchers[0]
                .past_limit(d, &opts)
                .unwrap_or_else(|| searchers[0].stopped_outcome(d, budget));
            outcome.nodes = nodes;
            return outcome;
        }
        let at_depth = depth_solutions(&mut searchers, root, &prefixes, d, budget);
        nodes += searchers.iter().map(|s| s.nodes).sum::<u64>();
        for s in &mut searchers {
            s.nodes = 0;
            s.next_check = super::ida::CHECK_EVERY;
        }
        if searchers.iter().any(|s| s.stopped) || budget.exhausted() {
            let mut outcome = searchers[0].stopped_outcome(first_depth.unwrap_or(d), budget);
            outcome.nodes = nodes;
            return outcome;
        }
        if !at_depth.is_empty() {
            first_depth.get_or_insert(d);
            found.extend(at_depth);
        }
        // N: until there are N; else the first depth with a solution is all
        if found.len() >= wanted {
            break;
        }
        d += searchers[0].step();
        if first_depth.is_none() {
            progress(Progress {
                lower_bound: d,
                nodes,
            });
        }
    }
    if let Count::Shortest(n) = count {
        found.truncate(n as usize);
    }
    if count == Count::One {
        found.truncate(1);
    }
    let solutions: Vec<MoveSeq> = found.into_iter().map(MoveSeq).collect();
    debug_assert!(solutions.iter().all(|s| cube.apply_moves(&s.0).is_solved()));
    Outcome {
        status: Status::Solved,
        solution: solutions.first().cloned(),
        solutions,
        optimal: true,
        lower_bound: first_depth.unwrap_or(d),
        nodes,
    }
}

/// Every canonical solution of exactly `d` (in the searchers' metric) below `root`, distinct,
/// in the canonical order: the subtrees of the prefixes of depth `d` shared out among the
/// searchers (an atomic counter hands them out). Stops early, with what it has, when the
/// budget runs out (a searcher is then `stopped`).
fn depth_solutions(
    searchers: &mut [OptimalSearcher<'_>],
    root: super::bounds::Node,
    prefixes: &Prefixes,
    d: u32,
    budget: &Budget,
) -> Vec<Vec<Move>> {
    let next = AtomicUsize::new(0);
    let stop = Stop {
        budget,
        found: None,
    };
    let order = prefixes.at_depth(d);
    let metric = searchers[0].metric;
    let walk = |srch: &mut OptimalSearcher<'_>| {
        srch.ensure_depth(d as usize + 2);
        srch.collected.clear();
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            if srch.stopped {
                break;
            }
            let pre = prefixes.get(i);
            srch.run_prefix(root, &pre.moves, d - pre.cost, &stop);
        }
    };
    match &mut *searchers {
        [one] => walk(one),
        many => std::thread::scope(|s| {
            for srch in many.iter_mut() {
                s.spawn(|| walk(srch));
            }
        }),
    }
    let mut all: Vec<Vec<Move>> = searchers
        .iter_mut()
        .flat_map(|s| std::mem::take(&mut s.collected))
        .collect();
    sort_canonical(&mut all, metric);
    all
}

/// Sorts solutions into the canonical order (by length in `metric`, then by turn numbers) and
/// drops repeats.
fn sort_canonical(solutions: &mut Vec<Vec<Move>>, metric: super::Metric) {
    solutions.sort_by_cached_key(|s| {
        (
            metric.length(s),
            s.iter().map(|m| m.index() as u8).collect::<Vec<u8>>(),
        )
    });
    solutions.dedup();
}
