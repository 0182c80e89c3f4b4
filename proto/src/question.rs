//! The one mode type: a [`Question`] is everything a job asks of a search — the algorithm
//! (two-phase to a length, optimal, depth-limited), the metric lengths are counted in, the
//! turns the answer may use ([`MoveSet`]), the position the answer must reach (its target, by
//! state index; the solved cube unless said), or the partial goal it must reach instead
//! ([`Goal`], `--goal`), how many solutions ([`Count`]) and the time budget per position. Its
//! limits and defaults are named here once ([`MAX_DEPTH`], [`MAX_SECONDS`], [`MAX_SOLUTIONS`],
//! [`DEFAULT_MAX_LENGTH`](crate::DEFAULT_MAX_LENGTH)), every value is checked once, when a
//! question is made ([`Question::new`] from a front end's arguments, [`Question::from_wire`]
//! from the protocol's [`Mode`]), and refused with a [`ModeError`] naming the field, and the
//! protocol form is made here only ([`Question::to_wire`]). The CLI, the Python package, the
//! coordinator and the worker hold a `Question`; the search crate runs one.
//!
//! The protocol keeps its own `Metric` enum (with an unspecified value, read as HTM); this
//! module's [`Metric`] is the one the code matches on.

use std::fmt;
use std::time::Duration;

use crate::goal::Goal;
use crate::{mode::Kind, CosetSolve, DepthLimited, Mode, Optimal, TwoPhase, DEFAULT_MAX_LENGTH};

/// The deepest depth-limited search, and the highest lower bound a job may resume from, in
/// the metric's moves: every position is solved within 20 half turns or 26 quarter turns, so
/// this leaves room without letting a search run away.
pub const MAX_DEPTH: u32 = 40;

/// The longest time budget, in seconds: a year (the limit of every time a peer or a flag
/// gives; longer would mean "never", which is said by giving none).
pub const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// The protocol revision a worker must speak to be leased a job whose question restricts the
/// turns ([`Question::needs_protocol`]): older workers do not read `Mode.moves`.
pub const MOVES_PROTOCOL: u32 = 5;
const _: () = assert!(MOVES_PROTOCOL <= crate::PROTOCOL);

/// The protocol revision a worker must speak to be leased a job whose question has a target
/// other than the solved cube ([`Question::needs_protocol`]): older workers do not read
/// `Mode.to_high` and `Mode.to_low`, and would solve to the solved cube.
pub const TARGET_PROTOCOL: u32 = 6;
const _: () = assert!(TARGET_PROTOCOL <= crate::PROTOCOL);

/// The protocol revision a worker must speak to be leased a job whose question asks for a
/// partial goal ([`Question::needs_protocol`]): older workers do not read `Mode.goal`, and
/// would solve the whole cube.
pub const GOAL_PROTOCOL: u32 = 7;
const _: () = assert!(GOAL_PROTOCOL <= crate::PROTOCOL);
/// The protocol revision a worker must speak to be leased a job whose question asks for more
/// than one solution ([`Question::needs_protocol`]): older workers do not read
/// `Mode.solutions` and `Mode.all_solutions`, and would answer with one.
pub const SOLUTIONS_PROTOCOL: u32 = 7;
const _: () = assert!(SOLUTIONS_PROTOCOL <= crate::PROTOCOL);

/// The most solutions a question may ask for (`--solutions N`: N at most this), and the most
/// an answer lists: an all-optimal answer with more optimal solutions lists the first this
/// many (in the canonical order) with the count of all, which is then spot-checked like a
/// count-only answer ([`spot_ranks`]). A job's record holds at most this many solutions
/// (about 60 KB).
pub const MAX_SOLUTIONS: u32 = 1000;

/// The solutions a count the answer does not list is spot-checked with: the lease's seed
/// names this many ranks ([`spot_ranks`]), whose solutions the answer must include.
pub const SPOT_CHECKS: usize = 3;

/// The ranks, in the canonical order of a question's solutions (shortest first, then by turn
/// numbers; 0 the first), that an answer claiming `count` solutions, of which it lists the
/// first `listed`, must include beyond its list: up to [`SPOT_CHECKS`] distinct ranks in
/// `listed..count`, increasing, drawn from `seed` (a lease's `spot_seed`, unknown to the
/// worker before the lease). The last rank, `count - 1`, is always among them when any is
/// (so a count larger than the solutions is caught unless the worker finds that many). Empty
/// when the answer lists every solution. The one rule of the worker and the coordinator.
pub fn spot_ranks(seed: u64, listed: u64, count: u64) -> Vec<u64> {
    if count <= listed {
        return Vec::new();
    }
    let span = count - listed;
    let want = span.min(SPOT_CHECKS as u64) as usize;
    let mut ranks = vec![count - 1];
    let mut state = seed;
    // splitmix64: a fixed rule both sides compute alike; more draws than ranks, for repeats
    for _ in 0..4 * SPOT_CHECKS {
        if ranks.len() == want {
            break;
        }
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let rank = listed + z % span;
        if !ranks.contains(&rank) {
            ranks.push(rank);
        }
    }
    ranks.sort_unstable();
    ranks
}
/// The protocol revision a worker must speak to be leased a coset job
/// ([`Question::needs_protocol`]): older workers do not know `Mode.coset`.
pub const COSET_PROTOCOL: u32 = 7;
const _: () = assert!(COSET_PROTOCOL <= crate::PROTOCOL);

/// The deepest coset search: God's number (every position is within it, so a coset solved to
/// it has no unsolved position).
pub const MAX_COSET_DEPTH: u32 = 20;

/// The exact depth of a coset search when none is given (`cubefleet coset solve`'s default):
/// each depth of the phase-1 search costs about 7 times the one before.
pub const DEFAULT_EXACT_DEPTH: u32 = 13;

