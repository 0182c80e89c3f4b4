//! The goal search (`--goal`): the shortest sequence of the question's turns that takes a
//! position to a partial goal ([`Goal`]: a named goal or custom pieces, on its face or on any
//! face), by IDA* over the cubie level with pattern databases made for the goal ([`pdb`]).
//!
//! A goal is one or more alternatives ([`Goal::alternatives`]): each variant (the four xcross
//! slots) on each face tried (`--on any-face`). An alternative on another face is the standard
//! goal after conjugating the cube by a rotation `S` (`S c S⁻¹` reaches the standard pieces
//! exactly when `c` reaches the turned ones); its search runs on the conjugated cube with the
//! conjugated turns (a turn `m` of the question's set is `S m S⁻¹` there), and its solution is
//! turned back move by move. Every alternative is searched to each length before any is
//! searched to the next, so the first solution found is a shortest over all of them; the
//! answer's alternative is told by [`Goal::reached_by`] (its label names the face and slot).
//!
//! The bound of a node is the largest of its alternative's tables (each a lower bound of the
//! distance to the goal), and the goal is tested where every table reads 0. The move pruning is
//! the optimal search's ([`crate::skip_after`]: never one face twice in a row, opposite faces
//! in one order), which loses no shortest solution in either metric.
//!
//! Tables per alternative ([`specs`]): its placed pieces in groups of four tracked together
//! (position and orientation; at most 266,112 values each; groups of five, at most 5,322,240
//! values, for a goal of more than eight placed pieces), a second grouping shifted by two
//! pieces when there is more than one group (so pieces of different groups meet in one), the eight
//! corners' places alone when five or more corners are placed, and the edge and corner
//! orientations (with the E-slice edges' places for `dr`) when the goal orients pieces or
//! places more than four. Memory and first-use build time on one core (cached per process,
//! per move set and metric): `cross` one table of 190 KB, under 0.2 s; `xcross` 10 tables
//! (four slots) of up to 266 KB, about 1.5 s; `eo` 2 KB; `dr` two of about 1 MB, about 1 s;
//! `corners` a few tables of up to 136 KB, under 1 s; `f2l` and `edges` six tables of 3 to
//! 5.3 MB (about 20 MB), about 20 s. The searches of `cross`, `xcross`, `eo` and `dr` take
//! milliseconds, `corners` and `edges` seconds; `f2l`, whose optimal lengths (up to about 16)
//! are far above what its tables bound, from seconds to minutes for a scrambled cube (a time
//! budget or a depth limit bounds it).

pub(crate) mod pdb;

use std::sync::Arc;

use cubefleet_proto::goal::{Alternative, Goal, Pieces};
use cubefleet_proto::question::{Algorithm, Question, MAX_DEPTH};
use cubefleet_tables::facelet::{
    CORNER_COLOR, CORNER_FACELET, CORNER_NAMES, EDGE_COLOR, EDGE_FACELET, EDGE_NAMES, N_FACELETS,
};
use cubefleet_tables::symmetry::SYMMETRIES;
use cubefleet_tables::{CubieCube, Face, Move, MoveSeq};

use crate::metric::TurnCost;
use crate::{moves_in, Budget, Outcome, Progress, Status, AFTER, NO_MOVE};
use pdb::{Pdb, Spec, UNREACHED};

