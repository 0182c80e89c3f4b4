//! Symmetry reduction of the optimal search: a position's symmetry group and the move prefixes
//! that are least in their orbit under it.
//!
//! When a symmetry `s` of the 48 fixes a position (`S_s * c * S_s^-1 = c`), it maps every
//! solution `m1 m2 ...` of `c` to the solution `s(m1) s(m2) ...` of `c` itself (with
//! `s(m) = S_s * m * S_s^-1`), of the same length in both metrics. So the search only has to
//! expand a move `m` at ply `k` when `m` is the least move (by index) of its orbit under the
//! symmetries that fix the position *and* every move of the prefix before it: the prefixes
//! searched are exactly those that are lexicographically least in their orbit.
//!
//! Why no solution is lost, with the move pruning of the search (no face twice in a row; of two
//! opposite faces only U before D, R before L, F before B): let `d` be the shortest length and
//! `w` the lexicographically least of the pruned-form solutions of length `d`, and `p` any
//! prefix of it. If some `s` of the group mapped `p` to a smaller `s(p)`, then `s(w)` would be
//! a solution of length `d` too; like `w`, it never turns one face twice in a row nor one axis
//! three times in a row (`s` maps faces to faces and axes to axes), so bringing it into pruned
//! form only swaps adjacent opposite turns from D-before-U order into U-before-D order. U, R, F
//! turns have smaller indices (0..9) than D, L, B turns (9..18), so each swap makes the sequence
//! lexicographically smaller, and the pruned form of `s(w)` would be smaller than `w`: a
//! contradiction. So every prefix of `w` is least in its orbit, and `w` is searched. This holds
//! in both metrics.

use cubefleet_tables::moves::N_MOVE;
use cubefleet_tables::symmetry::{N_SYM, SYMMETRIES};
use cubefleet_tables::{CubieCube, Move};

/// A set of the 48 symmetries of `cubefleet_tables::symmetry::SYMMETRIES`: bit `s` stands for
/// symmetry `s`. The sets built here are groups and always hold the identity (symmetry 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SymSet(u64);

impl SymSet {
    /// The trivial group: the identity alone. Search with it prunes nothing.
    pub const IDENTITY: SymSet = SymSet(1);

    /// The symmetry group of `cube`: every `s` with `S_s * cube * S_s^-1 = cube` (rotations and
    /// reflections).
    pub fn of_position(cube: &CubieCube) -> SymSet {
        let syms = &*SYMMETRIES;
        let mut bits = 0u64;
        for s in 0..N_SYM {
            if syms.conjugate(cube, s) == *cube {
                bits |= 1 << s;
            }
        }
        SymSet(bits)
    }

    /// Number of symmetries in the set.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// True when the set is empty (never for the groups built here).
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// True when symmetry `s` is in the set.
    pub fn contains(self, s: usize) -> bool {
        s < N_SYM && self.0 >> s & 1 == 1
    }

    /// True when the set is the identity alone, so no move is pruned by it.
    #[inline]
    pub fn is_trivial(self) -> bool {
        self.0 == 1
    }

    /// True when move `m` (an index `< 18`) is the least move of its orbit under this group:
    /// no symmetry of the set maps it to a smaller index.
    #[inline]
    pub fn is_least_in_orbit(self, m: usize) -> bool {
        debug_assert!(m < N_MOVE);
        let conj = &SYMMETRIES.move_conj;
        // the identity (bit 0) maps m to itself
        let mut bits = self.0 & !1;
        while bits != 0 {
            let s = bits.trailing_zeros() as usize;
            if conj[s][m].index() < m {
                return false;
            }
            bits &= bits - 1;
        }
        true
    }

    /// The subgroup of the symmetries that fix move `m` (an index `< 18`).
    #[inline]
    pub fn fixing(self, m: usize) -> SymSet {
        if self.is_trivial() {
            return self;
        }
        let conj = &SYMMETRIES.move_conj;
        let mut kept = 0u64;
        let mut bits = self.0;
        while bits != 0 {
            let s = bits.trailing_zeros() as usize;
            if conj[s][m].index() == m {
                kept |= 1 << s;
            }
            bits &= bits - 1;
        }
        SymSet(kept)
    }
}

