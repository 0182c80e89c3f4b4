//! Cosets of H = <U, D, R2, L2, F2, B2>: their numbers, their positions by local index, the
//! classes the 16 symmetries that fix H make of them, and the positions a coordinator samples
//! from a coset to check a worker's claim about it. The solver itself is
//! `cubefleet_search::coset`; this is what the coordinator, the CLI and the solver share.
//!
//! # Numbers
//!
//! A coset is the set of the [`COSET_SIZE`] = 40320 * 40320 * 24 / 2 = 19,508,428,800
//! positions that share one position's phase-1 coordinates (twist, flip and which four places
//! hold the slice edges): `{ h * r : h in H }` for its representative `r` (products read "`h`,
//! then `r`", as [`CubieCube::multiply`]). Its number is `(slice * 2048 + flip) * 2187 + twist`,
//! `0 <= number <` [`N_COSETS`] = 2,217,093,120; coset 0 is H itself. The representative of a
//! number is the solved cube with that twist, flip and slice placed by the coordinates'
//! setters (the other edges in increasing order), the first two corners swapped when the edge
//! permutation came out odd.
//!
//! # Local indices
//!
//! Position `q` of the coset of `r` is indexed by `x = r * q⁻¹`, an element of H: its index is
//! `(corners(x) * 40320 + ud_edges(x)) * 12 + slice_perm(x) / 2` (`slice_perm < 24` is the
//! order of the slice edges; the corner and edge permutations of `x` have equal parity, so
//! only one of `2k` and `2k + 1` occurs for given corners and U/D edges).
//!
//! # Canonical cosets
//!
//! The 16 symmetries that keep the U-D axis (`symmetry::N_SYM_D4H`) fix H, so conjugation by
//! one maps a coset onto a coset, position by position, keeping every position's depth: the
//! cosets of a class have equal counts at every depth. A coset is *canonical* when its number
//! is the least of its class. Conjugation maps `slice * 2048 + flip` and `twist` each on its
//! own, so a coset is canonical when its `slice * 2048 + flip` is the least of that
//! coordinate's class and its twist the least of its orbit under the symmetries that fix
//! that coordinate. [`Canonical`] counts them by the first coordinate (built in about a
//! second), which names the `k`-th canonical coset at once.
//!
//! # Samples
//!
//! Sample `j < COSET_SAMPLES` of a coset under a 32-byte seed is the local index
//! [`sample_local`]: the first of the draws `d = 0, 1, ...` whose value is below
//! [`COSET_SIZE`], the value of draw `d` being the first 8 bytes of
//! SHA-256(`"cubefleet-coset-sample-v1"` ++ seed ++ `j` as 4 bytes little-endian ++ `d` as 4
//! bytes little-endian) read big-endian and shifted right by 29 bits (a uniform 35-bit number).

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::coord::{N_CORNERS, N_FLIP, N_FLIPSLICE, N_PERM_4, N_SLICE, N_TWIST, N_UD_EDGES};
use crate::error::Error;
use crate::symmetry::{N_SYM_D4H, SYMMETRIES};
use crate::CubieCube;

/// Orders of the slice edges stored per corner permutation and U/D-edge permutation: half of
/// the 24 (the other half has the wrong parity).
pub const SLICE_HALF: usize = N_PERM_4 / 2;
/// Local indices of one corner permutation: `40320 * 12 = 483,840`.
pub const EDGES_PER_CORNERS: usize = N_UD_EDGES * SLICE_HALF;
/// Positions of a coset (elements of H): `40320 * 483,840 = 19,508,428,800`.
pub const COSET_SIZE: u64 = (N_CORNERS * EDGES_PER_CORNERS) as u64;
/// Cosets of H: `495 * 2048 * 2187 = 2,217,093,120`.
pub const N_COSETS: u64 = (N_SLICE * N_FLIP * N_TWIST) as u64;
/// Unsolved positions a coset's result lists one by one (their local indices) when there are
/// at most this many.
pub const MAX_LISTED: u64 = 4096;
/// Positions a coordinator samples from a coset it leases ([`sample_local`]).
pub const COSET_SAMPLES: usize = 16;
/// Bytes of a sample seed.
pub const SEED_BYTES: usize = 32;

