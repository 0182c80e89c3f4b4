//! The coordinate level: numbers that describe part of a cube's state.
//!
//! Every coordinate is 0 for the solved cube. Ranges (derived from each other):
//!
//! | coordinate | range | meaning |
//! | --- | --- | --- |
//! | twist | `0..3^7 = 2187` | orientations of corners URF..DLF (DRB's follows) |
//! | flip | `0..2^11 = 2048` | orientations of edges UR..BL (BR's follows) |
//! | slice_sorted | `0..12*11*10*9 = 11880` | positions and order of the UD-slice edges FR FL BL BR |
//! | slice | `0..C(12,4) = 495` | positions of the UD-slice edges, `slice_sorted / 24` |
//! | u_edges, d_edges | `0..11880` | positions and order of UR UF UL UB, resp. DR DF DL DB |
//! | corners | `0..8! = 40320` | corner permutation |
//! | ud_edges | `0..8! = 40320` | permutation of the 8 U and D edges; meaningful in phase 2 only |
//!
//! A coordinate of 4 edges is `24 * combination + permutation`: the combination says which 4 of
//! the 12 positions they occupy (0 when they occupy positions 8..=11), the permutation their order
//! (Lehmer code). In phase 2 the slice edges are in the slice, so `slice_sorted < 24`.

use crate::cubie::CubieCube;

/// Number of twist values.
pub const N_TWIST: usize = 2187;
/// Number of flip values.
pub const N_FLIP: usize = 2048;
/// Orders of 4 pieces.
pub const N_PERM_4: usize = 24;
/// Ordered placements of 4 edges in 12 positions.
pub const N_SLICE_SORTED: usize = 11880;
/// Unordered placements of the 4 slice edges: `N_SLICE_SORTED / N_PERM_4`.
pub const N_SLICE: usize = N_SLICE_SORTED / N_PERM_4;
/// Placements (with order) of the U edges or the D edges.
pub const N_U_EDGES: usize = N_SLICE_SORTED;
/// Corner permutations.
pub const N_CORNERS: usize = 40320;
/// Permutations of the 8 U and D edges (phase 2).
pub const N_UD_EDGES: usize = 40320;
/// Raw FlipUDSlice values: `N_SLICE * N_FLIP`, as `slice * N_FLIP + flip`.
pub const N_FLIPSLICE: usize = N_SLICE * N_FLIP;
/// UDCorners: which 4 of the 8 corner positions hold the D-layer corners, C(8, 4).
pub const N_UD_CORNERS: usize = 70;

/// The raw FlipUDSlice coordinate (`slice * 2048 + flip < N_FLIPSLICE`) of a UDSliceSorted
/// (`< 11880`) and a flip: the order of the slice edges dropped.
#[inline]
pub fn raw_flipslice(slice_sorted: usize, flip: usize) -> usize {
    slice_sorted / N_PERM_4 * N_FLIP + flip
}

/// Binomial coefficient C(n, k) for the small values used here.
const fn binomial(n: usize, k: usize) -> usize {
    if k > n {
        return 0;
    }
    let mut r = 1;
    let mut i = 0;
    while i < k {
        r = r * (n - i) / (i + 1);
        i += 1;
    }
    r
}

/// The combination rank of the positions set in `mask` among positions `0..n`, as the 4-piece
/// coordinates count it: scanning down from position `n - 1`, the `k`-th piece found (from 1)
/// at position `j` adds `C(n - 1 - j, k)`. For masks of 4 bits; 0 for fewer (only the first 4
/// found count for more). A `const fn`, so that the tables below are built at compile time.
const fn comb4_rank(mask: usize, n: usize) -> usize {
    let (mut comb, mut found, mut j) = (0, 0, n);
    while j > 0 {
        j -= 1;
        if mask >> j & 1 == 1 && found < 4 {
            comb += binomial(n - 1 - j, found + 1);
            found += 1;
        }
    }
    if found == 4 {
        comb
    } else {
        0
    }
}

