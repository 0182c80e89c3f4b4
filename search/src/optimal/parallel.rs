//! One position on several threads: the subtrees below the prefixes of three moves (four
//! once iterations are large, see [`Prefixes`]) shared out among them, the densest first.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cubefleet_tables::{CubieCube, Move, MoveSeq};

use super::bounds::OptimalTables;
use super::ida::{OptimalSearcher, Stop, CHECK_EVERY};
use super::prefixes::Prefixes;
use super::{OptimalOptions, Progress};
use crate::{Budget, Outcome, Status};

/// What one thread brings back from a depth: the solution it found, if any, and the nodes of
/// each prefix it searched (by index in the [`Prefixes`]).
type ThreadResult = (Option<Vec<Move>>, Vec<(usize, u64)>);

/// Solves one position with `threads` threads: for each depth, the subtrees of the
/// [`Prefixes`] are shared out among the threads in their order (an atomic counter hands them
/// out), and the first thread to find a solution stops the others. Prefixes that are not least in their orbit under
/// the position's symmetries are skipped. Same results and guarantees as
/// [`OptimalSearcher::solve`]; `threads <= 1` runs that directly.
pub fn solve_parallel(
    t: OptimalTables<'_>,
    cube: &CubieCube,
    opts: &OptimalOptions,
    budget: &Budget,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> Outcome {
    let mut main = OptimalSearcher::new(t);
    if threads <= 1 {
        return main.solve(cube, opts, budget, progress);
    }
    let mut d = match main.prepare(cube, opts) {
        Ok(d) => d,
        Err(outcome) => return outcome,
    };
    let root = t.root(cube);
    let mut searchers: Vec<OptimalSearcher<'_>> = (0..threads)
        .map(|_| {
            let mut s = OptimalSearcher::new(t);
            // prepare cannot return early: the cube is not solved
            let _ = s.prepare(cube, opts);
            s
        })
        .collect();
    let mut prefixes = Prefixes::new(opts.metric, opts.moves, main.prefix_refinement());
    let mut total_nodes = 0u64;
    loop {
        if let Some(mut outcome) = main.past_limit(d, opts) {
            outcome.nodes = total_nodes;
            return outcome;
        }
        let found = AtomicBool::new(false);
        let next = AtomicUsize::new(0);
        let stop = Stop {
            budget,
            found: Some(&found),
        };
        let order = prefixes.at_depth(d);
        let results: Vec<ThreadResult> = std::thread::scope(|s| {
            let handles: Vec<_> = searchers
                .iter_mut()
                .map(|srch| {
                    let (found, next, stop, prefixes, order) =
                        (&found, &next, &stop, &prefixes, &order);
                    s.spawn(move || {
                        srch.ensure_depth(d as usize + 2);
                        let mut counts = Vec::new();
                        loop {
                            let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                                return (None, counts);
                            };
                            if srch.stopped {
                                return (None, counts);
                            }
                            let pre = prefixes.get(i);
                            let before = srch.nodes;
                            if srch.run_prefix(root, &pre.moves, d - pre.cost, stop) {
                                found.store(true, Ordering::Relaxed);
                                return (Some(srch.path[..srch.found_len].to_vec()), counts);
                            }
                            counts.push((i, srch.nodes - before));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or((None, Vec::new())))
                .collect()
        });
        total_nodes += searchers.iter().map(|s| s.nodes).sum::<u64>();
        for s in &mut searchers {
            s.nodes = 0;
            s.next_check = CHECK_EVERY;
        }
        let mut solution = None;
        for (moves, counts) in results {
            solution = solution.or(moves);
            for (i, nodes) in counts {
                prefixes.record(i, nodes);
            }
        }
        if let Some(moves) = solution {
            debug_assert!(cube.apply_moves(&moves).is_solved());
            return Outcome {
                status: Status::Solved,
                solution: Some(MoveSeq(moves)),
                solutions: Vec::new(),
                optimal: true,
                lower_bound: d,
                nodes: total_nodes,
            };
        }
        if searchers.iter().any(|s| s.stopped) || budget.exhausted() {
            let mut outcome = main.stopped_outcome(d, budget);
            outcome.nodes = total_nodes;
            return outcome;
        }
        prefixes.reorder();
        d += main.step();
        progress(Progress {
            lower_bound: d,
            nodes: total_nodes,
        });
    }
}