/// One coset of H, by its number (see the module's documentation for the numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Coset {
    number: u64,
}

impl Coset {
    /// The coset numbered `number`, refused when `number >= N_COSETS`.
    pub fn from_number(number: u64) -> Result<Coset, Error> {
        if number < N_COSETS {
            Ok(Coset { number })
        } else {
            Err(Error::BadStates(format!(
                "no coset numbered {number}: there are {N_COSETS} cosets, numbered from 0"
            )))
        }
    }

    /// The coset that holds `position`.
    pub fn of(position: &CubieCube) -> Coset {
        let number = (position.slice() * N_FLIP + position.flip()) * N_TWIST + position.twist();
        Coset {
            number: number as u64,
        }
    }

    /// Its number, `< N_COSETS`.
    pub fn number(self) -> u64 {
        self.number
    }

    /// The representative `r` that local indices are taken from: the solved cube with the
    /// coset's twist, flip and slice, the first two corners swapped when that made the edge
    /// permutation odd.
    pub fn representative(self) -> CubieCube {
        let n = self.number as usize;
        let (twist, flipslice) = (n % N_TWIST, n / N_TWIST);
        let mut r = CubieCube::SOLVED;
        r.set_slice_sorted(flipslice / N_FLIP * N_PERM_4);
        r.set_flip(flipslice % N_FLIP);
        r.set_twist(twist);
        if r.edge_parity() != r.corner_parity() {
            r.cp.swap(0, 1);
        }
        r
    }

    /// The local index of `position` (`< COSET_SIZE`), `None` when it is not in this coset.
    pub fn local_index(self, position: &CubieCube) -> Option<u64> {
        if Coset::of(position) != self {
            return None;
        }
        let x = self.representative().multiply(&position.inverse());
        h_index(&x)
    }

    /// The position with local index `index`, `None` when `index >= COSET_SIZE`.
    pub fn position(self, index: u64) -> Option<CubieCube> {
        let x = h_element(index)?;
        Some(x.inverse().multiply(&self.representative()))
    }

    /// The coset symmetry `s < 16` maps this one to (`S_s * q * S_s⁻¹` for its positions `q`).
    pub fn conjugate(self, s: usize) -> Coset {
        Coset::of(&SYMMETRIES.conjugate(&self.representative(), s))
    }

    /// The least coset of its class under the 16 symmetries that fix H.
    pub fn canonical(self) -> Coset {
        (0..N_SYM_D4H)
            .map(|s| self.conjugate(s))
            .min()
            .unwrap_or(self)
    }

    /// True when it is the least of its class ([`Coset::canonical`]).
    pub fn is_canonical(self) -> bool {
        self.canonical() == self
    }
}

/// The index of an element `x` of H (`(corners * 40320 + ud_edges) * 12 + slice_perm / 2`),
/// `None` when `x` is not in H.
pub fn h_index(x: &CubieCube) -> Option<u64> {
    if x.twist() != 0 || x.flip() != 0 {
        return None;
    }
    let sp = x.slice_sorted();
    let ud = x.ud_edges()?;
    (sp < N_PERM_4).then(|| ((x.corners() * N_UD_EDGES + ud) * SLICE_HALF + sp / 2) as u64)
}

/// The element of H with index `index` ([`h_index`]), `None` past [`COSET_SIZE`].
pub fn h_element(index: u64) -> Option<CubieCube> {
    if index >= COSET_SIZE {
        return None;
    }
    let i = index as usize;
    let (corners, edges) = (i / EDGES_PER_CORNERS, i % EDGES_PER_CORNERS);
    let (ud, half) = (edges / SLICE_HALF, edges % SLICE_HALF);
    let mut x = CubieCube::SOLVED;
    x.set_corners(corners);
    x.set_ud_edges(ud);
    let wanted = x.corner_parity() ^ x.edge_parity();
    let sp = 2 * half + usize::from(slice_parity(2 * half) != wanted);
    let mut slice = CubieCube::SOLVED;
    slice.set_slice_sorted(sp);
    x.ep[8..].copy_from_slice(&slice.ep[8..]);
    Some(x)
}

