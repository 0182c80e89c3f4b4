//! Trust nothing: every reported solution is applied to the position before it is stored, and
//! must reach the job's target (the solved cube, unless the question names another state), or
//! its partial goal (`--goal`: on any of the goal's faces, told by the goal's own check).

use std::cell::LazyCell;

use cubefleet_proto::question::{spot_ranks, Algorithm, Count, Question, MAX_DEPTH, MAX_SOLUTIONS};
use cubefleet_proto::{Completion, Mode, ResultStatus};
use cubefleet_tables::{CubieCube, MoveSeq};

use crate::mode::question_of;

/// The length in the question's metric of a solution of `cube` the coordinator knows without
/// any worker: when the job's line `input` is a move sequence that makes `cube` and uses only
/// turns of the question's move set, its inverse solves it. None when the line is not such a
/// sequence (a facelet string, or turns outside the set), and for a question with a target
/// (the inverse reaches the solved cube, not the target). With a goal, the inverse reaches
/// it too (the solved cube reaches every goal), so its length bounds the goal's distance.
pub(crate) fn known_length(cube: &CubieCube, input: &str, q: &Question) -> Option<u32> {
    if q.has_target() {
        return None;
    }
    let moves = MoveSeq::parse(input).ok()?;
    let in_set = q
        .moves()
        .first_outside(moves.indices().into_iter().map(usize::from))
        .is_none();
    (in_set && CubieCube::from_moves(&moves.0) == *cube).then(|| length_in(q, &moves))
}

/// The position a solution of a job asking `q` must reach: the state of its target index (the
/// solved cube when it names none; an index is below the number of states, a question's
/// invariant).
fn target_of(q: &Question) -> CubieCube {
    cubefleet_tables::index::state_at(q.target()).unwrap_or_default()
}

/// The length of `moves` in the metric of `q`.
fn length_in(q: &Question, moves: &MoveSeq) -> u32 {
    q.metric()
        .length_of(moves.0.iter().map(|m| m.quarter_turns()))
}

/// The most a true lower bound can be for question `q` on a position with a known solution
/// of `known` moves ([`known_length`]): God's number of the metric (HTM 20, QTM 26; with a
/// restricted move set, whose own God's number is not known, [`MAX_DEPTH`], the deepest search
/// a job may ask), or the known length when it is shorter.
fn most_possible(q: &Question, known: Option<u32>) -> u32 {
    let most = if q.moves().is_all() {
        q.metric().gods_number()
    } else {
        MAX_DEPTH
    };
    known.map_or(most, |k| k.min(most))
}

/// A lower bound a worker reported for a job of `mode` whose position has a known solution of
/// `known` moves, clamped to what can be true ([`most_possible`]): a bound from a worker is a
/// claim, and a resumed search must never start above the optimum.
pub(crate) fn possible_bound(mode: &Mode, known: Option<u32>, reported: u32) -> u32 {
    reported.min(most_possible(&question_of(mode), known))
}

/// A result that passed [`verify`]: what the job's record stores of it (the default: no
/// solution).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Checked {
    /// The status the worker reported (one a worker may report, other than cancelled).
    pub(crate) status: ResultStatus,
    /// The solution's length in the mode's metric (0 without one).
    pub(crate) length: u32,
    /// The solution in canonical notation (faces U R F D L B with "", "2" or "'"), written
    /// from the parsed turns whatever notation the worker used ("" without one).
    pub(crate) solution: String,
    /// The proven lower bound to store: the higher of the known and the reported one, each
    /// clamped to what is possible ([`most_possible`]), and never above `length` when there is
    /// a solution.
    pub(crate) lower_bound: u32,
    /// Why the position is out of reach of the move set (`unreachable`; "" otherwise), as the
    /// coordinator's own check of the invariants says it.
    pub(crate) reason: String,
    /// Of a question for several solutions: the solutions listed, in canonical notation and
    /// the canonical order, each verified ([`check_many`]); empty otherwise.
    pub(crate) solutions: Vec<String>,
    /// Of a question for several solutions: how many there are (the list's length, or a
    /// larger count that passed its spot check); 0 otherwise.
    pub(crate) count: u64,
}

