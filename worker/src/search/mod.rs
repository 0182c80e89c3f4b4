//! Searches over the precomputed tables. Each search is single-threaded, allocates nothing in its
//! inner loop and checks its [`Budget`] every few thousand nodes; a worker runs one per thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use cubefleet_tables::MoveSeq;

pub mod optimal;
pub mod twophase;

/// How a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// A solution within the target was found (for optimal searches: a proven shortest one).
    Solved,
    /// The time budget ran out; the best solution so far (if any) is returned.
    Timeout,
    /// Depth-limited search: there is no solution within the limit.
    NoneWithin,
    /// The cancellation flag was raised.
    Cancelled,
}

impl Status {
    /// The name used in JSON output and the job system.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Solved => "solved",
            Status::Timeout => "timeout",
            Status::NoneWithin => "none_within",
            Status::Cancelled => "cancelled",
        }
    }
}

/// The result of one search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// How it ended.
    pub status: Status,
    /// The best solution found; verified to solve the position before it is returned.
    pub solution: Option<MoveSeq>,
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