/// The number of states of the cube, 43,252,003,274,489,856,000 (`8! * 3^7 * 12! / 2 * 2^11`):
/// a target's state index is below it. The tables crate's `index::N_STATES`, which a test of
/// the search crate holds it to (this crate does not depend on the tables by default).
pub const N_STATES: u128 = 40_320 * 2_187 * 239_500_800 * 2_048;

/// How the length of a solution is counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Half-turn metric: each of the 18 face turns counts 1.
    #[default]
    Htm,
    /// Quarter-turn metric: quarter turns count 1, half turns 2.
    Qtm,
}

impl Metric {
    /// The name used on the command line, in Python and in JSON (`htm`, `qtm`).
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Htm => "htm",
            Metric::Qtm => "qtm",
        }
    }

    /// The metric named `name` (`htm` or `qtm`, as [`Metric::as_str`] writes them).
    pub fn parse(name: &str) -> Result<Metric, String> {
        [Metric::Htm, Metric::Qtm]
            .into_iter()
            .find(|m| m.as_str() == name)
            .ok_or_else(|| format!("metric {name:?}: give \"htm\" or \"qtm\""))
    }

    /// The cost of a turn of `quarter_turns` (1, 2 or 3) clockwise quarter turns: 1, or 2 for
    /// a half turn in the quarter-turn metric.
    #[inline]
    pub fn turn_cost(self, quarter_turns: u8) -> u32 {
        match self {
            Metric::Qtm if quarter_turns == 2 => 2,
            _ => 1,
        }
    }

    /// The length of a sequence of turns given by their clockwise quarter turns (1, 2 or 3
    /// each): the one count of a solution's length (the searches' and the coordinator's).
    pub fn length_of(self, quarter_turns: impl IntoIterator<Item = u8>) -> u32 {
        quarter_turns.into_iter().map(|q| self.turn_cost(q)).sum()
    }

    /// God's number in this metric: every position is solved within it (20 half turns, 26
    /// quarter turns).
    pub fn gods_number(self) -> u32 {
        match self {
            Metric::Htm => 20,
            Metric::Qtm => 26,
        }
    }

    /// The metric a protocol value names (unspecified is HTM); anything else is refused.
    fn from_wire(field: &'static str, value: i32) -> Result<Metric, ModeError> {
        match crate::Metric::try_from(value) {
            Ok(crate::Metric::Qtm) => Ok(Metric::Qtm),
            Ok(crate::Metric::Htm | crate::Metric::Unspecified) => Ok(Metric::Htm),
            Err(_) => Err(ModeError::new(
                field,
                "--metric",
                format!("is {value}: give HTM (1) or QTM (2)"),
            )),
        }
    }

    /// The protocol's value of this metric.
    fn to_wire(self) -> i32 {
        match self {
            Metric::Htm => crate::Metric::Htm as i32,
            Metric::Qtm => crate::Metric::Qtm as i32,
        }
    }
}

/// The number of face turns: 6 faces, 3 turns each.
const N_TURNS: u32 = 18;

/// The faces in turn-number order.
const FACES: &[u8; 6] = b"URFDLB";

/// A set of face turns a search may use: bit `3 * face + quarter turns - 1` is set for each
/// turn in it (faces U R F D L B, the numbering of `Completion.moves` and of the tables'
/// `Move::index`).
///
/// Invariants: only the 18 low bits are set, at least one is, and each face gives all its
/// turns, its half turn only, or none; so the set is closed under inverse, and a search may
/// step from a position or from its inverse by the same set. Written as faces
/// (`R` every turn of R, `R2` its half turn only), comma-separated: `R,U`,
/// `U,D,R2,L2,F2,B2`; or `-` and faces left out: `-B` every turn but B's.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct MoveSet(u32);

impl MoveSet {
    /// Every turn (no restriction).
    pub const ALL: MoveSet = MoveSet((1 << N_TURNS) - 1);

    /// The bit mask, bit `3 * face + quarter turns - 1` per turn.
    #[inline]
    pub fn mask(self) -> u32 {
        self.0
    }

    /// True when every turn is in the set.
    pub fn is_all(self) -> bool {
        self == MoveSet::ALL
    }

    /// True when turn number `turn` (`3 * face + quarter turns - 1`) is in the set.
    #[inline]
    pub fn contains(self, turn: usize) -> bool {
        turn < N_TURNS as usize && self.0 & (1 << turn) != 0
    }

    /// The first of `turns` (turn numbers) not in the set, None when every one is: the check
    /// of every returned solution (the coordinator's, the CLI's and Python's).
    pub fn first_outside(self, turns: impl IntoIterator<Item = usize>) -> Option<usize> {
        turns.into_iter().find(|&t| !self.contains(t))
    }

    /// The set of the bits of `mask`; refused when a bit above the 18 turns is set, the mask
    /// is empty, or a face gives some of its turns but neither all nor its half turn alone.
    pub fn from_mask(mask: u32) -> Result<MoveSet, String> {
        if mask == 0 || mask >> N_TURNS != 0 {
            return Err(format!(
                "is {mask:#x}: give a mask of the 18 turns (bit 3 * face + quarter turns - 1), \
                 not empty"
            ));
        }
        for (face, &letter) in FACES.iter().enumerate() {
            if !matches!(mask >> (3 * face) & 0b111, 0 | 0b010 | 0b111) {
                return Err(format!(
                    "is {mask:#x}: it holds some quarter turns of {} without the rest (a set \
                     holds every turn of a face, its half turn only, or none)",
                    letter as char
                ));
            }
        }
        Ok(MoveSet(mask))
    }