/// Checks a worker's result for the position `cube`, whose stored lower bound is
/// `lower_bound` and whose known solution has `known()` moves ([`known_length`]), under `mode`;
/// returns what is stored of it, or the reason it is refused. A bound, a `none_within` or an
/// `optimal` claim above what is possible ([`most_possible`]) is refused as false; a verified
/// solution shorter than the stored bound is kept, and the stored bound dropped as false.
///
/// A question for several solutions ([`Count`]) has its list, count and spot-checked
/// solutions checked by [`check_many`] (`spot_seed`: the seed of the lease the result answers,
/// 0 when none holds the job now).
///
/// `known` is called only when what is possible matters: a bound above 0 to clamp (stored or
/// reported) or a `none_within` answer. A result and a record without a bound (every
/// two-phase result) need no known length, whose parse and replay of the line cost about a
/// quarter of a completion; the outcome is the same either way, a bound of 0 being below
/// anything possible.
pub(crate) fn verify(
    cube: &CubieCube,
    lower_bound: u32,
    known: impl FnOnce() -> Option<u32>,
    mode: &Mode,
    c: &Completion,
    spot_seed: u64,
) -> Result<Checked, String> {
    let Some(status) = c.reported() else {
        return Err(format!("unknown status `{}`", c.status));
    };
    let q = question_of(mode);
    let many = !c.solutions.is_empty() || c.count != 0 || !c.spot_solutions.is_empty();
    if many && !(q.count().is_many() && status == ResultStatus::Solved) {
        return Err(format!(
            "solutions, count or spot_solutions in a {status} answer to a question for {}: only \
             a solved answer to a question for several solutions has them",
            if q.count().is_many() {
                "several solutions"
            } else {
                "one solution"
            }
        ));
    }
    let gods = LazyCell::new(|| most_possible(&q, known()));
    // a bound clamped to what is possible (0 needs no clamp, so `known` is not called for it)
    let clamp = |bound: u32| if bound == 0 { 0 } else { bound.min(*gods) };
    // a stored bound raised by an earlier lie (or an older version) cannot exclude the optimum
    let lower_bound = clamp(lower_bound);
    let claimed = clamp(c.lower_bound);
    if claimed < c.lower_bound && (c.optimal || status == ResultStatus::NoneWithin) {
        return Err(format!(
            "lower bound {} is above {}, the most this position can need: a false claim",
            c.lower_bound, *gods
        ));
    }
    let proven = lower_bound.max(claimed);
    if c.optimal && status != ResultStatus::Solved {
        return Err(format!(
            "optimal claimed for a {status} result: only a solution can be optimal"
        ));
    }
    if status == ResultStatus::NoneWithin {
        return match q.algorithm() {
            Algorithm::DepthLimited { max_depth } if max_depth >= *gods => Err(format!(
                "none_within {max_depth} is impossible: the position has a solution within {}",
                *gods
            )),
            // what is stored is what the job asked: none within its depth (a bound above
            // it is a claim of more than the search was for)
            Algorithm::DepthLimited { max_depth }
                if !c.has_solution && c.lower_bound > max_depth =>
            {
                Ok(Checked {
                    status,
                    lower_bound: proven.min(max_depth + 1),
                    ..Checked::default()
                })
            }
            Algorithm::DepthLimited { .. } => {
                Err("none_within needs a lower bound above the depth limit".into())
            }
            _ => Err("none_within is only an answer of a depth-limited search".into()),
        };
    }
    if status == ResultStatus::Unreachable && q.goal().is_some() {
        // the invariants tell whether the turns solve the whole cube, not whether they reach
        // a goal: a claim the coordinator cannot check
        return Err("unreachable is not an answer the coordinator can check for a goal".into());
    }
    if status == ResultStatus::Unreachable {
        // checked in full: the coordinator finds the invariant itself, on the position whose
        // solutions reach the target (B⁻¹ · cube for the target B: cube · S = B exactly when
        // B⁻¹ · cube · S is solved)
        let relative = target_of(&q).inverse().multiply(cube);
        let reason = cubefleet_tables::reach::unreachable(&relative, q.moves().mask())
            .filter(|_| !q.moves().is_all() && !c.has_solution);
        return match reason {
            Some(reason) => Ok(Checked {
                status,
                reason,
                ..Checked::default()
            }),
            None => Err(format!(
                "unreachable, but no invariant of the move set {} shows it",
                q.moves()
            )),
        };
    }
    if !c.has_solution {
        return if status == ResultStatus::Timeout {
            Ok(Checked {
                status,
                lower_bound: proven,
                ..Checked::default()
            })
        } else {
            Err(format!("status {status} without a solution"))
        };
    }
    let moves = solution_moves(c)?;
    if let Some(goal) = q.goal() {
        if goal.reached_by(&cube.apply_moves(&moves.0)).is_none() {
            return Err(format!(
                "`{moves}` does not take the position to the batch's goal ({goal})"
            ));
        }
    } else if q.has_target() {
        if cube.apply_moves(&moves.0) != target_of(&q) {
            return Err(format!(
                "`{moves}` does not take the position to the batch's target"
            ));
        }
    } else if !cube.apply_moves(&moves.0).is_solved() {
        return Err(format!("`{moves}` does not solve the position"));
    }
    if let Some(t) = q.moves().first_outside(moves.0.iter().map(|m| m.index())) {
        return Err(format!(
            "`{moves}` turns {}, outside the batch's move set {}",
            cubefleet_tables::Move::from_index(t).notation(),
            q.moves()
        ));
    }
    let length = length_in(&q, &moves);
    // a real solution shorter than the stored bound proves that bound false (a worker's lie
    // in a heartbeat, which the coordinator cannot check): the solution stands, the stored
    // bound is dropped, and what is proven is the reporting worker's own claim
    let proven = if length < lower_bound {
        claimed
    } else {
        proven
    };
    let length = match (q.algorithm(), status) {
        // no solution shorter than the bound exists, yet here is one
        (_, s) if s.may_have_length() && c.lower_bound > length => Err(format!(
            "lower bound {} above the solution's length {length}",
            c.lower_bound
        )),
        (_, ResultStatus::Timeout) => Ok(length),
        // a two-phase search that ended with time to spare above the target
        (Algorithm::TwoPhase { max_length }, ResultStatus::OverTarget) if length > max_length => {
            Ok(length)
        }
        (_, ResultStatus::OverTarget) => Err(format!(
            "over_target needs a two-phase solution above the target ({length} moves)"
        )),
        (Algorithm::TwoPhase { max_length }, ResultStatus::Solved) if length > max_length => {
            Err(format!("{length} moves is above the target {max_length}"))
        }
        (Algorithm::DepthLimited { max_depth }, ResultStatus::Solved) if length > max_depth => Err(
            format!("{length} moves is above the depth limit {max_depth}"),
        ),
        (_, ResultStatus::Solved) if c.optimal && c.lower_bound < length => Err(format!(
            "optimal claimed with a lower bound {} below the solution's length {length}",
            c.lower_bound
        )),
        // an optimal batch's answer is reused for every symmetric copy: it must be proven
        (Algorithm::Optimal, ResultStatus::Solved) if !c.optimal || c.lower_bound < length => {
            Err(format!(
                "an optimal batch needs a proven-optimal solution (lower bound {} < {length} \
                 moves)",
                c.lower_bound
            ))
        }
        (_, ResultStatus::Solved) => Ok(length),
        (_, other) => Err(format!("unknown status `{other}`")),
    }?;
    let (solutions, count) = if q.count().is_many() && status == ResultStatus::Solved {
        check_many(&q, cube, c, &moves, length, spot_seed)?
    } else {
        (Vec::new(), 0)
    };
    Ok(Checked {
        status,
        length,
        solution: moves.text(),
        lower_bound: proven.min(length),
        reason: String::new(),
        solutions,
        count,
    })
}

