//! The cubie level: where each of the 8 corners and 12 edges sits and how it is turned.
//!
//! A [`CubieCube`] uses the "is replaced by" convention of Kociemba's papers: `cp[i]` is the corner
//! that sits in position `i`, `co[i]` its orientation there. Multiplication `a * b` is "apply `a`,
//! then `b`". Corner orientations 0..=2 are rotations; 3..=5 appear only in the mirrored cubes that
//! represent the symmetries containing a reflection.

use std::fmt;

/// Number of corners.
pub const N_CORNERS: usize = 8;
/// Number of edges.
pub const N_EDGES: usize = 12;

/// Corner positions / pieces, in Kociemba's order.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Corner {
    URF,
    UFL,
    ULB,
    UBR,
    DFR,
    DLF,
    DBL,
    DRB,
}

/// Edge positions / pieces, in Kociemba's order. `FR, FL, BL, BR` (8..=11) are the UD-slice edges.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Edge {
    UR,
    UF,
    UL,
    UB,
    DR,
    DF,
    DL,
    DB,
    FR,
    FL,
    BL,
    BR,
}

/// A cube at the cubie level. Invariant for a real cube: `cp` and `ep` are permutations,
/// `co[i] < 3`, `eo[i] < 2` (mirrored symmetry cubes use `co[i]` in `3..6`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CubieCube {
    /// Corner permutation: `cp[i]` is the corner in position `i`.
    pub cp: [u8; N_CORNERS],
    /// Corner orientation at each position.
    pub co: [u8; N_CORNERS],
    /// Edge permutation: `ep[i]` is the edge in position `i`.
    pub ep: [u8; N_EDGES],
    /// Edge orientation at each position.
    pub eo: [u8; N_EDGES],
}

impl Default for CubieCube {
    fn default() -> Self {
        Self::SOLVED
    }
}

impl fmt::Debug for CubieCube {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CubieCube {{ cp: {:?}, co: {:?}, ep: {:?}, eo: {:?} }}",
            self.cp, self.co, self.ep, self.eo
        )
    }
}

/// Combines two corner orientations, including the mirrored ones (3..=5) of reflections.
#[inline]
pub(crate) fn combine_corner_orientation(a: u8, b: u8) -> u8 {
    match (a < 3, b < 3) {
        (true, true) => (a + b) % 3,
        // a rotation followed by a reflection gives a reflection
        (true, false) => 3 + (a + b - 3) % 3,
        // a reflection followed by a rotation: orientations turn the other way
        (false, true) => 3 + (a + 3 - b) % 3,
        // two reflections give a rotation
        (false, false) => (a + 3 - b) % 3,
    }
}

impl CubieCube {
    /// The solved cube (and the identity of the cube group).
    pub const SOLVED: CubieCube = CubieCube {
        cp: [0, 1, 2, 3, 4, 5, 6, 7],
        co: [0; 8],
        ep: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        eo: [0; 12],
    };

    /// True when every piece is home and untwisted.
    pub fn is_solved(&self) -> bool {
        *self == Self::SOLVED
    }

    /// The corner part of `self * b`.
    #[inline]
    pub fn corner_multiply(&self, b: &CubieCube) -> ([u8; 8], [u8; 8]) {
        let mut cp = [0u8; 8];
        let mut co = [0u8; 8];
        for i in 0..8 {
            let from = b.cp[i] as usize;
            cp[i] = self.cp[from];
            co[i] = combine_corner_orientation(self.co[from], b.co[i]);
        }
        (cp, co)
    }

    /// The edge part of `self * b`.
    #[inline]
    pub fn edge_multiply(&self, b: &CubieCube) -> ([u8; 12], [u8; 12]) {
        let mut ep = [0u8; 12];
        let mut eo = [0u8; 12];
        for i in 0..12 {
            let from = b.ep[i] as usize;
            ep[i] = self.ep[from];
            eo[i] = (self.eo[from] + b.eo[i]) & 1;
        }
        (ep, eo)
    }

