//! Figures for `cubefleet bench optimal`: time, length and nodes per solve.

use std::time::Instant;

use cubefleet_tables::CubieCube;

use super::{solve_parallel, OptimalOptions, OptimalSearcher, OptimalTables};
use crate::search::{Budget, Outcome};

/// Figures for `cubefleet bench optimal`: one solve per position.
#[derive(Clone, Debug, Default)]
pub struct BenchStats {
    /// Seconds per solve, in input order.
    pub seconds: Vec<f64>,
    /// Solution lengths (in the metric), `None` when the budget ran out.
    pub lengths: Vec<Option<u32>>,
    /// Nodes over all solves.
    pub nodes: u64,
}

impl BenchStats {
    /// Mean seconds per solve (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.seconds.is_empty() {
            0.0
        } else {
            self.seconds.iter().sum::<f64>() / self.seconds.len() as f64
        }
    }

    /// Median seconds per solve (0 when empty).
    pub fn median(&self) -> f64 {
        let mut s = self.seconds.clone();
        s.sort_by(f64::total_cmp);
        match s.len() {
            0 => 0.0,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }

    /// Longest solve in seconds.
    pub fn max(&self) -> f64 {
        self.seconds.iter().copied().fold(0.0, f64::max)
    }

    /// Nodes per second over all solves.
    pub fn nodes_per_second(&self) -> f64 {
        let total: f64 = self.seconds.iter().sum();
        if total > 0.0 {
            self.nodes as f64 / total
        } else {
            0.0
        }
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
        stats.nodes += outcome.nodes;
        stats
            .lengths
            .push(outcome.solution.as_ref().map(|s| metric.length(&s.0)));
        each(i, &outcome, secs);
    }
    stats
}