/// True when `moves` is a canonical sequence: no face turned twice in a row, and of two
/// opposite faces only U before D, R before L, F before B (faces numbered U R F D L B, so a
/// face is never followed by the one three below it).
fn is_canonical(moves: &MoveSeq) -> bool {
    moves.0.windows(2).all(|w| {
        let (a, b) = (w[0].index() / 3, w[1].index() / 3);
        a != b && a != b + 3
    })
}

/// A solution's place in the canonical order: its length, then its turn numbers.
type Rank = (u32, Vec<u8>);

/// Checks the several solutions of a solved answer to `q` (a question for more than one) for
/// the position `cube`, whose first solution `first` (of `first_len`, the proven optimum)
/// passed [`verify`]: every listed solution (`solutions`) and every spot-checked one
/// (`spot_solutions`) is a canonical sequence of the question's turns that reaches its
/// target, no shorter than the first (all of its length for all optimal ones, within the
/// depth of a depth-limited question); the list starts with the first, is in the canonical
/// order (so distinct) and no longer than the question allows; the count is the list's length
/// when the list is whole (N solutions; all optimal ones up to [`MAX_SOLUTIONS`]). A count past
/// the list (count-only, or all optimal ones beyond [`MAX_SOLUTIONS`]) is a claim: it passes
/// only with the solutions of the ranks the lease's seed names ([`spot_ranks`]), each in its
/// place in the order (rank 0 is the first solution; ranks ascend with the order), which
/// proves that many distinct solutions exist and that the worker can name the ones at those
/// ranks of the count it claims; the count itself rests on the claim (a `--confirm 2` batch
/// has two credentials agree on it). Returns the list in canonical notation and the count.
fn check_many(
    q: &Question,
    cube: &CubieCube,
    c: &Completion,
    first: &MoveSeq,
    first_len: u32,
    spot_seed: u64,
) -> Result<(Vec<String>, u64), String> {
    let count = q.count();
    if c.solutions.len() > count.listed() {
        return Err(format!(
            "solutions lists {}, more than the {} the question lets an answer list",
            c.solutions.len(),
            count.listed()
        ));
    }
    if !is_canonical(first) {
        return Err(format!("`{first}` is not canonical (of two opposite faces, U before D, R before L, F before B)"));
    }
    let target = target_of(q);
    let read = |field: &str, i: usize, bytes: &[u8]| -> Result<(MoveSeq, Rank), String> {
        let moves = MoveSeq::from_indices(bytes)
            .ok_or_else(|| format!("{field}[{i}]: a move number above 17"))?;
        if !is_canonical(&moves) {
            return Err(format!(
                "{field}[{i}] `{moves}` is not canonical (a face twice in a row, or D before \
                 U, L before R, B before F)"
            ));
        }
        if cube.apply_moves(&moves.0) != target {
            return Err(format!(
                "{field}[{i}] `{moves}` does not take the position to the batch's target"
            ));
        }
        if let Some(t) = q.moves().first_outside(moves.0.iter().map(|m| m.index())) {
            return Err(format!(
                "{field}[{i}] `{moves}` turns {}, outside the batch's move set {}",
                cubefleet_tables::Move::from_index(t).notation(),
                q.moves()
            ));
        }
        let len = length_in(q, &moves);
        if len < first_len || (count.is_all() && len != first_len) {
            return Err(format!(
                "{field}[{i}] `{moves}` has {len} moves, not the optimal {first_len}"
            ));
        }
        if let Algorithm::DepthLimited { max_depth } = q.algorithm() {
            if len > max_depth {
                return Err(format!(
                    "{field}[{i}] `{moves}` has {len} moves, above the depth limit {max_depth}"
                ));
            }
        }
        let rank = (len, moves.indices());
        Ok((moves, rank))
    };
    let list = c
        .solutions
        .iter()
        .enumerate()
        .map(|(i, b)| read("solutions", i, b))
        .collect::<Result<Vec<_>, _>>()?;
    if list.first().is_some_and(|(m, _)| m != first) {
        return Err("solutions[0] is not the solution the answer gives (moves)".into());
    }
    for (i, w) in list.windows(2).enumerate() {
        if w[0].1 >= w[1].1 {
            return Err(format!(
                "solutions[{}] is not after solutions[{i}] in the canonical order (repeated, \
                 or out of order)",
                i + 1
            ));
        }
    }
    let listed = list.len() as u64;
    let whole = match count {
        Count::One => return Err("several solutions for a question of one".into()),
        Count::Shortest(n) => {
            if listed == 0 {
                return Err("no solutions listed".into());
            }
            if listed < u64::from(n) && q.algorithm() == Algorithm::Optimal {
                return Err(format!(
                    "{listed} solutions of the {n} asked: longer ones always exist"
                ));
            }
            true
        }
        Count::AllOptimal => {
            if listed == 0 {
                return Err("no solutions listed".into());
            }
            listed < u64::from(MAX_SOLUTIONS)
        }
        Count::CountOnly => {
            if c.count == 0 {
                return Err("count 0 with a solution".into());
            }
            false
        }
    };
    if (whole && c.count != listed) || c.count < listed {
        return Err(format!(
            "count {} is not the {listed} solutions listed",
            c.count
        ));
    }
    let ranks = spot_ranks(spot_seed, listed, c.count);
    if !ranks.is_empty() && spot_seed == 0 {
        return Err(format!(
            "count {} past the {listed} solutions listed needs the spot check of a lease, and \
             no lease holds the job now",
            c.count
        ));
    }
    if c.spot_solutions.len() != ranks.len() {
        return Err(format!(
            "spot_solutions has {}; the lease's spot check names {} (ranks {ranks:?})",
            c.spot_solutions.len(),
            ranks.len()
        ));
    }
    let first_rank: Rank = (first_len, first.indices());
    let mut before = list.last().map(|(_, r)| r.clone());
    for (i, (&rank, bytes)) in ranks.iter().zip(&c.spot_solutions).enumerate() {
        let (moves, key) = read("spot_solutions", i, bytes)?;
        let in_place = if rank == 0 {
            moves == *first
        } else {
            key > first_rank && before.as_ref().is_none_or(|b| key > *b)
        };
        if !in_place {
            return Err(format!(
                "spot_solutions[{i}] `{moves}` cannot be solution {rank} in the canonical order"
            ));
        }
        before = Some(key);
    }
    Ok((list.iter().map(|(m, _)| m.text()).collect(), c.count))
}