/// The parity of the slice edges' order `sp < 24` (a Lehmer code: the parity of the sum of its
/// digits, which count the inversions).
pub const fn slice_parity(sp: usize) -> u8 {
    ((sp / 6 + sp % 6 / 2 + sp % 2) % 2) as u8
}

/// Sample `j` of a coset under `seed`: a local index, uniform below [`COSET_SIZE`], by the
/// rule of the module doc (fixed: a worker and its coordinator must draw the same).
pub fn sample_local(seed: &[u8; SEED_BYTES], j: u32) -> u64 {
    for draw in 0u32.. {
        let mut h = Sha256::new();
        h.update(b"cubefleet-coset-sample-v1");
        h.update(seed);
        h.update(j.to_le_bytes());
        h.update(draw.to_le_bytes());
        let digest = h.finalize();
        let mut head = [0u8; 8];
        head.copy_from_slice(&digest[..8]);
        let value = u64::from_be_bytes(head) >> 29;
        if value < COSET_SIZE {
            return value;
        }
    }
    // 2^32 draws all rejected (each with probability about 0.43) does not happen
    0
}

/// The samples of a coset under `seed`: [`sample_local`] for `j < COSET_SAMPLES`.
pub fn samples(seed: &[u8; SEED_BYTES]) -> Vec<u64> {
    (0..COSET_SAMPLES as u32)
        .map(|j| sample_local(seed, j))
        .collect()
}

/// The canonical cosets counted by their `slice * 2048 + flip` coordinate: how many are below
/// any number, and which is the `k`-th, each at once. Built once per process ([`Canonical::get`]).
pub struct Canonical {
    /// `before[fs]`: canonical cosets with a smaller `slice * 2048 + flip` (`fs`); one more
    /// entry at the end, the number of canonical cosets.
    before: Vec<u64>,
    /// `stabiliser[fs]`: the symmetries (bit `s`) that map `fs` to itself, 0 when `fs` is not
    /// the least of its class (no canonical coset has it).
    stabiliser: Vec<u16>,
    /// `twist[s][t]`: the twist of `S_s * q * S_s⁻¹` for a position `q` of twist `t`.
    twist: Vec<[u16; N_TWIST]>,
}

