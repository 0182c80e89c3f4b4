//! Figures for `cubefleet bench optimal`: time, length and nodes per solve.

use std::time::Instant;

use cubefleet_tables::CubieCube;

use cubefleet_search::metric::TurnCost;
use cubefleet_search::optimal::{solve_parallel, OptimalOptions, OptimalSearcher, OptimalTables};
use cubefleet_search::{Budget, Outcome, Status};

use crate::distribution::Distribution;

/// Figures for `cubefleet bench optimal`: one solve per position.
///
/// Invariant: `seconds`, `nodes`, `lengths` and `statuses` have one entry per position
/// benchmarked so far, in input order (entry `i` of each is position `i`'s).
#[derive(Clone, Debug, Default)]
pub struct BenchStats {
    /// Seconds per solve.
    pub seconds: Vec<f64>,
    /// Search nodes per solve.
    pub nodes: Vec<u64>,
    /// Solution lengths (in the metric), `None` when the budget ran out.
    pub lengths: Vec<Option<u32>>,
    /// How each solve ended.
    pub statuses: Vec<Status>,
}

impl BenchStats {
    /// Number of positions.
    pub fn len(&self) -> usize {
        self.seconds.len()
    }

    /// True when no position has been benchmarked.
    pub fn is_empty(&self) -> bool {
        self.seconds.is_empty()
    }

    /// The distribution of seconds per solve.
    pub fn seconds_distribution(&self) -> Distribution {
        Distribution::of(&self.seconds)
    }

    /// The distribution of nodes per solve (exact while a solve visits under 2^53 nodes).
    pub fn nodes_distribution(&self) -> Distribution {
        let nodes: Vec<f64> = self.nodes.iter().map(|&n| n as f64).collect();
        Distribution::of(&nodes)
    }

    /// Nodes over all solves.
    pub fn total_nodes(&self) -> u64 {
        self.nodes.iter().sum()
    }

    /// Nodes per second over all solves: total nodes over total seconds (0 when no time passed),
    /// so long solves weigh more than in a mean of [`BenchStats::position_nodes_per_second`].
    pub fn nodes_per_second(&self) -> f64 {
        nodes_per_second(self.total_nodes(), self.seconds.iter().sum())
    }

    /// Nodes per second of position `i` alone (0 when it took no measurable time).
    ///
    /// Panics when `i >= self.len()`.
    pub fn position_nodes_per_second(&self, i: usize) -> f64 {
        nodes_per_second(self.nodes[i], self.seconds[i])
    }
}

/// `nodes` over `seconds`; 0 when `seconds` is not above 0 (a solve too short to measure).
pub fn nodes_per_second(nodes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        nodes as f64 / seconds
    } else {
        0.0
    }
}

/// Solves each of `cubes` optimally with `opts`, one after the other on `threads` threads (1:
/// the single-threaded searcher), each within `budget_per_solve` when given; `each` is called
/// after every solve with its index and outcome (for printing as it goes).
pub fn bench_optimal(
    t: OptimalTables<'_>,
    cubes: &[CubieCube],
    opts: &OptimalOptions,
    threads: usize,
    budget_per_solve: Option<std::time::Duration>,
    each: &mut dyn FnMut(usize, &Outcome, f64),
) -> BenchStats {
    let mut stats = BenchStats::default();
    let mut searcher = OptimalSearcher::new(t);
    let metric = opts.metric;
    for (i, cube) in cubes.iter().enumerate() {
        let budget = Budget {
            deadline: budget_per_solve.map(|d| Instant::now() + d),
            cancel: None,
        };
        let start = Instant::now();
        let outcome = if threads <= 1 {
            searcher.solve(cube, opts, &budget, &mut |_| {})
        } else {
            solve_parallel(t, cube, opts, &budget, threads, &mut |_| {})
        };
        let secs = start.elapsed().as_secs_f64();
        stats.seconds.push(secs);
        stats.nodes.push(outcome.nodes);
        stats
            .lengths
            .push(outcome.solution.as_ref().map(|s| metric.length(&s.0)));
        stats.statuses.push(outcome.status);
        each(i, &outcome, secs);
    }
    stats
}
