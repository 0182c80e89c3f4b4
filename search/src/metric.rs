//! How the length of a solution is counted: the half-turn and quarter-turn metrics.

use cubefleet_tables::Move;

/// How the length of a solution is counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Half-turn metric: each of the 18 face turns counts 1.
    #[default]
    Htm,
    /// Quarter-turn metric: quarter turns count 1, half turns 2.
    Qtm,
}

impl Metric {
    /// The cost of `m` in this metric (1 or 2).
    #[inline]
    pub fn cost(self, m: Move) -> u32 {
        match self {
            Metric::Htm => 1,
            Metric::Qtm => m.qtm_length(),
        }
    }

    /// The length of a sequence in this metric.
    pub fn length(self, moves: &[Move]) -> u32 {
        moves.iter().map(|&m| self.cost(m)).sum()
    }

    /// The name used on the command line and in JSON (`htm`, `qtm`).
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Htm => "htm",
            Metric::Qtm => "qtm",
        }
    }
}
