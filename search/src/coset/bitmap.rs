//! The bitmap of a coset (one bit per element of H, laid out as the module above says) and one
//! step of H's ten turns over all of it.
//!
//! A step computes the next bitmap block by block: the block of corner permutation `c` gathers,
//! for each turn `m` of H, the block of `c * m` (turns act on the right and H's turns are
//! closed under inverses, so "reachable by one more turn" is "one turn away"), each 12-bit
//! group `ud` from the group `ud * m` of that block, its 12 bits permuted as `m` moves the
//! slice edges (not at all for the turns of U and D, nor for B2, which changes only the
//! order's parity). Blocks are unpacked to a group per `u16` for the gathers. A thread owns
//! the blocks it writes, so no write is shared. A block whose bits are all set is copied as
//! is; a block gathers only from the neighbours whose bits changed in the step before (the
//! others' neighbours are all in it already), and none at all when neither it nor they did.
//!
//! The U/D-edge permutation's index is a Lehmer code with place 0 most significant, so it is
//! `a * 24 + b`: `a < 1680` names the edges in the U layer's four places, in order, and `b <
//! 24` the order of the other four in the D layer. A turn of U changes only `a` and one of D
//! only `b`: a block gathers by them a run of 24 groups at a time (U), or each run through
//! one fixed order of 24 (D), with no table read per group. Only R2, F2, L2 and B2 gather
//! group by group. `Turns::new` checks the split on every index.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

use cubefleet_tables::coord::{N_CORNERS, N_UD_EDGES};
use cubefleet_tables::moves::N_MOVE;
use cubefleet_tables::{CoordTables, CubieCube};
use rayon::prelude::*;

use super::{
    available_memory, slice_parity, CosetError, COSET_SIZE, EDGES_PER_CORNERS, H_MOVES,
    MEMORY_NEEDED, SLICE_HALF,
};

/// Words of 64 bits in one corner permutation's block: 7560.
const BLOCK_WORDS: usize = EDGES_PER_CORNERS / 64;
/// Corner permutations in an orbit of the turns of U and D (which commute: 4 x 4).
const ORBIT: usize = 16;

/// For the block at place `k` of its orbit, the place of its neighbour by turn `H_MOVES[j]`
/// when that turn is one of U or D (`None` for the half turns of the other faces).
#[inline]
fn in_orbit(k: usize, j: usize) -> Option<usize> {
    let (i, d) = (k % 4, k / 4);
    match j {
        0..=2 => Some(4 * d + (i + j + 1) % 4),
        5..=7 => Some(4 * ((d + j - 4) % 4) + i),
        _ => None,
    }
}

/// Groups in a run: the orders of the four D-layer edges, for one choice of the U layer's.
const RUN: usize = 24;
/// Runs in a block: the ordered choices of four of the eight U/D edges for the U layer.
const RUNS: usize = N_UD_EDGES / RUN;

/// The parity of each order of the D layer's four edges: a U/D-edge permutation `a * 24 + b`
/// has the parity of its run `a` plus that of `b` (the Lehmer digits' sum).
const ORDER_PARITY: [u8; RUN] = {
    let mut p = [0; RUN];
    let mut b = 0;
    while b < RUN {
        p[b] = slice_parity(b);
        b += 1;
    }
    p
};

/// A block unpacked, a group per `u16`, indexed by a `u16` (no bounds check; the entries past
/// [`N_UD_EDGES`] stay 0).
type Groups = Box<[u16; 1 << 16]>;

/// A group (one `ud_edges` of a block) with all its 12 bits set.
const FULL: u16 = (1 << SLICE_HALF) - 1;

/// One bit per position of a coset, and the number of bits set in each corner block.
///
/// The words are allocated zeroed (`calloc`): the system commits a page only when a bit in it
/// is set or a block is written, so a solve to a small depth, which touches few blocks, takes
/// little memory of the 2.4 GB.
pub(super) struct Bitmap {
    /// Bit `i % 64` of word `i / 64` is local index `i`.
    words: Box<[AtomicU64]>,
    /// Bits set in each block of [`BLOCK_WORDS`] words.
    pop: Vec<AtomicU32>,
}

