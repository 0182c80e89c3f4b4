//! How the length of a solution is counted: the half-turn and quarter-turn metrics, the one
//! [`Metric`] of the mode type (`cubefleet_proto::question`), and what the tables' turns cost
//! in it ([`TurnCost`]).

pub use cubefleet_proto::question::Metric;
use cubefleet_tables::Move;

/// The cost of the tables' turns in a metric.
pub trait TurnCost {
    /// The cost of `m` (1, or 2 for a half turn in the quarter-turn metric).
    fn cost(self, m: Move) -> u32;

    /// The length of a sequence.
    fn length(self, moves: &[Move]) -> u32;
}

impl TurnCost for Metric {
    #[inline]
    fn cost(self, m: Move) -> u32 {
        self.turn_cost(m.quarter_turns())
    }

    fn length(self, moves: &[Move]) -> u32 {
        self.length_of(moves.iter().map(|m| m.quarter_turns()))
    }
}