    /// The set `text` writes (see the type's documentation): faces separated by commas, each
    /// `X` (every turn of X) or `X2` (its half turn); a leading `-` names what is left out of
    /// every turn. Refused, with the reason, when a face is not one of `URFDLB`, a turn is
    /// written another way (`R'`: write `R`), or nothing is left.
    pub fn parse(text: &str) -> Result<MoveSet, String> {
        let (without, list) = match text.trim().strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.trim()),
        };
        let mut named = 0u32;
        for token in list.split(',').map(str::trim) {
            let b = token.as_bytes();
            let face = b
                .first()
                .and_then(|c| FACES.iter().position(|f| f == c))
                .ok_or_else(|| {
                    format!(
                        "move set {text:?}: {token:?} is not a face; give faces of URFDLB \
                         separated by commas (R,U), X2 for a half turn only, or -X for every \
                         face but X"
                    )
                })? as u32;
            named |= match &b[1..] {
                b"" => 0b111 << (3 * face),
                b"2" => 0b010 << (3 * face),
                _ => {
                    return Err(format!(
                        "move set {text:?}: {token:?}: write a face as X (all its turns) or X2 \
                         (its half turn only); a set holds a quarter turn with its inverse"
                    ))
                }
            };
        }
        let mask = if without {
            MoveSet::ALL.0 & !named
        } else {
            named
        };
        if mask == 0 {
            return Err(format!("move set {text:?} leaves no turn"));
        }
        MoveSet::from_mask(mask).map_err(|e| format!("move set {text:?} {e}"))
    }
}

impl Default for MoveSet {
    fn default() -> Self {
        MoveSet::ALL
    }
}

impl std::str::FromStr for MoveSet {
    type Err = String;

    fn from_str(text: &str) -> Result<MoveSet, String> {
        MoveSet::parse(text)
    }
}

/// The set as [`MoveSet::parse`] reads it, faces in URFDLB order: `R,U` is written `U,R`.
impl fmt::Display for MoveSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (face, &letter) in FACES.iter().enumerate() {
            let half = match self.0 >> (3 * face) & 0b111 {
                0 => continue,
                0b010 => "2",
                _ => "",
            };
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "{}{half}", letter as char)?;
        }
        Ok(())
    }
}

impl fmt::Debug for MoveSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MoveSet({self})")
    }
}

/// Which search answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Two-phase: the first solution of at most `max_length` half turns.
    TwoPhase {
        /// The target length, 1 or more (0 on the wire means [`DEFAULT_MAX_LENGTH`]).
        max_length: u32,
    },
    /// A proven shortest solution.
    Optimal,
    /// The shortest solution within `max_depth` moves, or the answer "none within".
    DepthLimited {
        /// Longest solution wanted, in the question's metric, `0..=MAX_DEPTH`.
        max_depth: u32,
    },
    /// Every position of a coset of H at once (the job's position is its representative):
    /// the count at each depth through `max_depth` half turns.
    Coset {
        /// Positions not solved within this many turns are unsolved, `0..=MAX_COSET_DEPTH`.
        max_depth: u32,
        /// The counts are exact through this depth (at most `max_depth`: a larger one is
        /// lowered to it).
        exact_depth: u32,
    },
}

/// How many solutions a question asks for. Solutions are distinct *canonical* sequences (no
/// face turned twice in a row; of two opposite faces, which commute, only the order U before
/// D, R before L, F before B), in the canonical order: shortest first (in the question's
/// metric), then by their turn numbers (`3 * face + quarter turns - 1`) compared in turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Count {
    /// One solution (every question of before).
    #[default]
    One,
    /// The first N solutions in the canonical order, `2..=MAX_SOLUTIONS`: every one of the
    /// optimal length, then longer ones, until N (fewer when a depth limit leaves fewer).
    Shortest(u32),
    /// Every optimal solution, listed (the first [`MAX_SOLUTIONS`] when there are more), with
    /// their count.
    AllOptimal,
    /// The count of the optimal solutions, without the list.
    CountOnly,
}

impl Count {
    /// `n` solutions (`--solutions N`): 0 and 1 are one; more than [`MAX_SOLUTIONS`] is
    /// refused naming `mode.solutions`.
    pub fn shortest(n: u32) -> Result<Count, ModeError> {
        match n {
            0 | 1 => Ok(Count::One),
            n if n <= MAX_SOLUTIONS => Ok(Count::Shortest(n)),
            n => Err(ModeError::new(
                "mode.solutions",
                "--solutions",
                format!("is {n}: give 1 to {MAX_SOLUTIONS}"),
            )),
        }
    }

    /// The count the front ends' options ask for (the CLI's `--solutions N`, `--all-optimal`,
    /// `--count-only`; Python's `solutions=`, `all_optimal=`, `count_only=`): N, all optimal
    /// solutions or their count; refused, naming the flag, when a count alone is asked
    /// without all of them, or N with them.
    pub fn from_options(
        solutions: Option<u32>,
        all_optimal: bool,
        count_only: bool,
    ) -> Result<Count, ModeError> {
        match (solutions, all_optimal, count_only) {
            (Some(n), true, _) => Err(ModeError::new(
                "mode.solutions",
                "--solutions",
                format!("is {n} with --all-optimal: give one of the two"),
            )),
            (_, false, true) => Err(ModeError::new(
                "mode.all_solutions",
                "--count-only",
                "goes with --all-optimal (the count of all optimal solutions)".into(),
            )),
            (_, true, true) => Ok(Count::CountOnly),
            (_, true, false) => Ok(Count::AllOptimal),
            (n, false, false) => Count::shortest(n.unwrap_or(1)),
        }
    }

    /// True for every count but one solution.
    pub fn is_many(self) -> bool {
        self != Count::One
    }

    /// True when the answer is every optimal solution or their count.
    pub fn is_all(self) -> bool {
        matches!(self, Count::AllOptimal | Count::CountOnly)
    }

    /// The most solutions an answer lists: N, [`MAX_SOLUTIONS`] of all optimal ones, none
    /// for a count alone, one for one.
    pub fn listed(self) -> usize {
        match self {
            Count::One => 1,
            Count::Shortest(n) => n as usize,
            Count::AllOptimal => MAX_SOLUTIONS as usize,
            Count::CountOnly => 0,
        }
    }