impl Bitmap {
    /// An empty bitmap ([`super::BITMAP_BYTES`]), refused when it cannot be allocated.
    pub(super) fn new() -> Result<Bitmap, CosetError> {
        let n = (COSET_SIZE / 64) as usize;
        let words =
            bytemuck::allocation::try_zeroed_slice_box(n).map_err(|()| CosetError::Memory {
                needed: MEMORY_NEEDED,
                available: available_memory(),
            })?;
        let pop = (0..N_CORNERS).map(|_| AtomicU32::new(0)).collect();
        Ok(Bitmap { words, pop })
    }

    /// Sets local index `i`; true when it was clear.
    #[inline]
    pub(super) fn set(&self, i: u64) -> bool {
        let bit = 1u64 << (i % 64);
        let before = self.words[(i / 64) as usize].fetch_or(bit, Relaxed);
        let new = before & bit == 0;
        if new {
            self.pop[i as usize / EDGES_PER_CORNERS].fetch_add(1, Relaxed);
        }
        new
    }

    /// Hints the CPU to fetch the word of local index `i` (to be set soon).
    #[inline]
    pub(super) fn prefetch(&self, i: u64) {
        cubefleet_tables::prefetch(&self.words, (i / 64) as usize);
    }

    /// True when local index `i` is set.
    pub(super) fn get(&self, i: u64) -> bool {
        self.words[(i / 64) as usize].load(Relaxed) >> (i % 64) & 1 == 1
    }

    /// Bits set.
    pub(super) fn count(&self) -> u64 {
        self.pop.iter().map(|p| u64::from(p.load(Relaxed))).sum()
    }

    /// The local indices whose bits are clear, in increasing order.
    pub(super) fn zeros(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for (c, pop) in self.pop.iter().enumerate() {
            if pop.load(Relaxed) as usize == EDGES_PER_CORNERS {
                continue;
            }
            for (w, word) in self.block(c).iter().enumerate() {
                let mut clear = !word.load(Relaxed);
                while clear != 0 {
                    let bit = clear.trailing_zeros() as usize;
                    clear &= clear - 1;
                    out.push((c * EDGES_PER_CORNERS + 64 * w + bit) as u64);
                }
            }
        }
        out
    }

    /// The words of corner permutation `c`'s block.
    #[inline]
    fn block(&self, c: usize) -> &[AtomicU64] {
        &self.words[c * BLOCK_WORDS..(c + 1) * BLOCK_WORDS]
    }
}

/// What a step needs to know of H's ten turns, as tables over the bitmap's coordinates.
pub(super) struct Turns {
    /// `corners[c][j]`: corner permutation `c` after turn `H_MOVES[j]`.
    corners: Vec<[u16; 10]>,
    /// `ud[j][e]`: U/D-edge permutation `e` after turn `H_MOVES[j]`.
    ud: Vec<Vec<u16>>,
    /// `u_runs[j][a]`: the run the turn `H_MOVES[j]` of U (`j < 3`) takes run `a` to.
    u_runs: [Vec<u16>; 3],
    /// `d_orders[j][b]`: the order the turn `H_MOVES[5 + j]` of D takes order `b` to.
    d_orders: [[u8; RUN]; 3],
    /// Parity of each corner permutation.
    corner_parity: Vec<u8>,
    /// Parity of each run's U-layer edges: U/D-edge permutation `24 * a + b` has parity
    /// `run_parity[a] ^ ORDER_PARITY[b]`.
    run_parity: Vec<u8>,
    /// `slices[j][p]`: the bits a group whose slice orders have parity `p` gathers from the
    /// group `H_MOVES[j]` takes it to, for each bit of that group: the bits set in the low 6
    /// bits of the source value `v` give `slices[j][p][0][v & 63]`, its high 6 bits
    /// `slices[j][p][1][v >> 6]`.
    slices: Vec<[[[u16; 64]; 2]; 2]>,
    /// The corner permutations in orbits of the turns of U and D: `orbits[o][4 * j + i]` is
    /// `orbits[o][0] * U^i * D^j`. A thread makes the 16 blocks of an orbit one after the
    /// other: their gathers by the turns of U and D read the orbit's blocks, unpacked once.
    orbits: Vec<[u16; ORBIT]>,
    /// True for the turns that leave every group's bits in place (those of U and D, and B2,
    /// which changes only the parity of the slice edges' order).
    keeps_slice: [bool; 10],
}