impl Canonical {
    /// The counts (built at the first call of the process, in about a second).
    pub fn get() -> &'static Canonical {
        static CANONICAL: OnceLock<Canonical> = OnceLock::new();
        CANONICAL.get_or_init(Canonical::build)
    }

    fn build() -> Canonical {
        let syms = &*SYMMETRIES;
        let twist: Vec<[u16; N_TWIST]> = (0..N_SYM_D4H)
            .map(|s| {
                std::array::from_fn(|t| {
                    let mut c = CubieCube::SOLVED;
                    c.set_twist(t);
                    syms.conjugate(&c, s).twist() as u16
                })
            })
            .collect();
        let mut stabiliser = vec![0u16; N_FLIPSLICE];
        for (fs, stab) in stabiliser.iter_mut().enumerate() {
            let mut c = CubieCube::SOLVED;
            c.set_slice_sorted(fs / N_FLIP * N_PERM_4);
            c.set_flip(fs % N_FLIP);
            let mut mask = 0u16;
            let mut least = true;
            for s in 0..N_SYM_D4H {
                let d = syms.conjugate_edges(&c, s);
                let image = d.slice() * N_FLIP + d.flip();
                if image < fs {
                    least = false;
                    break;
                }
                if image == fs {
                    mask |= 1 << s;
                }
            }
            *stab = if least { mask } else { 0 };
        }
        let mut canonical = Canonical {
            before: Vec::with_capacity(N_FLIPSLICE + 1),
            stabiliser,
            twist,
        };
        let mut total = 0u64;
        for fs in 0..N_FLIPSLICE {
            canonical.before.push(total);
            total += canonical.twists_below(fs, N_TWIST);
        }
        canonical.before.push(total);
        canonical
    }

    /// True when twist `t` is the least of its orbit under the symmetries of `stab`.
    fn least_twist(&self, stab: u16, t: usize) -> bool {
        (0..N_SYM_D4H)
            .filter(|s| stab >> s & 1 == 1)
            .all(|s| usize::from(self.twist[s][t]) >= t)
    }

    /// Canonical cosets with coordinate `fs` and a twist below `end`.
    fn twists_below(&self, fs: usize, end: usize) -> u64 {
        match self.stabiliser[fs] {
            0 => 0,
            1 => end as u64,
            stab => (0..end).filter(|&t| self.least_twist(stab, t)).count() as u64,
        }
    }

    /// The number of canonical cosets.
    pub fn total(&self) -> u64 {
        self.before[N_FLIPSLICE]
    }

    /// How many canonical cosets have a number below `n` (`n <= N_COSETS`).
    pub fn rank(&self, n: u64) -> u64 {
        if n >= N_COSETS {
            return self.total();
        }
        let (fs, t) = ((n / N_TWIST as u64) as usize, (n % N_TWIST as u64) as usize);
        self.before[fs] + self.twists_below(fs, t)
    }

    /// The `k`-th canonical coset (from 0), `None` when `k >= total()`.
    pub fn nth(&self, k: u64) -> Option<Coset> {
        if k >= self.total() {
            return None;
        }
        // the last coordinate with fewer than k + 1 canonical cosets before it
        let fs = self.before.partition_point(|&b| b <= k) - 1;
        let mut left = k - self.before[fs];
        let stab = self.stabiliser[fs];
        let t = (0..N_TWIST).find(|&t| {
            if stab != 1 && !self.least_twist(stab, t) {
                return false;
            }
            if left == 0 {
                return true;
            }
            left -= 1;
            false
        })?;
        Some(Coset {
            number: (fs * N_TWIST + t) as u64,
        })
    }
}

