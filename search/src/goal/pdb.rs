//! The pattern databases of the goal search: for a coordinate of the cube (a projection that
//! every turn maps to itself: where some pieces are, or the orientations) and a set of goal
//! values of it, the distance of every value from the goal set, by a breadth-first search over
//! the question's turns in its metric. A cube's distance to the goal is at least its
//! coordinate's distance (a solution reaches a goal value), so each table is a lower bound and
//! the largest of several is one too.
//!
//! Coordinates ([`Spec`]):
//! - [`Spec::Tracked`]: the positions (and, when `oriented`, the orientations) of a few pieces,
//!   `P(12, e) 2^e P(8, c) 3^c` values for `e` edges and `c` corners — at most 266,112 for the
//!   four pieces the goal search tracks together (four D-layer edges: 190,080), 40,320 for the
//!   eight corners' places alone; the goal is the one value with every piece home;
//! - [`Spec::EdgeOrient`]: the edges' orientations (2,048), times the E-slice edges' places
//!   (495) when `slice`; the goal values are those with the asked positions unflipped (and the
//!   slice edges in the slice);
//! - [`Spec::CornerOrient`]: the corners' orientations (2,187), times the slice's 495 likewise.
//!
//! A table is a byte per value (the largest, 1,082,565 bytes), built in memory on first use by
//! a layered search on every core (about a second for the largest on one core), and kept for
//! the life of the process in [`table`]'s cache, keyed by the coordinate, the goal set, the
//! turns and the metric: a worker builds each once for every job that asks it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use cubefleet_proto::question::Metric;
use cubefleet_tables::moves::N_MOVE;
use cubefleet_tables::{CubieCube, Move};
use rayon::prelude::*;

use crate::moves_in;

/// A distance no goal value is at from this value (the turns never reach the goal).
pub(crate) const UNREACHED: u8 = u8::MAX;

/// A coordinate of the cube and its goal values (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Spec {
    /// Where the edges of `edges` and the corners of `corners` (piece masks) are, with their
    /// orientations when `oriented`; the goal: each home (and untwisted when `oriented`).
    Tracked {
        /// The edges tracked (bit per piece).
        edges: u16,
        /// The corners tracked (bit per piece).
        corners: u8,
        /// True when their orientations are part of the coordinate.
        oriented: bool,
    },
    /// The edge orientations (and the E-slice edges' places when `slice`); the goal: the
    /// positions of `mask` unflipped (and the slice edges in the slice).
    EdgeOrient {
        /// The positions that must be unflipped.
        mask: u16,
        /// True when the slice edges must be in the slice.
        slice: bool,
    },
    /// The corner orientations (and the slice edges' places when `slice`); the goal: the
    /// positions of `mask` untwisted (and the slice edges in the slice).
    CornerOrient {
        /// The positions that must be untwisted.
        mask: u8,
        /// True when the slice edges must be in the slice.
        slice: bool,
    },
}

/// `n! / (n - k)!`: the ways of placing `k` distinct pieces in `n` positions.
const fn arrangements(n: usize, k: usize) -> usize {
    let mut r = 1;
    let mut i = 0;
    while i < k {
        r *= n - i;
        i += 1;
    }
    r
}

/// The number of places of the four slice edges, as a set: `C(12, 4)`.
const N_SLICE: usize = 495;

/// The rank of each 12-bit set of four positions among such sets (in increasing order), and
/// back.
struct SliceRanks {
    rank: Vec<u16>,
    set: Vec<u16>,
}

static SLICE: LazyLock<SliceRanks> = LazyLock::new(|| {
    let set: Vec<u16> = (0u16..1 << 12).filter(|s| s.count_ones() == 4).collect();
    let mut rank = vec![0u16; 1 << 12];
    for (r, &s) in set.iter().enumerate() {
        rank[s as usize] = r as u16;
    }
    debug_assert_eq!(set.len(), N_SLICE);
    SliceRanks { rank, set }
});

/// The set of positions holding the slice edges (pieces 8 to 11).
fn slice_set(c: &CubieCube) -> u16 {
    (0..12)
        .filter(|&p| (8..12).contains(&c.ep[p]))
        .fold(0, |s, p| s | 1 << p)
}