impl Turns {
    /// The tables, from the move tables.
    pub(super) fn new(t: &CoordTables) -> Turns {
        let corners: Vec<[u16; 10]> = (0..N_CORNERS)
            .map(|c| H_MOVES.map(|m| t.corners_move[N_MOVE * c + m]))
            .collect();
        let corners_of = |c: u16, j: usize| corners[c as usize][j];
        let ud: Vec<Vec<u16>> = H_MOVES
            .iter()
            .map(|&m| {
                (0..N_UD_EDGES)
                    .map(|e| t.ud_edges_move[N_MOVE * e + m])
                    .collect()
            })
            .collect();
        // H_MOVES: U, U2, U' are 0..=2, D, D2, D' are 5..=7
        let u_runs: [Vec<u16>; 3] =
            std::array::from_fn(|j| (0..RUNS).map(|a| ud[j][a * RUN] / RUN as u16).collect());
        let d_orders: [[u8; RUN]; 3] =
            std::array::from_fn(|j| std::array::from_fn(|b| ud[5 + j][b] as u8));
        // the split the gathers rely on, checked on every index
        for j in 0..3 {
            for (e, (&u, &d)) in ud[j].iter().zip(&ud[5 + j]).enumerate() {
                let (a, b) = (e / RUN, e % RUN);
                assert_eq!(u as usize, RUN * u_runs[j][a] as usize + b);
                assert_eq!(d as usize, RUN * a + d_orders[j][b] as usize);
            }
        }
        let mut cube = CubieCube::SOLVED;
        let corner_parity = (0..N_CORNERS)
            .map(|c| {
                cube.set_corners(c);
                cube.corner_parity()
            })
            .collect();
        let mut cube = CubieCube::SOLVED;
        let ud_parity: Vec<u8> = (0..N_UD_EDGES)
            .map(|e| {
                cube.set_ud_edges(e);
                cube.edge_parity()
            })
            .collect();
        let run_parity: Vec<u8> = (0..RUNS).map(|a| ud_parity[RUN * a]).collect();
        for (e, &p) in ud_parity.iter().enumerate() {
            assert_eq!(p, run_parity[e / RUN] ^ ORDER_PARITY[e % RUN]);
        }
        let mut orbits = Vec::with_capacity(N_CORNERS / ORBIT);
        let mut placed = vec![false; N_CORNERS];
        for c0 in 0..N_CORNERS {
            if placed[c0] {
                continue;
            }
            let mut orbit = [0u16; ORBIT];
            let mut row = c0 as u16;
            for d in 0..4 {
                let mut c = row;
                for i in 0..4 {
                    orbit[4 * d + i] = c;
                    placed[c as usize] = true;
                    c = corners_of(c, 0);
                }
                row = corners_of(row, 5);
            }
            orbits.push(orbit);
        }
        let mut keeps_slice = [true; 10];
        let slices = H_MOVES
            .iter()
            .enumerate()
            .map(|(j, &m)| {
                let mut halves = [[[0u16; 64]; 2]; 2];
                for (p, tables) in halves.iter_mut().enumerate() {
                    // the group's bit `s` (order `sp` of parity `p`, `sp / 2 = s`) comes from
                    // bit `sp * m / 2` of the source group
                    let mut to = [0usize; SLICE_HALF];
                    for s in 0..SLICE_HALF {
                        let sp = 2 * s + usize::from(slice_parity(2 * s) != p as u8);
                        let from = t.slice_sorted_move[N_MOVE * sp + m] as usize / 2;
                        to[from] = s;
                        keeps_slice[j] &= from == s;
                    }
                    let [low, high] = tables;
                    for (v, (lo, hi)) in low.iter_mut().zip(high.iter_mut()).enumerate() {
                        for (b, (&to_lo, &to_hi)) in to[..6].iter().zip(&to[6..]).enumerate() {
                            if v >> b & 1 == 1 {
                                *lo |= 1 << to_lo;
                                *hi |= 1 << to_hi;
                            }
                        }
                    }
                }
                halves
            })
            .collect();
        Turns {
            orbits,
            corners,
            ud,
            u_runs,
            d_orders,
            corner_parity,
            run_parity,
            slices,
            keeps_slice,
        }
    }