/// Longest run of adjacent moves [`CyclicWindows`] compares with the start of the prefix.
const WINDOW: usize = 4;

/// Extra pruning for a position that commutes with every move and is its own inverse: in the
/// cube group only the superflip (and the solved cube) do. For such a `c`, the solutions are
/// closed under rotation: `w = a b` evaluating to `c` implies `b a = a^-1 c a = c`. They are
/// also closed under inversion (`c^-1 = c`) and under the symmetries of `c`.
///
/// Why it is sound, in the half-turn metric only: let `w` be the lexicographically least
/// pruned-form solution of the shortest length `d`. Rotating it, inverting it or mapping it by a
/// symmetry gives another solution of length `d`; since `d` is shortest, no face is turned twice
/// in a row nor one axis three times in a row, even across the ends, and its pruned form only
/// swaps adjacent opposite turns, each swap making it smaller (see the module documentation).
/// So every image starts with moves no smaller than `w`'s first ones: for every run `x1 .. xk`
/// of `k` adjacent moves of `w` (`2 <= k <= 4`), each of `s(x1) .. s(xk)` and
/// `s(xk^-1) .. s(x1^-1)` is at least `w1 .. wk` (runs compared as base-18 numbers). A prefix
/// with a run breaking this is not a prefix of `w` and is not searched. The least-in-orbit
/// pruning of [`SymSet`] keeps the same `w`, so the two combine. (In the quarter-turn metric
/// `U D U` and `U2 D` cost the same, so the argument fails there and this pruning is not used.)
#[derive(Clone, Debug)]
pub struct CyclicWindows {
    /// `rank[k - 2][run]` for runs of `k` moves (`run` in base 18, first move most
    /// significant): the least value of the run's images `s(x1) .. s(xk)` and
    /// `s(xk^-1) .. s(x1^-1)` over the group.
    rank: Vec<Vec<u32>>,
}

impl CyclicWindows {
    /// The run ranks for `cube` under its symmetry group `group`, when `cube` commutes with all
    /// 18 moves and is its own inverse; `None` otherwise.
    pub fn of_position(cube: &CubieCube, group: SymSet) -> Option<CyclicWindows> {
        let central = Move::ALL
            .iter()
            .all(|m| cube.multiply(m.cubie()) == m.cubie().multiply(cube));
        if !central || cube.inverse() != *cube {
            return None;
        }
        let conj = &SYMMETRIES.move_conj;
        let inv = |m: usize| Move::from_index(m).inverse().index();
        let syms: Vec<usize> = (0..N_SYM).filter(|&s| group.contains(s)).collect();
        let rank = (2..=WINDOW)
            .map(|k| {
                let n = N_MOVE.pow(k as u32);
                (0..n)
                    .map(|run| {
                        // the run's moves, most significant first
                        let mut digits = [0usize; WINDOW];
                        let mut v = run;
                        for d in digits[..k].iter_mut().rev() {
                            *d = v % N_MOVE;
                            v /= N_MOVE;
                        }
                        let value = |f: &dyn Fn(usize) -> usize| {
                            (0..k).fold(0u32, |acc, j| acc * N_MOVE as u32 + f(j) as u32)
                        };
                        syms.iter()
                            .map(|&s| {
                                let c = &conj[s];
                                let direct = value(&|j| c[digits[j]].index());
                                let inverted = value(&|j| c[inv(digits[k - 1 - j])].index());
                                direct.min(inverted)
                            })
                            .min()
                            .unwrap_or(run as u32)
                    })
                    .collect()
            })
            .collect();
        Some(CyclicWindows { rank })
    }