/// Ranks the positions `pos` among `n` (distinct, each below `n`) as a partial permutation.
fn rank_positions(pos: &[u8], n: usize) -> usize {
    let mut used = 0u32;
    let mut r = 0;
    for (i, &p) in pos.iter().enumerate() {
        let smaller_used = (used & ((1 << p) - 1)).count_ones() as usize;
        r = r * (n - i) + p as usize - smaller_used;
        used |= 1 << p;
    }
    r
}

/// The positions of rank `r` ([`rank_positions`]) of `k` pieces among `n`.
fn unrank_positions(mut r: usize, n: usize, k: usize, out: &mut [u8]) {
    let mut digits = [0usize; 12];
    for i in (0..k).rev() {
        digits[i] = r % (n - i);
        r /= n - i;
    }
    let mut used = 0u32;
    for i in 0..k {
        // the digits[i]-th unused position
        let mut left = digits[i];
        let mut p = 0;
        loop {
            if used >> p & 1 == 0 {
                if left == 0 {
                    break;
                }
                left -= 1;
            }
            p += 1;
        }
        out[i] = p as u8;
        used |= 1 << p;
    }
}

/// A filler for the positions a coordinate leaves out of a decoded cube: no piece it tracks.
const NONE: u8 = u8::MAX;

impl Spec {
    /// The number of values of the coordinate.
    pub(crate) fn size(&self) -> usize {
        match *self {
            Spec::Tracked {
                edges,
                corners,
                oriented,
            } => {
                let (e, c) = (edges.count_ones(), corners.count_ones());
                let o = if oriented {
                    (1 << e) * 3usize.pow(c)
                } else {
                    1
                };
                arrangements(12, e as usize) * arrangements(8, c as usize) * o
            }
            Spec::EdgeOrient { slice, .. } => 2048 * if slice { N_SLICE } else { 1 },
            Spec::CornerOrient { slice, .. } => 2187 * if slice { N_SLICE } else { 1 },
        }
    }

    /// The coordinate's value for `c` (below [`Spec::size`]).
    #[inline]
    pub(crate) fn index(&self, c: &CubieCube) -> usize {
        match *self {
            Spec::Tracked {
                edges,
                corners,
                oriented,
            } => {
                let mut epos = [0u8; 12];
                let mut eo = 0usize;
                for p in 0..12 {
                    let e = c.ep[p];
                    if e < 12 && edges >> e & 1 != 0 {
                        // the piece's rank among the tracked ones
                        let k = (edges & ((1 << e) - 1)).count_ones() as usize;
                        epos[k] = p as u8;
                        eo |= (c.eo[p] as usize) << k;
                    }
                }
                let mut cpos = [0u8; 8];
                let mut co = 0usize;
                let weight = [1usize, 3, 9, 27, 81, 243, 729, 2187];
                for p in 0..8 {
                    let k = c.cp[p];
                    if k < 8 && corners >> k & 1 != 0 {
                        let k = (corners & ((1 << k) - 1)).count_ones() as usize;
                        cpos[k] = p as u8;
                        co += c.co[p] as usize * weight[k];
                    }
                }
                let (ne, nc) = (edges.count_ones() as usize, corners.count_ones() as usize);
                let mut i = rank_positions(&epos[..ne], 12) * arrangements(8, nc)
                    + rank_positions(&cpos[..nc], 8);
                if oriented {
                    i = (i << ne | eo) * 3usize.pow(nc as u32) + co;
                }
                i
            }
            Spec::EdgeOrient { slice, .. } => {
                let eo = (0..11).fold(0, |a, p| a << 1 | c.eo[p] as usize);
                if slice {
                    eo * N_SLICE + SLICE.rank[slice_set(c) as usize] as usize
                } else {
                    eo
                }
            }
            Spec::CornerOrient { slice, .. } => {
                let co = (0..7).fold(0, |a, p| a * 3 + c.co[p] as usize);
                if slice {
                    co * N_SLICE + SLICE.rank[slice_set(c) as usize] as usize
                } else {
                    co
                }
            }
        }
    }