    /// One step: `dst` becomes `src` and every position one turn of H away from it. `dst`
    /// must hold the bitmap `src` was made from by the step before (or be empty, before the
    /// first step).
    /// `progress(done, all)` hears of the blocks done now and then.
    pub(super) fn expand(
        &self,
        src: &Bitmap,
        dst: &mut Bitmap,
        progress: &(dyn Fn(u64, u64) + Sync),
    ) {
        // a block whose bits and whose neighbours' bits did not change in the step before
        // (`dst` still holds that step's start) gains nothing now
        let changed: Vec<bool> = src
            .pop
            .iter()
            .zip(&dst.pop)
            .map(|(s, d)| s.load(Relaxed) != d.load(Relaxed))
            .collect();
        let done = AtomicUsize::new(0);
        let dst = &*dst;
        self.orbits
            .par_iter()
            .for_each_init(Scratch::new, |scratch, orbit| {
                let work = orbit.map(|c| {
                    changed[c as usize]
                        || self.corners[c as usize]
                            .iter()
                            .any(|&f| changed[f as usize])
                });
                if work.contains(&true) {
                    for (&c, unpacked) in orbit.iter().zip(scratch.orbit.iter_mut()) {
                        unpack(src.block(c as usize), &mut unpacked[..]);
                    }
                    for (k, &c) in orbit.iter().enumerate() {
                        if work[k] {
                            let c = c as usize;
                            self.block(src, k, c, &changed, scratch, dst.block(c), &dst.pop[c]);
                        }
                    }
                }
                let n = done.fetch_add(ORBIT, Relaxed) + ORBIT;
                if n.is_multiple_of(1024) || n == N_CORNERS {
                    progress(n as u64, N_CORNERS as u64);
                }
            });
    }

    /// The block of corner permutation `c`, place `k` of its orbit (unpacked in
    /// `scratch.orbit`), of the next bitmap into `out` and `pop`, gathering only from the
    /// neighbours in `changed` (the others hold what they held a step before, whose neighbours
    /// are all in `c`'s block already); `scratch`: a thread's buffers.
    #[allow(clippy::too_many_arguments)]
    fn block(
        &self,
        src: &Bitmap,
        k: usize,
        c: usize,
        changed: &[bool],
        scratch: &mut Scratch,
        out: &[AtomicU64],
        pop: &AtomicU32,
    ) {
        let own = src.pop[c].load(Relaxed) as usize;
        let from = self.corners[c];
        if own == EDGES_PER_CORNERS {
            if pop.load(Relaxed) as usize != EDGES_PER_CORNERS {
                out.iter().for_each(|w| w.store(!0, Relaxed));
                pop.store(EDGES_PER_CORNERS as u32, Relaxed);
            }
            return;
        }
        let Scratch {
            orbit,
            groups,
            source,
            packed,
        } = scratch;
        groups.copy_from_slice(&orbit[k][..N_UD_EDGES]);
        let pc = self.corner_parity[c];
        for (j, &f) in from.iter().enumerate() {
            if !changed[f as usize] || src.pop[f as usize].load(Relaxed) == 0 {
                continue;
            }
            let ud = &self.ud[j];
            if let Some(k1) = in_orbit(k, j) {
                let from = &orbit[k1][..N_UD_EDGES];
                if j < 3 {
                    for (run, &a) in groups.chunks_exact_mut(RUN).zip(&self.u_runs[j]) {
                        let a = RUN * a as usize;
                        for (v, &w) in run.iter_mut().zip(&from[a..a + RUN]) {
                            *v |= w;
                        }
                    }
                } else {
                    let order = &self.d_orders[j - 5];
                    for (run, w) in groups.chunks_exact_mut(RUN).zip(from.chunks_exact(RUN)) {
                        let w: &[u16; RUN] = w.try_into().expect("runs of 24");
                        for (v, &b) in run.iter_mut().zip(order) {
                            *v |= w[b as usize];
                        }
                    }
                }
                continue;
            }
            unpack(src.block(f as usize), &mut source[..]);
            if self.keeps_slice[j] {
                for (v, &e) in groups.iter_mut().zip(ud) {
                    *v |= source[e as usize];
                }
            } else {
                let halves = &self.slices[j];
                let runs = groups.chunks_exact_mut(RUN).zip(ud.chunks_exact(RUN));
                for ((run, to), &pa) in runs.zip(&self.run_parity) {
                    // the tables of a group of order parity 0 and 1 in this run
                    let p = usize::from(pc ^ pa);
                    let same = &halves[p];
                    let other = &halves[p ^ 1];
                    for ((v, &e), &pb) in run.iter_mut().zip(to).zip(&ORDER_PARITY) {
                        let bits = source[e as usize] as usize;
                        let t = if pb == 0 { same } else { other };
                        *v |= t[0][bits & 63] | t[1][bits >> 6];
                    }
                }
            }
        }
        pack(&groups[..N_UD_EDGES], packed);
        let mut count = 0;
        for (o, &w) in out.iter().zip(packed.iter()) {
            o.store(w, Relaxed);
            count += w.count_ones();
        }
        pop.store(count, Relaxed);
    }
}

