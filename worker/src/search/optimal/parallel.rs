//! One position on several threads: the nodes two moves below the root shared out among them.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cubefleet_tables::{CubieCube, Move, MoveSeq};

use super::bounds::{combine, inverse_axes, Node, OptimalTables};
use super::ida::{LevelNode, OptimalSearcher, Stop, CHECK_EVERY};
use super::{OptimalOptions, Progress};
use crate::search::{skip_after, Budget, Outcome, Status, NO_MOVE};

/// Solves one position with `threads` threads: for each depth, the nodes two moves below the
/// root are shared out among the threads (an atomic counter hands them out), and the first
/// thread to find a solution stops the others. Prefixes that are not least in their orbit under
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
    // the prefixes: every pair of moves allowed by the move pruning (single moves too, for
    // depths below 2)
    let mut prefixes: Vec<Vec<Move>> = Vec::new();
    for m1 in Move::ALL {
        prefixes.push(vec![m1]);
        for m2 in Move::ALL {
            if !skip_after(m1.index(), m2.index()) {
                prefixes.push(vec![m1, m2]);
            }
        }
    }
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
        let metric = opts.metric;
        // single-move prefixes only when the depth is 1 (else they are the parents of pairs)
        let wanted_len = if d >= 2 { 2 } else { 1 };
        let results: Vec<Option<Vec<Move>>> = std::thread::scope(|s| {
            let handles: Vec<_> = searchers
                .iter_mut()
                .map(|srch| {
                    let (found, next, stop, prefixes) = (&found, &next, &stop, &prefixes);
                    s.spawn(move || {
                        srch.ensure_depth(d as usize + 2);
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= prefixes.len() || srch.stopped {
                                return None;
                            }
                            let pre = &prefixes[i];
                            if pre.len() != wanted_len {
                                continue;
                            }
                            let cost = metric.length(pre);
                            if cost > d {
                                continue;
                            }
                            if srch.run_prefix(root, pre, d - cost, stop) {
                                found.store(true, Ordering::Relaxed);
                                return Some(srch.path[..srch.found_len].to_vec());
                            }
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(None))
                .collect()
        });
        total_nodes += searchers.iter().map(|s| s.nodes).sum::<u64>();
        for s in &mut searchers {
            s.nodes = 0;
            s.next_check = CHECK_EVERY;
        }
        if let Some(moves) = results.into_iter().flatten().next() {
            debug_assert!(cube.apply_moves(&moves).is_solved());
            return Outcome {
                status: Status::Solved,
                solution: Some(MoveSeq(moves)),
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
        d += main.step();
        progress(Progress {
            lower_bound: d,
            nodes: total_nodes,
        });
    }
}

impl OptimalSearcher<'_> {
    /// Applies `prefix` to `root` (pruning it like the search would, by the bound and by
    /// symmetry) and searches below it with `remaining` left. True when a solution was found
    /// (in `path[..found_len]`).
    fn run_prefix(&mut self, root: Node, prefix: &[Move], remaining: u32, stop: &Stop<'_>) -> bool {
        let mut left_total = remaining + self.metric.length(prefix);
        let mut top = LevelNode::top(
            root,
            inverse_axes(&self.cube),
            self.group,
            NO_MOVE,
            left_total,
        );
        for (ply, &mv) in prefix.iter().enumerate() {
            let m = mv.index();
            if !self.symmetric_allows(ply, top.syms, m) {
                return false;
            }
            let mut child = Node::default();
            let mut bounds = [0u32; 3];
            for (a, bound) in bounds.iter_mut().enumerate() {
                self.step_axis(&top.node, &mut child, a, m);
                let entry = self.t.entry_prefetched(&child.axes[a]);
                *bound = self
                    .t
                    .axis_bound(entry, &top.node.axes[a], &mut child.axes[a]);
            }
            self.nodes += 1;
            left_total -= self.metric.cost(mv);
            if combine(bounds, left_total > 0) > left_total {
                return false;
            }
            let inv = self.inverse_child(&top.inv, m);
            top = LevelNode::top(child, inv, top.syms.fixing(m), m, left_total);
            self.path[ply] = mv;
        }
        self.search_from(prefix.len(), top, stop)
    }
}