    /// A cube of value `i`: the coordinate's pieces where the value says, every other
    /// position holding [`NONE`] (or any piece, for the orientations).
    fn decode(&self, i: usize) -> CubieCube {
        let mut c = CubieCube::SOLVED;
        match *self {
            Spec::Tracked {
                edges,
                corners,
                oriented,
            } => {
                let (ne, nc) = (edges.count_ones() as usize, corners.count_ones() as usize);
                let (mut rest, mut eo, mut co) = (i, 0, 0);
                if oriented {
                    co = rest % 3usize.pow(nc as u32);
                    rest /= 3usize.pow(nc as u32);
                    eo = rest & ((1 << ne) - 1);
                    rest >>= ne;
                }
                let (mut epos, mut cpos) = ([0u8; 12], [0u8; 8]);
                unrank_positions(rest / arrangements(8, nc), 12, ne, &mut epos);
                unrank_positions(rest % arrangements(8, nc), 8, nc, &mut cpos);
                c.ep = [NONE; 12];
                c.eo = [0; 12];
                c.cp = [NONE; 8];
                c.co = [0; 8];
                let pieces = (0..12u8).filter(|e| edges >> e & 1 != 0);
                for (k, e) in pieces.enumerate() {
                    c.ep[epos[k] as usize] = e;
                    c.eo[epos[k] as usize] = (eo >> k & 1) as u8;
                }
                let pieces = (0..8u8).filter(|k| corners >> k & 1 != 0);
                for (k, piece) in pieces.enumerate() {
                    c.cp[cpos[k] as usize] = piece;
                    c.co[cpos[k] as usize] = (co / 3usize.pow(k as u32) % 3) as u8;
                }
            }
            Spec::EdgeOrient { slice, .. } => {
                let (eo, s) = if slice {
                    (i / N_SLICE, i % N_SLICE)
                } else {
                    (i, 0)
                };
                let mut parity = 0;
                for p in 0..11 {
                    c.eo[p] = (eo >> (10 - p) & 1) as u8;
                    parity ^= c.eo[p];
                }
                c.eo[11] = parity;
                if slice {
                    c.ep = slice_cube(s);
                }
            }
            Spec::CornerOrient { slice, .. } => {
                let (co, s) = if slice {
                    (i / N_SLICE, i % N_SLICE)
                } else {
                    (i, 0)
                };
                let mut sum = 0;
                for p in (0..7).rev() {
                    c.co[p] = (co / 3usize.pow(6 - p as u32) % 3) as u8;
                    sum += c.co[p];
                }
                c.co[7] = (3 - sum % 3) % 3;
                if slice {
                    c.ep = slice_cube(s);
                }
            }
        }
        c
    }

    /// True when value `i` is a goal value.
    fn is_goal(&self, i: usize) -> bool {
        let c = self.decode(i);
        match *self {
            Spec::Tracked { .. } => i == self.index(&CubieCube::SOLVED),
            Spec::EdgeOrient { mask, slice } => {
                (0..12).all(|p| mask >> p & 1 == 0 || c.eo[p] == 0)
                    && (!slice || slice_set(&c) == 0xf00)
            }
            Spec::CornerOrient { mask, slice } => {
                (0..8).all(|p| mask >> p & 1 == 0 || c.co[p] == 0)
                    && (!slice || slice_set(&c) == 0xf00)
            }
        }
    }
}

/// Edge places with the slice edges in the set of rank `s` and the others in order.
fn slice_cube(s: usize) -> [u8; 12] {
    let set = SLICE.set[s];
    let (mut slice, mut other) = (8u8, 0u8);
    std::array::from_fn(|p| {
        if set >> p & 1 != 0 {
            slice += 1;
            slice - 1
        } else {
            other += 1;
            other - 1
        }
    })
}

/// A pattern database: the distance of every value of a coordinate from its goal values.
pub(crate) struct Pdb {
    spec: Spec,
    dist: Vec<u8>,
}