    /// The count as the protocol's `Mode.solutions` and `Mode.all_solutions` write it.
    fn to_wire(self) -> (u32, i32) {
        match self {
            Count::One => (0, crate::AllSolutions::Unspecified as i32),
            Count::Shortest(n) => (n, crate::AllSolutions::Unspecified as i32),
            Count::AllOptimal => (0, crate::AllSolutions::List as i32),
            Count::CountOnly => (0, crate::AllSolutions::Count as i32),
        }
    }

    /// The count a protocol mode's fields ask for, each checked.
    fn from_wire(solutions: u32, all: i32) -> Result<Count, ModeError> {
        let all = crate::AllSolutions::try_from(all).map_err(|_| {
            ModeError::new(
                "mode.all_solutions",
                "--all-optimal",
                format!("is {all}: give LIST (1), COUNT (2) or leave it unset (0)"),
            )
        })?;
        match all {
            crate::AllSolutions::Unspecified => Count::shortest(solutions),
            _ if solutions > 1 => Err(ModeError::new(
                "mode.solutions",
                "--solutions",
                format!("is {solutions} with all_solutions set: give one of the two"),
            )),
            crate::AllSolutions::List => Ok(Count::AllOptimal),
            crate::AllSolutions::Count => Ok(Count::CountOnly),
        }
    }
}

/// A value of a question out of its range: the field (as the protocol names it, and as the
/// CLI's flag) and what to give instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModeError {
    /// The protocol's name of the field (`mode.depth_limited.max_depth`).
    pub field: &'static str,
    /// The command line's flag (`--max-depth`), for the CLI's and Python's messages.
    pub flag: &'static str,
    /// What is wrong and what to give, after the field's name (`is 41: give 0 to 40`).
    pub reason: String,
}

impl ModeError {
    pub(crate) fn new(field: &'static str, flag: &'static str, reason: String) -> ModeError {
        ModeError {
            field,
            flag,
            reason,
        }
    }

    /// The message with the flag's name instead of the field's (for the CLI and Python).
    pub fn for_flags(&self) -> String {
        format!("{} {}", self.flag, self.reason)
    }
}

impl fmt::Display for ModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.field, self.reason)
    }
}

impl std::error::Error for ModeError {}

/// What a job asks of a search: the algorithm, the metric, the turns and the time budget.
///
/// Invariants (kept by every constructor): a two-phase question counts half turns and uses
/// every turn; a depth-limited one's depth is at most [`MAX_DEPTH`]; a two-phase target is 1
/// or more; the position to reach is a state index below [`N_STATES`] (0: the solved cube);
/// the time budget, when there is one, is more than 0 and at most [`MAX_SECONDS`]; a goal
/// goes only with an optimal or depth-limited search and the solved cube as the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Question {
    algorithm: Algorithm,
    metric: Metric,
    moves: MoveSet,
    /// The state index of the position a solution must reach, `0..N_STATES`; 0 is the solved
    /// cube.
    to: u128,
    /// The partial goal a solution must reach instead of the solved cube (None: the whole
    /// cube).
    goal: Option<Goal>,
    /// How many solutions: one unless an optimal or depth-limited question asks for more.
    count: Count,
    timeout: Option<Duration>,
}

impl Default for Question {
    /// Two-phase to [`DEFAULT_MAX_LENGTH`] moves, every turn, no time budget.
    fn default() -> Self {
        Question::two_phase(DEFAULT_MAX_LENGTH)
    }
}

impl Question {
    /// Two-phase to at most `max_length` half turns (0: [`DEFAULT_MAX_LENGTH`]), every turn,
    /// no time budget.
    pub fn two_phase(max_length: u32) -> Question {
        Question {
            algorithm: Algorithm::TwoPhase {
                max_length: if max_length == 0 {
                    DEFAULT_MAX_LENGTH
                } else {
                    max_length
                },
            },
            metric: Metric::Htm,
            moves: MoveSet::ALL,
            to: 0,
            goal: None,
            count: Count::One,
            timeout: None,
        }
    }

    /// The question of these values, each checked: the one constructor of the front ends
    /// (the CLI's flags, Python's keyword arguments). `timeout` is in seconds (None: none).
    pub fn new(
        algorithm: Algorithm,
        metric: Metric,
        moves: MoveSet,
        timeout: Option<f64>,
    ) -> Result<Question, ModeError> {
        let (metric_field, depth_field) = match algorithm {
            Algorithm::Optimal => ("mode.optimal.metric", ""),
            Algorithm::Coset { .. } => ("mode.coset", "mode.coset.max_depth"),
            _ => ("mode.depth_limited.metric", "mode.depth_limited.max_depth"),
        };
        match algorithm {
            Algorithm::TwoPhase { max_length: 0 } => {
                return Err(ModeError::new(
                    "mode.two_phase.max_length",
                    "--max-length",
                    "is 0: give 1 or more".into(),
                ))
            }
            Algorithm::TwoPhase { .. } if metric != Metric::Htm => {
                return Err(ModeError::new(
                    metric_field,
                    "--metric",
                    "goes with an optimal or depth-limited search (two-phase searches count \
                     half turns)"
                        .into(),
                ))
            }
            Algorithm::TwoPhase { .. } if !moves.is_all() => {
                return Err(ModeError::new(
                    "mode.moves",
                    "--moves",
                    format!(
                        "is {moves}: a two-phase search turns every face; give an optimal or \
                         depth-limited search (--optimal, --max-depth) with a move set"
                    ),
                ))
            }
            Algorithm::DepthLimited { max_depth } if max_depth > MAX_DEPTH => {
                return Err(ModeError::new(
                    depth_field,
                    "--max-depth",
                    format!("is {max_depth}: give 0 to {MAX_DEPTH}"),
                ))
            }
            Algorithm::Coset { max_depth, .. } if max_depth > MAX_COSET_DEPTH => {
                return Err(ModeError::new(
                    depth_field,
                    "--max-depth",
                    format!(
                        "is {max_depth}: give 0 to {MAX_COSET_DEPTH} (every position is \
                         within {MAX_COSET_DEPTH} turns)"
                    ),
                ))
            }
            Algorithm::Coset { .. } if metric != Metric::Htm || !moves.is_all() => {
                return Err(ModeError::new(
                    metric_field,
                    "--cosets",
                    "counts half turns with every turn: give no metric or move set".into(),
                ))
            }
            Algorithm::Coset { .. } if timeout.is_some() => {
                return Err(ModeError::new(
                    "mode.timeout_seconds",
                    "--timeout",
                    "goes with no coset batch: a coset is solved whole".into(),
                ))
            }
            _ => {}
        }
        let algorithm = match algorithm {
            Algorithm::Coset {
                max_depth,
                exact_depth,
            } => Algorithm::Coset {
                max_depth,
                exact_depth: exact_depth.min(max_depth),
            },
            a => a,
        };
        let timeout = match timeout {
            None => None,
            Some(s) if s.is_finite() && s > 0.0 && s <= MAX_SECONDS => {
                Some(Duration::from_secs_f64(s))
            }
            Some(s) => {
                return Err(ModeError::new(
                    "mode.timeout_seconds",
                    "--timeout",
                    format!("is {s}: give more than 0 seconds, at most {MAX_SECONDS} (a year)"),
                ))
            }
        };
        Ok(Question {
            algorithm,
            metric,
            moves,
            to: 0,
            goal: None,
            count: Count::One,
            timeout,
        })
    }