/// `t[mask] = comb4_rank(mask, n)` for every `mask < M` (`M = 2^n`), at compile time.
const fn comb4_table<const M: usize>(n: usize) -> [u16; M] {
    let mut t = [0u16; M];
    let mut mask = 0;
    while mask < M {
        t[mask] = comb4_rank(mask, n) as u16;
        mask += 1;
    }
    t
}

/// `EDGE4_COMB[mask]`: the combination part of [`get_edge4`] for the edge positions set in
/// `mask` (bit `j` for position `j`), for masks of 4 bits. Built at compile time: the optimal
/// solver reads it for every inverse it bounds, in place of a scan whose branches the CPU cannot
/// predict.
const EDGE4_COMB: [u16; 4096] = comb4_table(12);

/// Lehmer code of a permutation of `0..n` (n <= 8): 0 for the identity. A `const fn`, so that
/// [`PERM4_INDEX`] is built from it at compile time.
const fn perm_index(p: &[u8]) -> usize {
    let mut idx = 0;
    let mut i = 0;
    while i < p.len() {
        let mut smaller = 0;
        let mut j = i + 1;
        while j < p.len() {
            if p[j] < p[i] {
                smaller += 1;
            }
            j += 1;
        }
        idx = idx * (p.len() - i) + smaller;
        i += 1;
    }
    idx
}

/// The permutation of `0..n` with Lehmer code `idx` (inverse of [`perm_index`]).
fn perm_from_index(mut idx: usize, out: &mut [u8]) {
    let n = out.len();
    let mut digits = [0usize; 12];
    for i in (0..n).rev() {
        let base = n - i;
        digits[i] = idx % base;
        idx /= base;
    }
    let mut avail = [0u8; 12];
    for (i, a) in avail.iter_mut().enumerate() {
        *a = i as u8;
    }
    let mut left = n;
    for i in 0..n {
        let d = digits[i];
        out[i] = avail[d];
        avail.copy_within(d + 1..left, d);
        left -= 1;
    }
}

/// `PERM4_INDEX[key]`: the Lehmer code ([`perm_index`]) of the order `o` of 4 edges packed as
/// `key = o[0] | o[1] << 2 | o[2] << 4 | o[3] << 6`, computed at compile time (the entries of
/// keys that are no permutation are never read).
const PERM4_INDEX: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut key = 0;
    while key < 256 {
        let o = [
            (key & 3) as u8,
            (key >> 2 & 3) as u8,
            (key >> 4 & 3) as u8,
            (key >> 6 & 3) as u8,
        ];
        t[key] = perm_index(&o) as u8;
        key += 1;
    }
    t
};

/// The 4-edge coordinate of the edges `base..base+4`: `24 * combination + permutation`.
fn get_edge4(ep: &[u8; 12], base: u8) -> usize {
    let mask = edge4_mask(ep, base);
    // the order of the 4 edges by position, highest position first, packed as `PERM4_INDEX`
    // reads it
    let (mut key, mut rest) = (0, mask);
    for found in 0..4 {
        let j = rest.ilog2() as usize;
        key |= ((ep[j] - base) as usize) << (2 * (3 - found));
        rest &= !(1 << j);
    }
    N_PERM_4 * EDGE4_COMB[mask] as usize + PERM4_INDEX[key] as usize
}

/// The positions of the edges `base..base+4`: bit `j` set when position `j` holds one.
#[inline]
fn edge4_mask(ep: &[u8; 12], base: u8) -> usize {
    let at_least = match base {
        0 => 0xFFF,
        _ => mask_above(ep, base - 1),
    };
    at_least & !mask_above(ep, base + 3)
}

/// Bit `j` set when `bytes[j] > above` (values below 128): one byte comparison and a
/// `movemask` (SSE2, part of every x86-64 CPU), else a loop.
#[inline]
fn mask_above<const N: usize>(bytes: &[u8; N], above: u8) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut b = [0u8; 16];
        b[..N].copy_from_slice(bytes);
        // SAFETY: SSE2 is part of x86-64; the load reads the 16 bytes of `b`, unaligned
        let m = unsafe {
            let v = _mm_loadu_si128(b.as_ptr().cast());
            _mm_movemask_epi8(_mm_cmpgt_epi8(v, _mm_set1_epi8(above as i8)))
        };
        m as usize & ((1 << N) - 1)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (0..N).fold(0, |m, j| m | usize::from(bytes[j] > above) << j)
    }
}