/// A thread's buffers for [`Turns::block`].
struct Scratch {
    /// The blocks of the orbit being made, unpacked.
    orbit: Vec<Groups>,
    /// The block being made, a group of 12 bits per `u16`.
    groups: Vec<u16>,
    /// A neighbour's block, unpacked the same way.
    source: Groups,
    /// The block made, packed.
    packed: Vec<u64>,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            orbit: (0..ORBIT).map(|_| groups()).collect(),
            groups: vec![0; N_UD_EDGES],
            source: groups(),
            packed: vec![0; BLOCK_WORDS],
        }
    }
}

/// An unpacked block of zeros.
fn groups() -> Groups {
    vec![0; 1 << 16]
        .into_boxed_slice()
        .try_into()
        .expect("2^16 entries")
}

/// Groups of 12 bits in 3 words.
const GROUPS_PER_3_WORDS: usize = 16;

/// A block's groups, one per `u16`: 16 groups from each 3 words, written out so that every
/// shift is a constant.
fn unpack(words: &[AtomicU64], out: &mut [u16]) {
    const M: u64 = FULL as u64;
    for (w, o) in words
        .chunks_exact(3)
        .zip(out.chunks_exact_mut(GROUPS_PER_3_WORDS))
    {
        let (a, b, c) = (w[0].load(Relaxed), w[1].load(Relaxed), w[2].load(Relaxed));
        let g = [
            a,
            a >> 12,
            a >> 24,
            a >> 36,
            a >> 48,
            a >> 60 | b << 4,
            b >> 8,
            b >> 20,
            b >> 32,
            b >> 44,
            b >> 56 | c << 8,
            c >> 4,
            c >> 16,
            c >> 28,
            c >> 40,
            c >> 52,
        ];
        for (slot, v) in o.iter_mut().zip(g) {
            *slot = (v & M) as u16;
        }
    }
}