/// How many tokens `text` has between ASCII whitespace: what
/// `text.split_ascii_whitespace().count()` gives, in one pass over the bytes without
/// making each token a `&str`.
fn tokens(text: &str) -> usize {
    let mut count = 0;
    let mut after_space = true;
    for b in text.bytes() {
        let space = b.is_ascii_whitespace();
        count += usize::from(after_space && !space);
        after_space = space;
    }
    count
}

/// The turns of a reported solution: from its compact form (`moves`) when it has one, else
/// from its text. Refused unless every turn is its own, one face never turned twice in a row:
/// the text parser merges such turns ("R R" is R2), and a solution is counted as it is stored.
fn solution_moves(c: &Completion) -> Result<MoveSeq, String> {
    if c.moves.is_empty() {
        let moves =
            MoveSeq::parse(&c.solution).map_err(|e| format!("solution does not parse: {e}"))?;
        if tokens(&c.solution) != moves.len() {
            return Err(format!(
                "`{}` is not one turn per token with no face turned twice in a row",
                c.solution
            ));
        }
        return Ok(moves);
    }
    if !c.solution.is_empty() {
        return Err("a solution sent both as text and as moves".into());
    }
    let moves = MoveSeq::from_indices(&c.moves).ok_or("a move number above 17")?;
    if moves.0.windows(2).any(|w| w[0].face() == w[1].face()) {
        return Err(format!("`{moves}` turns a face twice in a row"));
    }
    Ok(moves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mode::normalize_mode;
    use cubefleet_proto::{mode, TwoPhase};

    fn solved(solution: &str) -> Completion {
        Completion {
            status: "solved".into(),
            solution: solution.into(),
            has_solution: true,
            ..Completion::default()
        }
    }

    #[test]
    fn a_solution_is_counted_as_written() {
        let mode = normalize_mode(&Mode::default()).expect("two-phase");
        let cube = CubieCube::from_moves(&MoveSeq::parse("R2 U").expect("parses").0);
        let checked = verify(&cube, 0, || None, &mode, &solved("U' R2"), 0);
        assert_eq!(checked.map(|v| v.length), Ok(2));
        // the same turns with R2 written as two quarter turns: merged by the parser, so the
        // length would not be the stored text's
        let merged = verify(&cube, 0, || None, &mode, &solved("U' R R"), 0);
        assert!(merged.is_err_and(|e| e.contains("twice in a row")));
        assert!(verify(&cube, 0, || None, &mode, &solved("U R2"), 0)
            .is_err_and(|e| e.contains("does not solve")));
    }

    #[test]
    fn over_target_is_a_verified_two_phase_solution_above_the_target() {
        let five = Mode {
            kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 5 })),
            ..Mode::default()
        };
        let cube = CubieCube::from_moves(&MoveSeq::parse("R U F D L B").expect("parses").0);
        let over = |solution: &str| Completion {
            status: "over_target".into(),
            ..solved(solution)
        };
        let checked = verify(&cube, 0, || None, &five, &over("B' L' D' F' U' R'"), 0);
        assert_eq!(checked.map(|v| v.length), Ok(6));
        // within the target it is `solved`, a wrong solution is wrong, none is nothing
        assert!(verify(&cube, 0, || None, &five, &over("B' L' D' F' U' R' R R'"), 0).is_err());
        assert!(verify(&cube, 0, || None, &five, &over("B' L' D' F' U' R"), 0).is_err());
        let short = CubieCube::from_moves(&MoveSeq::parse("R U").expect("parses").0);
        assert!(verify(&short, 0, || None, &five, &over("U' R'"), 0).is_err());
        let without = Completion {
            has_solution: false,
            ..over("")
        };
        assert!(verify(&cube, 0, || None, &five, &without, 0).is_err());
        let optimal = normalize_mode(&Mode {
            kind: Some(mode::Kind::Optimal(Default::default())),
            ..Mode::default()
        })
        .expect("optimal");
        assert!(verify(&cube, 0, || None, &optimal, &over("B' L' D' F' U' R'"), 0).is_err());
    }

    #[test]
    fn a_solution_sent_as_moves_is_checked_like_its_text() {
        let mode = normalize_mode(&Mode::default()).expect("two-phase");
        let cube = CubieCube::from_moves(&MoveSeq::parse("R2 U").expect("parses").0);
        let as_moves = |moves: &str| Completion {
            moves: MoveSeq::parse(moves).expect("parses").indices(),
            ..solved("")
        };
        let checked = verify(&cube, 0, || None, &mode, &as_moves("U' R2"), 0);
        assert_eq!(
            checked.map(|v| (v.length, v.solution)),
            Ok((2, "U' R2".into()))
        );
        assert!(verify(&cube, 0, || None, &mode, &as_moves("U R2"), 0)
            .is_err_and(|e| e.contains("`U R2` does not solve")));
        // R2 as two quarter turns: two turns, which the text "U' R R" would not be
        let twice = Completion {
            moves: vec![2, 3, 3],
            ..solved("")
        };
        assert!(verify(&cube, 0, || None, &mode, &twice, 0)
            .is_err_and(|e| e.contains("twice in a row")));
        let beyond = Completion {
            moves: vec![2, 18],
            ..solved("")
        };
        assert!(verify(&cube, 0, || None, &mode, &beyond, 0).is_err_and(|e| e.contains("above 17")));
        let both = Completion {
            moves: vec![2, 4],
            ..solved("U' R2")
        };
        assert!(verify(&cube, 0, || None, &mode, &both, 0).is_err_and(|e| e.contains("both")));
    }

    /// With a target, a solution must take the position to it: one that solves the position
    /// instead is refused, and a position's own move sequence tells no length.
    #[test]
    fn a_solution_must_reach_the_target() {
        let cube_of =
            |moves: &str| CubieCube::from_moves(&MoveSeq::parse(moves).expect("parses").0);
        let to = cubefleet_tables::index::index_of(&cube_of("R U"));
        let q = Question::two_phase(20).with_target(to).expect("a state");
        let mode = q.to_wire();
        // from R U R' U' to R U: U R
        let cube = cube_of("R U R' U'");
        let checked = verify(&cube, 0, || None, &mode, &solved("U R"), 0);
        assert_eq!(checked.map(|v| v.length), Ok(2));
        assert!(verify(&cube, 0, || None, &mode, &solved("U R U' R'"), 0)
            .is_err_and(|e| e.contains("does not take the position to the batch's target")));
        assert!(verify(&cube, 0, || None, &mode, &solved("R U"), 0)
            .is_err_and(|e| e.contains("target")));
        assert_eq!(known_length(&cube, "R U R' U'", &q), None);
        assert_eq!(
            known_length(&cube, "R U R' U'", &Question::two_phase(20)),
            Some(4)
        );
        // the target itself is reached by no turn
        assert_eq!(
            verify(&cube_of("R U"), 0, || None, &mode, &solved(""), 0).map(|v| v.length),
            Ok(0)
        );
    }

    /// With a goal, a solution must reach it (on any of its faces when asked): one that does
    /// not is refused naming the goal, a full solution is one, and an unreachable claim is
    /// refused (the invariants do not tell a goal's reach).
    #[test]
    fn a_solution_must_reach_the_goal() {
        use cubefleet_proto::goal::Goal;
        let cube_of =
            |moves: &str| CubieCube::from_moves(&MoveSeq::parse(moves).expect("parses").0);
        let optimal = Question::new(
            Algorithm::Optimal,
            cubefleet_proto::question::Metric::Htm,
            cubefleet_proto::question::MoveSet::ALL,
            None,
        )
        .expect("q");
        let cross = Goal::parse("cross").expect("goal");
        // an optimal claim of a solution of `n` turns
        let proven = |solution: &str, n: u32| Completion {
            optimal: true,
            lower_bound: n,
            ..solved(solution)
        };
        let mode = optimal.with_goal(Some(cross)).expect("q").to_wire();
        // R F: the cross is back after F' R' only; R U alone leaves DR out
        let cube = cube_of("R F");
        let checked = verify(&cube, 0, || None, &mode, &proven("F' R'", 2), 0);
        assert_eq!(checked.map(|v| v.length), Ok(2));
        assert!(verify(&cube, 0, || None, &mode, &proven("F'", 1), 0)
            .is_err_and(|e| e.contains("does not take the position to the batch's goal (cross)")));
        // D turns keep the D cross only as a whole: U leaves it, on every face but U's
        let u = cube_of("U");
        assert!(verify(&u, 0, || None, &mode, &proven("", 0), 0).is_ok());
        let d = cube_of("D");
        assert!(verify(&d, 0, || None, &mode, &proven("", 0), 0).is_err());
        let any = optimal
            .with_goal(Some(cross.on_any_face(true)))
            .expect("q")
            .to_wire();
        assert!(verify(&d, 0, || None, &any, &proven("", 0), 0).is_ok());
        let unreachable = Completion {
            status: "unreachable".into(),
            ..Completion::default()
        };
        assert!(verify(&d, 0, || None, &mode, &unreachable, 0).is_err_and(|e| e.contains("goal")));
    }

    #[test]
    fn tokens_are_counted_as_split_ascii_whitespace_counts_them() {
        for text in [
            "",
            " ",
            "R",
            " R",
            "R ",
            "R U",
            "R  U2\tF'\n",
            "R,U",
            "\r\nR\x0cU ",
            "R\u{a0}U",
        ] {
            assert_eq!(
                tokens(text),
                text.split_ascii_whitespace().count(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn the_known_length_is_asked_for_only_where_a_bound_is_clamped() {
        let mode = normalize_mode(&Mode::default()).expect("two-phase");
        let cube = CubieCube::from_moves(&MoveSeq::parse("R2 U").expect("parses").0);
        let asked = std::cell::Cell::new(0);
        let known = || {
            asked.set(asked.get() + 1);
            Some(2)
        };
        // no bound, stored or reported: nothing to clamp
        assert!(verify(&cube, 0, known, &mode, &solved("U' R2"), 0).is_ok());
        assert_eq!(asked.get(), 0);
        // a stored bound of 5 on a position known to be solved in 2 is clamped to 2, so the
        // 2-move solution is not below it
        let checked = verify(&cube, 5, known, &mode, &solved("U' R2"), 0);
        assert_eq!(checked.map(|v| v.lower_bound), Ok(2));
        assert_eq!(asked.get(), 1);
        // a reported bound above the known length, claimed optimal: a false claim
        let lie = Completion {
            lower_bound: 3,
            optimal: true,
            ..solved("U' R2")
        };
        assert!(verify(&cube, 0, known, &mode, &lie, 0).is_err_and(|e| e.contains("above 2")));
        assert_eq!(asked.get(), 2);
    }

    /// A question for several solutions: every listed and spot-checked solution is verified
    /// (reaches the position's target, canonical, in order, of the right length), the count
    /// agrees with the list, and a count past the list passes only with the lease's spot
    /// check; one-solution questions take none of the new fields.
    #[test]
    fn several_solutions_are_checked_one_by_one() {
        let cube_of =
            |moves: &str| CubieCube::from_moves(&MoveSeq::parse(moves).expect("parses").0);
        let turns = |moves: &str| MoveSeq::parse(moves).expect("parses").indices();
        let ask = |count| {
            Question::new(
                Algorithm::Optimal,
                cubefleet_proto::question::Metric::Htm,
                cubefleet_proto::question::MoveSet::ALL,
                None,
            )
            .and_then(|q| q.with_count(count))
            .expect("question")
            .to_wire()
        };
        let answer = |first: &str, list: &[&str], count: u64, spots: &[&str]| Completion {
            moves: turns(first),
            optimal: true,
            lower_bound: MoveSeq::parse(first).expect("parses").len() as u32,
            solutions: list.iter().map(|s| turns(s)).collect(),
            count,
            spot_solutions: spots.iter().map(|s| turns(s)).collect(),
            ..solved("")
        };
        let all = ask(Count::AllOptimal);
        let ud = cube_of("U D");
        let ok = verify(
            &ud,
            0,
            || None,
            &all,
            &answer("U' D'", &["U' D'"], 1, &[]),
            0,
        );
        assert_eq!(
            ok.map(|v| (v.solutions, v.count)),
            Ok((vec!["U' D'".to_string()], 1))
        );
        let refused = |mode: &Mode, cube: &CubieCube, c: Completion, seed: u64, says: &str| {
            let e = verify(cube, 0, || None, mode, &c, seed).expect_err(says);
            assert!(e.contains(says), "{e} (wanted {says:?})");
        };
        // repeated, not canonical (D before U), wrong count, not reaching the position
        refused(
            &all,
            &ud,
            answer("U' D'", &["U' D'", "U' D'"], 2, &[]),
            0,
            "after",
        );
        refused(
            &all,
            &ud,
            answer("D' U'", &["D' U'"], 1, &[]),
            0,
            "canonical",
        );
        refused(&all, &ud, answer("U' D'", &["U' D'"], 2, &[]), 0, "count 2");
        refused(
            &all,
            &ud,
            answer("U' D'", &["U' D'", "U D'"], 2, &[]),
            0,
            "target",
        );
        refused(&all, &ud, answer("U' D'", &[], 1, &[]), 0, "no solutions");
        // R, solved by R' and, 12 turns longer, by R' (U2 R2)^6: one optimal solution only
        let r = cube_of("R");
        let long = "R' U2 R2 U2 R2 U2 R2 U2 R2 U2 R2 U2 R2";
        refused(
            &all,
            &r,
            answer("R'", &["R'", long], 2, &[]),
            0,
            "not the optimal 1",
        );
        // as two solutions, shortest first, the longer one is one of them
        let two = ask(Count::Shortest(2));
        let v = verify(
            &r,
            0,
            || None,
            &two,
            &answer("R'", &["R'", long], 2, &[]),
            0,
        );
        assert_eq!(v.map(|v| v.solutions.len()), Ok(2));
        refused(
            &two,
            &r,
            answer("R'", &[long, "R'"], 2, &[]),
            0,
            "solutions[0]",
        );
        refused(
            &two,
            &r,
            answer("R'", &["R'"], 1, &[]),
            0,
            "longer ones always exist",
        );
        // a count alone: the spot check's ranks, named by the lease's seed
        let only = ask(Count::CountOnly);
        let honest = answer("R'", &[], 1, &["R'"]);
        assert_eq!(
            verify(&r, 0, || None, &only, &honest, 77).map(|v| v.count),
            Ok(1)
        );
        refused(&only, &r, honest.clone(), 0, "no lease holds the job");
        refused(
            &only,
            &r,
            answer("R'", &["R'"], 1, &[]),
            0,
            "more than the 0",
        );
        // five claimed: ranks up to 4 must be distinct solutions after R' in the order
        let ranks = spot_ranks(77, 0, 5);
        assert!(ranks.contains(&4) && ranks.len() == 3);
        let lie = answer("R'", &[], 5, &vec!["R'"; ranks.len()]);
        refused(&only, &r, lie, 77, "cannot be solution");
        let short = answer("R'", &[], 5, &["R'"]);
        refused(&only, &r, short, 77, "spot_solutions has 1");
        // no new field in a one-solution answer, nor in an answer that is not solved
        let one = ask(Count::One);
        refused(&one, &r, answer("R'", &["R'"], 1, &[]), 0, "one solution");
        let timeout = Completion {
            count: 3,
            ..Completion::default()
        };
        refused(
            &all,
            &r,
            Completion {
                status: "timeout".into(),
                ..timeout
            },
            0,
            "timeout",
        );
    }
}