/// The goal `text` writes, as the CLI's `--goal` and Python's `goal=` read it: a name or a
/// piece list ([`Goal::parse`]), or a facelet string (54 stickers in the order of a position's,
/// URFDLB) whose ignored stickers are written `.`: each piece shows all its stickers in their
/// solved colours (it must be placed) or none (it is ignored); centres show their face or `.`.
/// Refused with the reason, naming the piece.
pub fn parse(text: &str) -> Result<Goal, String> {
    let t = text.trim();
    let is_mask = t.len() == N_FACELETS && t.contains('.');
    if !is_mask {
        return Goal::parse(t);
    }
    let stickers: Vec<Option<Face>> = t
        .chars()
        .map(|ch| match ch {
            '.' => Ok(None),
            _ => Face::from_letter(ch).map(Some).ok_or(ch),
        })
        .collect::<Result<_, char>>()
        .map_err(|ch| {
            format!("goal mask: {ch:?} is no face; write stickers as URFDLB, ignored ones as .")
        })?;
    for (k, face) in Face::ALL.into_iter().enumerate() {
        if stickers[9 * k + 4].is_some_and(|f| f != face) {
            return Err(format!(
                "goal mask: the {} centre shows {:?}: a centre shows its own face or .",
                face.letter(),
                stickers[9 * k + 4]
            ));
        }
    }
    // each piece: all its stickers shown in their solved colours (placed), or none
    let placed = |name: &str, facelets: &[usize], colours: &[Face]| -> Result<bool, String> {
        let shown: Vec<Option<Face>> = facelets.iter().map(|&f| stickers[f]).collect();
        if shown.iter().all(Option::is_none) {
            Ok(false)
        } else if shown.iter().zip(colours).all(|(s, &c)| *s == Some(c)) {
            Ok(true)
        } else {
            Err(format!(
                "goal mask: the {name} piece must show all its stickers in its solved colours                  (it is placed) or none (it is ignored); use place:/orient: lists for                  orientation"
            ))
        }
    };
    let mut pieces = Pieces::default();
    for i in 0..8 {
        if placed(CORNER_NAMES[i], &CORNER_FACELET[i], &CORNER_COLOR[i])? {
            pieces.place_corners |= 1 << i;
        }
    }
    for i in 0..12 {
        if placed(EDGE_NAMES[i], &EDGE_FACELET[i], &EDGE_COLOR[i])? {
            pieces.place_edges |= 1 << i;
        }
    }
    Goal::custom(pieces).map_err(|e| format!("goal mask {e}"))
}

/// The budget is checked once every this many nodes (a power of two).
const CHECK_EVERY: u64 = 4096;

/// The most pieces a table tracks together: four (at most 266,112 values, built in a fraction
/// of a second), or five for a goal of more than [`LARGE`] placed pieces (at most 5,322,240
/// values, a few seconds each, for goals whose optimal lengths need the stronger bound).
const GROUP: usize = 4;
/// Placed pieces above which a goal's tables track [`GROUP`] + 1 pieces together.
const LARGE: usize = 8;

/// The tables that bound the distance to `p` (see the module's documentation).
pub(crate) fn specs(p: &Pieces) -> Vec<Spec> {
    // placed pieces: edges then corners, by position
    let pieces: Vec<(bool, u8)> = (0..12u8)
        .filter(|e| p.place_edges >> e & 1 != 0)
        .map(|e| (true, e))
        .chain(
            (0..8u8)
                .filter(|k| p.place_corners >> k & 1 != 0)
                .map(|k| (false, k)),
        )
        .collect();
    let group = |chunk: &[(bool, u8)]| Spec::Tracked {
        edges: chunk
            .iter()
            .filter(|x| x.0)
            .fold(0, |m, &(_, e)| m | 1 << e),
        corners: chunk
            .iter()
            .filter(|x| !x.0)
            .fold(0, |m, &(_, k)| m | 1 << k),
        oriented: true,
    };
    let size = if pieces.len() > LARGE {
        GROUP + 1
    } else {
        GROUP
    };
    let mut specs: Vec<Spec> = pieces.chunks(size).map(group).collect();
    if pieces.len() > size {
        let mut shifted = pieces.clone();
        shifted.rotate_left(2);
        specs.extend(shifted.chunks(size).map(group));
    }
    if p.place_corners.count_ones() >= 5 {
        specs.push(Spec::Tracked {
            edges: 0,
            corners: p.place_corners,
            oriented: false,
        });
    }
    let many = pieces.len() > GROUP;
    if p.orient_edges != 0 || p.slice || many {
        specs.push(Spec::EdgeOrient {
            mask: p.orient_edges | p.place_edges,
            slice: p.slice,
        });
    }
    if p.orient_corners != 0 || many && p.place_corners != 0 {
        specs.push(Spec::CornerOrient {
            mask: p.orient_corners | p.place_corners,
            slice: p.slice,
        });
    }
    specs.dedup();
    specs
}

/// One alternative's search: the cube conjugated by its rotation, the turns conjugated, its
/// tables.
struct Branch {
    alt: Alternative,
    cube: CubieCube,
    /// The question's turns as this alternative's frame has them (bit per move).
    moves: u32,
    tables: Vec<Arc<Pdb>>,
}