/// Places edges `base..base+4` as [`get_edge4`] describes; the other edges fill the remaining
/// positions in increasing order.
fn set_edge4(ep: &mut [u8; 12], idx: usize, base: u8) {
    let mut order = [0u8; 4];
    perm_from_index(idx % N_PERM_4, &mut order);
    let mut comb = idx / N_PERM_4;
    let mut occupied = [false; 12];
    let mut found = 4;
    // decode the combination: scanning j from 0 up, position j is taken when
    // comb >= C(11 - j, found) with `found` edges still to place
    for (j, taken) in occupied.iter_mut().enumerate() {
        if found > 0 && comb >= binomial(11 - j, found) {
            comb -= binomial(11 - j, found);
            *taken = true;
            found -= 1;
        }
    }
    let mut k = 0;
    let mut others = (0..12u8).filter(|e| !(base..base + 4).contains(e));
    for (slot, taken) in ep.iter_mut().zip(occupied) {
        if taken {
            *slot = base + order[k];
            k += 1;
        } else {
            *slot = others.next().expect("8 other edges");
        }
    }
}

/// `UD_CORNERS[mask]`: the UDCorners coordinate of the corner positions set in `mask` (bit `j`
/// for position `j`), for masks of 4 bits; positions 4..8 (the D layer, home) give 0. Built at
/// compile time: the optimal solver reads it for every inverse it bounds.
const UD_CORNERS: [u16; 256] = comb4_table(8);

impl CubieCube {
    /// UDCorners, `0 <= ud_corners < 70`: which positions the four D-layer corners (DFR, DLF,
    /// DBL, DRB) occupy, 0 when they are home.
    pub fn ud_corners(&self) -> usize {
        UD_CORNERS[mask_above(&self.cp, 3)] as usize
    }

    /// Places the D-layer corners as `ud_corners` says (each group in increasing order).
    pub fn set_ud_corners(&mut self, idx: usize) {
        let mask = (0..256)
            .find(|&m: &usize| m.count_ones() == 4 && UD_CORNERS[m] as usize == idx)
            .expect("0 <= ud_corners < 70");
        let (mut u, mut d) = (0u8, 4u8);
        for j in 0..8 {
            if mask >> j & 1 == 1 {
                self.cp[j] = d;
                d += 1;
            } else {
                self.cp[j] = u;
                u += 1;
            }
        }
    }

    /// Twist, `0 <= twist < 2187`.
    pub fn twist(&self) -> usize {
        self.co[..7].iter().fold(0, |t, &o| 3 * t + o as usize)
    }

    /// Sets the corner orientations to `twist` (DRB's follows from the others).
    pub fn set_twist(&mut self, mut twist: usize) {
        let mut sum = 0;
        for i in (0..7).rev() {
            self.co[i] = (twist % 3) as u8;
            sum += self.co[i] as usize;
            twist /= 3;
        }
        self.co[7] = ((3 - sum % 3) % 3) as u8;
    }

    /// Flip, `0 <= flip < 2048`.
    pub fn flip(&self) -> usize {
        // bit j of the mask is eo[j]; the flip reads eo[0] as its highest bit (bit 10)
        let mask = (mask_above(&self.eo, 0) & 0x7FF) as u32;
        (mask.reverse_bits() >> 21) as usize
    }

    /// Sets the edge orientations to `flip` (BR's follows from the others).
    pub fn set_flip(&mut self, mut flip: usize) {
        let mut sum = 0;
        for i in (0..11).rev() {
            self.eo[i] = (flip % 2) as u8;
            sum += self.eo[i];
            flip /= 2;
        }
        self.eo[11] = sum % 2;
    }

    /// UDSliceSorted, `0 <= slice_sorted < 11880`.
    pub fn slice_sorted(&self) -> usize {
        get_edge4(&self.ep, 8)
    }

    /// Places the slice edges as `slice_sorted` says (other edges in increasing order).
    pub fn set_slice_sorted(&mut self, idx: usize) {
        set_edge4(&mut self.ep, idx, 8)
    }