    /// `self * b`: the cube `self`, then the permutation `b` applied to it. Cubes without a
    /// mirrored corner (every real cube and turn) take [`CubieCube::multiply_rotations`].
    #[inline]
    pub fn multiply(&self, b: &CubieCube) -> CubieCube {
        if self.mirrored() || b.mirrored() {
            self.multiply_plain(b)
        } else {
            self.multiply_rotations(b)
        }
    }

    /// True when a corner has a mirrored orientation (`3..6`): the cube of a symmetry that
    /// contains a reflection. No real cube has one.
    #[inline]
    pub fn mirrored(&self) -> bool {
        self.co.iter().any(|&o| o >= 3)
    }

    /// `self * b` piece by piece, for every cube.
    #[inline]
    fn multiply_plain(&self, b: &CubieCube) -> CubieCube {
        let (cp, co) = self.corner_multiply(b);
        let (ep, eo) = self.edge_multiply(b);
        CubieCube { cp, co, ep, eo }
    }

    /// `self * b` for two cubes without a mirrored corner ([`CubieCube::mirrored`]: moves,
    /// positions, and their conjugates by rotations), with byte shuffles (SSSE3, about 10
    /// instructions instead of about 150) on CPUs that have them. The optimal search calls it
    /// directly, its cubes known to qualify, to skip [`CubieCube::multiply`]'s check.
    #[inline]
    pub fn multiply_rotations(&self, b: &CubieCube) -> CubieCube {
        debug_assert!(!self.mirrored() && !b.mirrored());
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("ssse3") {
            // SAFETY: the CPU has SSSE3 (checked just above; the check is a cached load)
            return unsafe { shuffle::multiply_rotations(self, b) };
        }
        self.multiply_plain(b)
    }

    /// The inverse: `self * self.inverse() == SOLVED`.
    pub fn inverse(&self) -> CubieCube {
        let mut r = CubieCube::SOLVED;
        for i in 0..12 {
            r.ep[self.ep[i] as usize] = i as u8;
        }
        for i in 0..12 {
            r.eo[i] = self.eo[r.ep[i] as usize];
        }
        for i in 0..8 {
            r.cp[self.cp[i] as usize] = i as u8;
        }
        for i in 0..8 {
            let o = self.co[r.cp[i] as usize];
            r.co[i] = if o >= 3 { o } else { (3 - o) % 3 };
        }
        r
    }

    /// Parity of the corner permutation (0 even, 1 odd).
    pub fn corner_parity(&self) -> u8 {
        permutation_parity(&self.cp)
    }

    /// Parity of the edge permutation (0 even, 1 odd).
    pub fn edge_parity(&self) -> u8 {
        permutation_parity(&self.ep)
    }
}

/// [`CubieCube::multiply_rotations`] with SSSE3 byte shuffles: a permutation applied to a
/// vector of bytes is one `pshufb`.
#[cfg(target_arch = "x86_64")]
mod shuffle {
    use super::CubieCube;
    use std::arch::x86_64::*;

    /// Loads `bytes` into the low lanes of a vector, the other lanes 0.
    #[inline(always)]
    unsafe fn load(bytes: &[u8]) -> __m128i {
        let mut b = [0u8; 16];
        b[..bytes.len()].copy_from_slice(bytes);
        // SAFETY: `b` is 16 readable bytes; the load is unaligned
        unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
    }