impl Pdb {
    /// The distance of `c`'s value from the goal ([`UNREACHED`] when the turns never reach
    /// it): a lower bound of `c`'s distance to every cube that reaches the goal.
    #[inline]
    pub(crate) fn bound(&self, c: &CubieCube) -> u8 {
        self.dist[self.spec.index(c)]
    }

    /// Builds the table by a layered breadth-first search from the goal values over the turns
    /// of `moves` (bit per move; closed under inverse, so the distance from a value to the
    /// goal is the distance from the goal to it) with their costs in `metric`.
    fn build(spec: Spec, moves: u32, metric: Metric) -> Pdb {
        let size = spec.size();
        let dist: Vec<AtomicU8> = (0..size)
            .into_par_iter()
            .map(|i| AtomicU8::new(if spec.is_goal(i) { 0 } else { UNREACHED }))
            .collect();
        let turns: Vec<(&CubieCube, u8)> = moves_in(moves)
            .map(Move::from_index)
            .map(|m| (m.cubie(), metric.turn_cost(m.quarter_turns()) as u8))
            .collect();
        let mut d = 0u8;
        loop {
            let more = AtomicBool::new(false);
            dist.par_iter().enumerate().for_each(|(i, di)| {
                if di.load(Ordering::Relaxed) != d {
                    return;
                }
                let c = spec.decode(i);
                for &(m, cost) in &turns {
                    let next = c.multiply(m);
                    let j = spec.index(&next);
                    if dist[j].fetch_min(d + cost, Ordering::Relaxed) > d + cost {
                        more.store(true, Ordering::Relaxed);
                    }
                }
            });
            // a layer that set nothing may still leave values of the next layer (set by a
            // half turn of cost 2 from the layer before)
            let next_layer = dist.par_iter().any(|x| x.load(Ordering::Relaxed) == d + 1);
            if !more.into_inner() && !next_layer {
                break;
            }
            d += 1;
            debug_assert!(d < UNREACHED - 2);
        }
        Pdb {
            spec,
            dist: dist.into_iter().map(AtomicU8::into_inner).collect(),
        }
    }
}

/// The key of a cached table: the coordinate and goal, the turns and the metric.
type Key = (Spec, u32, Metric);

/// The tables built in this process, kept for every later search that needs one.
static CACHE: LazyLock<Mutex<HashMap<Key, Arc<Pdb>>>> = LazyLock::new(Default::default);

/// The table of `spec` over the turns of `moves` (bit per move) in `metric`: from this
/// process's cache, or built now and kept.
pub(crate) fn table(spec: Spec, moves: u32, metric: Metric) -> Arc<Pdb> {
    debug_assert!(moves >> N_MOVE == 0);
    let key = (spec, moves, metric);
    if let Some(t) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return t.clone();
    }
    // built outside the lock (two threads may both build one; the first kept wins)
    let built = Arc::new(Pdb::build(spec, moves, metric));
    CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_insert(built)
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every coordinate's value decodes to a cube of the same value, and the sizes are the
    /// counts the module states.
    #[test]
    fn values_decode_to_cubes_of_the_same_value() {
        let specs = [
            Spec::Tracked {
                edges: 0xf0,
                corners: 0,
                oriented: true,
            },
            Spec::Tracked {
                edges: 0x130,
                corners: 0x10,
                oriented: true,
            },
            Spec::Tracked {
                edges: 0,
                corners: 0xff,
                oriented: false,
            },
            Spec::EdgeOrient {
                mask: 0xfff,
                slice: true,
            },
            Spec::CornerOrient {
                mask: 0xff,
                slice: true,
            },
        ];
        let sizes = [190_080, 253_440, 40_320, 1_013_760, 1_082_565];
        for (spec, size) in specs.into_iter().zip(sizes) {
            assert_eq!(spec.size(), size, "{spec:?}");
            for i in (0..size).step_by(97).chain([size - 1]) {
                assert_eq!(spec.index(&spec.decode(i)), i, "{spec:?} {i}");
            }
            assert!(spec.is_goal(spec.index(&CubieCube::SOLVED)));
        }
    }
}