    /// True when move `m` (an index `< 18`) may follow `prefix` (the moves searched so far):
    /// each run of up to 4 adjacent moves ending with `m` is no smaller than the run of the
    /// same length at the start (the first runs themselves must be the least of their images).
    #[inline]
    pub fn allows(&self, prefix: &[Move], m: usize) -> bool {
        let n = prefix.len();
        let at = |i: usize| if i < n { prefix[i].index() } else { m };
        let mut first = at(0);
        let (mut run, mut place) = (m, N_MOVE);
        for k in 2..=WINDOW.min(n + 1) {
            first = N_MOVE * first + at(k - 1);
            run += place * prefix[n + 1 - k].index();
            place *= N_MOVE;
            if (self.rank[k - 2][run] as usize) < first {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubefleet_tables::{parse_position, InputFormat};

    fn cube(moves: &str) -> CubieCube {
        parse_position(moves, InputFormat::Moves).expect("valid moves")
    }

    #[test]
    fn solved_and_superflip_have_all_48() {
        assert_eq!(SymSet::of_position(&CubieCube::SOLVED).len(), N_SYM);
        let superflip = cube("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2");
        assert_eq!(SymSet::of_position(&superflip).len(), N_SYM);
    }

    #[test]
    fn a_scramble_has_only_the_identity() {
        let c = cube("R U2 F' L D B2 R' U F2 D'");
        let g = SymSet::of_position(&c);
        assert!(g.is_trivial());
        assert!(g.contains(0) && !g.is_empty());
        assert!(Move::ALL.iter().all(|m| g.is_least_in_orbit(m.index())));
    }

    #[test]
    fn superflip_first_moves_fall_into_two_orbits() {
        let g = SymSet::of_position(&CubieCube::SOLVED);
        let least: Vec<usize> = (0..N_MOVE).filter(|&m| g.is_least_in_orbit(m)).collect();
        // U (quarter turns, both directions) and U2 (half turns)
        assert_eq!(least, vec![0, 1]);
        // U is fixed by the four turns about the UD axis, U2 also by the four vertical mirrors
        assert_eq!(g.fixing(0).len(), 4);
        assert_eq!(g.fixing(1).len(), 8);
    }

    #[test]
    fn subgroups_are_groups() {
        let g = SymSet::of_position(&CubieCube::SOLVED);
        let syms = &*SYMMETRIES;
        for m in 0..N_MOVE {
            let h = g.fixing(m);
            for a in (0..N_SYM).filter(|&a| h.contains(a)) {
                assert!(h.contains(syms.inverse[a] as usize));
                for b in (0..N_SYM).filter(|&b| h.contains(b)) {
                    let p = syms.cube[a].multiply(&syms.cube[b]);
                    let ab = (0..N_SYM).find(|&t| syms.cube[t] == p).expect("closed");
                    assert!(h.contains(ab), "move {m}: {a} * {b}");
                }
            }
        }
    }

    #[test]
    fn only_the_superflip_gets_cyclic_pairs() {
        let superflip = cube("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2");
        let pairs = CyclicWindows::of_position(&superflip, SymSet::of_position(&superflip))
            .expect("the superflip is central");
        let checkerboard = cube("U2 D2 F2 B2 L2 R2");
        let g = SymSet::of_position(&checkerboard);
        assert!(CyclicWindows::of_position(&checkerboard, g).is_none());
        // U R is the least pair; after U R', no quarter turn pair of U R's kind may follow
        let (u, r, r3, f) = (Move::ALL[0], Move::ALL[3], Move::ALL[5], 6);
        assert!(pairs.allows(&[u], r.index()));
        assert!(pairs.allows(&[u], r3.index()));
        assert!(pairs.allows(&[u, r], f));
        assert!(!pairs.allows(&[u, r3, u], f));
    }

    #[test]
    fn pair_ranks_are_the_same_for_every_image() {
        let superflip = cube("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2");
        let pairs = CyclicWindows::of_position(&superflip, SymSet::of_position(&superflip))
            .expect("the superflip is central");
        let conj = &SYMMETRIES.move_conj;
        let inv = |m: usize| Move::from_index(m).inverse().index();
        for x in 0..N_MOVE {
            for y in 0..N_MOVE {
                let r = pairs.rank[0][N_MOVE * x + y];
                assert!(r as usize <= N_MOVE * x + y);
                assert_eq!(pairs.rank[0][N_MOVE * inv(y) + inv(x)], r);
                for sym in conj {
                    assert_eq!(pairs.rank[0][N_MOVE * sym[x].index() + sym[y].index()], r);
                }
            }
        }
    }
}