    /// UDSlice, `0 <= slice < 495`: which positions the slice edges occupy.
    pub fn slice(&self) -> usize {
        EDGE4_COMB[edge4_mask(&self.ep, 8)] as usize
    }

    /// U edges coordinate, `0 <= u_edges < 11880`.
    pub fn u_edges(&self) -> usize {
        get_edge4(&self.ep, 0)
    }

    /// Places the U edges as `u_edges` says.
    pub fn set_u_edges(&mut self, idx: usize) {
        set_edge4(&mut self.ep, idx, 0)
    }

    /// D edges coordinate, `0 <= d_edges < 11880`.
    pub fn d_edges(&self) -> usize {
        get_edge4(&self.ep, 4)
    }

    /// Places the D edges as `d_edges` says.
    pub fn set_d_edges(&mut self, idx: usize) {
        set_edge4(&mut self.ep, idx, 4)
    }

    /// Corner permutation, `0 <= corners < 40320`.
    pub fn corners(&self) -> usize {
        perm_index(&self.cp)
    }

    /// Sets the corner permutation.
    pub fn set_corners(&mut self, idx: usize) {
        perm_from_index(idx, &mut self.cp)
    }

    /// Permutation of the U and D edges, `0 <= ud_edges < 40320`. Only meaningful when the slice
    /// edges are in the slice (phase 2); otherwise `None`.
    pub fn ud_edges(&self) -> Option<usize> {
        if self.ep[..8].iter().any(|&e| e >= 8) {
            return None;
        }
        Some(perm_index(&self.ep[..8]))
    }

    /// Sets the U and D edges' permutation; the slice edges go home.
    pub fn set_ud_edges(&mut self, idx: usize) {
        perm_from_index(idx, &mut self.ep[..8]);
        for i in 8..12 {
            self.ep[i] = i as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte masks behind `slice`, `ud_corners`, `flip` and the edge coordinates agree with
    /// plain loops on random cubes.
    #[test]
    fn masks_agree_with_loops() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for _ in 0..5000 {
            let c = CubieCube::random(&mut rng);
            for base in [0u8, 4, 8] {
                let plain = (0..12).fold(0, |m, j| {
                    m | usize::from(c.ep[j].wrapping_sub(base) < 4) << j
                });
                assert_eq!(edge4_mask(&c.ep, base), plain);
            }
            let ud = (0..8).fold(0usize, |m, j| m | usize::from(c.cp[j] >= 4) << j);
            assert_eq!(c.ud_corners(), UD_CORNERS[ud] as usize);
            assert_eq!(
                c.flip(),
                c.eo[..11].iter().fold(0, |f, &o| 2 * f + o as usize)
            );
        }
    }

    #[test]
    fn solved_is_zero() {
        let c = CubieCube::SOLVED;
        assert_eq!(
            (
                c.twist(),
                c.flip(),
                c.slice_sorted(),
                c.corners(),
                c.ud_corners(),
                c.ud_edges()
            ),
            (0, 0, 0, 0, 0, Some(0))
        );
        assert_eq!(binomial(12, 4), N_SLICE);
    }

    #[test]
    fn get_set_round_trips() {
        let mut c = CubieCube::SOLVED;
        for t in 0..N_TWIST {
            c.set_twist(t);
            assert_eq!(c.twist(), t);
        }
        for f in 0..N_FLIP {
            c.set_flip(f);
            assert_eq!(c.flip(), f);
        }
        for s in 0..N_SLICE_SORTED {
            c.set_slice_sorted(s);
            assert_eq!(c.slice_sorted(), s);
            c.set_u_edges(s);
            assert_eq!(c.u_edges(), s);
            c.set_d_edges(s);
            assert_eq!(c.d_edges(), s);
        }
        for u in 0..N_UD_CORNERS {
            c.set_ud_corners(u);
            assert_eq!(c.ud_corners(), u);
        }
        for p in 0..N_CORNERS {
            c.set_corners(p);
            assert_eq!(c.corners(), p);
            c.set_ud_edges(p);
            assert_eq!(c.ud_edges(), Some(p));
        }
    }
}