    /// The low `N` lanes of `v`.
    #[inline(always)]
    unsafe fn store<const N: usize>(v: __m128i) -> [u8; N] {
        let mut b = [0u8; 16];
        // SAFETY: `b` is 16 writable bytes; the store is unaligned
        unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), v) };
        std::array::from_fn(|i| b[i])
    }

    /// `a * b` for cubes without reflections. Lane `i` of each result takes lane `b.p[i]` of
    /// `a`'s vectors (`pshufb`); corner orientations add modulo 3 (sums below 6: subtract 3
    /// where above 2), edge orientations modulo 2 (xor).
    ///
    /// # Safety
    /// The CPU must support SSSE3.
    #[target_feature(enable = "ssse3")]
    pub(super) unsafe fn multiply_rotations(a: &CubieCube, b: &CubieCube) -> CubieCube {
        // SAFETY (whole body): SSSE3 is enabled for this function, and the loads and stores
        // touch only local 16-byte buffers
        unsafe {
            let bcp = load(&b.cp);
            let cp = _mm_shuffle_epi8(load(&a.cp), bcp);
            let sum = _mm_add_epi8(_mm_shuffle_epi8(load(&a.co), bcp), load(&b.co));
            let over = _mm_and_si128(_mm_cmpgt_epi8(sum, _mm_set1_epi8(2)), _mm_set1_epi8(3));
            let co = _mm_sub_epi8(sum, over);
            let bep = load(&b.ep);
            let ep = _mm_shuffle_epi8(load(&a.ep), bep);
            let eo = _mm_xor_si128(_mm_shuffle_epi8(load(&a.eo), bep), load(&b.eo));
            CubieCube {
                cp: store(cp),
                co: store(co),
                ep: store(ep),
                eo: store(eo),
            }
        }
    }
}

impl CubieCube {
    /// A uniformly random reachable cube: random permutations with equal parity, random twist
    /// and flip (each of the 43,252,003,274,489,856,000 positions equally likely).
    pub fn random(rng: &mut impl rand::Rng) -> CubieCube {
        use rand::seq::SliceRandom;
        let mut c = CubieCube::SOLVED;
        c.cp.shuffle(rng);
        c.ep.shuffle(rng);
        if permutation_parity(&c.cp) != permutation_parity(&c.ep) {
            c.ep.swap(0, 1);
        }
        let mut sum = 0;
        for i in 0..7 {
            c.co[i] = rng.random_range(0..3);
            sum += c.co[i];
        }
        c.co[7] = (3 - sum % 3) % 3;
        let mut sum = 0;
        for i in 0..11 {
            c.eo[i] = rng.random_range(0..2);
            sum += c.eo[i];
        }
        c.eo[11] = sum % 2;
        c
    }
}

/// Parity of a permutation given as a slice of distinct indices `0..len`: 0 even, 1 odd.
pub fn permutation_parity(p: &[u8]) -> u8 {
    let mut s = 0u8;
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            if p[j] < p[i] {
                s ^= 1;
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moves::Move;

    /// The shuffling product agrees with the plain one on random cubes and moves.
    #[test]
    fn multiply_rotations_agrees_with_multiply() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        for _ in 0..2000 {
            let (a, b) = (CubieCube::random(&mut rng), CubieCube::random(&mut rng));
            assert_eq!(a.multiply_rotations(&b), a.multiply_plain(&b));
            for m in Move::ALL {
                assert_eq!(
                    m.cubie().multiply_rotations(&a),
                    m.cubie().multiply_plain(&a)
                );
                assert_eq!(a.multiply_rotations(m.cubie()), a.multiply_plain(m.cubie()));
            }
        }
    }

    #[test]
    fn inverse_gives_identity() {
        for m in Move::ALL {
            let c = m.cubie();
            assert!(c.multiply(&c.inverse()).is_solved(), "{m}");
            assert!(c.inverse().multiply(c).is_solved(), "{m}");
        }
    }

    #[test]
    fn mirrored_orientations_compose() {
        // reflection * reflection is a rotation, its orientations back in 0..3
        for a in 0..6u8 {
            for b in 0..6u8 {
                let c = combine_corner_orientation(a, b);
                assert_eq!(c >= 3, (a >= 3) != (b >= 3), "{a} {b}");
            }
        }
    }
}