    /// This question asking for `count` solutions; refused, naming `mode.solutions` (or
    /// `mode.all_solutions`), for a two-phase question, whose first solution is all it finds,
    /// and for a partial goal, whose search finds one.
    pub fn with_count(self, count: Count) -> Result<Question, ModeError> {
        if count.is_many() && self.is_coset() {
            return Err(not_with_a_coset("mode.solutions", "--solutions"));
        }
        if count.is_many() && (self.is_two_phase() || self.goal.is_some()) {
            let (field, flag) = match count {
                Count::Shortest(_) => ("mode.solutions", "--solutions"),
                _ => ("mode.all_solutions", "--all-optimal"),
            };
            let reason = if self.is_two_phase() {
                "goes with an optimal or depth-limited search (--optimal, --max-depth); a \
                 two-phase search finds one solution"
            } else {
                "goes with the whole cube: a goal search finds one solution (give --goal or \
                 several solutions, not both)"
            };
            return Err(ModeError::new(field, flag, reason.into()));
        }
        Ok(Question { count, ..self })
    }

    /// This question with the position to reach given by its state index `to` (0: the solved
    /// cube; `cubefleet index` names a position's), refused when it is not below [`N_STATES`]:
    /// a solution takes the position to that state.
    pub fn with_target(self, to: u128) -> Result<Question, ModeError> {
        if to >= N_STATES {
            return Err(ModeError::new(
                "mode.to",
                "--to",
                format!("is state {to}: give a state index below {N_STATES} (0 is solved)"),
            ));
        }
        if to != 0 && self.goal.is_some() {
            return Err(goal_with_target());
        }
        if to != 0 && self.is_coset() {
            return Err(not_with_a_coset("mode.to", "--to"));
        }
        Ok(Question { to, ..self })
    }

    /// This question with a partial goal (None: the whole cube), refused for a two-phase
    /// search (it solves the whole cube), with a target other than the solved cube and with
    /// several solutions.
    pub fn with_goal(self, goal: Option<Goal>) -> Result<Question, ModeError> {
        if goal.is_some() && self.is_coset() {
            return Err(not_with_a_coset("mode.goal", "--goal"));
        }
        if goal.is_some() {
            if self.is_two_phase() {
                return Err(ModeError::new(
                    "mode.goal",
                    "--goal",
                    "goes with an optimal or depth-limited search (--optimal, --max-depth); a \
                     two-phase search solves the whole cube"
                        .into(),
                ));
            }
            if self.has_target() {
                return Err(goal_with_target());
            }
            if self.count.is_many() {
                return Err(ModeError::new(
                    "mode.goal",
                    "--goal",
                    "goes with one solution: a goal search finds one (give --goal or several \
                     solutions, not both)"
                        .into(),
                ));
            }
        }
        Ok(Question { goal, ..self })
    }

    /// The question a protocol mode asks, every field checked (the one reading of a wire
    /// mode, by the coordinator at submission and by the worker at lease): an unset kind is
    /// two-phase, a target of 0 [`DEFAULT_MAX_LENGTH`], an unspecified metric HTM, a move mask
    /// of 0 every turn, a state index of 0 to reach the solved cube, a time budget of 0 none.
    pub fn from_wire(m: &Mode) -> Result<Question, ModeError> {
        let seconds = m.timeout_seconds;
        if !(seconds.is_finite() && (0.0..=MAX_SECONDS).contains(&seconds)) {
            return Err(ModeError::new(
                "mode.timeout_seconds",
                "--timeout",
                format!(
                    "is {seconds}: give 0 (none) or a number of seconds up to {MAX_SECONDS} \
                     (a year)"
                ),
            ));
        }
        let moves = match m.moves {
            0 => MoveSet::ALL,
            mask => MoveSet::from_mask(mask)
                .map_err(|reason| ModeError::new("mode.moves", "--moves", reason))?,
        };
        let (algorithm, metric) = match &m.kind {
            None => (Algorithm::TwoPhase { max_length: 0 }, Metric::Htm),
            Some(Kind::TwoPhase(t)) => (
                Algorithm::TwoPhase {
                    max_length: t.max_length,
                },
                Metric::Htm,
            ),
            Some(Kind::Optimal(o)) => (
                Algorithm::Optimal,
                Metric::from_wire("mode.optimal.metric", o.metric)?,
            ),
            Some(Kind::DepthLimited(d)) => (
                Algorithm::DepthLimited {
                    max_depth: d.max_depth,
                },
                Metric::from_wire("mode.depth_limited.metric", d.metric)?,
            ),
            Some(Kind::Coset(c)) => (
                Algorithm::Coset {
                    max_depth: c.max_depth,
                    exact_depth: c.exact_depth,
                },
                Metric::Htm,
            ),
        };
        let algorithm = match algorithm {
            Algorithm::TwoPhase { max_length: 0 } => Algorithm::TwoPhase {
                max_length: DEFAULT_MAX_LENGTH,
            },
            a => a,
        };
        let goal = m.goal.as_ref().map(Goal::from_wire).transpose()?;
        Question::new(algorithm, metric, moves, (seconds > 0.0).then_some(seconds))?
            .with_target(u128::from(m.to_high) << 64 | u128::from(m.to_low))?
            .with_goal(goal)?
            .with_count(Count::from_wire(m.solutions, m.all_solutions)?)
    }