/// The canonical cosets with numbers in `start..end`, in increasing order.
pub fn canonical_in(start: u64, end: u64) -> impl Iterator<Item = Coset> {
    let c = Canonical::get();
    let end = end.min(N_COSETS);
    (c.rank(start)..c.rank(end.max(start))).filter_map(|k| c.nth(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn sizes_are_derived() {
        assert_eq!(COSET_SIZE, 19_508_428_800);
        assert_eq!(N_COSETS, 2_217_093_120);
        assert_eq!(
            COSET_SIZE as u128 * N_COSETS as u128,
            crate::index::N_STATES
        );
        assert_eq!(EDGES_PER_CORNERS % 64, 0);
    }

    #[test]
    fn slice_parity_is_the_permutations() {
        for sp in 0..N_PERM_4 {
            let mut c = CubieCube::SOLVED;
            c.set_slice_sorted(sp);
            assert_eq!(slice_parity(sp), c.edge_parity(), "{sp}");
            assert_ne!(slice_parity(sp & !1), slice_parity(sp | 1));
        }
    }

    /// Numbers round-trip through representatives, which are valid cubes of their coset.
    #[test]
    fn numbers_round_trip() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(47);
        let numbers = [
            0,
            1,
            N_COSETS - 1,
            2187 * 2048,
            2187 * 2048 * 494 + 2047 * 2187 + 5,
        ];
        for n in numbers
            .into_iter()
            .chain((0..2000).map(|_| rng.random_range(0..N_COSETS)))
        {
            let c = Coset::from_number(n).expect("in range");
            let r = c.representative();
            crate::facelet::validate(&r).expect("a real cube");
            assert_eq!(Coset::of(&r), c);
            assert_eq!(c.local_index(&r), Some(0));
        }
        assert!(Coset::from_number(N_COSETS).is_err());
        assert_eq!(Coset::of(&CubieCube::SOLVED).number(), 0);
        assert!(Coset::from_number(0)
            .expect("H")
            .representative()
            .is_solved());
    }

    /// position -> local index -> position, and local index -> position -> local index, on
    /// random positions and indices; a position of another coset has no local index.
    #[test]
    fn local_indices_round_trip() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..2000 {
            let q = CubieCube::random(&mut rng);
            let coset = Coset::of(&q);
            let i = coset.local_index(&q).expect("its own coset");
            assert!(i < COSET_SIZE);
            assert_eq!(coset.position(i), Some(q));
            let j = rng.random_range(0..COSET_SIZE);
            let p = coset.position(j).expect("in range");
            crate::facelet::validate(&p).expect("a real cube: parities agree");
            assert_eq!(coset.local_index(&p), Some(j));
            let other = Coset::from_number((coset.number() + 1) % N_COSETS).expect("in range");
            assert_eq!(other.local_index(&q), None);
        }
        assert_eq!(
            Coset::from_number(5)
                .expect("in range")
                .position(COSET_SIZE),
            None
        );
    }

    /// Conjugation maps every position of a coset into the conjugate coset (checked on random
    /// positions), so a class's cosets are the same sets up to symmetry.
    #[test]
    fn conjugates_of_positions_stay_in_the_conjugate_coset() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for _ in 0..200 {
            let q = CubieCube::random(&mut rng);
            let c = Coset::of(&q);
            for s in 0..N_SYM_D4H {
                assert_eq!(Coset::of(&SYMMETRIES.conjugate(&q, s)), c.conjugate(s));
            }
        }
    }

    /// The counts agree with the class of each coset computed from its representative (the
    /// naive rule), on random cosets and on the first cosets, and `nth` inverts `rank`.
    #[test]
    fn canonical_counts_agree_with_the_naive_rule() {
        let c = Canonical::get();
        let total = c.total();
        // at least a sixteenth of all (every class has at most 16 cosets)
        assert!(total * 16 >= N_COSETS && total < N_COSETS, "{total}");
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let mut seen = 0;
        for n in (0..5000).chain((0..3000).map(|_| rng.random_range(0..N_COSETS))) {
            let coset = Coset::from_number(n).expect("in range");
            let canonical = coset.is_canonical();
            assert_eq!(c.rank(n + 1) - c.rank(n), u64::from(canonical), "{n}");
            if canonical {
                assert_eq!(c.nth(c.rank(n)), Some(coset));
                seen += 1;
            }
        }
        assert!(seen > 0);
        let listed: Vec<u64> = canonical_in(0, 3000).map(Coset::number).collect();
        let naive: Vec<u64> = (0..3000)
            .filter(|&n| Coset::from_number(n).expect("in range").is_canonical())
            .collect();
        assert_eq!(listed, naive);
        assert_eq!(c.nth(total), None);
    }

    /// Samples are reproducible, in range and differ with the seed (the rule is fixed: a
    /// changed rule fails the known values).
    #[test]
    fn samples_follow_the_rule() {
        let seed = [7u8; SEED_BYTES];
        let a = samples(&seed);
        assert_eq!(a.len(), COSET_SAMPLES);
        assert_eq!(a, samples(&seed));
        assert!(a.iter().all(|&i| i < COSET_SIZE));
        assert_ne!(a, samples(&[8u8; SEED_BYTES]));
        let mut h = Sha256::new();
        h.update(b"cubefleet-coset-sample-v1");
        h.update(seed);
        h.update(0u32.to_le_bytes());
        h.update(0u32.to_le_bytes());
        let d = h.finalize();
        let v = u64::from_be_bytes(d[..8].try_into().expect("8 bytes")) >> 29;
        if v < COSET_SIZE {
            assert_eq!(a[0], v);
        }
    }
}
