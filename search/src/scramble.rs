//! Random-state scrambles, as the WCA makes them: a uniformly random position is solved by the
//! two-phase search and the solution inverted, so every scramble reaches a truly random state.
//! `cubefleet scramble` and the Python package's `scramble` both draw from [`Scrambler`]: the
//! same seed gives the same scrambles from either.

use cubefleet_tables::{CubieCube, MoveSeq, Tables};
use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::twophase::{TwoPhaseOptions, TwoPhaseSearcher};
use crate::Budget;

/// Why no scramble was made (neither happens with correct tables and searches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScrambleError {
    /// The search found no solution for a random state.
    NoSolution,
    /// The inverted solution does not reach the state drawn.
    Unreached,
}

impl std::fmt::Display for ScrambleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ScrambleError::NoSolution => "no solution found for a random state",
            ScrambleError::Unreached => "scramble does not reach its state",
        })
    }
}

impl std::error::Error for ScrambleError {}

/// Draws random-state scrambles one after the other.
///
/// Invariants: the states are drawn by [`CubieCube::random`] from a [`StdRng`] seeded with the
/// seed given (the operating system's randomness without one), one draw per scramble, so a
/// seed fixes the whole sequence; every scramble returned reaches its state (checked) and has
/// at most `max_length` moves unless the search found none that short (it then gives the
/// shortest it found).
pub struct Scrambler<'t> {
    rng: StdRng,
    searcher: TwoPhaseSearcher<'t>,
    opts: TwoPhaseOptions,
}

impl<'t> Scrambler<'t> {
    /// Scrambles of at most `max_length` moves (1 or more), searched over `tables`.
    pub fn new(tables: &'t Tables, seed: Option<u64>, max_length: u32) -> Self {
        Scrambler {
            rng: match seed {
                Some(s) => StdRng::seed_from_u64(s),
                None => StdRng::from_os_rng(),
            },
            searcher: TwoPhaseSearcher::new(tables),
            opts: TwoPhaseOptions {
                max_length: max_length as usize,
            },
        }
    }

    /// The next scramble.
    pub fn next_scramble(&mut self) -> Result<MoveSeq, ScrambleError> {
        let cube = CubieCube::random(&mut self.rng);
        let out = self.searcher.solve(&cube, &self.opts, &Budget::unlimited());
        let scramble = out.solution.ok_or(ScrambleError::NoSolution)?.inverse();
        if CubieCube::from_moves(&scramble.0) != cube {
            return Err(ScrambleError::Unreached);
        }
        Ok(scramble)
    }
}