    /// The protocol form: what [`Question::from_wire`] reads back as this question (a target
    /// is written whole, every turn as a mask of 0 and the solved cube as index 0, so an older
    /// peer reads an unrestricted question to the solved cube as it always did).
    pub fn to_wire(&self) -> Mode {
        let kind = match self.algorithm {
            Algorithm::TwoPhase { max_length } => Kind::TwoPhase(TwoPhase { max_length }),
            Algorithm::Optimal => Kind::Optimal(Optimal {
                metric: self.metric.to_wire(),
            }),
            Algorithm::DepthLimited { max_depth } => Kind::DepthLimited(DepthLimited {
                max_depth,
                metric: self.metric.to_wire(),
            }),
            Algorithm::Coset {
                max_depth,
                exact_depth,
            } => Kind::Coset(CosetSolve {
                max_depth,
                exact_depth,
            }),
        };
        let (solutions, all_solutions) = self.count.to_wire();
        Mode {
            kind: Some(kind),
            solutions,
            all_solutions,
            timeout_seconds: self.timeout.map_or(0.0, |t| t.as_secs_f64()),
            moves: if self.moves.is_all() {
                0
            } else {
                self.moves.mask()
            },
            to_high: (self.to >> 64) as u64,
            to_low: self.to as u64,
            goal: self.goal.map(|g| g.to_wire()),
        }
    }

    /// Which search answers.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The metric lengths are counted in (HTM for two-phase).
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// The turns a solution may use.
    pub fn moves(&self) -> MoveSet {
        self.moves
    }

    /// The state index of the position a solution must reach (0: the solved cube), below
    /// [`N_STATES`].
    pub fn target(&self) -> u128 {
        self.to
    }

    /// True when a solution must reach another position than the solved cube.
    pub fn has_target(&self) -> bool {
        self.to != 0
    }

    /// The partial goal a solution must reach (None: the whole cube, or the target).
    pub fn goal(&self) -> Option<Goal> {
        self.goal
    }

    /// How many solutions it asks for.
    pub fn count(&self) -> Count {
        self.count
    }

    /// The time budget per position (None: none).
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// True for a two-phase question.
    pub fn is_two_phase(&self) -> bool {
        matches!(self.algorithm, Algorithm::TwoPhase { .. })
    }

    /// True for a coset question.
    pub fn is_coset(&self) -> bool {
        matches!(self.algorithm, Algorithm::Coset { .. })
    }

    /// The least protocol revision a worker must speak to answer this question:
    /// [`COSET_PROTOCOL`] for a coset, else [`GOAL_PROTOCOL`] when it has a goal, else
    /// [`SOLUTIONS_PROTOCOL`] when it asks for more than one solution, else
    /// [`TARGET_PROTOCOL`] when it has a target other than the solved cube, else
    /// [`MOVES_PROTOCOL`] when it restricts the turns, else 0 (any). Never above this build's
    /// [`crate::PROTOCOL`] (a coordinator's lease relies on it).
    pub fn needs_protocol(&self) -> u32 {
        if self.is_coset() {
            COSET_PROTOCOL
        } else if self.goal.is_some() {
            GOAL_PROTOCOL
        } else if self.count.is_many() {
            SOLUTIONS_PROTOCOL
        } else if self.has_target() {
            TARGET_PROTOCOL
        } else if !self.moves.is_all() {
            MOVES_PROTOCOL
        } else {
            0
        }
    }

    /// A short key naming what a result answers (two results with equal keys are
    /// interchangeable): the algorithm, its whole target length or depth, the metric, the move
    /// set when it restricts, the position to reach when it is not the solved cube, the goal
    /// when there is one, and how many solutions when more than one (so an unrestricted
    /// question to the solved cube for one solution has the key earlier versions made). The
    /// time budget is left out.
    pub fn key(&self) -> Vec<u8> {
        let (kind, n) = match self.algorithm {
            Algorithm::TwoPhase { max_length } => (1u8, max_length),
            Algorithm::Optimal => (2, 0),
            Algorithm::DepthLimited { max_depth } => (3, max_depth),
            // the exact depth in the high half (both are at most 20)
            Algorithm::Coset {
                max_depth,
                exact_depth,
            } => (4, exact_depth << 16 | max_depth),
        };
        let mut key = vec![kind];
        key.extend_from_slice(&n.to_le_bytes());
        key.push(self.metric.to_wire() as u8);
        if !self.moves.is_all() {
            key.extend_from_slice(&self.moves.mask().to_le_bytes());
        }
        if self.has_target() {
            // a tag, so the parts a key has are told apart (a count's tag follows)
            key.push(b't');
            key.extend_from_slice(&self.to.to_le_bytes());
        }
        if let Some(goal) = self.goal {
            key.push(b'g');
            key.extend_from_slice(&goal.key());
        }
        if self.count.is_many() {
            let (solutions, all) = self.count.to_wire();
            key.push(b'n');
            key.push(all as u8);
            key.extend_from_slice(&solutions.to_le_bytes());
        }
        key
    }
}

/// The refusal of a field that asks about one position's solutions (a target, a goal,
/// several solutions) in a coset question, which counts every position of its coset.
fn not_with_a_coset(field: &'static str, flag: &'static str) -> ModeError {
    ModeError::new(
        field,
        flag,
        "goes with a search of single positions: a coset job counts every position of its \
         coset by its distance to the solved cube"
            .into(),
    )
}