impl Branch {
    /// The alternative `alt` of a search of `cube` over `moves` (the question's, bit per
    /// move) in `metric`.
    fn new(alt: Alternative, cube: &CubieCube, moves: u32, metric: crate::optimal::Metric) -> Self {
        let conj = &SYMMETRIES.move_conj[alt.sym];
        let moves = moves_in(moves).fold(0, |m, t| m | 1 << conj[t].index());
        let tables = specs(&alt.pieces)
            .into_iter()
            .map(|s| pdb::table(s, moves, metric))
            .collect();
        Branch {
            cube: SYMMETRIES.conjugate(cube, alt.sym),
            alt,
            moves,
            tables,
        }
    }

    /// The node's bound: the largest of the tables' ([`UNREACHED`] when one says the goal is
    /// out of reach).
    #[inline]
    fn bound(&self, c: &CubieCube) -> u8 {
        self.tables.iter().map(|t| t.bound(c)).max().unwrap_or(0)
    }

    /// The node's bound when it is at most `left`, None as soon as one table's is above it
    /// (most children are cut by the first table read, the one of the most pieces).
    #[inline]
    fn bound_within(&self, c: &CubieCube, left: u32) -> Option<u32> {
        let mut h = 0;
        for t in &self.tables {
            let b = u32::from(t.bound(c));
            if b > left {
                return None;
            }
            h = h.max(b);
        }
        Some(h)
    }
}

/// How a depth-first pass ended.
enum Pass {
    Found(usize),
    None,
    Stopped,
}

/// The goal searcher of one thread: its path and node count, reused across jobs (the tables
/// are the process's, [`pdb::table`]).
#[derive(Default)]
pub struct GoalSearcher {
    path: Vec<Move>,
    nodes: u64,
}

impl GoalSearcher {
    /// A searcher (nothing is built until a search needs it).
    pub fn new() -> Self {
        GoalSearcher::default()
    }

    /// Searches the shortest sequence of `question`'s turns (its algorithm, metric and move
    /// set; its goal is `goal`) that takes `cube` to `goal`: lengths from `start_lower_bound`
    /// up to the depth limit, if any. `progress` hears of each length ruled out.
    pub fn solve(
        &mut self,
        cube: &CubieCube,
        question: &Question,
        goal: &Goal,
        start_lower_bound: u32,
        budget: &Budget,
        progress: &mut dyn FnMut(Progress),
    ) -> Outcome {
        self.nodes = 0;
        let metric = question.metric();
        let max_depth = match question.algorithm() {
            Algorithm::DepthLimited { max_depth } => Some(max_depth),
            _ => None,
        };
        let branches: Vec<Branch> = goal
            .alternatives()
            .into_iter()
            .map(|alt| Branch::new(alt, cube, question.moves().mask(), metric))
            .collect();
        let least = branches.iter().map(|b| b.bound(&b.cube)).min().unwrap_or(0);
        if least == UNREACHED {
            // every alternative's table shows its coordinate never reaches the goal
            return self.end(Status::Unreachable, 0);
        }
        self.path
            .resize(MAX_DEPTH as usize + 2, Move::from_index(0));
        let mut d = start_lower_bound.max(u32::from(least));
        loop {
            if max_depth.is_some_and(|max| d > max) {
                return self.end(Status::NoneWithin, d);
            }
            if d > MAX_DEPTH {
                // no solution within the deepest search a question may ask: out of reach of
                // the turns (the tables' coordinates reach the goal; the whole goal does not)
                return self.end(Status::Unreachable, d);
            }
            for b in &branches {
                match self.pass(b, &b.cube, 0, 0, d, NO_MOVE, metric, budget) {
                    Pass::Found(len) => return self.solved(b, cube, goal, len, d),
                    Pass::Stopped => {
                        let status = if budget.cancelled() {
                            Status::Cancelled
                        } else {
                            Status::Timeout
                        };
                        return self.end(status, d);
                    }
                    Pass::None => {}
                }
            }
            d += 1;
            progress(Progress {
                lower_bound: d,
                nodes: self.nodes,
            });
        }
    }

    /// An outcome without a solution.
    fn end(&self, status: Status, lower_bound: u32) -> Outcome {
        Outcome {
            status,
            solution: None,
            optimal: false,
            lower_bound,
            nodes: self.nodes,
            solutions: Vec::new(),
        }
    }

