//! What a set of face turns cannot do: invariants that prove a position out of reach of a
//! restricted move set (`--moves`), so a search need not look for what does not exist.
//!
//! A set of turns generates a subgroup of the cube group; a position is solvable with those
//! turns exactly when it lies in that subgroup. A property every turn of the set keeps, and
//! the solved cube has, is kept by every product of them, so a position without it is out of
//! reach. [`unreachable`] checks these, each a sufficient proof, never a necessary one (a
//! position passing all of them may still be out of reach; then only a search can tell):
//!
//! 1. **Pieces no turn moves**: a corner or edge position that no turn of the set moves or
//!    twists must hold its own piece, oriented (e.g. `R,U` never moves the five edges and two
//!    corners away from the R and U layers).
//! 2. **Orientations no turn changes**: when no turn of the set changes any edge's orientation
//!    (in the model's convention: only quarter turns of F and B do), every edge must be
//!    oriented; likewise the corners (only quarter turns of R, L, F and B twist them). The
//!    same is checked in each of the 48 symmetric frames (the position conjugated, and the set
//!    with it), which covers the other two axes: `U,D,F2,B2,R2,L2` keeps every edge oriented
//!    relative to F/B and relative to R/L, and every corner relative to U/D.
//! 3. **Parity**: when every turn of the set is a half turn (an even permutation of the
//!    corners), the corners' permutation must be even.

use crate::cubie::CubieCube;
use crate::moves::{Move, N_MOVE};
use crate::symmetry::{N_SYM, SYMMETRIES};

/// Why `cube` cannot be solved with the turns whose bits are set in `turns` (bit
/// `Move::index`), when one of the module's invariants shows it; None when none does (the
/// position may or may not be reachable). `turns` must be closed under inverse for rule 2's
/// frames to mean the same set (every set `MoveSet` makes is).
pub fn unreachable(cube: &CubieCube, turns: u32) -> Option<String> {
    let set: Vec<Move> = Move::ALL
        .into_iter()
        .filter(|m| turns & (1 << m.index()) != 0)
        .collect();
    if let Some(why) = unmoved_pieces(cube, &set) {
        return Some(why);
    }
    for s in 0..N_SYM {
        let c = SYMMETRIES.conjugate(cube, s);
        let turned: Vec<&CubieCube> = set
            .iter()
            .map(|m| SYMMETRIES.move_conj[s][m.index()].cubie())
            .collect();
        if turned.iter().all(|t| t.eo == [0; 12]) && c.eo != [0; 12] {
            return Some(
                "no turn of the set changes the edges' orientation (relative to one axis), and \
                 this position has edges flipped relative to it"
                    .into(),
            );
        }
        if turned.iter().all(|t| t.co == [0; 8]) && c.co != [0; 8] {
            return Some(
                "no turn of the set twists a corner (relative to one axis), and this position \
                 has corners twisted relative to it"
                    .into(),
            );
        }
    }
    if set.iter().all(|m| m.quarter_turns() == 2) && cube.corner_parity() != 0 {
        return Some(
            "every turn of the set is a half turn (an even permutation), and this position's \
             corners are an odd permutation"
                .into(),
        );
    }
    None
}

/// Rule 1: a piece position no turn of `set` moves or twists, holding another piece or its
/// own piece turned.
fn unmoved_pieces(cube: &CubieCube, set: &[Move]) -> Option<String> {
    let corner_moved = |p: usize| {
        set.iter()
            .any(|m| m.cubie().cp[p] as usize != p || m.cubie().co[p] != 0)
    };
    let edge_moved = |p: usize| {
        set.iter()
            .any(|m| m.cubie().ep[p] as usize != p || m.cubie().eo[p] != 0)
    };
    let corners = (0..8).filter(|&p| !corner_moved(p));
    let edges = (0..12).filter(|&p| !edge_moved(p));
    let corner_off = corners
        .into_iter()
        .any(|p| cube.cp[p] as usize != p || cube.co[p] != 0);
    let edge_off = edges
        .into_iter()
        .any(|p| cube.ep[p] as usize != p || cube.eo[p] != 0);
    (corner_off || edge_off).then(|| {
        "a piece that no turn of the set moves is out of place or turned in this position".into()
    })
}

/// The turns of every face: [`unreachable`] finds nothing out of reach of them.
pub const ALL_TURNS: u32 = (1 << N_MOVE) - 1;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moves::Face;

    fn mask(faces: &[(Face, bool)]) -> u32 {
        faces.iter().fold(0, |m, &(f, all)| {
            let bits = if all { 0b111 } else { 0b010 };
            m | bits << (3 * f as u32)
        })
    }

    /// Positions made by turns of a set are never called out of reach of it; a position a
    /// turn outside the set makes is, by the invariant that set breaks.
    #[test]
    fn reachable_positions_pass_and_others_are_caught() {
        use rand::{Rng, SeedableRng};
        let ru = mask(&[(Face::R, true), (Face::U, true)]);
        let g1 = mask(&[
            (Face::U, true),
            (Face::D, true),
            (Face::R, false),
            (Face::L, false),
            (Face::F, false),
            (Face::B, false),
        ]);
        let halves = mask(&[(Face::U, false), (Face::R, false), (Face::F, false)]);
        let mut rng = rand::rngs::StdRng::seed_from_u64(48);
        for set in [ru, g1, halves, ALL_TURNS] {
            let turns: Vec<Move> = Move::ALL
                .into_iter()
                .filter(|m| set & (1 << m.index()) != 0)
                .collect();
            for _ in 0..200 {
                let len = rng.random_range(0..30);
                let seq: Vec<Move> = (0..len)
                    .map(|_| turns[rng.random_range(0..turns.len())])
                    .collect();
                let c = CubieCube::from_moves(&seq);
                assert_eq!(unreachable(&c, set), None, "{seq:?}");
            }
        }
        let after = |m: &str| CubieCube::from_moves(&crate::MoveSeq::parse(m).expect("moves").0);
        // F moves pieces R,U never moves; F2 L2 keeps the G1 orientations but not the corners'
        // parity under half turns alone
        assert!(unreachable(&after("F"), ru).is_some());
        assert!(unreachable(&after("D"), ru).is_some());
        assert!(unreachable(&after("F"), g1).is_some());
        assert!(unreachable(&after("R"), g1).is_some());
        assert!(unreachable(&after("U"), halves).is_some());
        assert!(unreachable(&after("R U R' U'"), ru).is_none());
    }
}