/// The refusal of a goal together with a target.
fn goal_with_target() -> ModeError {
    ModeError::new(
        "mode.goal",
        "--goal",
        "goes with the solved cube as the target: give --goal or --to, not both".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_sets_read_and_write_back() {
        for (text, written) in [
            ("R,U", "U,R"),
            ("R, U, F", "U,R,F"),
            ("U,D,R2,L2,F2,B2", "U,R2,F2,D,L2,B2"),
            ("-B", "U,R,F,D,L"),
            ("U,R,F,D,L,B", "U,R,F,D,L,B"),
        ] {
            let set = MoveSet::parse(text).expect(text);
            assert_eq!(set.to_string(), written, "{text}");
            assert_eq!(MoveSet::parse(written), Ok(set));
        }
        assert_eq!(
            MoveSet::parse("R,U").map(MoveSet::mask),
            Ok(0b111_000 | 0b111)
        );
        assert!(MoveSet::parse("U,R,F,D,L,B").is_ok_and(MoveSet::is_all));
        for bad in [
            "",
            "R'",
            "X",
            "r,u",
            "R3",
            "-U,R,F,D,L,B",
            "R,,U",
            "RU",
            "-B,L2",
        ] {
            assert!(MoveSet::parse(bad).is_err(), "{bad}");
        }
        assert!(MoveSet::from_mask(0b001).is_err());
        assert!(MoveSet::from_mask(1 << 18 | 0b111).is_err());
        assert!(MoveSet::from_mask(0).is_err());
        assert_eq!(MoveSet::from_mask(0b010), Ok(MoveSet(0b010)));
    }

    #[test]
    fn questions_go_through_the_wire_unchanged() {
        let dl = Algorithm::DepthLimited { max_depth: 7 };
        let rf = MoveSet::parse("R,F").expect("set");
        for q in [
            Question::default(),
            Question::two_phase(17),
            Question::new(Algorithm::Optimal, Metric::Qtm, rf, Some(1.5)).expect("question"),
            Question::new(dl, Metric::Htm, MoveSet::ALL, None).expect("question"),
        ] {
            assert_eq!(Question::from_wire(&q.to_wire()), Ok(q));
        }
        assert_eq!(
            Question::from_wire(&Mode::default()),
            Ok(Question::default())
        );
        assert_eq!(Question::default().to_wire().moves, 0);
    }

    #[test]
    fn values_out_of_range_are_refused_naming_the_field() {
        let two = |max_length| Some(Kind::TwoPhase(TwoPhase { max_length }));
        let dl = |max_depth, metric| Some(Kind::DepthLimited(DepthLimited { max_depth, metric }));
        let mode = |kind, timeout_seconds, moves| Mode {
            kind,
            timeout_seconds,
            moves,
            ..Mode::default()
        };
        for (m, field) in [
            (mode(dl(41, 1), 0.0, 0), "mode.depth_limited.max_depth"),
            (mode(dl(5, 3), 0.0, 0), "mode.depth_limited.metric"),
            (mode(two(20), f64::NAN, 0), "mode.timeout_seconds"),
            (mode(two(20), -1.0, 0), "mode.timeout_seconds"),
            (mode(two(20), 0.0, 0b111), "mode.moves"),
            (mode(dl(5, 1), 0.0, 1 << 20), "mode.moves"),
            (mode(dl(5, 1), 0.0, 0b100), "mode.moves"),
        ] {
            let e = Question::from_wire(&m).expect_err(field);
            assert_eq!(e.field, field, "{m:?}");
            assert!(e.to_string().starts_with(field), "{e}");
        }
        // a target index of N_STATES or more (both halves written by a hostile peer)
        for (to_high, to_low) in [
            ((N_STATES >> 64) as u64, N_STATES as u64),
            (u64::MAX, u64::MAX),
            (u64::MAX, 0),
        ] {
            let m = Mode {
                to_high,
                to_low,
                ..Mode::default()
            };
            let e = Question::from_wire(&m).expect_err("too large");
            assert_eq!((e.field, e.flag), ("mode.to", "--to"), "{m:?}");
            assert!(e.to_string().starts_with("mode.to "), "{e}");
        }
        let last = Mode {
            to_high: ((N_STATES - 1) >> 64) as u64,
            to_low: (N_STATES - 1) as u64,
            ..Mode::default()
        };
        assert!(Question::from_wire(&last).is_ok_and(|q| q.target() == N_STATES - 1));
        assert!(Question::default().with_target(N_STATES).is_err());
    }

    /// How many solutions: through the wire unchanged, in the key, needing revision 7; out of
    /// range, both given, an unknown value or a two-phase question refused naming the field.
    #[test]
    fn counts_go_through_the_wire_and_are_refused_out_of_range() {
        let opt = Question::new(Algorithm::Optimal, Metric::Htm, MoveSet::ALL, None).expect("q");
        for count in [
            Count::Shortest(2),
            Count::Shortest(MAX_SOLUTIONS),
            Count::AllOptimal,
            Count::CountOnly,
        ] {
            let q = opt.with_count(count).expect("optimal");
            assert_eq!(Question::from_wire(&q.to_wire()), Ok(q));
            assert_ne!(q.key(), opt.key());
            assert_eq!(q.needs_protocol(), SOLUTIONS_PROTOCOL);
            let e = Question::two_phase(20)
                .with_count(count)
                .expect_err("two-phase");
            assert!(e.field.starts_with("mode."), "{e}");
        }
        assert_eq!(opt.with_count(Count::One).map(|q| q.key()), Ok(opt.key()));
        assert_eq!(Count::shortest(1), Ok(Count::One));
        let mode = |solutions, all_solutions| Mode {
            kind: Some(Kind::Optimal(Optimal { metric: 1 })),
            solutions,
            all_solutions,
            ..Mode::default()
        };
        assert_eq!(
            Question::from_wire(&mode(1, 0)).map(|q| q.count()),
            Ok(Count::One)
        );
        for (m, field) in [
            (mode(MAX_SOLUTIONS + 1, 0), "mode.solutions"),
            (mode(u32::MAX, 0), "mode.solutions"),
            (mode(2, 1), "mode.solutions"),
            (mode(0, 3), "mode.all_solutions"),
            (mode(0, -1), "mode.all_solutions"),
            (
                Mode {
                    kind: Some(Kind::TwoPhase(TwoPhase { max_length: 20 })),
                    ..mode(0, 2)
                },
                "mode.all_solutions",
            ),
            (
                Mode {
                    kind: None,
                    ..mode(3, 0)
                },
                "mode.solutions",
            ),
        ] {
            let e = Question::from_wire(&m).expect_err(field);
            assert_eq!(e.field, field, "{m:?}");
            assert!(e.to_string().starts_with(field), "{e}");
        }
    }

    /// The spot check's ranks: past the list, below the count, distinct and increasing, the
    /// last one always among them; none when the list is whole; the same for the same seed.
    #[test]
    fn spot_ranks_fall_past_the_list() {
        assert!(spot_ranks(5, 10, 10).is_empty());
        assert_eq!(spot_ranks(5, 0, 1), [0]);
        for seed in [1, 2, 99, u64::MAX] {
            for (listed, count) in [(0, 2), (0, 1_000_000), (1000, 1001), (1000, 5000)] {
                let r = spot_ranks(seed, listed, count);
                assert_eq!(r, spot_ranks(seed, listed, count));
                assert!(!r.is_empty() && r.len() <= SPOT_CHECKS);
                assert!(r.windows(2).all(|w| w[0] < w[1]));
                assert!(r.iter().all(|&k| (listed..count).contains(&k)));
                assert_eq!(r.last(), Some(&(count - 1)));
            }
        }
        assert_eq!(spot_ranks(3, 0, 1_000_000).len(), SPOT_CHECKS);
    }

    /// A target goes through the wire whole (both halves), in every algorithm; the solved cube
    /// as a target is the question without one, on the wire and in its key.
    #[test]
    fn targets_go_through_the_wire_and_name_their_question() {
        let ru = MoveSet::parse("R,U").expect("set");
        let dl = Algorithm::DepthLimited { max_depth: 9 };
        for to in [
            1,
            1 << 64,
            (1 << 64) - 1,
            N_STATES - 1,
            12_345_678_901_234_567_890,
        ] {
            for q in [
                Question::two_phase(19),
                Question::new(Algorithm::Optimal, Metric::Qtm, ru, Some(3.0)).expect("q"),
                Question::new(dl, Metric::Htm, MoveSet::ALL, None).expect("q"),
            ] {
                let t = q.with_target(to).expect("in range");
                assert_eq!(t.target(), to);
                assert_eq!(Question::from_wire(&t.to_wire()), Ok(t));
                assert_ne!(t.key(), q.key());
                assert_eq!(t.needs_protocol(), TARGET_PROTOCOL);
                assert_eq!(t.with_target(0), Ok(q));
            }
        }
        let solved = Question::two_phase(20).with_target(0).expect("solved");
        assert_eq!(solved, Question::two_phase(20));
        assert_eq!(solved.to_wire(), Question::two_phase(20).to_wire());
        assert_eq!((solved.to_wire().to_high, solved.to_wire().to_low), (0, 0));
        assert_eq!(solved.key(), [1, 20, 0, 0, 0, 1]);
        assert_eq!(solved.needs_protocol(), 0);
        let a = Question::two_phase(20).with_target(5).expect("q");
        let b = Question::two_phase(20).with_target(5 << 8).expect("q");
        assert_ne!(a.key(), b.key());
        assert_eq!(N_STATES, 43_252_003_274_489_856_000);
    }

    /// A goal goes through the wire, makes its own key and needs revision 7; it is refused with
    /// a two-phase search and with a target, naming the field.
    #[test]
    fn goals_name_their_question() {
        let ru = MoveSet::parse("R,U").expect("set");
        let opt = Question::new(Algorithm::Optimal, Metric::Qtm, ru, None).expect("q");
        let cross = crate::goal::Goal::parse("cross").expect("goal");
        for g in [cross, cross.on_any_face(true)] {
            let q = opt.with_goal(Some(g)).expect("a goal");
            assert_eq!(Question::from_wire(&q.to_wire()), Ok(q));
            assert_ne!(q.key(), opt.key());
            assert_eq!(q.needs_protocol(), GOAL_PROTOCOL);
            let e = q.with_target(5).expect_err("with a target");
            assert_eq!(e.field, "mode.goal");
            let e = opt.with_target(5).and_then(|t| t.with_goal(Some(g)));
            assert!(e.is_err_and(|e| e.field == "mode.goal"));
        }
        let e = Question::two_phase(20)
            .with_goal(Some(cross))
            .expect_err("two-phase");
        assert_eq!((e.field, e.flag), ("mode.goal", "--goal"));
        let wire = Mode {
            goal: Some(cross.to_wire()),
            ..Mode::default()
        };
        assert!(Question::from_wire(&wire).is_err_and(|e| e.field == "mode.goal"));
        assert_eq!(opt.with_goal(None), Ok(opt));
    }

    /// The keys of unrestricted questions are those earlier versions made; a move set makes
    /// another key.
    #[test]
    fn keys_name_whole_questions() {
        assert_eq!(Question::two_phase(20).key(), [1, 20, 0, 0, 0, 1]);
        let a = Question::new(Algorithm::Optimal, Metric::Htm, MoveSet::ALL, None).expect("q");
        let ru = MoveSet::parse("R,U").expect("set");
        let b = Question::new(Algorithm::Optimal, Metric::Htm, ru, None).expect("q");
        assert_eq!(a.key(), [2, 0, 0, 0, 0, 1]);
        assert_ne!(a.key(), b.key());
        assert_eq!(b.needs_protocol(), MOVES_PROTOCOL);
    }
}