    /// The outcome of the `len` moves on the path, found by branch `b` at length `d` (every
    /// shorter length ruled out for every alternative): turned back to the cube's frame.
    fn solved(&self, b: &Branch, cube: &CubieCube, goal: &Goal, len: usize, d: u32) -> Outcome {
        let back = &SYMMETRIES.move_conj[SYMMETRIES.inverse[b.alt.sym] as usize];
        let moves: Vec<Move> = self.path[..len].iter().map(|m| back[m.index()]).collect();
        debug_assert!(goal.reached_by(&cube.apply_moves(&moves)).is_some());
        Outcome {
            status: Status::Solved,
            solution: Some(MoveSeq(moves)),
            optimal: true,
            lower_bound: d,
            nodes: self.nodes,
            solutions: Vec::new(),
        }
    }

    /// The depth-first pass below node `c` at `depth` moves costing `g`, within `bound`.
    #[allow(clippy::too_many_arguments)]
    fn pass(
        &mut self,
        b: &Branch,
        c: &CubieCube,
        depth: usize,
        g: u32,
        bound: u32,
        last: usize,
        metric: crate::optimal::Metric,
        budget: &Budget,
    ) -> Pass {
        // UNREACHED is above every bound a pass is run with (at most MAX_DEPTH)
        let Some(h) = b.bound_within(c, bound - g) else {
            return Pass::None;
        };
        if h == 0 && b.alt.pieces.reached(c) {
            return Pass::Found(depth);
        }
        if g == bound {
            return Pass::None;
        }
        self.nodes += 1;
        if self.nodes.is_multiple_of(CHECK_EVERY) && budget.exhausted() {
            return Pass::Stopped;
        }
        for m in moves_in(AFTER[last] & b.moves) {
            let turn = Move::from_index(m);
            let cost = metric.cost(turn);
            if g + cost > bound {
                continue;
            }
            self.path[depth] = turn;
            let child = c.multiply_rotations(turn.cubie());
            match self.pass(b, &child, depth + 1, g + cost, bound, m, metric, budget) {
                Pass::None => {}
                end => return end,
            }
        }
        Pass::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A facelet mask names the pieces it shows; a half-shown piece, a wrong colour or a
    /// wrong centre is refused naming it. The protocol's piece names are the tables'.
    #[test]
    fn facelet_masks_read_as_pieces() {
        assert_eq!(cubefleet_proto::goal::EDGE_NAMES, EDGE_NAMES);
        assert_eq!(cubefleet_proto::goal::CORNER_NAMES, CORNER_NAMES);
        let solved = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";
        // the cross: D's edge stickers and the side stickers below the centres
        let mut mask = vec![b'.'; 54];
        for &[a, b] in &EDGE_FACELET[4..8] {
            mask[a] = solved.as_bytes()[a];
            mask[b] = solved.as_bytes()[b];
        }
        let text = String::from_utf8(mask.clone()).expect("ascii");
        assert_eq!(parse(&text), Goal::parse("place:DR,DF,DL,DB"));
        mask[EDGE_FACELET[4][1]] = b'.';
        let half = String::from_utf8(mask.clone()).expect("ascii");
        assert!(parse(&half).is_err_and(|e| e.contains("DR")));
        mask[EDGE_FACELET[4][1]] = b'U';
        let wrong = String::from_utf8(mask.clone()).expect("ascii");
        assert!(parse(&wrong).is_err_and(|e| e.contains("DR")));
        assert!(parse(&".".repeat(54)).is_err());
        assert!(parse(&format!("{}X", &".".repeat(53))).is_err());
        assert_eq!(parse(" cross "), Ok(Goal::parse("cross").expect("a name")));
    }

    /// The tables of an alternative are lower bounds: 0 on the goal, and a cross is reached in
    /// at most 8 half turns from anywhere (its published depth).
    #[test]
    fn cross_tables_reach_every_value_within_eight() {
        let g = Goal::parse("cross").expect("goal");
        let p = g.variants()[0].1;
        let specs = specs(&p);
        assert_eq!(specs.len(), 1);
        let t = pdb::table(specs[0], (1 << 18) - 1, crate::optimal::Metric::Htm);
        assert_eq!(t.bound(&CubieCube::SOLVED), 0);
        let mut rng = rand::rng();
        for _ in 0..1000 {
            let c = CubieCube::random(&mut rng);
            assert!(t.bound(&c) <= 8);
        }
    }
}