/// The inverse of [`unpack`].
fn pack(groups: &[u16], words: &mut [u64]) {
    for (g, w) in groups
        .chunks_exact(GROUPS_PER_3_WORDS)
        .zip(words.chunks_exact_mut(3))
    {
        let g: [u64; GROUPS_PER_3_WORDS] = std::array::from_fn(|k| u64::from(g[k]));
        w[0] = g[0] | g[1] << 12 | g[2] << 24 | g[3] << 36 | g[4] << 48 | g[5] << 60;
        w[1] = g[5] >> 4 | g[6] << 8 | g[7] << 20 | g[8] << 32 | g[9] << 44 | g[10] << 56;
        w[2] = g[10] >> 8 | g[11] << 4 | g[12] << 16 | g[13] << 28 | g[14] << 40 | g[15] << 52;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubefleet_tables::coset::{h_element, h_index};
    use rand::{Rng, SeedableRng};

    /// The orbits cover every corner permutation once, and `in_orbit` names the neighbour the
    /// corner table gives.
    #[test]
    fn orbits_of_u_and_d() {
        let turns = Turns::new(&CoordTables::compute());
        let mut seen = vec![false; N_CORNERS];
        for orbit in &turns.orbits {
            for (k, &c) in orbit.iter().enumerate() {
                assert!(!std::mem::replace(&mut seen[c as usize], true));
                for j in 0..10 {
                    if let Some(k1) = in_orbit(k, j) {
                        assert_eq!(turns.corners[c as usize][j], orbit[k1], "{k} {j}");
                    }
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    /// Packing and unpacking round-trip, and a group's bits are where the local index says.
    #[test]
    fn groups_pack_and_unpack() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let groups: Vec<u16> = (0..N_UD_EDGES)
            .map(|_| rng.random_range(0..=FULL))
            .collect();
        let mut words = vec![0u64; BLOCK_WORDS];
        pack(&groups, &mut words);
        for (g, &v) in groups.iter().enumerate() {
            for s in 0..SLICE_HALF {
                let i = g * SLICE_HALF + s;
                assert_eq!(words[i / 64] >> (i % 64) & 1, u64::from(v >> s & 1));
            }
        }
        let atomics: Vec<AtomicU64> = words.iter().map(|&w| AtomicU64::new(w)).collect();
        let mut back = vec![0u16; N_UD_EDGES];
        unpack(&atomics, &mut back);
        assert_eq!(back, groups);
    }

    /// Each turn's tables take a random element `x` of H where the cubie product `x * m` goes.
    #[test]
    fn turns_agree_with_the_cubie_product() {
        let t = CoordTables::compute();
        let turns = Turns::new(&t);
        // B2 swaps the last two slice places: only the parity of the order changes, not its
        // half
        assert_eq!(
            turns.keeps_slice,
            [true, true, true, false, false, true, true, true, false, true]
        );
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for _ in 0..20_000 {
            let i = rng.random_range(0..COSET_SIZE);
            let x = h_element(i).expect("in range");
            let (c, e) = (
                i as usize / EDGES_PER_CORNERS,
                i as usize % EDGES_PER_CORNERS / SLICE_HALF,
            );
            let s = i as usize % SLICE_HALF;
            for (j, &m) in H_MOVES.iter().enumerate() {
                let y = x.apply_move(cubefleet_tables::Move::from_index(m));
                let k = h_index(&y).expect("H is closed under its turns") as usize;
                let (c1, e1, s1) = (
                    k / EDGES_PER_CORNERS,
                    k % EDGES_PER_CORNERS / SLICE_HALF,
                    k % SLICE_HALF,
                );
                assert_eq!(turns.corners[c][j] as usize, c1);
                assert_eq!(turns.ud[j][e] as usize, e1);
                // so the group (c1, e1) gathers from (c, e) by the inverse turn, bit s to s1
                let p = usize::from(
                    turns.corner_parity[c1] ^ turns.run_parity[e1 / RUN] ^ ORDER_PARITY[e1 % RUN],
                );
                let inv = H_MOVES
                    .iter()
                    .position(|&n| {
                        cubefleet_tables::Move::from_index(n)
                            == cubefleet_tables::Move::from_index(m).inverse()
                    })
                    .expect("H is closed under inverses");
                assert_eq!(turns.corners[c1][inv] as usize, c);
                assert_eq!(turns.ud[inv][e1] as usize, e);
                let bits = 1usize << s;
                let t = &turns.slices[inv][p];
                assert_eq!(t[0][bits & 63] | t[1][bits >> 6], 1 << s1);
            }
        }
    }

    /// A step from a few random bits sets exactly them and their ten neighbours.
    #[test]
    #[ignore = "allocates two bitmaps of 2.4 GB; run with --ignored"]
    fn a_step_sets_the_neighbours() {
        let t = CoordTables::compute();
        let turns = Turns::new(&t);
        let src = Bitmap::new().expect("memory");
        let mut dst = Bitmap::new().expect("memory");
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let picks: Vec<u64> = (0..50).map(|_| rng.random_range(0..COSET_SIZE)).collect();
        for &i in &picks {
            src.set(i);
        }
        turns.expand(&src, &mut dst, &|_, _| {});
        let mut want = std::collections::BTreeSet::new();
        for &i in &picks {
            want.insert(i);
            let x = h_element(i).expect("in range");
            for m in H_MOVES {
                let y = x.apply_move(cubefleet_tables::Move::from_index(m));
                want.insert(h_index(&y).expect("in H"));
            }
        }
        assert_eq!(dst.count(), want.len() as u64);
        assert!(want.iter().all(|&i| dst.get(i)));
    }
}
